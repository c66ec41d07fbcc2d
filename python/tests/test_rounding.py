"""Issue 43: every number rounded once, the same way on the page, in the terminal and in
Python. reconbound.sig is the command line's own rounding (upper bounds up, lower bounds
down); the Python drivers' tables print through it."""

import pytest

import reconbound
from reconbound import audit_trainer


def test_sig_is_the_command_lines_rounding_of_the_same_number():
    # bound's text prints the certified PLD epsilon to 6 digits rounded up; Python's sig of
    # the JSON's full-precision value gives the same string
    code, text, _ = reconbound.run("bound")
    assert code == 0
    row = next(l for l in text.splitlines() if l.strip().startswith("ε(δ) by PLD, certified"))
    shown = row.split()[4]
    assert reconbound.sig(reconbound.bound().epsilon_pld, 6, "up") == shown == "2.38175"
    row = next(l for l in text.splitlines() if l.strip().startswith("MSE ≥"))
    assert reconbound.sig(reconbound.bound().mse_lower_bound, 6, "down") == row.split()[2]


def test_sig_rounds_towards_the_safe_side_and_names_bad_input():
    x = 1.8282556146627706
    assert reconbound.sig(x, 4, "up") == "1.829"
    assert reconbound.sig(x, 4, "down") == "1.828"
    assert reconbound.sig(x, 4) == "1.828"
    # a plain value without trailing zeros, a bound with them
    assert reconbound.sig(1.0, 6) == "1" and reconbound.sig(1.0, 6, "up") == "1.00000"
    # negative control: nearest is not up
    assert reconbound.sig(1.82801, 4) != reconbound.sig(1.82801, 4, "up")
    with pytest.raises(reconbound.UsageError, match="side") as e:
        reconbound.sig(x, 4, "sideways")
    assert e.value.parameter == "side"
    with pytest.raises(reconbound.UsageError) as e:
        reconbound.sig(x, 0)
    assert e.value.parameter == "digits"
    with pytest.raises(TypeError):
        reconbound.sig("1.5")


def test_the_audit_drivers_table_rounds_bounds_to_their_safe_side():
    # a lower bound printed nearest could show above the truth, a certified epsilon below it
    assert audit_trainer._num(3.46549, "down") == "3.465"
    assert audit_trainer._num(1.8282556, "up") == "1.829"
    assert audit_trainer._num(None) == "-"
