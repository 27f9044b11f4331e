"""The real service process under abuse, over raw sockets on loopback.

Oversized bodies (declared or streamed chunked) are a JSON 413, malformed JSON a 400, a
field over its byte limit a 400 naming the limit; none of them stores anything. Idle
connections, half-sent headers and bodies trickled a byte at a time do not stall the
requests of other clients. Every wait is bounded; nothing asserts on time.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from service_process import HOST, ServiceProcess, running_service

from attrflow_examples.app import MAX_CONTENT_LENGTH

PREFIX = "/patterns/sequentially-chunked-attribute-map"
SOCKET_TIMEOUT_SECONDS = 30.0
IDLE_CONNECTIONS = 20
TRICKLING_CLIENTS = 5
TRICKLE_PAUSE_SECONDS = 0.05
PROMPT_REQUESTS = 20


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """One real service process for the module, on a fresh store."""
    with running_service(tmp_path_factory.mktemp("abuse")) as running:
        yield running


def connect(service: ServiceProcess) -> socket.socket:
    """A plain TCP connection to the service."""
    return socket.create_connection((HOST, service.port), timeout=SOCKET_TIMEOUT_SECONDS)


def read_response(conn: socket.socket) -> tuple[int, Any]:
    """Reads one HTTP/1.1 response (the service sends ``content-length``): status, JSON body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError(f"connection closed after {data!r}")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = dict(line.split(": ", 1) for line in lines[1:])
    length = int({k.lower(): v for k, v in headers.items()}["content-length"])
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed inside the body")
        body += chunk
    return status, json.loads(body[:length])


def raw_post(service: ServiceProcess, head: bytes, body: bytes) -> tuple[int, Any]:
    """Sends ``head`` (request line and headers, without the blank line) and ``body``."""
    with connect(service) as conn:
        conn.sendall(head + b"\r\nConnection: close\r\n\r\n" + body)
        return read_response(conn)


def register_head(length: int | None) -> bytes:
    """The head of a ``POST /register`` with a JSON body of ``length`` bytes (``None``: chunked)."""
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        f"POST {PREFIX}/register HTTP/1.1\r\nHost: {HOST}\r\n"
        f"Content-Type: application/json\r\n{framing}"
    ).encode()


def newest_sequence(service: ServiceProcess) -> int:
    status, page = service.get(f"{PREFIX}/subscribers?pageToken=current")
    assert status == 200, page
    subscribers: list[dict[str, Any]] = page["subscribers"]
    return int(subscribers[0]["sequence"]) if subscribers else 0


def register(service: ServiceProcess, subscriber_id: str) -> tuple[int, Any]:
    body = {"subscriberId": subscriber_id, "deliveryAddress": f"{subscriber_id}@example.com"}
    return service.post(f"{PREFIX}/register", body)


def test_a_declared_oversized_body_is_a_json_413_and_stores_nothing(
    service: ServiceProcess,
) -> None:
    before = newest_sequence(service)
    body = json.dumps({"subscriberId": "x" * MAX_CONTENT_LENGTH, "deliveryAddress": "a"}).encode()
    status, answer = raw_post(service, register_head(len(body)), body)
    assert status == 413
    assert set(answer) == {"error"}
    assert newest_sequence(service) == before


def test_a_chunked_body_growing_past_the_limit_is_a_json_413_and_stores_nothing(
    service: ServiceProcess,
) -> None:
    before = newest_sequence(service)
    piece = b"x" * 16384
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(6)) + b"0\r\n\r\n"
    status, answer = raw_post(service, register_head(None), chunks)
    assert status == 413
    assert set(answer) == {"error"}
    assert newest_sequence(service) == before


@pytest.mark.parametrize(
    "body",
    [b"{", b"{'subscriberId': 1}", b"\xff\xfe{}", b"[]", b"null", b"", b"1e999999", b'"x"'],
)
def test_malformed_json_is_a_400_and_stores_nothing(service: ServiceProcess, body: bytes) -> None:
    before = newest_sequence(service)
    status, answer = raw_post(service, register_head(len(body)), body)
    assert (status, answer) == (400, {"error": "JSON request body is required"})
    assert newest_sequence(service) == before


def test_a_record_over_its_byte_limit_is_a_400_naming_the_limit(service: ServiceProcess) -> None:
    before = newest_sequence(service)
    body = {"subscriberId": "s" * 10_500, "deliveryAddress": "a@example.com"}
    status, answer = service.post(f"{PREFIX}/register", body)
    assert status == 400
    assert answer["error"].startswith("record is "), answer
    assert "the limit of a log with chunks of 100 records is 10474 bytes" in answer["error"]
    assert newest_sequence(service) == before


class Trickler(threading.Thread):
    """Sends a register request's head, then half its body one byte at a time, slowly; holds
    the rest back until ``resume`` is set, so the request is unfinished for as long as the
    test needs; then sends the rest and reads the answer."""

    def __init__(self, service: ServiceProcess, name: str, resume: threading.Event) -> None:
        super().__init__(name=name, daemon=True)
        self.conn = connect(service)
        self.body = json.dumps(
            {"subscriberId": name, "deliveryAddress": f"{name}@example.com"}
        ).encode()
        self.resume = resume
        self.half_sent = threading.Event()
        self.answer: tuple[int, Any] | None = None

    def run(self) -> None:
        half = len(self.body) // 2
        with self.conn:
            self.conn.sendall(register_head(len(self.body)) + b"\r\nConnection: close\r\n\r\n")
            for byte in self.body[:half]:
                time.sleep(TRICKLE_PAUSE_SECONDS)
                self.conn.sendall(bytes([byte]))
            self.half_sent.set()
            if not self.resume.wait(SOCKET_TIMEOUT_SECONDS):
                return
            for byte in self.body[half:]:
                self.conn.sendall(bytes([byte]))
            self.answer = read_response(self.conn)


def test_slow_and_idle_clients_do_not_stall_other_requests(service: ServiceProcess) -> None:
    idle = [connect(service) for _ in range(IDLE_CONNECTIONS)]
    half_headers = [connect(service) for _ in range(IDLE_CONNECTIONS)]
    for conn in half_headers:
        conn.sendall(f"POST {PREFIX}/register HTTP/1.1\r\nHost: {HOST}\r\n".encode())
    resume = threading.Event()
    tricklers = [Trickler(service, f"trickler-{n}", resume) for n in range(TRICKLING_CLIENTS)]
    for trickler in tricklers:
        trickler.start()
    try:
        for trickler in tricklers:
            assert trickler.half_sent.wait(SOCKET_TIMEOUT_SECONDS)
        # Every slow request is half-sent and stays so until resume: these must not wait.
        answers = [register(service, f"prompt-{n:02}") for n in range(PROMPT_REQUESTS)]
    finally:
        resume.set()
        for trickler in tricklers:
            trickler.join(timeout=SOCKET_TIMEOUT_SECONDS)
        for conn in idle + half_headers:
            conn.close()

    assert [status for status, _ in answers] == [200] * PROMPT_REQUESTS, answers
    sequences = [answer["sequence"] for _, answer in answers]
    assert sequences == sorted(sequences)
    assert [t.answer and t.answer[0] for t in tricklers] == [200] * TRICKLING_CLIENTS
    assert all(not t.is_alive() for t in tricklers)
