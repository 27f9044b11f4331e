"""The exceptions attrflow raises.

Every kind of error of the Rust core maps onto exactly one class here (the table
:data:`CORE_ERROR_CLASSES`), raised with the core's message unchanged and the core's
fields as attributes. All share the base :class:`AttrflowError`, whose ``message``
attribute holds that text; some also derive from the built-in exception a caller would
naturally catch (``ValueError`` for bad input, ``LookupError`` for something that does not
exist). :class:`FlowDefinitionError` and :class:`ValueMappingError` are raised by the
Python layer itself.

Only :class:`RpcLockConflictError` is worth retrying unchanged.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar

from attrflow.flow_info import FlowStatus

__all__ = [
    "CORE_ERROR_CLASSES",
    "AttrflowError",
    "AttributeMapNotLoadedError",
    "DexServiceError",
    "ErrorSubStatus",
    "FlowAlreadyStartedError",
    "FlowDefinitionError",
    "FlowNotActiveError",
    "FlowNotActiveOrNotFoundError",
    "FlowNotFoundError",
    "FlowStoppedError",
    "InvalidInputError",
    "InvalidPageTokenError",
    "LongPollTimeoutError",
    "PageNotFoundError",
    "PageTrimmedError",
    "RecordNotFoundError",
    "RecordTrimmedError",
    "RpcLockConflictError",
    "RunNotCurrentError",
    "StorageError",
    "StorageFullError",
    "ValueMappingError",
    "WorkerInvocationError",
    "from_core_error",
]


class AttrflowError(Exception):
    """Base class of every attrflow error. ``message`` is the full description."""

    message: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ErrorSubStatus(Enum):
    """Dex's finer classification of a service error, with Dex's names and values: what
    ``DexServiceError.sub_status`` holds, so code that tells errors apart by it (``if
    error.sub_status is ErrorSubStatus.FLOW_NOT_EXISTS``) runs unchanged."""

    UNCATEGORIZED = "uncategorized"
    FLOW_ALREADY_STARTED = "flow_already_started"
    FLOW_NOT_EXISTS = "flow_not_exists"
    WORKER_API_ERROR = "worker_api_error"
    LONG_POLL_TIMEOUT = "long_poll_timeout"


class DexServiceError(AttrflowError):
    """The outcome of a call on a flow that Dex reports as a service error (Dex's base of the
    same name): ``detail`` is the message, ``operation`` the client method that failed
    (``"start_flow"``, ``"invoke_rpc"``, ``"get_attribute"``, ``"stop_flow"``, ...),
    ``flow_id`` the flow it targeted (both empty when raised outside a client call) and
    ``sub_status`` Dex's :class:`ErrorSubStatus` of the class, as Dex's client sets it. Dex's
    gRPC ``code`` has no counterpart: there is no server."""

    sub_status: ClassVar[ErrorSubStatus] = ErrorSubStatus.UNCATEGORIZED
    flow_id: str
    operation: str

    def __init__(self, message: str, flow_id: str = "") -> None:
        super().__init__(message)
        self.flow_id = flow_id
        self.operation = ""

    @property
    def detail(self) -> str:
        """The message, by Dex's name for it."""
        return self.message


class RpcLockConflictError(DexServiceError):
    """Another call holds a lock this RPC needs (or another process holds the store's write
    lock for longer than its busy timeout). Nothing was read or written; retry, ideally with
    a short backoff."""

    sub_status = ErrorSubStatus.WORKER_API_ERROR


class FlowNotFoundError(DexServiceError, LookupError):
    """No flow with this ID has been started in the store."""

    sub_status = ErrorSubStatus.FLOW_NOT_EXISTS


class FlowNotActiveOrNotFoundError(FlowNotFoundError):
    """An RPC or a stop found no running flow with this ID, under Dex's name for it:
    the flow was never started, or (:class:`FlowStoppedError`) was stopped. Also a
    :class:`FlowNotFoundError`, and :data:`FlowNotActiveError` names the same class, as older
    Dex SDKs spelt it."""


