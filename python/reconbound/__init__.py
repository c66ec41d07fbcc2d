"""reconbound: differential-privacy accounting, reconstruction bounds, attacks and audits.

Layers: the numerical core is the Rust crate ``reconbound``; the command line
(``reconbound-cli``) and this package are its clients.

Typed functions take values and call the core directly (no flags, no files):
:func:`epsilon`, :func:`bound` and :func:`tradeoff` (the certified trade-off curve:
membership TPR at an FPR, advantage, numpy arrays of the curve) of a :class:`Run` (Poisson phases, fixed-size or shuffled batches; built by
hand, by :func:`from_dp_event` from a dp_accounting ``DpEvent``, or by
:func:`from_opacus_history` from an Opacus accountant's history), and the audit estimators
:func:`empirical_epsilon` and :func:`one_run_epsilon` (lists or numpy arrays in). They return
a :class:`Result`: a dict whose keys are also attributes (``r.epsilon_rdp``, a float), with
:meth:`Result.to_dict` equal to the JSON object the CLI prints for the same request, bit for
bit. Invalid input raises :class:`UsageError` (a ``ValueError``) whose ``.parameter`` and
``.value`` name the offending keyword and its value.

The other functions run one command of the ``reconbound`` command line *in-process*
(``reconbound_cli::run``, the whole logic of the binary) with ``--json`` and return the
parsed JSON object as a :class:`Result`: the same keys, and the same numbers bit for bit, as
``reconbound <command> ... --json`` (the CLI prints floats in shortest round-trip form, which
``json.loads`` reads back exactly; a non-finite value is printed as ``null`` and becomes
``None``). See ``reconbound <command> --help`` (each function's ``__doc__`` is that text).
:func:`call` runs any command this way (the escape hatch).

Keyword arguments of these become flags:

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
import re as _re
from typing import Any, Dict, Iterable, Tuple

from . import _native

__version__ = _native.__version__

__all__ = [
    "UsageError",
    "UncertifiableError",
    "Result",
    "Run",
    "from_dp_event",
    "from_opacus_history",
    "from_opacus",
    "describe_run",
    "write_run",
    "check",
    "run",
    "call",
    "to_args",
    "bound",
    "epsilon",
    "tradeoff",
    "TradeoffResult",
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
    "sig",
]


class UsageError(ValueError):
    """The CLI's exit status 2: a usage error or invalid input (an unknown keyword, a value
    out of range, an unreadable input file, ...), found before any work.

    ``parameter`` names the offending keyword (``"noise_multiplier"``) and ``value`` its
    value, where they are known (the typed functions know them for every out-of-range value
    and unknown keyword; ``call`` only through the CLI's message), else ``None`` (for
    example a request with no answer, such as the epsilon of shuffled epochs)."""

    def __init__(
        self, message: str, code: int = 2, parameter: Any = None, value: Any = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.parameter = parameter
        self.value = value


class UncertifiableError(RuntimeError):
    """The CLI's exit status 1: a valid request without a certifiable answer (for example
    ``epsilon(..., accountant="pld")`` where the PLD has no certified value), or a result that
    could not be delivered (an output file that failed while written). ``parameter`` and
    ``value`` are ``None``."""

    def __init__(
        self, message: str, code: int = 1, parameter: Any = None, value: Any = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.parameter = parameter
        self.value = value


class Result(dict):
    """A command's result: the JSON object the CLI prints with ``--json``, as a dict whose
    keys are also attributes (``r.epsilon_rdp``: a float; ``None`` for JSON ``null``).
    :meth:`to_dict` returns a plain copy, equal to ``json.loads`` of the CLI's output."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no key {name!r} (keys: {', '.join(self)})"
            ) from None

    def __dir__(self):
        return list(super().__dir__()) + [k for k in self if k.isidentifier()]

    def to_dict(self) -> Dict[str, Any]:
        """A plain dict (deep copy) of the result: the CLI's ``--json`` object."""
        return _json.loads(_json.dumps(self))


class EpsilonResult(Result):
    """The result of :func:`epsilon`: ``reconbound epsilon ... --json`` (its fields are
    declared in the type stubs, tested against the JSON)."""


class BoundResult(Result):
    """The result of :func:`bound`: ``reconbound bound ... --json``."""


class EmpiricalResult(Result):
    """The result of :func:`empirical_epsilon`: ``reconbound estimate --scores ... --json``."""


class OneRunResult(Result):
    """The result of :func:`one_run_epsilon`: ``reconbound estimate --guesses ... --json``."""


class CheckResult(Result):
    """The result of :func:`check`: ``reconbound check ... --json``."""


class RunDescription(Result):
    """The result of :func:`describe_run` and :func:`write_run`: a run file's object."""


def _typed(call_native, *args: Any, cls: Any = None) -> Result:
    """Call a typed native entry point; its ValueError / RuntimeError (message, parameter,
    real value, count value) becomes UsageError / UncertifiableError. The result is of
    class ``cls`` (a :class:`Result` subclass naming what it holds)."""
    try:
        return (cls or Result)(_json.loads(call_native(*args)))
    except ValueError as e:
        message, parameter, real, count = _error_args(e)
        raise UsageError(message, 2, parameter, real if count is None else count) from None
    except RuntimeError as e:
        message, _, _, _ = _error_args(e)
        raise UncertifiableError(message, 1) from None


def _error_args(e: Exception) -> Tuple[str, Any, Any, Any]:
    a = e.args
    if len(a) == 4:
        return a[0], a[1], a[2], a[3]
    return str(e), None, None, None


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


#: The command line's switches (flags without a value): True gives the flag, False leaves it
#: out. Every other keyword takes a value, and a bool there is a TypeError (False used to
#: drop the flag silently, so ``noise_multiplier=False`` ran with the default).
_SWITCHES = frozenset({"quiet", "fil", "no_intercept", "unknown_init", "unknown_sampling_seed"})


