"""The examples in the installed package's docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "attrflow",
    "attrflow.attribute",
    "attrflow.client",
    "attrflow.codec",
    "attrflow.flow",
    "attrflow.metrics",
    "attrflow.options",
    "attrflow.flows.chunked_subscriber",
    "attrflow.retry",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
