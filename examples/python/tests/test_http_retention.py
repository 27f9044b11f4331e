"""``POST /trim``, ``PUT /retention`` and ``GET /subscribers?after=``: a trim drops whole
archived chunks and leaves the other pages as they were; a trimmed page token or ``after``
is 410 Gone naming the oldest retained page token and sequence; reading forward returns
every subscriber once, oldest first, naming the run read; a long poll (``&wait=``) answers
at once, on the next registration, or empty on timeout; pinned to a run (``&runID=``), a
read of an archive started again since is a 409 naming the new run; bad values are 400s
with the core's message."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from archive_api import PREFIX, HttpClient, get_page, read_page, sequences, subscriber_body
from attrflow import Client, IdReusePolicy, PageTrimmedError, StartFlowOptions
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow

from attrflow_examples.http_errors import ERROR_RULES, rule_for

pytestmark = pytest.mark.asyncio

MAX_SEQUENCE = 2**64 - 1


async def register_range(http: HttpClient, first: int, last: int) -> None:
    for start in range(first, last + 1, 250):
        batch = [subscriber_body(n) for n in range(start, min(start + 250, last + 1))]
        response = await http.post(f"{PREFIX}/register-batch", json={"subscribers": batch})
        assert response.status_code == 200, await response.get_json()


async def call(http: HttpClient, method: str, route: str, **kwargs: Any) -> tuple[int, Any]:
    response = await http.open(f"{PREFIX}/{route}", method=method, **kwargs)
    return response.status_code, await response.get_json()


async def read_after(http: HttpClient, **query: object) -> tuple[int, Any]:
    return await call(http, "GET", "subscribers", query_string=query)


async def test_a_trim_leaves_the_rest_and_a_trimmed_token_is_gone(http: HttpClient) -> None:
    await register_range(http, 1, 550)
    kept = await read_page(http, "00000000000000000301")

    status, outcome = await call(http, "POST", "trim", json={"dropBefore": 250})
    assert (status, outcome) == (
        200,
        {
            "droppedChunks": 2,
            "droppedRecords": 200,
            "retainedRecords": 350,
            "oldestSequence": 201,
            "oldestToken": "00000000000000000201",
        },
    )
    assert await read_page(http, "00000000000000000301") == kept
    assert (await read_page(http, "00000000000000000201"))["nextPageToken"] == ""
    status, gone = await get_page(http, "00000000000000000101")
    assert status == 410
    assert gone == {
        "error": 'page "00000000000000000101" was trimmed; the oldest retained page is '
        '"00000000000000000201", from sequence 201',
        "oldestToken": "00000000000000000201",
        "oldestSequence": 201,
    }

    status, gone = await read_after(http, after=150)
    assert (status, gone["oldestSequence"]) == (410, 201)
    # Resuming from the oldest retained sequence reads every kept subscriber once.
    after, seen = gone["oldestSequence"] - 1, []
    while True:
        status, body = await read_after(http, after=after, limit=37)
        assert status == 200, body
        if not body["subscribers"]:
            break
        seen.extend(sequences(body))
        after = body["nextAfter"]
    assert seen == list(range(201, 551))
    assert after == 550


async def test_a_read_forward_starts_after_the_given_sequence(http: HttpClient) -> None:
    await register_range(http, 1, 120)
    status, body = await read_after(http, after=98, limit=4)
    assert status == 200
    assert sequences(body) == [99, 100, 101, 102]
    assert body["subscribers"][0] == {"sequence": 99, **subscriber_body(99)}
    assert body["nextAfter"] == 102
    status, body = await read_after(http, after=0)
    assert (status, len(body["subscribers"]), body["nextAfter"]) == (200, 100, 100)
    run_id = body["runID"]
    status, body = await read_after(http, after=120, runID=run_id)
    assert (status, body) == (200, {"subscribers": [], "nextAfter": 120, "runID": run_id})


async def test_a_retention_holds_the_archive_near_its_bound(http: HttpClient) -> None:
    await register_range(http, 1, 320)
    # 320 subscribers: dropping 1..100 leaves 220; dropping 101..200 would leave 120.
    status, body = await call(http, "PUT", "retention", json={"keepNewest": 150})
    assert (status, body["keepNewest"], body["droppedChunks"]) == (200, 150, 1)
    await register_range(http, 321, 700)
    status, body = await call(http, "POST", "trim", json={"keepNewest": 150})
    assert status == 200
    assert body["droppedChunks"] == 0
    assert 150 <= body["retainedRecords"] < 250
    status, body = await call(http, "PUT", "retention", json={"keepNewest": None})
    assert (status, body["keepNewest"]) == (200, None)


@pytest.mark.parametrize(
    ("method", "route", "request_args", "message"),
    [
        ("POST", "trim", {"json": {}}, "a trim takes exactly one of keepNewest and dropBefore"),
        ("POST", "trim", {"json": {"keepNewest": "5"}}, "keepNewest must be an integer"),
        ("POST", "trim", {"json": {"dropBefore": True}}, "dropBefore must be an integer"),
        (
            "POST",
            "trim",
            {"json": {"keepNewest": 0}},
            f"keepNewest must be from 1 to {MAX_SEQUENCE}, not 0",
        ),
        (
            "POST",
            "trim",
            {"json": {"dropBefore": 102}},
            "dropBefore 102 would drop records of the open chunk, which starts at sequence "
            "101; a trim drops whole archived chunks only",
        ),
        (
            "PUT",
            "retention",
            {"json": {"keepNewest": -4}},
            f"keepNewest must be from 1 to {MAX_SEQUENCE}, not -4",
        ),
        (
            "GET",
            "subscribers",
            {"query_string": {"after": "-1"}},
            "after must be a whole number from 0, got '-1'",
        ),
        (
            "GET",
            "subscribers",
            {"query_string": {"after": "1", "limit": "0"}},
            "limit must be from 1 to 1000, not 0",
        ),
        (
            "GET",
            "subscribers",
            {"query_string": {"after": "1", "pageToken": "current"}},
            "pageToken and after cannot be combined",
        ),
    ],
)
async def test_bad_values_are_400s_naming_them(
    http: HttpClient, method: str, route: str, request_args: dict[str, Any], message: str
) -> None:
    await register_range(http, 1, 120)
    status, body = await call(http, method, route, **request_args)
    assert (status, body) == (400, {"error": message})
    assert sequences(await read_page(http, "00000000000000000001"))[0] == 100


async def test_a_trimmed_page_is_gone() -> None:
    error = PageTrimmedError.__new__(PageTrimmedError)
    assert rule_for(error, ERROR_RULES).status == 410


async def test_a_long_poll_answers_at_once_waits_for_a_registration_or_times_out(
    http: HttpClient,
) -> None:
    await register_range(http, 1, 5)
    status, body = await read_after(http, after=2, wait=60)
    assert (status, sequences(body), body["nextAfter"]) == (200, [3, 4, 5], 5)
    run_id = body["runID"]
    status, body = await read_after(http, after=5, wait=0.05)
    assert (status, body) == (200, {"subscribers": [], "nextAfter": 5, "runID": run_id})

    waiting = asyncio.create_task(read_after(http, after=5, wait=60))
    await register_range(http, 6, 6)
    status, body = await waiting
    assert (status, sequences(body), body["nextAfter"]) == (200, [6], 6)

    for wait, message in [
        ("soon", "wait must be a number of seconds, got 'soon'"),
        ("nan", "wait must be a number of seconds, got 'nan'"),
        ("61", "timeout must be from 0 to 60 seconds, not 61 seconds"),
        ("-1", "timeout must be from 0 to 60 seconds, not -1 seconds"),
    ]:
        status, body = await read_after(http, after=5, wait=wait)
        assert (status, body) == (400, {"error": message})


async def test_a_read_pinned_to_its_run_refuses_the_archive_started_again(
    http: HttpClient, store: str
) -> None:
    await register_range(http, 1, 3)
    status, body = await read_after(http, after=0)
    first = body["runID"]
    assert (status, sequences(body)) == (200, [1, 2, 3])
    waiting = asyncio.create_task(read_after(http, after=3, wait=60, runID=first))
    await asyncio.sleep(0.1)  # lets the long poll begin waiting (it is refused either way)

    options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_TERMINATE_IF_RUNNING)
    with Client(store) as other:
        second = other.start_flow(ChunkedSubscriberFlow(), FLOW_ID, None, options)
    # The new run's 4th and 5th subscribers are not the old run's: the waiting long poll
    # gets none of them.
    await register_range(http, 1, 5)
    expected = {
        "error": f'flow "{FLOW_ID}" has no run "{first}"; its run is "{second}"',
        "currentRunID": second,
    }
    assert await waiting == (409, expected)
    assert await read_after(http, after=3, runID=first) == (409, expected)
    status, body = await read_after(http, after=3, runID=second)
    assert (status, sequences(body), body["runID"]) == (200, [4, 5], second)
    assert await read_after(http, after=3, runID="") == (
        400,
        {"error": "runID must not be empty"},
    )
