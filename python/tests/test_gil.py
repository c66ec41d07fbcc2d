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


def test_ctrl_c_stops_a_long_run_between_trials():
    # _thread.interrupt_main() is Ctrl-C as Python sees it (SIGINT's handler). The attack
    # below would run for hours (100,000 trials of ~0.2 s); it must stop within a few trials.
    import _thread

    timer = threading.Timer(1.0, _thread.interrupt_main)
    t = time.perf_counter()
    timer.start()
    try:
        reconbound.attack_prior_aware(trials=100000, quiet=True)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the run was not interrupted")
    finally:
        timer.cancel()
    elapsed = time.perf_counter() - t
    assert 1.0 <= elapsed < 10.0, elapsed
    # The package still works afterwards (no flag left set).
    assert reconbound.fano(prior_size=10, noise_multiplier=1.0)["command"] == "fano"
