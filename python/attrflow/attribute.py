"""Attributes and AttributeMaps: the typed values a flow holds, and the lock and load
selectors RPC calls name them by.

A singleton :class:`Attribute` is stored under its name; each instance of an
:class:`AttributeMap` under ``<map>/<instance>``. Names and instance keys are checked by the
core (no ``/``, not empty) as soon as a handle or selector is made.

Inside a Python RPC handler the same handles read and stage values through the call's
:class:`~attrflow.context.Context`: ``get`` decodes the snapshot's JSON into the declared
type, ``set`` and ``delete`` stage writes that are committed together when the handler
returns.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

from attrflow import _native, codec
from attrflow.context import Context
from attrflow.errors import FlowDefinitionError, InvalidInputError

__all__ = ["Attribute", "AttributeLock", "AttributeMap", "AttributeMapLoad", "AttributeMapLock"]

T = TypeVar("T")


class _Declared(Generic[T]):
    """What an Attribute and an AttributeMap are declared with, as the Dex SDK declares them:
    ``(name, value_type, index=None, sync_to_attribute_store=False)``."""

    __slots__ = ("name", "sync_to_attribute_store", "type")
    _kind: ClassVar[str]

    name: str
    type: builtins.type[T]
    sync_to_attribute_store: bool

    def __init__(
        self,
        name: str,
        value_type: builtins.type[T],
        index: None = None,
        sync_to_attribute_store: bool = False,
    ) -> None:
        _check_name(self._kind, name)
        if index is not None:
            raise FlowDefinitionError(
                f"{self._kind} {name!r} declares a search index ({index!r}); attrflow has no "
                "search indexes, so index must be None"
            )
        self.name = name
        self.type = value_type
        self.sync_to_attribute_store = sync_to_attribute_store

    @property
    def value_type(self) -> builtins.type[T]:
        """The declared type, by the Dex SDK's name for it."""
        return self.type


class Attribute(_Declared[T]):
    """A singleton Attribute named ``name`` holding a ``value_type`` value (see
    :mod:`attrflow.codec` for the supported types), declared as in the Dex SDK. Dex's
    ``sync_to_attribute_store`` (a projection to an attribute store the flow's configuration
    selects) is kept on the handle and has no effect: attrflow selects no attribute store, as
    Dex does nothing with it when none is selected. ``index`` (a Dex server's search index)
    must be ``None``.

    >>> counter = Attribute("counter", int)
    >>> counter.lock().physical_name
    'counter'
    """

    __slots__ = ()
    _kind = "Attribute"

    def lock(self) -> AttributeLock:
        """A lock selector on this Attribute."""
        return AttributeLock(self)

    def get(self, context: Context) -> T:
        """The value in this call's snapshot (or staged by it). An Attribute that holds no
        value reads as its type's default, as in the Dex SDK: ``False``, ``0``, ``0.0``, or
        ``None`` for every other type."""
        text = _native_context(context).attribute(self.name)
        if text is None:
            return cast(T, _default_value(self.type))
        return codec.from_json(text, self.type, what=f"Attribute {self.name}")

    def delete(self, context: Context) -> None:
        """Stages the deletion of the Attribute's value."""
        _native_context(context).set_attribute(self.name, "null")

    def set(self, context: Context, value: T) -> None:
        """Stages ``value``, checked against the declared type."""
        text = codec.to_json(value, self.type, what=f"Attribute {self.name}")
        _native_context(context).set_attribute(self.name, text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Attribute) and (self.name, self.type) == (other.name, other.type)

    def __hash__(self) -> int:
        return hash((Attribute, self.name, self.type))

    def __repr__(self) -> str:
        return f"Attribute({self.name!r}, {_type_repr(self.type)})"


