"""``RegisterSubscriberOnce`` from Python: a retry with the same key returns the first
sequence, also from a new process after the first one died between commit and reply;
keys leave the window by count and age; threads sharing keys append each key once."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from archive_support import Archive, RunPython, retry_on_conflict

from attrflow import Client, InvalidInputError
from attrflow.flows.chunked_subscriber import (
    DEFAULT_IDEMPOTENCY_WINDOW,
    FLOW_ID,
    IdempotencyWindow,
    RegisterSubscriberOnceInput,
    Subscriber,
    validate_idempotency_key,
)

REGISTER_THEN_DIE = """
import os, sys
from attrflow import Client
from attrflow.flows.chunked_subscriber import (
    FLOW_ID, ChunkedSubscriberFlow, RegisterSubscriberOnceInput,
)
flow = ChunkedSubscriberFlow()
client = Client(sys.argv[1])
once = RegisterSubscriberOnceInput("pay-9", "p", "p@example.com")
client.invoke_rpc(flow.register_subscriber_once, FLOW_ID, once)
os._exit(0)  # dies before handing the reply on, without closing the store
"""


def once(
    archive: Archive, key: str, subscriber_id: str, address: str = "x@example.com"
) -> Subscriber:
    subscriber, _ = retry_on_conflict(
        lambda: archive.client.invoke_rpc(
            archive.flow.register_subscriber_once,
            FLOW_ID,
            RegisterSubscriberOnceInput(key, subscriber_id, address),
        )
    )
    return subscriber


def set_window(archive: Archive, window: IdempotencyWindow) -> IdempotencyWindow:
    return archive.client.invoke_rpc(archive.flow.set_idempotency_window, FLOW_ID, window)


def test_a_retry_returns_the_first_subscriber(archive: Archive) -> None:
    first = once(archive, "k-1", "a")
    archive.register(2)
    assert once(archive, "k-1", "a") == first
    assert first.sequence == 1
    assert len(archive.all_subscribers()) == 2


def test_a_reused_key_with_another_payload_is_refused(archive: Archive) -> None:
    once(archive, "k-1", "a")
    reused = r'^idempotency key "k-1" was already used with a different payload$'
    with pytest.raises(InvalidInputError, match=reused):
        once(archive, "k-1", "b")


@pytest.mark.parametrize("bad", ["", "has space", "k" * 129])
def test_bad_keys_are_refused(archive: Archive, bad: str) -> None:
    with pytest.raises(InvalidInputError, match=r"^idempotency key must be"):
        validate_idempotency_key(bad)
    with pytest.raises(InvalidInputError, match=r"^idempotency key must be"):
        once(archive, bad, "a")


def test_keys_leave_the_window_by_count(archive: Archive) -> None:
    assert IdempotencyWindow(100, 24 * 60 * 60 * 1000) == DEFAULT_IDEMPOTENCY_WINDOW
    window = IdempotencyWindow(2, DEFAULT_IDEMPOTENCY_WINDOW.max_age_ms)
    assert set_window(archive, window) == window
    for key in ("a", "b", "c"):
        once(archive, key, key)
    assert once(archive, "b", "b").sequence == 2
    assert once(archive, "a", "a").sequence == 4


def test_keys_leave_the_window_by_age(archive: Archive) -> None:
    set_window(archive, IdempotencyWindow(10, 1))
    once(archive, "a", "a")
    time.sleep(0.02)
    assert once(archive, "a", "a").sequence == 2


def test_threads_sharing_keys_append_each_key_once(archive: Archive) -> None:
    keys = [f"key-{k}" for k in range(25)]

    def run() -> dict[str, int]:
        return {key: once(archive, key, key).sequence for key in keys}

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: run(), range(4)))
    assert all(result == results[0] for result in results)
    stored = archive.all_subscribers()
    assert len(stored) == len(keys)
    assert {s.subscriber_id: s.sequence for s in stored} == results[0]


def test_a_retry_after_a_process_died_before_its_reply_gets_the_first_sequence(
    archive: Archive, store_url: str, run_python: RunPython
) -> None:
    archive.register(1)
    archive.client.close()
    run_python(REGISTER_THEN_DIE, store_url)
    with Client(store_url) as client:
        reopened = Archive(client)
        committed = reopened.all_subscribers()
        assert [s.sequence for s in committed] == [2, 1]
        retried = once(reopened, "pay-9", "p", "p@example.com")
        assert retried == committed[0]
        assert reopened.all_subscribers() == committed
