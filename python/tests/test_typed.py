"""The typed API: values in, the core computes, a Result out whose attributes are typed
numbers and whose to_dict() is the CLI's JSON for the same request; runs from dp_accounting
events and Opacus histories; no temporary files."""

import json
import math
import os
import random
import tempfile

import pytest

import reconbound
from conftest import cli_json

dpa = pytest.importorskip("dp_accounting")


def test_epsilon_result_has_float_attributes_and_to_dict_is_the_cli_json():
    r = reconbound.epsilon(noise_multiplier=1.1, sampling_rate=0.01, steps=1000, delta=1e-5)
    assert isinstance(r, reconbound.Result)
    for key in ("epsilon_rdp", "epsilon_rdp_mironov", "epsilon_pld", "epsilon_pld_lower",
                "best_order", "delta", "noise_multiplier", "sampling_rate"):
        assert type(getattr(r, key)) is float and math.isfinite(getattr(r, key)), key
    assert type(r.steps) is int and r.steps == 1000
    want = cli_json("epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.01",
                    "--steps", "1000", "--delta", "1e-5")
    d = r.to_dict()
    assert type(d) is dict and d == want and list(d) == list(want)
    assert json.dumps(d) == json.dumps(want)  # the same keys in the same order, same floats
    with pytest.raises(AttributeError, match="no key"):
        r.epsilon_moments


@pytest.mark.parametrize(
    "run,flags",
    [
        (reconbound.Run.poisson(0.02, 0.9, 500),
         ["--noise-multiplier", "0.9", "--sampling-rate", "0.02", "--steps", "500"]),
        (reconbound.Run.full_batch(4.0, 10),
         ["--noise-multiplier", "4.0", "--sampling-rate", "1", "--steps", "10"]),
        (reconbound.Run.schedule([(0.01, 2.0, 100), (0.01, 1.0, 900)]),
         ["--phase", "0.01,2.0,100", "--phase", "0.01,1.0,900"]),
        (reconbound.Run.poisson(0.01, 2.0, 100).then(reconbound.Run.poisson(0.01, 1.0, 900)),
         ["--phase", "0.01,2.0,100", "--phase", "0.01,1.0,900"]),
        (reconbound.Run.fixed_size(100, 10000, 1.0, 100),
         ["--sampling", "fixed", "--batch-size", "100", "--dataset-size", "10000",
          "--noise-multiplier", "1", "--steps", "100"]),
    ],
)
def test_epsilon_of_a_run_is_the_cli_json_of_the_same_run(run, flags):
    assert reconbound.epsilon(run, delta=1e-6).to_dict() == cli_json(
        "epsilon", *flags, "--delta", "1e-6")


def test_shuffled_runs_have_no_epsilon_and_say_why():
    with pytest.raises(reconbound.UsageError, match="Chua"):
        reconbound.epsilon(reconbound.Run.shuffled(100, 10000, 1.0, 100), delta=1e-5)


def dpa_pld_epsilon(event, delta, vdi=1e-4):
    acc = dpa.pld.PLDAccountant(value_discretization_interval=vdi)
    acc.compose(event)
    return acc.get_epsilon(delta)


def test_from_dp_event_gives_the_epsilon_dp_accounting_gives():
    # dp_accounting's pessimistic PLD at grid 1e-4 lies inside the certified bracket, up to
    # its own discretisation (at most 1e-4 below the lower end, 1e-3 above the upper end:
    # the bound test_dp_accounting.py states for this grid).
    G, P, S, C = (dpa.GaussianDpEvent, dpa.PoissonSampledDpEvent, dpa.SelfComposedDpEvent,
                  dpa.ComposedDpEvent)
    events = [
        (S(P(256 / 60000, G(1.1)), 2000), [(256 / 60000, 1.1, 2000)]),
        (C([S(P(0.01, G(2.0)), 100), S(P(0.01, G(1.0)), 900)]),
         [(0.01, 2.0, 100), (0.01, 1.0, 900)]),
        (S(G(5.0), 10), [(1.0, 5.0, 10)]),
        (C([S(P(0.02, G(0.8)), 50), dpa.NoOpDpEvent(), P(0.02, G(0.8))]),
         [(0.02, 0.8, 50), (0.02, 0.8, 1)]),
    ]
    for event, phases in events:
        run = reconbound.from_dp_event(event)
        assert run.phases == phases, (run, phases)
        e = reconbound.epsilon(run, delta=1e-5)
        p = dpa_pld_epsilon(event, 1e-5)
        assert e.epsilon_pld_lower - 1e-4 <= p <= e.epsilon_pld + 1e-3, (
            phases, e.epsilon_pld_lower, e.epsilon_pld, p)


