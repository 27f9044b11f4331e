"""Type stub of ``attrflow._native``, the PyO3 bridge to the Rust core (hand-kept).

Values cross as JSON text, or are built straight into Python values by a :class:`Decoder`;
errors are raised as the classes of :mod:`attrflow.errors`. Every method that touches the
store releases the GIL while it runs; given ``done`` (a :class:`Completions` and an asyncio
future), ``Runtime.start_flow``, ``Runtime.call_rpc``, the ``tail`` methods and
``FollowCursor.next`` run it on the module's own worker threads instead, return that
future, and queue the result on the :class:`Completions`, whose ``drain`` (on the event
loop's thread) yields it.
"""

from typing import Any, Callable, final, overload

__all__ = [
    "APP_LOG_APPEND_LOG_RECORD",
    "APP_LOG_APPEND_LOG_RECORDS",
    "APP_LOG_APPEND_LOG_RECORD_ONCE",
    "APP_LOG_CHUNKS_MAP",
    "APP_LOG_CHUNK_SIZE",
    "APP_LOG_FLOW_TYPE",
    "APP_LOG_GET_LOG_PAGE",
    "APP_LOG_IDEMPOTENCY_INSTANCE",
    "APP_LOG_STATES_MAP",
    "CHUNKED_SUBSCRIBER_ARCHIVE_STATE_ATTRIBUTE",
    "CHUNKED_SUBSCRIBER_CHANGE_CHUNK_SIZE",
    "CHUNKED_SUBSCRIBER_CHUNKS_MAP",
    "CHUNKED_SUBSCRIBER_CHUNK_SIZE",
    "CHUNKED_SUBSCRIBER_CURRENT_CHUNK_INSTANCE",
    "CHUNKED_SUBSCRIBER_FLOW_ID",
    "CHUNKED_SUBSCRIBER_FLOW_TYPE",
    "CHUNKED_SUBSCRIBER_GET_SUBSCRIBER_PAGE",
    "CHUNKED_SUBSCRIBER_READ_SUBSCRIBERS_FROM",
    "CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER",
    "CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBERS",
    "CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER_ONCE",
    "CHUNKED_SUBSCRIBER_SET_IDEMPOTENCY_WINDOW",
    "CHUNKED_SUBSCRIBER_SET_RETENTION",
    "CHUNKED_SUBSCRIBER_TRIM_SUBSCRIBERS",
    "CUSTOMER_DIRECTORY_DELETE_CUSTOMER_PROFILE",
    "CUSTOMER_DIRECTORY_FLOW_ID",
    "CUSTOMER_DIRECTORY_FLOW_TYPE",
    "CUSTOMER_DIRECTORY_GET_CUSTOMER_PROFILE_BY_EMAIL",
    "CUSTOMER_DIRECTORY_PARTITION_COUNT",
    "CUSTOMER_DIRECTORY_PROFILES_MAP",
    "CUSTOMER_DIRECTORY_UPSERT_CUSTOMER_PROFILE",
    "DEFAULT_IDEMPOTENCY_MAX_AGE_MS",
    "DEFAULT_IDEMPOTENCY_MAX_KEYS",
    "ERROR_KINDS",
    "MAX_BATCH_SIZE",
    "MAX_CHUNK_SIZE",
    "MAX_IDEMPOTENCY_KEY_LEN",
    "MAX_LAYOUTS",
    "MAX_READ_RECORDS",
    "MAX_TAIL_TIMEOUT_SECONDS",
    "METRICS_SPAN_COMMIT",
    "METRICS_SPAN_HANDLER",
    "METRICS_SPAN_LOCK_WAIT",
    "METRICS_SPAN_RPC",
    "AppLog",
    "Completions",
    "CustomerDirectory",
    "Decoder",
    "FollowCursor",
    "MetricsSnapshot",
    "RetryPolicy",
    "RpcCall",
    "RpcContext",
    "Runtime",
    "SubscriberArchive",
    "__version__",
    "app_log_page_chunk_key",
    "archive_chunk_token",
    "canonical_email",
    "cli_main",
    "customer_profile_partition",
    "generate_note_key",
    "instance_physical_name",
    "metrics_snapshot",
    "note_verifier_key",
    "validate_definition_name",
    "validate_flow_id",
    "validate_idempotency_key",
    "validate_page_token_form",
    "validate_subscriber_page_token",
    "wait_for_calls",
]

__version__: str

ERROR_KINDS: list[str]
"""The name of every core error kind; ``attrflow.errors`` maps each onto one class."""

