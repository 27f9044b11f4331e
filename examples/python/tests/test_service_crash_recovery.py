"""SIGKILL mid-traffic loses no acknowledged registration and duplicates none.

The real service process serves concurrent registrations over a socket and is killed while
they are in flight; a new process on the same store must hold every registration that got a
200 exactly once, under the sequence it was given, with the sequences dense from 1.
"""

from __future__ import annotations

import http.client
import threading
from pathlib import Path
from typing import Any

from service_process import ServiceProcess

PREFIX = "/patterns/sequentially-chunked-attribute-map"
WORKERS = 4
ACKNOWLEDGED_BEFORE_KILL = 150  # past the first chunk boundary, so an archive is involved
WAIT_FOR_ACKS_SECONDS = 120.0


class Registrar(threading.Thread):
    """Registers its own subscribers one after another until told to stop or cut off."""

    def __init__(self, service: ServiceProcess, name: str, acked: threading.Semaphore) -> None:
        super().__init__(name=name, daemon=True)
        self.service = service
        self.acked = acked
        self.stop = threading.Event()
        self.attempted: list[str] = []
        self.acknowledged: dict[str, dict[str, Any]] = {}
        self.refused: list[tuple[int, Any]] = []

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            subscriber_id = f"{self.name}-{n:05}"
            self.attempted.append(subscriber_id)
            body = {
                "subscriberId": subscriber_id,
                "deliveryAddress": f"{subscriber_id}@example.com",
            }
            try:
                status, answer = self.service.post(f"{PREFIX}/register", body)
            except (OSError, http.client.HTTPException):
                return  # the service is gone; this registration's outcome is unknown
            if status != 200:
                self.refused.append((status, answer))
                return
            self.acknowledged[subscriber_id] = answer
            self.acked.release()


def read_archive(service: ServiceProcess) -> list[dict[str, Any]]:
    """Every stored subscriber, newest first, following the page tokens from ``current``."""
    subscribers: list[dict[str, Any]] = []
    token = "current"
    while token:
        status, page = service.get(f"{PREFIX}/subscribers?pageToken={token}")
        assert status == 200, page
        subscribers.extend(page["subscribers"])
        token = page["nextPageToken"]
    return subscribers


def test_sigkill_mid_traffic_loses_and_duplicates_nothing(store: str, tmp_path: Path) -> None:
    log = tmp_path / "service.log"
    service = ServiceProcess(store, log)
    service.start()
    acked = threading.Semaphore(0)
    registrars = [Registrar(service, f"w{i}", acked) for i in range(WORKERS)]
    try:
        for registrar in registrars:
            registrar.start()
        for _ in range(ACKNOWLEDGED_BEFORE_KILL):
            assert acked.acquire(timeout=WAIT_FOR_ACKS_SECONDS), service.output()
        service.kill()
    finally:
        for registrar in registrars:
            registrar.stop.set()
        service.kill()
        for registrar in registrars:
            registrar.join(timeout=60)
    assert not any(registrar.is_alive() for registrar in registrars)
    assert [r.refused for r in registrars] == [[]] * WORKERS, service.output()

    restarted = ServiceProcess(store, log)
    restarted.start()
    try:
        stored = read_archive(restarted)
        status, newest = restarted.post(
            f"{PREFIX}/register",
            {"subscriberId": "after-restart", "deliveryAddress": "after-restart@example.com"},
        )
    finally:
        restarted.kill()

    assert [s["sequence"] for s in stored] == list(range(len(stored), 0, -1))
    stored_ids = [s["subscriberId"] for s in stored]
    assert len(set(stored_ids)) == len(stored_ids)
    attempted = {sid for registrar in registrars for sid in registrar.attempted}
    assert set(stored_ids) <= attempted

    by_id = {s["subscriberId"]: s for s in stored}
    acknowledged = {sid: a for registrar in registrars for sid, a in registrar.acknowledged.items()}
    assert len(acknowledged) >= ACKNOWLEDGED_BEFORE_KILL
    for subscriber_id, answer in acknowledged.items():
        assert by_id.get(subscriber_id) == answer

    assert status == 200, newest
    assert newest["sequence"] == len(stored) + 1
