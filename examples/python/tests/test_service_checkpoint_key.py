"""serve.py reads its checkpoint signer key from ``--checkpoint-key-file`` or the file
``ATTRFLOW_CHECKPOINT_KEY_FILE`` names: a served checkpoint verifies with that key, and an
unreadable file or a malformed key ends the process with a plain message and status 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from archive_api import PREFIX
from service_process import EXIT_TIMEOUT_SECONDS, HOST, SERVE_PY, ServiceProcess

# python/tests/tlog_check.py, put on sys.path by conftest.py (so mypy cannot see it here).
from tlog_check import make_note_key, open_note, parse_checkpoint  # type: ignore[import-not-found]

from attrflow_examples.patterns.sequentially_chunked_attribute_map.verifiable_log import (
    CHECKPOINT_KEY_FILE_ENV,
)


def run_serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SERVE_PY), "--host", HOST, "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=EXIT_TIMEOUT_SECONDS,
        check=False,
    )


def test_the_key_file_named_by_the_environment_signs_checkpoints(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = make_note_key("example.com/service")
    key_file = tmp_path / "signer.key"
    key_file.write_text(key.signer_text + "\n")
    monkeypatch.setenv(CHECKPOINT_KEY_FILE_ENV, str(key_file))
    service = ServiceProcess(store, tmp_path / "service.log")
    service.start()
    try:
        body = {"subscriberId": "a", "deliveryAddress": "a@example.com"}
        assert service.post(f"{PREFIX}/register", body)[0] == 200
        status, signed = service.get(f"{PREFIX}/checkpoint")
        assert status == 200, signed
        assert parse_checkpoint(open_note(signed["checkpoint"], key)).tree_size == 1
    finally:
        service.kill()


def test_a_malformed_key_file_is_refused(tmp_path: Path) -> None:
    key_file = tmp_path / "signer.key"
    key_file.write_text("PRIVATE+KEY+nope\n")
    result = run_serve("--store", str(tmp_path / "a.db"), "--checkpoint-key-file", str(key_file))
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"serve.py: the checkpoint key file {str(key_file)!r} holds no signer key: malformed key"
    )
    assert "Traceback" not in result.stderr


def test_a_missing_key_file_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "absent.key"
    result = run_serve("--store", str(tmp_path / "a.db"), "--checkpoint-key-file", str(missing))
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"serve.py: cannot read the checkpoint key file {str(missing)!r}"
    )
    assert "Traceback" not in result.stderr
