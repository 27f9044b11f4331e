"""The dataclass codec: camelCase JSON, strict in both directions, errors naming the path."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

import pytest
from archive_support import Archive

from attrflow import Client, InvalidInputError, ValueMappingError
from attrflow.codec import decode, encode, from_json, json_name, to_json
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow, Subscriber, SubscriberPage


@dataclass
class Scalars:
    flag: bool
    count: int
    ratio: float
    label: str


@dataclass
class Nested:
    items: list[Scalars]
    by_name: dict[str, int]
    maybe_note: Optional[str] = None  # noqa: UP045 - the codec evaluates it on Python 3.9 too
    pair: tuple[int, ...] = field(default=())


def page() -> SubscriberPage:
    return SubscriberPage(
        page_token="current",
        subscribers=[Subscriber(2, "b", "b@example.com"), Subscriber(1, "a", "a@example.com")],
        next_page_token="",
    )


def test_field_names_are_camel_case() -> None:
    assert json_name("next_sequence") == "nextSequence"
    assert json_name("latest_archived_chunk_token") == "latestArchivedChunkToken"
    assert json_name("sequence") == "sequence"
    assert json.loads(to_json(page(), SubscriberPage)) == {
        "pageToken": "current",
        "subscribers": [
            {"sequence": 2, "subscriberId": "b", "deliveryAddress": "b@example.com"},
            {"sequence": 1, "subscriberId": "a", "deliveryAddress": "a@example.com"},
        ],
        "nextPageToken": "",
    }


def test_values_round_trip() -> None:
    assert from_json(to_json(page(), SubscriberPage), SubscriberPage) == page()
    nested = Nested([Scalars(True, 3, 0.5, "x")], {"k": 1}, "note", (1, 2))
    assert decode(encode(nested, Nested), Nested) == nested


def test_a_missing_field_is_an_error_naming_its_path() -> None:
    data = encode(page(), SubscriberPage)
    del data["subscribers"][1]["deliveryAddress"]
    with pytest.raises(ValueMappingError) as raised:
        decode(data, SubscriberPage, what="page")
    assert raised.value.path == "subscribers[1].deliveryAddress"
    assert (
        str(raised.value) == "cannot decode page: subscribers[1].deliveryAddress: field is missing"
    )


def test_a_field_deleted_from_an_instance_is_an_error_naming_it_when_encoding() -> None:
    value = page()
    del value.subscribers[1].delivery_address
    with pytest.raises(ValueMappingError) as raised:
        to_json(value, SubscriberPage, what="page")
    assert raised.value.path == "subscribers[1].delivery_address"
    assert str(raised.value) == (
        "cannot encode page: subscribers[1].delivery_address: field is missing"
    )


def test_every_declared_field_must_be_present_even_with_a_default() -> None:
    with pytest.raises(ValueMappingError, match="nextPageToken: field is missing"):
        decode({"pageToken": "current", "subscribers": []}, SubscriberPage)


def test_unknown_fields_are_ignored() -> None:
    data = {"sequence": 1, "subscriberId": "a", "deliveryAddress": "d", "extra": 1}
    assert decode(data, Subscriber) == Subscriber(1, "a", "d")


@pytest.mark.parametrize(
    ("field_name", "bad", "expected"),
    [
        ("flag", 1, "expected bool, got int"),
        ("count", True, "expected int, got bool"),
        ("count", 1.0, "expected int, got float"),
        ("count", "1", "expected int, got str"),
        ("ratio", False, "expected float, got bool"),
        ("label", None, "expected str, got null"),
        ("label", 5, "expected str, got int"),
    ],
)
def test_primitive_types_are_checked_strictly(field_name: str, bad: Any, expected: str) -> None:
    data: dict[str, Any] = {"flag": True, "count": 1, "ratio": 1.5, "label": "x"}
    data[field_name] = bad
    with pytest.raises(ValueMappingError, match=f"{field_name}: {expected}") as raised:
        decode(data, Scalars)
    assert raised.value.path == field_name
    values = {"flag": True, "count": 1, "ratio": 1.5, "label": "x", field_name: bad}
    with pytest.raises(ValueMappingError, match=f"{field_name}: {expected}"):
        encode(Scalars(**values), Scalars)


def test_an_int_is_accepted_where_a_float_is_declared() -> None:
    decoded = decode({"flag": False, "count": 0, "ratio": 2, "label": ""}, Scalars)
    assert decoded.ratio == 2.0
    assert isinstance(decoded.ratio, float)


def test_optional_nested_lists_and_dicts_are_checked() -> None:
    good: dict[str, Any] = {"items": [], "byName": {}, "maybeNote": None, "pair": [1]}
    assert decode(good, Nested) == Nested([], {}, None, (1,))
    with pytest.raises(ValueMappingError, match=r"items\[0\]: expected a JSON object"):
        decode({**good, "items": [3]}, Nested)
    with pytest.raises(ValueMappingError, match=r"byName\['k'\]: expected int, got str"):
        decode({**good, "byName": {"k": "v"}}, Nested)
    with pytest.raises(ValueMappingError, match="maybeNote: expected str, got int"):
        decode({**good, "maybeNote": 1}, Nested)
    with pytest.raises(ValueMappingError, match="items: expected a JSON array, got dict"):
        decode({**good, "items": {}}, Nested)


def test_encoding_checks_values_against_their_types() -> None:
    with pytest.raises(ValueMappingError, match=r"items\[0\]: expected Scalars, got str"):
        encode(Nested(["x"], {}), Nested)  # type: ignore[list-item]
    with pytest.raises(ValueMappingError, match="does not fit in 64 bits"):
        encode(Scalars(True, 2**64, 0.0, ""), Scalars)
    with pytest.raises(ValueMappingError, match="no JSON form"):
        encode(Scalars(True, 0, float("nan"), ""), Scalars)
    with pytest.raises(ValueMappingError, match="expected Subscriber, got SubscriberPage"):
        encode(page(), Subscriber)
    with pytest.raises(ValueMappingError, match="not supported"):
        encode({1, 2}, set)


def test_invalid_json_text_is_a_mapping_error() -> None:
    with pytest.raises(ValueMappingError, match="not JSON"):
        from_json("{nope", Subscriber)


def test_a_mapping_error_is_invalid_input() -> None:
    with pytest.raises(InvalidInputError):
        decode([], Subscriber)
    with pytest.raises(ValueError, match="expected a JSON object"):
        decode([], Subscriber)


def test_the_client_encodes_inputs_with_the_declared_type(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    from attrflow.flows.chunked_subscriber import FLOW_ID, GetSubscriberPageInput

    with pytest.raises(ValueMappingError, match="input of RPC RegisterSubscriber"):
        client.invoke_rpc(flow.register_subscriber, FLOW_ID, GetSubscriberPageInput("x"))  # type: ignore[misc]
    assert archive.page("current").subscribers == []
