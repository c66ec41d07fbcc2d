"""The GIL is released while a command runs: a Python thread keeps running beside it."""

import threading
import time

import reconbound


def test_python_threads_run_while_a_command_runs():
    done = threading.Event()
    span = []

    def work():
        t = time.perf_counter()
        span.append(t)
        # ~0.6 s of Monte-Carlo sampling inside one call.
        reconbound.rero(method="monte-carlo", samples=10000, noise_multiplier=1.1,
                        sampling_rate=0.01, steps=1000, prior_size=10)
        span.append(time.perf_counter())
        done.set()

    stamps = []
    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        stamps.append(time.perf_counter())
    worker.join()
    t0, t1 = span
    inside = [s for s in stamps if t0 + 0.1 * (t1 - t0) < s < t1 - 0.1 * (t1 - t0)]
    # Holding the GIL would stop this loop for the whole call: no stamps inside it.
    assert t1 - t0 > 0.05 and len(inside) > 100, (t1 - t0, len(inside), len(stamps))
    gaps = [b - a for a, b in zip(inside, inside[1:])]
    assert max(gaps) < (t1 - t0) / 4, (max(gaps), t1 - t0)
