"""HTTP routes of the sequentially chunked AttributeMap: a subscriber archive.

``POST /start`` starts the archive flow (idempotently), ``POST /register`` appends a
subscriber, ``POST /register-batch`` appends many in one transaction, and
``GET /subscribers?pageToken=`` reads one chunk, newest first, loading only that chunk's
AttributeMap instance. Both registering routes take an optional ``Idempotency-Key`` header:
a retry with the same key and body returns the first response (same sequences) instead of
appending again. ``POST /trim``, ``PUT /retention``, ``GET /subscribers?after=`` (with
``&wait=``, a long poll) and ``GET /subscribers/stream`` (Server-Sent Events) drop old
history, read forward and wait for new subscribers (:mod:`.retention`). ``GET /checkpoint``,
``GET /tree-head``, ``GET /proof/inclusion`` and ``GET /proof/consistency`` serve the archive
as a verifiable log (:mod:`.verifiable_log`). Errors are answered by
:mod:`attrflow_examples.http_errors`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from attrflow import RpcLockConflictError, StartFlowOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
    Subscriber,
)
from quart import Blueprint, Response, jsonify, request
from werkzeug.exceptions import BadRequest

from attrflow_examples.app_state import AppState
from attrflow_examples.json_body import read_json_object, required_text
from attrflow_examples.lock_retry import retry_on
from attrflow_examples.patterns.sequentially_chunked_attribute_map.keyed_appends import (
    IDEMPOTENCY_KEY_HEADER,
    register_batch,
    register_once,
)
from attrflow_examples.patterns.sequentially_chunked_attribute_map.retention import (
    set_retention,
    stream_start,
    subscriber_events,
    subscribers_after,
    trim,
)
from attrflow_examples.patterns.sequentially_chunked_attribute_map.verifiable_log import (
    checkpoint,
    consistency_proof,
    inclusion_proof,
    tree_head,
)

URL_PREFIX = "/patterns/sequentially-chunked-attribute-map"

T = TypeVar("T")


async def start_archive(app_state: AppState) -> str:
    """Starts the archive flow, or returns the running one's run ID."""
    return await app_state.client.start_flow(
        app_state.flow, FLOW_ID, None, StartFlowOptions(ignore_already_started=True)
    )


def create_sequentially_chunked_attribute_map_blueprint(
    app_state: AppState,
) -> Blueprint:
    """The pattern's routes, under :data:`URL_PREFIX`."""
    blueprint = Blueprint(
        "pattern_sequentially_chunked_attribute_map",
        __name__,
        url_prefix=URL_PREFIX,
    )

    @blueprint.post("/start")
    async def start() -> Response:
        run_id = await start_archive(app_state)
        return jsonify({"flowID": FLOW_ID, "runID": run_id})

    @blueprint.post("/register")
    async def register_subscriber() -> Response:
        body = await read_json_object()
        subscriber_id = required_text(body, "subscriberId")
        delivery_address = required_text(body, "deliveryAddress")
        idempotency_key = request.headers.get(IDEMPOTENCY_KEY_HEADER)
        if idempotency_key is not None:
            once = await register_once(app_state, idempotency_key, subscriber_id, delivery_address)
            return jsonify(subscriber_json(once))
        subscriber = await _register(
            app_state, subscriber_id, delivery_address, app_state.client.invoke_rpc
        )
        return jsonify(subscriber_json(subscriber))

    @blueprint.post("/register-batch")
    async def register_subscribers() -> Response:
        body = await read_json_object()
        key = request.headers.get(IDEMPOTENCY_KEY_HEADER)
        subscribers = await register_batch(app_state, body, key)
        return jsonify({"subscribers": [subscriber_json(s) for s in subscribers]})

    @blueprint.get("/subscribers")
    async def get_subscriber_page() -> Response:
        if "after" in request.args:
            if "pageToken" in request.args:
                raise BadRequest("pageToken and after cannot be combined")
            read = await subscribers_after(app_state, request.args)
            return jsonify(
                {
                    "subscribers": [subscriber_json(s) for s in read.subscribers],
                    "nextAfter": read.next_sequence - 1,
                    "runID": read.run_id,
                }
            )
        return jsonify(await subscriber_page(app_state, request.args.get("pageToken", "")))

    @blueprint.get("/subscribers/stream")
    async def stream_subscribers() -> Response:
        start = stream_start(request.args, request.headers)
        events = await subscriber_events(app_state, start, subscriber_json)
        response = Response(
            events, content_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )
        response.timeout = None  # the stream lasts as long as the client stays
        return response

    @blueprint.post("/trim")
    async def trim_archive() -> Response:
        return jsonify(await trim(app_state, await read_json_object()))

    @blueprint.put("/retention")
    async def set_archive_retention() -> Response:
        return jsonify(await set_retention(app_state, await read_json_object()))

    @blueprint.get("/checkpoint")
    async def get_checkpoint() -> Response:
        return jsonify(await checkpoint(app_state))

    @blueprint.get("/tree-head")
    async def get_tree_head() -> Response:
        return jsonify(await tree_head(app_state))

    @blueprint.get("/proof/inclusion")
    async def get_inclusion_proof() -> Response:
        return jsonify(await inclusion_proof(app_state, request.args))

    @blueprint.get("/proof/consistency")
    async def get_consistency_proof() -> Response:
        return jsonify(await consistency_proof(app_state, request.args))

    return blueprint


