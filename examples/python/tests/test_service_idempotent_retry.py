"""``Idempotency-Key`` across a crash of the real service: registrations with keys are cut
off by SIGKILL, some after their commit and before their reply; a new service process on
the same store answers every retried key with the subscriber stored for it (the first
reply's, where there was one) and stores each key's subscriber exactly once."""

from __future__ import annotations

import http.client
import threading
from pathlib import Path
from typing import Any

from service_process import ServiceProcess

PREFIX = "/patterns/sequentially-chunked-attribute-map"
WORKERS = 3
ACKNOWLEDGED_BEFORE_KILL = 40  # well inside the default window of 100 keys
WAIT_FOR_ACKS_SECONDS = 120.0


def body_of(key: str) -> dict[str, str]:
    return {"subscriberId": key, "deliveryAddress": f"{key}@example.com"}


class KeyedRegistrar(threading.Thread):
    """Registers its own keys one after another until stopped or cut off."""

    def __init__(self, service: ServiceProcess, name: str, acked: threading.Semaphore) -> None:
        super().__init__(name=name, daemon=True)
        self.service = service
        self.acked = acked
        self.stop = threading.Event()
        self.attempted: list[str] = []
        self.acknowledged: dict[str, dict[str, Any]] = {}

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            key = f"{self.name}-{n:05}"
            self.attempted.append(key)
            try:
                status, answer = self.service.post(
                    f"{PREFIX}/register", body_of(key), {"Idempotency-Key": key}
                )
            except (OSError, http.client.HTTPException):
                return  # the service was killed: the reply, if any, is lost or cut short
            if status != 200:
                return
            self.acknowledged[key] = answer
            self.acked.release()


def test_retried_keys_after_a_crash_are_stored_once(tmp_path: Path) -> None:
    store_path = tmp_path / "attrflow.db"
    log = tmp_path / "service.log"
    service = ServiceProcess(str(store_path), log)
    service.start()
    acked = threading.Semaphore(0)
    registrars = [KeyedRegistrar(service, f"k{i}", acked) for i in range(WORKERS)]
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

    restarted = ServiceProcess(str(store_path), log)
    restarted.start()
    try:
        retried: dict[str, dict[str, Any]] = {}
        for key in (key for registrar in registrars for key in registrar.attempted):
            status, answer = restarted.post(
                f"{PREFIX}/register", body_of(key), {"Idempotency-Key": key}
            )
            assert status == 200, answer
            retried[key] = answer
        status, page = restarted.get(f"{PREFIX}/subscribers?pageToken=current")
    finally:
        restarted.kill()

    acknowledged = {k: a for registrar in registrars for k, a in registrar.acknowledged.items()}
    assert len(acknowledged) >= ACKNOWLEDGED_BEFORE_KILL
    for key, answer in acknowledged.items():
        assert retried[key] == answer, key
    sequences = sorted(answer["sequence"] for answer in retried.values())
    assert sequences == list(range(1, len(retried) + 1)), "one subscriber per key, no gaps"
    assert status == 200
    assert page["subscribers"][0]["sequence"] == len(retried)
