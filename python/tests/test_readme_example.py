"""The README's Python quick start runs unchanged and prints the pages it promises.

The other pages' Python examples (docs/*.md) run through the same helpers, by page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def readme_python_example(index: int = 0, page: Path = README) -> str:
    """The Python example ``index`` (counted from 0) of ``page``, the README unless given."""
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert len(blocks) > index, f"{page.relative_to(ROOT)} has Python example {index}"
    return blocks[index]


def run_readme_python_example(
    index: int,
    folder: Path,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    page: Path = README,
) -> list[str]:
    """Runs the Python example ``index`` of ``page`` (the README unless given) in ``folder``
    with ``python`` (this test's interpreter unless given), in ``env`` if given; returns its
    output lines."""
    script = folder / f"{page.stem.lower()}_example_{index}.py"
    script.write_text(readme_python_example(index, page), encoding="utf-8")
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