def to_args(**kwargs: Any) -> list:
    """The flags that ``kwargs`` stand for (the translation every function uses), e.g.
    ``to_args(noise_multiplier=1.1, orders=[2, 3])`` == ``["--noise-multiplier", "1.1",
    "--orders", "2,3"]``."""
    out: list = []
    for key, value in kwargs.items():
        if value is None:
            continue
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            if key not in _SWITCHES:
                raise TypeError(
                    f"{key} = {value!r}: --{key.replace('_', '-')} takes a value, not a bool "
                    f"(switches: {', '.join(sorted(_SWITCHES))})"
                )
            if not value:
                continue
            value = True
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
    # An unknown flag's message lists every flag the command takes: as keywords here.
    line, takes, listed = line.partition("; this command takes: ")
    if takes:
        keywords = ", ".join(_keyword(f[2:]) for f in listed.split() if f.startswith("--"))
        line = _FLAG.sub(
            lambda m: f"{m.group(1) or ''}--{m.group(2)}{m.group(3) or ''} ({_keyword(m.group(2))})",
            line,
        )
        return f"{line}; the keywords it takes: {keywords}"
    # Name each flag's keyword beside it: --noise-multiplier (noise_multiplier).
    return _FLAG.sub(
        lambda m: f"{m.group(1) or ''}--{m.group(2)}{m.group(3) or ''} ({_keyword(m.group(2))})",
        line,
    )


_NAMED = _re.compile(r"'?--([a-z][a-z0-9-]*)'? = (\S+) is out of range")


def _checked(argv: list) -> Result:
    code, stdout, stderr = _native.run(argv)
    if code == 2:
        named = _NAMED.search(stderr)
        parameter = _keyword(named.group(1)) if named else None
        value: Any = named.group(2) if named else None
        try:
            value = float(value) if value is not None else None
        except ValueError:
            pass
        raise UsageError(_message(stderr), 2, parameter, value)
    if code != 0:
        raise UncertifiableError(_message(stderr), code)
    return Result(_json.loads(stdout))


def call(command: str, **kwargs: Any) -> Result:
    """Run ``reconbound COMMAND --flags... --json`` (``command`` may be ``"attack glm"``) and
    return the JSON object as a dict; the generic form of every function below.
    ``help=True`` returns the command's full help (``--help-all``) instead."""
    if not isinstance(command, str):
        raise TypeError(f"command = {command!r} is not a string (e.g. 'bound', 'attack glm')")
    if not command.split():
        raise UsageError(
            f"command = {command!r} is empty: give a command such as 'bound' or 'attack glm'",
            2, "command", command)
    if "json" in kwargs:
        raise TypeError("json is always passed; do not give it")
    if kwargs.pop("help", False):
        # the command's full help text (a str), not a JSON result
        code, stdout, stderr = _native.run(command.split() + ["--help-all"])
        if code != 0:
            raise UsageError(_message(stderr), code)
        return stdout  # type: ignore[return-value]
    return _checked(command.split() + to_args(**kwargs) + ["--json"])


def _help(command: str) -> str:
    code, stdout, _ = _native.run(command.split() + ["--help"])
    return stdout if code == 0 else ""


def _command(name: str, command: str):
    def f(**kwargs: Any) -> Result:
        return call(command, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"Runs `reconbound {command} ... --json` in-process and returns its JSON object as a "
        f"Result, a dict with attribute access (keyword noise_multiplier=1.1 -> flag "
        f"--noise-multiplier 1.1).\n"
        f"Raises UsageError (exit 2) or UncertifiableError (exit 1).\n\n"
        f"`reconbound {command} --help`:\n\n{_help(command)}"
    )
    return f


_bound_cli = _command("bound", "bound")


def bound(run: Any = None, **kwargs: Any) -> Result:
    """Every guarantee of a DP-SGD configuration (epsilon by RDP and PLD, the ReRo gammas of
    Balle et al. and Hayes et al., Fano, Guo et al.'s MSE bound): a :class:`Result` equal to
    ``reconbound bound ... --json``.

    With a :class:`Run` (Poisson phases): computed by the core on that run, with keywords
    ``delta`` (default 1e-5), ``prior_size`` (default 10) or ``kappa``, and ``diameter``
    (default 1); errors carry ``.parameter`` and ``.value``. Without one, the keywords are
    the command's flags (the README's default configuration when none is given)."""
    if run is None:
        return _bound_cli(**kwargs)
    if not isinstance(run, Run):
        raise TypeError(f"run = {run!r} is not a reconbound.Run")
    delta = kwargs.pop("delta", 1e-5)
    kappa = kwargs.pop("kappa", None)
    prior_size = kwargs.pop("prior_size", None)
    diameter = kwargs.pop("diameter", 1.0)
    _no_unknown("bound", kwargs)
    if kappa is None and prior_size is None:
        prior_size = 10
    return _typed(
        _native.bound,
        run.kind,
        run.phases,
        run.batches,
        _real("delta", delta),
        None if kappa is None else _real("kappa", kappa),
        None if prior_size is None else _count("prior_size", prior_size),
        _real("diameter", diameter),
        run.as_schedule,
        cls=BoundResult,
    )


bound.__doc__ = (bound.__doc__ or "") + "\n\n" + (_bound_cli.__doc__ or "")
rdp = _command("rdp", "rdp")
rero = _command("rero", "rero")
calibrate = _command("calibrate", "calibrate")
fano = _command("fano", "fano")
attack_prior_aware = _command("attack_prior_aware", "attack prior-aware")
attack_glm = _command("attack_glm", "attack glm")
audit = _command("audit", "audit")
report = _command("report", "report")
estimate = _command("estimate", "estimate")


def _real(name: str, x: Any) -> float:
    """A real keyword's value as a float; a bool or a non-number is a TypeError."""
    if isinstance(x, bool) or not isinstance(x, _numbers.Real):
        raise TypeError(f"{name} = {x!r} is not a real number")
    return float(x)


