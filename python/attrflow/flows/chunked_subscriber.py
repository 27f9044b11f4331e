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
"""

from __future__ import annotations

from dataclasses import dataclass

from attrflow import _native
from attrflow.attribute import Attribute, AttributeMap
from attrflow.flow import Flow, core_rpc

__all__ = [
    "ARCHIVE_STATE_ATTRIBUTE",
    "CURRENT_CHUNK_INSTANCE",
    "FLOW_ID",
    "FLOW_TYPE",
    "GET_SUBSCRIBER_PAGE",
    "REGISTER_SUBSCRIBER",
    "SUBSCRIBER_CHUNKS_MAP",
    "SUBSCRIBER_CHUNK_SIZE",
    "ChunkedSubscriberFlow",
    "GetSubscriberPageInput",
    "RegisterSubscriberInput",
    "Subscriber",
    "SubscriberArchiveState",
    "SubscriberChunk",
    "SubscriberPage",
    "archive_chunk_token",
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


@dataclass
class Subscriber:
    """One archived subscriber; ``sequence`` counts from 1 without gaps."""

    sequence: int
    subscriber_id: str
    delivery_address: str


@dataclass
class SubscriberChunk:
    """One chunk of the archive, oldest subscriber first."""

    subscribers: list[Subscriber]


@dataclass
class SubscriberArchiveState:
    """The archive's bookkeeping: the next sequence and the newest archived chunk's token
    (``""`` before the first archive)."""

    next_sequence: int
    latest_archived_chunk_token: str = ""


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


class ChunkedSubscriberFlow(Flow):
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


def validate_subscriber_page_token(token: str) -> None:
    """Checks a page token by the core's rules; raises ``InvalidPageTokenError`` with
    ``invalid page token "<token>"``."""
    _native.validate_subscriber_page_token(token)


def archive_chunk_token(first_sequence: int) -> str:
    """The archive token of the chunk starting at ``first_sequence``.

    >>> archive_chunk_token(101)
    '00000000000000000101'
    """
    return _native.archive_chunk_token(first_sequence)
