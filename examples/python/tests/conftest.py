"""Fixtures of the example service's tests: a fresh store, and the app serving it in-process."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

# The service runs from source, not installed: make ``attrflow_examples`` and the helper
# modules beside this file importable in any import mode, from any working directory; and
# python/tests, for its independent check of verifiable logs (tlog_check.py), written once.
TESTS_DIR = Path(__file__).resolve().parent
PACKAGE_TESTS_DIR = TESTS_DIR.parents[2] / "python" / "tests"
for folder in (TESTS_DIR, TESTS_DIR.parent, PACKAGE_TESTS_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from archive_api import HttpClient  # noqa: E402

from attrflow_examples.app import create_app  # noqa: E402

POSTGRES_URL_ENV = "ATTRFLOW_TEST_POSTGRES_URL"
"""The PostgreSQL database the ``postgres`` cases make their stores in (a schema each)."""
POSTGRES_REQUIRED_ENV = "ATTRFLOW_TEST_POSTGRES_REQUIRED"
"""``1`` makes the ``postgres`` cases fail, not skip, when no database is given."""


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store URL on each backend, so every test that takes it runs on both: an
    SQLite file in a fresh folder (``synchronous=normal``, as no test here cuts the power),
    or a new schema in the test PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'attrflow.db'}?synchronous=normal"
    base_url = os.environ.get(POSTGRES_URL_ENV, "")
    if not base_url:
        reason = f"{POSTGRES_URL_ENV} names no PostgreSQL database (scripts/postgres.sh starts one)"
        if os.environ.get(POSTGRES_REQUIRED_ENV) == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    separator = "&" if "?" in base_url else "?"
    return f"{base_url}{separator}schema=test_{uuid.uuid4().hex}"


@pytest_asyncio.fixture
async def http(store: str) -> AsyncIterator[HttpClient]:
    """A test client of the app on ``store``, started (the archive flow with it) and stopped."""
    app = create_app(store)
    async with app.test_app() as test_app:
        yield test_app.test_client()
