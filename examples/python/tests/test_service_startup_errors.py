"""serve.py ends with a plain message and status 1 when it cannot open its store or listen."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from service_process import EXIT_TIMEOUT_SECONDS, HOST, SERVE_PY


def run_serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SERVE_PY), "--host", HOST, *args],
        capture_output=True,
        text=True,
        timeout=EXIT_TIMEOUT_SECONDS,
        check=False,
    )


def test_a_file_that_is_no_database_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "notes.txt"
    store.write_text("not a database\n")
    result = run_serve("--port", "0", "--store", str(store))
    assert result.returncode == 1
    assert result.stderr.startswith(f"serve.py: cannot serve the store {str(store)!r}: ")
    assert "not an SQLite database" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_store_scheme_is_refused() -> None:
    result = run_serve("--port", "0", "--store", "mysql://db.example/attrflow")
    assert result.returncode == 1
    assert "unknown scheme" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_port_in_use_is_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind((HOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_serve("--port", str(port), "--store", str(tmp_path / "attrflow.db"))
    assert result.returncode == 1
    assert result.stderr.startswith(f"serve.py: cannot listen on {HOST}:{port}: ")
    assert "Traceback" not in result.stderr
