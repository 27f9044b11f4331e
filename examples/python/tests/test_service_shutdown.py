"""On SIGTERM or SIGINT the service stops cleanly (exit 0) and its store opens again."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from service_process import ServiceProcess

PREFIX = "/patterns/sequentially-chunked-attribute-map"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_shutdown_signal_stops_the_service_cleanly(
    store: str, tmp_path: Path, signum: signal.Signals
) -> None:
    log = tmp_path / "service.log"
    service = ServiceProcess(store, log)
    service.start()
    try:
        status, subscriber = service.post(
            f"{PREFIX}/register", {"subscriberId": "a", "deliveryAddress": "a@example.com"}
        )
        assert (status, subscriber["sequence"]) == (200, 1)
        _, started = service.post(f"{PREFIX}/start")
        service.send_signal(signum)
        assert service.wait() == 0, service.output()
    finally:
        service.kill()

    restarted = ServiceProcess(store, log)
    restarted.start()
    try:
        assert restarted.post(f"{PREFIX}/start") == (200, started)
        status, page = restarted.get(f"{PREFIX}/subscribers")
        assert (status, page["subscribers"]) == (200, [subscriber])
    finally:
        restarted.kill()
