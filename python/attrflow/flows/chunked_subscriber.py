"""``ChunkedSubscriberFlow``: the *sequentially chunked AttributeMap* pattern.

An append-only subscriber archive kept as one mutable ``current`` chunk of at most
:data:`SUBSCRIBER_CHUNK_SIZE` subscribers plus immutable archived chunks named by their
first sequence (20 digits). The RPCs run in the Rust core; this module declares the flow,
its types and the constants, all read from the core so they are never repeated here.

::

    flow = ChunkedSubscriberFlow()
    await client.start_flow(flow, FLOW_ID, options=StartFlowOptions(ignore_already_started=True))
    subscriber = await client.invoke_rpc(
        flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("s-1", "s-1@example.com")
    )
    page = await client.invoke_rpc(
        flow.get_subscriber_page,
        FLOW_ID,
        GetSubscriberPageInput(page_token),
        options=RPCInvokeOptions(
            load_attribute_map_instances=(flow.subscriber_chunks.load(page_token),)
        ),
    )

``RegisterSubscriber`` locks the state and ``current``; concurrent appends may raise
``RpcLockConflictError`` and should be retried. ``GetSubscriberPage`` reads the chunk the
caller loads per call (``current`` for the newest page) and returns it newest first with the
token of the next older page.

Beyond the seed, all run by the core:

- ``RegisterSubscribers`` (:class:`RegisterSubscribersInput`) appends up to
  :data:`MAX_BATCH_SIZE` subscribers in one transaction, crossing as many chunk boundaries
  as it needs; one bad subscriber fails the batch and nothing is stored.
- ``RegisterSubscriberOnce`` (:class:`RegisterSubscriberOnceInput`) appends under an
  idempotency key: a retry with the same key and subscriber within the archive's window
  (:class:`IdempotencyWindow`, by default the newest 100 keys of the last 24 hours)
  returns the first call's subscriber with its sequence and appends nothing, also when the
  first call committed but its reply was lost. The same key with another subscriber raises
  ``InvalidInputError``; after the key left the window, a retry is a new registration.
  A batch takes an optional key the same way.
- ``ChangeSubscriberChunkSize`` (:class:`ChangeChunkSizeInput`) moves the archive to a new
  chunk size (1 to :data:`MAX_CHUNK_SIZE`) from the next chunk boundary, at once on an empty
  archive. Every token issued before stays valid; pages walk across the change. An archive
  that never changed keeps :data:`SUBSCRIBER_CHUNK_SIZE` (100).
- ``SetSubscriberIdempotencyWindow`` (:class:`IdempotencyWindow`) sets the window.

Retention and reading forward, through :class:`SubscriberArchive` (the core's client):
:meth:`~SubscriberArchive.trim` drops whole archived chunks, oldest first (keep the newest
``n`` subscribers, or drop the chunks wholly before a sequence), leaving the rest byte for
byte; :meth:`~SubscriberArchive.set_retention` makes every registration do so;
:meth:`~SubscriberArchive.read_from` reads up to :data:`MAX_READ_RECORDS` subscribers
oldest first from a sequence. A token of a dropped chunk, or a read from a dropped
sequence, raises ``PageTrimmedError`` naming the oldest retained page and sequence.
:meth:`~SubscriberArchive.tail` waits (blocking) for subscribers after a sequence, and
``async for subscriber in archive.follow(after)`` delivers them as they are registered,
driven by the core's follow cursor (:mod:`attrflow.flows.follow`).

After a chunk-size change, check a token's form with :func:`validate_page_token_form`
before loading it; the RPC checks it against the archive's layout history.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Optional

from attrflow import _native, codec
from attrflow.async_client import AsyncClient, _submit
from attrflow.attribute import Attribute, AttributeMap
from attrflow.flow import Flow, core_rpc
from attrflow.flows.follow import FOLLOW_WAIT_SECONDS, FollowCursor
from attrflow.retry import RetryPolicy
from attrflow.verifiable import (
    ConsistencyProof,
    InclusionProof,
    TreeHead,
    consistency_proof_from_json,
    inclusion_proof_from_json,
    tree_head_from_json,
)

if TYPE_CHECKING:
    from attrflow.client import Client

__all__ = [
    "ARCHIVE_STATE_ATTRIBUTE",
    "CHANGE_SUBSCRIBER_CHUNK_SIZE",
    "CURRENT_CHUNK_INSTANCE",
    "DEFAULT_IDEMPOTENCY_WINDOW",
    "FLOW_ID",
    "FLOW_TYPE",
    "FOLLOW_WAIT_SECONDS",
    "GET_SUBSCRIBER_PAGE",
    "MAX_BATCH_SIZE",
    "MAX_CHUNK_SIZE",
    "MAX_IDEMPOTENCY_KEY_LEN",
    "MAX_READ_RECORDS",
    "MAX_TAIL_TIMEOUT_SECONDS",
    "READ_SUBSCRIBERS_FROM",
    "REGISTER_SUBSCRIBER",
    "REGISTER_SUBSCRIBERS",
    "REGISTER_SUBSCRIBER_ONCE",
    "SET_SUBSCRIBER_IDEMPOTENCY_WINDOW",
    "SET_SUBSCRIBER_RETENTION",
    "SUBSCRIBER_CHUNKS_MAP",
    "SUBSCRIBER_CHUNK_SIZE",
    "TRIM_SUBSCRIBERS",
    "ChangeChunkSizeInput",
    "ChunkLayout",
    "ChunkSizeChange",
    "ChunkedSubscriberFlow",
    "GetSubscriberPageInput",
    "IdempotencyWindow",
    "NewSubscriber",
    "RegisterSubscriberInput",
    "RegisterSubscriberOnceInput",
    "RegisterSubscribersInput",
    "RegisteredSubscribers",
    "Retention",
    "RetentionChange",
    "Subscriber",
    "SubscriberArchive",
    "SubscriberArchiveState",
    "SubscriberChunk",
    "SubscriberPage",
    "SubscribersFrom",
    "TrimOutcome",
    "archive_chunk_token",
    "validate_idempotency_key",
    "validate_page_token_form",
    "validate_subscriber_page_token",
]

FLOW_TYPE: str = _native.CHUNKED_SUBSCRIBER_FLOW_TYPE
"""The flow type, ``ChunkedSubscriberFlow``."""
FLOW_ID: str = _native.CHUNKED_SUBSCRIBER_FLOW_ID
"""The flow ID the pattern starts its one archive under."""
CURRENT_CHUNK_INSTANCE: str = _native.CHUNKED_SUBSCRIBER_CURRENT_CHUNK_INSTANCE
"""The instance key (and page token) of the open chunk."""
SUBSCRIBER_CHUNK_SIZE: int = _native.CHUNKED_SUBSCRIBER_CHUNK_SIZE
"""Subscribers per chunk; part of the stored layout."""
ARCHIVE_STATE_ATTRIBUTE: str = _native.CHUNKED_SUBSCRIBER_ARCHIVE_STATE_ATTRIBUTE
"""The name of the state Attribute."""
SUBSCRIBER_CHUNKS_MAP: str = _native.CHUNKED_SUBSCRIBER_CHUNKS_MAP
"""The name of the chunk AttributeMap."""
REGISTER_SUBSCRIBER: str = _native.CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER
"""The appending RPC's name."""
GET_SUBSCRIBER_PAGE: str = _native.CHUNKED_SUBSCRIBER_GET_SUBSCRIBER_PAGE
"""The paging RPC's name."""
REGISTER_SUBSCRIBERS: str = _native.CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBERS
"""The batch-appending RPC's name."""
REGISTER_SUBSCRIBER_ONCE: str = _native.CHUNKED_SUBSCRIBER_REGISTER_SUBSCRIBER_ONCE
"""The idempotent appending RPC's name."""
CHANGE_SUBSCRIBER_CHUNK_SIZE: str = _native.CHUNKED_SUBSCRIBER_CHANGE_CHUNK_SIZE
"""The name of the RPC that changes the chunk size of new chunks."""
SET_SUBSCRIBER_IDEMPOTENCY_WINDOW: str = _native.CHUNKED_SUBSCRIBER_SET_IDEMPOTENCY_WINDOW
"""The name of the RPC that sets the idempotency window."""
TRIM_SUBSCRIBERS: str = _native.CHUNKED_SUBSCRIBER_TRIM_SUBSCRIBERS
"""The name of the RPC that drops the oldest archived chunks (see :class:`SubscriberArchive`)."""
SET_SUBSCRIBER_RETENTION: str = _native.CHUNKED_SUBSCRIBER_SET_RETENTION
"""The name of the RPC that sets the retention every registration applies."""
READ_SUBSCRIBERS_FROM: str = _native.CHUNKED_SUBSCRIBER_READ_SUBSCRIBERS_FROM
"""The name of the RPC that reads subscribers forward from a sequence."""
MAX_BATCH_SIZE: int = _native.MAX_BATCH_SIZE
"""The most subscribers one ``RegisterSubscribers`` call takes."""
MAX_CHUNK_SIZE: int = _native.MAX_CHUNK_SIZE
"""The largest chunk size ``ChangeSubscriberChunkSize`` accepts."""
MAX_IDEMPOTENCY_KEY_LEN: int = _native.MAX_IDEMPOTENCY_KEY_LEN
"""The longest idempotency key (visible ASCII characters)."""
MAX_READ_RECORDS: int = _native.MAX_READ_RECORDS
"""The most records one read forward (or tail) returns."""
MAX_TAIL_TIMEOUT_SECONDS: float = _native.MAX_TAIL_TIMEOUT_SECONDS
"""The longest one tail waits, in seconds."""


