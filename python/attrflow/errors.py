"""The exceptions attrflow raises.

Every error of the Rust core maps onto exactly one class here, raised with the core's
message unchanged. All share the base :class:`AttrflowError`, whose ``message`` attribute
holds that text; some also derive from the built-in exception a caller would naturally
catch (``ValueError`` for bad input, ``LookupError`` for something that does not exist).

Only :class:`RpcLockConflictError` is worth retrying unchanged.
"""

from __future__ import annotations

__all__ = [
    "AttrflowError",
    "AttributeMapNotLoadedError",
    "FlowAlreadyStartedError",
    "FlowDefinitionError",
    "FlowNotFoundError",
    "InvalidInputError",
    "InvalidPageTokenError",
    "PageNotFoundError",
    "RPCLockConflictError",
    "RecordNotFoundError",
    "RpcLockConflictError",
    "StorageError",
    "StorageFullError",
    "ValueMappingError",
    "WorkerInvocationError",
]


class AttrflowError(Exception):
    """Base class of every attrflow error. ``message`` is the full description."""

    message: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RpcLockConflictError(AttrflowError):
    """Another call holds a lock this RPC needs (or another process holds the store's write
    lock for longer than its busy timeout). Nothing was read or written; retry, ideally with
    a short backoff."""


RPCLockConflictError = RpcLockConflictError
"""Alias of :class:`RpcLockConflictError`, the spelling of the Dex Go and Java SDKs."""


class FlowNotFoundError(AttrflowError, LookupError):
    """No flow with this ID has been started in the store."""

    flow_id: str

    def __init__(self, message: str, flow_id: str = "") -> None:
        super().__init__(message)
        self.flow_id = flow_id


class FlowAlreadyStartedError(AttrflowError):
    """A flow with this ID is already running and the start did not ask to ignore that."""

    flow_id: str
    run_id: str

    def __init__(self, message: str, flow_id: str = "", run_id: str = "") -> None:
        super().__init__(message)
        self.flow_id = flow_id
        self.run_id = run_id


class InvalidInputError(AttrflowError, ValueError):
    """Input broke a rule: a bad name or flow ID, a missing field, malformed JSON."""


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


class RecordNotFoundError(AttrflowError, LookupError):
    """A lookup by key found no stored record, such as a customer profile by email."""


class AttributeMapNotLoadedError(AttrflowError):
    """An RPC read a map instance that it neither loaded by definition nor per call."""

    physical_name: str

    def __init__(self, message: str, physical_name: str = "") -> None:
        super().__init__(message)
        self.physical_name = physical_name


class WorkerInvocationError(AttrflowError):
    """An RPC handler failed; nothing it wrote was stored.

    ``worker_error_type`` names the handler's error type when known (empty otherwise);
    ``worker_error_detail`` is the handler's own message.
    """

    worker_error_type: str
    worker_error_detail: str

    def __init__(
        self, message: str, worker_error_type: str = "", worker_error_detail: str = ""
    ) -> None:
        super().__init__(message)
        self.worker_error_type = worker_error_type
        self.worker_error_detail = worker_error_detail or message


class StorageError(AttrflowError):
    """The store could not be opened, read or written, or holds data attrflow cannot
    decode; also raised by a call on a closed client."""


class StorageFullError(StorageError):
    """The store's disk is full. Nothing of the failed call was written; the store works
    again, unchanged, once space is freed."""
