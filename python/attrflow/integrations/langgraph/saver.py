"""``AttrflowSaver`` and ``AsyncAttrflowSaver``: LangGraph checkpointers on attrflow.

Channel values are stored by version, once. A list value (the ``add_messages`` channel)
is stored as entries appended to a chunked message log when its previous value is a
prefix of it, so a thread whose message list grows one message a step costs storage
linear in its messages. Each ``put`` commits in one transaction (batches over the RPC
input limit are committed in order, the checkpoint last, so a crash leaves the previous
checkpoint the latest). docs/agents.md tells the design and what a crash leaves.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import functools
import hashlib
import json
import random
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Callable, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from attrflow.client import Client
from attrflow.errors import InvalidInputError
from attrflow.integrations.langgraph._flow import (
    INDEX_CHUNK,
    LangGraphCheckpointFlow,
    StagedWrite,
    WriteBatch,
)
from attrflow.options import StartFlowOptions

__all__ = ["DEFAULT_FLOW_ID", "MAX_VALUE_BYTES", "AsyncAttrflowSaver", "AttrflowSaver"]

DEFAULT_FLOW_ID = "langgraph"
"""The flow holding the checkpoints unless another is named."""
MAX_VALUE_BYTES = 700 * 1024
"""The largest serialized channel value, pending write or checkpoint accepted (its stored
JSON form, base64, stays under attrflow's 1 MiB value limit)."""
_SEEN_LOGS = 64
"""Message logs whose last stored list a saver remembers (the newest), to serialize only
the new messages of the next ``put``."""
LOG_CHUNK_BYTES = 256 * 1024
"""A message log chunk is closed once its entries reach this many serialized bytes."""
_BATCH_BYTES = 900 * 1024


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def _chain(digest: str, entry: builtins.list[str]) -> str:
    return hashlib.sha256((digest + entry[0] + entry[1]).encode()).hexdigest()


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _serialized(method: _Method) -> _Method:
    """Runs ``method`` under the saver's lock. A write reads the thread's state and index
    and writes them back, and LangGraph runs a step's ``put`` and its tasks' ``put_writes``
    on background threads at once: unserialized, the later commit would overwrite the
    other's (a ``put_writes`` creating a fresh thread's state erased its first ``put``'s
    index entry). LangGraph's SqliteSaver serializes its calls the same way."""

    @functools.wraps(method)
    def locked(self: AttrflowSaver, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked  # type: ignore[return-value]


class AttrflowSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer keeping threads in the attrflow store of ``client``.

    ``AttrflowSaver.from_store("data/attrflow.db")`` (or a ``postgresql://`` URL) opens a
    store and closes it on exit. The async methods run the same calls on a worker thread.
    The writing calls of one saver are serialized; use one saver per process for a thread.
    """

    def __init__(
        self,
        client: Client,
        *,
        flow_id: str = DEFAULT_FLOW_ID,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.client = client
        self.flow_id = flow_id
        self.flow = LangGraphCheckpointFlow()
        self._lock = threading.RLock()
        self._seen: dict[str, tuple[builtins.list[Any], builtins.list[Any], str]] = {}
        client.start_flow(self.flow, flow_id, options=StartFlowOptions(ignore_already_started=True))

    @classmethod
    @contextmanager
    def from_store(
        cls, store: str, *, flow_id: str = DEFAULT_FLOW_ID, serde: SerializerProtocol | None = None
    ) -> Iterator[AttrflowSaver]:
        """A saver over a store opened for the ``with`` block."""
        with Client(store) as client:
            yield cls(client, flow_id=flow_id, serde=serde)

    # ---- reading ----

    def _get(self, name: str, key: str) -> Any:
        return self.client.get_attribute(self.flow_id, self.flow.maps()[name], key)

    def _dump(self, value: Any, what: str) -> builtins.list[str]:
        try:
            kind, data = self.serde.dumps_typed(value)
        except Exception as error:
            raise InvalidInputError(f"{what} cannot be serialized: {error}") from error
        if len(data) > MAX_VALUE_BYTES:
            raise InvalidInputError(
                f"{what} is {len(data)} bytes serialized; the limit is {MAX_VALUE_BYTES}"
            )
        return [kind, base64.b64encode(data).decode("ascii")]

    def _load(self, stored: builtins.list[str]) -> Any:
        return self.serde.loads_typed((stored[0], base64.b64decode(stored[1])))

    def _thread(self, thread_id: str) -> tuple[str, dict[str, Any] | None]:
        key = _digest(thread_id)
        return key, self._get("lg_threads", key)

    def _index_entries_newest_first(self, tk: str, count: int) -> Iterator[builtins.list[str]]:
        chunk = (count - 1) // INDEX_CHUNK
        while chunk >= 0:
            entries = self._get("lg_index", f"{tk}.{chunk}") or []
            yield from reversed(entries)
            chunk -= 1

    def _log_entries(self, log: str, length: int) -> builtins.list[builtins.list[str]]:
        state = self._get("lg_logs", log) or {"starts": []}
        entries: builtins.list[builtins.list[str]] = []
        for number, start in enumerate(state["starts"]):
            if start >= length:
                break
            entries.extend(self._get("lg_log_chunks", f"{log}.{number}") or [])
        return entries[:length]

    def _load_entries(self, entries: builtins.list[builtins.list[str]]) -> builtins.list[Any]:
        """The values of a message log's ``entries``. When all are msgpack (the default
        serializer's form), they are joined into one msgpack array and loaded in one call,
        as a saver storing the whole list would: the same values, without a call a message."""
        if len(entries) > 1 and all(kind == "msgpack" for kind, _ in entries):
            parts = [base64.b64decode(data) for _, data in entries]
            header = b"\xdd" + len(parts).to_bytes(4, "big")
            loaded = self.serde.loads_typed(("msgpack", header + b"".join(parts)))
            if isinstance(loaded, builtins.list) and len(loaded) == len(entries):
                return loaded
        return [self._load(entry) for entry in entries]

    def _channel_values(self, tk: str, ns: str, versions: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for channel, version in versions.items():
            blob = self._get("lg_blobs", f"{tk}.{_digest(ns, channel, str(version))}")
            if blob is None or blob.get("t") == "empty":
                continue
            if "log" in blob:
                values[channel] = self._load_entries(self._log_entries(blob["log"], blob["n"]))
            else:
                values[channel] = self._load([blob["t"], blob["b"]])
        return values

    def _tuple(self, thread_id: str, tk: str, record: dict[str, Any]) -> CheckpointTuple:
        ns, checkpoint_id = record["ns"], record["id"]
        checkpoint = self._load(record["cp"])
        checkpoint["channel_values"] = self._channel_values(tk, ns, checkpoint["channel_versions"])
        stored = self._get("lg_writes", f"{tk}.{_digest(ns, checkpoint_id)}") or {"w": []}
        writes = sorted(stored["w"], key=lambda w: (w[0], w[1]))
        parent = record.get("parent")
        return CheckpointTuple(
            config={
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint_id,
                }
            },
            checkpoint=checkpoint,
            metadata=self._load(record["md"]),
            parent_config=(
                {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": ns,
                        "checkpoint_id": parent,
                    }
                }
                if parent
                else None
            ),
            pending_writes=[(w[0], w[2], self._load([w[3], w[4]])) for w in writes],
        )

    def _record(self, tk: str, ns: str, checkpoint_id: str) -> dict[str, Any] | None:
        record: dict[str, Any] | None = self._get(
            "lg_checkpoints", f"{tk}.{_digest(ns, checkpoint_id)}"
        )
        return record

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the thread's latest in its namespace."""
        thread_id, ns = _thread_and_namespace(config)
        tk, state = self._thread(thread_id)
        if state is None:
            return None
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id:
            record = self._record(tk, ns, checkpoint_id)
            return None if record is None else self._tuple(thread_id, tk, record)
        latest = state.get("latest", {}).get(ns)
        if latest is None:
            return None
        record = self._record(tk, ns, latest)
        return None if record is None else self._tuple(thread_id, tk, record)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, read one index chunk at a time."""
        if config is not None:
            thread_ids: builtins.list[str] = [_thread_and_namespace(config)[0]]
            configurable = config.get("configurable", {})
            ns_filter = configurable.get("checkpoint_ns")
            id_filter = get_checkpoint_id(config)
        else:
            thread_ids = self._all_thread_ids()
            ns_filter = id_filter = None
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        for thread_id in thread_ids:
            tk, state = self._thread(thread_id)
            if state is None:
                continue
            for ns, checkpoint_id in self._index_entries_newest_first(tk, state["count"]):
                if remaining is not None and remaining <= 0:
                    return
                if ns_filter is not None and ns != ns_filter:
                    continue
                if id_filter and checkpoint_id != id_filter:
                    continue
                if before_id and checkpoint_id >= before_id:
                    continue
                record = self._record(tk, ns, checkpoint_id)
                if record is None:
                    continue
                if filter:
                    metadata = self._load(record["md"])
                    if not all(metadata.get(k) == v for k, v in filter.items()):
                        continue
                if remaining is not None:
                    remaining -= 1
                yield self._tuple(thread_id, tk, record)

    def _all_thread_ids(self) -> builtins.list[str]:
        keys: builtins.list[str] = self.client.invoke_rpc(self.flow.thread_keys, self.flow_id)
        ids = []
        for key in keys:
            state = self._get("lg_threads", key)
            if state is not None:
                ids.append(state["thread_id"])
        return ids

    # ---- writing ----

    def _commit(self, writes: builtins.list[StagedWrite]) -> None:
        """Commits ``writes`` in order: in one transaction when they fit one RPC input."""
        batch: builtins.list[StagedWrite] = []
        size = 0
        for write in writes:
            weight = len(json.dumps(write.value)) + len(write.key) + 64
            if batch and size + weight > _BATCH_BYTES:
                self.client.invoke_rpc(self.flow.apply_writes, self.flow_id, WriteBatch(batch))
                batch, size = [], 0
            batch.append(write)
            size += weight
        if batch:
            self.client.invoke_rpc(self.flow.apply_writes, self.flow_id, WriteBatch(batch))

    def _new_state(self, thread_id: str) -> dict[str, Any]:
        return {"thread_id": thread_id, "count": 0, "latest": {}, "logs": {}, "all_logs": []}

    def _store_list(
        self,
        tk: str,
        ns: str,
        channel: str,
        value: builtins.list[Any],
        state: dict[str, Any],
        writes: builtins.list[StagedWrite],
        staged_logs: dict[str, dict[str, Any]],
    ) -> dict[str, Any]:
        """Stages ``value`` as a message log reference, appending only its new entries
        when the channel's log holds a prefix of it."""
        slot = f"{ns}\x00{channel}"
        log = state["logs"].get(slot)
        log_state = None
        if log is not None:
            log_state = staged_logs.get(log) or self._get("lg_logs", log)
        entries = self._known_prefix(log, log_state, value)
        # Entries known from this saver's last put to the log are its whole prefix, checked.
        prefix_ok = bool(entries) or (log_state is not None and log_state["n"] == 0)
        entries += [
            self._dump(item, f"item {i} of channel {channel!r}")
            for i, item in enumerate(value[len(entries) :], start=len(entries))
        ]
        if not prefix_ok and log_state is not None and log_state["n"] <= len(entries):
            digest = ""
            for entry in entries[: log_state["n"]]:
                digest = _chain(digest, entry)
            prefix_ok = digest == log_state["digest"]
        if not prefix_ok or log_state is None or log is None:
            log = f"{tk}.{_digest(ns, channel, str(random.getrandbits(64)))}"
            log_state = {"n": 0, "starts": [], "digest": "", "last_bytes": 0}
            state["logs"][slot] = log
            state["all_logs"].append(log)
        new = entries[log_state["n"] :]
        if new:
            starts = log_state["starts"]
            if starts and log_state["last_bytes"] < LOG_CHUNK_BYTES:
                number = len(starts) - 1
                cached = staged_logs.get(f"chunk:{log}.{number}")
                chunk = (
                    cached["entries"]
                    if cached is not None
                    else (self._get("lg_log_chunks", f"{log}.{number}") or [])
                )
                last_bytes = log_state["last_bytes"]
            else:
                number, chunk, last_bytes = len(starts), [], 0
                starts.append(log_state["n"])
            digest = log_state["digest"]
            for entry in new:
                if last_bytes >= LOG_CHUNK_BYTES:
                    writes.append(StagedWrite("lg_log_chunks", f"{log}.{number}", chunk))
                    number, chunk, last_bytes = number + 1, [], 0
                    starts.append(log_state["n"])
                chunk = [*chunk, entry]
                last_bytes += len(entry[1])
                log_state["n"] += 1
                digest = _chain(digest, entry)
            writes.append(StagedWrite("lg_log_chunks", f"{log}.{number}", chunk))
            staged_logs[f"chunk:{log}.{number}"] = {"entries": chunk}
            log_state["digest"] = digest
            log_state["last_bytes"] = last_bytes
        staged_logs[log] = log_state
        writes.append(StagedWrite("lg_logs", log, log_state))
        self._remember(log, value, entries, log_state["digest"])
        return {"log": log, "n": len(entries)}

    def _known_prefix(
        self, log: str | None, log_state: dict[str, Any] | None, value: builtins.list[Any]
    ) -> builtins.list[builtins.list[str]]:
        """The serialized entries of ``log``'s whole stored prefix when this saver's last
        ``put`` to it stored exactly that (same digest and length) and its items are the
        very objects ``value`` starts with (``add_messages`` builds the next list from the
        same message objects), so a ``put`` serializes only the new messages. Empty when
        unknown: the caller then serializes and checks the whole list."""
        seen = self._seen.get(log) if log is not None else None
        if seen is None or log_state is None:
            return []
        items, entries, digest = seen
        if digest != log_state["digest"] or len(items) != log_state["n"] or not items:
            return []
        if len(items) > len(value) or any(a is not b for a, b in zip(items, value)):
            return []
        return builtins.list(entries)

    def _remember(
        self,
        log: str,
        value: builtins.list[Any],
        entries: builtins.list[builtins.list[str]],
        digest: str,
    ) -> None:
        self._seen.pop(log, None)
        self._seen[log] = (builtins.list(value), builtins.list(entries), digest)
        while len(self._seen) > _SEEN_LOGS:
            self._seen.pop(next(iter(self._seen)))

    def _stage_put(
        self,
        thread_id: str,
        ns: str,
        checkpoint: Checkpoint,
        metadata: dict[str, Any],
        parent: str | None,
        new_versions: ChannelVersions,
        state: dict[str, Any],
        tk: str,
        writes: builtins.list[StagedWrite],
        staged_logs: dict[str, dict[str, Any]],
    ) -> None:
        copy = dict(checkpoint)
        values: dict[str, Any] = copy.pop("channel_values", {})  # type: ignore[assignment]
        for channel, version in new_versions.items():
            key = f"{tk}.{_digest(ns, channel, str(version))}"
            if channel not in values:
                blob: dict[str, Any] = {"t": "empty"}
            elif type(values[channel]) is list and values[channel]:
                blob = self._store_list(
                    tk, ns, channel, values[channel], state, writes, staged_logs
                )
            else:
                kind, data = self._dump(values[channel], f"value of channel {channel!r}")
                blob = {"t": kind, "b": data}
            writes.append(StagedWrite("lg_blobs", key, blob))
        checkpoint_id = checkpoint["id"]
        record = {
            "ns": ns,
            "id": checkpoint_id,
            "parent": parent,
            "cp": self._dump(copy, "checkpoint"),
            "md": self._dump(metadata, "checkpoint metadata"),
            "run_id": str(metadata.get("run_id", "")),
        }
        hk = f"{tk}.{_digest(ns, checkpoint_id)}"
        existed = self._get("lg_checkpoints", hk) is not None
        writes.append(StagedWrite("lg_checkpoints", hk, record))
        if not existed:
            count = state["count"]
            chunk_key = f"{tk}.{count // INDEX_CHUNK}"
            staged_key = f"index:{chunk_key}"
            if count % INDEX_CHUNK == 0:
                chunk: builtins.list[Any] = []
            elif staged_key in staged_logs:
                chunk = staged_logs[staged_key]["entries"]
            else:
                chunk = self._get("lg_index", chunk_key) or []
            chunk = [*chunk, [ns, checkpoint_id]]
            staged_logs[staged_key] = {"entries": chunk}
            writes.append(StagedWrite("lg_index", chunk_key, chunk))
            state["count"] = count + 1
        latest = state["latest"].get(ns)
        if latest is None or checkpoint_id >= latest:
            state["latest"][ns] = checkpoint_id

    @_serialized
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Stores ``checkpoint`` and its new channel versions in one transaction."""
        thread_id, ns = _thread_and_namespace(config)
        tk, state = self._thread(thread_id)
        state = state or self._new_state(thread_id)
        writes: builtins.list[StagedWrite] = []
        self._stage_put(
            thread_id,
            ns,
            checkpoint,
            dict(get_checkpoint_metadata(config, metadata)),
            config["configurable"].get("checkpoint_id"),
            new_versions,
            state,
            tk,
            writes,
            {},
        )
        writes.append(StagedWrite("lg_threads", tk, state))
        self._commit(writes)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    @_serialized
    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Stores the pending writes of ``task_id`` on the checkpoint ``config`` names."""
        thread_id, ns = _thread_and_namespace(config)
        checkpoint_id = get_checkpoint_id(config)
        if not checkpoint_id:
            raise InvalidInputError("put_writes needs configurable.checkpoint_id")
        tk, state = self._thread(thread_id)
        dumped = [
            (self._dump(value, f"pending write to channel {channel!r}"), channel, idx)
            for idx, (channel, value) in enumerate(writes)
        ]
        key = f"{tk}.{_digest(ns, checkpoint_id)}"
        stored = self._get("lg_writes", key) or {"w": []}
        by_key = {(w[0], w[1]): w for w in stored["w"]}
        for data, channel, idx in dumped:
            inner = (task_id, WRITES_IDX_MAP.get(channel, idx))
            if inner[1] >= 0 and inner in by_key:
                continue
            by_key[inner] = [task_id, inner[1], channel, data[0], data[1], task_path]
        staged = [StagedWrite("lg_writes", key, {"w": list(by_key.values())})]
        if state is None:
            staged.append(StagedWrite("lg_threads", tk, self._new_state(thread_id)))
        self._commit(staged)

    # ---- removing ----

    def _stage_thread_removal(
        self, tk: str, state: dict[str, Any], writes: builtins.list[StagedWrite]
    ) -> None:
        for ns, checkpoint_id in self._index_entries_newest_first(tk, state["count"]):
            self._stage_checkpoint_removal(tk, ns, checkpoint_id, writes, keep_blobs=set())
        for chunk in range((state["count"] + INDEX_CHUNK - 1) // INDEX_CHUNK):
            writes.append(StagedWrite("lg_index", f"{tk}.{chunk}"))
        for log in state["all_logs"]:
            log_state = self._get("lg_logs", log) or {"starts": []}
            for number in range(len(log_state["starts"])):
                writes.append(StagedWrite("lg_log_chunks", f"{log}.{number}"))
            writes.append(StagedWrite("lg_logs", log))
        writes.append(StagedWrite("lg_threads", tk))

    def _stage_checkpoint_removal(
        self,
        tk: str,
        ns: str,
        checkpoint_id: str,
        writes: builtins.list[StagedWrite],
        keep_blobs: set[str],
    ) -> None:
        hk = f"{tk}.{_digest(ns, checkpoint_id)}"
        record = self._get("lg_checkpoints", hk)
        if record is not None:
            versions = self._load(record["cp"])["channel_versions"]
            for channel, version in versions.items():
                key = f"{tk}.{_digest(ns, channel, str(version))}"
                if key not in keep_blobs:
                    writes.append(StagedWrite("lg_blobs", key))
        writes.append(StagedWrite("lg_checkpoints", hk))
        writes.append(StagedWrite("lg_writes", hk))

    @_serialized
    def delete_thread(self, thread_id: str) -> None:
        """Deletes every stored row of the thread: checkpoints, writes, values, logs."""
        tk, state = self._thread(_check_thread_id(thread_id))
        if state is None:
            return
        writes: builtins.list[StagedWrite] = []
        self._stage_thread_removal(tk, state, writes)
        self._commit(writes)

    def _keep(
        self, thread_id: str, keep: set[tuple[str, str]] | None, drop_runs: set[str] | None
    ) -> None:
        """Rewrites the thread keeping the checkpoints ``keep`` names (or all but those of
        ``drop_runs``), deleting the rest and the values no kept checkpoint reads."""
        tk, state = self._thread(thread_id)
        if state is None:
            return
        entries = list(reversed(list(self._index_entries_newest_first(tk, state["count"]))))
        kept: builtins.list[builtins.list[str]] = []
        dropped: builtins.list[builtins.list[str]] = []
        for ns, checkpoint_id in entries:
            if keep is not None:
                (kept if (ns, checkpoint_id) in keep else dropped).append([ns, checkpoint_id])
            else:
                record = self._record(tk, ns, checkpoint_id)
                run = "" if record is None else record.get("run_id", "")
                (dropped if run in (drop_runs or set()) else kept).append([ns, checkpoint_id])
        if not dropped:
            return
        keep_blobs: set[str] = set()
        for ns, checkpoint_id in kept:
            record = self._record(tk, ns, checkpoint_id)
            if record is not None:
                for channel, version in self._load(record["cp"])["channel_versions"].items():
                    keep_blobs.add(f"{tk}.{_digest(ns, channel, str(version))}")
        writes: builtins.list[StagedWrite] = []
        if not kept:
            self._stage_thread_removal(tk, state, writes)
            self._commit(writes)
            return
        for ns, checkpoint_id in dropped:
            self._stage_checkpoint_removal(tk, ns, checkpoint_id, writes, keep_blobs)
        for chunk in range((state["count"] + INDEX_CHUNK - 1) // INDEX_CHUNK):
            part = kept[chunk * INDEX_CHUNK : (chunk + 1) * INDEX_CHUNK]
            writes.append(StagedWrite("lg_index", f"{tk}.{chunk}", part or None))
        state["count"] = len(kept)
        latest: dict[str, str] = {}
        for ns, checkpoint_id in kept:
            if checkpoint_id >= latest.get(ns, ""):
                latest[ns] = checkpoint_id
        state["latest"] = latest
        writes.append(StagedWrite("lg_threads", tk, state))
        self._commit(writes)

    @_serialized
    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Deletes the checkpoints (and their writes and values) of the runs ``run_ids``."""
        runs = {str(r) for r in run_ids}
        for thread_id in self._all_thread_ids():
            self._keep(thread_id, None, runs)

    @_serialized
    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest`` keeps each namespace's latest checkpoint; ``delete`` all none."""
        if strategy not in ("keep_latest", "delete"):
            raise InvalidInputError(f"unknown prune strategy {strategy!r}")
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
                continue
            _, state = self._thread(_check_thread_id(thread_id))
            if state is None:
                continue
            keep = {(ns, cid) for ns, cid in state["latest"].items()}
            self._keep(thread_id, keep, None)

    @_serialized
    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint and pending write of one thread to another."""
        tk, state = self._thread(_check_thread_id(source_thread_id))
        _check_thread_id(target_thread_id)
        if state is None:
            return
        entries = list(reversed(list(self._index_entries_newest_first(tk, state["count"]))))
        target_key, target_state = self._thread(target_thread_id)
        target_state = target_state or self._new_state(target_thread_id)
        writes: builtins.list[StagedWrite] = []
        staged_logs: dict[str, dict[str, Any]] = {}
        for ns, checkpoint_id in entries:
            record = self._record(tk, ns, checkpoint_id)
            if record is None:
                continue
            found = self._tuple(source_thread_id, tk, record)
            versions = found.checkpoint["channel_versions"]
            self._stage_put(
                target_thread_id,
                ns,
                found.checkpoint,
                dict(found.metadata),
                record.get("parent"),
                versions,
                target_state,
                target_key,
                writes,
                staged_logs,
            )
            stored = self._get("lg_writes", f"{tk}.{_digest(ns, checkpoint_id)}")
            if stored is not None:
                writes.append(
                    StagedWrite("lg_writes", f"{target_key}.{_digest(ns, checkpoint_id)}", stored)
                )
        writes.append(StagedWrite("lg_threads", target_key, target_state))
        self._commit(writes)

    # ---- async: the same calls on a worker thread ----

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """:meth:`get_tuple` on a worker thread."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """:meth:`list` on a worker thread."""
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """:meth:`put` on a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """:meth:`put_writes` on a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """:meth:`delete_thread` on a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """:meth:`delete_for_runs` on a worker thread."""
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """:meth:`copy_thread` on a worker thread."""
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """:meth:`prune` on a worker thread."""
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Monotonic string versions, as LangGraph's own savers make them."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


class AsyncAttrflowSaver(AttrflowSaver):
    """:class:`AttrflowSaver` opened as an async context manager:
    ``async with AsyncAttrflowSaver.from_store(url) as saver``."""

    @classmethod
    @asynccontextmanager
    async def from_store(  # type: ignore[override]
        cls, store: str, *, flow_id: str = DEFAULT_FLOW_ID, serde: SerializerProtocol | None = None
    ) -> AsyncIterator[AsyncAttrflowSaver]:
        """A saver over a store opened for the ``async with`` block."""
        client = await asyncio.to_thread(Client, store)
        try:
            saver = await asyncio.to_thread(cls, client, flow_id=flow_id, serde=serde)
            yield saver
        finally:
            await asyncio.to_thread(client.close)


def _check_thread_id(thread_id: object) -> str:
    if not isinstance(thread_id, str) or not thread_id:
        raise InvalidInputError(f"thread_id must be a non-empty str, not {thread_id!r}")
    return thread_id


def _thread_and_namespace(config: RunnableConfig | None) -> tuple[str, str]:
    configurable = (config or {}).get("configurable")
    if not isinstance(configurable, dict):
        raise InvalidInputError("config needs a 'configurable' dict with a thread_id")
    thread_id = _check_thread_id(configurable.get("thread_id"))
    ns = configurable.get("checkpoint_ns", "") or ""
    if not isinstance(ns, str):
        raise InvalidInputError(f"checkpoint_ns must be a str, not {ns!r}")
    return thread_id, ns