@dataclass
class Subscriber:
    """One archived subscriber; ``sequence`` counts from 1 without gaps."""

    # Pages hold a hundred at a time: slots make each cheaper to build, free and keep.
    __slots__ = ("delivery_address", "sequence", "subscriber_id")

    sequence: int
    subscriber_id: str
    delivery_address: str


@dataclass
class SubscriberChunk:
    """One chunk of the archive, oldest subscriber first."""

    subscribers: list[Subscriber]


@dataclass
class ChunkLayout:
    """One layout of the archive: chunks of ``chunk_size`` from ``from_sequence`` on."""

    from_sequence: int
    chunk_size: int


@dataclass
class IdempotencyWindow:
    """How many idempotency keys the archive remembers (1 to 10000) and for how long, in
    milliseconds (at least 1); input and output of ``SetSubscriberIdempotencyWindow``."""

    max_keys: int
    max_age_ms: int


@dataclass
class Retention:
    """A log's retention: every append keeps at least the newest ``keep_newest`` records,
    dropping whole archived chunks."""

    keep_newest: int


@dataclass
class SubscriberArchiveState:
    """The archive's bookkeeping: the next sequence, the newest archived chunk's token
    (``""`` before the first archive and after a trim dropped them all), the oldest retained
    sequence (1, and not stored, until a trim), the layout history (empty, and not stored,
    while the archive keeps its default chunk size), the retention and the idempotency
    window (``None``, and not stored, while they are the defaults)."""

    next_sequence: int
    latest_archived_chunk_token: str = ""
    oldest_sequence: int = 1
    layouts: list[ChunkLayout] = field(default_factory=list)
    retention: Optional[Retention] = None  # noqa: UP045 - Python 3.9
    idempotency_window: Optional[IdempotencyWindow] = None  # noqa: UP045 - Python 3.9