def _count(name: str, x: Any) -> int:
    """An integer keyword's value: an int, or a real number that is exactly an integer
    (20.0, numpy.float64(20)); a bool or anything else is a TypeError, a fraction or a
    negative number a UsageError naming the keyword."""
    if isinstance(x, bool) or not isinstance(x, _numbers.Real):
        raise TypeError(f"{name} = {x!r} is not an integer")
    if isinstance(x, _numbers.Integral):
        v = int(x)
    else:
        f = float(x)
        if not (_math.isfinite(f) and f == int(f)):
            raise UsageError(f"{name} = {x!r} is not an integer", 2, name, f)
        v = int(f)
    if v < 0 or v >= 2**64:
        raise UsageError(
            f"{name} = {v} is out of range: must be in [0, 2^64)", 2, name, v
        )
    return v


def sig(x: Any, digits: int = 4, side: str = "nearest") -> str:
    """``x`` to ``digits`` significant digits (1 to 17), rounded towards ``side``: ``"up"`` for
    an upper bound (epsilon, gamma, a TPR bound), ``"down"`` for a lower bound (an audit's
    epsilon, an MSE bound), ``"nearest"`` for a plain value (without trailing zeros). The
    command line's own rounding,
    so that Python prints a number as the terminal and the pages do (full precision stays in
    the results)::

        >>> reconbound.sig(1.8282556146627706, 4, "up")
        '1.829'
    """
    x = _real("x", x)
    digits = _count("digits", digits)
    if not isinstance(side, str):
        raise TypeError(f"side = {side!r} is not a str")
    try:
        return _native.sig(x, min(digits, 2**32), side)
    except ValueError as e:
        message, parameter, real, count = _error_args(e)
        raise UsageError(message, 2, parameter, real if count is None else count) from None


def _required(name: str, x: Any) -> Any:
    if x is None:
        raise UsageError(f"{name} is required", 2, name, None)
    return x


def _no_unknown(function: str, unknown: Dict[str, Any]) -> None:
    if unknown:
        name = next(iter(unknown))
        raise UsageError(
            f"{function}: unknown keyword {name!r}", 2, name, unknown[name]
        )


