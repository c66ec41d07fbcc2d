"""Helpers shared by the tests: the CLI's own JSON for an argument list, run in-process
through the package's generic ``run`` (no second build of the binary)."""

import json

import reconbound


def cli_json(command, *args):
    """json.loads of `reconbound COMMAND ARGS... --json`, asserting exit status 0."""
    code, out, err = reconbound.run(command, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def without_seconds(x):
    """The JSON with every wall-clock `seconds` key removed (the only key that differs
    between two runs)."""
    if isinstance(x, dict):
        return {k: without_seconds(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [without_seconds(v) for v in x]
    return x