@dataclass
class TrimOutcome:
    """What a trim did: the archived chunks and records it dropped, the records left, and
    the oldest retained sequence and page token (``current`` when no archive is left)."""

    dropped_chunks: int
    dropped_records: int
    retained_records: int
    oldest_sequence: int
    oldest_token: str


@dataclass
class RetentionChange:
    """What setting a retention did: the retention in force (``None``: keep everything) and
    the trim it applied at once."""

    trimmed: TrimOutcome
    retention: Optional[Retention] = None  # noqa: UP045 - Python 3.9


@dataclass
class SubscribersFrom:
    """A read forward: subscribers oldest first from the start, the sequence to read from
    next (the start again when there were none) and the archive's run read, in which those
    sequences count (a flow started again counts from 1)."""

    subscribers: list[Subscriber]
    next_sequence: int
    run_id: str


@dataclass
class RegisterSubscriberInput:
    """Input of ``RegisterSubscriber``; both fields are required (non-empty)."""

    subscriber_id: str
    delivery_address: str


@dataclass
class GetSubscriberPageInput:
    """Input of ``GetSubscriberPage``: ``""`` or ``current`` for the newest page, else an
    archive token."""

    page_token: str


@dataclass
class SubscriberPage:
    """One page, newest subscriber first, with the next older page's token (``""`` when
    there is none)."""

    page_token: str
    subscribers: list[Subscriber]
    next_page_token: str = ""


@dataclass
class NewSubscriber:
    """One subscriber of a batch, before it has a sequence; both fields are required."""

    subscriber_id: str
    delivery_address: str


@dataclass
class RegisterSubscribersInput:
    """Input of ``RegisterSubscribers``: 1 to :data:`MAX_BATCH_SIZE` subscribers, in the
    order they get their sequences, and an optional idempotency key (``""`` for none)."""

    subscribers: list[NewSubscriber]
    idempotency_key: str = ""


