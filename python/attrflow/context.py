"""What a Python RPC handler is given: :class:`Context`, its window on one call's snapshot
and staged writes.

Handlers do not use the context's own methods; they pass it to the flow's Attributes and
AttributeMaps (``state.get(context)``, ``chunks.set(context, "current", chunk)``). Every
read and write is carried out by the core, so the rules are the same as for Rust flows:
reads see staged writes first, an instance the call did not load raises
``AttributeMapNotLoadedError``, and staged writes are committed together when the handler
returns, or dropped when it raises. A context is valid only during its handler's call.
"""

from __future__ import annotations

from attrflow import _native

__all__ = ["Context"]


class Context:
    """The context of one RPC call, passed to the handler as its second argument."""

    __slots__ = ("_native",)

    def __init__(self, native: _native.RpcContext) -> None:
        self._native = native

    @property
    def flow_id(self) -> str:
        """The ID of the flow the RPC runs on."""
        return self._native.flow_id

    @property
    def run_id(self) -> str:
        """The ID of the flow's run: what ``start_flow`` returned."""
        return self._native.run_id

    @property
    def native(self) -> _native.RpcContext:
        """The core's context of this call (JSON in, JSON out)."""
        return self._native

    def __repr__(self) -> str:
        return f"<attrflow.Context of flow {self.flow_id!r}>"
