"""``GET /subscribers/stream`` on a real service process over loopback: Server-Sent Events
of the subscribers after ``after``, then of each new registration, in order, each with
``<runID>:<sequence>`` as its ID; a client whose connection was cut resumes from its
``Last-Event-ID`` with no gap and no repeat; a trimmed start is a 410 before the stream
begins; an archive started again (by another process here) ends an open stream with an
``error`` event and refuses a resume in the old run with a 409, both naming the new run."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

from attrflow import Client, IdReusePolicy, StartFlowOptions
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow
from service_process import HOST, ServiceProcess, running_service

PREFIX = "/patterns/sequentially-chunked-attribute-map"
STREAM = f"{PREFIX}/subscribers/stream"


def register(service: ServiceProcess, first: int, last: int) -> None:
    for n in range(first, last + 1):
        body = {"subscriberId": f"s-{n}", "deliveryAddress": f"s-{n}@example.com"}
        status, answer = service.post(f"{PREFIX}/register", body)
        assert (status, answer["sequence"]) == (200, n)


def open_stream(
    service: ServiceProcess, query: str, headers: dict[str, str] | None = None
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    conn = http.client.HTTPConnection(HOST, service.port, timeout=60)
    conn.request("GET", f"{STREAM}{query}", headers=headers or {})
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("content-type", "").startswith("text/event-stream")
    return conn, response


def next_events(response: http.client.HTTPResponse, count: int) -> list[tuple[str, Any]]:
    """The next ``count`` events: (ID, decoded data) of a subscriber's, (``error``, body) of
    an error event; comment lines skipped."""
    events: list[tuple[str, Any]] = []
    event_id, data = None, None
    while len(events) < count:
        line = response.readline().decode().rstrip("\n")
        if line.startswith("id: "):
            event_id = line[4:]
        elif line == "event: error":
            event_id = "error"
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "" and event_id is not None:
            events.append((event_id, data))
            event_id, data = None, None
    return events


def sequences(events: list[tuple[str, Any]], run_id: str) -> list[int]:
    """The sequences of subscriber events, each checked to be of the run ``run_id``."""
    found: list[int] = []
    for event_id, data in events:
        run, _, sequence = event_id.rpartition(":")
        assert (run, int(sequence)) == (run_id, data["sequence"])
        found.append(data["sequence"])
    return found


def test_events_arrive_in_order_and_resume_after_a_cut(tmp_path: Path) -> None:
    with running_service(tmp_path) as service:
        _, started = service.post(f"{PREFIX}/start")
        run_id = started["runID"]
        register(service, 1, 5)
        conn, response = open_stream(service, "?after=2")
        assert sequences(next_events(response, 3), run_id) == [3, 4, 5]
        register(service, 6, 8)
        events = next_events(response, 3)
        assert sequences(events, run_id) == [6, 7, 8]
        assert events[0][1] == {
            "sequence": 6,
            "subscriberId": "s-6",
            "deliveryAddress": "s-6@example.com",
        }
        conn.close()

        register(service, 9, 12)
        last_event_id = events[-1][0]
        conn, response = open_stream(service, "?after=0", {"Last-Event-ID": last_event_id})
        assert sequences(next_events(response, 4), run_id) == [9, 10, 11, 12]
        register(service, 13, 13)
        assert sequences(next_events(response, 1), run_id) == [13]
        conn.close()

        # A bare sequence (as event IDs were before they named the run) resumes in the run
        # the stream's first read finds.
        conn, response = open_stream(service, "", {"Last-Event-ID": "11"})
        assert sequences(next_events(response, 2), run_id) == [12, 13]
        conn.close()


def test_an_archive_started_again_ends_the_stream_and_refuses_the_old_run(
    tmp_path: Path,
) -> None:
    with running_service(tmp_path) as service:
        _, started = service.post(f"{PREFIX}/start")
        first = started["runID"]
        register(service, 1, 3)
        conn, response = open_stream(service, "?after=1")
        events = next_events(response, 2)
        assert sequences(events, first) == [2, 3]

        options = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_TERMINATE_IF_RUNNING)
        with Client(service.store) as other_process:
            second = other_process.start_flow(ChunkedSubscriberFlow(), FLOW_ID, None, options)
        # The new run's sequences 1 to 5 are not the old run's 4 and 5.
        register(service, 1, 5)
        [(kind, body)] = next_events(response, 1)
        assert (kind, body["currentRunID"]) == ("error", second)
        assert body["error"] == f'flow "{FLOW_ID}" has no run "{first}"; its run is "{second}"'
        conn.close()

        conn = http.client.HTTPConnection(HOST, service.port, timeout=60)
        conn.request("GET", STREAM, headers={"Last-Event-ID": events[-1][0]})
        refused = conn.getresponse()
        assert refused.status == 409
        assert json.loads(refused.read())["currentRunID"] == second
        conn.close()
        conn, response = open_stream(service, f"?runID={second}")
        assert sequences(next_events(response, 5), second) == [1, 2, 3, 4, 5]
        conn.close()


def test_a_trimmed_or_bad_start_is_answered_before_the_stream(tmp_path: Path) -> None:
    with running_service(tmp_path) as service:
        service.post(f"{PREFIX}/start")
        register(service, 1, 150)
        status, body = service.post(f"{PREFIX}/trim", {"keepNewest": 1})
        assert (status, body["oldestSequence"]) == (200, 101)
        status, body = service.get(f"{STREAM}?after=5")
        assert status == 410
        assert (body["oldestToken"], body["oldestSequence"]) == ("current", 101)
        status, body = service.get(f"{STREAM}?after=x")
        assert (status, body) == (400, {"error": "after must be a whole number from 0, got 'x'"})
        status, body = service.get(f"{STREAM}?runID=")
        assert (status, body) == (400, {"error": "runID must not be empty"})
