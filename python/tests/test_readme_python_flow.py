"""docs/python.md's example of a flow defined in Python runs unchanged and prints what it
promises."""

from __future__ import annotations

from pathlib import Path

from test_readme_example import ROOT, run_readme_python_example

PYTHON_PAGE = ROOT / "docs" / "python.md"


def test_the_python_page_flow_runs_unchanged(tmp_path: Path) -> None:
    assert run_readme_python_example(0, tmp_path, page=PYTHON_PAGE) == ["Tally(total=5)", "+5"]
    assert (tmp_path / "data" / "tally.db").exists()
