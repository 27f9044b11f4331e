"""A full disk is HTTP 507 with the JSON error body, writes nothing, and the same service
process serves again once space is freed, with every acknowledged registration kept.

The disk is real: the store lives on a small tmpfs mounted for the test (which needs the
right to mount, so the test is skipped without it) and filled with a file, so SQLite's own
writes meet ENOSPC exactly as on a full production volume.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_process import ServiceProcess

PREFIX = "/patterns/sequentially-chunked-attribute-map"
DISK_SIZE = "4m"
ROOM_LEFT_BYTES = 160 * 1024
"""What the filler leaves free: room for some registrations, far less than a checkpoint."""
MAX_REGISTRATIONS = 20_000
"""More registrations than the room left can take: reaching it means the disk never filled."""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A fresh tmpfs of :data:`DISK_SIZE`, unmounted afterwards."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(path: Path, leave: int) -> None:
    """Writes ``path`` until the disk is full, then gives ``leave`` bytes back."""
    block = b"\0" * 65536
    with path.open("wb", buffering=0) as filler:
        while True:
            try:
                filler.write(block)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
    os.truncate(path, max(0, path.stat().st_size - leave))


def register(service: ServiceProcess, name: str) -> tuple[int, Any]:
    body = {"subscriberId": name, "deliveryAddress": f"{name}@example.com"}
    return service.post(f"{PREFIX}/register", body)


def stored_ids(service: ServiceProcess) -> list[str]:
    ids: list[str] = []
    token = "current"
    while token:
        status, page = service.get(f"{PREFIX}/subscribers?pageToken={token}")
        assert status == 200, page
        ids.extend(s["subscriberId"] for s in page["subscribers"])
        token = page["nextPageToken"]
    return ids


def test_a_full_disk_is_507_and_the_service_recovers_when_space_returns(
    small_disk: Path, tmp_path: Path
) -> None:
    service = ServiceProcess(str(small_disk / "attrflow.db"), tmp_path / "service.log")
    service.start()
    try:
        assert register(service, "before-fill")[0] == 200
        filler = small_disk / "filler"
        fill(filler, ROOM_LEFT_BYTES)
        acknowledged = ["before-fill"]
        refused: tuple[int, Any] | None = None
        for n in range(MAX_REGISTRATIONS):
            name = f"s-{n:05}"
            status, body = register(service, name)
            if status != 200:
                refused = (status, body)
                break
            acknowledged.append(name)
        assert refused is not None, "the disk never filled"
        status, body = refused
        assert status == 507, (body, service.output())
        assert set(body) == {"error"}
        assert "disk full" in body["error"]
        assert register(service, "while-full")[0] == 507

        filler.unlink()
        status, body = register(service, "after-space-returns")
        assert status == 200, body
        assert body["sequence"] == len(acknowledged) + 1
        assert stored_ids(service) == ["after-space-returns", *reversed(acknowledged)]
    finally:
        service.kill()
