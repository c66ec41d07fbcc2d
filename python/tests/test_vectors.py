"""scripts/vectors.py recomputes tests/vectors/ with scipy and mpmath, independently of the
crate, and the vendored values pass its check; a perturbed copy fails it (negative control)."""

import importlib.util
import shutil
from pathlib import Path

import pytest

pytest.importorskip("scipy")
pytest.importorskip("mpmath")

ROOT = Path(__file__).resolve().parents[2]


def load():
    spec = importlib.util.spec_from_file_location("vectors", ROOT / "scripts" / "vectors.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_vendored_vectors_are_what_the_script_computes():
    assert load().main(write=False) == 0


def test_a_perturbed_vector_fails_the_check(tmp_path):
    v = load()
    for f in v.DIR.glob("*.csv"):
        shutil.copy(f, tmp_path / f.name)
    p = tmp_path / "rero_full_batch.csv"
    lines = p.read_text().splitlines()
    fields = lines[1].split(",")
    fields[-1] = repr(float(fields[-1]) * (1 + 1e-9))  # far above the 1e-12 tolerance
    lines[1] = ",".join(fields)
    p.write_text("\n".join(lines) + "\n")
    v.DIR = tmp_path
    assert v.main(write=False) == 1
