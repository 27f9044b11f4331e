"""Outputs decode into the dataclasses a flow declares, whatever their shape: dicts and lists
of dataclasses, Optional fields, frozen and slotted dataclasses (built without their
``__setattr__``) and ``__post_init__`` (run after the fields are set)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Optional

import pytest

from attrflow import ValueMappingError
from attrflow.codec import from_json


@dataclass(frozen=True)
class Address:
    street: str
    zip_code: Optional[str] = None  # noqa: UP045 - the codec resolves hints on Python 3.9 too


@dataclass
class Directory:
    by_email: dict[str, Address]
    history: list[Address]
    primary: Optional[Address] = None  # noqa: UP045 - as above
    normalized: bool = field(default=False)

    def __post_init__(self) -> None:
        self.normalized = True


def test_dicts_and_lists_of_dataclasses_decode_with_camel_case_names() -> None:
    text = (
        '{"byEmail": {"a@example.com": {"street": "Main", "zipCode": "1000"}},'
        ' "history": [{"street": "Old", "zipCode": null}],'
        ' "primary": null, "normalized": false}'
    )
    directory = from_json(text, Directory)
    assert directory.by_email == {"a@example.com": Address("Main", "1000")}
    assert directory.history == [Address("Old")]
    assert directory.primary is None
    assert directory.normalized  # __post_init__ ran after the fields were set


def test_a_mistyped_value_in_a_dict_of_dataclasses_names_its_key_field_and_type() -> None:
    text = '{"byEmail": {"a@example.com": {"street": 5, "zipCode": null}}, "history": []}'
    with pytest.raises(ValueMappingError) as raised:
        from_json(text, Directory, what="output of RPC Lookup")
    assert raised.value.path == "byEmail['a@example.com'].street"
    assert str(raised.value) == (
        "cannot decode output of RPC Lookup: byEmail['a@example.com'].street: expected str, got int"
    )


def test_a_missing_field_in_a_list_of_dataclasses_is_named() -> None:
    text = '{"byEmail": {}, "history": [{"street": "x"}], "primary": null, "normalized": true}'
    with pytest.raises(ValueMappingError, match=r"history\[0\]\.zipCode: field is missing"):
        from_json(text, Directory)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="slots=True needs Python 3.10")
def test_slotted_dataclasses_decode() -> None:
    @dataclass(slots=True)  # type: ignore[call-overload, unused-ignore]
    class Point:
        x: int
        y: float

    point = from_json('{"x": 1, "y": 2}', Point)
    assert (point.x, point.y) == (1, 2.0)


@dataclass
class Counted:
    """A dataclass with a ``__new__`` of its own, which building it goes through."""

    name: str

    made = 0

    def __new__(cls, *args: object, **kwargs: object) -> Counted:
        cls.made += 1
        return super().__new__(cls)


def test_a_dataclass_is_created_through_its_own_new() -> None:
    before = Counted.made
    assert from_json('[{"name": "a"}, {"name": "b"}]', list[Counted]) == [
        Counted("a"),
        Counted("b"),
    ]
    assert Counted.made == before + 4  # two decoded, two compared against
