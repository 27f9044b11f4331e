"""The Python dataclasses that mirror the core's stored state and RPC outputs match the
core's serde structs field for field: every key of the JSON the core writes is a field of
the mirror, and every field of the mirror is a key of that JSON. States are written with
every optional part present, so nothing the core leaves out when empty goes unchecked."""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, Union

from attrflow import _native, codec
from attrflow.codec import json_name
from attrflow.flows import app_log
from attrflow.flows import chunked_subscriber as cs
from attrflow.flows import customer_directory as cd


def assert_mirrors(data: Any, tp: Any, path: str) -> None:
    """``data`` (decoded JSON the core wrote) has exactly the fields of ``tp``, nested."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = {json_name(f.name): hints[f.name] for f in dataclasses.fields(tp)}
        assert isinstance(data, dict), path
        assert set(data) == set(fields), f"{path}: core {sorted(data)}, Python {sorted(fields)}"
        for key, field_type in fields.items():
            assert_mirrors(data[key], field_type, f"{path}.{key}")
    elif origin is list:
        assert data, f"{path}: an empty list checks nothing"
        for index, item in enumerate(data):
            assert_mirrors(item, args[0], f"{path}[{index}]")
    elif origin is dict:
        assert data, f"{path}: an empty dict checks nothing"
        for key, item in data.items():
            assert_mirrors(item, args[1], f"{path}[{key}]")
    elif origin is Union:
        assert data is not None, f"{path}: null checks nothing"
        (inner,) = [arg for arg in args if arg is not type(None)]
        assert_mirrors(data, inner, path)


AS_JSON = codec.decoder(Any)
"""The core's output as plain JSON data, as ``json.loads`` would give it."""


class Core:
    """One built-in flow type on the native runtime, JSON in and out, and a probe: the same
    flow type name on a second runtime, whose one RPC returns a stored value as the core
    holds it."""

    def __init__(
        self, store_url: str, flow_type: str, flow_id: str, attributes: list[str], maps: list[str]
    ) -> None:
        self.runtime = _native.Runtime(store_url)
        self.flow_type = flow_type
        self.flow_id = flow_id
        self.runtime.start_flow(flow_type, flow_id)
        self.probe = _native.Runtime(store_url, None, False)
        self.probe.register_flow(
            flow_type, attributes, maps, [("Read", [], [], False, _read, True)]
        )

    def call(self, name: str, value: object, *, locks: Any = (), loads: Any = ()) -> Any:
        text = json.dumps(value)
        return self.runtime.call_rpc(
            _native.RpcCall(
                decoder=AS_JSON,
                what=name,
                flow_type=self.flow_type,
                flow_id=self.flow_id,
                rpc_name=name,
                input=text,
                lock_instances=list(locks),
                load_instances=list(loads),
            )
        )

    def stored(self, name: str, instance: str | None = None) -> Any:
        """The singleton Attribute ``name``, or the instance of map ``name``, as JSON."""
        loads = [] if instance is None else [(name, instance)]
        text = json.dumps([name, instance])
        return self.probe.call_rpc(
            _native.RpcCall(
                decoder=AS_JSON,
                what="Read",
                flow_type=self.flow_type,
                flow_id=self.flow_id,
                rpc_name="Read",
                input=text,
                load_instances=loads,
            )
        )


def _read(context: _native.RpcContext, input_json: str) -> str:
    name, instance = json.loads(input_json)
    if instance is None:
        return context.attribute(name) or "null"
    return context.map_instance(name, instance) or "null"


