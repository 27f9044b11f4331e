"""The README's example of a flow defined in Python runs unchanged and prints what it
promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_readme_example import readme_python_example


def test_the_readme_python_flow_runs_unchanged(tmp_path: Path) -> None:
    script = tmp_path / "python_flow.py"
    script.write_text(readme_python_example(1), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.splitlines() == ["Tally(total=5)", "+5"]
