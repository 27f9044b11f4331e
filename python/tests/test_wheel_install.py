"""The wheel `make dist` builds installs into a fresh virtual environment on a machine with no
Rust toolchain, the README's Python quick start runs from it, and the `attrflow` command it
installs reads and verifies the store the quick start wrote.

The wheel is the one named by ATTRFLOW_TEST_WHEEL (scripts/test.sh passes the wheel
scripts/bootstrap.sh built and installed); without it this test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from test_readme_example import run_readme_python_example

RUST_TOOLS = ("cargo", "rustc", "rustup", "maturin")


def path_without_rust() -> str:
    """This process's PATH without every folder holding a Rust tool (or maturin)."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    kept = [f for f in folders if f and not any((Path(f) / t).exists() for t in RUST_TOOLS)]
    return os.pathsep.join(kept)


@pytest.fixture
def wheel() -> Path:
    named = os.environ.get("ATTRFLOW_TEST_WHEEL")
    if not named:
        pytest.skip("ATTRFLOW_TEST_WHEEL names no wheel (scripts/test.sh sets it)")
    path = Path(named).resolve()
    assert path.is_file(), f"no wheel at {path}"
    return path


def test_the_wheel_runs_the_readme_quick_start_without_rust(wheel: Path, tmp_path: Path) -> None:
    assert "-cp39-abi3-manylinux_" in wheel.name, wheel.name

    env_dir = tmp_path / "fresh-venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    path = os.pathsep.join([str(env_dir / "bin"), path_without_rust()])
    env = {"PATH": path, "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    assert all(shutil.which(tool, path=path) is None for tool in RUST_TOOLS)

    # This environment's pip installs into the fresh one: only the wheel, nothing built.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-index", str(wheel)],
        env=env,
        check=True,
    )
    where = subprocess.run(
        [python, "-c", "import attrflow; print(attrflow.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(env_dir), where

    folder = tmp_path / "app"
    folder.mkdir()
    assert run_readme_python_example(0, folder, python=python, env=env) == [
        "current [150, 149, 148] ...",
        "00000000000000000001 [100, 99, 98] ...",
    ]

    attrflow = str(env_dir / "bin" / "attrflow")
    store = ["--store", "data/attrflow.db"]

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [attrflow, *store, *args], cwd=folder, env=env, capture_output=True, text=True
        )

    flows = command("flows")
    assert flows.returncode == 0, flows.stderr
    assert flows.stdout.startswith("chunked-subscriber-archive\tChunkedSubscriberFlow\t")
    assert command("verify").stdout == "ok: 1 flows, 1 chunked logs, 150 records\n"
    newest = command("page", "chunked-subscriber-archive", "--json").stdout.splitlines()
    assert len(newest) == 150
    assert json.loads(newest[0])["sequence"] == 150
    missing = command("show", "no-such-flow")
    assert missing.returncode == 1
    assert missing.stderr == 'attrflow: flow "no-such-flow" not found\n'
