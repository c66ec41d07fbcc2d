"""Every function's dict equals the CLI's JSON (same keys, same numbers bit for bit: ==
on floats), for several configurations: the keyword-to-flag translation and the parsing."""

import math

import pytest

import reconbound
from conftest import cli_json, without_seconds

Q = 256 / 60000  # 0.004266666666666667: repr round-trips through the CLI's f64 parser

CASES = [
    # (function, command, kwargs, the same request as CLI flags)
    ("bound", "bound", {}, []),
    (
        "bound",
        "bound",
        dict(noise_multiplier=0.9, batch_size=128, dataset_size=50000, epochs=2, prior_size=100),
        ["--noise-multiplier", "0.9", "--batch-size", "128", "--dataset-size", "50000",
         "--epochs", "2", "--prior-size", "100"],
    ),
    (
        "bound",
        "bound",
        dict(phases=[(0.01, 1.5, 100), (0.02, 1.0, 50)], delta=1e-6, kappa=0.05, diameter=2.5),
        ["--phase", "0.01,1.5,100", "--phase", "0.02,1.0,50", "--delta", "1e-6",
         "--kappa", "0.05", "--diameter", "2.5"],
    ),
    (
        "epsilon",
        "epsilon",
        dict(noise_multiplier=1.1, sampling_rate=Q, steps=14063, delta=1e-5),
        ["--noise-multiplier", "1.1", "--sampling-rate", "0.004266666666666667",
         "--steps", "14063", "--delta", "0.00001"],
    ),
    (
        "epsilon",
        "epsilon",
        dict(noise_multiplier=0.7, sampling_rate=0.03, steps=300, delta=1e-7, accountant="pld"),
        ["--noise-multiplier", "0.7", "--sampling-rate", "0.03", "--steps", "300",
         "--delta", "1e-7", "--accountant", "pld"],
    ),
    (
        "epsilon",
        "epsilon",
        dict(sampling="fixed", batch_size=64, dataset_size=10000, noise_multiplier=1.3,
             steps=1000, delta=1e-5),
        ["--sampling", "fixed", "--batch-size", "64", "--dataset-size", "10000",
         "--noise-multiplier", "1.3", "--steps", "1000", "--delta", "1e-5"],
    ),
    (
        "rdp",
        "rdp",
        dict(noise_multiplier=1.1, sampling_rate=0.01, orders=[1.5, 2, 3, 32.25], steps=7),
        ["--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--orders", "1.5,2,3,32.25",
         "--steps", "7"],
    ),
    (
        "rero",
        "rero",
        dict(noise_multiplier=1.1, sampling_rate=Q, steps=2000, prior_size=10),
        ["--noise-multiplier", "1.1", "--sampling-rate", repr(Q), "--steps", "2000",
         "--prior-size", "10"],
    ),
    (
        "rero",
        "rero",
        dict(noise_multiplier=2.0, sampling_rate=0.05, steps=40, kappa=0.01,
             method="monte-carlo", samples=2000, seed=7),
        ["--noise-multiplier", "2", "--sampling-rate", "0.05", "--steps", "40", "--kappa",
         "0.01", "--method", "monte-carlo", "--samples", "2000", "--seed", "7"],
    ),
    (
        "calibrate",
        "calibrate",
        dict(target_epsilon=3.0, delta=1e-5, sampling_rate=0.01, steps=1000),
        ["--target-epsilon", "3", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "1000"],
    ),
    (
        "calibrate",
        "calibrate",
        dict(target_gamma=0.5, prior_size=10, phases=[(0.01, 1.0, 100), (0.05, 1.0, 20)]),
        ["--target-gamma", "0.5", "--prior-size", "10", "--phase", "0.01,1,100",
         "--phase", "0.05,1,20"],
    ),
    ("fano", "fano", dict(prior_size=10, noise_multiplier=1.1),
     ["--prior-size", "10", "--noise-multiplier", "1.1"]),
    ("fano", "fano", dict(prior_size=100, noise_multiplier=0.5, sensitivity_sq=2.0),
     ["--prior-size", "100", "--noise-multiplier", "0.5", "--sensitivity-sq", "2"]),
    (
        "attack_prior_aware",
        "attack prior-aware",
        dict(trials=2, train_size=49, steps=10, epsilon=[2, 8], seed=5, quiet=True, threads=1),
        ["--trials", "2", "--train-size", "49", "--steps", "10", "--epsilon", "2,8",
         "--seed", "5", "--quiet", "--threads", "1"],
    ),
    (
        "attack_glm",
        "attack glm",
        dict(trials=1, train_size=200, quiet=True, no_intercept=True),
        ["--trials", "1", "--train-size", "200", "--quiet", "--no-intercept"],
    ),
    (
        "audit",
        "audit",
        dict(train_size=50, steps=3, trials=6, seed=3, crafter=[1, 5], quiet=True, threads=1),
        ["--train-size", "50", "--steps", "3", "--trials", "6", "--seed", "3",
         "--crafter", "1,5", "--quiet", "--threads", "1"],
    ),
]


