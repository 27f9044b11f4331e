"""Type stub of ``attrflow._native``, the PyO3 bridge to the Rust core (hand-kept).

Values cross as JSON text; errors are raised as the classes of :mod:`attrflow.errors`.
Every method that touches the store releases the GIL while it runs.
"""

from typing import final

__all__ = [
    "APP_LOG_APPEND_LOG_RECORD",
    "APP_LOG_CHUNKS_MAP",
    "APP_LOG_CHUNK_SIZE",
    "APP_LOG_FLOW_TYPE",
    "APP_LOG_GET_LOG_PAGE",
    "APP_LOG_STATES_MAP",
    "CHUNKED_SUBSCRIBER_ARCHIVE_STATE_ATTRIBUTE",
    "CHUNKED_SUBSCRIBER_CHUNKS_MAP",
    "CHUNKED_SUBSCRIBER_CHUNK_SIZE",
    "CHUNKED_SUBSCRIBER_CURRENT_CHUNK_INSTANCE",
    "CHUNKED_SUBSCRIBER_FLOW_ID",
    "CHUNKED_SUBSCRIBER_FLOW_TYPE",
    "CHUNKED_SUBSCRIBER_GET_SUBSCRIBER_PAGE",
    "CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER",
    "Runtime",
    "__version__",
    "app_log_page_chunk_key",
    "archive_chunk_token",
    "instance_physical_name",
    "validate_definition_name",
    "validate_flow_id",
    "validate_subscriber_page_token",
]

__version__: str

CHUNKED_SUBSCRIBER_FLOW_TYPE: str
CHUNKED_SUBSCRIBER_FLOW_ID: str
CHUNKED_SUBSCRIBER_CURRENT_CHUNK_INSTANCE: str
CHUNKED_SUBSCRIBER_CHUNK_SIZE: int
CHUNKED_SUBSCRIBER_ARCHIVE_STATE_ATTRIBUTE: str
CHUNKED_SUBSCRIBER_CHUNKS_MAP: str
CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER: str
CHUNKED_SUBSCRIBER_GET_SUBSCRIBER_PAGE: str

APP_LOG_FLOW_TYPE: str
APP_LOG_STATES_MAP: str
APP_LOG_CHUNKS_MAP: str
APP_LOG_APPEND_LOG_RECORD: str
APP_LOG_GET_LOG_PAGE: str
APP_LOG_CHUNK_SIZE: int

@final
class Runtime:
    """One store (a path or ``sqlite:`` URL) with the built-in flow types registered."""

    def __new__(cls, url: str, synchronous: str | None = None) -> Runtime: ...
    @property
    def location(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def start_flow(
        self,
        flow_type: str,
        flow_id: str,
        ignore_already_started: bool = False,
        initial: list[tuple[str, str | None, str]] = ...,
    ) -> str:
        """Starts a flow; ``initial`` holds ``(name, instance or None, json)``. Returns the
        run ID."""
    def invoke_rpc(
        self,
        flow_type: str,
        flow_id: str,
        rpc_name: str,
        input_json: str,
        lock_instances: list[tuple[str, str]] = ...,
        load_instances: list[tuple[str, str]] = ...,
        run_id: str = ...,
    ) -> str:
        """Invokes an RPC with JSON input; returns its JSON output."""
    def close(self) -> None: ...

def validate_flow_id(flow_id: str) -> None: ...
def validate_definition_name(what: str, name: str) -> None: ...
def instance_physical_name(map: str, instance: str) -> str: ...
def validate_subscriber_page_token(token: str) -> None: ...
def archive_chunk_token(first_sequence: int) -> str: ...
def app_log_page_chunk_key(log: str, page_token: str) -> str: ...
