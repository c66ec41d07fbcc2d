"""Issue 31, the Python items: each was a crash or a silent default on the previous main."""

import pytest

import reconbound


def test_call_with_a_non_string_command_is_a_type_error():
    # was: AttributeError 'NoneType' object has no attribute 'split'
    with pytest.raises(TypeError, match="command = None"):
        reconbound.call(None)


def test_help_true_returns_the_commands_help_text():
    # was: JSONDecodeError (the help text parsed as JSON)
    text = reconbound.call("bound", help=True)
    assert isinstance(text, str) and text.startswith("usage: reconbound bound")
    assert reconbound.rdp(help=True).startswith("usage: reconbound rdp")


def test_a_bool_for_a_value_flag_is_a_type_error_and_switches_still_work():
    # was: noise_multiplier=False silently left the flag out (the default sigma ran)
    with pytest.raises(TypeError, match="noise_multiplier = False"):
        reconbound.call("bound", noise_multiplier=False)
    with pytest.raises(TypeError, match="steps = True"):
        reconbound.to_args(steps=True)
    assert reconbound.to_args(quiet=True, no_intercept=False) == ["--quiet"]


def test_an_integer_too_large_for_a_float_names_its_element():
    # was: OverflowError int too large to convert to float
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.empirical_epsilon([1.0, 10**400], [1.0, 2.0], delta=1e-5)
    assert e.value.parameter == "scores_out[1]"
