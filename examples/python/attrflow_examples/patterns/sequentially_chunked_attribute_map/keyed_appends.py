"""Batch and idempotent registration for the archive's HTTP routes.

An ``Idempotency-Key`` header (1 to 128 visible ASCII characters) makes a registration
idempotent: the core remembers the key with the subscribers it appended, in the same
transaction, so a client that retries after a timeout, a dropped connection or a crash of
the service gets the first response (same sequences) instead of a second registration. A
key is remembered while it is among the archive's newest 100 keys and younger than 24
hours; after that a retry registers anew. The same key with a different body is a 400.
"""

from __future__ import annotations

from typing import Any

from attrflow import RpcLockConflictError
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    NewSubscriber,
    RegisterSubscriberOnceInput,
    RegisterSubscribersInput,
    Subscriber,
    validate_idempotency_key,
)
from werkzeug.exceptions import BadRequest

from attrflow_examples.app_state import AppState
from attrflow_examples.json_body import required_text
from attrflow_examples.lock_retry import retry_on

IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
"""The request header carrying an idempotency key."""


async def register_once(
    app_state: AppState, key: str, subscriber_id: str, delivery_address: str
) -> Subscriber:
    """Registers one subscriber under ``key``, retrying lock conflicts."""
    flow = app_state.flow
    return await retry_on(
        RpcLockConflictError,
        lambda: app_state.client.invoke_rpc(
            flow.register_subscriber_once,
            FLOW_ID,
            RegisterSubscriberOnceInput(key, subscriber_id, delivery_address),
        ),
        app_state.lock_retry,
    )


def batch_subscribers(body: dict[str, Any]) -> list[NewSubscriber]:
    """The ``subscribers`` list of a batch body, each entry checked like a register body.

    ``BadRequest`` names the first bad entry (``subscribers[3]: subscriberId is required``).
    """
    entries = body.get("subscribers")
    if not isinstance(entries, list):
        raise BadRequest("subscribers must be a list")
    subscribers = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise BadRequest(f"subscribers[{index}] must be an object")
        try:
            subscriber_id = required_text(entry, "subscriberId")
            delivery_address = required_text(entry, "deliveryAddress")
        except BadRequest as error:
            raise BadRequest(f"subscribers[{index}]: {error.description}") from error
        subscribers.append(NewSubscriber(subscriber_id, delivery_address))
    return subscribers


async def register_batch(
    app_state: AppState, body: dict[str, Any], key: str | None
) -> list[Subscriber]:
    """Registers a batch body's subscribers in one transaction, retrying lock conflicts.

    With ``key``, the batch is idempotent. The core refuses an empty batch and one over its
    maximum (``MAX_BATCH_SIZE``).
    """
    subscribers = batch_subscribers(body)
    if key is not None:
        validate_idempotency_key(key)  # an empty header is a bad key, not "no key"
    flow = app_state.flow
    registered = await retry_on(
        RpcLockConflictError,
        lambda: app_state.client.invoke_rpc(
            flow.register_subscribers,
            FLOW_ID,
            RegisterSubscribersInput(subscribers, key or ""),
        ),
        app_state.lock_retry,
    )
    return registered.subscribers
