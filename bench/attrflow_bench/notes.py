"""Measurements made outside ``make bench``, kept in BENCHMARKS.md when it is written again.

``make bench`` writes BENCHMARKS.md whole from one run's figures. What was measured by hand
(another build, a PostgreSQL server, a profile), each with its date and the command that
produced it, lives in ``bench/notes/<section>.md`` and is placed after the generated part
of that section, so regenerating the report never loses it.
"""

from __future__ import annotations

from pathlib import Path

NOTES = Path(__file__).resolve().parent.parent / "notes"


def note(section: str) -> list[str]:
    """The lines of ``bench/notes/<section>.md`` followed by a blank line; none without one."""
    path = NOTES / f"{section}.md"
    if not path.exists():
        return []
    return [*path.read_text(encoding="utf-8").rstrip("\n").split("\n"), ""]
