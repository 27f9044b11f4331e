"""The dataclass codec: Python values ⇄ the JSON the core stores and passes to handlers.

Supported types: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Optional[T]`` (and other
unions, tried in order), ``list[T]``, ``tuple[T, ...]``, ``dict[str, T]``, ``Any`` (passed
through) and dataclasses of these, nested freely. Field names are written in camelCase
(``next_sequence`` → ``nextSequence``), the layout every attrflow front end shares.

Both directions are strict. Encoding checks each value against its declared type;
decoding requires every declared field to be present and checks primitive types exactly
(``True`` is not an ``int``; an ``int`` is accepted where a ``float`` is declared). A
mismatch raises :class:`~attrflow.errors.ValueMappingError` naming the field path: Python
attribute names when encoding, JSON names when decoding.

Encoding walks the value here. Decoding is done by the native module: this module
describes a type once (:func:`decoder`) and the core's JSON is built straight into that
type's values, in one pass with no intermediate Python data. A dataclass is built the way
``msgspec`` builds one: created without calling ``__init__``, its fields set (frozen and
slotted dataclasses too), then ``__post_init__`` called if it has one.

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

import dataclasses
import functools
import json
import math
import sys
import typing
from typing import Any, Callable, TypeVar, Union, cast

from attrflow import _native
from attrflow.errors import ValueMappingError

__all__ = ["decode", "decoder", "encode", "from_json", "json_name", "to_json"]

T = TypeVar("T")

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1
"""JSON integers every front end reads exactly: the union of i64 and u64."""

if sys.version_info >= (3, 10):
    import types

    _UNION_ORIGINS: tuple[Any, ...] = (Union, types.UnionType)
else:  # pragma: no cover - exercised on Python 3.9 only
    _UNION_ORIGINS = (Union,)


class _Mismatch(Exception):
    """A value that does not fit its type, at ``path``; wrapped into ValueMappingError."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(problem)
        self.path = path
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
    try:
        return _encode(value, tp, "")
    except _Mismatch as mismatch:
        raise _error("encode", what, mismatch) from None


def decode(data: Any, tp: type[T], *, what: str = "value") -> T:
    """Decoded JSON data (as ``json.loads`` returns it) as a ``tp``, checked strictly."""
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueMappingError(f"cannot decode {what}: not JSON data: {error}") from None
    return from_json(text, tp, what=what)


def to_json(value: Any, tp: Any, *, what: str = "value") -> str:
    """``value`` as compact JSON text, checked against ``tp``."""
    data = encode(value, tp, what=what)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def from_json(text: str, tp: type[T], *, what: str = "value") -> T:
    """JSON text decoded strictly as a ``tp``."""
    return cast(T, decoder(tp).decode_json(text, what))


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
    """``tp`` as the native decoder's node table: node 0 is ``tp``, children are indices
    (a dataclass appears once, so it may refer to itself)."""
    nodes: list[tuple[Any, ...]] = []
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
            if origin is list:
                return ("list", add((args or (Any,))[0]))
            if origin is tuple:
                return ("tuple", add(_homogeneous_tuple_item(tp, args, "")))
            if origin is dict:
                return ("dict", add(_dict_value_type(tp, args, "")))
            if _is_dataclass_type(tp):
                fields = [(name, key, add(field_type)) for name, key, field_type in _fields(tp)]
                return ("dataclass", tp, tp.__name__, fields, hasattr(tp, "__post_init__"))
        except _Mismatch as mismatch:
            return ("unsupported", mismatch.problem)
        for scalar in (bool, int, float, str):
            if tp is scalar:
                return (scalar.__name__,)
        return ("unsupported", f"type {_type_name(tp)} is not supported by the attrflow codec")

    add(tp)
    return _native.Decoder(nodes)


def _error(direction: str, what: str, mismatch: _Mismatch) -> ValueMappingError:
    where = f"{mismatch.path}: " if mismatch.path else ""
    return ValueMappingError(f"cannot {direction} {what}: {where}{mismatch.problem}", mismatch.path)


def _field_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _got(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else repr(tp)


@functools.cache
def _fields(cls: type[Any]) -> tuple[tuple[str, str, Any], ...]:
    """``(python name, JSON name, type)`` of each init field of a dataclass."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception as error:
        problem = f"cannot resolve the field types of {cls.__qualname__}: {error}"
        raise _Mismatch("", problem) from error
    return tuple(
        (field.name, json_name(field.name), hints[field.name])
        for field in dataclasses.fields(cls)
        if field.init
    )


def _is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _union(
    value: Any, args: tuple[Any, ...], path: str, convert: Callable[[Any, Any, str], Any]
) -> Any:
    if value is None and type(None) in args:
        return None
    options = [arg for arg in args if arg is not type(None)]
    first: _Mismatch | None = None
    for option in options:
        try:
            return convert(value, option, path)
        except _Mismatch as mismatch:
            first = first or mismatch
    if len(options) == 1 and first is not None:
        raise first
    names = " | ".join(_type_name(arg) for arg in args)
    raise _Mismatch(path, f"expected {names}, got {_got(value)}")


def _encode(value: Any, tp: Any, path: str) -> Any:
    if tp is str:
        if not isinstance(value, str):
            raise _Mismatch(path, f"expected str, got {_got(value)}")
        return value
    if tp is int:
        return _check_int(value, path)
    if tp is bool:
        if not isinstance(value, bool):
            raise _Mismatch(path, f"expected bool, got {_got(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Mismatch(path, f"expected float, got {_got(value)}")
        if not math.isfinite(value):
            raise _Mismatch(path, f"{value!r} has no JSON form")
        return float(value)
    if tp is Any:
        return value
    if tp is None or tp is type(None):
        if value is not None:
            raise _Mismatch(path, f"expected null, got {_got(value)}")
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _UNION_ORIGINS:
        return _union(value, args, path, _encode)
    if origin is list:
        if not isinstance(value, list):
            raise _Mismatch(path, f"expected list, got {_got(value)}")
        (item,) = args or (Any,)
        return [_encode(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is tuple:
        item = _homogeneous_tuple_item(tp, args, path)
        if not isinstance(value, tuple):
            raise _Mismatch(path, f"expected tuple, got {_got(value)}")
        return [_encode(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        item = _dict_value_type(tp, args, path)
        if not isinstance(value, dict):
            raise _Mismatch(path, f"expected dict, got {_got(value)}")
        encoded = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise _Mismatch(path, f"dict keys must be str, got {_got(key)}")
            encoded[key] = _encode(v, item, f"{path}[{key!r}]")
        return encoded
    if _is_dataclass_type(tp):
        if not isinstance(value, tp):
            raise _Mismatch(path, f"expected {tp.__name__}, got {_got(value)}")
        return {
            key: _encode(getattr(value, name), field_type, _field_path(path, name))
            for name, key, field_type in _fields(tp)
        }
    raise _Mismatch(path, f"type {_type_name(tp)} is not supported by the attrflow codec")


def _check_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Mismatch(path, f"expected int, got {_got(value)}")
    if not _INT_MIN <= value <= _INT_MAX:
        raise _Mismatch(path, f"{value} does not fit in 64 bits")
    return value


def _homogeneous_tuple_item(tp: Any, args: tuple[Any, ...], path: str) -> Any:
    if len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    raise _Mismatch(path, f"type {tp!r} is not supported; use tuple[T, ...]")


def _dict_value_type(tp: Any, args: tuple[Any, ...], path: str) -> Any:
    if not args:
        return Any
    if args[0] is not str:
        raise _Mismatch(path, f"type {tp!r} is not supported; JSON object keys are str")
    return args[1]
