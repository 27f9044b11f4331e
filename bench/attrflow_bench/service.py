"""The example HTTP service as a real process on loopback, for the HTTP and memory runs."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

HOST = "127.0.0.1"
ROUTES = "/patterns/sequentially-chunked-attribute-map"
READY_TIMEOUT_SECONDS = 60.0


def free_port() -> int:
    """A port that was free on loopback a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


class Service:
    """``serve.py`` on ``store``, started on entry and stopped with SIGTERM on exit."""

    def __init__(self, serve_py: Path, store: Path) -> None:
        self.serve_py = serve_py
        self.store = store
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{HOST}:{self.port}"

    def __enter__(self) -> Service:
        argv = [sys.executable, str(self.serve_py), "--host", HOST, "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*argv, "--store", str(self.store)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"the service exited at start-up: {stderr}")
            try:
                status, _ = self.get("/healthz")
                if status == 200:
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the service did not answer within {READY_TIMEOUT_SECONDS}s")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.process is not None:
            stop(self.process)

    def get(
        self, path: str, connection: http.client.HTTPConnection | None = None
    ) -> tuple[int, Any]:
        """GETs ``path`` (on ``connection`` if given, keeping it alive) and decodes the JSON."""
        conn = connection or http.client.HTTPConnection(HOST, self.port, timeout=30)
        conn.request("GET", path)
        response = conn.getresponse()
        body = json.loads(response.read() or b"null")
        if connection is None:
            conn.close()
        return response.status, body

    def peak_rss_kib(self) -> int:
        """The process's peak resident set (VmHWM), in KiB."""
        if self.process is None:
            raise RuntimeError("the service is not running")
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise RuntimeError("VmHWM missing from /proc status")

    def current_rss_kib(self) -> int:
        """The process's resident set now (VmRSS), in KiB."""
        if self.process is None:
            raise RuntimeError("the service is not running")
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("VmRSS missing from /proc status")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Ends ``process`` with SIGTERM, or SIGKILL when it has not exited 30 s later."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def page_through(service: Service) -> int:
    """Reads every page newest first over one keep-alive connection; returns the record count."""
    connection = http.client.HTTPConnection(HOST, service.port, timeout=30)
    token, records = "current", 0
    try:
        while token:
            status, page = service.get(f"{ROUTES}/subscribers?pageToken={token}", connection)
            if status != 200:
                raise RuntimeError(f"page {token} answered {status}: {page}")
            records += len(page["subscribers"])
            token = page["nextPageToken"]
    finally:
        connection.close()
    return records
