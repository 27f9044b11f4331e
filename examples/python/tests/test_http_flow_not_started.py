"""Before the archive flow is started, its routes are 404s that say how to start it; once it
is stopped, they are 410s that say so, until ``POST /start`` begins a new run of it (as
Dex's default ID reuse policy does), which starts with an empty archive."""

from __future__ import annotations

import pytest
from archive_api import PREFIX, HttpClient, read_page, register, subscriber_body
from attrflow import Client, StopFlowOptions, StopType
from attrflow.flows.chunked_subscriber import FLOW_ID

from attrflow_examples.app import create_app

pytestmark = pytest.mark.asyncio

NOT_STARTED = (
    'flow "chunked-subscriber-archive" not found; '
    "start it with POST /patterns/sequentially-chunked-attribute-map/start"
)


async def assert_not_started(http: HttpClient) -> None:
    page = await http.get(f"{PREFIX}/subscribers")
    assert page.status_code == 404
    assert await page.get_json() == {"error": NOT_STARTED}
    registration = await http.post(f"{PREFIX}/register", json=subscriber_body(1))
    assert registration.status_code == 404
    assert await registration.get_json() == {"error": NOT_STARTED}


async def test_routes_are_404_until_start_and_work_after_it(store: str) -> None:
    app = create_app(store, start_flow=False)
    async with app.test_app() as test_app:
        http = test_app.test_client()
        await assert_not_started(http)

        assert (await http.post(f"{PREFIX}/start")).status_code == 200
        assert (await register(http, 1))["sequence"] == 1
        assert [s["sequence"] for s in (await read_page(http, "current"))["subscribers"]] == [1]


async def test_a_stopped_flow_is_gone_until_start_begins_a_new_run(store: str) -> None:
    app = create_app(store)
    async with app.test_app() as test_app:
        http = test_app.test_client()
        assert (await register(http, 1))["sequence"] == 1
        first = await (await http.post(f"{PREFIX}/start")).get_json()
        with Client(store) as client:
            client.stop_flow(FLOW_ID, StopFlowOptions(StopType.TERMINATE, "retired"))
        gone = 'flow "chunked-subscriber-archive" was stopped (terminated): it serves no RPCs'
        for response in [
            await http.get(f"{PREFIX}/subscribers"),
            await http.post(f"{PREFIX}/register", json=subscriber_body(2)),
        ]:
            assert response.status_code == 410
            assert await response.get_json() == {"error": gone}

        started = await http.post(f"{PREFIX}/start")
        assert started.status_code == 200
        second = await started.get_json()
        assert second["flowID"] == FLOW_ID
        assert second["runID"] != first["runID"]
        assert (await read_page(http, "current"))["subscribers"] == []
        assert (await register(http, 2))["sequence"] == 1
