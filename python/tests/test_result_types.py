"""Issue 44: every typed function returns its own Result class, and every key its JSON
has is a field that class declares in the type stubs (python/reconbound/__init__.pyi), so
an editor or a type checker knows them. The test fails when a key is missing from the
stubs: a command that grows a JSON key must declare it. Each class is tried on the
variants of its function that change the keys (schedules, fixed-size runs, kappa, points,
the estimators, a run or none)."""

import ast
import pathlib

import reconbound as r

STUBS = pathlib.Path(r.__file__).with_name("__init__.pyi")


def declared():
    """The annotated fields (and properties) of each class in the stubs."""
    tree = ast.parse(STUBS.read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = set()
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, ast.FunctionDef):
                    names.add(item.name)
            out[node.name] = names
    return out


def variants():
    P = r.Run.poisson(0.01, 1.0, 100)
    S = r.Run.schedule([(0.01, 1.0, 50), (0.02, 1.5, 20)])
    F = r.Run.fixed_size(10, 1000, 1.0, 100)
    FULL = r.Run.full_batch(1.0, 10)
    SH = r.Run.shuffled(10, 1000, 1.0, 100)
    g, t = [1, -1, 0, 0] * 25, [1, 0, 1, 0] * 25
    so, si = [0.1, 0.2, 0.3, 0.4] * 5, [0.5, 0.6, 0.7, 0.8] * 5
    yield "EpsilonResult", r.epsilon(P, delta=1e-5)
    yield "EpsilonResult", r.epsilon(P, delta=1e-5, accountant="rdp")
    yield "EpsilonResult", r.epsilon(S, delta=1e-5)
    yield "EpsilonResult", r.epsilon(F, delta=1e-5)
    yield "EpsilonResult", r.epsilon(FULL, delta=1e-5)
    yield "BoundResult", r.bound(P)
    yield "BoundResult", r.bound(S)
    yield "BoundResult", r.bound(P, kappa=0.1)
    yield "TradeoffResult", r.tradeoff(P)
    yield "TradeoffResult", r.tradeoff(P, kappa=0.1, points=5)
    yield "TradeoffResult", r.tradeoff(FULL)
    yield "TradeoffResult", r.tradeoff(F)
    yield "TradeoffResult", r.tradeoff(S)
    yield "EmpiricalResult", r.empirical_epsilon(so, si, delta=1e-5)
    yield "EmpiricalResult", r.empirical_epsilon(so, si, delta=1e-5, estimator="gdp")
    yield "EmpiricalResult", r.empirical_epsilon(so, si, delta=1e-5, threshold="bonferroni")
    yield "EmpiricalResult", r.empirical_epsilon(so, si, delta=1e-5, threshold=0.45)
    yield "OneRunResult", r.one_run_epsilon(g, t, delta=1e-5)
    yield "OneRunResult", r.one_run_epsilon(g, t, delta=1e-5, run=P)
    yield "OneRunResult", r.one_run_epsilon(g, t, delta=1e-5, run=F)
    yield "CheckResult", r.check(P, claimed_epsilon=1.0, delta=1e-5)
    yield "CheckResult", r.check(P)
    yield "CheckResult", r.check(SH, claimed_epsilon=1.0, delta=1e-5)
    yield "RunDescription", r.describe_run(P)
    yield "RunDescription", r.describe_run(S)
    yield "RunDescription", r.describe_run(F)
    yield "RunDescription", r.describe_run(
        batch_size=256, dataset_size=60000, epochs=2, noise_multiplier=1.0)


def undeclared(fields, cls, res):
    """The keys of result ``res`` that class ``cls`` does not declare."""
    assert cls in fields, f"{cls} is not declared in {STUBS.name}"
    return sorted(set(res) - fields[cls])


def test_every_json_key_is_a_field_its_result_class_declares():
    fields = declared()
    seen = {}
    for cls, res in variants():
        assert type(res).__name__ == cls, (cls, type(res).__name__)
        missing = undeclared(fields, cls, res)
        assert not missing, f"{cls}: JSON keys not declared in the stubs: {missing}"
        seen.setdefault(cls, set()).update(res)
    # and nothing is declared that no variant shows (a stale field), but the note only
    # the newest core writes and the curve's array properties
    for cls, keys in seen.items():
        stale = sorted(fields[cls] - keys - {"fprs", "tprs", "alphas", "betas", "betas_upper"})
        assert not stale, f"{cls}: declared but never in its JSON: {stale}"


def test_a_missing_field_is_caught():
    # the negative control: the same check on stubs with one field dropped names it, and
    # only it (the parsed stubs pass: the test above)
    fields = declared()
    res = r.one_run_epsilon([1, -1], [1, 0], delta=1e-5)
    assert undeclared(fields, "OneRunResult", res) == []
    fields["OneRunResult"].discard("epsilon_fdp")
    assert undeclared(fields, "OneRunResult", res) == ["epsilon_fdp"]