class Run:
    """A DP-SGD run as a value (the core's ``reconbound::accounting::run::Run``): how each
    step samples its batch, the noise multiplier sigma (noise std sigma * C) and the steps.

    Build one with :meth:`poisson`, :meth:`full_batch`, :meth:`schedule` (Poisson phases,
    composed in order), :meth:`fixed_size` (batches of B from n without replacement:
    replace-one adjacency, RDP only), :meth:`shuffled` (no epsilon: accounting shuffled
    epochs as Poisson is the pitfall of Chua et al., ICML 2024), or from another library's
    description: :func:`from_dp_event`, :func:`from_opacus_history`. Runs compose with
    :meth:`then` (Poisson phases only). The core validates the values when the run is
    accounted; errors name the keyword (``sampling_rate``, ``noise_multiplier``, ``steps``,
    ``batch_size``, ``dataset_size``)."""

    __slots__ = ("kind", "phases", "batches", "as_schedule")

    def __init__(self, kind: str, phases: list, batches: Any = None, as_schedule: bool = False):
        self.kind = kind
        self.phases = [tuple(p) for p in phases]
        self.batches = batches
        self.as_schedule = as_schedule
        self._check()

    def _check(self) -> None:
        """Every value in its range when the Run is built (never a Run of NaN): q in
        (0, 1] (Poisson), sigma finite and > 0, T >= 1, 1 <= B <= n. The message names the
        phase (``phases[1].noise_multiplier``); ``parameter`` is the core's name."""
        several = self.as_schedule or len(self.phases) > 1

        def name(i: int, key: str) -> str:
            return f"phases[{i}].{key}" if several else key

        for i, (q, sigma, steps) in enumerate(self.phases):
            if self.kind == "poisson" and not (0.0 < q <= 1.0):
                raise UsageError(f"{name(i, 'sampling_rate')} = {q!r} is out of range: must be in (0, 1]",
                                 2, "sampling_rate", q)
            if not (_math.isfinite(sigma) and sigma > 0.0):
                raise UsageError(f"{name(i, 'noise_multiplier')} = {sigma!r} is out of range: must be finite and > 0",
                                 2, "noise_multiplier", sigma)
            if steps < 1:
                raise UsageError(f"{name(i, 'steps')} = {steps!r} is out of range: must be >= 1",
                                 2, "steps", steps)
        if self.batches is not None:
            b, n = self.batches
            if n < 1:
                raise UsageError(f"dataset_size = {n} is out of range: must be >= 1", 2, "dataset_size", n)
            if not 1 <= b <= n:
                raise UsageError(f"batch_size = {b} is out of range: must be in 1..=dataset_size ({n})",
                                 2, "batch_size", b)

    @classmethod
    def poisson(cls, sampling_rate: float, noise_multiplier: float, steps: int) -> "Run":
        """T steps of Poisson sampling at rate q (q = 1: the full batch)."""
        return cls(
            "poisson",
            [(
                _real("sampling_rate", sampling_rate),
                _real("noise_multiplier", noise_multiplier),
                _count("steps", steps),
            )],
        )

    @classmethod
    def full_batch(cls, noise_multiplier: float, steps: int) -> "Run":
        """T full-batch steps (every example in every step)."""
        return cls.poisson(1.0, noise_multiplier, steps)

    @classmethod
    def schedule(cls, phases: Iterable[Any]) -> "Run":
        """Poisson phases ``[(sampling_rate, noise_multiplier, steps), ...]``, in order."""
        out = []
        for i, p in enumerate(phases):
            p = tuple(p)
            if len(p) != 3:
                raise UsageError(
                    f"phases[{i}] = {p!r} is not (sampling_rate, noise_multiplier, steps)",
                    2,
                    "phases",
                    p,
                )
            out.append((
                _real(f"phases[{i}].sampling_rate", p[0]),
                _real(f"phases[{i}].noise_multiplier", p[1]),
                _count(f"phases[{i}].steps", p[2]),
            ))
        if not out:
            raise UsageError("phases is empty", 2, "phases", [])
        return cls("poisson", out, None, True)

    @classmethod
    def fixed_size(
        cls, batch_size: int, dataset_size: int, noise_multiplier: float, steps: int
    ) -> "Run":
        """T steps of fixed-size batches of B from n without replacement."""
        return cls(
            "fixed",
            [(0.0, _real("noise_multiplier", noise_multiplier), _count("steps", steps))],
            (_count("batch_size", batch_size), _count("dataset_size", dataset_size)),
        )

    @classmethod
    def shuffled(
        cls, batch_size: int, dataset_size: int, noise_multiplier: float, steps: int
    ) -> "Run":
        """T steps of shuffled epochs in batches of B from n (no epsilon)."""
        return cls(
            "shuffled",
            [(0.0, _real("noise_multiplier", noise_multiplier), _count("steps", steps))],
            (_count("batch_size", batch_size), _count("dataset_size", dataset_size)),
        )

    def to_args(self) -> list:
        """The run flags of this run (``reconbound bound``/``epsilon``/``check`` take them):
        ``--noise-multiplier --sampling-rate --steps`` for one Poisson phase (also a schedule
        of one phase, as from_opacus gives it), ``--phase`` per phase for a schedule, ``--sampling fixed-size|shuffled --batch-size
        --dataset-size --noise-multiplier --steps`` for batches; every float as
        ``repr(float(x))``, which the command line reads back to the same bits."""
        if self.kind == "poisson":
            if len(self.phases) > 1:
                out: list = []
                for q, sigma, steps in self.phases:
                    out += ["--phase", f"{float(q)!r},{float(sigma)!r},{int(steps)}"]
                return out
            q, sigma, steps = self.phases[0]
            return [
                "--noise-multiplier", repr(float(sigma)),
                "--sampling-rate", repr(float(q)),
                "--steps", str(int(steps)),
            ]
        b, n = self.batches
        _, sigma, steps = self.phases[0]
        return [
            "--sampling", "fixed-size" if self.kind == "fixed" else "shuffled",
            "--batch-size", str(int(b)), "--dataset-size", str(int(n)),
            "--noise-multiplier", repr(float(sigma)), "--steps", str(int(steps)),
        ]

    @classmethod
    def read(cls, path: str) -> "Run":
        """The mechanism of a run file (``reconbound run ... --json``, :func:`write_run`),
        read and checked by the command line (``--run FILE``): its ``mechanism`` must agree
        with its description. Microbatches are already in the noise multiplier; a run
        under replace-one other than fixed-size batches raises UsageError (a Run states
        add/remove for Poisson phases)."""
        return cls._of_file(_checked(["run", "--run", str(path), "--json"]), str(path))

    @classmethod
    def of(cls, **keywords: Any) -> "Run":
        """The mechanism of a run described by the run keywords of :func:`describe_run`
        (``batch_size``, ``dataset_size``, ``epochs``, ``counting="opacus"``,
        ``accumulation``, ``microbatches``, ``sampling``, ``sampling_rate="1/235"``, ...), as
        the command line resolves it."""
        return cls._of_file(describe_run(**keywords), "the run keywords")

    @classmethod
    def _of_file(cls, d: Any, where: str) -> "Run":
        m = d["mechanism"]
        if "phases" in m:
            return cls.schedule([
                (p["sampling_rate"], p["noise_multiplier"], p["steps"]) for p in m["phases"]
            ])
        if m["sampling"] == "poisson":
            # the full batch under replace-one is the Gaussian of sensitivity 2C: the Run at
            # sigma/2 (the mechanism's noise multiplier) is that mechanism exactly
            if m["relation"] != "add-remove" and m["sampling_rate"] != 1:
                raise UsageError(
                    f"{where}: relation {m['relation']} with Poisson sampling has no Run "
                    "(use check(run_file=...) or the command line's --run)",
                    2,
                    "relation",
                    m["relation"],
                )
            return cls.poisson(m["sampling_rate"], m["noise_multiplier"], m["steps"])
        make = cls.fixed_size if m["sampling"] == "fixed-size" else cls.shuffled
        return make(m["batch_size"], m["dataset_size"], m["noise_multiplier"], m["steps"])

    def then(self, other: "Run") -> "Run":
        """This run followed by ``other`` (both Poisson): the schedule of their phases."""
        if not isinstance(other, Run):
            raise TypeError(f"other = {other!r} is not a reconbound.Run")
        if self.kind != "poisson" or other.kind != "poisson":
            raise UsageError(
                "only Poisson runs compose (fixed-size and shuffled runs have one phase)",
                2,
                "run",
                other.kind if self.kind == "poisson" else self.kind,
            )
        return Run("poisson", self.phases + other.phases, None, True)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Run) and (self.kind, self.phases, self.batches) == (
            other.kind,
            other.phases,
            other.batches,
        )

    def __repr__(self) -> str:
        if self.kind == "poisson":
            return f"Run.schedule({self.phases!r})" if self.as_schedule else (
                "Run.poisson(%r, %r, %r)" % self.phases[0]
            )
        b, n = self.batches
        _, sigma, steps = self.phases[0]
        name = "fixed_size" if self.kind == "fixed" else "shuffled"
        return f"Run.{name}({b!r}, {n!r}, {sigma!r}, {steps!r})"


def from_opacus_history(history: Iterable[Any]) -> Run:
    """The run an Opacus accountant's ``history`` describes: a list of
    ``(noise_multiplier, sample_rate, num_steps)``, in order (Opacus's own field order; its
    sample_rate is Poisson's q, 1/len(data_loader) with Poisson sampling)."""
    phases = []
    for i, h in enumerate(history):
        h = tuple(h)
        if len(h) != 3:
            raise UsageError(
                f"history[{i}] = {h!r} is not (noise_multiplier, sample_rate, num_steps)",
                2,
                "history",
                h,
            )
        phases.append((
            _real(f"history[{i}].sample_rate", h[1]),
            _real(f"history[{i}].noise_multiplier", h[0]),
            _count(f"history[{i}].num_steps", h[2]),
        ))
    if not phases:
        raise UsageError("history is empty", 2, "history", [])
    return Run.schedule(phases)