class AttributeMap(_Declared[T]):
    """An AttributeMap named ``name`` whose instances each hold a ``value_type`` value;
    ``index`` and ``sync_to_attribute_store`` as for :class:`Attribute`.

    >>> chunks = AttributeMap("chunks", list)
    >>> chunks.load("current").physical_name
    'chunks/current'
    """

    __slots__ = ()
    _kind = "AttributeMap"

    def load(self, instance: str) -> AttributeMapLoad:
        """A selector that loads ``instance`` into an RPC call's snapshot. Raises
        ``InvalidInputError`` for an empty key or one containing ``/``."""
        return AttributeMapLoad(self, instance, _physical_name(self, instance))

    def lock(self, instance: str) -> AttributeMapLock:
        """A selector that locks ``instance`` for an RPC call. Raises ``InvalidInputError``
        for an empty key or one containing ``/``."""
        return AttributeMapLock(self, instance, _physical_name(self, instance))

    def get(self, context: Context, instance: str) -> T:
        """The instance's value in this call's snapshot (or staged by it). Raises
        ``KeyError`` when the instance was loaded but holds no value, and
        ``AttributeMapNotLoadedError`` when the call did not load it."""
        physical = _physical_name(self, instance)
        text = _native_context(context).map_instance(self.name, instance)
        if text is None:
            raise KeyError(physical)
        return codec.from_json(text, self.type, what=f"AttributeMap instance {physical}")

    def get_all_instance_keys(self, context: Context) -> tuple[str, ...]:
        """The keys of the instances that hold a value in this call's view, sorted, as Dex's
        ``get_all_instance_keys`` gives them: the instances the call loaded and found holding
        a value, with its own staged ``set`` calls added and ``delete`` calls removed. An
        instance the call did not load is not listed: load the map whole
        (``@rpc(load_attribute_maps=(attribute_map,))``) to list all of them."""
        return tuple(_native_context(context).map_instance_keys(self.name))

    def get_map_size(self, context: Context) -> int:
        """How many instances :meth:`get_all_instance_keys` lists."""
        return len(self.get_all_instance_keys(context))

    def set(self, context: Context, instance: str, value: T) -> None:
        """Stages ``value`` for ``instance``, checked against the declared type. Writing
        needs no load or lock."""
        physical = _physical_name(self, instance)
        text = codec.to_json(value, self.type, what=f"AttributeMap instance {physical}")
        _native_context(context).set_map_instance(self.name, instance, text)

    def delete(self, context: Context, instance: str) -> None:
        """Stages the deletion of ``instance``."""
        _physical_name(self, instance)
        _native_context(context).delete_map_instance(self.name, instance)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AttributeMap) and (self.name, self.type) == (
            other.name,
            other.type,
        )

    def __hash__(self) -> int:
        return hash((AttributeMap, self.name, self.type))

    def __repr__(self) -> str:
        return f"AttributeMap({self.name!r}, {_type_repr(self.type)})"


@dataclass(frozen=True)
class AttributeLock:
    """A lock on a singleton Attribute, made by :meth:`Attribute.lock`."""

    attribute: Attribute[Any]

    @property
    def physical_name(self) -> str:
        """The stored name: the Attribute's name."""
        return self.attribute.name


@dataclass(frozen=True)
class AttributeMapLock:
    """A lock on one map instance, made by :meth:`AttributeMap.lock`."""

    attribute_map: AttributeMap[Any]
    instance: str
    physical_name: str


@dataclass(frozen=True)
class AttributeMapLoad:
    """A load of one map instance, made by :meth:`AttributeMap.load`."""

    attribute_map: AttributeMap[Any]
    instance: str
    physical_name: str


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} name must be a str, not {type(name).__name__}")
    try:
        _native.validate_definition_name(what, name)
    except InvalidInputError as error:
        raise FlowDefinitionError(str(error)) from error


def _physical_name(attribute_map: AttributeMap[Any], instance: object) -> str:
    if not isinstance(instance, str):
        raise TypeError(
            f"instance key of AttributeMap {attribute_map.name!r} must be a str, "
            f"not {type(instance).__name__}"
        )
    return _native.instance_physical_name(attribute_map.name, instance)


def _native_context(context: object) -> _native.RpcContext:
    if not isinstance(context, Context):
        raise TypeError(f"expected the handler's Context, not {type(context).__name__}")
    return context.native


def _default_value(tp: Any) -> object:
    """What an unset singleton Attribute of type ``tp`` reads as (the Dex SDK's rule)."""
    if tp is bool:
        return False
    if tp is int:
        return 0
    if tp is float:
        return 0.0
    return None


def _type_repr(tp: Any) -> str:
    return tp.__qualname__ if isinstance(tp, type) else repr(tp)
