"""The codec's fast decoding path and its checking path agree: the same values decoded,
the same errors (message and field path) for everything that does not fit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

import pytest

from attrflow import ValueMappingError
from attrflow.codec import decode
from attrflow.flows.chunked_subscriber import SubscriberPage


@dataclass
class Leaf:
    count: int
    ratio: float
    flag: bool
    label: str


@dataclass
class Tree:
    leaves: list[Leaf]
    by_name: dict[str, Leaf]
    note: Optional[str] = None  # noqa: UP045 - the codec evaluates it on Python 3.9 too
    pair: tuple[int, ...] = field(default=())
    either: Union[int, str] = 0  # noqa: UP007 - as above
    anything: Any = None
    child: Optional[Tree] = None  # noqa: UP045 - as above


@dataclass
class Empty:
    pass


LEAF: dict[str, Any] = {"count": 1, "ratio": 2, "flag": True, "label": "a"}
TREE: dict[str, Any] = {
    "leaves": [LEAF, {**LEAF, "ratio": 0.5}],
    "byName": {"x": LEAF},
    "note": None,
    "pair": [1, 2],
    "either": "text",
    "anything": {"free": [1]},
    "child": {
        "leaves": [],
        "byName": {},
        "note": "n",
        "pair": [],
        "either": 3,
        "anything": 1,
        "child": None,
    },
}

FITTING: list[tuple[Any, Any]] = [
    (TREE, Tree),
    (LEAF, Leaf),
    ({}, Empty),
    ([1, 2, 3], list[int]),
    ([1, 2], tuple[int, ...]),
    ({"a": 1.5}, dict[str, float]),
    (None, Optional[int]),
    (7, Union[str, int]),
    (2**64 - 1, int),
    (-(2**63), int),
    (
        {
            "pageToken": "current",
            "subscribers": [
                {"sequence": 1, "subscriberId": "s", "deliveryAddress": "s@example.com"}
            ],
            "nextPageToken": "",
        },
        SubscriberPage,
    ),
]

MISFITTING: list[tuple[Any, Any]] = [
    ({**TREE, "leaves": [LEAF, {**LEAF, "count": True}]}, Tree),
    ({**TREE, "byName": {"x": {**LEAF, "label": 3}}}, Tree),
    ({**TREE, "child": {**TREE["child"], "pair": [1, "2"]}}, Tree),
    ({**TREE, "either": 1.5}, Tree),
    ({"leaves": []}, Tree),
    ([1, None], list[int]),
    (2**64, int),
    (True, int),
    ("1", float),
    ([1], tuple[int, str]),
    ({"a": 1}, dict[int, int]),
    (1, Optional[str]),
    ({}, complex),
    ([], Leaf),
]


def checking_path(data: Any, tp: Any) -> Any:
    """The checking path alone, as the codec ran before its fast path."""
    from attrflow import codec

    try:
        return codec._decode(data, tp, "")
    except codec._Mismatch as mismatch:
        raise codec._error("decode", "value", mismatch) from None


@pytest.mark.parametrize(("data", "tp"), FITTING)
def test_fitting_values_decode_to_the_same_values(data: Any, tp: Any) -> None:
    assert decode(data, tp) == checking_path(data, tp)
    assert type(decode(data, tp)) is type(checking_path(data, tp))


@pytest.mark.parametrize(("data", "tp"), MISFITTING)
def test_misfitting_values_raise_the_same_error(data: Any, tp: Any) -> None:
    with pytest.raises(ValueMappingError) as expected:
        checking_path(data, tp)
    with pytest.raises(ValueMappingError) as got:
        decode(data, tp)
    assert str(got.value) == str(expected.value)
    assert got.value.path == expected.value.path


def test_floats_declared_as_float_come_back_as_float() -> None:
    leaf = decode(LEAF, Leaf)
    assert type(leaf.ratio) is float
    assert decode([1, 2], tuple[int, ...]) == (1, 2)


def checking_encode(value: Any, tp: Any) -> Any:
    """The checking encoding path alone."""
    from attrflow import codec

    try:
        return codec._encode(value, tp, "")
    except codec._Mismatch as mismatch:
        raise codec._error("encode", "value", mismatch) from None


LEAF_VALUE = Leaf(1, 2.0, True, "a")
TREE_VALUE = Tree(
    leaves=[LEAF_VALUE],
    by_name={"x": LEAF_VALUE},
    note="n",
    pair=(1, 2),
    either="text",
    anything={"free": [1]},
    child=Tree(leaves=[], by_name={}),
)

ENCODABLE: list[tuple[Any, Any]] = [
    (TREE_VALUE, Tree),
    (LEAF_VALUE, Leaf),
    (Empty(), Empty),
    ((1, 2), tuple[int, ...]),
    ({"a": 1}, dict[str, float]),
    (None, Optional[int]),
    ("s", Union[int, str]),
    (3, float),
]

UNENCODABLE: list[tuple[Any, Any]] = [
    (Tree(leaves=[Leaf(True, 1.0, True, "a")], by_name={}), Tree),
    (Tree(leaves=[], by_name={"x": Leaf(1, float("nan"), True, "a")}), Tree),
    (Tree(leaves=[], by_name={}, pair=(1, "2")), Tree),  # type: ignore[arg-type]
    ({1: 1}, dict[str, int]),
    ([1], tuple[int, ...]),
    ((1,), tuple[int, str]),
    (LEAF, Leaf),
    (2**64, int),
    (1j, complex),
]


@pytest.mark.parametrize(("value", "tp"), ENCODABLE)
def test_encodable_values_encode_to_the_same_data(value: Any, tp: Any) -> None:
    from attrflow.codec import encode

    assert encode(value, tp) == checking_encode(value, tp)
    assert type(encode(value, tp)) is type(checking_encode(value, tp))
    assert repr(encode(value, tp)) == repr(checking_encode(value, tp))  # key order too


@pytest.mark.parametrize(("value", "tp"), UNENCODABLE)
def test_unencodable_values_raise_the_same_error(value: Any, tp: Any) -> None:
    from attrflow.codec import encode

    with pytest.raises(ValueMappingError) as expected:
        checking_encode(value, tp)
    with pytest.raises(ValueMappingError) as got:
        encode(value, tp)
    assert str(got.value) == str(expected.value)
    assert got.value.path == expected.value.path