def from_opacus(obj: Any) -> Run:
    """The run an Opacus ``PrivacyEngine`` (or its ``accountant``, any of ``rdp``, ``prv``,
    ``gdp``) has recorded: its ``history`` of ``(noise_multiplier, sample_rate,
    num_steps)`` as :func:`from_opacus_history` reads it: the run as Opacus accounted it.
    ``Run.of(batch_size=B, dataset_size=N, epochs=E, counting="opacus", ...)`` is the run as
    it ran; the two agree bit for bit unless 1/(1/⌈N/B⌉) rounds below ⌈N/B⌉ (93 batches,
    for one), where Opacus 1.6.0's accountant records the rate 1/(⌈N/B⌉ − 1), above its
    sampler's 1/⌈N/B⌉ (conservative). The ``library`` to name in :func:`check` is
    ``"opacus-" + obj.accountant.mechanism()``."""
    accountant = getattr(obj, "accountant", obj)
    history = getattr(accountant, "history", None)
    if history is None:
        raise TypeError(
            f"obj = {type(obj).__name__}: not an Opacus PrivacyEngine or accountant "
            "(no .history)"
        )
    if not history:
        raise UsageError(
            "from_opacus: the accountant's history is empty (no optimizer step taken yet)",
            2,
            "history",
            [],
        )
    return from_opacus_history(history)


#: The run keywords beyond (noise_multiplier, sampling_rate, steps, phases) that
#: :func:`tradeoff` and :func:`epsilon` resolve through :meth:`Run.of`.
_DESCRIPTION_KEYWORDS = frozenset({
    "batch_size", "dataset_size", "epochs", "counting", "accumulation", "microbatches",
    "relation", "sampling",
})

_MAX_EVENT_PHASES = 10_000_000  # as the core's MAX_TOTAL_STEPS bounds a schedule


def _event_phases(event: Any, out: list) -> None:
    """Append the Poisson phases (q, sigma, T) of a dp_accounting event to ``out``."""
    name = type(event).__name__
    if name == "NoOpDpEvent":
        return
    if name == "GaussianDpEvent":
        out.append((1.0, event.noise_multiplier, 1))
    elif name == "PoissonSampledDpEvent" and type(event.event).__name__ == "GaussianDpEvent":
        out.append((event.sampling_probability, event.event.noise_multiplier, 1))
    elif name == "SelfComposedDpEvent":
        inner: list = []
        _event_phases(event.event, inner)
        count = _count("event.count", event.count)
        if count == 0 or not inner:
            return  # composed zero times: no privacy cost, as dp_accounting counts it
        if len(inner) == 1:
            q, sigma, steps = inner[0]
            out.append((q, sigma, steps * count))
        elif len(inner) * count > _MAX_EVENT_PHASES:
            raise UsageError(
                f"event: {count} self-compositions of {len(inner)} phases exceed "
                f"{_MAX_EVENT_PHASES} phases",
                2,
                "event",
                count,
            )
        else:
            out.extend(inner * count)
        if len(out) > _MAX_EVENT_PHASES:
            raise UsageError(
                f"event: more than {_MAX_EVENT_PHASES} phases", 2, "event", len(out)
            )
    elif name == "ComposedDpEvent":
        for e in event.events:
            _event_phases(e, out)
    else:
        raise UsageError(
            f"event: {name} is not supported (supported: GaussianDpEvent, "
            "PoissonSampledDpEvent of a GaussianDpEvent, SampledWithoutReplacementDpEvent of "
            "a GaussianDpEvent, SelfComposedDpEvent, ComposedDpEvent, NoOpDpEvent)",
            2,
            "event",
            name,
        )


def from_dp_event(event: Any) -> Run:
    """The run a dp_accounting ``DpEvent`` describes: Gaussian (the full batch),
    Poisson-sampled Gaussian, self-composed and composed events become Poisson phases;
    a (self-composed) ``SampledWithoutReplacementDpEvent`` of a Gaussian becomes fixed-size
    batches (replace-one adjacency, as dp_accounting's RDP accountant treats it; its Gaussian
    is in units of the replace-one sensitivity, 2C for DP-SGD, so the run's noise multiplier
    is twice the event's). Other events raise UsageError with ``parameter == "event"``."""
    inner, count = event, 1
    if type(inner).__name__ == "SelfComposedDpEvent":
        inner, count = inner.event, _count("event.count", inner.count)
    if type(inner).__name__ == "SampledWithoutReplacementDpEvent":
        g = inner.event
        if type(g).__name__ != "GaussianDpEvent":
            raise UsageError(
                f"event: SampledWithoutReplacementDpEvent of {type(g).__name__} is not "
                "supported (of a GaussianDpEvent only)",
                2,
                "event",
                type(g).__name__,
            )
        # dp_accounting's Gaussian here is already in units of the replace-one sensitivity;
        # a Run's noise multiplier is DP-SGD's (in units of C), whose replace-one
        # sensitivity is 2C: the same mechanism has twice the event's noise multiplier.
        return Run.fixed_size(
            inner.sample_size, inner.source_dataset_size, 2.0 * _real(
                "event.noise_multiplier", g.noise_multiplier), count
        )
    phases: list = []
    _event_phases(event, phases)
    if not phases:
        raise UsageError("event: no privacy-relevant event (only NoOpDpEvent)", 2, "event", None)
    return Run.schedule(phases) if len(phases) > 1 else Run.poisson(*phases[0])


