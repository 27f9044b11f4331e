"""The HTTP floor: a bare ASGI app (no framework) answering every request with one constant
10 KB JSON body, served by uvicorn with uvloop and httptools. What Python HTTP can do on this
machine; the service's archived page (about 10 KB of JSON too) is measured against it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

BODY = json.dumps(
    {
        "pageToken": "00000000000000000101",
        "subscribers": [
            {
                "sequence": sequence,
                "subscriberId": f"subscriber-{sequence:07}",
                "deliveryAddress": f"subscriber-{sequence:07}@example.com",
            }
            for sequence in range(200, 100, -1)
        ],
        "nextPageToken": "00000000000000000001",
    }
).encode()
"""A body the size and shape of an archived 100-subscriber page."""

_HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """The constant answer (lifespan events are acknowledged)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": BODY})
