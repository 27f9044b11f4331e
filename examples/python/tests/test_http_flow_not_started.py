"""Before the archive flow is started, its routes are 404s that say how to start it."""

from __future__ import annotations

import pytest
from archive_api import PREFIX, HttpClient, read_page, register, subscriber_body

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
