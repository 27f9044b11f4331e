"""The README's example of a flow defined in Python runs unchanged and prints what it
promises."""

from __future__ import annotations

from pathlib import Path

from test_readme_example import run_readme_python_example


def test_the_readme_python_flow_runs_unchanged(tmp_path: Path) -> None:
    assert run_readme_python_example(1, tmp_path) == ["Tally(total=5)", "+5"]
    assert (tmp_path / "data" / "tally.db").exists()
