"""Per-call options: how a flow starts (:class:`StartFlowOptions`) and what one RPC call
locks and loads beyond its definition (:class:`RPCInvokeOptions`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar, overload

from attrflow import codec
from attrflow.attribute import Attribute, AttributeMap, AttributeMapLoad, AttributeMapLock

__all__ = ["InitialAttribute", "RPCInvokeOptions", "StartFlowOptions"]

T = TypeVar("T")


@dataclass(frozen=True)
class InitialAttribute:
    """One initial value of a start: a singleton Attribute (``instance`` is None) or one map
    instance, with the value and its encoded JSON (which is what equality compares)."""

    attribute: Attribute[Any] | AttributeMap[Any]
    instance: str | None
    value: Any = field(compare=False)
    json: str


@dataclass(frozen=True)
class StartFlowOptions:
    """Options of ``start_flow``, as in the Dex SDK.

    - ``ignore_already_started``: with True, starting a flow that is already running returns
      the running flow's run ID instead of raising ``FlowAlreadyStartedError``.
    - ``request_id``: accepted for compatibility; attrflow needs none to make a start
      idempotent.
    - ``timeout``: attrflow flows never time out, so only ``None`` (or zero) is accepted.
    - initial values are added with :meth:`with_attribute`; they are written in the same
      transaction that creates the flow.

    >>> options = StartFlowOptions(ignore_already_started=True)
    >>> options.with_attribute(Attribute("counter", int), 7).initial_attributes[0].json
    '7'
    """

    ignore_already_started: bool = False
    request_id: str | None = None
    timeout: float | timedelta | None = None
    initial_attributes: tuple[InitialAttribute, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.ignore_already_started, bool):
            raise TypeError("ignore_already_started must be a bool")
        if self.request_id is not None and not isinstance(self.request_id, str):
            raise TypeError("request_id must be a str or None")
        _check_no_timeout(self.timeout)
        object.__setattr__(self, "initial_attributes", tuple(self.initial_attributes))

    @overload
    def with_attribute(self, attribute: Attribute[T], value: T, /) -> StartFlowOptions: ...

    @overload
    def with_attribute(
        self, attribute: AttributeMap[T], instance: str, value: T, /
    ) -> StartFlowOptions: ...

    def with_attribute(self, attribute: Any, *args: Any) -> StartFlowOptions:
        """A copy with one more initial value: ``with_attribute(attr, value)`` for a
        singleton Attribute, ``with_attribute(map, instance, value)`` for a map instance.
        Values are checked against the declared type at once; the order of calls is kept."""
        if isinstance(attribute, AttributeMap):
            if len(args) != 2:
                raise TypeError(
                    f"with_attribute on AttributeMap {attribute.name!r} takes "
                    "(attribute_map, instance, value)"
                )
            instance, value = args
            physical = attribute.load(instance).physical_name
        elif isinstance(attribute, Attribute):
            if len(args) != 1:
                raise TypeError(
                    f"with_attribute on Attribute {attribute.name!r} takes (attribute, value); "
                    "only an AttributeMap takes an instance"
                )
            instance, (value,) = None, args
            physical = attribute.name
        else:
            raise TypeError(
                f"with_attribute takes an Attribute or AttributeMap, not {type(attribute).__name__}"
            )
        encoded = codec.to_json(value, attribute.type, what=f"initial value of {physical}")
        initial = InitialAttribute(attribute, instance, value, encoded)
        return dataclasses.replace(self, initial_attributes=(*self.initial_attributes, initial))


@dataclass(frozen=True)
class RPCInvokeOptions:
    """What one RPC call locks and loads in addition to its definition.

    Items come from ``map.lock(instance)`` and ``map.load(instance)``. Options only add to
    the definition's fixed locks and loads; a duplicate within one list is rejected by the
    core as invalid input.
    """

    lock_attribute_map_instances: tuple[AttributeMapLock, ...] = field(default=())
    load_attribute_map_instances: tuple[AttributeMapLoad, ...] = field(default=())

    def __post_init__(self) -> None:
        locks = _selectors(
            "lock_attribute_map_instances", self.lock_attribute_map_instances, AttributeMapLock
        )
        loads = _selectors(
            "load_attribute_map_instances", self.load_attribute_map_instances, AttributeMapLoad
        )
        object.__setattr__(self, "lock_attribute_map_instances", locks)
        object.__setattr__(self, "load_attribute_map_instances", loads)


def _selectors(name: str, items: Any, kind: type[T]) -> tuple[T, ...]:
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise TypeError(f"{name} must be a sequence, not {type(items).__name__}")
    selectors = tuple(items)
    for item in selectors:
        if not isinstance(item, kind):
            made_by = "map.lock(instance)" if kind is AttributeMapLock else "map.load(instance)"
            raise TypeError(f"{name} takes {made_by} selectors, not {item!r}")
    return selectors


def _check_no_timeout(timeout: object) -> None:
    if timeout is None:
        return
    if isinstance(timeout, timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(f"timeout must be None, seconds or a timedelta, not {timeout!r}")
    if seconds != 0:
        raise ValueError("attrflow flows never time out; start them with timeout=None")
