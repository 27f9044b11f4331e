"""The agent-memory section at its smoke size: both sessions measured in one run, every
figure recorded once, and the section names both sessions and the ratios."""

from __future__ import annotations

from pathlib import Path

from attrflow_bench import agents_session
from attrflow_bench.results import Results


def test_the_smoke_section_measures_both_sessions(tmp_path: Path) -> None:
    results = Results()
    agents_session.figures(True, tmp_path, results)
    for who in ("attrflow", "SQLiteSession"):
        for key in agents_session.RATIOS:
            values = results.values(f"{agents_session.PREFIX}.{who}.{key}")
            assert len(values) == 1
            assert values[0] > 0
    text = "\n".join(agents_session.render(results))
    assert "AttrflowSession" in text
    assert "SQLiteSession" in text
    assert text.count("×") >= len(agents_session.RATIOS)
