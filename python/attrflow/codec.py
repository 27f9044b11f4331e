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

from attrflow.errors import ValueMappingError

__all__ = ["decode", "encode", "from_json", "json_name", "to_json"]

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
        fast = _fast_encoder(tp)
    except TypeError:  # an unhashable type cannot be cached: take the checking path only
        fast = _no_fast_path
    try:
        return fast(value)
    except _NoFastPath:
        pass  # the checking path below names the mismatch
    try:
        return _encode(value, tp, "")
    except _Mismatch as mismatch:
        raise _error("encode", what, mismatch) from None


def decode(data: Any, tp: type[T], *, what: str = "value") -> T:
    """Decoded JSON data (as ``json.loads`` returns it) as a ``tp``, checked strictly."""
    try:
        fast = _fast_decoder(cast(Any, tp))
    except TypeError:  # an unhashable type cannot be cached: take the checking path only
        fast = _no_fast_path
    try:
        return cast(T, fast(data))
    except _NoFastPath:
        pass  # the checking path below names the mismatch
    try:
        return cast(T, _decode(data, tp, ""))
    except _Mismatch as mismatch:
        raise _error("decode", what, mismatch) from None


def to_json(value: Any, tp: Any, *, what: str = "value") -> str:
    """``value`` as compact JSON text, checked against ``tp``."""
    data = encode(value, tp, what=what)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def from_json(text: str, tp: type[T], *, what: str = "value") -> T:
    """JSON text decoded strictly as a ``tp``."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ValueMappingError(f"cannot decode {what}: not JSON: {error}") from None
    return decode(data, tp, what=what)


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
    if tp is bool:
        if not isinstance(value, bool):
            raise _Mismatch(path, f"expected bool, got {_got(value)}")
        return value
    if tp is int:
        return _check_int(value, path)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Mismatch(path, f"expected float, got {_got(value)}")
        if not math.isfinite(value):
            raise _Mismatch(path, f"{value!r} has no JSON form")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _Mismatch(path, f"expected str, got {_got(value)}")
        return value
    if _is_dataclass_type(tp):
        if not isinstance(value, tp):
            raise _Mismatch(path, f"expected {tp.__name__}, got {_got(value)}")
        return {
            key: _encode(getattr(value, name), field_type, _field_path(path, name))
            for name, key, field_type in _fields(tp)
        }
    raise _Mismatch(path, f"type {_type_name(tp)} is not supported by the attrflow codec")


def _decode(data: Any, tp: Any, path: str) -> Any:
    if tp is Any:
        return data
    if tp is None or tp is type(None):
        if data is not None:
            raise _Mismatch(path, f"expected null, got {_got(data)}")
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _UNION_ORIGINS:
        return _union(data, args, path, _decode)
    if origin is list or origin is tuple:
        item = _homogeneous_tuple_item(tp, args, path) if origin is tuple else (args or (Any,))[0]
        if not isinstance(data, list):
            raise _Mismatch(path, f"expected a JSON array, got {_got(data)}")
        items = [_decode(v, item, f"{path}[{i}]") for i, v in enumerate(data)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        item = _dict_value_type(tp, args, path)
        if not isinstance(data, dict):
            raise _Mismatch(path, f"expected a JSON object, got {_got(data)}")
        return {key: _decode(v, item, f"{path}[{key!r}]") for key, v in data.items()}
    if tp is bool:
        if not isinstance(data, bool):
            raise _Mismatch(path, f"expected bool, got {_got(data)}")
        return data
    if tp is int:
        return _check_int(data, path)
    if tp is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise _Mismatch(path, f"expected float, got {_got(data)}")
        return float(data)
    if tp is str:
        if not isinstance(data, str):
            raise _Mismatch(path, f"expected str, got {_got(data)}")
        return data
    if _is_dataclass_type(tp):
        if not isinstance(data, dict):
            raise _Mismatch(path, f"expected a JSON object for {tp.__name__}, got {_got(data)}")
        kwargs = {}
        for name, key, field_type in _fields(tp):
            field_path = _field_path(path, key)
            if key not in data:
                raise _Mismatch(field_path, "field is missing")
            kwargs[name] = _decode(data[key], field_type, field_path)
        return tp(**kwargs)
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


# The fast paths. ``_decode`` and ``_encode`` dispatch on the type for every value and build
# each value's field path as they go; a page of 100 records spends most of its time there.
# ``_fast_decoder`` and ``_fast_encoder`` resolve a type's dispatch once into nested
# closures and build no paths. Each accepts exactly what its checking twin accepts and
# returns the same values; on any mismatch it gives up with ``_NoFastPath`` and the
# checking twin runs, raising the error that names the field path.


class _NoFastPath(Exception):
    """The value does not fit: ``_decode`` must run to name the mismatch."""


_FastConverter = Callable[[Any], Any]


def _no_fast_path(data: Any) -> Any:
    raise _NoFastPath


def _fast_decoder(tp: Any) -> _FastConverter:
    """A decoder of ``tp`` that checks what ``_decode`` checks, without building paths."""
    return _fast_converter(tp, encoding=False)


def _fast_encoder(tp: Any) -> _FastConverter:
    """An encoder of ``tp`` that checks what ``_encode`` checks, without building paths."""
    return _fast_converter(tp, encoding=True)


@functools.cache
def _fast_converter(tp: Any, *, encoding: bool) -> _FastConverter:
    """``tp``'s fast converter in one direction: the types, and the order in which they
    are told apart, of ``_decode`` and ``_encode``."""
    if tp is Any:
        return _identity
    if tp is None or tp is type(None):
        return _fast_none
    compile_item = _fast_encoder if encoding else _fast_decoder
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _UNION_ORIGINS:
        return _fast_union_of(args, compile_item)
    if origin is list or origin is tuple:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return _no_fast_path
        item = compile_item((args or (Any,))[0])
        if origin is list:
            return _fast_list(item)
        return _fast_tuple_to_list(item) if encoding else _fast_tuple(item)
    if origin is dict:
        if args and args[0] is not str:
            return _no_fast_path
        value = compile_item(args[1] if args else Any)
        return _fast_str_keyed_dict(value) if encoding else _fast_dict(value)
    if tp is bool:
        return _fast_bool
    if tp is int:
        return _fast_int
    if tp is float:
        return _fast_finite_float if encoding else _fast_float
    if tp is str:
        return _fast_str
    if _is_dataclass_type(tp):
        return _fast_dataclass_to_dict(tp) if encoding else _fast_dataclass(tp)
    return _no_fast_path


def _identity(data: Any) -> Any:
    return data


def _fast_none(data: Any) -> None:
    if data is not None:
        raise _NoFastPath


def _fast_bool(data: Any) -> bool:
    if not isinstance(data, bool):
        raise _NoFastPath
    return data


def _fast_int(data: Any) -> int:
    if isinstance(data, bool) or not isinstance(data, int) or not _INT_MIN <= data <= _INT_MAX:
        raise _NoFastPath
    return data


def _fast_float(data: Any) -> float:
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise _NoFastPath
    return float(data)


def _fast_str(data: Any) -> str:
    if not isinstance(data, str):
        raise _NoFastPath
    return data


def _fast_union_of(
    args: tuple[Any, ...], compile_option: Callable[[Any], _FastConverter]
) -> _FastConverter:
    accepts_none = type(None) in args
    options = [compile_option(arg) for arg in args if arg is not type(None)]

    def decode_union(data: Any) -> Any:
        if data is None and accepts_none:
            return None
        for option in options:
            try:
                return option(data)
            except _NoFastPath:
                continue
        raise _NoFastPath

    return decode_union


def _fast_list(item: _FastConverter) -> _FastConverter:
    def decode_list(data: Any) -> list[Any]:
        if not isinstance(data, list):
            raise _NoFastPath
        return [item(value) for value in data]

    return decode_list


def _fast_tuple(item: _FastConverter) -> _FastConverter:
    def decode_tuple(data: Any) -> tuple[Any, ...]:
        if not isinstance(data, list):
            raise _NoFastPath
        return tuple([item(value) for value in data])

    return decode_tuple


def _fast_dict(item: _FastConverter) -> _FastConverter:
    def decode_dict(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise _NoFastPath
        return {key: item(value) for key, value in data.items()}

    return decode_dict


def _fast_dataclass(cls: Any) -> _FastConverter:
    # Field decoders are resolved at the first call, so a dataclass may refer to itself.
    resolved: list[tuple[tuple[str, str, _FastConverter], ...]] = []

    def decode_dataclass(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _NoFastPath
        if not resolved:
            try:
                fields = _fields(cls)
            except _Mismatch:
                raise _NoFastPath from None
            resolved.append(tuple((name, key, _fast_decoder(tp)) for name, key, tp in fields))
        kwargs = {}
        for name, key, decode_field in resolved[0]:
            if key not in data:
                raise _NoFastPath
            kwargs[name] = decode_field(data[key])
        return cls(**kwargs)

    return decode_dataclass


def _fast_finite_float(value: Any) -> float:
    number = _fast_float(value)
    if not math.isfinite(number):
        raise _NoFastPath
    return number


def _fast_tuple_to_list(item: _FastConverter) -> _FastConverter:
    def encode_tuple(value: Any) -> list[Any]:
        if not isinstance(value, tuple):
            raise _NoFastPath
        return [item(v) for v in value]

    return encode_tuple


def _fast_str_keyed_dict(item: _FastConverter) -> _FastConverter:
    def encode_dict(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _NoFastPath
        encoded = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise _NoFastPath
            encoded[key] = item(v)
        return encoded

    return encode_dict


def _fast_dataclass_to_dict(cls: Any) -> _FastConverter:
    # Field encoders are resolved at the first call, so a dataclass may refer to itself.
    resolved: list[tuple[tuple[str, str, _FastConverter], ...]] = []

    def encode_dataclass(value: Any) -> dict[str, Any]:
        if not isinstance(value, cls):
            raise _NoFastPath
        if not resolved:
            try:
                fields = _fields(cls)
            except _Mismatch:
                raise _NoFastPath from None
            resolved.append(tuple((name, key, _fast_encoder(tp)) for name, key, tp in fields))
        return {key: encode_field(getattr(value, name)) for name, key, encode_field in resolved[0]}

    return encode_dataclass
