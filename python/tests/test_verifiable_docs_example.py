"""docs/verifiable-logs.md's Python example runs unchanged and prints what the page says."""

from __future__ import annotations

from pathlib import Path

from test_readme_example import ROOT, run_readme_python_example

PAGE = ROOT / "docs" / "verifiable-logs.md"


def test_the_verifiable_logs_python_example_runs_unchanged(tmp_path: Path) -> None:
    assert run_readme_python_example(0, tmp_path, page=PAGE) == [
        "3",
        "attrflow/my-app/audit",
        "1 3 2",
        "1 3 2",
    ]
    assert (tmp_path / "data" / "audit.db").exists()
