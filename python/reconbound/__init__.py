"""reconbound: differential-privacy accounting, reconstruction bounds, attacks and audits.

Every function runs one command of the ``reconbound`` command line *in-process*
(``reconbound_cli::run``, the whole logic of the binary) with ``--json`` and returns the
parsed JSON object as a dict: the same keys, and the same numbers bit for bit, as
``reconbound <command> ... --json`` (the CLI prints floats in shortest round-trip form, which
``json.loads`` reads back exactly; a non-finite value is printed as ``null`` and becomes
``None``). See ``reconbound <command> --help`` (each function's ``__doc__`` is that text).

Keyword arguments become flags:

* ``noise_multiplier=1.1`` -> ``--noise-multiplier 1.1`` (floats as ``repr(float(x))``, which
  round-trips exactly; ints as ints; strings as they are);
* ``quiet=True`` -> ``--quiet`` (``False`` and ``None`` are left out);
* lists and tuples are comma-joined: ``orders=[2, 3]`` -> ``--orders 2,3``;
* ``phases=[(q, sigma, T), ...]`` -> ``--phase q,sigma,T`` repeated.

Errors: exit status 2 of the CLI (a usage error or invalid input, including an unknown
keyword, which the CLI reports as an unknown flag) raises :class:`UsageError`, a
``ValueError``; exit status 1 (a valid request without a certifiable answer, or an output file
that could not be written) raises :class:`UncertifiableError`, a ``RuntimeError``. Both carry
the CLI's one-line message, with each flag it names followed by its keyword, e.g.
``--noise-multiplier (noise_multiplier) = -1 is out of range: must be finite and > 0``.

The GIL is released while a command runs, so other Python threads keep running. Ctrl-C
(``KeyboardInterrupt``) stops a long command (``attack_*``, ``audit``, ``report``) between
two trials: the run's trial loops stop before their next trial, its output is discarded, and
the ``KeyboardInterrupt`` is raised (within about one trial's time). Work outside trial loops
(one accountant call, the report's FIL run) finishes before the interrupt takes effect.
"""

from __future__ import annotations

import json as _json
import math as _math
import numbers as _numbers
import os as _os
import re as _re
import tempfile as _tempfile
from typing import Any, Dict, Iterable, Tuple

from . import _native

__version__ = _native.__version__

__all__ = [
    "UsageError",
    "UncertifiableError",
    "run",
    "call",
    "to_args",
    "bound",
    "epsilon",
    "rdp",
    "rero",
    "calibrate",
    "fano",
    "attack_prior_aware",
    "attack_glm",
    "audit",
    "report",
    "estimate",
    "empirical_epsilon",
    "one_run_epsilon",
]


class UsageError(ValueError):
    """The CLI's exit status 2: a usage error or invalid input (an unknown keyword, a value
    out of range, an unreadable input file, ...), found before any work."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class UncertifiableError(RuntimeError):
    """The CLI's exit status 1: a valid request without a certifiable answer (for example
    ``epsilon(..., accountant="pld")`` where the PLD has no certified value), or a result that
    could not be delivered (an output file that failed while written)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def run(command: str, *args: str) -> Tuple[int, str, str]:
    """Run ``reconbound COMMAND ARGS...`` in-process and return (exit status, stdout, stderr).

    ``command`` may hold a subcommand (``run("attack glm", "--trials", "1")``); the arguments
    are passed as they are (no ``--json`` is added). Never raises for a non-zero status.
    """
    argv = command.split() + [str(a) for a in args]
    return _native.run(argv)


def _value(x: Any) -> str:
    if isinstance(x, bool):
        raise TypeError("a boolean is a bare flag, not a list element or phase field")
    if isinstance(x, str):
        return x
    if isinstance(x, _numbers.Integral):
        return str(int(x))
    if isinstance(x, _numbers.Real):
        return repr(float(x))
    raise TypeError(f"cannot pass {type(x).__name__} {x!r} as a flag value")


def _joined(x: Any) -> str:
    if isinstance(x, (list, tuple)):
        return ",".join(_value(v) for v in x)
    return _value(x)


def to_args(**kwargs: Any) -> list:
    """The flags that ``kwargs`` stand for (the translation every function uses), e.g.
    ``to_args(noise_multiplier=1.1, orders=[2, 3])`` == ``["--noise-multiplier", "1.1",
    "--orders", "2,3"]``."""
    out: list = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        if key in ("phases", "phase"):
            phases: Iterable[Any] = value
            if isinstance(value, str):
                phases = [value]
            for p in phases:
                out += ["--phase", _joined(p)]
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        else:
            out += [flag, _joined(value)]
    return out


_FLAG = _re.compile(r"(')?--([a-z][a-z0-9-]*)(')?")


def _keyword(flag: str) -> str:
    return "phases" if flag == "phase" else flag.replace("-", "_")


def _message(stderr: str) -> str:
    line = stderr.strip()
    if line.startswith("reconbound: "):
        line = line[len("reconbound: "):]
    # Name each flag's keyword beside it: --noise-multiplier (noise_multiplier).
    return _FLAG.sub(
        lambda m: f"{m.group(1) or ''}--{m.group(2)}{m.group(3) or ''} ({_keyword(m.group(2))})",
        line,
    )


def _checked(argv: list) -> Dict[str, Any]:
    code, stdout, stderr = _native.run(argv)
    if code == 2:
        raise UsageError(_message(stderr))
    if code != 0:
        raise UncertifiableError(_message(stderr), code)
    return _json.loads(stdout)


