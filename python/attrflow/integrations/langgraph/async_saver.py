"""``AsyncAttrflowSaver``: :class:`AttrflowSaver` opened and closed with ``async with``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.serde.base import SerializerProtocol

from attrflow.client import Client
from attrflow.integrations.langgraph.saver import AttrflowSaver

__all__ = ["AsyncAttrflowSaver"]


class AsyncAttrflowSaver(AttrflowSaver):
    """An :class:`AttrflowSaver` for async graphs: ``async with
    AsyncAttrflowSaver.from_store(url) as saver:``; its ``a*`` methods run the store calls on
    worker threads, so the event loop never waits on the store."""

    @classmethod
    @asynccontextmanager  # type: ignore[override]
    async def from_store(  # type: ignore[override]
        cls, store: str, *, serde: SerializerProtocol | None = None
    ) -> AsyncIterator[AsyncAttrflowSaver]:
        """Opens ``store`` (a SQLite path or ``postgresql://`` URL) on a worker thread,
        yields a saver on it and closes the store after."""
        client = await asyncio.to_thread(Client, store)
        try:
            yield await asyncio.to_thread(cls, client, serde=serde)
        finally:
            await asyncio.to_thread(client.close)
