"""``@rpc``: RPC handlers written in Python, run by the Rust core with its locks, snapshot
and atomic commit.

::

    class Counter(Flow[None]):
        count = Attribute("count", int)

        @rpc(name="Increment", lock_attributes=(count.lock(),))
        def increment(self, context: Context, by: int) -> RPCResult[int]:
            value = self.count.get(context) + by
            self.count.set(context, value)
            return RPCResult(value)

A handler takes ``(self, context)`` or ``(self, context, input)``; the input and output
types come from its annotations (``RPCResult[O]``), and values cross the core as the JSON
of :mod:`attrflow.codec`. ``client.invoke_rpc(flow.increment, flow_id, 2)`` calls it: the
core takes the locks, loads the snapshot, runs the handler and commits what it staged, or
nothing when it raises (the caller then gets ``WorkerInvocationError``).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Callable, TypeVar, Union, overload

from attrflow import _native, codec
from attrflow.attribute import (
    Attribute,
    AttributeLock,
    AttributeMap,
    AttributeMapLoad,
    AttributeMapLock,
)
from attrflow.context import Context
from attrflow.flow import Flow, RpcDefinition, RpcDescriptor, RPCResult

__all__ = ["HandlerRpc", "LockSelector", "rpc"]

I = TypeVar("I")  # noqa: E741 - input type
O = TypeVar("O")  # noqa: E741 - output type

LockSelector = Union[AttributeLock, AttributeMapLock, Attribute[Any], AttributeMap[Any]]
"""What ``lock_attributes`` takes: ``attribute.lock()``, ``attribute_map.lock(instance)``,
or an Attribute itself (an AttributeMap itself is rejected at registration: map locks are
per instance)."""

Handler = Callable[..., Any]


class HandlerRpc(RpcDescriptor[I, O]):
    """An RPC whose handler is a Python method, made by :func:`rpc`."""

    __slots__ = (
        "_name",
        "_resolved",
        "function",
        "is_read_only",
        "is_transactional",
        "loads",
        "locks",
        "map_loads",
        "takes_input",
    )

    function: Handler
    locks: tuple[LockSelector, ...]
    loads: tuple[AttributeMapLoad, ...]
    map_loads: tuple[AttributeMap[Any], ...]
    is_transactional: bool
    is_read_only: bool
    takes_input: bool

    def __init__(
        self,
        function: Handler,
        name: str,
        locks: tuple[LockSelector, ...],
        loads: tuple[AttributeMapLoad, ...],
        is_transactional: bool,
        map_loads: tuple[AttributeMap[Any], ...] = (),
        is_read_only: bool = False,
    ) -> None:
        _native.validate_definition_name("RPC", name)
        self._name = name
        # The types are resolved on first use: annotations may name classes defined after
        # the flow class.
        self._resolved: RpcDefinition[I, O] | None = None
        self.attribute_name = name
        self.function = function
        self.locks = locks
        self.loads = loads
        self.map_loads = map_loads
        self.is_transactional = is_transactional
        self.is_read_only = is_read_only
        self.takes_input = _takes_input(function, name)

    @property
    def definition(self) -> RpcDefinition[I, O]:
        """The RPC's name and the input and output types of its annotations."""
        if self._resolved is None:
            self._resolved = _definition_from_annotations(
                self.function, self._name, self.takes_input
            )
        return self._resolved

    def dispatcher(self, flow: Flow[Any]) -> Callable[[Any, str], str]:
        """The callable the core runs for this RPC on ``flow``: JSON input in, JSON output
        out, the handler in between."""
        definition = self.definition
        function = self.function
        takes_input = self.takes_input

        def dispatch(native_context: Any, input_json: str) -> str:
            context = Context(native_context)
            if takes_input:
                value = codec.from_json(
                    input_json, definition.input_type, what=f"input of RPC {definition.name}"
                )
                result = function(flow, context, value)
            else:
                result = function(flow, context)
            return _encode_result(result, definition)

        return dispatch

    def __repr__(self) -> str:
        return f"<Python RPC {self._name}>"


@overload
def rpc(function: Callable[..., RPCResult[O] | None], /) -> HandlerRpc[Any, O]: ...


@overload
def rpc(
    *,
    name: str | None = None,
    lock_attributes: Sequence[LockSelector] = (),
    load_attribute_maps: Sequence[AttributeMap[Any]] = (),
    load_attribute_map_instances: Sequence[AttributeMapLoad] = (),
    is_transactional: bool = False,
    is_read_only: bool = False,
    timeout: timedelta | float | None = None,
) -> Callable[[Callable[..., RPCResult[O] | None]], HandlerRpc[Any, O]]: ...