CHUNKED_SUBSCRIBER_FLOW_TYPE: str
CHUNKED_SUBSCRIBER_FLOW_ID: str
CHUNKED_SUBSCRIBER_CURRENT_CHUNK_INSTANCE: str
CHUNKED_SUBSCRIBER_CHUNK_SIZE: int
CHUNKED_SUBSCRIBER_ARCHIVE_STATE_ATTRIBUTE: str
CHUNKED_SUBSCRIBER_CHUNKS_MAP: str
CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER: str
CHUNKED_SUBSCRIBER_GET_SUBSCRIBER_PAGE: str
CUSTOMER_DIRECTORY_FLOW_TYPE: str
CUSTOMER_DIRECTORY_FLOW_ID: str
CUSTOMER_DIRECTORY_PROFILES_MAP: str
CUSTOMER_DIRECTORY_UPSERT_CUSTOMER_PROFILE: str
CUSTOMER_DIRECTORY_GET_CUSTOMER_PROFILE_BY_EMAIL: str
CUSTOMER_DIRECTORY_DELETE_CUSTOMER_PROFILE: str
CUSTOMER_DIRECTORY_PARTITION_COUNT: int

CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBERS: str
CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER_ONCE: str
CHUNKED_SUBSCRIBER_CHANGE_CHUNK_SIZE: str
CHUNKED_SUBSCRIBER_SET_IDEMPOTENCY_WINDOW: str
CHUNKED_SUBSCRIBER_TRIM_SUBSCRIBERS: str
CHUNKED_SUBSCRIBER_SET_RETENTION: str
CHUNKED_SUBSCRIBER_READ_SUBSCRIBERS_FROM: str
MAX_BATCH_SIZE: int
MAX_CHUNK_SIZE: int
MAX_LAYOUTS: int
MAX_READ_RECORDS: int
MAX_TAIL_TIMEOUT_SECONDS: float
MAX_IDEMPOTENCY_KEY_LEN: int
DEFAULT_IDEMPOTENCY_MAX_KEYS: int
DEFAULT_IDEMPOTENCY_MAX_AGE_MS: int

_Lock = tuple[str, str | None]
_Load = tuple[str, str | None]
_Rpc = tuple[str, list[_Lock], list[_Load], bool, Callable[[RpcContext, str], str], bool]

@final
class Completions:
    """The finished calls of one event loop, and the socket that wakes it."""

    def __new__(cls) -> Completions: ...
    def fileno(self) -> int:
        """Readable when calls have finished."""
    def drain(self) -> list[tuple[Any, Any, BaseException | None]]:
        """Every finished call as ``(future, value, exception)``, oldest first."""
    @property
    def running(self) -> int:
        """How many calls submitted through this queue have not finished yet."""
    def wait_for_lone_call(self, selector: int) -> bool:
        """When exactly one call is running, waits for it (GIL released) up to 200 µs or until
        ``selector`` has I/O ready; whether a finished call is queued."""
    def hold(self) -> None:
        """Until :meth:`release`, writing RPC calls submitted through this queue wait without
        waking a worker, so that one worker takes them together."""
    def release(self) -> None:
        """Ends :meth:`hold`: wakes a worker for the calls queued meanwhile."""

_Done = tuple[Completions, Any]

@final
class Decoder:
    """A type described by :func:`attrflow.codec.decoder`; builds its values from JSON."""

    def __new__(cls, nodes: list[tuple[Any, ...]]) -> Decoder: ...
    def decode_json(self, text: str, what: str) -> Any:
        """``text`` decoded as the type in one pass (a dict or ``Any`` part keeps the text's
        key order); raises ``ValueMappingError`` naming a mismatch, or saying the text is
        not JSON."""
    def encode_json(self, value: Any, what: str) -> str:
        """``value`` as compact JSON text along the type; raises ``ValueMappingError`` naming
        a mismatch."""

@final
class RpcCall:
    """One RPC call as :meth:`Runtime.call_rpc` takes it: the RPC, its input (JSON text, or
    with ``input_type`` a value encoded along it), per-call locks and loads as ``(map,
    instance)`` pairs (none: the core plans them from the input), the run (``""``: the
    current one), and the output's decoder, named ``what`` in errors."""

    def __new__(
        cls,
        *,
        decoder: Decoder,
        what: str,
        flow_type: str,
        flow_id: str,
        rpc_name: str,
        input: Any,
        lock_instances: list[tuple[str, str]] = ...,
        load_instances: list[tuple[str, str]] = ...,
        run_id: str = ...,
        input_type: Decoder | None = None,
    ) -> RpcCall: ...
    @property
    def rpc_name(self) -> str:
        """The RPC's name."""
    @property
    def flow_id(self) -> str:
        """The flow it runs on."""

