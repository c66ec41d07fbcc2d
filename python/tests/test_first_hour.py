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


def test_the_readme_installs_what_its_python_examples_import():
    # issue 31: the README's worked example imports dp_accounting, which its install line
    # (pip install ./python) does not install. Every module a ```python block imports is
    # reconbound, the standard library, or named by a `pip install` line of the README.
    import pathlib
    import re
    import sys

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    installed = set()
    for line in re.findall(r"^pip install (.+)$", readme, re.M):
        for word in line.split("#")[0].split():
            if not word.startswith(("-", ".", "/")):
                installed.add(re.split(r"[=<>\[]", word)[0].lower().replace("-", "_"))
    imported = set()
    for block in re.findall(r"```python\n(.*?)```", readme, re.S):
        imported |= set(re.findall(r"^\s*import (\w+)", block, re.M))
        imported |= set(re.findall(r"^\s*from (\w+)", block, re.M))
    missing = {m for m in imported
               if m != "reconbound" and m not in sys.stdlib_module_names
               and m.lower() not in installed}
    assert imported, "no python blocks found"
    assert not missing, f"imported by the README's examples, installed by none of its lines: {missing}"