def call(command: str, **kwargs: Any) -> Dict[str, Any]:
    """Run ``reconbound COMMAND --flags... --json`` (``command`` may be ``"attack glm"``) and
    return the JSON object as a dict; the generic form of every function below."""
    if "json" in kwargs:
        raise TypeError("json is always passed; do not give it")
    return _checked(command.split() + to_args(**kwargs) + ["--json"])


def _help(command: str) -> str:
    code, stdout, _ = _native.run(command.split() + ["--help"])
    return stdout if code == 0 else ""


def _command(name: str, command: str):
    def f(**kwargs: Any) -> Dict[str, Any]:
        return call(command, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"Runs `reconbound {command} ... --json` in-process and returns its JSON object as a "
        f"dict (keyword noise_multiplier=1.1 -> flag --noise-multiplier 1.1).\n"
        f"Raises UsageError (exit 2) or UncertifiableError (exit 1).\n\n"
        f"`reconbound {command} --help`:\n\n{_help(command)}"
    )
    return f


bound = _command("bound", "bound")
epsilon = _command("epsilon", "epsilon")
rdp = _command("rdp", "rdp")
rero = _command("rero", "rero")
calibrate = _command("calibrate", "calibrate")
fano = _command("fano", "fano")
attack_prior_aware = _command("attack_prior_aware", "attack prior-aware")
attack_glm = _command("attack_glm", "attack glm")
audit = _command("audit", "audit")
report = _command("report", "report")
estimate = _command("estimate", "estimate")


def _finite(name: str, values: Any) -> list:
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, _numbers.Real):
            raise TypeError(f"{name}[{i}] = {v!r} is not a real number")
        x = float(v)
        if not _math.isfinite(x):
            raise UsageError(f"{name}[{i}] = {x!r} is not finite")
        out.append(x)
    return out


def _with_csv(header: str, rows: Iterable[str], argv: list) -> Dict[str, Any]:
    fd, path = _tempfile.mkstemp(prefix="reconbound-", suffix=".csv")
    try:
        with _os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(header + "\n")
            for row in rows:
                f.write(row + "\n")
        return _checked([a if a != "{file}" else path for a in argv])
    finally:
        _os.unlink(path)


def empirical_epsilon(
    scores_out: Iterable[float],
    scores_in: Iterable[float],
    *,
    delta: float,
    estimator: str = "cp",
    threshold: Any = "held-out",
    calibration: Any = None,
    alpha: float = 0.05,
    split_out: Any = None,
    split_in: Any = None,
) -> Dict[str, Any]:
    """The empirical epsilon of an audit from its per-trial scores: ``scores_out`` of the
    trainings without the canary (world 0), ``scores_in`` of those with it (world 1), each in
    trial order, higher meaning "in" (lists, tuples or numpy arrays of real numbers).

    Runs ``reconbound estimate --scores FILE --json`` on a temporary CSV of these scores and
    returns its dict: the same numbers ``reconbound audit`` gives for the same scores.
    ``estimator`` is ``"cp"`` (Clopper-Pearson lower bound with delta, at confidence
    1 - alpha) or ``"gdp"`` (an estimate, no bound); ``threshold`` is ``"held-out"``
    (calibrated on the first ``calibration`` scores of each world, default half the smaller
    world, or on the trials marked ``"calibration"`` in ``split_out`` / ``split_in``),
    ``"bonferroni"`` or a number fixed in advance.
    Raises UsageError (a ValueError) for invalid input, TypeError for non-numbers.
    """
    out = _finite("scores_out", scores_out)
    inn = _finite("scores_in", scores_in)
    splits = (split_out, split_in)
    if (split_out is None) != (split_in is None):
        raise UsageError("give both split_out and split_in, or neither")
    if split_out is not None:
        so, si = [list(str(v) for v in s) for s in splits]
        if len(so) != len(out) or len(si) != len(inn):
            raise UsageError("split_out / split_in must have one entry per score")
        header = "world,score,split"
        rows = [f"0,{x!r},{s}" for x, s in zip(out, so)] + [
            f"1,{x!r},{s}" for x, s in zip(inn, si)
        ]
    else:
        header = "world,score"
        rows = [f"0,{x!r}" for x in out] + [f"1,{x!r}" for x in inn]
    argv = ["estimate", "--scores", "{file}"] + to_args(
        delta=delta,
        estimator=estimator,
        threshold=threshold,
        calibration=calibration,
        alpha=alpha,
    )
    return _with_csv(header, rows, argv + ["--json"])


def one_run_epsilon(
    guesses: Iterable[int],
    truths: Iterable[int],
    *,
    delta: float,
    alpha: float = 0.05,
) -> Dict[str, Any]:
    """The one-run audit's epsilon (Steinke, Nasr, Jagielski 2023) from an adversary's
    guesses fixed in advance (+1 "in", -1 "out", 0 abstain) and the truths (1 in, 0 out), one
    per canary: runs ``reconbound estimate --guesses FILE --json`` and returns its dict.
    Raises UsageError (a ValueError) for invalid input."""
    g = list(guesses)
    t = list(truths)
    if len(g) != len(t):
        raise UsageError(f"guesses ({len(g)}) and truths ({len(t)}) differ in length")
    def integer(name: str, i: int, v: Any) -> str:
        if isinstance(v, bool) or not isinstance(v, _numbers.Integral):
            raise TypeError(f"{name}[{i}] = {v!r} is not an integer")
        return str(int(v))

    rows = [
        f"{integer('guesses', i, a)},{integer('truths', i, b)}"
        for i, (a, b) in enumerate(zip(g, t))
    ]
    argv = ["estimate", "--guesses", "{file}"] + to_args(delta=delta, alpha=alpha)
    return _with_csv("guess,truth", rows, argv + ["--json"])
