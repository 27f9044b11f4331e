"""Fixtures of the example service's tests: a fresh store, and the app serving it in-process."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

# The service runs from source, not installed: make ``attrflow_examples`` and the helper
# modules beside this file importable in any import mode, from any working directory.
TESTS_DIR = Path(__file__).resolve().parent
for folder in (TESTS_DIR, TESTS_DIR.parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from archive_api import HttpClient  # noqa: E402

from attrflow_examples.app import create_app  # noqa: E402


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A store URL in a fresh folder; ``synchronous=normal``, as no test here cuts the power."""
    return f"sqlite:{tmp_path / 'attrflow.db'}?synchronous=normal"


@pytest_asyncio.fixture
async def http(store: str) -> AsyncIterator[HttpClient]:
    """A test client of the app on ``store``, started (the archive flow with it) and stopped."""
    app = create_app(store)
    async with app.test_app() as test_app:
        yield test_app.test_client()