def test_the_subscriber_archive_mirrors_match_the_core(store_url: str) -> None:
    core = Core(
        store_url,
        cs.FLOW_TYPE,
        cs.FLOW_ID,
        [cs.ARCHIVE_STATE_ATTRIBUTE],
        [cs.SUBSCRIBER_CHUNKS_MAP],
    )
    for n in range(1, 102):
        subscriber = core.call(
            cs.REGISTER_SUBSCRIBER, {"subscriberId": f"s-{n}", "deliveryAddress": "a"}
        )
    assert_mirrors(subscriber, cs.Subscriber, "Subscriber")
    window = core.call(cs.SET_SUBSCRIBER_IDEMPOTENCY_WINDOW, {"maxKeys": 5, "maxAgeMs": 60_000})
    assert_mirrors(window, cs.IdempotencyWindow, "IdempotencyWindow")
    change = core.call(cs.CHANGE_SUBSCRIBER_CHUNK_SIZE, {"chunkSize": 10})
    assert_mirrors(change, cs.ChunkSizeChange, "ChunkSizeChange")
    batch = core.call(
        cs.REGISTER_SUBSCRIBERS, {"subscribers": [{"subscriberId": "b", "deliveryAddress": "a"}]}
    )
    assert_mirrors(batch, cs.RegisteredSubscribers, "RegisteredSubscribers")
    archive = (cs.SUBSCRIBER_CHUNKS_MAP, "00000000000000000001")
    page = core.call(cs.GET_SUBSCRIBER_PAGE, {"pageToken": archive[1]}, loads=[archive])
    assert_mirrors(page, cs.SubscriberPage, "SubscriberPage")

    assert_mirrors(core.stored(*archive), cs.SubscriberChunk, "SubscriberChunk")
    current = (cs.SUBSCRIBER_CHUNKS_MAP, cs.CURRENT_CHUNK_INSTANCE)
    read = core.call(cs.READ_SUBSCRIBERS_FROM, {"sequence": 101, "limit": 5}, loads=[current])
    assert_mirrors(read, cs.SubscribersFrom, "SubscribersFrom")
    trim = core.call(cs.TRIM_SUBSCRIBERS, {"keepNewest": 1000})
    assert_mirrors(trim, cs.TrimOutcome, "TrimOutcome")
    # Dropping the one archive stores the oldest retained sequence.
    retention = core.call(cs.SET_SUBSCRIBER_RETENTION, {"keepNewest": 1})
    assert_mirrors(retention, cs.RetentionChange, "RetentionChange")

    state = core.stored(cs.ARCHIVE_STATE_ATTRIBUTE)
    assert_mirrors(state, cs.SubscriberArchiveState, "SubscriberArchiveState")


def test_the_customer_directory_mirrors_match_the_core(store_url: str) -> None:
    core = Core(store_url, cd.FLOW_TYPE, cd.FLOW_ID, [], [cd.PROFILES_MAP])
    email = "alice@example.com"
    partition = (cd.PROFILES_MAP, cd.profile_partition(email))
    profile = {
        "emailAddress": email,
        "fullName": "Alice",
        "companyName": "Example",
        "customerTier": "gold",
    }
    saved = core.call(cd.UPSERT_CUSTOMER_PROFILE, profile, locks=[partition], loads=[partition])
    assert_mirrors(saved, cd.CustomerProfile, "CustomerProfile")
    assert_mirrors(core.stored(*partition), cd.CustomerProfilePartition, "Partition")


def test_the_app_log_mirrors_match_the_core(store_url: str) -> None:
    core = Core(
        store_url,
        app_log.FLOW_TYPE,
        "app-log",
        [],
        [app_log.LOG_STATES_MAP, app_log.LOG_CHUNKS_MAP],
    )
    flow = app_log.ChunkedLogFlow()
    options = flow.append_options("audit")
    locks = [
        (lock.attribute_map.name, lock.instance) for lock in options.lock_attribute_map_instances
    ]
    loads = [
        (load.attribute_map.name, load.instance) for load in options.load_attribute_map_instances
    ]
    record = {"log": "audit", "record": {"n": 1}}
    entry = core.call(app_log.APPEND_LOG_RECORD, record, locks=locks, loads=loads)
    assert_mirrors(entry, app_log.LogEntry, "LogEntry")
    current = (app_log.LOG_CHUNKS_MAP, app_log.page_chunk_key("audit", "current"))
    assert_mirrors(core.stored(*current), app_log.LogChunk, "LogChunk")
    state = core.stored(app_log.LOG_STATES_MAP, "audit")
    # The app log never changes its layout or window, so the core leaves both out; the
    # mirror is the subscriber archive's, checked whole above.
    assert set(state) == {"nextSequence", "latestArchivedChunkToken"}
    assert [f.name for f in dataclasses.fields(app_log.LogState)] == [
        f.name for f in dataclasses.fields(cs.SubscriberArchiveState)
    ]
    page = core.call(app_log.GET_LOG_PAGE, {"log": "audit", "pageToken": ""}, loads=loads)
    assert_mirrors(page, app_log.LogPage, "LogPage")