@dataclass
class RegisteredSubscribers:
    """Output of ``RegisterSubscribers``: the subscribers with their sequences, in the
    batch's order."""

    subscribers: list[Subscriber]


@dataclass
class RegisterSubscriberOnceInput:
    """Input of ``RegisterSubscriberOnce``; every field is required."""

    idempotency_key: str
    subscriber_id: str
    delivery_address: str


@dataclass
class ChangeChunkSizeInput:
    """Input of ``ChangeSubscriberChunkSize``: subscribers per chunk of new chunks."""

    chunk_size: int


@dataclass
class ChunkSizeChange:
    """Output of ``ChangeSubscriberChunkSize``: the size, the first sequence it applies
    from, and the whole layout history afterwards, oldest first."""

    chunk_size: int
    from_sequence: int
    layouts: list[ChunkLayout] = field(default_factory=list)


DEFAULT_IDEMPOTENCY_WINDOW = IdempotencyWindow(
    _native.DEFAULT_IDEMPOTENCY_MAX_KEYS, _native.DEFAULT_IDEMPOTENCY_MAX_AGE_MS
)
"""The window of an archive that never set one: 100 keys, 24 hours."""


class ChunkedSubscriberFlow(Flow[None]):
    """The subscriber archive: an RPC-only flow, started once under :data:`FLOW_ID`."""

    flow_type = FLOW_TYPE

    archive_state = Attribute(ARCHIVE_STATE_ATTRIBUTE, SubscriberArchiveState)
    """The archive's state (``subscriber_archive_state``)."""
    subscriber_chunks = AttributeMap(SUBSCRIBER_CHUNKS_MAP, SubscriberChunk)
    """The chunks (``subscriber_chunks``), by ``current`` or archive token."""

    register_subscriber = core_rpc(REGISTER_SUBSCRIBER, RegisterSubscriberInput, Subscriber)
    """Appends a subscriber and returns it with its sequence."""
    get_subscriber_page = core_rpc(GET_SUBSCRIBER_PAGE, GetSubscriberPageInput, SubscriberPage)
    """Reads one page; the caller loads the token's chunk per call."""
    register_subscribers = core_rpc(
        REGISTER_SUBSCRIBERS, RegisterSubscribersInput, RegisteredSubscribers
    )
    """Appends a batch of subscribers in one transaction."""
    register_subscriber_once = core_rpc(
        REGISTER_SUBSCRIBER_ONCE, RegisterSubscriberOnceInput, Subscriber
    )
    """Appends a subscriber under an idempotency key; a retry returns the first result."""
    change_chunk_size = core_rpc(
        CHANGE_SUBSCRIBER_CHUNK_SIZE, ChangeChunkSizeInput, ChunkSizeChange
    )
    """Moves new chunks to another size from the next chunk boundary."""
    set_idempotency_window = core_rpc(
        SET_SUBSCRIBER_IDEMPOTENCY_WINDOW, IdempotencyWindow, IdempotencyWindow
    )
    """Sets how many idempotency keys are remembered, and for how long."""


