"""The dataclass codec: Python values ⇄ the JSON the core stores and passes to handlers.

Supported types: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Optional[T]`` (and other
unions, tried in order), ``list[T]`` (or ``Sequence[T]``), ``tuple[T, ...]``,
``dict[str, T]`` (or ``Mapping[str, T]``), ``Any`` (passed through) and dataclasses of these,
nested freely; and, as Dex's codec takes them, ``datetime`` (stored as its ``isoformat()``
text), ``Enum`` subclasses (stored as their member's value) and ``bytes`` (stored as base64
text). Field names are written in camelCase (``next_sequence`` → ``nextSequence``), the
layout every attrflow front end shares.

A whole value may be ``None`` (JSON ``null``) whatever its declared type, as Dex maps it:
an RPC returning ``RPCResult(None)``, an input of ``None``, an Attribute set to ``None``
(which, stored, reads as unset). Below the whole value, types are as declared.

Both directions are strict. Encoding checks each value against its declared type;
decoding requires every declared field to be present and checks primitive types exactly
(``True`` is not an ``int``; an ``int`` is accepted where a ``float`` is declared). A
mismatch raises :class:`~attrflow.errors.ValueMappingError` naming the field path: Python
attribute names when encoding, JSON names when decoding.

Both directions are done by the native module: this module describes a type once
(:func:`decoder`), and the native decoder of that type writes a value as JSON text and
builds the core's JSON straight into the type's values, each in one pass with no
intermediate Python data. A dataclass is built the way ``msgspec`` builds one: created
without calling ``__init__``, its fields set (frozen and slotted dataclasses too), then
``__post_init__`` called if it has one. An untyped (``Any``) part is written as
``json.dumps`` writes it; text holding a lone surrogate raises
:class:`~attrflow.errors.InvalidInputError` naming where.

>>> from dataclasses import dataclass
>>> @dataclass
... class State:
...     next_sequence: int
>>> to_json(State(3), State)
'{"nextSequence":3}'
>>> from_json('{"nextSequence": 3}', State)
State(next_sequence=3)
"""

from __future__ import annotations

import base64
import collections.abc
import dataclasses
import enum
import functools
import json
import sys
import typing
from datetime import datetime
from typing import Any, TypeVar, Union, cast

from attrflow import _native
from attrflow.errors import ValueMappingError

__all__ = ["decode", "decoder", "encode", "from_json", "json_name", "to_json"]

T = TypeVar("T")

if sys.version_info >= (3, 10):
    import types

    _UNION_ORIGINS: tuple[Any, ...] = (Union, types.UnionType)
else:  # pragma: no cover - exercised on Python 3.9 only
    _UNION_ORIGINS = (Union,)


class _Unsupported(Exception):
    """A type the codec does not support: described as such, and reported when used."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def json_name(python_name: str) -> str:
    """The stored (camelCase) name of a dataclass field.

    >>> json_name("latest_archived_chunk_token")
    'latestArchivedChunkToken'
    """
    head, *rest = python_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def encode(value: Any, tp: Any, *, what: str = "value") -> Any:
    """``value`` as JSON-ready Python data (dicts, lists, scalars), checked against ``tp``."""
    return json.loads(to_json(value, tp, what=what))


def decode(data: Any, tp: type[T], *, what: str = "value") -> T:
    """Decoded JSON data (as ``json.loads`` returns it) as a ``tp``, checked strictly."""
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueMappingError(f"cannot decode {what}: not JSON data: {error}") from None
    return from_json(text, tp, what=what)


def to_json(value: Any, tp: Any, *, what: str = "value") -> str:
    """``value`` as compact JSON text, checked against ``tp``: what
    ``json.dumps(data, separators=(",", ":"), ensure_ascii=False)`` writes for its data."""
    return decoder(tp).encode_json(value, what)


def from_json(text: str, tp: type[T], *, what: str = "value") -> T:
    """JSON text decoded strictly as a ``tp``."""
    return cast(T, decoder(tp).decode_json(text, what))


def unsupported(tp: Any) -> str | None:
    """Why the codec cannot write or read ``tp`` (or a type inside it), or None if it can:
    what a flow's registration checks each declared type with, so that a type the codec
    does not take is refused there rather than when a value first meets it."""
    for node in _nodes(tp):
        if node[0] == "unsupported":
            return cast(str, node[1])
    return None


def decoder(tp: Any) -> _native.Decoder:
    """The native decoder of ``tp`` (described once per hashable type)."""
    try:
        return _cached_decoder(tp)
    except TypeError:  # an unhashable type cannot be cached
        return _describe(tp)


@functools.cache
def _cached_decoder(tp: Any) -> _native.Decoder:
    return _describe(tp)


def _describe(tp: Any) -> _native.Decoder:
    """The native decoder of ``tp``'s node table (:func:`_nodes`)."""
    return _native.Decoder(_nodes(tp))


