"""The app factory: one Quart app serving the pattern examples on one attrflow store."""

from __future__ import annotations

import json
from http import HTTPStatus

from attrflow import StorageError
from attrflow.retry import RetryPolicy
from quart import Quart, Response, jsonify, request
from quart.json.provider import DefaultJSONProvider

from attrflow_examples.app_state import AppState
from attrflow_examples.http_errors import install_error_handlers
from attrflow_examples.lock_retry import SERVICE_RETRY
from attrflow_examples.metrics_route import create_metrics_blueprint
from attrflow_examples.patterns.hash_partitioned_attribute_map.controller import (
    URL_PREFIX as DIRECTORY_URL_PREFIX,
)
from attrflow_examples.patterns.hash_partitioned_attribute_map.controller import (
    create_hash_partitioned_attribute_map_blueprint,
    start_directory,
)
from attrflow_examples.patterns.sequentially_chunked_attribute_map.controller import (
    URL_PREFIX,
    create_sequentially_chunked_attribute_map_blueprint,
    start_archive,
)
from attrflow_examples.patterns.sequentially_chunked_attribute_map.verifiable_log import (
    make_verifiable,
)

MAX_CONTENT_LENGTH = 64 * 1024
"""The largest request body accepted, in bytes; a larger one is answered with 413."""

_APP_STATE_KEY = "attrflow_examples"


class _InsertionOrderJSONProvider(DefaultJSONProvider):
    """Writes JSON keys in the order the routes build them (Quart sorts them by default)."""

    sort_keys = False


def create_app(
    store: str,
    *,
    start_flow: bool = True,
    lock_retry: RetryPolicy | None = None,
    checkpoint_key: str | None = None,
) -> Quart:
    """The app, serving every route on the attrflow store ``store``.

    Args:
        store: A SQLite file path, a ``sqlite:`` or a ``postgresql://`` URL; opened when the
            app starts serving and closed when it stops.
        start_flow: Start the subscriber archive and the customer directory (idempotently)
            at start-up, so that a fresh service answers at once. Without it, calls before
            ``POST .../start`` are 404s.
        lock_retry: How long to retry a call that meets a held lock before answering 409;
            by default about two seconds.
        checkpoint_key: The note signer key text (``PRIVATE+KEY+...``) that signs the
            archive's checkpoints (``GET .../checkpoint``); with it, the archive is made
            verifiable at start-up (when ``start_flow``). Without it, checkpoints are off.
    """
    app = Quart(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_CONTENT_LENGTH
    app.json = _InsertionOrderJSONProvider(app)
    app_state = AppState(
        store, lock_retry=lock_retry or SERVICE_RETRY, checkpoint_key=checkpoint_key
    )
    app.extensions[_APP_STATE_KEY] = app_state

    @app.before_serving
    async def open_store() -> None:
        app_state.open()
        if start_flow:
            await start_archive(app_state)
            await start_directory(app_state)
            if checkpoint_key is not None:
                await make_verifiable(app_state)

    @app.after_serving
    async def close_store() -> None:
        app_state.close()

    @app.after_request
    async def options_as_json(response: Response) -> Response:
        """Quart answers ``OPTIONS`` itself with an empty HTML body; it is JSON here too."""
        if request.method == "OPTIONS" and response.mimetype == "text/html":
            response.set_data(json.dumps({"allow": sorted(response.allow)}))
            response.mimetype = "application/json"
        return response

    @app.get("/healthz")
    async def healthz() -> Response:
        """200 when the store answers (``AsyncClient.health_check``), else a 503 saying why."""
        try:
            await app_state.client.health_check()
        except StorageError as error:
            response = jsonify({"status": "unavailable", "error": error.message})
            response.status_code = HTTPStatus.SERVICE_UNAVAILABLE
            return response
        return jsonify({"status": "ok"})

    app.register_blueprint(create_sequentially_chunked_attribute_map_blueprint(app_state))
    app.register_blueprint(create_hash_partitioned_attribute_map_blueprint(app_state))
    app.register_blueprint(create_metrics_blueprint())
    install_error_handlers(
        app,
        flow_not_found_hint=f"start it with POST {URL_PREFIX}/start",
        pattern_prefixes=(URL_PREFIX, DIRECTORY_URL_PREFIX),
    )
    return app


def app_state_of(app: Quart) -> AppState:
    """The shared state of an app made by :func:`create_app`."""
    app_state = app.extensions[_APP_STATE_KEY]
    assert isinstance(app_state, AppState)
    return app_state
