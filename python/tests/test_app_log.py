"""The app log (``ChunkedLogFlow``) from Python: named logs of JSON records, paged newest
first, with the core's token rules and typed errors."""

from __future__ import annotations

import pytest

from attrflow import (
    Client,
    InvalidInputError,
    InvalidPageTokenError,
    PageNotFoundError,
    ValueMappingError,
)
from attrflow.flows.app_log import (
    AppendLogRecordInput,
    AppLog,
    ChunkedLogFlow,
    GetLogPageInput,
    LogEntry,
    LogPage,
)

FLOW = "my-app"


def append(client: Client, flow: ChunkedLogFlow, log: str, record: object) -> LogEntry:
    return client.invoke_rpc(
        flow.append_log_record,
        FLOW,
        AppendLogRecordInput(log, record),
        options=flow.append_options(log),
    )


def page(client: Client, flow: ChunkedLogFlow, log: str, token: str) -> LogPage:
    return client.invoke_rpc(
        flow.get_log_page,
        FLOW,
        GetLogPageInput(log, token),
        options=flow.page_options(log, token),
    )


@pytest.fixture
def log_flow(client: Client) -> ChunkedLogFlow:
    flow = ChunkedLogFlow()
    client.start_flow(flow, FLOW)
    return flow


def test_records_page_back_newest_first_across_chunks(
    client: Client, log_flow: ChunkedLogFlow
) -> None:
    for n in range(1, 131):
        assert append(client, log_flow, "chat", {"n": n}).sequence == n
    append(client, log_flow, "audit", ["login", "ada"])

    newest = page(client, log_flow, "chat", "")
    assert newest.page_token == "current"
    assert [e.sequence for e in newest.entries] == list(range(130, 100, -1))
    assert newest.entries[0].record == {"n": 130}
    assert newest.next_page_token == "00000000000000000001"
    oldest = page(client, log_flow, "chat", newest.next_page_token)
    assert [e.record["n"] for e in oldest.entries] == list(range(100, 0, -1))
    assert oldest.next_page_token == ""
    assert page(client, log_flow, "audit", "current").entries == [LogEntry(1, ["login", "ada"])]


def test_bad_tokens_names_and_records_raise_typed_errors(
    client: Client, log_flow: ChunkedLogFlow
) -> None:
    with pytest.raises(InvalidPageTokenError, match='invalid page token "7"'):
        log_flow.page_options("chat", "7")
    with pytest.raises(PageNotFoundError, match='log "chat" page "00000000000000000101"'):
        page(client, log_flow, "chat", "00000000000000000101")
    with pytest.raises(InvalidInputError, match="log name"):
        log_flow.append_options("a/b")
    with pytest.raises(InvalidInputError, match="record is required"):
        append(client, log_flow, "chat", None)
    assert page(client, log_flow, "chat", "current").entries == []


def test_integers_are_stored_exactly_or_refused(client: Client, log_flow: ChunkedLogFlow) -> None:
    """Integers outside the 64-bit range would come back as floats: they are refused with
    an error naming where they are, and integers inside it come back unchanged."""
    for n, big in enumerate([2**64, -(2**63) - 1, 10**30], start=1):
        with pytest.raises(InvalidInputError, match=rf"integer {big} at \$\.record\.items\[1\]"):
            append(client, log_flow, "numbers", {"items": [n, big]})
    exact = [2**64 - 1, -(2**63), 0, 1.5]
    assert append(client, log_flow, "numbers", exact).sequence == 1
    stored = page(client, log_flow, "numbers", "current").entries[0].record
    assert stored == exact
    assert [type(v) for v in stored] == [int, int, int, float]


def test_the_typed_client_stores_records_exactly_or_refuses_them_naming_where(
    client: Client,
) -> None:
    """``AppLog.append_with_retry`` takes the same care as the RPC: an integer outside the
    64-bit range is refused (before, it was stored as a float), and a value with no JSON
    form is a ``ValueMappingError`` naming its place (before, a bare ``TypeError`` or
    ``ValueError`` from ``json.dumps``); nothing is stored for either."""
    logs = AppLog(client, "typed")
    logs.start()
    with pytest.raises(InvalidInputError, match=r"integer 1180591620717411303424 at \$\.n"):
        logs.append_with_retry("numbers", {"n": 2**70})
    refused = [
        ({"tags": [1, {1, 2}]}, r"\['tags'\]\[1\]: a set has no JSON form"),
        ([1.0, float("nan")], r"\[1\]: a float has no JSON form"),
        ({"raw": b"x"}, r"\['raw'\]: a bytes has no JSON form"),
    ]
    for record, where in refused:
        with pytest.raises(ValueMappingError, match=where):
            logs.append_with_retry("numbers", record)
    assert logs.page("numbers").entries == []
    assert logs.append_with_retry("numbers", {"n": 2**64 - 1}).sequence == 1
    assert logs.page("numbers").entries[0].record == {"n": 2**64 - 1}