@pytest.mark.parametrize("name,command,kwargs,flags", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_function_equals_cli_json(name, command, kwargs, flags):
    got = getattr(reconbound, name)(**kwargs)
    want = cli_json(command, *flags)
    assert without_seconds(got) == without_seconds(want)
    assert list(got) == list(want)  # the same keys in the CLI's order
    # `attack prior-aware` reports "command": "attack" beside "attack": "prior-aware".
    assert command.startswith(got["command"])


def test_report_equals_cli_json(tmp_path):
    small = dict(train_size=49, steps=10, trials=4, audit_trials=4, fil_coords=2,
                 quiet=True, threads=1)
    got = reconbound.report(out=str(tmp_path / "a.html"), **small)
    want = cli_json("report", "--train-size", "49", "--steps", "10", "--trials", "4",
                    "--audit-trials", "4", "--fil-coords", "2", "--quiet", "--threads", "1",
                    "--out", str(tmp_path / "b.html"))
    assert (tmp_path / "a.html").stat().st_size > 0
    for d in (got, want):
        d.pop("out")
        d.pop("command_line")
    assert without_seconds(got) == without_seconds(want)


def test_floats_are_the_cli_bits():
    # The CLI prints shortest round-trip floats; json.loads reads them back exactly.
    r = reconbound.epsilon(noise_multiplier=1.1, sampling_rate=Q, steps=14063, delta=1e-5)
    code, out, _ = reconbound.run("epsilon", "--noise-multiplier", "1.1", "--sampling-rate",
                                  repr(Q), "--steps", "14063", "--delta", "1e-5", "--json")
    assert code == 0
    for key in ("epsilon_rdp", "epsilon_pld", "epsilon_pld_lower"):
        text = out.split(f'"{key}": ')[1].split(",")[0].rstrip("}\n")
        assert float(text) == r[key] and math.isfinite(r[key])
    assert r["sampling_rate"] == Q and r["delta"] == 1e-5


def test_call_and_to_args():
    assert reconbound.to_args(noise_multiplier=1.1, orders=[2, 3.5], quiet=True, seed=None,
                              no_intercept=False, phases=[(0.1, 1.0, 3)]) == [
        "--noise-multiplier", "1.1", "--orders", "2,3.5", "--quiet", "--phase", "0.1,1.0,3"]
    assert reconbound.call("fano", prior_size=10, noise_multiplier=1.1) == reconbound.fano(
        prior_size=10, noise_multiplier=1.1)
    code, out, err = reconbound.run("--version")
    assert code == 0 and out.startswith("reconbound ") and err == ""


def test_docstrings_are_the_help_text():
    for name, command in [("epsilon", "epsilon"), ("attack_glm", "attack glm"),
                          ("report", "report")]:
        code, out, _ = reconbound.run(command, "--help")
        assert code == 0 and out
        doc = getattr(reconbound, name).__doc__
        assert f"reconbound {command}" in doc and out in doc
