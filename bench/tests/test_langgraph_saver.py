"""The LangGraph section at its smoke size: both savers measured in one run on the same
thread, every figure recorded once, and the section names both savers and the ratios."""

from __future__ import annotations

from pathlib import Path

from attrflow_bench import langgraph_saver
from attrflow_bench.results import Results


def test_the_smoke_section_measures_both_savers(tmp_path: Path) -> None:
    results = Results()
    langgraph_saver.figures(True, tmp_path, results)
    for who in langgraph_saver.SAVERS:
        for key in langgraph_saver.FIGURES:
            values = results.values(f"{langgraph_saver.PREFIX}.{who}.{key}")
            assert len(values) == 1
            assert values[0] > 0
    text = "\n".join(langgraph_saver.render(results))
    assert "AttrflowSaver" in text
    assert "SqliteSaver" in text
    assert text.count("×") >= len(langgraph_saver.FIGURES)
