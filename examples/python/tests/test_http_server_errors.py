"""What the HTTP server answers before the app sees a request is JSON too, like every answer
of the app: a request head over the limit (a long path or a long header) is a 431, a
request that is not HTTP/1.1 (a raw ``\\xff`` in the path) a 400, ``OPTIONS`` a 200
listing the allowed methods, and a POST without ``Content-Length`` or chunked framing (so
with an empty body) the app's JSON 400, storing nothing. Each is sent over a raw socket to a
real service process.

A request refused part-way is answered, and then the rest of what the client sends is read
and discarded, so that a client still sending gets the answer and a clean end of the
connection, not a reset; a client that sends too much, or goes quiet without closing, is
cut off."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from service_process import HOST, ServiceProcess, running_service

from attrflow_examples.server import LINGER_MAX_BYTES, LINGER_SECONDS, MAX_HEAD_BYTES

SOCKET_TIMEOUT_SECONDS = 30.0
PIECE_BYTES = 1024


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """One real service process for the module, on a fresh store."""
    with running_service(tmp_path_factory.mktemp("server-errors")) as running:
        yield running


def exchange(
    service: ServiceProcess, request: bytes, *, in_pieces: bool = False
) -> tuple[int, dict[str, str], Any]:
    """Sends ``request`` (in :data:`PIECE_BYTES` pieces, one ``send`` each, if ``in_pieces``,
    so that the server refuses it while more is on its way) and reads the whole answer up to
    the server's end of the connection: status, headers (lower-case names) and the JSON
    body. A reset of the connection raises ``ConnectionResetError``."""
    with socket.create_connection((HOST, service.port), timeout=SOCKET_TIMEOUT_SECONDS) as conn:
        if in_pieces:
            for start in range(0, len(request), PIECE_BYTES):
                conn.sendall(request[start : start + PIECE_BYTES])
        else:
            conn.sendall(request)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, value in (line.split(": ", 1) for line in lines[1:])}
    return int(lines[0].split(" ")[1]), headers, json.loads(body)


def test_a_path_over_the_head_limit_is_a_json_431(service: ServiceProcess) -> None:
    path = b"/" + b"p" * (MAX_HEAD_BYTES + 1)
    status, headers, body = exchange(service, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (status, body) == (431, {"error": "request header fields too large"})
    assert headers["content-type"] == "application/json"


def test_a_header_over_the_head_limit_is_a_json_431(service: ServiceProcess) -> None:
    big = b"X-Big: " + b"b" * (4 * MAX_HEAD_BYTES) + b"\r\n"
    status, _, body = exchange(service, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n")
    assert (status, body) == (431, {"error": "request header fields too large"})


def test_a_client_still_sending_a_refused_head_gets_the_431_and_a_clean_end(
    service: ServiceProcess,
) -> None:
    big = b"X-Big: " + b"b" * (4 * MAX_HEAD_BYTES) + b"\r\n"
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n"
    for _ in range(20):
        status, _, body = exchange(service, request, in_pieces=True)
        assert (status, body) == (431, {"error": "request header fields too large"})


def test_a_refused_client_that_never_stops_sending_is_cut_off(service: ServiceProcess) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Endless: "
    piece = b"e" * 65536
    with socket.create_connection((HOST, service.port), timeout=SOCKET_TIMEOUT_SECONDS) as conn:
        conn.sendall(request)
        sent = len(request)
        refused: OSError | None = None
        while refused is None and sent < 64 * LINGER_MAX_BYTES:
            try:
                conn.sendall(piece)
            except (BrokenPipeError, ConnectionResetError) as error:
                refused = error
            sent += len(piece)
    assert refused is not None, f"the server still read after {sent} bytes"
    assert sent > LINGER_MAX_BYTES


def test_a_refused_client_that_goes_quiet_is_closed_after_the_linger(
    service: ServiceProcess,
) -> None:
    request = b"GET /" + b"p" * (MAX_HEAD_BYTES + 1) + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection((HOST, service.port), timeout=SOCKET_TIMEOUT_SECONDS) as conn:
        conn.sendall(request)
        while conn.recv(65536):
            pass  # the 431, then the server's end of its side
        # Still open, the server's side discards each byte sent; once closed, a byte sent
        # is answered with a reset, which fails the next send.
        time.sleep(LINGER_SECONDS)
        deadline = time.monotonic() + SOCKET_TIMEOUT_SECONDS
        closed = False
        while not closed and time.monotonic() < deadline:
            try:
                conn.sendall(b"x")
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            time.sleep(0.1)
    assert closed, f"still open {SOCKET_TIMEOUT_SECONDS} s after the linger"


def test_a_raw_non_ascii_byte_in_the_path_is_a_json_400(service: ServiceProcess) -> None:
    status, headers, body = exchange(service, b"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (status, body) == (400, {"error": "Invalid HTTP request received."})
    assert headers["content-type"] == "application/json"


def test_options_is_a_json_200_listing_the_allowed_methods(service: ServiceProcess) -> None:
    request = b"OPTIONS /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    status, headers, body = exchange(service, request)
    assert (status, body) == (200, {"allow": ["GET", "HEAD", "OPTIONS"]})
    assert headers["content-type"] == "application/json"


def test_a_head_just_under_the_limit_is_served(service: ServiceProcess) -> None:
    header = b"X-Fill: " + b"f" * (MAX_HEAD_BYTES // 2) + b"\r\n"
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + header + b"\r\n"
    status, _, body = exchange(service, request)
    assert (status, body) == (200, {"status": "ok"})


def test_a_post_without_a_length_or_chunked_framing_is_a_json_400_storing_nothing(
    service: ServiceProcess,
) -> None:
    prefix = "/patterns/sequentially-chunked-attribute-map"
    start = (
        f"POST {prefix}/start HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    assert exchange(service, start.encode())[0] == 200
    body = b'{"subscriberId": "s-1", "deliveryAddress": "s-1@example.com"}'
    register = (
        f"POST {prefix}/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    status, headers, answer = exchange(service, register + body)
    assert (status, answer) == (400, {"error": "JSON request body is required"})
    assert headers["content-type"] == "application/json"
    page = (
        f"GET {prefix}/subscribers?pageToken=current HTTP/1.1\r\n"
        "Host: x\r\nConnection: close\r\n\r\n"
    )
    status, _, listed = exchange(service, page.encode())
    assert (status, listed["subscribers"]) == (200, [])
