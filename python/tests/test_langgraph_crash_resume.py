"""A 200-step LangGraph run killed with SIGKILL mid-run resumes from its last checkpoint in
a new process with every completed step's message kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from langgraph_support import run

from attrflow.integrations.langgraph import AttrflowSaver

STEPS = 200
SUPPORT = Path(__file__).with_name("langgraph_support.py")


def _messages(store: str, thread: str) -> list[str]:
    with AttrflowSaver.from_store(store) as saver:
        latest = saver.get_tuple({"configurable": {"thread_id": thread}})
    if latest is None:
        return []
    return [m.content for m in latest.checkpoint["channel_values"].get("messages", [])]


def test_sigkill_mid_run_resumes_with_nothing_lost(store_url: str) -> None:
    child = subprocess.Popen(
        [sys.executable, str(SUPPORT), store_url, "crash", str(STEPS)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        deadline = time.monotonic() + 120
        while len(_messages(store_url, "crash")) < 40:
            assert child.poll() is None, "the child ended before it was killed"
            assert time.monotonic() < deadline, "the child made no progress"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    kept = _messages(store_url, "crash")
    assert 40 <= len(kept) < STEPS
    assert kept == [f"step {n}" for n in range(1, len(kept) + 1)]

    resumed = subprocess.run(
        [sys.executable, "-c", _RESUME, store_url],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert _messages(store_url, "crash") == [f"step {n}" for n in range(1, STEPS + 1)]
    with AttrflowSaver.from_store(store_url) as saver:
        state = run(saver, "crash", STEPS)
    assert len(state["messages"]) == STEPS


_RESUME = """
import sys
from langgraph_support import run
from attrflow.integrations.langgraph import AttrflowSaver
with AttrflowSaver.from_store(sys.argv[1]) as saver:
    run(saver, "crash", 200)
"""
