"""attrflow: an embedded, durable runtime for Flows holding Attributes and AttributeMaps
behind locked, atomic RPCs, stored in SQLite.

The API follows the Dex Python SDK, so code written for it runs with only its imports
changed — with no server: the client opens the store itself.

``__all__`` holds the Dex SDK's names, spelt as Dex spells them (``RPCResult``,
``RPCInvokeOptions``, ``RpcLockConflictError``), attrflow's additions, named in CapWords
with acronyms written as words (``AttrflowError``, ``AttributeMapLock``), and the errors.
The machinery behind ``@rpc`` and the built-in flows lives in the submodules.

>>> import tempfile, os
>>> from attrflow import Client, RPCInvokeOptions
>>> from attrflow.flows.chunked_subscriber import (
...     FLOW_ID, ChunkedSubscriberFlow, GetSubscriberPageInput, RegisterSubscriberInput)
>>> flow = ChunkedSubscriberFlow()
>>> with tempfile.TemporaryDirectory() as folder, Client(os.path.join(folder, "a.db")) as client:
...     _ = client.start_flow(flow, FLOW_ID)
...     added = client.invoke_rpc(
...         flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("s-1", "s-1@example.com"))
...     page = client.invoke_rpc(
...         flow.get_subscriber_page, FLOW_ID, GetSubscriberPageInput("current"),
...         options=RPCInvokeOptions(
...             load_attribute_map_instances=(flow.subscriber_chunks.load("current"),)))
>>> added.sequence, [s.subscriber_id for s in page.subscribers]
(1, ['s-1'])
"""

from attrflow._native import __version__
from attrflow.async_client import AsyncClient
from attrflow.attribute import (
    Attribute,
    AttributeLock,
    AttributeMap,
    AttributeMapLoad,
    AttributeMapLock,
)
from attrflow.client import Client
from attrflow.context import Context
from attrflow.errors import (
    AttrflowError,
    AttributeMapNotLoadedError,
    DexServiceError,
    ErrorSubStatus,
    FlowAlreadyStartedError,
    FlowDefinitionError,
    FlowNotActiveError,
    FlowNotActiveOrNotFoundError,
    FlowNotFoundError,
    FlowStoppedError,
    InvalidInputError,
    InvalidPageTokenError,
    LongPollTimeoutError,
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
from attrflow.flow import Flow, RPCResult
from attrflow.flow_info import FlowInfo, FlowStatus
from attrflow.flow_result import FlowErrorType, FlowResult
from attrflow.options import (
    IdReusePolicy,
    RPCInvokeOptions,
    StartFlowOptions,
    StopFlowOptions,
    StopType,
)
from attrflow.rpc import rpc
from attrflow.schema import PersistenceSchema, StepList

__all__ = [
    "AsyncClient",
    "AttrflowError",
    "Attribute",
    "AttributeLock",
    "AttributeMap",
    "AttributeMapLoad",
    "AttributeMapLock",
    "AttributeMapNotLoadedError",
    "Client",
    "Context",
    "DexServiceError",
    "ErrorSubStatus",
    "Flow",
    "FlowAlreadyStartedError",
    "FlowDefinitionError",
    "FlowErrorType",
    "FlowInfo",
    "FlowNotActiveError",
    "FlowNotActiveOrNotFoundError",
    "FlowNotFoundError",
    "FlowResult",
    "FlowStatus",
    "FlowStoppedError",
    "IdReusePolicy",
    "InvalidInputError",
    "InvalidPageTokenError",
    "LongPollTimeoutError",
    "PageNotFoundError",
    "PageTrimmedError",
    "PersistenceSchema",
    "RPCInvokeOptions",
    "RPCResult",
    "RecordNotFoundError",
    "RecordTrimmedError",
    "RpcLockConflictError",
    "RunNotCurrentError",
    "StartFlowOptions",
    "StepList",
    "StopFlowOptions",
    "StopType",
    "StorageError",
    "StorageFullError",
    "ValueMappingError",
    "WorkerInvocationError",
    "__version__",
    "rpc",
]
