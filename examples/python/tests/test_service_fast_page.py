"""The served app answers plain page reads in front of Quart (attrflow_examples.fast_page):
its answers are byte for byte what the Quart route answers, and every read it does not
take (another query) is answered by the route itself; a read that fails is answered by the
route's error handlers without being made again."""

from __future__ import annotations

import http.client
from collections.abc import Iterator

import pytest
from service_process import HOST, ServiceProcess, running_service

PAGES = "/patterns/sequentially-chunked-attribute-map/subscribers"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """One real service process holding 150 subscribers (one archived chunk)."""
    with running_service(tmp_path_factory.mktemp("fast-page")) as running:
        for n in range(150):
            body = {"subscriberId": f"s-{n}", "deliveryAddress": f"s-{n}@example.com"}
            status, _ = running.post("/patterns/sequentially-chunked-attribute-map/register", body)
            assert status == 200
        yield running


def fetch(service: ServiceProcess, target: str) -> tuple[int, str, bytes]:
    """Status, content type and body bytes of ``GET target``."""
    conn = http.client.HTTPConnection(HOST, service.port, timeout=30)
    try:
        conn.request("GET", target)
        response = conn.getresponse()
        return response.status, response.getheader("content-type", ""), response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("token", ["", "current", "00000000000000000001"])
def test_a_plain_page_read_is_the_routes_answer_byte_for_byte(
    service: ServiceProcess, token: str
) -> None:
    fast = fetch(service, f"{PAGES}?pageToken={token}")
    # A query the fast path does not take goes to the Quart route.
    routed = fetch(service, f"{PAGES}?pageToken={token}&unused=1")
    assert fast == routed
    assert fast[0] == 200
    assert fast[1] == "application/json"


@pytest.mark.parametrize("token", ["bad", "00000000000000000002", "99999999999999999901", "a%2Fb"])
def test_a_failed_page_read_is_the_routes_error(service: ServiceProcess, token: str) -> None:
    fast = fetch(service, f"{PAGES}?pageToken={token}")
    routed = fetch(service, f"{PAGES}?pageToken={token}&unused=1")
    assert fast == routed
    assert fast[0] in (400, 404)
    assert fast[1] == "application/json"


def test_a_read_the_core_fails_is_made_once(service: ServiceProcess) -> None:
    failed_before = service.failed_calls()
    # A token of the right shape that names no page start: the core's page read refuses it.
    status, _, _ = fetch(service, f"{PAGES}?pageToken=00000000000000000002")
    assert status == 400
    assert service.failed_calls() == failed_before + 1
