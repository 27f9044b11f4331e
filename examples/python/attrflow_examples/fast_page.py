"""The archive's page route answered in front of Quart, for speed.

``GET /patterns/sequentially-chunked-attribute-map/subscribers`` is the service's hottest
read. :class:`FastPageRoute` is an ASGI app placed before the Quart app: for a plain
``GET`` of that path with no query, or with only ``pageToken=<letters, digits, - or _>``,
it sends the page as the native module writes it (``AsyncClient.invoke_rpc_json``: the same
call as the route's, the bytes of Quart's compact jsonify of the route's body) with the
headers Quart would send; everything else goes to Quart unchanged. A page read that fails
(a malformed token, an unknown chunk, a flow not started) is handed to Quart as well, which
reads the page again and answers the error exactly as the route does: reading a page
changes nothing, so the second read is harmless.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from attrflow import AttrflowError
from quart import Quart

from attrflow_examples.app import app_state_of
from attrflow_examples.patterns.sequentially_chunked_attribute_map.controller import (
    URL_PREFIX,
    subscriber_page_json,
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

PAGE_PATH = f"{URL_PREFIX}/subscribers"
_SIMPLE_QUERY = re.compile(rb"(?:pageToken=([A-Za-z0-9_-]*))?")


class FastPageRoute:
    """An ASGI app answering the plain page reads of ``app`` itself, the rest through it."""

    def __init__(self, app: Quart) -> None:
        self.app = app
        self._app_state = app_state_of(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answers a plain page read, or passes the request to the Quart app."""
        if (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and scope["path"] == PAGE_PATH
            and (simple := _SIMPLE_QUERY.fullmatch(scope["query_string"])) is not None
        ):
            token = (simple.group(1) or b"").decode("ascii")
            try:
                body = await subscriber_page_json(self._app_state, token)
            except AttrflowError:
                pass  # Quart answers the error as the route does
            else:
                await send_json(send, body)
                return
        await self.app(scope, receive, send)  # type: ignore[arg-type]


async def send_json(send: Send, body: bytes) -> None:
    """Sends ``body`` (compact JSON written by the native module) as Quart's jsonify does.

    A 200, the compact ASCII JSON and one newline, with the headers Quart would send.
    """
    body += b"\n"
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