def epsilon(
    run: Any = None,
    *,
    delta: Any = None,
    accountant: str = "all",
    noise_multiplier: Any = None,
    sampling_rate: Any = None,
    steps: Any = None,
    phases: Any = None,
    sampling: Any = None,
    batch_size: Any = None,
    dataset_size: Any = None,
    schedule: Any = None,
    **unknown: Any,
) -> Result:
    """epsilon(delta) of a DP-SGD run by RDP (both conversions) and the certified PLD,
    computed by the core (``reconbound::accounting::run``): a :class:`Result` equal, key for
    key and bit for bit, to ``reconbound epsilon ... --json`` for the same run.

    The run: ``run`` (a :class:`Run`, e.g. from :func:`from_dp_event`), or
    ``noise_multiplier``, ``sampling_rate``, ``steps`` (Poisson; ``sampling="fixed"`` with
    ``batch_size`` and ``dataset_size`` instead of ``sampling_rate`` for fixed-size
    batches), or ``phases=[(q, sigma, T), ...]``, or ``schedule="FILE.csv"`` (read by the
    command line). ``accountant``: ``"all"`` (default), ``"rdp"`` or ``"pld"``.

    Raises UsageError (``.parameter``, ``.value``) for invalid input, UncertifiableError
    for ``accountant="pld"`` without a certified value."""
    _no_unknown("epsilon", unknown)
    described = {
        k: v
        for k, v in dict(
            noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, steps=steps,
            phases=phases, sampling=sampling, batch_size=batch_size,
            dataset_size=dataset_size, schedule=schedule,
        ).items()
        if v is not None
    }
    if run is not None and described:
        name = next(iter(described))
        raise UsageError(
            f"epsilon: give a run or its keywords, not both ({name} with run)",
            2,
            name,
            described[name],
        )
    # the types of what was given first (TypeError), then what is missing (UsageError)
    for name, x in (("delta", delta), ("noise_multiplier", noise_multiplier),
                    ("sampling_rate", sampling_rate)):
        if x is not None:
            _real(name, x)
    for name, x in (("steps", steps), ("batch_size", batch_size),
                    ("dataset_size", dataset_size)):
        if x is not None:
            _count(name, x)
    if schedule is not None:
        return call("epsilon", schedule=schedule, delta=delta, accountant=accountant)
    delta = _real("delta", _required("delta", delta))
    if not isinstance(accountant, str):
        raise TypeError(f"accountant = {accountant!r} is not a string")
    if run is None:
        if phases is not None:
            run = Run.schedule(phases)
        elif sampling in (None, "poisson"):
            run = Run.poisson(
                _required("sampling_rate", sampling_rate),
                _required("noise_multiplier", noise_multiplier),
                _required("steps", steps),
            )
        elif sampling in ("fixed", "shuffle", "shuffled"):
            make = Run.fixed_size if sampling == "fixed" else Run.shuffled
            run = make(
                _required("batch_size", batch_size),
                _required("dataset_size", dataset_size),
                _required("noise_multiplier", noise_multiplier),
                _required("steps", steps),
            )
        else:
            raise UsageError(
                f"sampling = {sampling!r} is not one of poisson, fixed, shuffle",
                2,
                "sampling",
                sampling,
            )
    elif not isinstance(run, Run):
        raise TypeError(f"run = {run!r} is not a reconbound.Run")
    return _typed(
        _native.epsilon,
        run.kind,
        run.phases,
        run.batches,
        delta,
        accountant,
        run.as_schedule,
        cls=EpsilonResult,
    )


epsilon.__doc__ = (epsilon.__doc__ or "") + (
    "\n\n`reconbound epsilon --help` (the same request as flags):\n\n" + _help("epsilon")
)


class TradeoffResult(Result):
    """The result of :func:`tradeoff`: the JSON object of ``reconbound tradeoff ... --json``
    (``to_dict()`` equals it), plus its columns as arrays (numpy if it is installed, else
    lists): :attr:`tprs` (the TPR upper bound at each FPR), and with ``points`` the curve
    :attr:`alphas`, :attr:`betas` (its certified lower side) and :attr:`betas_upper`."""

    @staticmethod
    def _array(values: list) -> Any:
        try:
            import numpy

            return numpy.asarray(values, dtype=float)
        except ImportError:  # pragma: no cover - numpy is optional
            return list(values)

    def _column(self, key: str, field: str) -> Any:
        return self._array([row[field] for row in self.get(key) or []])

    @property
    def fprs(self) -> Any:
        """The FPRs of the table."""
        return self._column("fpr", "fpr")

    @property
    def tprs(self) -> Any:
        """The largest TPR any membership attack reaches at each FPR (upper bounds)."""
        return self._column("fpr", "tpr")

    @property
    def alphas(self) -> Any:
        """The curve's α (with ``points``)."""
        return self._column("curve", "alpha")

    @property
    def betas(self) -> Any:
        """f(α), certified lower side (the one to report)."""
        return self._column("curve", "beta")

    @property
    def betas_upper(self) -> Any:
        """f(α), upper side of the bracket."""
        return self._column("curve", "beta_upper")


