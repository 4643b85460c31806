"""docs/python.md holds the namespace table that _namespace generates."""

import pathlib
import re

import numpy as np
import pytest

import crossover  # noqa: F401 - fills the namespace
from crossover import _namespace

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"


def test_python_md_namespace_section_is_current():
    text = DOC.read_text(encoding="utf-8")
    assert _namespace.BEGIN in text and _namespace.END in text
    block = text.split(_namespace.BEGIN, 1)[1].split(_namespace.END, 1)[0].strip()
    made_with = re.search(r"with NumPy (\d+\.\d+)", block)
    assert made_with, "the section names the NumPy version it was generated with"
    if made_with.group(1) != ".".join(np.__version__.split(".")[:2]):
        pytest.skip(f"docs generated with NumPy {made_with.group(1)}, this is {np.__version__}")
    assert block == _namespace.markdown().strip(), (
        "docs/python.md is stale: run PYTHONPATH=crates/crossover-py/python "
        "python -m crossover._docs --update docs/python.md")


def test_native_fraction_in_docs_matches_the_table():
    native, functions = _namespace.native_fraction()
    text = DOC.read_text(encoding="utf-8")
    assert f"**{native} of NumPy's {functions} public functions" in text or \
        ".".join(np.__version__.split(".")[:2]) not in text
