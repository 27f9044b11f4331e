"""The asyncio client: :class:`AsyncClient`, with the methods of the Dex SDK's
``AsyncClient``.

Each call runs the blocking core call on a worker thread (``asyncio.to_thread``); the core
releases the GIL while it works, so many tasks' calls overlap and the event loop stays free.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Generator
from types import TracebackType
from typing import Any, TypeVar

from attrflow.client import DEFAULT_STORE, Client
from attrflow.flow import BoundRpc, Flow
from attrflow.metrics import Metrics
from attrflow.options import RPCInvokeOptions, StartFlowOptions

__all__ = ["AsyncClient"]

I = TypeVar("I")  # noqa: E741 - input type
O = TypeVar("O")  # noqa: E741 - output type

_DEFAULT_START = StartFlowOptions()
_DEFAULT_INVOKE = RPCInvokeOptions()


class _Done:
    """An awaitable that is already complete, so both ``client.close()`` and
    ``await client.close()`` work."""

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # pragma: no cover - makes this a generator


class AsyncClient:
    """An asyncio client over one store; see :class:`attrflow.Client` for ``store`` and
    ``synchronous``, ``built_in_flows`` and flows defined in Python. The store is opened
    when the client is made."""

    def __init__(
        self,
        store: str | os.PathLike[str] = DEFAULT_STORE,
        *,
        synchronous: str | None = None,
        built_in_flows: bool = True,
    ) -> None:
        self._client = Client(store, synchronous=synchronous, built_in_flows=built_in_flows)

    @property
    def store(self) -> str:
        """Where the store lives."""
        return self._client.store

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._client.closed

    def register_flow(self, flow: Flow[Any]) -> None:
        """See :meth:`attrflow.Client.register_flow` (no store work: not awaited)."""
        self._client.register_flow(flow)

    async def start_flow(
        self,
        flow: Flow[Any],
        flow_id: str,
        input: None = None,
        options: StartFlowOptions = _DEFAULT_START,
    ) -> str:
        """See :meth:`attrflow.Client.start_flow`."""
        return await asyncio.to_thread(self._client.start_flow, flow, flow_id, input, options)

    async def invoke_rpc(
        self,
        rpc: BoundRpc[I, O],
        flow_id: str,
        input: I | None = None,
        *,
        run_id: str = "",
        options: RPCInvokeOptions = _DEFAULT_INVOKE,
    ) -> O:
        """See :meth:`attrflow.Client.invoke_rpc`."""
        return await asyncio.to_thread(
            self._client.invoke_rpc, rpc, flow_id, input, run_id=run_id, options=options
        )

    def metrics(self) -> Metrics:
        """See :meth:`attrflow.Client.metrics` (a read of counters, so not awaited)."""
        return self._client.metrics()

    def close(self) -> _Done:
        """Releases the store at once (calls already running finish). The result may be
        awaited or ignored."""
        self._client.close()
        return _Done()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<attrflow.AsyncClient {self.store!r} ({state})>"
