"""A user-profile flow written the way Dex's entity-store pattern example writes one: an RPC-only
``Flow[None]`` whose Attributes are declared ``Attribute("name", type,
sync_to_attribute_store=True)`` and hold ``str``, ``bool``, ``int``, ``float``, ``datetime``
and a dataclass, plus the other types Dex's codec takes (an ``Enum``, ``bytes``,
``Mapping`` and ``Sequence``). Before, the declarations themselves raised ``TypeError`` and a
``datetime`` was refused by the codec."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from pathlib import Path

import pytest

from attrflow import (
    Attribute,
    AttributeMap,
    Client,
    Context,
    Flow,
    FlowDefinitionError,
    PersistenceSchema,
    RPCResult,
    StartFlowOptions,
    StepList,
    ValueMappingError,
    WorkerInvocationError,
    rpc,
)

FLOW_ID = "user-1"


class Tier(Enum):
    FREE = "free"
    GOLD = "gold"


@dataclass
class UserProfileMetadata:
    source: str
    tags: Sequence[str]
    scores: Mapping[str, int]
    tier: Tier


@dataclass
class UserProfile:
    display_name: str
    email: str
    marketing_opt_in: bool
    credits: int
    weight: float
    last_logged_in_time: datetime
    metadata: UserProfileMetadata

    def validate(self) -> None:
        if not self.display_name:
            raise ValueError("display_name is required")


class UserProfileFlow(Flow[None]):
    display_name = Attribute("display_name", str, sync_to_attribute_store=True)
    email = Attribute("email", str, sync_to_attribute_store=True)
    marketing_opt_in = Attribute("marketing_opt_in", bool, sync_to_attribute_store=True)
    credits = Attribute("credits", int, sync_to_attribute_store=True)
    weight = Attribute("weight", float, sync_to_attribute_store=True)
    last_logged_in_time = Attribute("last_logged_in_time", datetime, sync_to_attribute_store=True)
    metadata = Attribute("metadata", UserProfileMetadata, sync_to_attribute_store=True)
    avatar = Attribute("avatar", bytes)
    logins_by_day = AttributeMap("logins_by_day", dict[str, int], sync_to_attribute_store=True)

    def get_steps(self) -> StepList[None]:
        return StepList.empty()

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(
            self.display_name,
            self.email,
            self.marketing_opt_in,
            self.credits,
            self.weight,
            self.last_logged_in_time,
            self.metadata,
            self.avatar,
            self.logins_by_day,
        )

    @rpc
    def update_profile(self, context: Context, input: UserProfile) -> None:
        input.validate()
        self.display_name.set(context, input.display_name)
        self.email.set(context, input.email)
        self.marketing_opt_in.set(context, input.marketing_opt_in)
        self.credits.set(context, input.credits)
        self.weight.set(context, input.weight)
        self.last_logged_in_time.set(context, input.last_logged_in_time)
        self.metadata.set(context, input.metadata)

    @rpc
    def get_profile(self, context: Context) -> RPCResult[UserProfile]:
        return RPCResult(
            UserProfile(
                self.display_name.get(context),
                self.email.get(context),
                self.marketing_opt_in.get(context),
                self.credits.get(context),
                self.weight.get(context),
                self.last_logged_in_time.get(context),
                self.metadata.get(context),
            )
        )

    @rpc
    def set_avatar(self, context: Context, input: bytes) -> RPCResult[bytes]:
        self.avatar.set(context, input)
        return RPCResult(self.avatar.get(context))

    @rpc
    def last_login(self, context: Context) -> RPCResult[datetime]:
        return RPCResult(self.last_logged_in_time.get(context))

    @rpc
    def clear_profile(self, context: Context) -> None:
        self.display_name.delete(context)
        self.email.delete(context)
        self.marketing_opt_in.delete(context)
        self.credits.delete(context)
        self.weight.delete(context)
        self.last_logged_in_time.delete(context)
        self.metadata.delete(context)


LOGGED_IN = datetime(2026, 12, 5, 9, 30, 15, 250000, tzinfo=timezone(timedelta(hours=2)))
PROFILE = UserProfile(
    "Ann",
    "ann@example.com",
    True,
    5,
    61.5,
    LOGGED_IN,
    UserProfileMetadata("web", ["beta", "mobile"], {"quiz": 3}, Tier.GOLD),
)


@pytest.fixture
def started(store_url: str) -> Iterator[tuple[Client, UserProfileFlow]]:
    flow = UserProfileFlow()
    options = (
        StartFlowOptions()
        .with_attribute(flow.last_logged_in_time, LOGGED_IN)
        .with_attribute(flow.logins_by_day, "2026-12-05", {"web": 2})
    )
    with Client(store=store_url) as client:
        client.start_flow(flow, FLOW_ID, None, options)
        yield client, flow


def test_sync_to_attribute_store_is_kept_on_the_handle() -> None:
    assert UserProfileFlow.display_name.sync_to_attribute_store
    assert UserProfileFlow.logins_by_day.sync_to_attribute_store
    assert not UserProfileFlow.avatar.sync_to_attribute_store
    assert UserProfileFlow.last_logged_in_time.value_type is datetime


def test_a_search_index_is_refused_by_name() -> None:
    with pytest.raises(FlowDefinitionError, match="'status' declares a search index"):
        Attribute("status", str, "keyword")  # type: ignore[arg-type]


def test_a_datetime_initial_value_reads_back_equal_with_its_offset(
    started: tuple[Client, UserProfileFlow],
) -> None:
    client, flow = started
    read = client.invoke_rpc(flow.last_login, FLOW_ID)
    assert read == LOGGED_IN
    assert read is not None
    assert read.utcoffset() == timedelta(hours=2)


def test_a_profile_round_trips_with_its_datetime_enum_and_sequence(
    started: tuple[Client, UserProfileFlow],
) -> None:
    client, flow = started
    client.invoke_rpc(flow.update_profile, FLOW_ID, PROFILE)
    assert client.invoke_rpc(flow.get_profile, FLOW_ID) == PROFILE


def test_bytes_round_trip(started: tuple[Client, UserProfileFlow]) -> None:
    client, flow = started
    raw = bytes(range(256))
    assert client.invoke_rpc(flow.set_avatar, FLOW_ID, raw) == raw


def test_a_mistyped_field_is_refused_before_the_call_naming_it_and_stores_nothing(
    started: tuple[Client, UserProfileFlow],
) -> None:
    client, flow = started
    client.invoke_rpc(flow.update_profile, FLOW_ID, PROFILE)
    bad_time = UserProfile(**{**PROFILE.__dict__, "last_logged_in_time": "yesterday"})
    with pytest.raises(
        ValueMappingError, match="last_logged_in_time: expected datetime, got 'yesterday'"
    ):
        client.invoke_rpc(flow.update_profile, FLOW_ID, bad_time)
    bad_tier = UserProfile(
        **{**PROFILE.__dict__, "metadata": UserProfileMetadata("web", [], {}, "gold")}  # type: ignore[arg-type]
    )
    with pytest.raises(ValueMappingError, match=r"metadata\.tier: expected Tier, got 'gold'"):
        client.invoke_rpc(flow.update_profile, FLOW_ID, bad_tier)
    with pytest.raises(ValueMappingError, match="set_avatar: expected bytes, got 'not bytes'"):
        client.invoke_rpc(flow.set_avatar, FLOW_ID, "not bytes")  # type: ignore[arg-type]
    assert client.invoke_rpc(flow.get_profile, FLOW_ID) == PROFILE


def test_the_stored_form_is_iso_text_the_enum_value_and_base64(store_path: Path) -> None:
    flow = UserProfileFlow()
    with Client(store=store_path) as client:
        client.start_flow(flow, FLOW_ID, None)
        client.invoke_rpc(flow.update_profile, FLOW_ID, PROFILE)
        client.invoke_rpc(flow.set_avatar, FLOW_ID, b"\x00\xffpng")
    connection = sqlite3.connect(store_path)
    try:
        rows = dict(
            connection.execute(
                "SELECT name, value FROM attribute_values WHERE flow_id = ?", (FLOW_ID,)
            ).fetchall()
        )
    finally:
        connection.close()
    assert json.loads(rows["last_logged_in_time"]) == "2026-12-05T09:30:15.250000+02:00"
    assert json.loads(rows["metadata"]) == {
        "source": "web",
        "tags": ["beta", "mobile"],
        "scores": {"quiz": 3},
        "tier": "gold",
    }
    assert json.loads(rows["avatar"]) == "AP9wbmc="


def test_a_stored_value_that_does_not_fit_is_an_error_naming_the_field(store_path: Path) -> None:
    flow = UserProfileFlow()
    with Client(store=store_path) as client:
        client.start_flow(flow, FLOW_ID, None)
        client.invoke_rpc(flow.update_profile, FLOW_ID, PROFILE)
    connection = sqlite3.connect(store_path)
    try:
        with connection:
            connection.execute(
                "UPDATE attribute_values SET value = ? WHERE flow_id = ? AND name = 'metadata'",
                ('{"source":"web","tags":[],"scores":{},"tier":"platinum"}', FLOW_ID),
            )
    finally:
        connection.close()
    with (
        Client(store=store_path) as client,
        pytest.raises(WorkerInvocationError, match="tier: expected Tier, got 'platinum'"),
    ):
        client.invoke_rpc(flow.get_profile, FLOW_ID)
