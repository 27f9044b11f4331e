"""The example service as a real process on 127.0.0.1, and a small HTTP client for it.

Used by the tests that prove what only a real process can show: serving over a socket,
surviving SIGKILL, shutting down on SIGTERM. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from attrflow_examples.metrics_route import CALLS

SERVE_PY = Path(__file__).resolve().parents[1] / "serve.py"
HOST = "127.0.0.1"
READY_TIMEOUT_SECONDS = 60.0
EXIT_TIMEOUT_SECONDS = 30.0
REQUEST_TIMEOUT_SECONDS = 30.0


def free_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def request_json(
    method: str,
    url: str,
    body: object = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """Sends one request and returns its status and decoded JSON body, errors included.

    A failure to connect or a connection cut before the answer raises ``OSError``
    (``urllib.error.URLError`` is one).
    """
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


class ServiceProcess:
    """``python serve.py --port P --store S`` started on a free port, with its output in a file."""

    def __init__(self, store: str, log_path: Path) -> None:
        self.store = store
        self.log_path = log_path
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The service's root URL."""
        return f"http://{HOST}:{self.port}"

    @property
    def process(self) -> subprocess.Popen[bytes]:
        """The running process; raises ``RuntimeError`` before :meth:`start`."""
        if self._process is None:
            raise RuntimeError("the service has not been started")
        return self._process

    def start(self, attempts: int = 3) -> None:
        """Starts the service and waits until it answers; a port taken meanwhile is retried."""
        for _ in range(attempts):
            self.port = free_port()
            with self.log_path.open("ab") as log:
                self._process = subprocess.Popen(
                    [
                        sys.executable,
                        str(SERVE_PY),
                        "--host",
                        HOST,
                        "--port",
                        str(self.port),
                        "--store",
                        self.store,
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                )
            if self._wait_until_ready():
                return
        raise AssertionError(f"the service did not start; its output:\n{self.output()}")

    def _wait_until_ready(self) -> bool:
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if request_json("GET", f"{self.base_url}/healthz", timeout=5)[0] == 200:
                    return True
            except OSError:
                time.sleep(0.05)
        self.kill()
        return False

    def kill(self) -> None:
        """SIGKILLs the process and reaps it."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
        self.wait()

    def send_signal(self, signum: signal.Signals) -> None:
        """Sends ``signum`` to the process."""
        self.process.send_signal(signum)

    def wait(self) -> int:
        """Waits for the process to end and returns its exit code."""
        return self.process.wait(timeout=EXIT_TIMEOUT_SECONDS)

    def output(self) -> str:
        """Everything the process (and its predecessors on this log) printed."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def get(self, path: str) -> tuple[int, Any]:
        """``GET path``: status and JSON body."""
        return request_json("GET", f"{self.base_url}{path}")

    def post(
        self, path: str, body: object = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        """``POST path`` with a JSON body (and ``headers``): status and JSON body."""
        return request_json("POST", f"{self.base_url}{path}", body, headers=headers)

    def failed_calls(self) -> float:
        """How many RPC calls of the process failed, from its ``GET /metrics``."""
        url = f"{self.base_url}/metrics"
        with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_SECONDS) as response:
            text = response.read().decode()
        for family in text_string_to_metric_families(text):
            if family.name == CALLS:
                return next(s.value for s in family.samples if s.labels == {"outcome": "error"})
        raise AssertionError(f"no {CALLS} family in /metrics")


@contextmanager
def running_service(folder: Path) -> Iterator[ServiceProcess]:
    """A service process on a fresh SQLite store (synchronous=normal) in ``folder``, killed
    when the block ends."""
    service = ServiceProcess(f"sqlite:{folder / 'attrflow.db'}?synchronous=normal", folder / "log")
    service.start()
    try:
        yield service
    finally:
        service.kill()