def tradeoff(
    run: Any = None,
    *,
    fpr: Any = (0.001, 0.01, 0.1),
    prior: Any = 0.5,
    kappa: Any = None,
    delta: Any = 1e-5,
    points: Any = None,
    noise_multiplier: Any = None,
    sampling_rate: Any = None,
    steps: Any = None,
    phases: Any = None,
    **unknown: Any,
) -> TradeoffResult:
    """The certified trade-off curve (f-DP) of a DP-SGD run and the membership risks read
    from it, computed by the core (``reconbound::accounting::tradeoff``): a
    :class:`TradeoffResult` equal to ``reconbound tradeoff ... --json``.

    The run: ``run`` (a :class:`Run`: Poisson phases, or fixed-size batches by the RDP
    conversion), or ``noise_multiplier``, ``sampling_rate``, ``steps`` (defaults: the
    README's 1.1, 256/60000, 14063), or ``phases=[(q, sigma, T), ...]``. ``fpr``: the FPRs of
    the TPR table (a list or numpy array); ``prior``: of "member", for the Bayes accuracy;
    ``kappa``: also Hayes et al.'s gamma; ``delta``: of epsilon(delta); ``points``: the
    curve at that many alphas (numpy arrays :attr:`TradeoffResult.alphas`, ``.betas``).
    Raises UsageError (``.parameter``, ``.value``) for invalid input."""
    described = {k: unknown.pop(k) for k in list(unknown) if k in _DESCRIPTION_KEYWORDS}
    _no_unknown("tradeoff", unknown)
    if described:
        if run is not None:
            raise UsageError(
                "tradeoff: give a run or its keywords, not both", 2, next(iter(described)), None
            )
        run = Run.of(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate,
                     steps=steps, phases=phases, **described)
        noise_multiplier = sampling_rate = steps = phases = None
    given = {k: v for k, v in dict(noise_multiplier=noise_multiplier,
                                    sampling_rate=sampling_rate, steps=steps,
                                    phases=phases).items() if v is not None}
    if run is not None and given:
        name = next(iter(given))
        raise UsageError(
            f"tradeoff: give a run or its keywords, not both ({name} with run)",
            2, name, given[name],
        )
    if run is None:
        if phases is not None:
            run = Run.schedule(phases)
        else:
            run = Run.poisson(
                256.0 / 60000.0 if sampling_rate is None else sampling_rate,
                1.1 if noise_multiplier is None else noise_multiplier,
                14063 if steps is None else steps,
            )
    elif not isinstance(run, Run):
        raise TypeError(f"run = {run!r} is not a reconbound.Run")
    if isinstance(fpr, _numbers.Real):
        fprs = [_real("fpr", fpr)]
    elif isinstance(fpr, (str, bytes)) or not hasattr(fpr, "__iter__"):
        raise TypeError(f"fpr = {fpr!r} is not a list of real numbers")
    else:
        fprs = [_real(f"fpr[{i}]", x) for i, x in enumerate(fpr)]
        if not fprs:
            raise UsageError(
                "fpr = [] is empty: give at least one false-positive rate in (0, 1)",
                2, "fpr", [])
    r = _typed(
        _native.tradeoff,
        run.kind,
        run.phases,
        run.batches,
        fprs,
        _real("prior", prior),
        None if kappa is None else _real("kappa", kappa),
        _real("delta", delta),
        None if points is None else _count("points", points),
        run.as_schedule,
    )
    return TradeoffResult(r)


tradeoff.__doc__ = (tradeoff.__doc__ or "") + (
    "\n\n`reconbound tradeoff --help` (the same request as flags):\n\n" + _help("tradeoff")
)


def _finite(name: str, values: Any) -> list:
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, _numbers.Real):
            raise TypeError(f"{name}[{i}] = {v!r} is not a real number")
        try:
            x = float(v)
        except OverflowError:
            raise UsageError(
                f"{name}[{i}] = {v!r} is out of range: too large for a float", 2, f"{name}[{i}]", None
            ) from None
        if not _math.isfinite(x):
            raise UsageError(f"{name}[{i}] = {x!r} is not finite", 2, f"{name}[{i}]", x)
        out.append(x)
    return out


def _splits(name: str, values: Any) -> list:
    out = []
    for i, v in enumerate(values):
        is_bool = type(v).__name__ in ("bool", "bool_")  # Python's or numpy's
        if (isinstance(v, str) and v == "calibration") or (is_bool and bool(v)):
            out.append(True)
        elif (isinstance(v, str) and v == "test") or (is_bool and not bool(v)):
            out.append(False)
        else:
            raise UsageError(
                f"{name}[{i}] = {v!r} is not 'calibration' or 'test'", 2, f"{name}[{i}]", v
            )
    return out


def empirical_epsilon(
    scores_out: Iterable[float],
    scores_in: Iterable[float],
    *,
    delta: float,
    estimator: str = "cp",
    threshold: Any = "held-out",
    calibration: Any = None,
    calibration_rows: str = "random",
    seed: Any = None,
    alpha: float = 0.05,
    split_out: Any = None,
    split_in: Any = None,
) -> Result:
    """The empirical epsilon of an audit from its per-trial scores: ``scores_out`` of the
    trainings without the canary (world 0), ``scores_in`` of those with it (world 1), each in
    trial order, higher meaning "in" (lists, tuples or numpy arrays of real numbers).

    Computed by the core's estimators on these values (no file): a :class:`Result` equal to
    ``reconbound estimate --scores FILE --json`` on a file of these scores, and to the numbers
    ``reconbound audit`` gives for the same scores. ``estimator`` is ``"cp"``
    (Clopper-Pearson lower bound with delta, at confidence 1 - alpha) or ``"gdp"`` (an
    estimate, no bound); ``threshold`` is ``"held-out"`` (calibrated on ``calibration``
    scores of each world, default half the smaller world, picked by a permutation seeded by
    ``seed`` (default 0) — or, with ``calibration_rows="first"``, the first ones, for scores
    in trial order as ``audit`` gives them — or on the trials marked ``"calibration"`` (or
    True) in ``split_out`` / ``split_in``, the others ``"test"`` (or False)),
    ``"bonferroni"`` or a number fixed in advance.
    Raises UsageError (a ValueError, with ``.parameter``) for invalid input, TypeError for
    non-numbers.
    """
    out = _finite("scores_out", scores_out)
    inn = _finite("scores_in", scores_in)
    for name, values in (("scores_out", out), ("scores_in", inn)):
        if not values:
            raise UsageError(
                f"{name} is empty: each world needs at least one score", 2, name, []
            )
    if (split_out is None) != (split_in is None):
        raise UsageError("give both split_out and split_in, or neither", 2, "split_in", None)
    so = si = None
    if split_out is not None:
        so, si = _splits("split_out", split_out), _splits("split_in", split_in)
    if isinstance(threshold, str):
        rule = threshold
    else:
        rule = repr(_real("threshold", threshold))
    cal = None if calibration is None else _count("calibration", calibration)
    if not isinstance(calibration_rows, str):
        raise TypeError(f"calibration_rows = {calibration_rows!r} is not a string")
    return _typed(
        _native.estimate_scores,
        out,
        inn,
        so,
        si,
        _real("delta", delta),
        estimator,
        rule,
        cal,
        calibration_rows,
        None if seed is None else _count("seed", seed),
        _real("alpha", alpha),
        cls=EmpiricalResult,
    )