def test_from_dp_event_without_replacement_is_a_fixed_size_run():
    event = dpa.SelfComposedDpEvent(
        dpa.SampledWithoutReplacementDpEvent(10000, 100, dpa.GaussianDpEvent(1.0)), 100)
    run = reconbound.from_dp_event(event)
    # the event's Gaussian is in units of the replace-one sensitivity (2C in DP-SGD): the
    # DP-SGD run has twice its noise multiplier
    assert run == reconbound.Run.fixed_size(100, 10000, 2.0, 100)
    e = reconbound.epsilon(run, delta=1e-5)
    assert e.adjacency == "replace-one" and "epsilon_pld" not in e  # RDP only
    assert e.noise_multiplier_replace_one == 1.0
    # dp_accounting's RDP accountant under replace-one adjacency, on reconbound's default
    # orders: the same ε (the same bound; 1e-9 leaves room for the order of operations)
    orders = reconbound.bound().orders
    acc = dpa.rdp.RdpAccountant(orders=orders,
                                neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(event)
    ref = acc.get_epsilon(1e-5)
    assert abs(e.epsilon_rdp - ref) <= 1e-9 * ref, (e.epsilon_rdp, ref)  # 1.2e-14 seen


def test_from_dp_event_refuses_what_it_cannot_account_naming_the_event():
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.from_dp_event(dpa.LaplaceDpEvent(1.0))
    assert e.value.parameter == "event" and e.value.value == "LaplaceDpEvent"


def test_from_opacus_history_takes_noise_rate_steps_in_that_order():
    run = reconbound.from_opacus_history([(1.1, 0.004, 500), (0.9, 0.004, 100)])
    assert run.phases == [(0.004, 1.1, 500), (0.004, 0.9, 100)]
    e = reconbound.epsilon(run, delta=1e-5)
    assert e.to_dict() == cli_json("epsilon", "--phase", "0.004,1.1,500", "--phase",
                                   "0.004,0.9,100", "--delta", "1e-5")
    with pytest.raises(reconbound.UsageError) as err:
        reconbound.from_opacus_history([(1.1, 0.004)])
    assert err.value.parameter == "history"


def test_estimators_write_no_files():
    before = set(os.listdir(tempfile.gettempdir()))
    rng = random.Random(5)
    out = [rng.gauss(0, 1) for _ in range(200)]
    inn = [rng.gauss(1, 1) for _ in range(200)]
    e = reconbound.empirical_epsilon(out, inn, delta=1e-5)
    g = reconbound.one_run_epsilon([1, -1, 0] * 20, [1, 0, 1] * 20, delta=1e-5)
    assert e.epsilon_empirical >= 0 and g.epsilon_empirical >= 0
    assert {f for f in os.listdir(tempfile.gettempdir()) if f.startswith("reconbound-")} <= {
        f for f in before if f.startswith("reconbound-")}


def test_split_values_are_checked_not_written_into_a_file():
    # issue 31: a split value with a newline once added rows to the temporary CSV
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.empirical_epsilon([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], delta=1e-5,
                                     split_out=["calibration", "test", "test", "calibration"],
                                     split_in=["test\n1,100.0,test", "calibration", "test",
                                               "test"])
    assert e.value.parameter == "split_in[0]"


def test_bound_of_a_run_is_the_cli_json_and_names_bad_keywords():
    run = reconbound.Run.poisson(256 / 60000, 1.1, 14063)
    r = reconbound.bound(run)
    assert r.to_dict() == cli_json("bound")
    assert type(r.gamma) is float and r.gamma_lower <= r.gamma <= r.gamma_balle
    sched = reconbound.Run.schedule([(0.01, 1.5, 100), (0.02, 1.0, 50)])
    assert reconbound.bound(sched, delta=1e-6, kappa=0.05, diameter=2.5).to_dict() == cli_json(
        "bound", "--phase", "0.01,1.5,100", "--phase", "0.02,1.0,50", "--delta", "1e-6",
        "--kappa", "0.05", "--diameter", "2.5")
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.bound(run, kappa=1.5)
    assert e.value.parameter == "kappa" and e.value.value == 1.5
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.bound(run, prior_size=1)
    assert e.value.parameter == "prior_size" and e.value.value == 1
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.bound(run, dleta=1e-5)
    assert e.value.parameter == "dleta"


def test_event_and_keyword_edge_cases():
    G, P, S, C = (dpa.GaussianDpEvent, dpa.PoissonSampledDpEvent, dpa.SelfComposedDpEvent,
                  dpa.ComposedDpEvent)
    # composed zero times: no cost, as dp_accounting counts it
    run = reconbound.from_dp_event(C([S(C([P(0.1, G(1.0)), P(0.2, G(2.0))]), 0),
                                      S(P(0.01, G(1.0)), 5)]))
    assert run.phases == [(0.01, 1.0, 5)]
    # a self-composition too large to list is refused before it is built
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.from_dp_event(S(C([P(0.1, G(1.0)), P(0.2, G(2.0))]), 10**9))
    assert e.value.parameter == "event"
    # a run and run keywords together
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.epsilon(reconbound.Run.poisson(0.1, 1.0, 3), delta=1e-5, steps=4)
    assert e.value.parameter == "steps"
    with pytest.raises(TypeError):
        reconbound.from_opacus_history([("x", 0.1, 3)])
    np = pytest.importorskip("numpy")
    out = [-(k % 7) + 0.5 for k in range(60)]
    inn = [(k % 5) - 0.5 for k in range(60)]
    split = np.array([True] * 20 + [False] * 40)
    a = reconbound.empirical_epsilon(out, inn, delta=1e-5, split_out=split, split_in=split)
    b = reconbound.empirical_epsilon(out, inn, delta=1e-5, calibration=20,
                                     calibration_rows="first")
    assert a.epsilon_empirical == b.epsilon_empirical
