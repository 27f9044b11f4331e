"""Batch and idempotent app-log appends from Python (``AppendLogRecords``,
``AppendLogRecordOnce``): the subscriber archive's rules, per named log."""

from __future__ import annotations

import pytest

from attrflow import Client, InvalidInputError
from attrflow.flows.app_log import (
    AppendLogRecordOnceInput,
    AppendLogRecordsInput,
    ChunkedLogFlow,
    GetLogPageInput,
    LogEntry,
)

FLOW = "my-app"


@pytest.fixture
def log_flow(client: Client) -> ChunkedLogFlow:
    flow = ChunkedLogFlow()
    client.start_flow(flow, FLOW)
    return flow


def batch(
    client: Client, flow: ChunkedLogFlow, log: str, records: list[object], key: str = ""
) -> list[LogEntry]:
    options = flow.idempotent_append_options(log) if key else flow.append_options(log)
    appended = client.invoke_rpc(
        flow.append_log_records, FLOW, AppendLogRecordsInput(log, records, key), options=options
    )
    return appended.entries


def once(client: Client, flow: ChunkedLogFlow, log: str, key: str, record: object) -> LogEntry:
    return client.invoke_rpc(
        flow.append_log_record_once,
        FLOW,
        AppendLogRecordOnceInput(log, key, record),
        options=flow.idempotent_append_options(log),
    )


def all_sequences(client: Client, flow: ChunkedLogFlow, log: str) -> list[int]:
    sequences: list[int] = []
    token = "current"
    while token:
        page = client.invoke_rpc(
            flow.get_log_page,
            FLOW,
            GetLogPageInput(log, token),
            options=flow.page_options(log, token),
        )
        sequences += [entry.sequence for entry in page.entries]
        token = page.next_page_token
    return sequences


def test_a_batch_crossing_two_boundaries_pages_back_whole(
    client: Client, log_flow: ChunkedLogFlow
) -> None:
    entries = batch(client, log_flow, "chat", [{"n": n} for n in range(1, 216)])
    assert [e.sequence for e in entries] == list(range(1, 216))
    assert entries[0] == LogEntry(1, {"n": 1})
    assert all_sequences(client, log_flow, "chat") == list(range(215, 0, -1))


def test_keyed_appends_retried_return_the_first_entries(
    client: Client, log_flow: ChunkedLogFlow
) -> None:
    first = once(client, log_flow, "audit", "login-1", {"user": "ada"})
    assert once(client, log_flow, "audit", "login-1", {"user": "ada"}) == first
    imported = batch(client, log_flow, "audit", [1, 2, 3], key="import-1")
    assert batch(client, log_flow, "audit", [1, 2, 3], key="import-1") == imported
    assert all_sequences(client, log_flow, "audit") == [4, 3, 2, 1]
    assert once(client, log_flow, "chat", "login-1", {"user": "ada"}).sequence == 1
    with pytest.raises(InvalidInputError, match="login-1"):
        once(client, log_flow, "audit", "login-1", {"user": "bob"})


def test_bad_batches_and_keys_raise_invalid_input(client: Client, log_flow: ChunkedLogFlow) -> None:
    with pytest.raises(InvalidInputError, match="at most 1000 records, got 1001"):
        batch(client, log_flow, "audit", list(range(1001)))
    with pytest.raises(InvalidInputError, match=r"records\[1\]: record is required"):
        batch(client, log_flow, "audit", [1, None])
    with pytest.raises(InvalidInputError, match="idempotency key"):
        once(client, log_flow, "audit", "has space", 1)
    assert all_sequences(client, log_flow, "audit") == []
