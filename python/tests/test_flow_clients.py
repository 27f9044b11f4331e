"""The core's typed flow clients from Python: appends and upserts from many threads retry
lock conflicts by the core's policy, with no retry loop of the caller's own."""

from __future__ import annotations

import threading

import pytest

from attrflow import Client, InvalidPageTokenError, RecordNotFoundError
from attrflow.flows.app_log import AppLog
from attrflow.flows.customer_directory import (
    CustomerDirectory,
    CustomerProfile,
    profile_partition,
)
from attrflow.retry import RetryPolicy

PATIENT = RetryPolicy(max_attempts=100_000, first_delay=1e-5, max_delay=1e-3, budget=600.0)


def run_threads(count: int, work: object) -> None:
    assert callable(work)
    threads = [threading.Thread(target=work, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_app_log_appends_get_dense_sequences(client: Client) -> None:
    logs = AppLog(client, "my-app", PATIENT)
    assert logs.start() == logs.start()
    sequences: list[int] = []
    lock = threading.Lock()

    def append(n: int) -> None:
        for k in range(15):
            entry = logs.append_with_retry("audit", {"thread": n, "k": k})
            with lock:
                sequences.append(entry.sequence)

    run_threads(8, append)
    assert sorted(sequences) == list(range(1, 121))
    newest = logs.page("audit")
    assert (newest.page_token, newest.next_page_token) == ("current", "00000000000000000001")
    assert [entry.sequence for entry in newest.entries] == list(range(120, 100, -1))
    with pytest.raises(InvalidPageTokenError):
        logs.page("audit", "7")


def test_colliding_customer_profiles_are_all_saved(client: Client) -> None:
    directory = CustomerDirectory(client, "customer-directory", PATIENT)
    directory.start()
    bucket = profile_partition("customer-0@example.com")
    emails = [f"customer-{n}@example.com" for n in range(20_000)]
    colliding = [email for email in emails if profile_partition(email) == bucket][:12]
    assert len(colliding) == 12

    def upsert(n: int) -> None:
        email = colliding[n]
        saved = directory.upsert_with_retry(CustomerProfile(email.upper(), "N", "C", "gold"))
        assert saved.email_address == email

    run_threads(len(colliding), upsert)
    for email in colliding:
        assert directory.get(email) == CustomerProfile(email, "N", "C", "gold")
    with pytest.raises(RecordNotFoundError):
        directory.get("nobody@example.com")