class FlowStoppedError(FlowNotActiveOrNotFoundError):
    """The flow was stopped with ``stop_flow``: it serves no RPCs and is not stopped twice,
    until ``start_flow`` begins a new run under its ID (``IdReusePolicy``). ``status`` says
    how it ended (``describe_flow`` says when and why); its values stay readable with
    ``get_attribute`` until then."""

    status: FlowStatus

    def __init__(self, message: str, flow_id: str = "", status: str = "canceled") -> None:
        super().__init__(message, flow_id)
        self.status = FlowStatus(status)


FlowNotActiveError = FlowNotActiveOrNotFoundError
"""The name older Dex SDKs give :class:`FlowNotActiveOrNotFoundError`."""


class LongPollTimeoutError(DexServiceError):
    """A wait (``wait_for_attribute_equal``) ended before its condition was seen, as Dex's
    error of the same name says. Nothing changed; wait again if the condition still
    matters."""

    sub_status = ErrorSubStatus.LONG_POLL_TIMEOUT


class FlowAlreadyStartedError(DexServiceError):
    """A flow with this ID already has a run and the start's ``id_reuse_policy`` does not
    begin another: ``status`` is ``FlowStatus.RUNNING`` for a running flow (the start did
    not ask to ignore that), or how the existing run was stopped when the policy does not
    start the ID again after a run that ended so."""

    sub_status = ErrorSubStatus.FLOW_ALREADY_STARTED
    run_id: str
    status: FlowStatus

    def __init__(
        self, message: str, flow_id: str = "", run_id: str = "", status: str = "running"
    ) -> None:
        super().__init__(message, flow_id)
        self.run_id = run_id
        self.status = FlowStatus(status)


class InvalidInputError(AttrflowError, ValueError):
    """Input broke a rule: a bad name or flow ID, a missing field, malformed JSON."""


class RunNotCurrentError(InvalidInputError):
    """A call pinned to one run of a flow (an RPC's ``run_id``, a tail resumed in the run it
    read) found the flow in another run: it was started again since, or the run ID was never
    its. Nothing ran. A log's sequences count within one run, so a reader holding a position
    in ``run_id`` starts over in ``current_run_id``, from sequence 0.

    An :class:`InvalidInputError`, as a run ID that is not the flow's always was."""

    flow_id: str
    run_id: str
    current_run_id: str

    def __init__(
        self, message: str, flow_id: str = "", run_id: str = "", current_run_id: str = ""
    ) -> None:
        super().__init__(message)
        self.flow_id = flow_id
        self.run_id = run_id
        self.current_run_id = current_run_id


class InvalidPageTokenError(InvalidInputError):
    """A page token is neither ``""``, ``current`` nor a 20-digit chunk boundary."""

    token: str

    def __init__(self, message: str, token: str = "") -> None:
        super().__init__(message)
        self.token = token


class ValueMappingError(InvalidInputError):
    """A Python value does not match its declared type, or JSON does not decode into it.

    ``path`` names the offending field, for example ``subscribers[0].subscriberId``.
    """

    path: str

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class FlowDefinitionError(InvalidInputError):
    """A flow type defined in Python was rejected when it was registered: an unknown lock or
    load target, a map lock without an instance, a duplicate or malformed name, Steps."""


class PageNotFoundError(AttrflowError, LookupError):
    """A well-formed page token names a chunk that is not stored."""


class PageTrimmedError(AttrflowError, LookupError):
    """A page token, or the start of a read forward, names records a trim of the log
    dropped. ``oldest_token`` is the page token of the oldest retained chunk (``current``
    when no archived chunk remains) and ``oldest_sequence`` the oldest retained sequence,
    so a walk or a reader can restart there; ``token`` is the trimmed page's token."""

    token: str
    oldest_token: str
    oldest_sequence: int

    def __init__(
        self, message: str, token: str = "", oldest_token: str = "", oldest_sequence: int = 0
    ) -> None:
        super().__init__(message)
        self.token = token
        self.oldest_token = oldest_token
        self.oldest_sequence = oldest_sequence


