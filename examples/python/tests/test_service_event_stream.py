"""``GET /subscribers/stream`` on a real service process over loopback: Server-Sent Events
of the subscribers after ``after``, then of each new registration, in order; a client whose
connection was cut resumes from its ``Last-Event-ID`` with no gap and no repeat; a trimmed
start is a 410 before the stream begins."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

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


def next_events(response: http.client.HTTPResponse, count: int) -> list[tuple[int, Any]]:
    """The next ``count`` events with an ID: (ID, decoded data); comment lines skipped."""
    events: list[tuple[int, Any]] = []
    event_id, data = None, None
    while len(events) < count:
        line = response.readline().decode().rstrip("\n")
        if line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "" and event_id is not None:
            events.append((event_id, data))
            event_id, data = None, None
    return events


def test_events_arrive_in_order_and_resume_after_a_cut(tmp_path: Path) -> None:
    with running_service(tmp_path) as service:
        service.post(f"{PREFIX}/start")
        register(service, 1, 5)
        conn, response = open_stream(service, "?after=2")
        assert [e[0] for e in next_events(response, 3)] == [3, 4, 5]
        register(service, 6, 8)
        events = next_events(response, 3)
        assert [e[0] for e in events] == [6, 7, 8]
        assert events[0][1] == {
            "sequence": 6,
            "subscriberId": "s-6",
            "deliveryAddress": "s-6@example.com",
        }
        conn.close()

        register(service, 9, 12)
        conn, response = open_stream(service, "?after=0", {"Last-Event-ID": "8"})
        assert [e[0] for e in next_events(response, 4)] == [9, 10, 11, 12]
        register(service, 13, 13)
        assert [e[0] for e in next_events(response, 1)] == [13]
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