def _nodes(tp: Any) -> list[tuple[Any, ...]]:
    """``tp`` as the native decoder's node table: node 0 is ``tp`` or ``None`` (a whole value
    may be ``None`` whatever its type, as Dex maps ``None`` to JSON ``null``; its fields are
    checked as declared), node 1 is ``tp``, children are indices (a dataclass appears once,
    so it may refer to itself)."""
    nodes: list[tuple[Any, ...]] = [("union", True, [1], _type_name(tp))]
    classes: dict[Any, int] = {}

    def add(tp: Any) -> int:
        if _is_dataclass_type(tp) and tp in classes:
            return classes[tp]
        index = len(nodes)
        nodes.append(("any",))
        if _is_dataclass_type(tp):
            classes[tp] = index
        nodes[index] = node(tp)
        return index

    def node(tp: Any) -> tuple[Any, ...]:
        if tp is Any:
            return ("any",)
        if tp is None or tp is type(None):
            return ("null",)
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        try:
            if origin in _UNION_ORIGINS:
                options = [add(arg) for arg in args if arg is not type(None)]
                names = " | ".join(_type_name(arg) for arg in args)
                return ("union", type(None) in args, options, names)
            if origin is list or origin is collections.abc.Sequence:
                return ("list", add((args or (Any,))[0]))
            if origin is tuple:
                return ("tuple", add(_homogeneous_tuple_item(tp, args)))
            if origin is dict or origin is collections.abc.Mapping:
                return ("dict", add(_dict_value_type(tp, args)))
            if _is_dataclass_type(tp):
                fields = [(name, key, add(field_type)) for name, key, field_type in _fields(tp)]
                return ("dataclass", tp, tp.__name__, fields, hasattr(tp, "__post_init__"))
        except _Unsupported as unsupported:
            return ("unsupported", unsupported.problem)
        for scalar in (bool, int, float, str):
            if tp is scalar:
                return (scalar.__name__,)
        if tp is datetime:
            return ("convert", add(Any), _datetime_to_json, _datetime_from_json, "datetime")
        if tp is bytes:
            return ("convert", add(Any), _bytes_to_json, _bytes_from_json, "bytes")
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return ("convert", add(Any), _EnumValue(tp), tp, tp.__name__)
        return ("unsupported", f"type {_type_name(tp)} is not supported by the attrflow codec")

    add(tp)
    return nodes


# How the types stored as the JSON of another are written and read: each raises TypeError or
# ValueError for a value that does not fit, which the native decoder reports as a mismatch
# naming the type and the field.


def _datetime_to_json(value: object) -> str:
    if not isinstance(value, datetime):
        raise TypeError
    return value.isoformat()


def _datetime_from_json(text: object) -> datetime:
    if not isinstance(text, str):
        raise TypeError
    return datetime.fromisoformat(text)


def _bytes_to_json(value: object) -> str:
    if type(value) is not bytes:
        raise TypeError
    return base64.b64encode(value).decode("ascii")


def _bytes_from_json(text: object) -> bytes:
    if not isinstance(text, str):
        raise TypeError
    return base64.b64decode(text, validate=True)


class _EnumValue:
    """An ``Enum`` member's stored form: its value, for members of ``cls`` only."""

    __slots__ = ("cls",)

    def __init__(self, cls: type[enum.Enum]) -> None:
        self.cls = cls

    def __call__(self, member: object) -> object:
        if not isinstance(member, self.cls):
            raise TypeError
        return member.value


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else repr(tp)


@functools.cache
def _fields(cls: type[Any]) -> tuple[tuple[str, str, Any], ...]:
    """``(python name, JSON name, type)`` of each init field of a dataclass."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception as error:
        problem = f"cannot resolve the field types of {cls.__qualname__}: {error}"
        raise _Unsupported(problem) from error
    return tuple(
        (field.name, json_name(field.name), hints[field.name])
        for field in dataclasses.fields(cls)
        if field.init
    )


def _is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _homogeneous_tuple_item(tp: Any, args: tuple[Any, ...]) -> Any:
    if len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    raise _Unsupported(f"type {tp!r} is not supported; use tuple[T, ...]")


def _dict_value_type(tp: Any, args: tuple[Any, ...]) -> Any:
    if not args:
        return Any
    if args[0] is not str:
        raise _Unsupported(f"type {tp!r} is not supported; JSON object keys are str")
    return args[1]
