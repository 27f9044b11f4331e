"""The one place where errors become HTTP responses.

Every error body is JSON, ``{"error": "<message>"}``, Quart's own 404, 405 and 413 included;
a 410 for a trimmed page also names ``oldestToken`` and ``oldestSequence``, a 410 for a
proof of a trimmed record ``oldestSequence``, and a 409 for a run the flow is no longer in
its ``currentRunID``.
attrflow errors are mapped by class (the most specific entry of :data:`ERROR_RULES` along
the exception's MRO wins), so a user's mistake is a 4xx with the core's exact message and
only a failure of the service itself is a 500, which is logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus

from attrflow import (
    AttrflowError,
    AttributeMapNotLoadedError,
    FlowAlreadyStartedError,
    FlowNotFoundError,
    FlowStoppedError,
    InvalidInputError,
    InvalidPageTokenError,
    PageNotFoundError,
    PageTrimmedError,
    RecordNotFoundError,
    RecordTrimmedError,
    RpcLockConflictError,
    RunNotCurrentError,
    StorageError,
    StorageFullError,
    ValueMappingError,
    WorkerInvocationError,
)
from quart import Quart, Response, jsonify, request
from werkzeug.exceptions import HTTPException

RETRY_AFTER_SECONDS = 1
"""What a 409 for a lock conflict tells the client to wait, in whole seconds."""

INTERNAL_ERROR_MESSAGE = "internal server error"


@dataclass(frozen=True)
class ErrorRule:
    """How one class of attrflow error is answered.

    Attributes:
        status: The HTTP status.
        retry_after: A ``Retry-After`` value in seconds, for errors a client should retry.
        hint: Text appended to the core's message, telling the caller what to do.
    """

    status: HTTPStatus
    retry_after: int | None = None
    hint: str = ""

    @property
    def is_server_fault(self) -> bool:
        """Whether the service, not the caller, is at fault (and the error is logged)."""
        return self.status >= HTTPStatus.INTERNAL_SERVER_ERROR


ERROR_RULES: dict[type[AttrflowError], ErrorRule] = {
    # Lock conflicts reach this table only once the service's own retries have run out.
    RpcLockConflictError: ErrorRule(HTTPStatus.CONFLICT, retry_after=RETRY_AFTER_SECONDS),
    FlowNotFoundError: ErrorRule(HTTPStatus.NOT_FOUND),
    # Stopped with stop_flow: it serves no calls until POST /start begins a new run.
    FlowStoppedError: ErrorRule(HTTPStatus.GONE),
    FlowAlreadyStartedError: ErrorRule(HTTPStatus.CONFLICT),
    # Also a bad Idempotency-Key header, an idempotency key reused with a different body,
    # and a batch that is empty or over the core's maximum (MAX_BATCH_SIZE).
    InvalidInputError: ErrorRule(HTTPStatus.BAD_REQUEST),
    InvalidPageTokenError: ErrorRule(HTTPStatus.BAD_REQUEST),
    # A read pinned to a run (runID, an event ID's run) of a flow started again since; the
    # body names the currentRunID a reader can start over in.
    RunNotCurrentError: ErrorRule(HTTPStatus.CONFLICT),
    PageNotFoundError: ErrorRule(HTTPStatus.NOT_FOUND),
    # A trim dropped the page (or the start of a read forward); the body names the oldest
    # retained page token and sequence, so a client can restart there.
    PageTrimmedError: ErrorRule(HTTPStatus.GONE),
    # A proof of a record a trim dropped; the body names the oldest retained sequence.
    RecordTrimmedError: ErrorRule(HTTPStatus.GONE),
    RecordNotFoundError: ErrorRule(HTTPStatus.NOT_FOUND),
    # The routes check every field before they call, so a value that does not fit its type
    # (or stored JSON that does not decode) is the service's fault, though the class is an
    # InvalidInputError.
    ValueMappingError: ErrorRule(HTTPStatus.INTERNAL_SERVER_ERROR),
    # The service asked for the wrong loads: a bug here, not the caller's mistake.
    AttributeMapNotLoadedError: ErrorRule(HTTPStatus.INTERNAL_SERVER_ERROR),
    WorkerInvocationError: ErrorRule(HTTPStatus.INTERNAL_SERVER_ERROR),
    StorageError: ErrorRule(HTTPStatus.INTERNAL_SERVER_ERROR),
    # Nothing of the call was written and the store works again once space is freed.
    StorageFullError: ErrorRule(HTTPStatus.INSUFFICIENT_STORAGE),
    AttrflowError: ErrorRule(HTTPStatus.INTERNAL_SERVER_ERROR),
}


def rule_for(error: AttrflowError, rules: dict[type[AttrflowError], ErrorRule]) -> ErrorRule:
    """The rule of the most specific class of ``error`` that ``rules`` names."""
    for cls in type(error).__mro__:
        if issubclass(cls, AttrflowError) and cls in rules:
            return rules[cls]
    return ERROR_RULES[AttrflowError]


def error_fields(error: AttrflowError) -> dict[str, object]:
    """What an error body names beside ``error``.

    That is where a trimmed log's retained records begin, or the run a flow started again
    is in now.
    """
    if isinstance(error, PageTrimmedError):
        return {"oldestToken": error.oldest_token, "oldestSequence": error.oldest_sequence}
    if isinstance(error, RecordTrimmedError):
        return {"oldestSequence": error.oldest_sequence}
    if isinstance(error, RunNotCurrentError):
        return {"currentRunID": error.current_run_id}
    return {}


def error_response(message: str, status: int, **fields: object) -> Response:
    """A JSON error response: ``{"error": message, **fields}`` with ``status``."""
    response = jsonify({"error": message, **fields})
    response.status_code = status
    return response


def install_error_handlers(
    app: Quart, *, flow_not_found_hint: str = "", pattern_prefixes: tuple[str, ...] = ()
) -> None:
    """Registers the handlers that answer every error of ``app`` with a JSON body.

    ``flow_not_found_hint`` is appended to the message of a ``FlowNotFoundError``, to say
    how the flow is started. On a route under one of ``pattern_prefixes`` the hint is
    that pattern's own ``start it with POST <prefix>/start``.
    """
    rules = dict(ERROR_RULES)
    if flow_not_found_hint:
        rules[FlowNotFoundError] = ErrorRule(HTTPStatus.NOT_FOUND, hint=flow_not_found_hint)

    async def handle_attrflow_error(error: AttrflowError) -> Response:
        rule = rule_for(error, rules)
        if rule.is_server_fault:
            app.logger.error("attrflow call failed: %s", error, exc_info=error)
        hint = rule.hint
        if isinstance(error, FlowNotFoundError) and not isinstance(error, FlowStoppedError):
            hint = next(
                (f"start it with POST {p}/start" for p in pattern_prefixes if _under(p)), hint
            )
        message = f"{error}; {hint}" if hint else str(error)
        response = error_response(message, rule.status, **error_fields(error))
        if rule.retry_after is not None:
            response.headers["Retry-After"] = str(rule.retry_after)
        return response

    async def handle_http_exception(error: HTTPException) -> Response:
        status = error.code or HTTPStatus.INTERNAL_SERVER_ERROR
        response = error_response(error.description or error.name, status)
        # Keep what the exception adds beyond its HTML body, such as a 405's Allow header.
        for name, value in error.get_headers():
            if name.lower() != "content-type":
                response.headers[name] = value
        return response

    async def handle_unexpected_error(error: Exception) -> Response:
        app.logger.error("unexpected error serving the request", exc_info=error)
        return error_response(INTERNAL_ERROR_MESSAGE, HTTPStatus.INTERNAL_SERVER_ERROR)

    app.register_error_handler(AttrflowError, handle_attrflow_error)
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(Exception, handle_unexpected_error)


def _under(prefix: str) -> bool:
    """Whether the request being answered is for a route under ``prefix``."""
    return request.path == prefix or request.path.startswith(f"{prefix}/")
