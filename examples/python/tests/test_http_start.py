"""POST /start is idempotent: every call, across restarts, names the same run."""

from __future__ import annotations

import pytest
from archive_api import PREFIX, HttpClient, read_page

from attrflow_examples.app import create_app

pytestmark = pytest.mark.asyncio


async def start(http: HttpClient) -> str:
    response = await http.post(f"{PREFIX}/start")
    body = await response.get_json()
    assert response.status_code == 200, body
    assert body["flowID"] == "chunked-subscriber-archive"
    run_id = body["runID"]
    assert isinstance(run_id, str)
    assert run_id
    return run_id


async def test_start_returns_the_same_run_every_time(http: HttpClient) -> None:
    first = await start(http)
    assert await start(http) == first
    assert await start(http) == first


async def test_a_fresh_service_has_an_empty_current_page(http: HttpClient) -> None:
    assert await read_page(http, "current") == {
        "pageToken": "current",
        "subscribers": [],
        "nextPageToken": "",
    }


async def test_the_run_survives_a_restart_of_the_service(store: str) -> None:
    first_app = create_app(store)
    async with first_app.test_app() as test_app:
        first = await start(test_app.test_client())
    second_app = create_app(store)
    async with second_app.test_app() as test_app:
        assert await start(test_app.test_client()) == first
