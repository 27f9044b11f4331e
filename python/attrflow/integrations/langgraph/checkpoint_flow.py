"""``LangGraphCheckpointFlow``: the Python-defined flow a store's LangGraph checkpoints live in.

Its AttributeMaps hold, per thread (instance keys begin with the thread's key):

- ``lg_threads``: the thread's state, its index epoch and the next message item number;
- ``lg_checkpoints``: one record a checkpoint (the checkpoint without its channel values,
  its metadata, and the item ranges of its list channels), by ``thread|ns|checkpoint_id``;
- ``lg_values``: each channel value once, by ``thread|ns|channel|version``;
- ``lg_items``: the items of list channels (``add_messages`` lists), one instance an item,
  numbered per thread; a list value is a few ranges of item numbers, so a list that grows
  by one message a step costs one new item a step, not a new copy of the list;
- ``lg_writes``: a checkpoint's pending writes, by ``thread|ns|checkpoint_id``.

Each call commits all of its writes or none (the core's atomic RPC).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from attrflow.attribute import AttributeMap
from attrflow.context import Context
from attrflow.flow import Flow, RPCResult
from attrflow.rpc import rpc
from attrflow.schema import PersistenceSchema, StepList

__all__ = [
    "CheckpointRecord",
    "DeleteInput",
    "LangGraphCheckpointFlow",
    "LoadInput",
    "Loaded",
    "NewItems",
    "PutInput",
    "PutOutput",
    "StoredBlob",
    "StoredValue",
    "StoredWrite",
    "ThreadState",
    "Writes",
    "merge_ranges",
]


@dataclass
class StoredBlob:
    """A value serialised by the saver's serde: its type tag and its bytes in base64."""

    type: str
    data: str


@dataclass
class StoredValue:
    """A channel value: a blob, or (a list channel) ranges of item numbers, inclusive."""

    blob: Optional[StoredBlob] = None  # noqa: UP045 - Python 3.9
    ranges: Optional[list[list[int]]] = None  # noqa: UP045 - Python 3.9


@dataclass
class CheckpointRecord:
    """One checkpoint, without its channel values."""

    checkpoint_id: str
    parent_checkpoint_id: str
    checkpoint: StoredBlob
    metadata: StoredBlob
    run_id: str = ""
    lists: dict[str, list[list[int]]] = field(default_factory=dict)


@dataclass
class StoredWrite:
    """One pending write."""

    task_id: str
    idx: int
    channel: str
    value: StoredBlob
    task_path: str = ""


@dataclass
class Writes:
    """A checkpoint's pending writes."""

    writes: list[StoredWrite] = field(default_factory=list)


@dataclass
class ThreadState:
    """A thread's epoch (its index log's suffix, moved on by ``delete_thread``) and the
    number its next list item gets."""

    epoch: int = 0
    next_item: int = 1


@dataclass
class NewItems:
    """List items a put appends: stored under the next numbers, the value at ``value_key``
    then being ``base`` plus their range."""

    value_key: str
    channel: str
    base: list[list[int]]
    items: list[StoredBlob]


@dataclass
class PutInput:
    """One checkpoint and its new values, written together."""

    thread_key: str
    epoch: int
    record_key: str
    record: CheckpointRecord
    values: dict[str, StoredValue]
    new_items: list[NewItems]


@dataclass
class PutOutput:
    """The thread's epoch and the ranges each list channel's value got."""

    epoch: int
    lists: dict[str, list[list[int]]]


@dataclass
class WritesInput:
    """Pending writes merged into a checkpoint's: ``replace`` overwrites same (task, idx)."""

    writes_key: str
    writes: list[StoredWrite]
    replace: bool


@dataclass
class LoadInput:
    """Instances to read (the call's loads name the same)."""

    threads: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)


@dataclass
class Loaded:
    """What a load found, by instance key (absent instances left out)."""

    threads: dict[str, ThreadState] = field(default_factory=dict)
    records: dict[str, CheckpointRecord] = field(default_factory=dict)
    values: dict[str, StoredValue] = field(default_factory=dict)
    items: dict[str, StoredBlob] = field(default_factory=dict)
    writes: dict[str, Writes] = field(default_factory=dict)


@dataclass
class DeleteInput:
    """Instances to delete, and threads whose epoch moves on (their state reset)."""

    records: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reset_threads: list[str] = field(default_factory=list)


def merge_ranges(ranges: list[list[int]]) -> list[list[int]]:
    """``ranges`` with each range that starts right after the one before joined to it.

    >>> merge_ranges([[1, 4], [5, 5], [9, 9]])
    [[1, 5], [9, 9]]
    """
    merged: list[list[int]] = []
    for first, last in ranges:
        if last < first:
            continue
        if merged and merged[-1][1] + 1 == first:
            merged[-1][1] = last
        else:
            merged.append([first, last])
    return merged


