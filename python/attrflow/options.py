"""Per-call options: how a flow starts (:class:`StartFlowOptions`) and what one RPC call
locks and loads beyond its definition (:class:`RPCInvokeOptions`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from typing import Any, TypeVar, overload

from attrflow import codec
from attrflow.attribute import Attribute, AttributeMap, AttributeMapLoad, AttributeMapLock

__all__ = [
    "IdReusePolicy",
    "InitialAttribute",
    "RPCInvokeOptions",
    "StartFlowOptions",
    "StopFlowOptions",
    "StopType",
]

T = TypeVar("T")


@dataclass(frozen=True)
class InitialAttribute:
    """One initial value of a start: a singleton Attribute (``instance`` is None) or one map
    instance, with the value and its encoded JSON (which is what equality compares)."""

    attribute: Attribute[Any] | AttributeMap[Any]
    instance: str | None
    value: Any = field(compare=False)
    json: str


class IdReusePolicy(Enum):
    """Whether ``start_flow`` may begin a new run under a flow ID that already has one, as
    in the Dex SDK (the decision table of Dex's flow options):

    - ``DEFAULT`` and ``ALLOW_IF_NOT_RUNNING``: a new run once the previous one was stopped;
      a running flow refuses the start.
    - ``ALLOW_IF_PREVIOUS_FAILED``: a new run only after a run stopped with
      ``StopType.FAIL``.
    - ``DISALLOW``: never a second run.
    - ``ALLOW_TERMINATE_IF_RUNNING``: a running flow is terminated and replaced, a stopped
      one replaced.

    A new run replaces the previous one whole: the previous run's values are removed in
    the transaction that writes the new run's initial values, and it may be of another flow
    type. A refused start raises ``FlowAlreadyStartedError`` (whose ``status`` says whether
    the existing run is running or how it was stopped), or, for a running flow of the same
    type with ``ignore_already_started``, returns its run ID.
    """

    DEFAULT = "default"
    ALLOW_IF_PREVIOUS_FAILED = "allow_if_previous_failed"
    ALLOW_IF_NOT_RUNNING = "allow_if_not_running"
    ALLOW_TERMINATE_IF_RUNNING = "allow_terminate_if_running"
    DISALLOW = "disallow"


@dataclass(frozen=True)
class StartFlowOptions:
    """Options of ``start_flow``, with the Dex SDK's fields in its order.

    - ``ignore_already_started``: with True, starting a flow that is already running returns
      the running flow's run ID instead of raising ``FlowAlreadyStartedError``.
    - ``request_id``: accepted for compatibility; attrflow needs none to make a start
      idempotent.
    - ``id_reuse_policy``: see :class:`IdReusePolicy`.
    - ``timeout`` and ``start_delay``: attrflow flows never time out and have no start Step
      to delay, so only ``None`` (or zero) is accepted; ``cron_schedule``,
      ``retry_policy`` and ``config_override`` likewise take only ``None``. A value attrflow
      cannot honour raises ``ValueError`` saying why, instead of being ignored.
    - initial values are added with :meth:`with_attribute`; they are written in the same
      transaction that creates the flow.

    >>> options = StartFlowOptions(ignore_already_started=True)
    >>> options.with_attribute(Attribute("counter", int), 7).initial_attributes[0].json
    '7'
    """

    timeout: float | timedelta | None = None
    start_delay: float | timedelta | None = None
    id_reuse_policy: IdReusePolicy = IdReusePolicy.DEFAULT
    cron_schedule: str | None = None
    retry_policy: object | None = None
    initial_attributes: tuple[InitialAttribute, ...] = field(default=())
    config_override: object | None = None
    ignore_already_started: bool = False
    request_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.ignore_already_started, bool):
            raise TypeError("ignore_already_started must be a bool")
        if self.request_id is not None and not isinstance(self.request_id, str):
            raise TypeError("request_id must be a str or None")
        _check_zero_duration(
            "timeout", self.timeout, "attrflow flows never time out; start them with timeout=None"
        )
        _check_zero_duration(
            "start_delay",
            self.start_delay,
            "attrflow flows have no start Step to delay; start them with start_delay=None",
        )
        if not isinstance(self.id_reuse_policy, IdReusePolicy):
            raise TypeError(
                f"id_reuse_policy must be an IdReusePolicy, not {self.id_reuse_policy!r}"
            )
        for name, why in _UNSUPPORTED_WHY.items():
            if getattr(self, name) is not None:
                raise ValueError(f"{why}; start them with {name}=None")
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


class StopType(Enum):
    """How ``stop_flow`` closes a flow's run, as in the Dex SDK. attrflow flows run no
    Steps, so the three differ only in the status the run ends with: ``CANCELED``,
    ``TERMINATED`` or ``FAILED``."""

    CANCEL = "cancel"
    TERMINATE = "terminate"
    FAIL = "fail"


@dataclass(frozen=True)
class StopFlowOptions:
    """Options of ``stop_flow``, as in the Dex SDK: how the run closes (cooperative
    cancellation by default) and an optional reason, kept with it (``describe_flow``)."""

    type: StopType = StopType.CANCEL
    reason: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, StopType):
            raise TypeError(f"type must be a StopType, not {self.type!r}")
        if self.reason is not None and not isinstance(self.reason, str):
            raise TypeError(f"reason must be a str or None, not {type(self.reason).__name__}")


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


_UNSUPPORTED_WHY = {
    "cron_schedule": "attrflow flows do not run on a schedule",
    "retry_policy": "attrflow flows have no runs that fail and could be retried",
    "config_override": "attrflow flows have no Step configuration to override",
}
"""The start options attrflow takes only as ``None``, with why."""


def _check_zero_duration(name: str, value: object, why: str) -> None:
    if value is None:
        return
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(f"{name} must be None, seconds or a timedelta, not {value!r}")
    if seconds != 0:
        raise ValueError(why)