def rpc(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    lock_attributes: Sequence[LockSelector] = (),
    load_attribute_maps: Sequence[AttributeMap[Any]] = (),
    load_attribute_map_instances: Sequence[AttributeMapLoad] = (),
    is_transactional: bool = False,
    is_read_only: bool = False,
    timeout: timedelta | float | None = None,
) -> Any:
    """Declares a method of a :class:`~attrflow.Flow` as an RPC handler.

    Args:
        name: The RPC's name (the method's name by default); no ``/``.
        lock_attributes: Locks every call takes: ``attribute.lock()`` and
            ``attribute_map.lock(instance)``. A held lock fails the call at once with
            ``RpcLockConflictError``.
        load_attribute_maps: AttributeMaps every call loads whole into its snapshot, as
            Dex's whole-map loads (selector ``<map>/``): every instance holding a value is
            readable, and ``get_all_instance_keys`` and ``get_map_size`` count them all.
            Loading does not lock; a call that takes no locks and writes fails with
            ``RpcLockConflictError`` (nothing written, retry) when the map changed between
            its read and its commit.
        load_attribute_map_instances: Map instances every call loads into its snapshot:
            ``attribute_map.load(instance)``. Callers may add more per call.
        is_transactional: Run calls isolated from other writers even without locks.
        is_read_only: attrflow's own, not Dex's: declares that the handler only reads. A
            call that writes fails with ``WorkerInvocationError`` and stores nothing. On the
            embedded store, ``AsyncClient`` runs a read-only call that takes no locks on
            the event loop's thread when the loop has nothing else to do (it waits for no
            writer), sparing it two thread hand-offs.
        timeout: The Dex SDK's handler budget: a ``timedelta`` (or seconds), not negative.
            Accepted and checked for compatibility; attrflow runs a handler in the
            caller's process, to completion.
    """
    _check_timeout(timeout)
    locks = _sequence("lock_attributes", lock_attributes, _LOCK_TYPES)
    map_loads = _sequence("load_attribute_maps", load_attribute_maps, (AttributeMap,))
    loads = _sequence(
        "load_attribute_map_instances", load_attribute_map_instances, (AttributeMapLoad,)
    )
    if not isinstance(is_transactional, bool):
        raise TypeError("is_transactional must be a bool")
    if not isinstance(is_read_only, bool):
        raise TypeError("is_read_only must be a bool")

    def decorate(method: Callable[..., Any]) -> HandlerRpc[Any, Any]:
        if not callable(method):
            raise TypeError(f"@rpc decorates a method, not {method!r}")
        rpc_name = method.__name__ if name is None else name
        if not isinstance(rpc_name, str):
            raise TypeError("the RPC name must be a str")
        return HandlerRpc(method, rpc_name, locks, loads, is_transactional, map_loads, is_read_only)

    return decorate if function is None else decorate(function)


_LOCK_TYPES = (AttributeLock, AttributeMapLock, Attribute, AttributeMap)


def _check_timeout(timeout: object) -> None:
    if timeout is None:
        return
    if isinstance(timeout, timedelta):
        negative = timeout < timedelta(0)
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        negative = timeout < 0
    else:
        raise TypeError(f"timeout must be None, a timedelta or seconds, not {timeout!r}")
    if negative:
        raise ValueError("RPC timeout must not be negative")


def _sequence(name: str, items: object, kinds: tuple[type, ...]) -> tuple[Any, ...]:
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise TypeError(f"{name} must be a tuple or list, not {type(items).__name__}")
    for item in items:
        if not isinstance(item, kinds):
            raise TypeError(f"{name} takes {' or '.join(k.__name__ for k in kinds)}, not {item!r}")
    return tuple(items)


def _takes_input(function: Handler, name: str) -> bool:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError) as error:
        raise TypeError(f"RPC {name}: cannot read the handler's signature: {error}") from None
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if len(positional) not in (2, 3):
        raise TypeError(
            f"RPC {name}: a handler takes (self, context) or (self, context, input), "
            f"not {len(positional)} required parameters"
        )
    return len(positional) == 3


def _definition_from_annotations(
    function: Handler, name: str, takes_input: bool
) -> RpcDefinition[Any, Any]:
    try:
        hints = typing.get_type_hints(function)
    except Exception as error:
        raise TypeError(f"RPC {name}: cannot resolve the handler's annotations: {error}") from None
    input_type: Any = type(None)
    if takes_input:
        input_name = list(inspect.signature(function).parameters)[2]
        input_type = hints.get(input_name, Any)
    return RpcDefinition(name, input_type, _output_type(hints.get("return", Any)))


def _output_type(annotation: Any) -> Any:
    """``O`` of ``RPCResult[O]`` (``Optional[O]`` of ``RPCResult[O] | None``)."""
    if annotation is RPCResult:
        return Any
    if typing.get_origin(annotation) is RPCResult:
        return typing.get_args(annotation)[0]
    args = typing.get_args(annotation)
    if type(None) in args:
        results = [_output_type(arg) for arg in args if arg is not type(None)]
        if len(results) == 1:
            return typing.Optional[results[0]]
    if annotation is None or annotation is type(None):
        return type(None)
    return Any


def _encode_result(result: object, definition: RpcDefinition[Any, Any]) -> str:
    if result is None:
        output = None
    elif isinstance(result, RPCResult):
        if result.next_steps:
            raise ValueError(
                f"RPC {definition.name} returned next_steps, but attrflow flows are RPC-only"
            )
        output = result.output
    else:
        raise TypeError(
            f"RPC {definition.name} must return RPCResult(output) or None, "
            f"not {type(result).__name__}"
        )
    if output is None:
        return "null"
    return codec.to_json(output, definition.output_type, what=f"output of RPC {definition.name}")
