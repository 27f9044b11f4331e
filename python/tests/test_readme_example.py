"""The README's Python quick start runs unchanged and prints the pages it promises."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_python_example(index: int = 0) -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) > index, f"the README has Python example {index}"
    return blocks[index]


def run_readme_python_example(
    index: int, folder: Path, python: str = sys.executable, env: dict[str, str] | None = None
) -> list[str]:
    """Runs the README's Python example ``index`` in ``folder`` with ``python`` (this test's
    interpreter unless given), in ``env`` if given; returns its output lines."""
    script = folder / f"readme_example_{index}.py"
    script.write_text(readme_python_example(index), encoding="utf-8")
    result = subprocess.run(
        [python, str(script)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.splitlines()


def test_the_readme_quick_start_runs_unchanged(tmp_path: Path) -> None:
    assert run_readme_python_example(0, tmp_path) == [
        "current [150, 149, 148] ...",
        "00000000000000000001 [100, 99, 98] ...",
    ]
    assert (tmp_path / "data" / "attrflow.db").exists()
