"""The core's client set through Python (issue 52 step 1): every operation of the core's
``SubscriberArchive``, ``AppLog`` and ``CustomerDirectory`` clients, and nothing else, on
the native classes and the Python wrappers; the old ``*_with_retry`` names still work and
warn."""

from __future__ import annotations

import pytest

from attrflow import (
    Client,
    InvalidInputError,
    RecordNotFoundError,
    _native,
)
from attrflow.flows.app_log import AppLog, LogEntry
from attrflow.flows.chunked_subscriber import (
    IdempotencyWindow,
    NewSubscriber,
    Subscriber,
    SubscriberArchive,
)
from attrflow.flows.customer_directory import CustomerDirectory, CustomerProfile

CHUNKED = {
    "start", "page", "trim", "set_retention", "tail", "read_from", "follow",
    "make_verifiable", "tree_head", "checkpoint", "inclusion_proof", "consistency_proof",
}  # fmt: skip
NATIVE_METHODS = {
    _native.SubscriberArchive: CHUNKED
    | {
        "register",
        "register_batch",
        "register_once",
        "change_chunk_size",
        "set_idempotency_window",
    },
    _native.AppLog: CHUNKED | {"append", "append_batch", "append_once"},
    _native.CustomerDirectory: {"start", "upsert", "get", "delete"},
    _native.FollowCursor: {"after", "run_id", "limit", "next"},
}


def public_names(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_the_native_clients_export_exactly_the_core_clients_operations() -> None:
    for cls, methods in NATIVE_METHODS.items():
        assert public_names(cls) == methods, cls.__name__


def test_the_python_clients_wrap_every_native_operation() -> None:
    for wrapper, native in [
        (SubscriberArchive, _native.SubscriberArchive),
        (AppLog, _native.AppLog),
        (CustomerDirectory, _native.CustomerDirectory),
    ]:
        missing = public_names(native) - public_names(wrapper)
        assert not missing, (wrapper.__name__, missing)


def test_an_archive_registers_one_a_batch_and_once(client: Client) -> None:
    archive = SubscriberArchive(client, "archive")
    archive.start()
    assert archive.register("s-1", "s-1@example.com") == Subscriber(1, "s-1", "s-1@example.com")
    batch = archive.register_batch(
        [NewSubscriber("s-2", "a@example.com"), NewSubscriber("s-3", "b@example.com")]
    )
    assert [s.sequence for s in batch] == [2, 3]
    keyed = [NewSubscriber("s-4", "c@example.com")]
    assert archive.register_batch(keyed, "batch-1") == archive.register_batch(keyed, "batch-1")
    first = archive.register_once("key-1", "s-5", "d@example.com")
    assert (
        archive.register_once("key-1", "s-5", "d@example.com")
        == first
        == Subscriber(5, "s-5", "d@example.com")
    )
    with pytest.raises(InvalidInputError):
        archive.register_once("key-1", "s-other", "e@example.com")
    with pytest.raises(InvalidInputError):
        archive.register("", "x@example.com")
    with pytest.raises(InvalidInputError):
        archive.register_batch([])
    assert archive.read_from(1, 100).next_sequence == 6  # nothing stored by the refusals


def test_an_archive_changes_its_chunk_size_and_idempotency_window(client: Client) -> None:
    archive = SubscriberArchive(client, "archive")
    archive.start()
    change = archive.change_chunk_size(3)
    assert (change.chunk_size, change.from_sequence) == (3, 1)
    archive.register_batch([NewSubscriber(f"s-{n}", f"s-{n}@example.com") for n in range(7)])
    assert archive.page().page_token == "current"
    assert [s.sequence for s in archive.page().subscribers] == [7]
    window = IdempotencyWindow(max_keys=5, max_age_ms=60_000)
    assert archive.set_idempotency_window(window) == window
    with pytest.raises(InvalidInputError):
        archive.change_chunk_size(0)
    with pytest.raises(InvalidInputError):
        archive.set_idempotency_window(IdempotencyWindow(max_keys=0, max_age_ms=1))


def test_an_app_log_appends_one_a_batch_and_once(client: Client) -> None:
    logs = AppLog(client, "my-app")
    logs.start()
    assert logs.append("audit", {"n": 1}) == LogEntry(1, {"n": 1})
    entries = logs.append_batch("audit", [{"n": 2}, "three", [4]])
    assert [(e.sequence, e.record) for e in entries] == [(2, {"n": 2}), (3, "three"), (4, [4])]
    assert logs.append_batch("audit", [5], "b-1") == logs.append_batch("audit", [5], "b-1")
    once = logs.append_once("audit", "k-1", {"n": 6})
    assert logs.append_once("audit", "k-1", {"n": 6}) == once == LogEntry(6, {"n": 6})
    with pytest.raises(InvalidInputError):
        logs.append_once("audit", "k-1", {"n": "other"})
    with pytest.raises(InvalidInputError):
        logs.append_batch("audit", [None])
    with pytest.raises(InvalidInputError):
        logs.append("bad/name", 1)
    assert logs.read_from("audit", 1, 100).next_sequence == 7


def test_a_directory_upserts_gets_and_deletes(client: Client) -> None:
    directory = CustomerDirectory(client, "directory")
    directory.start()
    profile = CustomerProfile("Ada@Example.com", "Ada", "Lovelace", "gold")
    saved = directory.upsert(profile)
    assert saved.email_address == "ada@example.com"
    assert directory.get("ada@example.com") == saved
    assert directory.delete("ADA@example.com") == saved
    with pytest.raises(RecordNotFoundError):
        directory.get("ada@example.com")


def test_the_old_retrying_names_still_work_and_warn(client: Client) -> None:
    logs = AppLog(client, "my-app")
    logs.start()
    with pytest.deprecated_call():
        assert logs.append_with_retry("audit", {"n": 1}).sequence == 1
    directory = CustomerDirectory(client, "directory")
    directory.start()
    with pytest.deprecated_call():
        saved = directory.upsert_with_retry(CustomerProfile("a@example.com", "A", "B", "c"))
    assert directory.get("a@example.com") == saved
