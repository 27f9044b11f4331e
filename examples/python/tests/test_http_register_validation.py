"""POST /register refuses a bad body with a 400 and the exact message, and stores nothing."""

from __future__ import annotations

from typing import Any

import pytest
from archive_api import PREFIX, HttpClient, read_page

pytestmark = pytest.mark.asyncio

BODY_REQUIRED = "JSON request body is required"


async def post_raw(http: HttpClient, data: bytes) -> tuple[int, Any]:
    response = await http.post(
        f"{PREFIX}/register", data=data, headers={"Content-Type": "application/json"}
    )
    return response.status_code, await response.get_json()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"not json",
        b'{"subscriberId": "a", "deliveryAddress": "b"',
        b"\xff\xfe",
        b"\xff\xfe{\x00}\x00",
        b"[]",
        b'[{"subscriberId": "a", "deliveryAddress": "b"}]',
        b'"subscriber"',
        b"42",
        b"null",
        b"true",
        b"[" * 5000 + b"]" * 5000,
        b'{"subscriberId": ' + b"1" * 5000 + b"}",
    ],
    ids=[
        "empty",
        "open-brace",
        "not-json",
        "truncated",
        "not-utf8",
        "utf16-object",
        "empty-array",
        "array-of-object",
        "string",
        "number",
        "null",
        "bool",
        "deeply-nested",
        "number-too-long-to-parse",
    ],
)
async def test_a_body_that_is_no_json_object_is_refused(http: HttpClient, data: bytes) -> None:
    assert await post_raw(http, data) == (400, {"error": BODY_REQUIRED})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "subscriberId is required"),
        ({"deliveryAddress": "a@example.com"}, "subscriberId is required"),
        ({"subscriberId": "", "deliveryAddress": "a@example.com"}, "subscriberId is required"),
        ({"subscriberId": 7, "deliveryAddress": "a@example.com"}, "subscriberId is required"),
        ({"subscriberId": None, "deliveryAddress": "a@example.com"}, "subscriberId is required"),
        ({"subscriberId": ["a"], "deliveryAddress": "a@example.com"}, "subscriberId is required"),
        ({"subscriberId": "a"}, "deliveryAddress is required"),
        ({"subscriberId": "a", "deliveryAddress": ""}, "deliveryAddress is required"),
        ({"subscriberId": "a", "deliveryAddress": False}, "deliveryAddress is required"),
        ({"subscriberId": "a", "deliveryAddress": {"to": "a"}}, "deliveryAddress is required"),
        ({"subscriberId": "", "deliveryAddress": ""}, "subscriberId is required"),
    ],
)
async def test_a_missing_empty_or_non_string_field_is_named(
    http: HttpClient, body: dict[str, Any], message: str
) -> None:
    response = await http.post(f"{PREFIX}/register", json=body)
    assert response.status_code == 400
    assert await response.get_json() == {"error": message}


async def test_text_that_is_not_unicode_is_refused(http: HttpClient) -> None:
    status, body = await post_raw(
        http, b'{"subscriberId": "\\ud800", "deliveryAddress": "a@example.com"}'
    )
    assert (status, body) == (400, {"error": "subscriberId must be valid Unicode text"})


async def test_a_refused_body_stores_nothing(http: HttpClient) -> None:
    await post_raw(http, b"[]")
    await http.post(f"{PREFIX}/register", json={"subscriberId": "a", "deliveryAddress": ""})
    assert (await read_page(http, "current"))["subscribers"] == []


async def test_the_content_type_does_not_matter_to_a_valid_body(
    http: HttpClient,
) -> None:
    response = await http.post(
        f"{PREFIX}/register",
        data=b'{"subscriberId": "a", "deliveryAddress": "a@example.com"}',
        headers={"Content-Type": "text/plain"},
    )
    assert response.status_code == 200
    assert await response.get_json() == {
        "sequence": 1,
        "subscriberId": "a",
        "deliveryAddress": "a@example.com",
    }


async def test_unknown_fields_are_ignored(http: HttpClient) -> None:
    response = await http.post(
        f"{PREFIX}/register",
        json={"subscriberId": "a", "deliveryAddress": "a@example.com", "sequence": 99},
    )
    assert response.status_code == 200
    assert (await response.get_json())["sequence"] == 1
