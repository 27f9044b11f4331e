"""JSON text decodes in one pass (``Decoder.decode_json``) to exactly the values and errors
of the codec: nested dataclasses whatever the order of their keys, unknown keys skipped,
escapes in strings and in keys, mismatches naming their path and types, and text that is
not JSON (trailing characters included) refused."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Union

import pytest

from attrflow import ValueMappingError
from attrflow.codec import decoder
from attrflow.flows.chunked_subscriber import Subscriber, SubscriberPage


@dataclass(frozen=True)
class Member:
    sequence: int
    member_id: str
    nick_name: Optional[str]  # noqa: UP045 - the codec resolves hints on Python 3.9 too
    score: float


@dataclass
class Roster:
    page_token: str
    members: list[Member]
    next_page_token: str
    labels: dict[str, Union[int, str]]  # noqa: UP007 - as above
    extra: Any = None


ROSTER_TEXT = (
    # Keys in another order than declared, an unknown key (with nested values) skipped,
    # escapes in strings and a key written with an escape (\u0049 is "I").
    '{"members": ['
    '{"score": 1, "sequence": 1, "memberId": "m-1", "nickName": null},'
    ' {"memberId": "m-\\u00e9\\ud83d\\ude00\\n\\"q\\"", "unknown": {"deep": [1, {"x": null}]},'
    ' "nickName": "caf\\u00e9", "sequence": 2, "score": 2.5},'
    ' {"sequence": 3, "member\\u0049d": "m-3", "nickName": "n", "score": -0.5, "score": 3}'
    "],"
    ' "labels": {"b": 1, "a": "x"}, "nextPageToken": "next", "pageToken": "",'
    ' "extra": {"list": [1, 2.5, true, null, "s"]}}'
)

ROSTER = Roster(
    page_token="",
    members=[
        Member(1, "m-1", None, 1.0),
        Member(2, 'm-\u00e9\U0001f600\n"q"', "caf\u00e9", 2.5),
        Member(3, "m-3", "n", 3.0),  # a repeated key keeps its last value
    ],
    next_page_token="next",
    labels={"b": 1, "a": "x"},
    extra={"list": [1, 2.5, True, None, "s"]},
)


def test_a_page_of_nested_dataclasses_decodes_from_text() -> None:
    roster = decoder(Roster).decode_json(ROSTER_TEXT, "roster")
    assert roster == ROSTER
    assert [type(member.score) for member in roster.members] == [float, float, float]
    assert type(roster.members[0].sequence) is int
    assert roster.labels == {"b": 1, "a": "x"}


def test_a_subscriber_page_decodes_from_the_text_the_codec_writes() -> None:
    page = SubscriberPage(
        "",
        [Subscriber(i, f"s-{i}", f"s-{i}@example.com") for i in range(100)],
        "abc",
    )
    text = json.dumps(
        {
            "pageToken": "",
            "subscribers": [
                {
                    "sequence": s.sequence,
                    "subscriberId": s.subscriber_id,
                    "deliveryAddress": s.delivery_address,
                }
                for s in page.subscribers
            ],
            "nextPageToken": "abc",
        }
    )
    assert decoder(SubscriberPage).decode_json(text, "page") == page


def _subscribers(*records: str) -> str:
    return '{"pageToken": "", "subscribers": [' + ", ".join(records) + '], "nextPageToken": ""}'


GOOD = '{"sequence": 1, "subscriberId": "a", "deliveryAddress": "a@example.com"}'

MISFITTING: list[tuple[str, str, str]] = [
    (
        _subscribers(GOOD, '{"sequence": "2", "subscriberId": "b", "deliveryAddress": "b"}'),
        "subscribers[1].sequence",
        "expected int, got str",
    ),
    (
        _subscribers(GOOD, '{"sequence": 2.0, "subscriberId": "b", "deliveryAddress": "b"}'),
        "subscribers[1].sequence",
        "expected int, got float",
    ),
    (
        _subscribers(GOOD, '{"sequence": true, "subscriberId": "b", "deliveryAddress": "b"}'),
        "subscribers[1].sequence",
        "expected int, got bool",
    ),
    (
        _subscribers(GOOD, '{"sequence": 2, "subscriberId": "b"}'),
        "subscribers[1].deliveryAddress",
        "field is missing",
    ),
    (_subscribers(GOOD, "[]"), "subscribers[1]", "expected a JSON object for Subscriber, got list"),
    ('{"pageToken": "", "subscribers": {}}', "subscribers", "expected a JSON array, got dict"),
    ('{"pageToken": null}', "pageToken", "expected str, got null"),
    ("[]", "", "expected a JSON object for SubscriberPage, got list"),
]


@pytest.mark.parametrize(("text", "path", "problem"), MISFITTING)
def test_a_mismatch_names_its_path_and_the_expected_and_met_types(
    text: str, path: str, problem: str
) -> None:
    with pytest.raises(ValueMappingError) as raised:
        decoder(SubscriberPage).decode_json(text, "page")
    where = f"{path}: " if path else ""
    assert str(raised.value) == f"cannot decode page: {where}{problem}"
    assert raised.value.path == path


def test_a_mismatch_in_a_union_or_a_dict_names_its_path() -> None:
    text = ROSTER_TEXT.replace('"a": "x"', '"a\\u0027": 1.5')
    with pytest.raises(ValueMappingError) as raised:
        decoder(Roster).decode_json(text, "roster")
    assert str(raised.value) == 'cannot decode roster: labels["a\'"]: expected int | str, got float'
    assert raised.value.path == 'labels["a\'"]'
    text = ROSTER_TEXT.replace('"nickName": "n"', '"nickName": 7')
    with pytest.raises(ValueMappingError, match=r"members\[2\]\.nickName: expected str, got int"):
        decoder(Roster).decode_json(text, "roster")


@pytest.mark.parametrize(
    "text",
    [
        GOOD + " x",
        GOOD + GOOD,
        GOOD[:-1],
        "",
        "{nope",
        '{"sequence": 1, "subscriberId": "a", "deliveryAddress": "a", "other": [1, }',
        '{"sequence": 1, "subscriberId": "a", "deliveryAddress": "a", "other": 1e999}',
        '{"sequence": 1, "subscriberId": "a", "deliveryAddress": "a", "other": '
        + "[" * 200
        + "]" * 200
        + "}",
        # Not JSON further on than a value that does not fit: still "not JSON".
        '{"sequence": "1", "subscriberId": "a", "deliveryAddress": "a"} x',
        '{"sequence": "1", "subscriberId": "a", "deliveryAddress": "a", "other": [1, }',
        '{"sequence": "1", ',
    ],
)
def test_text_that_is_not_json_is_a_mapping_error(text: str) -> None:
    with pytest.raises(ValueMappingError, match=r"^cannot decode subscriber: not JSON: ") as raised:
        decoder(Subscriber).decode_json(text, "subscriber")
    assert raised.value.path == ""
