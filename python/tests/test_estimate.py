"""The estimators' front door: empirical_epsilon / one_run_epsilon give the numbers of
`reconbound estimate` and of `reconbound audit` for the same scores."""

import csv
import pytest

import reconbound


def test_empirical_epsilon_equals_the_audit_row_for_its_own_scores(tmp_path):
    # A small crafter-5 audit (nearly free) with its per-trial scores written by --csv.
    path = tmp_path / "a.csv"
    for rule in ["held-out", "bonferroni"]:
        for estimator in ["cp", "gdp"]:
            row = reconbound.audit(
                crafter="dataset-dirac",
                trials=40,
                steps=3,
                noise_multiplier=1.0,
                csv=str(path),
                threshold=rule,
                estimator=estimator,
                quiet=True,
            )
            out, inn = [], []
            with open(path, newline="") as f:
                for r in csv.DictReader(f):
                    (inn if r["world"] == "1" else out).append(float(r["gradient"]))
            e = reconbound.empirical_epsilon(
                out, inn, delta=row["delta"], estimator=estimator, threshold=rule,
                calibration=row["calibration"] if rule == "held-out" else None,
                # the audit's trials in trial order: its held-out rows are the first ones
                calibration_rows="first",
            )
            for key in ["epsilon_empirical", "gdp_mu", "threshold", "false_positives",
                        "false_negatives", "negatives", "positives", "fpr_upper", "fnr_upper"]:
                assert e[key] == row[key], (rule, estimator, key, e[key], row[key])
            path.unlink()


def test_empirical_epsilon_reaches_the_reference_value_and_takes_numpy(tmp_path):
    # DESIGN.md, Audits: 1000/1000 correct, alpha = 0.05, delta = 1e-5 -> 5.6006.
    out = [-1.0 - k / 1000 for k in range(1000)]
    inn = [1.0 + k / 1000 for k in range(1000)]
    e = reconbound.empirical_epsilon(out, inn, delta=1e-5, threshold=0)
    assert abs(e["epsilon_empirical"] - 5.6006) < 5e-5
    np = pytest.importorskip("numpy")
    assert reconbound.empirical_epsilon(np.array(out), np.array(inn), delta=1e-5,
                                        threshold=0.0) == e
    path = tmp_path / "s.csv"
    path.write_text("world,score\n" + "".join(f"0,{x!r}\n" for x in out)
                    + "".join(f"1,{x!r}\n" for x in inn))
    assert e == reconbound.estimate(scores=str(path), delta=1e-5, threshold=0)


def test_split_columns_choose_the_calibration_trials():
    out = [-(k % 7) + 0.5 for k in range(60)]
    inn = [(k % 5) - 0.5 for k in range(60)]
    split = ["calibration"] * 20 + ["test"] * 40
    a = reconbound.empirical_epsilon(out, inn, delta=1e-5, split_out=split, split_in=split)
    b = reconbound.empirical_epsilon(out, inn, delta=1e-5, calibration=20,
                                     calibration_rows="first")
    for key in ["epsilon_empirical", "threshold", "false_positives", "false_negatives"]:
        assert a[key] == b[key]


def test_one_run_epsilon_of_perfect_guesses():
    # 100 of 100 guesses right among 1000 canaries (the remaining 900 abstain).
    guesses = [1] * 50 + [-1] * 50 + [0] * 900
    truths = [1] * 50 + [0] * 50 + [k % 2 for k in range(900)]
    e = reconbound.one_run_epsilon(guesses, truths, delta=1e-5)
    # Steinke, Nasr, Jagielski 2023 (alpha = 0.05): 3.4653763478, as
    # tests/audits/estimate.rs checks for `estimate --guesses`; 1e-9: the same computation.
    assert abs(e["epsilon_empirical"] - 3.4653763478) < 1e-9
    wrong = reconbound.one_run_epsilon([-1] + guesses[1:], truths, delta=1e-5)
    assert wrong["epsilon_empirical"] < e["epsilon_empirical"] - 0.1


def test_bad_scores_raise():
    with pytest.raises(ValueError, match=r"scores_in\[1\]"):
        reconbound.empirical_epsilon([0.0, 1.0], [1.0, float("nan")], delta=1e-5)
    with pytest.raises(TypeError, match=r"scores_out\[0\]"):
        reconbound.empirical_epsilon(["x"], [1.0], delta=1e-5)
    with pytest.raises(ValueError, match="delta"):
        reconbound.empirical_epsilon([0.0, -1.0], [1.0, 2.0], delta=2.0)
    with pytest.raises(ValueError, match="differ in length"):
        reconbound.one_run_epsilon([1, -1], [1], delta=1e-5)
    with pytest.raises(TypeError, match=r"guesses\[0\]"):
        reconbound.one_run_epsilon([0.5], [1], delta=1e-5)


def test_an_empty_world_is_named_by_its_argument():
    # issue 31: an empty list was reported as "the scores has 0 rows of world 0" (before
    # that, a temporary file's name), naming neither argument.
    for out, inn, name in [([], [1.0, 2.0], "scores_out"), ([0.0], [], "scores_in"),
                           ([], [], "scores_out")]:
        with pytest.raises(reconbound.UsageError, match=rf"^{name} is empty") as e:
            reconbound.empirical_epsilon(out, inn, delta=1e-5)
        assert e.value.parameter == name
        assert e.value.value == []
