"""The flow that holds LangGraph checkpoints: its AttributeMaps and the one RPC that commits
a batch of writes to them atomically.

Layout (``tk`` is a digest of the thread ID, so any thread ID makes a valid key):

- ``lg_threads/tk``: the thread's state: its ID, how many index entries it has, and its
  message logs;
- ``lg_index/tk.N``: chunk ``N`` of the thread's checkpoint index, at most
  :data:`INDEX_CHUNK` ``[namespace, checkpoint ID]`` pairs in put order;
- ``lg_checkpoints/tk.H``: one checkpoint without its channel values, plus the channel
  versions it reads;
- ``lg_writes/tk.H``: the pending writes of that checkpoint;
- ``lg_blobs/tk.H``: one channel value at one version, stored once: the serialized value,
  or for a list a reference ``(log, length)`` to the first ``length`` entries of a message log;
- ``lg_logs/tk.H`` and ``lg_log_chunks/tk.H.N``: a message log, its state and its chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attrflow.attribute import AttributeMap
from attrflow.context import Context
from attrflow.flow import Flow, RPCResult
from attrflow.rpc import rpc

FLOW_TYPE = "LangGraphCheckpoints"
"""The flow type of the checkpoint flow."""
INDEX_CHUNK = 100
"""Index entries a chunk of a thread's checkpoint index holds."""


@dataclass
class StagedWrite:
    """One write of a batch: the map's name, the instance key and the value (None
    deletes)."""

    map: str
    key: str
    value: Any = None


@dataclass
class WriteBatch:
    """Input of ``ApplyWrites``: writes committed together, in order."""

    writes: list[StagedWrite] = field(default_factory=list)


class LangGraphCheckpointFlow(Flow[None]):
    """An RPC-only flow holding the checkpoints of any number of LangGraph threads."""

    flow_type = FLOW_TYPE

    threads = AttributeMap("lg_threads", dict[str, Any])
    index = AttributeMap("lg_index", list[Any])
    checkpoints = AttributeMap("lg_checkpoints", dict[str, Any])
    writes = AttributeMap("lg_writes", dict[str, Any])
    blobs = AttributeMap("lg_blobs", dict[str, Any])
    logs = AttributeMap("lg_logs", dict[str, Any])
    log_chunks = AttributeMap("lg_log_chunks", list[Any])

    def maps(self) -> dict[str, AttributeMap[Any]]:
        """The flow's maps by name."""
        return {
            m.name: m
            for m in (
                self.threads,
                self.index,
                self.checkpoints,
                self.writes,
                self.blobs,
                self.logs,
                self.log_chunks,
            )
        }

    @rpc(name="ApplyWrites", is_transactional=True)
    def apply_writes(self, context: Context, batch: WriteBatch) -> RPCResult[int]:
        """Stages every write of ``batch``; the core commits them in one transaction."""
        maps = self.maps()
        for write in batch.writes:
            target = maps[write.map]
            if write.value is None:
                target.delete(context, write.key)
            else:
                target.set(context, write.key, write.value)
        return RPCResult(len(batch.writes))

    @rpc(name="ThreadKeys", load_attribute_maps=(threads,), is_read_only=True)
    def thread_keys(self, context: Context) -> RPCResult[list[str]]:
        """The keys of every thread holding checkpoints."""
        return RPCResult(list(self.threads.get_all_instance_keys(context)))
