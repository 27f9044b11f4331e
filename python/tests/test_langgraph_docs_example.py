"""docs/agents.md's LangGraph example runs unchanged, and a second run continues the thread."""

from __future__ import annotations

from pathlib import Path

from test_readme_example import ROOT, run_readme_python_example

AGENTS_PAGE = ROOT / "docs" / "agents.md"


def test_the_agents_page_langgraph_example_runs_and_resumes(tmp_path: Path) -> None:
    assert run_readme_python_example(1, tmp_path, page=AGENTS_PAGE) == ["2 you said: hi"]
    # A new process on the same store picks the thread up where the first one left it.
    assert run_readme_python_example(1, tmp_path, page=AGENTS_PAGE) == ["4 you said: hi"]
