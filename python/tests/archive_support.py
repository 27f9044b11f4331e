"""Helpers shared by the tests: retrying lock conflicts and driving the subscriber archive."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, TypeVar

from attrflow import Client, RPCInvokeOptions, RpcLockConflictError
from attrflow.flows.chunked_subscriber import (
    CURRENT_CHUNK_INSTANCE,
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
    Subscriber,
    SubscriberPage,
)
from attrflow.retry import RetryPolicy

T = TypeVar("T")

RunPython = Callable[..., "subprocess.CompletedProcess[str]"]
"""The type of the ``run_python`` fixture: runs a script in a new Python process."""


def retry_on_conflict(call: Callable[[], T], attempts: int = 100_000) -> tuple[T, int]:
    """Calls ``call`` until it does not raise RpcLockConflictError, pausing as the core's
    retry policy says; returns the result and the number of conflicts seen. Any other error
    propagates."""
    policy = RetryPolicy(max_attempts=attempts, first_delay=1e-5, max_delay=1e-3, budget=600.0)
    start = time.monotonic()
    conflicts = 0
    while True:
        try:
            return call(), conflicts
        except RpcLockConflictError:
            pause = policy.pause_before(conflicts, time.monotonic() - start)
            if pause is None:
                raise AssertionError(f"still conflicting after {attempts} attempts") from None
            conflicts += 1
            time.sleep(pause)


def subscriber_input(n: int) -> RegisterSubscriberInput:
    """The n-th test subscriber, named as in the Dex pattern tests."""
    return RegisterSubscriberInput(f"subscriber-{n:03d}", f"subscriber-{n:03d}@example.com")


class Archive:
    """The chunked subscriber archive of one store, driven through the blocking client."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.flow = ChunkedSubscriberFlow()

    def start(self) -> str:
        return self.client.start_flow(self.flow, FLOW_ID)

    def register(self, n: int) -> Subscriber:
        subscriber, _ = retry_on_conflict(
            lambda: self.client.invoke_rpc(
                self.flow.register_subscriber, FLOW_ID, subscriber_input(n)
            )
        )
        return subscriber

    def page(self, token: str) -> SubscriberPage:
        instance = token or CURRENT_CHUNK_INSTANCE
        return self.client.invoke_rpc(
            self.flow.get_subscriber_page,
            FLOW_ID,
            GetSubscriberPageInput(token),
            options=RPCInvokeOptions(
                load_attribute_map_instances=(self.flow.subscriber_chunks.load(instance),)
            ),
        )

    def all_subscribers(self) -> list[Subscriber]:
        """Every stored subscriber, newest first, following the page tokens."""
        found: list[Subscriber] = []
        token = CURRENT_CHUNK_INSTANCE
        while True:
            page = self.page(token)
            found.extend(page.subscribers)
            if not page.next_page_token:
                return found
            token = page.next_page_token


IN_PROCESS_CONFLICT = "one or more attribute keys are locked"
"""How the core's message for a lock held by another call in this process begins."""


HOLD_WRITE_LOCK = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
connection.rollback()
"""


@contextmanager
def store_write_lock(path: Path) -> Iterator[None]:
    """Holds the store file's write lock from another process until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITE_LOCK, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        yield
    finally:
        holder.communicate("release\n", timeout=60)
        assert holder.returncode == 0
