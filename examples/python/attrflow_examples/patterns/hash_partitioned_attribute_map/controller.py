"""HTTP routes of the hash-partitioned AttributeMap: a customer directory.

``POST /start`` starts the directory flow (idempotently), ``PUT /customer-profile`` saves a
profile (locking and loading only its email's partition), and
``GET /customer-profile?emailAddress=`` reads one (loading only that partition), and
``DELETE /customer-profile?emailAddress=`` deletes one (locking and loading its partition).
Errors are answered by :mod:`attrflow_examples.http_errors`.
"""

from __future__ import annotations

from typing import TypeVar

from attrflow import RPCInvokeOptions, RpcLockConflictError, StartFlowOptions
from attrflow.flow import BoundRpc
from attrflow.flows.customer_directory import (
    FLOW_ID,
    CustomerProfile,
    read_options,
    upsert_options,
)
from quart import Blueprint, Response, jsonify, request
from werkzeug.exceptions import BadRequest

from attrflow_examples.app_state import AppState
from attrflow_examples.json_body import read_json_object, required_text
from attrflow_examples.lock_retry import retry_on

URL_PREFIX = "/patterns/hash-partitioned-attribute-map"

I = TypeVar("I")  # noqa: E741 - an RPC's input type

PROFILE_FIELDS = ("emailAddress", "fullName", "companyName", "customerTier")
"""The fields of a profile body, each required, in the order they are checked."""


async def start_directory(app_state: AppState) -> str:
    """Starts the directory flow, or returns the running one's run ID."""
    return await app_state.client.start_flow(
        app_state.directory_flow, FLOW_ID, None, StartFlowOptions(ignore_already_started=True)
    )


def create_hash_partitioned_attribute_map_blueprint(app_state: AppState) -> Blueprint:
    """The pattern's routes, under :data:`URL_PREFIX`."""
    blueprint = Blueprint("pattern_hash_partitioned_attribute_map", __name__, url_prefix=URL_PREFIX)

    @blueprint.post("/start")
    async def start() -> Response:
        run_id = await start_directory(app_state)
        return jsonify({"flowID": FLOW_ID, "runID": run_id})

    @blueprint.put("/customer-profile")
    async def upsert_customer_profile() -> Response:
        body = await read_json_object()
        profile = CustomerProfile(*(required_text(body, field) for field in PROFILE_FIELDS))
        # Computing the partition checks the email, with the core's message.
        options = upsert_options(profile.email_address)
        saved = await write_retrying(
            app_state, app_state.directory_flow.upsert_customer_profile, profile, options
        )
        return jsonify(profile_json(saved))

    @blueprint.get("/customer-profile")
    async def get_customer_profile() -> Response:
        email_address = email_address_argument()
        options = read_options(email_address)
        profile = await app_state.client.invoke_rpc(
            app_state.directory_flow.get_customer_profile_by_email,
            FLOW_ID,
            email_address,
            options=options,
        )
        return jsonify(profile_json(profile))

    @blueprint.delete("/customer-profile")
    async def delete_customer_profile() -> Response:
        email_address = email_address_argument()
        options = upsert_options(email_address)
        deleted = await write_retrying(
            app_state, app_state.directory_flow.delete_customer_profile, email_address, options
        )
        return jsonify(profile_json(deleted))

    return blueprint


async def write_retrying(
    app_state: AppState,
    rpc: BoundRpc[I, CustomerProfile],
    argument: I,
    options: RPCInvokeOptions,
) -> CustomerProfile:
    """Calls a writing RPC of the directory, retrying lock conflicts within budget."""
    return await retry_on(
        RpcLockConflictError,
        lambda: app_state.client.invoke_rpc(rpc, FLOW_ID, argument, options=options),
        app_state.lock_retry,
    )


def email_address_argument() -> str:
    """The request's ``emailAddress`` query argument; 400 when it is missing."""
    email_address = request.args.get("emailAddress")
    if email_address is None:
        raise BadRequest("emailAddress is required")
    return email_address


def profile_json(profile: CustomerProfile) -> dict[str, object]:
    """A profile in the HTTP API's camelCase."""
    return {
        "emailAddress": profile.email_address,
        "fullName": profile.full_name,
        "companyName": profile.company_name,
        "customerTier": profile.customer_tier,
    }
