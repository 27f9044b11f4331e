"""A client used in a child made by ``os.fork()`` fails at once with a clear error telling
the user to open a new client there, instead of meeting the locks its parent's calls held
at the moment of the fork (forever, in the child). A client opened in the child works."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from archive_support import IN_PROCESS_CONFLICT, Archive, store_write_lock, subscriber_input

from attrflow import Client, RpcLockConflictError, StorageError
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow

CHILD_TIMEOUT_SECONDS = 60.0
"""A bound against a hanging child, not a timing check."""

INHERITED_REFUSED = 10
"""The child's exit code when its inherited client raised the fork error."""
OWN_CLIENT_WORKED = 20
"""Added to it when a client opened in the child registered a subscriber."""


def child(store_path: Path, inherited: Client, flow: ChunkedSubscriberFlow) -> int:
    code = 0
    try:
        inherited.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(3))
    except StorageError as error:
        if "fork()" in str(error) and "open a new client in the child" in str(error):
            code += INHERITED_REFUSED
    except Exception:  # any other outcome is a failure, reported by the exit code
        pass
    with Client(f"sqlite:{store_path}?busy_timeout_ms=120000") as own:
        if own.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(4)).sequence:
            code += OWN_CLIENT_WORKED
    return code


def wait_for(pid: int) -> int:
    deadline = time.monotonic() + CHILD_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the child hung on its inherited client")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_client_inherited_across_fork_with_a_call_in_flight_fails_clearly(
    store_path: Path,
) -> None:
    flow = ChunkedSubscriberFlow()
    client = Client(f"sqlite:{store_path}?busy_timeout_ms=120000")
    client.start_flow(flow, FLOW_ID)
    client.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(1))
    with store_write_lock(store_path):
        # A call in flight in the parent: it holds the archive's locks while it waits for
        # the file's write lock, held by another process.
        in_flight = threading.Thread(
            target=client.invoke_rpc,
            args=(flow.register_subscriber, FLOW_ID, subscriber_input(2)),
        )
        in_flight.start()
        with Client(f"sqlite:{store_path}?busy_timeout_ms=0") as probe:
            for _ in range(100_000):  # until the call holds its locks; a bound, not a timing
                try:
                    probe.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(9))
                except RpcLockConflictError as conflict:
                    if IN_PROCESS_CONFLICT in str(conflict):
                        break
                time.sleep(0.001)
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                code = child(store_path, client, flow)
            finally:
                os._exit(code)
    in_flight.join()
    assert wait_for(pid) == INHERITED_REFUSED + OWN_CLIENT_WORKED
    page = Archive(client).page("current")
    # The parent's call in flight and the child's own call both waited for the file's write
    # lock; either may have taken it first. The refused call (subscriber-003) stored nothing.
    assert [s.subscriber_id for s in page.subscribers][-1] == "subscriber-001"
    assert sorted(s.subscriber_id for s in page.subscribers) == [
        "subscriber-001",
        "subscriber-002",
        "subscriber-004",
    ]
    client.close()
