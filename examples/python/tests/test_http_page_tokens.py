"""GET /subscribers refuses a malformed page token with a 400 and the core's message."""

from __future__ import annotations

import pytest
from archive_api import HttpClient, get_page

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize(
    "token",
    [
        "1",
        "archive",
        "00000000000000000002",
        "00000000000000000000",
        "0000000000000000000101",
        "0000000000000000101",
        "CURRENT",
        " current",
        "current/",
        "a/b",
        "../current",
        "0000000000000000000\u0661",  # an Arabic-Indic digit one
        "x" * 300,
    ],
)
async def test_a_malformed_token_is_a_bad_request(http: HttpClient, token: str) -> None:
    assert await get_page(http, token) == (400, {"error": f'invalid page token "{token}"'})


@pytest.mark.parametrize("token", ["00000000000000000001", "00000000000000000101"])
async def test_a_well_formed_token_of_an_empty_archive_is_not_found(
    http: HttpClient, token: str
) -> None:
    assert await get_page(http, token) == (404, {"error": f'subscriber page "{token}" not found'})
