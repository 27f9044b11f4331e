"""Before the archive flow is started, its routes are 404s that say how to start it; once it
is stopped, they are 410s that say so."""

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


async def test_a_stopped_flow_is_gone_and_not_started_again(store: str) -> None:
    app = create_app(store)
    async with app.test_app() as test_app:
        http = test_app.test_client()
        assert (await register(http, 1))["sequence"] == 1
        with Client(store) as client:
            client.stop_flow(FLOW_ID, StopFlowOptions(StopType.TERMINATE, "retired"))
        gone = (
            'flow "chunked-subscriber-archive" was stopped (terminated): '
            "it serves no RPCs and its ID is not started again"
        )
        for response in [
            await http.get(f"{PREFIX}/subscribers"),
            await http.post(f"{PREFIX}/register", json=subscriber_body(2)),
            await http.post(f"{PREFIX}/start"),
        ]:
            assert response.status_code == 410
            assert await response.get_json() == {"error": gone}
