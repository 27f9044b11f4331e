"""Shared fixtures. Tests import the *installed* package: pytest runs in importlib mode, so
the package source beside this folder is never on sys.path."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest
from archive_support import Archive

from attrflow import Client
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "attrflow.db"


@pytest.fixture
def client(store_path: Path) -> Iterator[Client]:
    with Client(store_path) as client:
        yield client


@pytest.fixture
def flow() -> ChunkedSubscriberFlow:
    return ChunkedSubscriberFlow()


@pytest.fixture
def archive(client: Client) -> Archive:
    """A started archive."""
    archive = Archive(client)
    archive.start()
    return archive


@pytest.fixture
def run_python(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs a Python script in a new process, from a folder holding no attrflow source, so
    the child imports the installed package too."""

    def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result

    return run
