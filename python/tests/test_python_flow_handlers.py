"""Handlers written in Python read and write through the core's snapshot: staged writes
are read back and committed together, a loaded but absent instance is a KeyError, one not
loaded is AttributeMapNotLoadedError, and a handler that raises (even a BaseException)
stores nothing, releases its locks and reaches the caller as WorkerInvocationError."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import pytest

from attrflow import (
    Attribute,
    AttributeMap,
    AttributeMapNotLoadedError,
    Client,
    Context,
    Flow,
    InvalidInputError,
    PersistenceSchema,
    RPCInvokeOptions,
    RPCResult,
    StartFlowOptions,
    WorkerInvocationError,
    rpc,
)

FLOW_ID = "ledger-1"


@dataclass
class Entry:
    amount: int
    note: Optional[str]  # noqa: UP045 - the codec resolves hints on Python 3.9 too
    tags: list[str]


class Stop(BaseException):
    """Not an Exception: the kind of error that unwinds through everything."""


kept_contexts: list[Context] = []


class LedgerFlow(Flow):
    total = Attribute("total", int)
    entries = AttributeMap("entries", Entry)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.total, self.entries)

    @rpc(
        name="Add",
        lock_attributes=(total.lock(), entries.lock("a")),
        load_attribute_map_instances=(entries.load("a"),),
    )
    def add(self, context: Context, entry: Entry) -> RPCResult[int]:
        with pytest.raises(KeyError):
            self.entries.get(context, "a")
        self.entries.set(context, "a", entry)
        assert self.entries.get(context, "a") == entry
        value = self.total.get(context) + entry.amount
        self.total.set(context, value)
        self.entries.set(context, "archived", entry)
        self.entries.delete(context, "archived")
        with pytest.raises(KeyError):
            self.entries.get(context, "archived")
        return RPCResult(value)

    @rpc(name="Read")
    def read(self, context: Context, instance: str) -> RPCResult[Entry]:
        return RPCResult(self.entries.get(context, instance))

    @rpc(name="Fail", lock_attributes=(total.lock(),))
    def fail(self, context: Context, kind: str) -> RPCResult[None]:
        self.total.set(context, -1)
        if kind == "base":
            raise Stop("stopped on purpose")
        if kind == "interrupt":
            raise KeyboardInterrupt
        raise RuntimeError("failed on purpose")

    @rpc(name="Keep")
    def keep(self, context: Context) -> RPCResult[str]:
        kept_contexts.append(context)
        return RPCResult(context.flow_id)

    @rpc(name="Echo")
    def echo(self, context: Context, value: Any) -> RPCResult[Any]:
        return RPCResult({"written": value, "after": 1})

    @rpc(name="Huge")
    def huge(self, context: Context) -> RPCResult[Any]:
        return RPCResult({"count": [1.5, 2**64]})

    @rpc(name="Wrong")  # type: ignore[arg-type]
    def wrong(self, context: Context) -> int:
        return 3


def read_entry(client: Client, flow: LedgerFlow, instance: str) -> Entry:
    return client.invoke_rpc(
        flow.read,
        FLOW_ID,
        instance,
        options=RPCInvokeOptions(load_attribute_map_instances=(flow.entries.load(instance),)),
    )


@pytest.fixture
def ledger(client: Client) -> LedgerFlow:
    flow = LedgerFlow()
    client.start_flow(flow, FLOW_ID, None, StartFlowOptions().with_attribute(flow.total, 10))
    return flow


def test_writes_are_staged_read_back_and_committed_together(client: Client, ledger: LedgerFlow):
    entry = Entry(5, None, ["x", "y"])
    assert client.invoke_rpc(ledger.add, FLOW_ID, entry) == 15
    assert read_entry(client, ledger, "a") == entry
    with pytest.raises(WorkerInvocationError) as absent:
        read_entry(client, ledger, "archived")
    assert absent.value.worker_error_type == "KeyError"
    assert "entries/archived" in absent.value.worker_error_detail


def test_reading_an_instance_not_loaded_names_it(client: Client, ledger: LedgerFlow):
    with pytest.raises(WorkerInvocationError) as raised:
        client.invoke_rpc(ledger.read, FLOW_ID, "a")
    assert raised.value.worker_error_type == AttributeMapNotLoadedError.__name__
    assert str(raised.value) == "AttributeMap instance was not loaded for RPC: entries/a"


@pytest.mark.parametrize(("kind", "error_type"), [("exception", "RuntimeError"), ("base", "Stop")])
def test_a_failing_handler_stores_nothing_and_releases_its_locks(
    client: Client, ledger: LedgerFlow, kind: str, error_type: str
):
    for _ in range(2):  # the second call would be a lock conflict if the first kept its lock
        with pytest.raises(WorkerInvocationError) as raised:
            client.invoke_rpc(ledger.fail, FLOW_ID, kind)
        assert raised.value.worker_error_type == error_type
    assert raised.value.worker_error_detail.endswith("on purpose")
    assert client.invoke_rpc(ledger.add, FLOW_ID, Entry(1, "n", [])) == 11


def test_an_exception_raised_without_a_message_is_named_by_its_type(
    client: Client, ledger: LedgerFlow
):
    with pytest.raises(WorkerInvocationError) as raised:
        client.invoke_rpc(ledger.fail, FLOW_ID, "interrupt")
    assert raised.value.worker_error_type == "KeyboardInterrupt"
    assert raised.value.worker_error_detail == "KeyboardInterrupt (raised without a message)"
    assert str(raised.value).endswith("KeyboardInterrupt (raised without a message)")


def test_a_context_kept_after_its_call_is_closed(client: Client, ledger: LedgerFlow):
    kept_contexts.clear()
    assert client.invoke_rpc(ledger.keep, FLOW_ID) == FLOW_ID
    (context,) = kept_contexts
    with pytest.raises(InvalidInputError, match="used after its handler returned"):
        LedgerFlow.total.get(context)


def test_a_handler_must_return_an_rpc_result(client: Client, ledger: LedgerFlow):
    with pytest.raises(WorkerInvocationError, match="must return RPCResult") as raised:
        client.invoke_rpc(ledger.wrong, FLOW_ID)
    assert raised.value.worker_error_type == "TypeError"


def test_stored_values_use_camel_case_json(client: Client, ledger: LedgerFlow):
    @dataclass
    class Note:
        note_text: str

    class NoteFlow(Flow):
        notes = AttributeMap("notes", Note)

        @rpc(name="Put")
        def put(self, context: Context, text: str) -> RPCResult[None]:
            self.notes.set(context, "n", Note(text))
            return RPCResult(None)

        @rpc(name="Raw", load_attribute_map_instances=(notes.load("n"),))
        def raw(self, context: Context) -> RPCResult[str]:
            text = context.native.map_instance("notes", "n")
            assert text is not None
            return RPCResult(text)

    flow = NoteFlow()
    client.start_flow(flow, "notes-1")
    assert client.invoke_rpc(flow.put, "notes-1", "hello") is None
    assert client.invoke_rpc(flow.raw, "notes-1") == '{"noteText":"hello"}'


def test_an_output_comes_back_as_the_handler_wrote_it_with_no_inexact_integer(
    client: Client, ledger: LedgerFlow
):
    value = {"z": [1.5, -(2**63), 2**64 - 1], "a": {"nested": None, "text": "é\u2028"}}
    echoed = client.invoke_rpc(ledger.echo, FLOW_ID, value)
    assert echoed == {"written": value, "after": 1}
    assert list(echoed) == ["written", "after"]  # the order the handler wrote

    with pytest.raises(WorkerInvocationError) as raised:
        client.invoke_rpc(ledger.huge, FLOW_ID)
    assert "the output of a Python handler holds the integer 18446744073709551616" in str(
        raised.value
    )
    assert "at $.count[1]" in str(raised.value)