class SubscriberArchive:
    """The core's typed subscriber-archive client for the archive ``flow_id`` of
    ``client``'s store (a :class:`~attrflow.Client`, or the one an
    :class:`~attrflow.AsyncClient` holds; its calls block, so run them off the event loop,
    or use the ``*_async`` and ``follow`` ones).

    Exactly the core client's operations: registrations (one, a batch, once under an
    idempotency key), the chunk size and the idempotency window, pages, reads forward,
    tails and a follow cursor, trim and retention, and the verifiable log's tree head,
    checkpoints and proofs. Every call retries lock conflicts by ``retry`` (the core's
    default :class:`~attrflow.retry.RetryPolicy` when None), in the Rust core.
    """

    def __init__(
        self,
        client: Client | AsyncClient,
        flow_id: str = FLOW_ID,
        retry: RetryPolicy | None = None,
    ) -> None:
        sync = client._client if isinstance(client, AsyncClient) else client
        # The core's client calls the built-in flow type, registered on first use like any
        # flow's (an application's own flow type of that name is refused here, by name).
        sync.register_flow(ChunkedSubscriberFlow())
        self._native = _native.SubscriberArchive(sync._runtime, flow_id, retry)

    def start(self) -> str:
        """Starts the archive, or returns the running one's run ID. A stopped one is
        not started again (a new run would hold none of its values): that raises
        ``FlowStoppedError`` saying how it was stopped."""
        return self._native.start()

    def register(self, subscriber_id: str, delivery_address: str) -> Subscriber:
        """Appends a subscriber (both fields required) and returns it with its sequence."""
        output = self._native.register(subscriber_id, delivery_address)
        return codec.from_json(output, Subscriber, what="subscriber")

    def register_batch(
        self, subscribers: Sequence[NewSubscriber], idempotency_key: str | None = None
    ) -> list[Subscriber]:
        """Appends 1 to :data:`MAX_BATCH_SIZE` subscribers in one transaction, in order, and
        returns them with their sequences; one bad subscriber fails the batch and nothing
        is stored. With ``idempotency_key``, a retry returns the first call's subscribers."""
        subscribers_json = codec.to_json(list(subscribers), list[NewSubscriber], what="subscribers")
        output = self._native.register_batch(subscribers_json, idempotency_key)
        return codec.from_json(output, list[Subscriber], what="subscribers")

    def register_once(
        self, idempotency_key: str, subscriber_id: str, delivery_address: str
    ) -> Subscriber:
        """Appends a subscriber under ``idempotency_key``: a retry with the same key and
        subscriber (within the archive's window) returns the first call's subscriber; the
        same key with another subscriber raises ``InvalidInputError``."""
        output = self._native.register_once(idempotency_key, subscriber_id, delivery_address)
        return codec.from_json(output, Subscriber, what="subscriber")

    def change_chunk_size(self, chunk_size: int) -> ChunkSizeChange:
        """Moves new chunks to ``chunk_size`` (1 to :data:`MAX_CHUNK_SIZE`) subscribers from
        the next chunk boundary (at once on an empty archive); every token stays valid."""
        output = self._native.change_chunk_size(chunk_size)
        return codec.from_json(output, ChunkSizeChange, what="chunk size change")

    def set_idempotency_window(self, window: IdempotencyWindow) -> IdempotencyWindow:
        """Sets how many idempotency keys the archive remembers, and for how long."""
        window_json = codec.to_json(window, IdempotencyWindow, what="idempotency window")
        output = self._native.set_idempotency_window(window_json)
        return codec.from_json(output, IdempotencyWindow, what="idempotency window")

    def page(self, page_token: str = "") -> SubscriberPage:
        """Reads one page, newest first: ``""`` or ``current`` for the newest. A token of a
        trimmed chunk raises ``PageTrimmedError``."""
        return codec.from_json(self._native.page(page_token), SubscriberPage, what="page")

    def trim(
        self, *, keep_newest: int | None = None, drop_before: int | None = None
    ) -> TrimOutcome:
        """Drops whole archived chunks, oldest first: keeping at least the newest
        ``keep_newest`` subscribers, or every chunk wholly before the sequence
        ``drop_before`` (at most the first sequence of the open chunk). Exactly one is
        given; a value below 1, or a trim into the open chunk, raises ``InvalidInputError``.
        """
        output = self._native.trim(keep_newest, drop_before)
        return codec.from_json(output, TrimOutcome, what="trim outcome")

    def set_retention(self, keep_newest: int | None) -> RetentionChange:
        """Makes every registration keep at least the newest ``keep_newest`` subscribers
        (whole chunks), and applies it at once; ``None`` keeps every subscriber again."""
        output = self._native.set_retention(keep_newest)
        return codec.from_json(output, RetentionChange, what="retention change")

    def read_from(self, sequence: int, limit: int, *, run_id: str | None = None) -> SubscribersFrom:
        """Up to ``limit`` (1 to :data:`MAX_READ_RECORDS`) subscribers from ``sequence`` (1 or
        more) on, oldest first. A trimmed ``sequence`` raises ``PageTrimmedError``; with
        ``run_id``, an archive in another run raises ``RunNotCurrentError``."""
        output = self._native.read_from(sequence, limit, run_id=run_id)
        return codec.from_json(output, SubscribersFrom, what="subscribers")

    def tail(
        self,
        after: int,
        limit: int = 100,
        timeout: float = MAX_TAIL_TIMEOUT_SECONDS,
        *,
        run_id: str | None = None,
    ) -> SubscribersFrom:
        """Waits up to ``timeout`` seconds (at most :data:`MAX_TAIL_TIMEOUT_SECONDS`) for
        subscribers after the sequence ``after`` (0: from the start) and returns up to
        ``limit`` of them, oldest first, as soon as there are any; none on timeout. A
        registration of this process wakes it at once, one of another process within
        50 ms. Resume with ``after=result.next_sequence - 1`` and ``run_id=result.run_id``
        (or let :meth:`follow_cursor` do it): no subscriber comes twice, and an archive
        started again since (whose sequences count from 1 again) raises
        ``RunNotCurrentError`` instead of being read from the old run's position.
        """
        output = self._native.tail(after, limit, timeout, run_id=run_id)
        return codec.from_json(output, SubscribersFrom, what="subscribers")

    async def tail_async(
        self,
        after: int,
        limit: int = 100,
        timeout: float = MAX_TAIL_TIMEOUT_SECONDS,
        *,
        run_id: str | None = None,
    ) -> SubscribersFrom:
        """:meth:`tail`, awaited: it waits on a worker thread of the native module (not the
        event loop's default executor), so many waiting tails hold no loop thread."""
        tail = partial(self._native.tail, run_id=run_id)
        output: str = await _submit(tail, after, limit, timeout)
        return codec.from_json(output, SubscribersFrom, what="subscribers")

    def follow_cursor(
        self, after: int = 0, limit: int = 100, *, run_id: str | None = None
    ) -> FollowCursor[Subscriber]:
        """The core's follow cursor after ``after`` (0: from the oldest retained
        subscriber), up to ``limit`` subscribers a step, in the run ``run_id`` or else the
        run its first step reads (see :mod:`attrflow.flows.follow`)."""
        return FollowCursor(self._native.follow(after, limit, run_id=run_id), Subscriber)

    def follow(
        self, after: int = 0, limit: int = 100, *, run_id: str | None = None
    ) -> AsyncIterator[Subscriber]:
        """Every subscriber after ``after``, oldest first, as it is registered, forever:
        ``async for`` over :meth:`follow_cursor`. An archive started again meanwhile raises
        ``RunNotCurrentError`` (whose ``current_run_id`` a follower may follow from 0)."""
        return self.follow_cursor(after, limit, run_id=run_id).__aiter__()

    def make_verifiable(self) -> TreeHead:
        """Makes the archive's log verifiable (idempotent; the tree covers every subscriber
        from sequence 1) and returns its tree head."""
        return tree_head_from_json(self._native.make_verifiable())

    def tree_head(self) -> TreeHead:
        """The tree head: the subscriber count and the RFC 6962 root hash."""
        return tree_head_from_json(self._native.tree_head())

    def checkpoint(self, key: str | bytes, origin: str | None = None) -> str:
        """The newest tree head as a C2SP checkpoint, a signed note signed with the signer
        key ``key`` (its text, or the bytes of a key file; used for this call only, never
        stored); ``origin`` defaults to ``attrflow/<flow ID>/subscribers``."""
        return self._native.checkpoint(key, origin)

    def inclusion_proof(self, sequence: int, tree_size: int | None = None) -> InclusionProof:
        """The inclusion proof of subscriber ``sequence`` in the tree of ``tree_size``
        subscribers (the newest when None)."""
        return inclusion_proof_from_json(self._native.inclusion_proof(sequence, tree_size))

    def consistency_proof(self, from_: int, to: int) -> ConsistencyProof:
        """The consistency proof between tree sizes ``from_`` and ``to``."""
        return consistency_proof_from_json(self._native.consistency_proof(from_, to))


