"""docs/agents.md's AttrflowSession example runs unchanged and prints what the page says."""

from __future__ import annotations

from pathlib import Path

from test_readme_example import ROOT, run_readme_python_example

AGENTS_PAGE = ROOT / "docs" / "agents.md"


def test_the_agents_page_session_example_runs_unchanged(tmp_path: Path) -> None:
    assert run_readme_python_example(0, tmp_path, page=AGENTS_PAGE) == ["Zoé. 4"]
    assert (tmp_path / "data" / "attrflow.db").exists()
