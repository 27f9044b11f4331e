"""The archive's register route answered in front of Quart, for speed.

``POST /patterns/sequentially-chunked-attribute-map/register`` is the service's hottest
write, and Quart's request handling costs about a millisecond of the event loop's time per
request, which sixteen concurrent writers wait for in turn. :class:`FastRegisterRoute` is an
ASGI app placed before the Quart app: for a ``POST`` of that path with no query and no
``Idempotency-Key`` header, whose body is a JSON object with the route's two fields (checked
by the route's own functions, :mod:`attrflow_examples.json_body`), it makes the route's call
(:func:`register_subscriber_json`: the same RPC, retried the same way) and sends the
subscriber as the native module writes it, the bytes of Quart's compact jsonify of the
route's body, with the headers Quart would send.

Everything else goes to Quart with the request body as it arrived: a body that is not such
an object (Quart answers its 400 or 413), and a register that fails, which is never made
again (:func:`attrflow_examples.fast_page.hand_failure_to_quart`): a call that failed as its
COMMIT's answer was lost (a server database) may have stored its subscriber, and a lock
conflict would wait out its retries twice.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from attrflow import AttrflowError
from quart import Quart
from werkzeug.exceptions import BadRequest

from attrflow_examples.app import MAX_CONTENT_LENGTH, app_state_of
from attrflow_examples.fast_page import (
    FastPageRoute,
    answer_failures_in_quart,
    hand_failure_to_quart,
    send_json,
)
from attrflow_examples.json_body import parse_json_object, required_text
from attrflow_examples.patterns.sequentially_chunked_attribute_map.controller import (
    URL_PREFIX,
    register_subscriber_json,
)
from attrflow_examples.patterns.sequentially_chunked_attribute_map.keyed_appends import (
    IDEMPOTENCY_KEY_HEADER,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REGISTER_PATH = f"{URL_PREFIX}/register"
_IDEMPOTENCY_KEY = IDEMPOTENCY_KEY_HEADER.lower().encode("ascii")


class FastRegisterRoute:
    """An ASGI app answering the plain registers of ``quart_app`` itself.

    Everything else goes through ``app`` (``quart_app``, or an app in front of it).
    """

    def __init__(self, app: ASGIApp, quart_app: Quart) -> None:
        self.app = app
        self._app_state = app_state_of(quart_app)
        answer_failures_in_quart(quart_app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answers a plain register, or passes the request on with its body."""
        if not (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"] == REGISTER_PATH
            and not scope["query_string"]
            and all(name != _IDEMPOTENCY_KEY for name, _ in scope["headers"])
        ):
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        body = await _read_body(receive, received)
        if body is not None:
            try:
                fields = parse_json_object(body)
                subscriber_id = required_text(fields, "subscriberId")
                delivery_address = required_text(fields, "deliveryAddress")
            except BadRequest:
                pass  # Quart answers as the route does
            else:
                try:
                    subscriber = await register_subscriber_json(
                        self._app_state, subscriber_id, delivery_address
                    )
                except AttrflowError as error:
                    scope = hand_failure_to_quart(scope, error)
                else:
                    await send_json(send, subscriber)
                    return
        await self.app(scope, _replaying(received, receive), send)


async def _read_body(receive: Receive, received: list[Message]) -> bytes | None:
    """The request body, keeping every message read in ``received``.

    ``None`` once it is over ``MAX_CONTENT_LENGTH`` or the client has gone.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_CONTENT_LENGTH:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(received: list[Message], receive: Receive) -> Receive:
    """A ``receive`` giving the messages already read, then those still to come."""
    pending = deque(received)

    async def replay() -> Message:
        if pending:
            return pending.popleft()
        return await receive()

    return replay


def with_fast_routes(app: Quart) -> ASGIApp:
    """``app`` with its fast routes in front: the page reads and the registers."""
    return FastRegisterRoute(FastPageRoute(app), app)
