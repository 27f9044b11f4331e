"""201 registrations page back newest first, one chunk a page, with the exact tokens."""

from __future__ import annotations

import pytest
from archive_api import (
    HttpClient,
    delivery_address,
    get_page,
    read_page,
    register,
    sequences,
    subscriber_body,
    subscriber_id,
)

pytestmark = pytest.mark.asyncio

SUBSCRIBERS = 201


async def register_all(http: HttpClient) -> None:
    for n in range(1, SUBSCRIBERS + 1):
        assert await register(http, n) == {"sequence": n, **subscriber_body(n)}


async def test_pages_walk_the_archive_newest_first(http: HttpClient) -> None:
    await register_all(http)

    current = await read_page(http, "current")
    assert current["pageToken"] == "current"
    assert sequences(current) == [201]
    assert current["nextPageToken"] == "00000000000000000101"

    middle = await read_page(http, current["nextPageToken"])
    assert middle["pageToken"] == "00000000000000000101"
    assert sequences(middle) == list(range(200, 100, -1))
    assert middle["nextPageToken"] == "00000000000000000001"

    oldest = await read_page(http, middle["nextPageToken"])
    assert oldest["pageToken"] == "00000000000000000001"
    assert sequences(oldest) == list(range(100, 0, -1))
    assert oldest["nextPageToken"] == ""

    assert oldest["subscribers"][0] == {
        "sequence": 100,
        "subscriberId": subscriber_id(100),
        "deliveryAddress": delivery_address(100),
    }


async def test_a_missing_or_empty_token_reads_current(http: HttpClient) -> None:
    await register_all(http)
    current = await read_page(http, "current")
    assert await get_page(http, None) == (200, current)
    assert await get_page(http, "") == (200, current)


async def test_an_archived_page_reads_the_same_every_time(http: HttpClient) -> None:
    await register_all(http)
    first = await read_page(http, "00000000000000000101")
    await register(http, SUBSCRIBERS + 1)
    assert await read_page(http, "00000000000000000101") == first


async def test_a_well_formed_token_without_a_chunk_is_not_found(
    http: HttpClient,
) -> None:
    await register_all(http)
    assert await get_page(http, "00000000000000000301") == (
        404,
        {"error": 'subscriber page "00000000000000000301" not found'},
    )
