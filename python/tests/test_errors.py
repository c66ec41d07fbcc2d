"""Exit status 2 raises UsageError (a ValueError), exit status 1 UncertifiableError (a
RuntimeError). The typed functions (epsilon, the estimators) carry the core's parameter and
value as .parameter and .value; the CLI's functions carry the CLI's one-line message with the
keyword beside the flag (and .parameter where the message names one)."""

import pytest

import reconbound


def test_unknown_keyword_is_a_usage_error_naming_it():
    with pytest.raises(reconbound.UsageError, match="unknown keyword 'foo'") as e:
        reconbound.epsilon(noise_multiplier=1.1, foo=3)
    assert isinstance(e.value, ValueError) and e.value.code == 2
    assert e.value.parameter == "foo" and e.value.value == 3
    with pytest.raises(reconbound.UsageError, match=r"unknown flag '--foo' \(foo\); the keywords it takes: .*noise_multiplier") as e:
        reconbound.bound(foo=3)


@pytest.mark.parametrize(
    "kwargs,parameter,value",
    [
        (dict(noise_multiplier=-1, sampling_rate=0.1, steps=3, delta=1e-5),
         "noise_multiplier", -1.0),
        (dict(noise_multiplier=1, sampling_rate=1.5, steps=3, delta=1e-5), "sampling_rate", 1.5),
        (dict(noise_multiplier=1, sampling_rate=0.5, steps=0, delta=1e-5), "steps", 0),
        (dict(noise_multiplier=1, sampling_rate=0.5, steps=3, delta=1.0), "delta", 1.0),
        (dict(noise_multiplier=1, sampling_rate=0.5, steps=3.5, delta=1e-5), "steps", 3.5),
        (dict(sampling="fixed", batch_size=0, dataset_size=10, noise_multiplier=1, steps=3,
              delta=1e-5), "batch_size", 0),
        (dict(phases=[(0.1, 1.0, 3), (0.1, -2.0, 3)], delta=1e-5), "noise_multiplier", -2.0),
        (dict(noise_multiplier=1, steps=3, delta=1e-5), "sampling_rate", None),
    ],
)
def test_typed_errors_carry_the_parameter_and_its_value(kwargs, parameter, value):
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.epsilon(**kwargs)
    assert isinstance(e.value, ValueError) and e.value.code == 2
    assert e.value.parameter == parameter, str(e.value)
    assert e.value.value == value, str(e.value)
    assert parameter in str(e.value)


def test_out_of_range_value_names_flag_and_keyword():
    with pytest.raises(ValueError, match=r"--sampling-rate \(sampling_rate\) = 1.5") as e:
        reconbound.bound(sampling_rate=1.5)
    assert e.value.parameter == "sampling_rate" and e.value.value == 1.5
    with pytest.raises(ValueError):
        reconbound.epsilon(noise_multiplier=float("nan"), sampling_rate=0.1, steps=3, delta=1e-5)
    with pytest.raises(ValueError, match="phases"):
        reconbound.epsilon(phases=[(0.1, 1.0)], delta=1e-5)


def test_bad_python_values_are_type_errors():
    with pytest.raises(TypeError):
        reconbound.epsilon(noise_multiplier=object())
    with pytest.raises(TypeError):
        reconbound.rdp(orders=[True, 2])
    with pytest.raises(TypeError):
        reconbound.epsilon(noise_multiplier=True, sampling_rate=0.1, steps=3, delta=1e-5)
    with pytest.raises(TypeError):
        reconbound.epsilon(noise_multiplier=1.0, sampling_rate=0.1, steps=False, delta=1e-5)


@pytest.mark.parametrize("sigma,q,steps,delta", [(1, 0.01, 100, 1e-300), (0.05, 0.5, 3, 1e-5)])
def test_uncertifiable_pld_raises(sigma, q, steps, delta):
    # tests/cli/safety.rs: the PLD's grid cannot hold these and no closed form applies.
    kw = dict(noise_multiplier=sigma, sampling_rate=q, steps=steps, delta=delta)
    with pytest.raises(reconbound.UncertifiableError, match="accountant") as e:
        reconbound.epsilon(accountant="pld", **kw)
    assert isinstance(e.value, RuntimeError) and not isinstance(e.value, ValueError)
    assert e.value.code == 1 and "\n" not in str(e.value)
    # The same request with --accountant all reports RDP and a null PLD (None).
    r = reconbound.epsilon(**kw)
    assert r["epsilon_pld"] is None and r["epsilon_rdp"] > 0
    code, _, err = reconbound.run("epsilon", "--accountant", "pld", "--noise-multiplier",
                                  str(sigma), "--sampling-rate", str(q), "--steps", str(steps),
                                  "--delta", repr(delta))
    assert code == 1 and err.startswith("reconbound: ")
