"""AttrflowSaver passes langgraph-checkpoint-conformance's own suite, on SQLite and
PostgreSQL (the ``store_url`` fixture), its report printed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("langgraph.checkpoint.conformance")

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from attrflow.integrations.langgraph import AsyncAttrflowSaver


def test_the_conformance_suite_passes(store_url: str) -> None:
    @checkpointer_test(name="AsyncAttrflowSaver")
    async def saver() -> AsyncIterator[AsyncAttrflowSaver]:
        async with AsyncAttrflowSaver.from_store(store_url) as opened:
            yield opened

    report = asyncio.run(validate(saver, progress=ProgressCallbacks.verbose()))
    report.print_report()
    assert report.passed_all(), report.to_dict()