class LangGraphCheckpointFlow(Flow[None]):
    """The flow holding a store's LangGraph threads (see the module's notes)."""

    flow_type = "LangGraphCheckpoints"

    threads = AttributeMap("lg_threads", ThreadState)
    records = AttributeMap("lg_checkpoints", CheckpointRecord)
    values = AttributeMap("lg_values", StoredValue)
    items = AttributeMap("lg_items", StoredBlob)
    writes = AttributeMap("lg_writes", Writes)

    def get_persistence_schema(self) -> PersistenceSchema:
        """The five maps."""
        return PersistenceSchema.of(self.threads, self.records, self.values, self.items, self.writes)

    def get_steps(self) -> StepList[None]:
        """None: an RPC-only flow."""
        return StepList.empty()

    @rpc(name="PutCheckpoint")
    def put_checkpoint(self, context: Context, put: PutInput) -> RPCResult[PutOutput]:
        """Stores a checkpoint, its new values and list items; call it with the thread's
        state locked and loaded. A thread whose epoch moved on since the caller read it
        raises ``ValueError`` (its item ranges may be gone), so nothing is stored."""
        try:
            state = self.threads.get(context, put.thread_key)
        except KeyError:
            state = ThreadState()
        if state.epoch != put.epoch:
            raise ValueError(f"thread epoch moved on from {put.epoch} to {state.epoch}")
        lists = dict(put.record.lists)
        for new in put.new_items:
            first = state.next_item
            for offset, item in enumerate(new.items):
                self.items.set(context, f"{put.thread_key}|{first + offset}", item)
            state.next_item = first + len(new.items)
            ranges = merge_ranges([*new.base, [first, state.next_item - 1]])
            self.values.set(context, new.value_key, StoredValue(ranges=ranges))
            lists[new.channel] = ranges
        for key, value in put.values.items():
            self.values.set(context, key, value)
        put.record.lists = lists
        self.records.set(context, put.record_key, put.record)
        self.threads.set(context, put.thread_key, state)
        return RPCResult(PutOutput(state.epoch, lists))

    @rpc(name="PutWrites")
    def put_writes(self, context: Context, put: WritesInput) -> RPCResult[None]:
        """Merges pending writes into a checkpoint's; call it with that instance locked and
        loaded. A write of a (task, idx) already held is kept unless ``replace``."""
        try:
            held = self.writes.get(context, put.writes_key)
        except KeyError:
            held = Writes()
        index = {(w.task_id, w.idx): n for n, w in enumerate(held.writes)}
        for write in put.writes:
            at = index.get((write.task_id, write.idx))
            if at is None:
                index[(write.task_id, write.idx)] = len(held.writes)
                held.writes.append(write)
            elif put.replace:
                held.writes[at] = write
        self.writes.set(context, put.writes_key, held)
        return RPCResult(None)

    @rpc(name="ThreadKeys", is_read_only=True, load_attribute_maps=(threads,))
    def thread_keys(self, context: Context) -> RPCResult[list[str]]:
        """Every thread's key (the threads map is loaded whole)."""
        return RPCResult(list(self.threads.get_all_instance_keys(context)))

    @rpc(name="Load", is_read_only=True)
    def load(self, context: Context, load: LoadInput) -> RPCResult[Loaded]:
        """Returns the instances named that hold a value; call it with them loaded."""
        found = Loaded()
        for keys, attribute_map, into in (
            (load.threads, self.threads, found.threads),
            (load.records, self.records, found.records),
            (load.values, self.values, found.values),
            (load.items, self.items, found.items),
            (load.writes, self.writes, found.writes),
        ):
            for key in keys:
                try:
                    into[key] = attribute_map.get(context, key)  # type: ignore[index]
                except KeyError:
                    continue
        return RPCResult(found)

    @rpc(name="Delete")
    def delete(self, context: Context, delete: DeleteInput) -> RPCResult[None]:
        """Deletes the instances named; each thread in ``reset_threads`` gets the next epoch
        (call it with those threads' states locked and loaded)."""
        for keys, attribute_map in (
            (delete.records, self.records),
            (delete.values, self.values),
            (delete.items, self.items),
            (delete.writes, self.writes),
        ):
            for key in keys:
                attribute_map.delete(context, key)  # type: ignore[attr-defined]
        for key in delete.reset_threads:
            try:
                epoch = self.threads.get(context, key).epoch
            except KeyError:
                epoch = 0
            self.threads.set(context, key, ThreadState(epoch=epoch + 1))
        return RPCResult(None)