def validate_subscriber_page_token(token: str) -> str:
    """Checks a page token by the core's rules and returns the token to load and read, as
    the Dex pattern's validator does: ``current`` for ``""``, the token itself otherwise.
    Raises ``InvalidPageTokenError`` (a ``ValueError``) with ``invalid page token "<token>"``.

    >>> validate_subscriber_page_token("")
    'current'
    >>> validate_subscriber_page_token("00000000000000000101")
    '00000000000000000101'
    """
    return _native.validate_subscriber_page_token(token)


def archive_chunk_token(first_sequence: int) -> str:
    """The archive token of the chunk starting at ``first_sequence``.

    >>> archive_chunk_token(101)
    '00000000000000000101'
    """
    return _native.archive_chunk_token(first_sequence)


def validate_page_token_form(token: str) -> str:
    """Checks only a token's form (``""``, ``current`` or 20 digits, not all zero), as a
    caller does before loading the token's chunk under any layout history, and returns the
    token to load and read (``current`` for ``""``); raises ``InvalidPageTokenError``."""
    return _native.validate_page_token_form(token)


def validate_idempotency_key(key: str) -> None:
    """Checks an idempotency key (1 to :data:`MAX_IDEMPOTENCY_KEY_LEN` visible ASCII
    characters); raises ``InvalidInputError``."""
    _native.validate_idempotency_key(key)
