"""LangGraph's own checkpointer conformance suite (``langgraph-checkpoint-conformance``'s
``validate()``) run against ``AttrflowSaver`` on SQLite and PostgreSQL; the report is
printed (``pytest -s`` shows it; it is in the output of a failure either way)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator

import pytest

pytest.importorskip("langgraph.checkpoint.conformance")

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from attrflow import Client
from attrflow.integrations.langgraph import AttrflowSaver


def test_conformance_passes_every_capability(store_url: str) -> None:
    client = Client(store_url)

    @checkpointer_test(name=f"AttrflowSaver[{store_url.split(':')[0]}]")
    async def attrflow_saver() -> AsyncGenerator[AttrflowSaver, None]:
        # A fresh flow per capability suite, as the suite asks for a fresh checkpointer.
        yield AttrflowSaver(client, flow_id=f"langgraph-{uuid.uuid4().hex[:12]}")

    try:
        report = asyncio.run(validate(attrflow_saver, progress=ProgressCallbacks.verbose()))
    finally:
        client.close()
    report.print_report()
    failures = {
        name: result.failures for name, result in report.results.items() if not result.passed
    }
    assert report.passed_all(), failures
    assert set(report.results) == {
        "put",
        "put_writes",
        "get_tuple",
        "list",
        "delete_thread",
        "delete_for_runs",
        "copy_thread",
        "prune",
    }


def test_async_saver_conformance_passes_every_capability(store_url: str) -> None:
    from attrflow.integrations.langgraph import AsyncAttrflowSaver

    @checkpointer_test(name="AsyncAttrflowSaver")
    async def async_saver() -> AsyncGenerator[AsyncAttrflowSaver, None]:
        flow_id = f"langgraph-{uuid.uuid4().hex[:12]}"
        async with AsyncAttrflowSaver.from_store(store_url, flow_id=flow_id) as saver:
            yield saver

    report = asyncio.run(validate(async_saver, progress=ProgressCallbacks.verbose()))
    report.print_report()
    failures = {
        name: result.failures for name, result in report.results.items() if not result.passed
    }
    assert report.passed_all(), failures