async def subscriber_page(app_state: AppState, page_token: str) -> dict[str, object]:
    """The body of ``GET /subscribers?pageToken=<page_token>`` ("" is ``current``)."""
    # The core plans the page's load from the token (and checks its form).
    page = await app_state.client.invoke_rpc(
        app_state.flow.get_subscriber_page, FLOW_ID, GetSubscriberPageInput(page_token)
    )
    return {
        "pageToken": page.page_token,
        "subscribers": [subscriber_json(s) for s in page.subscribers],
        "nextPageToken": page.next_page_token,
    }


async def subscriber_page_json(app_state: AppState, page_token: str) -> bytes:
    """:func:`subscriber_page` as the compact JSON bytes the route sends.

    The same call, its output written by the native module in the page's field order (the
    body's camelCase names and order are the stored form's), without building the
    dataclasses and dicts.
    """
    return await app_state.client.invoke_rpc_json(
        app_state.flow.get_subscriber_page, FLOW_ID, GetSubscriberPageInput(page_token)
    )


async def register_subscriber_json(
    app_state: AppState, subscriber_id: str, delivery_address: str
) -> bytes:
    """The body of ``POST /register`` (no ``Idempotency-Key``) as compact JSON bytes.

    The route's call, retried the same way, its output written by the native module in the
    subscriber's field order (the bytes the route sends), without a dataclass and a dict.
    """
    return await _register(
        app_state, subscriber_id, delivery_address, app_state.client.invoke_rpc_json
    )


async def _register(
    app_state: AppState,
    subscriber_id: str,
    delivery_address: str,
    invoke: Callable[..., Awaitable[T]],
) -> T:
    """Registers a subscriber through ``invoke``, retrying lock conflicts.

    ``invoke`` is the client's ``invoke_rpc`` or ``invoke_rpc_json``; conflicts are retried
    by the service's policy.
    """
    return await retry_on(
        RpcLockConflictError,
        lambda: invoke(
            app_state.flow.register_subscriber,
            FLOW_ID,
            RegisterSubscriberInput(subscriber_id, delivery_address),
        ),
        app_state.lock_retry,
    )


def subscriber_json(subscriber: Subscriber) -> dict[str, object]:
    """A subscriber in the HTTP API's camelCase."""
    return {
        "sequence": subscriber.sequence,
        "subscriberId": subscriber.subscriber_id,
        "deliveryAddress": subscriber.delivery_address,
    }
