"""Quart's own errors (unknown route, wrong method, oversized body) are JSON too."""

from __future__ import annotations

import pytest
from archive_api import PREFIX, HttpClient

from attrflow_examples.app import MAX_CONTENT_LENGTH, app_state_of, create_app

pytestmark = pytest.mark.asyncio


async def test_an_unknown_route_is_a_json_404(http: HttpClient) -> None:
    response = await http.get("/no/such/route")
    assert response.status_code == 404
    assert response.content_type == "application/json"
    body = await response.get_json()
    assert set(body) == {"error"}
    assert body["error"]


async def test_a_wrong_method_is_a_json_405_with_allow(http: HttpClient) -> None:
    response = await http.get(f"{PREFIX}/register")
    assert response.status_code == 405
    assert response.content_type == "application/json"
    assert set(await response.get_json()) == {"error"}
    assert "POST" in response.headers["Allow"]


async def test_an_oversized_body_is_a_json_413(http: HttpClient) -> None:
    padding = "x" * MAX_CONTENT_LENGTH
    response = await http.post(
        f"{PREFIX}/register",
        json={"subscriberId": padding, "deliveryAddress": "a@example.com"},
    )
    assert response.status_code == 413
    assert response.content_type == "application/json"
    assert set(await response.get_json()) == {"error"}


async def test_a_body_just_under_the_limit_is_read(http: HttpClient) -> None:
    response = await http.post(f"{PREFIX}/register", data=b" " * (MAX_CONTENT_LENGTH - 2) + b"[]")
    assert response.status_code == 400
    assert await response.get_json() == {"error": "JSON request body is required"}


async def test_healthz_answers_ok(http: HttpClient) -> None:
    response = await http.get("/healthz")
    assert response.status_code == 200
    assert await response.get_json() == {"status": "ok"}


async def test_healthz_is_a_503_once_the_store_does_not_answer(store: str) -> None:
    app = create_app(store)
    async with app.test_app() as test_app:
        await app_state_of(app).client.close()
        response = await test_app.test_client().get("/healthz")
        assert response.status_code == 503
        body = await response.get_json()
        assert body["status"] == "unavailable"
        assert "closed" in body["error"]
