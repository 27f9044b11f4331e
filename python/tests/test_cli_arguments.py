"""The ``attrflow`` console script's entry point passes its arguments as the system gave them:
one that is not UTF-8 (Python holds it with surrogate escapes) is refused by the tool in one
line, not raised as a ``UnicodeEncodeError`` traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attrflow.cli import main


def test_an_argument_that_is_not_utf8_is_one_line_and_exit_code_2(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    store = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9.db")
    assert main(["--store", store, "flows"]) == 2
    captured = capfd.readouterr()
    assert captured.err == (
        "attrflow: invalid UTF-8 was detected in one or more arguments (see attrflow --help)\n"
    )
    assert not os.listdir(tmp_path), "nothing created"


def test_utf8_arguments_run_the_command(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(tmp_path / "café.db"), "show", "nope"]) == 1
    assert capfd.readouterr().err.startswith("attrflow: ")
