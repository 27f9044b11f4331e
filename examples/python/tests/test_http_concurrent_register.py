"""Concurrent registrations across a chunk boundary all succeed, thanks to the service's retries.

Each registration locks the archive state and the current chunk, and attrflow's locks fail
fast; the service retries the conflicts itself, so every caller gets a 200.
"""

from __future__ import annotations

import asyncio

import pytest
from archive_api import PREFIX, HttpClient, read_page, register, sequences, subscriber_body

pytestmark = pytest.mark.asyncio

BEFORE = 95
CONCURRENT = 20


async def test_concurrent_registrations_get_distinct_dense_sequences(
    http: HttpClient,
) -> None:
    for n in range(1, BEFORE + 1):
        await register(http, n)

    numbers = range(BEFORE + 1, BEFORE + CONCURRENT + 1)
    responses = await asyncio.gather(
        *(http.post(f"{PREFIX}/register", json=subscriber_body(n)) for n in numbers)
    )
    bodies = [await response.get_json() for response in responses]
    assert [response.status_code for response in responses] == [200] * CONCURRENT, bodies

    # Who got which sequence depends on who won the locks; the set of sequences does not.
    assert sorted(body["sequence"] for body in bodies) == list(numbers)
    for n, body in zip(numbers, bodies):
        assert {key: body[key] for key in ("subscriberId", "deliveryAddress")} == (
            subscriber_body(n)
        )

    current = await read_page(http, "current")
    assert sequences(current) == list(range(BEFORE + CONCURRENT, 100, -1))
    assert current["nextPageToken"] == "00000000000000000001"
    archived = await read_page(http, "00000000000000000001")
    assert sequences(archived) == list(range(100, 0, -1))

    stored = {s["sequence"]: s for s in current["subscribers"] + archived["subscribers"]}
    for body in bodies:
        assert stored[body["sequence"]] == body
