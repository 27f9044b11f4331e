"""The archive's page route answered in front of Quart, for speed.

``GET /patterns/sequentially-chunked-attribute-map/subscribers`` is the service's hottest
read. :class:`FastPageRoute` is an ASGI app placed before the Quart app: for a plain
``GET`` of that path with no query, or with only ``pageToken=<letters, digits, - or _>``,
it sends the page as the native module writes it (``AsyncClient.invoke_rpc_json``: the same
call as the route's, the bytes of Quart's compact jsonify of the route's body) with the
headers Quart would send; everything else goes to Quart unchanged.

A fast route's call that fails (here a malformed token, an unknown chunk, a flow not
started) is not made again: :func:`hand_failure_to_quart` passes the request on with the
error in its ASGI scope, and a ``before_request`` hook of the Quart app
(:func:`answer_failures_in_quart`) raises it before the route runs, so Quart's error
handlers answer it exactly as they answer the route's own failure.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from attrflow import AttrflowError
from quart import Quart, request

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
_FAILED_CALL = "attrflow_examples.failed_call"
"""The scope key carrying a fast route's failed call from the route to Quart."""


def answer_failures_in_quart(app: Quart) -> None:
    """Makes ``app`` answer the failures its fast routes hand it (once per app)."""
    hooks = app.before_request_funcs.setdefault(None, [])
    if _raise_failed_call not in hooks:
        hooks.append(_raise_failed_call)


def hand_failure_to_quart(scope: Scope, error: AttrflowError) -> Scope:
    """``scope`` carrying ``error``, for Quart's error handlers to answer."""
    return {**scope, _FAILED_CALL: error}


async def _raise_failed_call() -> None:
    """Raises the error a fast route's call failed with, if any, before the route runs."""
    error = request.scope.get(_FAILED_CALL)
    if isinstance(error, AttrflowError):
        raise error


class FastPageRoute:
    """An ASGI app answering the plain page reads of ``app`` itself, the rest through it."""

    def __init__(self, app: Quart) -> None:
        self.app = app
        self._app_state = app_state_of(app)
        answer_failures_in_quart(app)

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
            except AttrflowError as error:
                scope = hand_failure_to_quart(scope, error)
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
