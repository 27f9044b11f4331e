"""The sequentially chunked subscriber archive written as a flow module for the Dex Python
SDK: only the import of the SDK names attrflow. The tests run it on the core and compare it
with the built-in ChunkedSubscriberFlow."""

from __future__ import annotations

from dataclasses import dataclass, field

from attrflow import (
    Attribute,
    AttributeMap,
    Context,
    Flow,
    PersistenceSchema,
    RPCResult,
    StartFlowOptions,
    StepList,
    rpc,
)

FLOW_ID = "chunked-subscriber-archive"
CURRENT_INSTANCE = "current"
CHUNK_SIZE = 100
ARCHIVE_TOKEN_DIGITS = 20


@dataclass
class Subscriber:
    sequence: int
    subscriber_id: str
    delivery_address: str


@dataclass
class SubscriberArchiveState:
    next_sequence: int
    latest_archived_chunk_token: str


@dataclass
class SubscriberChunk:
    subscribers: list[Subscriber] = field(default_factory=list)


@dataclass
class RegisterSubscriberInput:
    subscriber_id: str
    delivery_address: str


@dataclass
class GetSubscriberPageInput:
    page_token: str


@dataclass
class SubscriberPage:
    page_token: str
    subscribers: list[Subscriber]
    next_page_token: str


subscriber_archive_state = Attribute("subscriber_archive_state", SubscriberArchiveState)
subscriber_chunks = AttributeMap("subscriber_chunks", SubscriberChunk)


def archive_token(first_sequence: int) -> str:
    return str(first_sequence).zfill(ARCHIVE_TOKEN_DIGITS)


def chunk_instance(page_token: str) -> str:
    if page_token in ("", CURRENT_INSTANCE):
        return CURRENT_INSTANCE
    if len(page_token) != ARCHIVE_TOKEN_DIGITS or not page_token.isdigit():
        raise ValueError(f'invalid page token "{page_token}"')
    first = int(page_token)
    if first == 0 or (first - 1) % CHUNK_SIZE != 0:
        raise ValueError(f'invalid page token "{page_token}"')
    return page_token


def start_options() -> StartFlowOptions:
    return (
        StartFlowOptions(ignore_already_started=True)
        .with_attribute(subscriber_archive_state, SubscriberArchiveState(1, ""))
        .with_attribute(subscriber_chunks, CURRENT_INSTANCE, SubscriberChunk([]))
    )


class ChunkedSubscriberFlow(Flow):
    subscriber_archive_state = subscriber_archive_state
    subscriber_chunks = subscriber_chunks

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(subscriber_archive_state, subscriber_chunks)

    def get_steps(self) -> StepList:
        return StepList.empty()

    @rpc(
        name="RegisterSubscriber",
        lock_attributes=(
            subscriber_archive_state.lock(),
            subscriber_chunks.lock(CURRENT_INSTANCE),
        ),
        load_attribute_map_instances=(subscriber_chunks.load(CURRENT_INSTANCE),),
    )
    def register_subscriber(
        self, context: Context, input: RegisterSubscriberInput
    ) -> RPCResult[Subscriber]:
        if not input.subscriber_id:
            raise ValueError("subscriberId is required")
        if not input.delivery_address:
            raise ValueError("deliveryAddress is required")
        state = subscriber_archive_state.get(context)
        try:
            current = subscriber_chunks.get(context, CURRENT_INSTANCE)
        except KeyError:
            current = SubscriberChunk([])
        subscriber = Subscriber(state.next_sequence, input.subscriber_id, input.delivery_address)
        if len(current.subscribers) >= CHUNK_SIZE:
            token = archive_token(current.subscribers[0].sequence)
            subscriber_chunks.set(context, token, current)
            state.latest_archived_chunk_token = token
            current = SubscriberChunk([subscriber])
        else:
            current.subscribers.append(subscriber)
        state.next_sequence += 1
        subscriber_chunks.set(context, CURRENT_INSTANCE, current)
        subscriber_archive_state.set(context, state)
        return RPCResult(subscriber)

    @rpc(name="GetSubscriberPage")
    def get_subscriber_page(
        self, context: Context, input: GetSubscriberPageInput
    ) -> RPCResult[SubscriberPage]:
        instance = chunk_instance(input.page_token)
        try:
            chunk = subscriber_chunks.get(context, instance)
        except KeyError:
            raise LookupError(f'subscriber page "{input.page_token}" not found') from None
        if not chunk.subscribers:
            next_token = ""
        elif instance == CURRENT_INSTANCE:
            next_token = subscriber_archive_state.get(context).latest_archived_chunk_token
        else:
            first = int(instance)
            next_token = archive_token(first - CHUNK_SIZE) if first > 1 else ""
        return RPCResult(SubscriberPage(instance, list(reversed(chunk.subscribers)), next_token))
