"""``Idempotency-Key`` on ``POST /register`` and ``POST /register-batch``: a retry with the
same key and body answers the first response and appends nothing; a batch crosses chunk
boundaries in one call; bad batches, bad keys and reused keys are 400s."""

from __future__ import annotations

from typing import Any

import pytest
from archive_api import PREFIX, HttpClient, read_page, register, sequences, subscriber_body

KEY = {"Idempotency-Key": "signup-42"}


async def post(
    http: HttpClient, route: str, body: object, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    response = await http.post(f"{PREFIX}/{route}", json=body, headers=headers or {})
    return response.status_code, await response.get_json()


@pytest.mark.asyncio
async def test_a_keyed_retry_answers_the_first_subscriber(http: HttpClient) -> None:
    status, first = await post(http, "register", subscriber_body(1), KEY)
    assert status == 200
    assert first == {"sequence": 1, **subscriber_body(1)}
    await register(http, 2)
    assert await post(http, "register", subscriber_body(1), KEY) == (200, first)
    assert sequences(await read_page(http, "current")) == [2, 1]


@pytest.mark.asyncio
async def test_a_key_reused_with_another_body_is_a_400(http: HttpClient) -> None:
    await post(http, "register", subscriber_body(1), KEY)
    status, body = await post(http, "register", subscriber_body(2), KEY)
    assert status == 400
    assert body == {
        "error": 'idempotency key "signup-42" was already used with a different payload'
    }
    assert sequences(await read_page(http, "current")) == [1]


@pytest.mark.asyncio
@pytest.mark.parametrize("key", ["", "two words", "k" * 129])
async def test_a_bad_key_is_a_400(http: HttpClient, key: str) -> None:
    for route, body in (
        ("register", subscriber_body(1)),
        ("register-batch", {"subscribers": [subscriber_body(1)]}),
    ):
        status, answer = await post(http, route, body, {"Idempotency-Key": key})
        assert status == 400, route
        assert answer["error"].startswith("idempotency key must be 1 to 128 visible ASCII")
    assert sequences(await read_page(http, "current")) == []


@pytest.mark.asyncio
async def test_a_batch_crosses_chunk_boundaries_in_one_call(http: HttpClient) -> None:
    subscribers = [subscriber_body(n) for n in range(1, 251)]
    status, body = await post(http, "register-batch", {"subscribers": subscribers})
    assert status == 200
    assert [s["sequence"] for s in body["subscribers"]] == list(range(1, 251))
    newest = await read_page(http, "current")
    assert sequences(newest) == list(range(250, 200, -1))
    assert newest["nextPageToken"] == "00000000000000000101"


@pytest.mark.asyncio
async def test_a_keyed_batch_is_appended_once(http: HttpClient) -> None:
    batch = {"subscribers": [subscriber_body(n) for n in range(1, 4)]}
    first = await post(http, "register-batch", batch, KEY)
    assert first[0] == 200
    assert await post(http, "register-batch", batch, KEY) == first
    assert sequences(await read_page(http, "current")) == [3, 2, 1]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "subscribers must be a list"),
        ({"subscribers": "x"}, "subscribers must be a list"),
        ({"subscribers": [subscriber_body(1), 7]}, "subscribers[1] must be an object"),
        (
            {"subscribers": [subscriber_body(1), {"subscriberId": "a"}]},
            "subscribers[1]: deliveryAddress is required",
        ),
        ({"subscribers": []}, "a batch needs at least one record"),
        (
            {
                "subscribers": [
                    {"subscriberId": f"{n}", "deliveryAddress": "a"} for n in range(1001)
                ]
            },
            "a batch holds at most 1000 records, got 1001",
        ),
    ],
)
async def test_a_bad_batch_is_a_400_and_stores_nothing(
    http: HttpClient, body: dict[str, Any], message: str
) -> None:
    assert await post(http, "register-batch", body) == (400, {"error": message})
    assert sequences(await read_page(http, "current")) == []
