"""The Dex Python SDK's surface, as Dex code uses it: subscripted generics under
``from __future__ import annotations``, flow types named like built-in ones, plain ``str`` and
``int`` RPC inputs, ``dict[str, Dataclass]`` fields, unset singletons reading as their type's
default, ``@rpc(timeout=timedelta(...))``, ``get_flow_type`` and ``request_id``; and the
package's own surface: ``__all__`` and one casing rule."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Optional

import pytest

import attrflow
from attrflow import (
    Attribute,
    AttributeMap,
    Client,
    Context,
    Flow,
    FlowDefinitionError,
    PersistenceSchema,
    RPCInvokeOptions,
    RPCResult,
    StartFlowOptions,
    StepList,
    rpc,
)
from attrflow.flows import chunked_subscriber as builtin

DEX_NAMES = {
    "AsyncClient",
    "Attribute",
    "AttributeLock",
    "AttributeMap",
    "AttributeMapLoad",
    "AttributeMapNotLoadedError",
    "Client",
    "Context",
    "DexServiceError",
    "ErrorSubStatus",
    "Flow",
    "FlowAlreadyStartedError",
    "FlowDefinitionError",
    "FlowNotActiveError",
    "FlowNotActiveOrNotFoundError",
    "FlowNotFoundError",
    "FlowErrorType",
    "FlowInfo",
    "FlowResult",
    "FlowStatus",
    "IdReusePolicy",
    "LongPollTimeoutError",
    "PersistenceSchema",
    "RPCInvokeOptions",
    "RPCResult",
    "RpcLockConflictError",
    "StartFlowOptions",
    "StepList",
    "StopFlowOptions",
    "StopType",
    "ValueMappingError",
    "WorkerInvocationError",
    "rpc",
}
"""The names of the Dex Python SDK attrflow offers, spelt as Dex spells them."""


@dataclass
class Tag:
    label: str
    weight: int


@dataclass
class Tags:
    by_name: dict[str, Tag]
    history: list[Tag]


@dataclass
class Settings:
    limit: int


@dataclass
class Defaults:
    flag: bool
    count: int
    ratio: float
    title: Optional[str]  # noqa: UP045 - Python 3.9 evaluates these annotations too
    settings: Optional[Settings]  # noqa: UP045


flag = Attribute("flag", bool)
count = Attribute("count", int)
ratio = Attribute("ratio", float)
title = Attribute("title", str)
settings = Attribute("settings", Settings)
tags = AttributeMap("tags", Tags)


class CustomerDirectoryFlow(Flow[None]):
    """A flow type of the application's own under a built-in flow type's name."""

    def get_steps(self) -> StepList[None]:
        return StepList.empty()

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(flag, count, ratio, title, settings, tags)

    @rpc(name="Defaults", timeout=timedelta(seconds=10))
    def defaults(self, context: Context) -> RPCResult[Defaults]:
        return RPCResult(
            Defaults(
                flag.get(context),
                count.get(context),
                ratio.get(context),
                title.get(context),
                settings.get(context),
            )
        )

    @rpc(name="Add")
    def add(self, context: Context, input: int) -> RPCResult[int]:
        total = count.get(context) + input
        count.set(context, total)
        return RPCResult(total)

    @rpc(name="Tag")
    def tag(self, context: Context, input: str) -> RPCResult[Tags]:
        try:
            current = tags.get(context, "all")
        except KeyError:
            current = Tags({}, [])
        current.by_name[input] = Tag(input, len(current.history) + 1)
        current.history.append(current.by_name[input])
        tags.set(context, "all", current)
        return RPCResult(current)

    @rpc(name="ClearCount")
    def clear_count(self, context: Context) -> None:
        count.delete(context)


def test_the_generics_dex_code_subscripts_are_subscriptable() -> None:
    assert Flow[None] is not None
    assert StepList[None].empty() == StepList.empty()
    assert RPCResult[int](3).output == 3
    assert list(StepList.empty()) == []


def test_a_flow_type_of_ones_own_takes_a_builtin_name_in_a_default_client(store_url: str) -> None:
    flow = CustomerDirectoryFlow()
    with Client(store_url) as client:
        client.start_flow(flow, "directory", None, StartFlowOptions(request_id="request-1"))
        assert client.invoke_rpc(flow.defaults, "directory") == Defaults(False, 0, 0.0, None, None)
        assert client.invoke_rpc(flow.add, "directory", 5) == 5
        assert client.invoke_rpc(flow.add, "directory", 2) == 7
        client.invoke_rpc(flow.clear_count, "directory")
        assert client.invoke_rpc(flow.defaults, "directory").count == 0
        load = RPCInvokeOptions(load_attribute_map_instances=(tags.load("all"),))
        client.invoke_rpc(flow.tag, "directory", "red", options=load)
        both = client.invoke_rpc(flow.tag, "directory", "blue", options=load)
        assert both == Tags(
            {"red": Tag("red", 1), "blue": Tag("blue", 2)}, [Tag("red", 1), Tag("blue", 2)]
        )
        # The built-in wrapper of the same name cannot share this client...
        with pytest.raises(FlowDefinitionError, match="already registered by"):
            client.start_flow(builtin_directory(), "other")
    # ... but works in any other, over the same store.
    with Client(store_url) as other:
        other.start_flow(builtin_directory(), "builtin-directory")


def builtin_directory() -> Flow[None]:
    from attrflow.flows.customer_directory import CustomerDirectoryFlow as Builtin

    return Builtin()


def test_built_in_flows_can_still_be_left_out(store_url: str) -> None:
    with (
        Client(store_url, built_in_flows=False) as client,
        pytest.raises(FlowDefinitionError, match="built_in_flows=False"),
    ):
        client.start_flow(builtin.ChunkedSubscriberFlow(), builtin.FLOW_ID)


def test_get_flow_type_names_the_flow_type(store_url: str) -> None:
    class Renamed(Flow[None]):
        def get_flow_type(self) -> str:
            return "RenamedFlow"

        @rpc(name="Name")
        def name(self, context: Context) -> RPCResult[str]:
            return RPCResult(context.flow_id)

    flow = Renamed()
    assert flow.flow_type == flow.get_flow_type() == "RenamedFlow"
    with Client(store_url) as client:
        client.start_flow(flow, "renamed")
        assert client.invoke_rpc(flow.name, "renamed") == "renamed"


def test_a_handler_sees_its_flow_id_and_run_id(store_url: str) -> None:
    class NoStateFlow(Flow[None]):
        @rpc
        def invoke(self, context: Context, input: str) -> RPCResult[str]:
            if not context.flow_id or not context.run_id:
                raise RuntimeError("invalid RPC context")
            return RPCResult(f"{context.flow_id}/{context.run_id}/{input}")

    flow = NoStateFlow()
    with Client(store_url) as client:
        run_id = client.start_flow(flow, "no-state", None)
        assert client.invoke_rpc(flow.invoke, "no-state", "rpc-input") == (
            f"no-state/{run_id}/rpc-input"
        )


def test_rpc_timeouts_take_a_timedelta_and_refuse_negative_ones() -> None:
    rpc(timeout=timedelta(seconds=1))
    rpc(timeout=2.5)
    with pytest.raises(ValueError, match="must not be negative"):
        rpc(timeout=timedelta(seconds=-1))
    with pytest.raises(TypeError, match="timeout must be"):
        rpc(timeout="10")  # type: ignore[call-overload]


def test_all_holds_the_dex_surface_the_additions_and_the_errors_only() -> None:
    exported = set(attrflow.__all__)
    assert exported >= DEX_NAMES
    additions = exported - DEX_NAMES - {"__version__"}
    assert additions == {
        "AttrflowError",
        "AttributeMapLock",
        "FlowStoppedError",
        "InvalidInputError",
        "InvalidPageTokenError",
        "PageNotFoundError",
        "PageTrimmedError",
        "RecordNotFoundError",
        "RecordTrimmedError",
        "RunNotCurrentError",
        "StorageError",
        "StorageFullError",
    }
    # One casing rule for attrflow's own names: CapWords, acronyms written as words.
    assert not [name for name in additions if re.search(r"[A-Z]{2}", name)]
    for name in exported:
        assert getattr(attrflow, name) is not None
