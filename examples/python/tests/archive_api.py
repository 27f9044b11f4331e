"""Calls of the subscriber archive's HTTP API through Quart's test client, for the tests."""

from __future__ import annotations

from typing import Any

from quart.typing import TestClientProtocol as HttpClient

__all__ = [
    "PREFIX",
    "HttpClient",
    "delivery_address",
    "get_page",
    "read_page",
    "register",
    "sequences",
    "subscriber_body",
    "subscriber_id",
]

PREFIX = "/patterns/sequentially-chunked-attribute-map"


def subscriber_id(n: int) -> str:
    """The ID the tests give subscriber number ``n``."""
    return f"subscriber-{n:03}"


def delivery_address(n: int) -> str:
    """The delivery address the tests give subscriber number ``n``."""
    return f"subscriber-{n:03}@example.com"


def subscriber_body(n: int) -> dict[str, Any]:
    """The register body, and the expected subscriber, of subscriber number ``n``."""
    return {"subscriberId": subscriber_id(n), "deliveryAddress": delivery_address(n)}


async def register(http: HttpClient, n: int) -> dict[str, Any]:
    """Registers subscriber ``n`` and returns the 200 body."""
    response = await http.post(f"{PREFIX}/register", json=subscriber_body(n))
    body = await response.get_json()
    assert response.status_code == 200, body
    assert isinstance(body, dict)
    return body


async def get_page(http: HttpClient, page_token: str | None) -> tuple[int, Any]:
    """The status and JSON body of ``GET /subscribers`` (no ``pageToken`` when ``None``)."""
    query = {} if page_token is None else {"pageToken": page_token}
    response = await http.get(f"{PREFIX}/subscribers", query_string=query)
    return response.status_code, await response.get_json()


async def read_page(http: HttpClient, page_token: str) -> dict[str, Any]:
    """The 200 body of the page ``page_token``."""
    status, body = await get_page(http, page_token)
    assert status == 200, body
    assert isinstance(body, dict)
    return body


def sequences(page: dict[str, Any]) -> list[int]:
    """The sequences of a page's subscribers, in the page's order."""
    return [subscriber["sequence"] for subscriber in page["subscribers"]]
