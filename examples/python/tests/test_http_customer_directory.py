"""The customer directory's HTTP routes: start, save and read profiles by canonical email,
12 colliding profiles saved concurrently and read back exactly, and JSON 400/404 errors
with the pattern's messages."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from archive_api import HttpClient

from attrflow_examples.app import create_app

pytestmark = pytest.mark.asyncio

PREFIX = "/patterns/hash-partitioned-attribute-map"
COLLIDING = (178, 350, 686, 1115, 1216, 1502, 1810, 1942, 2154, 2745, 3030, 4039)


def profile_body(index: int, email: str | None = None) -> dict[str, Any]:
    return {
        "emailAddress": email or f"collision-{index:05d}@example.com",
        "fullName": f"Customer {index:05d}",
        "companyName": "Collision Test Company",
        "customerTier": "gold",
    }


async def put_profile(http: HttpClient, body: object) -> tuple[int, Any]:
    response = await http.put(f"{PREFIX}/customer-profile", json=body)
    return response.status_code, await response.get_json()


async def get_profile(http: HttpClient, email: str | None) -> tuple[int, Any]:
    query = {} if email is None else {"emailAddress": email}
    response = await http.get(f"{PREFIX}/customer-profile", query_string=query)
    return response.status_code, await response.get_json()


async def test_start_is_idempotent(http: HttpClient) -> None:
    first = await (await http.post(f"{PREFIX}/start")).get_json()
    second = await (await http.post(f"{PREFIX}/start")).get_json()
    assert first["flowID"] == "customer-directory"
    assert first == second


async def test_colliding_profiles_saved_concurrently_read_back_exactly(http: HttpClient) -> None:
    saved = await asyncio.gather(*(put_profile(http, profile_body(i)) for i in COLLIDING))
    assert saved == [(200, profile_body(i)) for i in COLLIDING]
    for index in COLLIDING:
        email = profile_body(index)["emailAddress"]
        assert await get_profile(http, f" \t{email}\r\n") == (200, profile_body(index))

    first = profile_body(COLLIDING[0])
    status, updated = await put_profile(
        http, {**first, "emailAddress": f"  {first['emailAddress'].upper()}  ", "fullName": "U"}
    )
    assert (status, updated) == (200, {**first, "fullName": "U"})
    assert await get_profile(http, first["emailAddress"]) == (200, {**first, "fullName": "U"})


async def test_an_absent_profile_is_a_404(http: HttpClient) -> None:
    assert await get_profile(http, "missing@example.com") == (
        404,
        {"error": 'customer profile "missing@example.com" not found'},
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1, 2], "JSON request body is required"),
        ({**profile_body(1), "fullName": ""}, "fullName is required"),
        (
            {k: v for k, v in profile_body(1).items() if k != "customerTier"},
            "customerTier is required",
        ),
        ({**profile_body(1), "companyName": 7}, "companyName is required"),
        ({**profile_body(1), "emailAddress": " \t"}, "emailAddress is required"),
        (
            {**profile_body(1), "emailAddress": "josé@example.com"},
            "emailAddress must contain only ASCII characters",
        ),
    ],
)
async def test_bad_profiles_are_400s(http: HttpClient, body: object, message: str) -> None:
    assert await put_profile(http, body) == (400, {"error": message})


@pytest.mark.parametrize(
    ("email", "message"),
    [
        (None, "emailAddress is required"),
        ("", "emailAddress is required"),
        ("josé@example.com", "emailAddress must contain only ASCII characters"),
    ],
)
async def test_bad_reads_are_400s(http: HttpClient, email: str | None, message: str) -> None:
    assert await get_profile(http, email) == (400, {"error": message})


async def test_routes_are_404_until_start(store: str) -> None:
    app = create_app(store, start_flow=False)
    async with app.test_app() as test_app:
        http = test_app.test_client()
        status, body = await get_profile(http, "bob@example.com")
        assert status == 404
        assert body == {
            "error": f'flow "customer-directory" not found; start it with POST {PREFIX}/start'
        }
        assert (await http.post(f"{PREFIX}/start")).status_code == 200
        assert (await put_profile(http, profile_body(1, "bob@example.com")))[0] == 200


async def delete_profile(http: HttpClient, email: str | None) -> tuple[int, Any]:
    query = {} if email is None else {"emailAddress": email}
    response = await http.delete(f"{PREFIX}/customer-profile", query_string=query)
    return response.status_code, await response.get_json()


async def test_a_deleted_profile_is_gone(http: HttpClient) -> None:
    for index in COLLIDING[:2]:
        assert (await put_profile(http, profile_body(index)))[0] == 200
    email = profile_body(COLLIDING[0])["emailAddress"]
    assert await delete_profile(http, f" {email.upper()} ") == (200, profile_body(COLLIDING[0]))
    assert await get_profile(http, email) == (
        404,
        {"error": f'customer profile "{email}" not found'},
    )
    assert (await delete_profile(http, email))[0] == 404
    assert await delete_profile(http, None) == (400, {"error": "emailAddress is required"})
    other = profile_body(COLLIDING[1])
    assert await get_profile(http, other["emailAddress"]) == (200, other)


async def test_oversized_profile_fields_are_400_and_never_fill_a_partition(
    http: HttpClient,
) -> None:
    # The reproduction: 17 PUTs with a 60 KiB fullName to one partition locked every new
    # customer of that partition out. Each is refused, and the partition takes new ones.
    for index in COLLIDING:
        status, body = await put_profile(http, {**profile_body(index), "fullName": "n" * 61_440})
        assert (status, body) == (400, {"error": "fullName is 61440 bytes; the limit is 256"})
    status, body = await put_profile(
        http, {**profile_body(0), "emailAddress": "e" * 250 + "@example.com"}
    )
    assert status == 400
    assert body["error"].startswith("emailAddress is 262 bytes")
    assert (await put_profile(http, profile_body(COLLIDING[0])))[0] == 200