def one_run_epsilon(
    guesses: Iterable[int],
    truths: Iterable[int],
    *,
    delta: float,
    alpha: float = 0.05,
    run: Any = None,
    run_file: Any = None,
    **keywords: Any,
) -> Result:
    """The one-run audit's epsilon (Steinke, Nasr, Jagielski 2023) from an adversary's
    guesses fixed in advance (+1 "in", -1 "out", 0 abstain) and the truths (1 in, 0 out), one
    per canary (lists or numpy arrays): computed by the core on these values, a
    :class:`Result` equal to ``reconbound estimate --guesses FILE --json [RUN]``.

    With the run the guesses come from (a :class:`Run`, ``run_file``, or the run keywords
    such as ``sampling_rate=0.01, noise_multiplier=1, steps=1000``), also the f-DP one-run
    audit (Mahloujifar, Melis, Chaudhuri 2025) against that run's own curves:
    ``epsilon_fdp``, a lower bound on the trainer's epsilon if it is the run up to its noise
    (Poisson, full batch, schedules), ``claim_refuted_fdp`` and ``p_value_fdp`` for the run's
    own curve. Always ``epsilon_gdp`` and ``mu_gdp``: the counts read against Gaussian curves
    (as jax_privacy's ``epsilon_one_run_fdp``), a lower bound only for full-batch runs
    (``gdp_note``). Raises UsageError (a ValueError) for invalid input."""
    run_args = _run_flags(run, run_file, keywords) if (run is not None or run_file is not None or keywords) else []
    g = list(guesses)
    t = list(truths)

    def integer(name: str, i: int, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, _numbers.Integral):
            raise TypeError(f"{name}[{i}] = {v!r} is not an integer")
        x = int(v)
        if not -(2**63) <= x < 2**63:
            raise UsageError(f"{name}[{i}] = {x} is out of range", 2, f"{name}[{i}]", x)
        return x

    gi = [integer("guesses", i, a) for i, a in enumerate(g)]
    ti = [integer("truths", i, b) for i, b in enumerate(t)]
    return _typed(_native.estimate_guesses, gi, ti, _real("delta", delta), _real("alpha", alpha),
                  run_args, cls=OneRunResult)


def _run_flags(run: Any, run_file: Any, keywords: Dict[str, Any]) -> list:
    """The run flags of a Run, a run file or the run keywords (one of them)."""
    given = [x for x in (run, run_file) if x is not None]
    if len(given) + bool(keywords) > 1:
        raise UsageError(
            "give one of run, run_file or the run keywords", 2, "run", None
        )
    if run is not None:
        if not isinstance(run, Run):
            raise TypeError(f"run = {run!r} is not a reconbound.Run")
        return run.to_args()
    if run_file is not None:
        return ["--run", str(run_file)]
    return to_args(**keywords)


def describe_run(run: Any = None, *, run_file: Any = None, **keywords: Any) -> Result:
    """The run file of a run: ``reconbound run ... --json`` as a :class:`Result`. The run is
    a :class:`Run`, a run file (``run_file=``) or the run keywords, the command line's run
    flags with underscores: ``noise_multiplier``, ``sampling_rate`` (a float, or a string
    fraction ``"1/235"``), ``batch_size``, ``dataset_size``, ``steps``, ``epochs``,
    ``sampling`` (poisson, full-batch, fixed-size, shuffled), ``counting`` (expected,
    opacus), ``accumulation``, ``microbatches``, ``relation`` (add-remove, replace-one),
    ``phases``. Its ``mechanism`` is what the accountants analyse."""
    return RunDescription(_checked(["run"] + _run_flags(run, run_file, keywords) + ["--json"]))


def write_run(path: Any, run: Any = None, **keywords: Any) -> Result:
    """Write the run file of a run (as :func:`describe_run`) to ``path``, a new file: an
    existing file is never replaced (``FileExistsError``). Returns the run file's object."""
    d = describe_run(run, **keywords)
    with open(path, "x", encoding="utf-8") as f:
        f.write(_json.dumps(d.to_dict()) + "\n")
    return d


def check(
    run: Any = None,
    *,
    claimed_epsilon: Any = None,
    target_epsilon: Any = None,
    delta: Any = None,
    library: Any = None,
    tolerance: Any = None,
    run_file: Any = None,
    **keywords: Any,
) -> Result:
    """A certified verdict on an epsilon another library printed for a run: ``reconbound
    check ... --json`` as a :class:`Result` (``verdict`` is ``"optimistic"``,
    ``"consistent"`` or ``"conservative"``; ``epsilon_lower``/``epsilon_upper`` the run's
    certified bracket; ``explanations`` the assumptions the claim matches). An optimistic
    verdict is a result, not an exception (the command line exits 3 for it); invalid input
    raises UsageError. The run: a :class:`Run` (e.g. :func:`from_opacus`), ``run_file=``,
    or the run keywords of :func:`describe_run`."""
    flags = _run_flags(run, run_file, keywords)
    for name, x in (("claimed_epsilon", claimed_epsilon), ("target_epsilon", target_epsilon),
                    ("delta", delta), ("tolerance", tolerance)):
        if x is not None:
            _real(name, x)
    extra = to_args(
        claimed_epsilon=claimed_epsilon, target_epsilon=target_epsilon, delta=delta,
        library=library, tolerance=tolerance,
    )
    argv = ["check"] + flags + extra + ["--json"]
    code, stdout, stderr = _native.run(argv)
    if code in (0, 3):
        return CheckResult(_json.loads(stdout))
    return CheckResult(_checked(argv))
