"""The hand-kept stub ``attrflow/_native.pyi`` matches the compiled module (mypy's
stubtest compares names, signatures and defaults)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_the_stub_matches_the_native_module(tmp_path: Path) -> None:
    pytest.importorskip("mypy.stubtest", reason="mypy (the test extra) is not installed")
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "attrflow._native"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout
