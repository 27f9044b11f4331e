"""StartFlowOptions and RPCInvokeOptions: immutable copies, checked arguments, and initial
values and per-call selectors that reach the core."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from archive_support import Archive

from attrflow import (
    Client,
    FlowAlreadyStartedError,
    FlowNotFoundError,
    IdReusePolicy,
    InvalidInputError,
    RPCInvokeOptions,
    StartFlowOptions,
    ValueMappingError,
)
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    RegisterSubscriberInput,
    Subscriber,
    SubscriberArchiveState,
    SubscriberChunk,
)


def test_with_attribute_returns_a_new_copy_in_call_order(flow: ChunkedSubscriberFlow) -> None:
    base = StartFlowOptions(ignore_already_started=True)
    state = base.with_attribute(flow.archive_state, SubscriberArchiveState(5))
    both = state.with_attribute(flow.subscriber_chunks, "current", SubscriberChunk([]))
    assert base.initial_attributes == ()
    assert [v.attribute for v in state.initial_attributes] == [flow.archive_state]
    assert [(v.attribute.name, v.instance) for v in both.initial_attributes] == [
        ("subscriber_archive_state", None),
        ("subscriber_chunks", "current"),
    ]
    assert both.ignore_already_started is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        both.ignore_already_started = False  # type: ignore[misc]


def test_a_map_instance_must_be_a_non_empty_str(flow: ChunkedSubscriberFlow) -> None:
    options = StartFlowOptions()
    with pytest.raises(TypeError, match="must be a str"):
        options.with_attribute(flow.subscriber_chunks, 7, SubscriberChunk([]))  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="must not be empty") as raised:
        options.with_attribute(flow.subscriber_chunks, "", SubscriberChunk([]))
    assert isinstance(raised.value, InvalidInputError)
    with pytest.raises(InvalidInputError, match="must not contain '/'"):
        options.with_attribute(flow.subscriber_chunks, "a/b", SubscriberChunk([]))


def test_with_attribute_checks_arity_and_value(flow: ChunkedSubscriberFlow) -> None:
    options = StartFlowOptions()
    with pytest.raises(TypeError, match="takes \\(attribute_map, instance, value\\)"):
        options.with_attribute(flow.subscriber_chunks, SubscriberChunk([]))  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="only an AttributeMap takes an instance"):
        options.with_attribute(flow.archive_state, "x", SubscriberArchiveState(1))  # type: ignore[call-overload]
    with pytest.raises(ValueMappingError, match="initial value of subscriber_archive_state"):
        options.with_attribute(flow.archive_state, SubscriberChunk([]))  # type: ignore[misc]


def test_timeouts_and_request_ids() -> None:
    assert StartFlowOptions(timeout=None).timeout is None
    assert StartFlowOptions(timeout=0).timeout == 0
    assert StartFlowOptions(request_id="r-1").request_id == "r-1"
    with pytest.raises(ValueError, match="never time out"):
        StartFlowOptions(timeout=timedelta(seconds=30))
    with pytest.raises(ValueError, match="never time out"):
        StartFlowOptions(timeout=5)
    with pytest.raises(TypeError):
        StartFlowOptions(ignore_already_started="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "policy",
    [
        IdReusePolicy.DEFAULT,
        IdReusePolicy.ALLOW_IF_PREVIOUS_FAILED,
        IdReusePolicy.ALLOW_IF_NOT_RUNNING,
        IdReusePolicy.DISALLOW,
    ],
)
def test_id_reuse_policies_of_dex_refuse_a_running_flow(
    client: Client, flow: ChunkedSubscriberFlow, policy: IdReusePolicy
) -> None:
    # Written as Dex's StartFlowOptions is: its fields by keyword, None for "the default".
    options = StartFlowOptions(
        timeout=None,
        start_delay=None,
        id_reuse_policy=policy,
        cron_schedule=None,
        retry_policy=None,
        config_override=None,
    )
    run_id = client.start_flow(flow, FLOW_ID, None, options)
    with pytest.raises(FlowAlreadyStartedError):
        client.start_flow(flow, FLOW_ID, None, options)
    again = dataclasses.replace(options, ignore_already_started=True)
    assert client.start_flow(flow, FLOW_ID, None, again) == run_id


def test_dex_field_order_is_kept_for_positional_arguments() -> None:
    options = StartFlowOptions(timedelta(0), None, IdReusePolicy.DISALLOW)
    assert options.timeout == timedelta(0)
    assert options.start_delay is None
    assert options.id_reuse_policy is IdReusePolicy.DISALLOW
    assert options.ignore_already_started is False


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"start_delay": timedelta(seconds=5)}, ValueError, "no start Step to delay"),
        ({"start_delay": "5s"}, TypeError, "start_delay must be None, seconds or a timedelta"),
        ({"cron_schedule": "*/5 * * * *"}, ValueError, "do not run on a schedule"),
        ({"retry_policy": object()}, ValueError, "retry_policy=None"),
        ({"config_override": object()}, ValueError, "config_override=None"),
        ({"id_reuse_policy": "disallow"}, TypeError, "must be an IdReusePolicy"),
    ],
)
def test_start_options_attrflow_cannot_honour_are_refused(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        StartFlowOptions(**fields)  # type: ignore[arg-type]


def test_initial_values_are_what_the_first_rpc_sees(
    client: Client, flow: ChunkedSubscriberFlow
) -> None:
    earlier = [Subscriber(n, f"earlier-{n}", "earlier@example.com") for n in (1, 2)]
    options = (
        StartFlowOptions()
        .with_attribute(flow.archive_state, SubscriberArchiveState(next_sequence=3))
        .with_attribute(flow.subscriber_chunks, "current", SubscriberChunk(earlier))
    )
    client.start_flow(flow, FLOW_ID, options=options)
    added = client.invoke_rpc(
        flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("new", "new@example.com")
    )
    assert added.sequence == 3
    page = client.invoke_rpc(
        flow.get_subscriber_page,
        FLOW_ID,
        GetSubscriberPageInput("current"),
        options=RPCInvokeOptions(
            load_attribute_map_instances=(flow.subscriber_chunks.load("current"),)
        ),
    )
    assert page.subscribers == [added, *reversed(earlier)]


def test_initial_values_that_would_break_the_archive_are_refused_and_start_nothing(
    client: Client, flow: ChunkedSubscriberFlow
) -> None:
    options = StartFlowOptions().with_attribute(
        flow.archive_state, SubscriberArchiveState(next_sequence=501)
    )
    with pytest.raises(InvalidInputError, match="next sequence"):
        client.start_flow(flow, FLOW_ID, options=options)
    with pytest.raises(FlowNotFoundError):
        client.invoke_rpc(
            flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("new", "new@example.com")
        )


def test_the_core_rejects_an_initial_value_given_twice(
    client: Client, flow: ChunkedSubscriberFlow
) -> None:
    options = (
        StartFlowOptions()
        .with_attribute(flow.archive_state, SubscriberArchiveState(1))
        .with_attribute(flow.archive_state, SubscriberArchiveState(2))
    )
    with pytest.raises(InvalidInputError, match="twice"):
        client.start_flow(flow, FLOW_ID, options=options)


def test_rpc_invoke_options_take_selectors_only(flow: ChunkedSubscriberFlow) -> None:
    load = flow.subscriber_chunks.load("current")
    options = RPCInvokeOptions(load_attribute_map_instances=[load])  # type: ignore[arg-type]
    assert options.load_attribute_map_instances == (load,)
    with pytest.raises(TypeError, match=r"map\.lock\(instance\)"):
        RPCInvokeOptions(lock_attribute_map_instances=(load,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"map\.load\(instance\)"):
        RPCInvokeOptions(load_attribute_map_instances=(flow.subscriber_chunks.lock("current"),))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"map\.lock\(instance\)"):
        RPCInvokeOptions(lock_attribute_map_instances=(flow.archive_state.lock(),))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a sequence"):
        RPCInvokeOptions(load_attribute_map_instances="current")  # type: ignore[arg-type]


def test_the_core_rejects_a_duplicate_load(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    load = flow.subscriber_chunks.load("current")
    with pytest.raises(InvalidInputError, match="twice"):
        client.invoke_rpc(
            flow.get_subscriber_page,
            FLOW_ID,
            GetSubscriberPageInput("current"),
            options=RPCInvokeOptions(load_attribute_map_instances=(load, load)),
        )


def test_a_per_call_lock_is_taken(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    archive.register(1)
    page = client.invoke_rpc(
        flow.get_subscriber_page,
        FLOW_ID,
        GetSubscriberPageInput("current"),
        options=RPCInvokeOptions(
            lock_attribute_map_instances=(flow.subscriber_chunks.lock("current"),),
            load_attribute_map_instances=(flow.subscriber_chunks.load("current"),),
        ),
    )
    assert [s.sequence for s in page.subscribers] == [1]
