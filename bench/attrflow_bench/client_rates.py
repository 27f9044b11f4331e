"""Calls per second of ``invoke_rpc`` through the Python clients, blocking and asyncio."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from attrflow import AsyncClient, Client, RPCInvokeOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
    archive_chunk_token,
)

ARCHIVED_PAGE = archive_chunk_token(101)
"""The archived page every page benchmark reads: 100 subscribers, never rewritten."""

FLOW = ChunkedSubscriberFlow()


def registration(sequence: int) -> RegisterSubscriberInput:
    """The registration of the ``sequence``-th subscriber, as the Rust benchmarks make it."""
    return RegisterSubscriberInput(
        f"subscriber-{sequence:07}", f"subscriber-{sequence:07}@example.com"
    )


def page_input(token: str) -> tuple[GetSubscriberPageInput, RPCInvokeOptions]:
    """The input and the per-call load of a page read."""
    load = RPCInvokeOptions(load_attribute_map_instances=(FLOW.subscriber_chunks.load(token),))
    return GetSubscriberPageInput(token), load


def sync_register_rate(client: Client, first: int, calls: int) -> float:
    """Register calls per second, back to back, through a blocking client."""
    started = time.perf_counter()
    for sequence in range(first, first + calls):
        client.invoke_rpc(FLOW.register_subscriber, FLOW_ID, registration(sequence))
    return calls / (time.perf_counter() - started)


def sync_page_rate(client: Client, token: str, calls: int) -> float:
    """Page reads per second, back to back, through a blocking client."""
    page, load = page_input(token)
    started = time.perf_counter()
    for _ in range(calls):
        client.invoke_rpc(FLOW.get_subscriber_page, FLOW_ID, page, options=load)
    return calls / (time.perf_counter() - started)


async def _async_rates(store: Path, first: int, calls: int) -> tuple[float, float]:
    page, load = page_input(ARCHIVED_PAGE)
    async with AsyncClient(store=str(store), synchronous="normal") as client:
        started = time.perf_counter()
        for sequence in range(first, first + calls):
            await client.invoke_rpc(FLOW.register_subscriber, FLOW_ID, registration(sequence))
        register = calls / (time.perf_counter() - started)
        started = time.perf_counter()
        for _ in range(calls):
            await client.invoke_rpc(FLOW.get_subscriber_page, FLOW_ID, page, options=load)
        return register, calls / (time.perf_counter() - started)


def sync_rates(store: Path, first: int, calls: int) -> tuple[float, float]:
    """(register, archived page) calls per second through ``Client`` at synchronous=NORMAL."""
    with Client(str(store), synchronous="normal") as client:
        return sync_register_rate(client, first, calls), sync_page_rate(
            client, ARCHIVED_PAGE, calls
        )


def async_rates(store: Path, first: int, calls: int) -> tuple[float, float]:
    """(register, archived page) calls per second through ``AsyncClient``, one at a time."""
    return asyncio.run(_async_rates(store, first, calls))