@final
class RpcContext:
    """A Python handler's window on one call's snapshot and staged writes (JSON text);
    closed when the handler returns."""

    @property
    def flow_id(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    def attribute(self, name: str) -> str | None: ...
    def set_attribute(self, name: str, json: str) -> None: ...
    def map_instance(self, map: str, instance: str) -> str | None: ...
    def map_instance_keys(self, map: str) -> list[str]: ...
    def set_map_instance(self, map: str, instance: str, json: str) -> None: ...
    def delete_map_instance(self, map: str, instance: str) -> None: ...

APP_LOG_FLOW_TYPE: str
APP_LOG_STATES_MAP: str
APP_LOG_CHUNKS_MAP: str
APP_LOG_APPEND_LOG_RECORD: str
APP_LOG_GET_LOG_PAGE: str
APP_LOG_APPEND_LOG_RECORDS: str
APP_LOG_APPEND_LOG_RECORD_ONCE: str
APP_LOG_IDEMPOTENCY_INSTANCE: str
APP_LOG_CHUNK_SIZE: int

METRICS_SPAN_RPC: str
METRICS_SPAN_LOCK_WAIT: str
METRICS_SPAN_HANDLER: str
METRICS_SPAN_COMMIT: str

@final
class MetricsSnapshot:
    """The process's counters at one moment (``attrflow.metrics.Metrics`` holds them)."""

    @property
    def calls_ok(self) -> int: ...
    @property
    def calls_lock_conflict(self) -> int: ...
    @property
    def calls_error(self) -> int: ...
    @property
    def lock_conflicts(self) -> int: ...
    @property
    def members_committed(self) -> int: ...
    @property
    def calls_batched(self) -> int: ...
    @property
    def commits(self) -> int: ...
    @property
    def commit_latency_buckets(self) -> list[tuple[float, int]]: ...
    @property
    def commit_latency_sum_seconds(self) -> float: ...

def metrics_snapshot() -> MetricsSnapshot: ...

@final
class Runtime:
    """One store (a path or ``sqlite:`` URL) with the built-in flow types registered."""

    def __new__(
        cls, url: str, synchronous: str | None = None, built_in_flows: bool = True
    ) -> Runtime: ...
    @property
    def location(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @overload
    def start_flow(
        self,
        flow_type: str,
        flow_id: str,
        ignore_already_started: bool = False,
        initial: list[tuple[str, str | None, str]] = ...,
        id_reuse_policy: str | None = None,
        *,
        done: None = None,
    ) -> str:
        """Starts a flow; ``initial`` holds ``(name, instance or None, json)``;
        ``id_reuse_policy`` is an ``IdReusePolicy`` member's name (None: the default).
        Returns the run ID."""
    @overload
    def start_flow(
        self,
        flow_type: str,
        flow_id: str,
        ignore_already_started: bool = False,
        initial: list[tuple[str, str | None, str]] = ...,
        id_reuse_policy: str | None = None,
        *,
        done: _Done,
    ) -> Any:
        """Starts a flow on a worker thread; ``done``'s future receives the run ID."""
    @overload
    def call_rpc(
        self,
        call: RpcCall,
        *,
        as_json: bool = False,
        done: None = None,
    ) -> Any:
        """Invokes the RPC ``call`` names; returns its output decoded by the call's decoder,
        or with ``as_json`` as compact JSON ``bytes`` written along the decoder's type."""
    @overload
    def call_rpc(
        self,
        call: RpcCall,
        *,
        as_json: bool = False,
        done: _Done,
        in_place: bool = False,
    ) -> Any:
        """Invokes an RPC on a worker thread and returns ``done``'s future, which receives the
        output; with ``in_place``, a lone read that waits for no writer runs here instead and
        its output is returned."""
    @overload
    def get_attribute(
        self,
        flow_id: str,
        name: str,
        instance: str | None = None,
        run_id: str = ...,
        *,
        done: None = None,
    ) -> str | None:
        """The stored JSON text of an Attribute (or with ``instance`` a map instance), or
        None."""
    @overload
    def get_attribute(
        self,
        flow_id: str,
        name: str,
        instance: str | None = None,
        run_id: str = ...,
        *,
        done: _Done,
        in_place: bool = False,
    ) -> Any:
        """Reads on a worker thread and returns ``done``'s future, which receives the text
        or None; with ``in_place``, a lone read on a store whose reads wait for no writer
        runs here instead and its text is returned."""
    @overload
    def set_attribute(
        self,
        flow_id: str,
        name: str,
        instance: str | None,
        json: str,
        run_id: str = ...,
        *,
        done: None = None,
    ) -> None:
        """Writes a value's JSON text (``null`` deletes it) to an Attribute or map instance."""
    @overload
    def set_attribute(
        self,
        flow_id: str,
        name: str,
        instance: str | None,
        json: str,
        run_id: str = ...,
        *,
        done: _Done,
    ) -> Any:
        """Writes on a worker thread; ``done``'s future receives None."""
    @overload
    def wait_for_attribute_equal(
        self,
        flow_id: str,
        name: str,
        instance: str | None,
        expected: str,
        timeout: float,
        *,
        done: None = None,
    ) -> bool:
        """Waits for a value to equal ``expected`` (JSON text); False when time runs out."""
    @overload
    def wait_for_attribute_equal(
        self,
        flow_id: str,
        name: str,
        instance: str | None,
        expected: str,
        timeout: float,
        *,
        done: _Done,
    ) -> Any:
        """Waits on a worker thread; ``done``'s future receives True or False."""
    @overload
    def stop_flow(
        self, flow_id: str, stop: str, reason: str | None = None, *, done: None = None
    ) -> None:
        """Stops a flow; ``stop`` is ``"cancel"``, ``"terminate"`` or ``"fail"``."""
    @overload
    def stop_flow(self, flow_id: str, stop: str, reason: str | None = None, *, done: _Done) -> Any:
        """Stops a flow on a worker thread."""
    @overload
    def health_check(self, *, done: None = None) -> None:
        """Checks that the store answers."""
    @overload
    def health_check(self, *, done: _Done) -> Any:
        """Checks on a worker thread; ``done``'s future receives None."""
    @overload
    def describe_flow(
        self, flow_id: str, *, done: None = None
    ) -> tuple[str, str, str, str, int, int | None, str | None]:
        """``(flow_id, run_id, flow_type, status, started_at_ms, closed_at_ms, reason)``."""
    @overload
    def describe_flow(self, flow_id: str, *, done: _Done) -> Any:
        """Describes a flow on a worker thread; ``done``'s future receives the tuple."""
    @overload
    def wait_for_flow(
        self, flow_id: str, timeout: float, *, done: None = None
    ) -> tuple[str, str, str, str, int, int | None, str | None] | None:
        """Waits up to ``timeout`` seconds for the flow's run to close: ``describe_flow``'s
        tuple once it is, None when the time runs out."""
    @overload
    def wait_for_flow(self, flow_id: str, timeout: float, *, done: _Done) -> Any:
        """Waits on a worker thread; ``done``'s future receives the tuple or None."""
    def register_flow(
        self, flow_type: str, attributes: list[str], maps: list[str], rpcs: list[_Rpc]
    ) -> None:
        """Registers a flow type whose handlers are Python callables."""
    def register_built_in(self, flow_type: str) -> None:
        """Registers the built-in flow type ``flow_type``."""
    def close(self) -> None: ...

def wait_for_calls(timeout: float) -> int:
    """Waits until no call handed to a worker thread is running (or ``timeout`` seconds);
    returns how many still are."""

def validate_flow_id(flow_id: str) -> None: ...
def validate_definition_name(what: str, name: str) -> None: ...
def instance_physical_name(map: str, instance: str) -> str: ...
def validate_subscriber_page_token(token: str) -> str: ...
def archive_chunk_token(first_sequence: int) -> str: ...
def canonical_email(email_address: str) -> str: ...
def customer_profile_partition(email_address: str) -> str: ...
def validate_page_token_form(token: str) -> str: ...
def validate_idempotency_key(key: str) -> None: ...
def app_log_page_chunk_key(log: str, page_token: str) -> str: ...
def cli_main(argv: list[bytes]) -> int: ...
def generate_note_key(name: str) -> tuple[str, str]: ...
def note_verifier_key(key: str | bytes) -> str: ...

@final
class RetryPolicy:
    """The core's retry policy for lock conflicts (see :mod:`attrflow.retry`)."""

    def __new__(
        cls,
        max_attempts: int | None = None,
        first_delay: float | None = None,
        max_delay: float | None = None,
        budget: float | None = None,
    ) -> RetryPolicy: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def first_delay(self) -> float: ...
    @property
    def max_delay(self) -> float: ...
    @property
    def budget(self) -> float: ...
    def pause_before(self, retry: int, elapsed: float) -> float | None: ...

@final
class FollowCursor:
    """The core's follow cursor of one log (JSON text out)."""

    @property
    def after(self) -> int: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def limit(self) -> int: ...
    @overload
    def next(self, timeout: float, *, done: None = None) -> str: ...
    @overload
    def next(self, timeout: float, *, done: _Done) -> Any: ...

@final
class AppLog:
    """The core's typed app-log client (JSON text in and out)."""

    def __new__(
        cls, runtime: Runtime, flow_id: str, retry: RetryPolicy | None = None
    ) -> AppLog: ...
    def start(self) -> str: ...
    def append(self, log: str, record_json: str) -> str: ...
    def append_batch(
        self, log: str, records_json: str, idempotency_key: str | None = None
    ) -> str: ...
    def append_once(self, log: str, idempotency_key: str, record_json: str) -> str: ...
    def page(self, log: str, page_token: str) -> str: ...
    def trim(
        self, log: str, keep_newest: int | None = None, drop_before: int | None = None
    ) -> str: ...
    def set_retention(self, log: str, keep_newest: int | None) -> str: ...
    def read_from(
        self, log: str, sequence: int, limit: int, *, run_id: str | None = None
    ) -> str: ...
    @overload
    def tail(
        self,
        log: str,
        after: int,
        limit: int,
        timeout: float,
        *,
        run_id: str | None = None,
        done: None = None,
    ) -> str: ...
    @overload
    def tail(
        self,
        log: str,
        after: int,
        limit: int,
        timeout: float,
        *,
        run_id: str | None = None,
        done: _Done,
    ) -> Any: ...
    def follow(
        self, log: str, after: int, limit: int, *, run_id: str | None = None
    ) -> FollowCursor: ...
    def make_verifiable(self, log: str) -> str: ...
    def tree_head(self, log: str) -> str: ...
    def checkpoint(self, log: str, key: str | bytes, origin: str | None = None) -> str: ...
    def inclusion_proof(self, log: str, sequence: int, tree_size: int | None = None) -> str: ...
    def consistency_proof(self, log: str, from_: int, to: int) -> str: ...

@final
class SubscriberArchive:
    """The core's typed subscriber-archive client (JSON text in and out)."""

    def __new__(
        cls, runtime: Runtime, flow_id: str, retry: RetryPolicy | None = None
    ) -> SubscriberArchive: ...
    def start(self) -> str: ...
    def register(self, subscriber_id: str, delivery_address: str) -> str: ...
    def register_batch(self, subscribers_json: str, idempotency_key: str | None = None) -> str: ...
    def register_once(
        self, idempotency_key: str, subscriber_id: str, delivery_address: str
    ) -> str: ...
    def change_chunk_size(self, chunk_size: int) -> str: ...
    def set_idempotency_window(self, window_json: str) -> str: ...
    def page(self, page_token: str) -> str: ...
    def trim(self, keep_newest: int | None = None, drop_before: int | None = None) -> str: ...
    def set_retention(self, keep_newest: int | None) -> str: ...
    def read_from(self, sequence: int, limit: int, *, run_id: str | None = None) -> str: ...
    @overload
    def tail(
        self,
        after: int,
        limit: int,
        timeout: float,
        *,
        run_id: str | None = None,
        done: None = None,
    ) -> str: ...
    @overload
    def tail(
        self, after: int, limit: int, timeout: float, *, run_id: str | None = None, done: _Done
    ) -> Any: ...
    def follow(self, after: int, limit: int, *, run_id: str | None = None) -> FollowCursor: ...
    def make_verifiable(self) -> str: ...
    def tree_head(self) -> str: ...
    def checkpoint(self, key: str | bytes, origin: str | None = None) -> str: ...
    def inclusion_proof(self, sequence: int, tree_size: int | None = None) -> str: ...
    def consistency_proof(self, from_: int, to: int) -> str: ...

@final
class CustomerDirectory:
    """The core's typed customer-directory client (JSON text in and out)."""

    def __new__(
        cls, runtime: Runtime, flow_id: str, retry: RetryPolicy | None = None
    ) -> CustomerDirectory: ...
    def start(self) -> str: ...
    def upsert(self, profile_json: str) -> str: ...
    def get(self, email_address: str) -> str: ...
    def delete(self, email_address: str) -> str: ...
