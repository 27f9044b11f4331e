"""The served app answers plain registers in front of Quart
(attrflow_examples.fast_register): its answers are byte for byte what the Quart route
answers, and every register it does not take (a query, an ``Idempotency-Key``, a body that
is not the route's object or is too large) is answered by the route itself. A register the
core refuses is answered by the route's error handlers, and the call is not made again."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from service_process import HOST, ServiceProcess, running_service

REGISTER = "/patterns/sequentially-chunked-attribute-map/register"
PAGE = "/patterns/sequentially-chunked-attribute-map/subscribers?pageToken=current"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """One real service process on a fresh store."""
    with running_service(tmp_path_factory.mktemp("fast-register")) as running:
        yield running


def post(service: ServiceProcess, target: str, body: bytes) -> tuple[int, str, bytes]:
    """Status, content type and body bytes of ``POST target`` with ``body``."""
    conn = http.client.HTTPConnection(HOST, service.port, timeout=30)
    try:
        conn.request("POST", target, body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.getheader("content-type", ""), response.read()
    finally:
        conn.close()


def stored_ids(service: ServiceProcess) -> list[str]:
    status, page = service.get(PAGE)
    assert status == 200
    return [subscriber["subscriberId"] for subscriber in page["subscribers"]]


def test_a_plain_register_is_the_routes_answer_byte_for_byte(service: ServiceProcess) -> None:
    def body(name: str) -> bytes:
        return json.dumps({"subscriberId": name, "deliveryAddress": f"{name}@exämple.com"}).encode()

    fast = post(service, REGISTER, body("fast-é"))
    # A query the fast path does not take goes to the Quart route.
    routed = post(service, f"{REGISTER}?unused=1", body("routed-é"))
    assert fast[:2] == routed[:2] == (200, "application/json")
    fast_body = json.loads(fast[2])
    routed_body = json.loads(routed[2])
    assert fast_body["subscriberId"] == "fast-é"
    assert routed_body["sequence"] == fast_body["sequence"] + 1
    # The same bytes but for the sequence and the names.
    renamed = (
        fast[2]
        .replace(b"fast", b"routed")
        .replace(
            b'"sequence":%d' % fast_body["sequence"], b'"sequence":%d' % routed_body["sequence"]
        )
    )
    assert renamed == routed[2]
    assert stored_ids(service)[:2] == ["routed-é", "fast-é"]


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1]",
        b'{"subscriberId": "x"}',
        b'{"subscriberId": "", "deliveryAddress": "a@example.com"}',
        b'{"subscriberId": "\\ud800", "deliveryAddress": "a@example.com"}',
    ],
)
def test_a_body_the_route_refuses_is_the_routes_error(service: ServiceProcess, body: bytes) -> None:
    fast = post(service, REGISTER, body)
    routed = post(service, f"{REGISTER}?unused=1", body)
    assert fast == routed
    assert fast[:2] == (400, "application/json")


def test_a_body_over_the_limit_is_the_routes_413_and_stores_nothing(
    service: ServiceProcess,
) -> None:
    before = stored_ids(service)
    body = json.dumps({"subscriberId": "x" * 100_000, "deliveryAddress": "a@example.com"})
    fast = post(service, REGISTER, body.encode())
    routed = post(service, f"{REGISTER}?unused=1", body.encode())
    assert fast == routed
    assert fast[:2] == (413, "application/json")
    assert stored_ids(service) == before


def test_a_register_the_core_refuses_is_the_routes_error_and_is_made_once(
    service: ServiceProcess,
) -> None:
    before = stored_ids(service)
    # Well-formed for the route (under its body limit), but over the core's limit for one
    # record of a log with chunks of 100.
    body = json.dumps({"subscriberId": "x" * 20_000, "deliveryAddress": "a@example.com"}).encode()
    failed_before = service.failed_calls()
    fast = post(service, REGISTER, body)
    assert service.failed_calls() == failed_before + 1, "the failed call was made once"
    routed = post(service, f"{REGISTER}?unused=1", body)
    assert fast == routed
    assert fast[:2] == (400, "application/json")
    assert "the limit of a log with chunks of 100 records" in json.loads(fast[2])["error"]
    assert stored_ids(service) == before
