"""Shared fixtures. Tests import the *installed* package: pytest runs in importlib mode, so
the package source beside this folder is never on sys.path."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest
from archive_support import Archive

from attrflow import Client
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow

POSTGRES_URL_ENV = "ATTRFLOW_TEST_POSTGRES_URL"
"""The PostgreSQL database the ``postgres`` cases make their stores in (a schema each)."""
POSTGRES_REQUIRED_ENV = "ATTRFLOW_TEST_POSTGRES_REQUIRED"
"""``1`` makes the ``postgres`` cases fail, not skip, when no database is given."""


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """An SQLite file in a fresh folder, for tests of SQLite itself."""
    return tmp_path / "attrflow.db"


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store on each backend: a new SQLite file, or a new schema in the test
    PostgreSQL database. Every test that takes this (or ``client``) runs on both."""
    if request.param == "sqlite":
        return str(tmp_path / "attrflow.db")
    base_url = os.environ.get(POSTGRES_URL_ENV, "")
    if not base_url:
        reason = f"{POSTGRES_URL_ENV} names no PostgreSQL database (scripts/postgres.sh starts one)"
        if os.environ.get(POSTGRES_REQUIRED_ENV) == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    separator = "&" if "?" in base_url else "?"
    return f"{base_url}{separator}schema=test_{uuid.uuid4().hex}"


@pytest.fixture
def client(store_url: str) -> Iterator[Client]:
    with Client(store_url) as client:
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
