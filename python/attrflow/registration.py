"""Registering flow types with the core, on a client's first use of each.

A flow defined in Python hands its schema and ``@rpc`` handlers to the core, which checks
the definition (its rules live there once) and calls each handler back when the RPC runs.
A built-in flow's wrapper (its RPCs declared with ``core_rpc``) registers the core's own
flow type of that name. Nothing is registered before it is used, so an application's own
flow type may take a built-in flow's name (``ChunkedSubscriberFlow``, say): in one client,
a flow type name belongs to the first flow used under it. A rejected definition raises
:class:`~attrflow.errors.FlowDefinitionError` with the core's message.
"""

from __future__ import annotations

import inspect
from typing import Any

from attrflow import _native, codec
from attrflow.attribute import Attribute, AttributeLock, AttributeMap, AttributeMapLock
from attrflow.errors import FlowDefinitionError, InvalidInputError
from attrflow.flow import Flow, RpcDescriptor
from attrflow.rpc import HandlerRpc, LockSelector

__all__ = ["is_built_in", "register", "register_flow"]

NativeRpc = tuple[
    str, list[tuple[str, "str | None"]], list[tuple[str, "str | None"]], bool, Any, bool
]


def is_built_in(flow: Flow[Any]) -> bool:
    """Whether ``flow`` is the wrapper of a built-in flow type: it has RPCs, and the core
    implements every one of them."""
    descriptors = _descriptors(type(flow))
    return bool(descriptors) and not any(isinstance(rpc, HandlerRpc) for rpc in descriptors)


def register(runtime: _native.Runtime, flow: Flow[Any], *, built_in_flows: bool) -> None:
    """Registers ``flow``'s type on ``runtime``: the core's own flow type for a built-in
    flow's wrapper (unless ``built_in_flows`` is False), else the Python definition."""
    if not is_built_in(flow):
        register_flow(runtime, flow)
        return
    if not built_in_flows:
        raise FlowDefinitionError(
            f"flow type {flow.flow_type!r} is built into attrflow, and this client was made "
            "with built_in_flows=False"
        )
    try:
        runtime.register_built_in(flow.flow_type)
    except InvalidInputError as error:
        raise FlowDefinitionError(str(error)) from error


def register_flow(runtime: _native.Runtime, flow: Flow[Any]) -> None:
    """Registers ``flow``'s type on ``runtime``; its handlers run with ``flow`` as ``self``."""
    try:
        schema = flow.get_persistence_schema()
        steps = flow.get_steps()
        if steps.steps:
            raise FlowDefinitionError(
                f"flow type {flow.flow_type!r} has Steps, but attrflow flows are RPC-only; "
                "return StepList.empty() from get_steps"
            )
        for declared in (*schema.attributes, *schema.attribute_maps):
            _check_type(flow, f"{type(declared).__name__} {declared.name!r}", declared.type)
        rpcs = [_native_rpc(flow, rpc) for rpc in _descriptors(type(flow))]
        runtime.register_flow(
            flow.flow_type,
            [attribute.name for attribute in schema.attributes],
            [attribute_map.name for attribute_map in schema.attribute_maps],
            rpcs,
        )
    except FlowDefinitionError:
        raise
    except (InvalidInputError, TypeError) as error:
        raise FlowDefinitionError(str(error)) from error


def _descriptors(cls: type[Flow[Any]]) -> list[RpcDescriptor[Any, Any]]:
    found: dict[str, RpcDescriptor[Any, Any]] = {}
    for klass in reversed(cls.__mro__):
        for attribute, value in vars(klass).items():
            if isinstance(value, RpcDescriptor):
                found[attribute] = value
    return list(found.values())


def _native_rpc(flow: Flow[Any], rpc: RpcDescriptor[Any, Any]) -> NativeRpc:
    if not isinstance(rpc, HandlerRpc):
        raise FlowDefinitionError(
            f"RPC {rpc.definition.name} of flow type {flow.flow_type!r} has no Python "
            "handler; declare it with @rpc"
        )
    if inspect.iscoroutinefunction(rpc.function):
        raise FlowDefinitionError(
            f"RPC {rpc.definition.name} of flow type {flow.flow_type!r} is declared async; "
            "attrflow runs handlers synchronously, in the caller's process (as Dex does "
            "unless a Registry allows async handlers)"
        )
    definition = rpc.definition
    _check_type(flow, f"the input of RPC {definition.name}", definition.input_type)
    _check_type(flow, f"the output of RPC {definition.name}", definition.output_type)
    locks = [_lock(selector) for selector in rpc.locks]
    loads: list[tuple[str, str | None]] = [
        (attribute_map.name, None) for attribute_map in rpc.map_loads
    ]
    loads += [(load.attribute_map.name, load.instance) for load in rpc.loads]
    return (
        rpc.definition.name,
        locks,
        loads,
        rpc.is_transactional,
        rpc.dispatcher(flow),
        rpc.is_read_only,
    )


def _check_type(flow: Flow[Any], what: str, tp: Any) -> None:
    problem = codec.unsupported(tp)
    if problem is not None:
        raise FlowDefinitionError(f"flow type {flow.flow_type!r}: {what}: {problem}")


def _lock(selector: LockSelector) -> tuple[str, str | None]:
    if isinstance(selector, AttributeLock):
        return (selector.attribute.name, None)
    if isinstance(selector, AttributeMapLock):
        return (selector.attribute_map.name, selector.instance)
    if isinstance(selector, (Attribute, AttributeMap)):
        # A bare AttributeMap reaches the core without an instance, which rejects it.
        return (selector.name, None)
    raise TypeError(f"not a lock selector: {selector!r}")
