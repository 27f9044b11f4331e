"""Decoding (done by the native decoder) and encoding give exactly the codec's values and
errors: the decoded values, and for everything that does not fit the message and the field
path, for nested dataclasses, lists, tuples, dicts of dataclasses, unions and scalars."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import pytest

from attrflow import ValueMappingError
from attrflow.codec import decode, encode, to_json
from attrflow.flows.chunked_subscriber import Subscriber, SubscriberPage


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

LEAF_DECODED = Leaf(1, 2.0, True, "a")

FITTING: list[tuple[Any, Any, Any]] = [
    (
        TREE,
        Tree,
        Tree(
            leaves=[LEAF_DECODED, Leaf(1, 0.5, True, "a")],
            by_name={"x": LEAF_DECODED},
            note=None,
            pair=(1, 2),
            either="text",
            anything={"free": [1]},
            child=Tree([], {}, "n", (), 3, 1, None),
        ),
    ),
    (LEAF, Leaf, LEAF_DECODED),
    ({}, Empty, Empty()),
    ([1, 2, 3], list[int], [1, 2, 3]),
    ([1, 2], tuple[int, ...], (1, 2)),
    ({"a": 1.5}, dict[str, float], {"a": 1.5}),
    (None, Optional[int], None),
    (7, Union[str, int], 7),
    (2**64 - 1, int, 2**64 - 1),
    (-(2**63), int, -(2**63)),
    (
        {
            "pageToken": "current",
            "subscribers": [
                {"sequence": 1, "subscriberId": "s", "deliveryAddress": "s@example.com"}
            ],
            "nextPageToken": "",
        },
        SubscriberPage,
        SubscriberPage("current", [Subscriber(1, "s", "s@example.com")], ""),
    ),
]

# An integer beyond 64 bits is read as a float by the JSON parser, so it is reported as one.
MISFITTING: list[tuple[Any, Any, str, str]] = [
    (
        {**TREE, "leaves": [LEAF, {**LEAF, "count": True}]},
        Tree,
        "expected int, got bool",
        "leaves[1].count",
    ),
    (
        {**TREE, "byName": {"x": {**LEAF, "label": 3}}},
        Tree,
        "expected str, got int",
        "byName['x'].label",
    ),
    (
        {**TREE, "child": {**TREE["child"], "pair": [1, "2"]}},
        Tree,
        "expected int, got str",
        "child.pair[1]",
    ),
    ({**TREE, "either": 1.5}, Tree, "expected int | str, got float", "either"),
    ({"leaves": []}, Tree, "field is missing", "byName"),
    ([1, None], list[int], "expected int, got null", "[1]"),
    (2**64, int, "expected int, got float", ""),
    (True, int, "expected int, got bool", ""),
    ("1", float, "expected float, got str", ""),
    ([1], tuple[int, str], "type tuple[int, str] is not supported; use tuple[T, ...]", ""),
    (
        {"a": 1},
        dict[int, int],
        "type dict[int, int] is not supported; JSON object keys are str",
        "",
    ),
    (1, Optional[str], "expected str, got int", ""),
    ({}, complex, "type complex is not supported by the attrflow codec", ""),
    ([], Leaf, "expected a JSON object for Leaf, got list", ""),
]


@pytest.mark.parametrize(("data", "tp", "expected"), FITTING)
def test_fitting_values_decode_to_their_values(data: Any, tp: Any, expected: Any) -> None:
    decoded = decode(data, tp)
    assert decoded == expected
    assert type(decoded) is type(expected)


@pytest.mark.parametrize(("data", "tp", "problem", "path"), MISFITTING)
def test_misfitting_values_raise_an_error_naming_the_field_and_type(
    data: Any, tp: Any, problem: str, path: str
) -> None:
    with pytest.raises(ValueMappingError) as raised:
        decode(data, tp)
    where = f"{path}: " if path else ""
    assert str(raised.value) == f"cannot decode value: {where}{problem}"
    assert raised.value.path == path


def test_floats_declared_as_float_come_back_as_float() -> None:
    leaf = decode(LEAF, Leaf)
    assert type(leaf.ratio) is float
    assert decode([1, 2], tuple[int, ...]) == (1, 2)


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

LEAF_DATA = {"count": 1, "ratio": 2.0, "flag": True, "label": "a"}

ENCODABLE: list[tuple[Any, Any, Any]] = [
    (
        TREE_VALUE,
        Tree,
        {
            "leaves": [LEAF_DATA],
            "byName": {"x": LEAF_DATA},
            "note": "n",
            "pair": [1, 2],
            "either": "text",
            "anything": {"free": [1]},
            "child": {
                "leaves": [],
                "byName": {},
                "note": None,
                "pair": [],
                "either": 0,
                "anything": None,
                "child": None,
            },
        },
    ),
    (LEAF_VALUE, Leaf, LEAF_DATA),
    (Empty(), Empty, {}),
    ((1, 2), tuple[int, ...], [1, 2]),
    ({"a": 1}, dict[str, float], {"a": 1.0}),
    (None, Optional[int], None),
    ("s", Union[int, str], "s"),
    (3, float, 3.0),
]

UNENCODABLE: list[tuple[Any, Any, str, str]] = [
    (
        Tree(leaves=[Leaf(True, 1.0, True, "a")], by_name={}),
        Tree,
        "expected int, got bool",
        "leaves[0].count",
    ),
    (
        Tree(leaves=[], by_name={"x": Leaf(1, float("nan"), True, "a")}),
        Tree,
        "nan has no JSON form",
        "by_name['x'].ratio",
    ),
    (Tree(leaves=[], by_name={}, pair=(1, "2")), Tree, "expected int, got str", "pair[1]"),  # type: ignore[arg-type]
    ({1: 1}, dict[str, int], "dict keys must be str, got int", ""),
    ([1], tuple[int, ...], "expected tuple, got list", ""),
    ((1,), tuple[int, str], "type tuple[int, str] is not supported; use tuple[T, ...]", ""),
    (LEAF, Leaf, "expected Leaf, got dict", ""),
    (2**64, int, "18446744073709551616 does not fit in 64 bits", ""),
    (1j, complex, "type complex is not supported by the attrflow codec", ""),
]


@pytest.mark.parametrize(("value", "tp", "expected"), ENCODABLE)
def test_encodable_values_encode_to_their_data(value: Any, tp: Any, expected: Any) -> None:
    encoded = encode(value, tp)
    assert encoded == expected
    assert repr(encoded) == repr(expected)  # types and key order too


@pytest.mark.parametrize(("value", "tp", "problem", "path"), UNENCODABLE)
def test_unencodable_values_raise_an_error_naming_the_field(
    value: Any, tp: Any, problem: str, path: str
) -> None:
    with pytest.raises(ValueMappingError) as raised:
        encode(value, tp)
    where = f"{path}: " if path else ""
    assert str(raised.value) == f"cannot encode value: {where}{problem}"
    assert raised.value.path == path


@dataclass
class Record:
    ratio: float
    text: str
    free: Any


TEXT_FORMS: list[Record] = [
    Record(1e16, 'quote " backslash \\ newline \n tab \t bell \x07 é 😀 \u2028', None),
    Record(3, "", {"k": [1, 2.5, None, True, (1, 2)], 3: "an int key", "big": 2**70}),
    Record(0.1, "x", ("a tuple", [1e-7, -0.0])),
]


@pytest.mark.parametrize("record", TEXT_FORMS)
def test_encoded_text_is_what_json_dumps_writes(record: Record) -> None:
    data = {"ratio": float(record.ratio), "text": record.text, "free": record.free}
    expected = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    assert to_json(record, Record) == expected


def test_an_untyped_part_json_cannot_write_is_a_mapping_error_naming_its_place() -> None:
    with pytest.raises(
        ValueMappingError, match=r"\['x'\]: a float has no JSON form \(Out of range"
    ):
        to_json(Record(1.0, "", {"x": float("nan")}), Record)
    with pytest.raises(
        ValueMappingError, match=r"a set has no JSON form \(.*not JSON serializable"
    ):
        to_json(Record(1.0, "", {1j}), Record)


def test_a_value_nested_deeper_than_json_allows_is_refused_without_crashing() -> None:
    tree = Tree(leaves=[], by_name={})
    tree.child = tree  # a cycle: nested without end
    with pytest.raises(ValueMappingError, match="nested more than 128 levels deep") as raised:
        to_json(tree, Tree)
    assert raised.value.path.startswith("child.child.child")