class RecordTrimmedError(AttrflowError, LookupError):
    """A verifiable log's proof names a record a trim of the log dropped, or a log whose
    oldest records were trimmed is switched on (its tree needs every record from sequence
    1). ``sequence`` is the record asked for and ``oldest_sequence`` the oldest retained
    one, from which proofs can be asked again."""

    sequence: int
    oldest_sequence: int

    def __init__(self, message: str, sequence: int = 0, oldest_sequence: int = 0) -> None:
        super().__init__(message)
        self.sequence = sequence
        self.oldest_sequence = oldest_sequence


class RecordNotFoundError(AttrflowError, LookupError):
    """A lookup by key found no stored record, such as a customer profile by email."""


class AttributeMapNotLoadedError(AttrflowError):
    """An RPC read a map instance that it neither loaded by definition nor per call."""

    physical_name: str

    def __init__(self, message: str, physical_name: str = "") -> None:
        super().__init__(message)
        self.physical_name = physical_name


class WorkerInvocationError(DexServiceError):
    """An RPC handler failed; nothing it wrote was stored.

    ``worker_error_type`` names the handler's error type when known (empty otherwise);
    ``worker_error_detail`` is the handler's own message.
    """

    sub_status = ErrorSubStatus.WORKER_API_ERROR
    worker_error_type: str
    worker_error_detail: str

    def __init__(
        self, message: str, worker_error_type: str = "", worker_error_detail: str = ""
    ) -> None:
        super().__init__(message)
        self.worker_error_type = worker_error_type
        self.worker_error_detail = worker_error_detail or message


class StorageError(DexServiceError):
    """The store could not be opened, read or written, or holds data attrflow cannot
    decode; also raised by a call on a closed client. A :class:`DexServiceError`, as Dex
    reports a service that cannot perform a call, so Dex code that waits for its service
    with ``except DexServiceError`` around ``health_check`` runs unchanged."""


class StorageFullError(StorageError):
    """The store's disk is full. Nothing of the failed call was written; the store works
    again, unchanged, once space is freed."""


CORE_ERROR_CLASSES: MappingProxyType[str, type[AttrflowError]] = MappingProxyType(
    {
        "lock_conflict": RpcLockConflictError,
        "flow_not_found": FlowNotActiveOrNotFoundError,
        "flow_not_active": FlowStoppedError,
        "flow_already_started": FlowAlreadyStartedError,
        "invalid_input": InvalidInputError,
        "run_not_current": RunNotCurrentError,
        "invalid_page_token": InvalidPageTokenError,
        "page_not_found": PageNotFoundError,
        "page_trimmed": PageTrimmedError,
        "record_trimmed": RecordTrimmedError,
        "record_not_found": RecordNotFoundError,
        "attribute_map_not_loaded": AttributeMapNotLoadedError,
        "handler_failure": WorkerInvocationError,
        "storage": StorageError,
        "storage_full": StorageFullError,
    }
)
"""The one table from a core error kind (by its name in the core) to the class raised for
it."""


def annotated(error: DexServiceError, operation: str, flow_id: str) -> DexServiceError:
    """``error`` with the client ``operation`` that raised it and its target ``flow_id``
    (kept when the core already named one)."""
    error.operation = operation
    if not error.flow_id:
        error.flow_id = flow_id
    return error


def from_core_error(kind: str, message: str, **fields: Any) -> AttrflowError:
    """The exception for an error of the core: the class of ``kind`` made with the core's
    ``message`` and the error's ``fields``. The native module raises what this returns."""
    return CORE_ERROR_CLASSES[kind](message, **fields)
