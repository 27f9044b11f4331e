"""A lock conflict that outlasts the service's retries is a 409 with Retry-After.

Another process holding the store's write lock is the conflict here: attrflow waits for it
for ``busy_timeout_ms``, then fails with a retryable lock conflict, which the service retries
until its budget is spent.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from archive_api import PREFIX, read_page, subscriber_body
from attrflow.retry import RetryPolicy

from attrflow_examples.app import create_app

pytestmark = pytest.mark.asyncio


# SQLite's file locks belong to a process, so the holder must be another process: within
# this one, a second copy of SQLite (Python's own) would not see attrflow's locks at all.
HOLD_WRITE_LOCK = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
connection.execute("ROLLBACK")
"""
LOCK_HOLDER_TIMEOUT_SECONDS = 60


@contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """Holds the SQLite write lock of ``path`` in another process until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITE_LOCK, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.communicate(input="", timeout=LOCK_HOLDER_TIMEOUT_SECONDS)


async def test_a_persistent_conflict_is_a_409_and_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "attrflow.db"
    app = create_app(
        f"sqlite:{path}?synchronous=normal&busy_timeout_ms=20",
        lock_retry=RetryPolicy(first_delay=0.005, max_delay=0.02, budget=0.2),
    )
    async with app.test_app() as test_app:
        http = test_app.test_client()
        with write_lock_held(path):
            response = await http.post(f"{PREFIX}/register", json=subscriber_body(1))
            assert response.status_code == 409
            assert response.headers["Retry-After"] == "1"
            body = await response.get_json()
            assert set(body) == {"error"}
            assert "busy" in body["error"]

        assert (await read_page(http, "current"))["subscribers"] == []
        response = await http.post(f"{PREFIX}/register", json=subscriber_body(1))
        assert response.status_code == 200
        assert (await response.get_json())["sequence"] == 1
