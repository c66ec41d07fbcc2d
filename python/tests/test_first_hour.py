"""Issue 43, the Python side: hostile input gets a clear error naming the parameter, the
value and the valid range, at the call that gave it (a Run of NaN is never built)."""

import math

import pytest

import reconbound as r
from reconbound import UsageError


@pytest.mark.parametrize("build, parameter", [
    (lambda: r.Run.poisson(math.nan, 1.0, 10), "sampling_rate"),
    (lambda: r.Run.poisson(1.5, 1.0, 10), "sampling_rate"),
    (lambda: r.Run.poisson(0.1, math.inf, 10), "noise_multiplier"),
    (lambda: r.Run.poisson(0.1, 0.0, 10), "noise_multiplier"),
    (lambda: r.Run.poisson(0.1, 1.0, 0), "steps"),
    (lambda: r.Run.schedule([(0.1, 1, 10), (0.1, -1, 5)]), "noise_multiplier"),
    (lambda: r.Run.fixed_size(20, 10, 1.0, 5), "batch_size"),
    (lambda: r.Run.shuffled(5, 0, 1.0, 5), "dataset_size"),
])
def test_a_run_out_of_range_is_refused_when_built_naming_the_parameter(build, parameter):
    with pytest.raises(UsageError) as e:
        build()
    assert e.value.parameter == parameter and "out of range" in str(e.value)
    if "schedule" in repr(build.__code__.co_names):
        assert str(e.value).startswith("phases[1].noise_multiplier = -1")


def test_then_call_and_tradeoff_name_what_is_wrong():
    with pytest.raises(TypeError, match="other = None is not a reconbound.Run"):
        r.Run.poisson(0.01, 1.0, 10).then(None)
    with pytest.raises(UsageError, match="command = '' is empty"):
        r.call("")
    with pytest.raises(UsageError, match=r"fpr = \[\] is empty"):
        r.tradeoff(fpr=[])
