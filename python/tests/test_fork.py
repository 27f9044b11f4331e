"""A client used in a child made by ``os.fork()`` fails at once with a clear error telling
the user to open a new client there, instead of meeting the locks its parent's calls held
at the moment of the fork (forever, in the child). So does a client the child opens on a
file its parent has open: SQLite's locks are per process, and the child's would not be real
(a parent closing its client deleted the log the child appended to). A client opened in the
child on another file works, whatever the parent's other threads were doing in SQLite when
it forked, and so does one on the parent's file once the parent closed it before forking."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from archive_support import IN_PROCESS_CONFLICT, Archive, store_write_lock, subscriber_input

from attrflow import AsyncClient, Client, RPCInvokeOptions, RpcLockConflictError, StorageError
from attrflow.flows.chunked_subscriber import (
    CURRENT_CHUNK_INSTANCE,
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    SubscriberPage,
)

CHILD_TIMEOUT_SECONDS = 60.0
"""A bound against a hanging child, not a timing check."""

INHERITED_REFUSED = 10
"""The child's exit code when its inherited client raised the fork error."""
SAME_FILE_REFUSED = 20
"""Added to it when opening the parent's file in the child raised the fork error."""
OTHER_FILE_WORKED = 40
"""Added to it when a client opened in the child on another file registered a subscriber."""

SAME_FILE_ERROR = "which this process was fork()ed from: SQLite's locks cannot cross fork()"


def child(store_path: Path, inherited: Client, flow: ChunkedSubscriberFlow) -> int:
    code = 0
    try:
        inherited.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(3))
    except StorageError as error:
        if "fork()" in str(error) and "open a new client in the child" in str(error):
            code += INHERITED_REFUSED
    except Exception:  # any other outcome is a failure, reported by the exit code
        pass
    try:
        Client(f"sqlite:{store_path}").close()
    except StorageError as error:
        if SAME_FILE_ERROR in str(error) and str(store_path.resolve()) in str(error):
            code += SAME_FILE_REFUSED
    with Client(f"sqlite:{store_path.parent / 'child.db'}") as own:
        own.start_flow(flow, FLOW_ID)
        if own.invoke_rpc(flow.register_subscriber, FLOW_ID, subscriber_input(4)).sequence:
            code += OTHER_FILE_WORKED
    return code


def wait_for(pid: int, timeout: float = CHILD_TIMEOUT_SECONDS) -> int:
    deadline = time.monotonic() + timeout
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
    assert wait_for(pid) == INHERITED_REFUSED + SAME_FILE_REFUSED + OTHER_FILE_WORKED
    # The refused call (subscriber-003) stored nothing.
    page = Archive(client).page("current")
    assert [s.subscriber_id for s in page.subscribers] == ["subscriber-002", "subscriber-001"]
    client.close()
    with Client(f"sqlite:{store_path.parent / 'child.db'}") as theirs:
        assert [s.subscriber_id for s in Archive(theirs).all_subscribers()] == ["subscriber-004"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_child_forked_after_its_parent_closed_the_store_opens_it(store_path: Path) -> None:
    with Client(f"sqlite:{store_path}") as client:
        archive = Archive(client)
        archive.start()
        archive.register(1)
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            with Client(f"sqlite:{store_path}") as own:
                Archive(own).register(2)
                code = 0
        finally:
            os._exit(code)
    assert wait_for(pid) == 0
    with Client(f"sqlite:{store_path}") as client:
        stored = [s.subscriber_id for s in Archive(client).all_subscribers()]
    assert stored == ["subscriber-002", "subscriber-001"]


async def async_page(client: AsyncClient) -> SubscriberPage:
    """The archive's newest page, read through an AsyncClient."""
    flow = ChunkedSubscriberFlow()
    return await client.invoke_rpc(
        flow.get_subscriber_page,
        FLOW_ID,
        GetSubscriberPageInput(CURRENT_CHUNK_INSTANCE),
        options=RPCInvokeOptions(
            load_attribute_map_instances=(flow.subscriber_chunks.load(CURRENT_CHUNK_INSTANCE),)
        ),
    )


async def async_page_of(path: Path) -> SubscriberPage:
    async with AsyncClient(f"sqlite:{path}") as client:
        return await async_page(client)


FORKS = 150
"""Forks made while other threads call; each once had a chance of a few percent to hang
its child on a lock (one of SQLite's mutexes) a parent's thread held."""

FORK_CHILD_TIMEOUT_SECONDS = 30.0
"""A bound against a hanging child, not a timing check."""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_children_forked_while_other_threads_call_open_clients_of_their_own(
    store_path: Path,
) -> None:
    client = Client(f"sqlite:{store_path}?synchronous=normal")
    archive = Archive(client)
    archive.start()
    archive.register(1)
    stop = threading.Event()
    registered: list[int] = []
    pages_read = [0]

    def keep_registering() -> None:
        n = 100_000
        while not stop.is_set():
            archive.register(n)
            registered.append(n)
            n += 1

    def keep_reading() -> None:
        # On an AsyncClient, whose worker threads take the executor's process-wide locks
        # at the end of every call.
        async def read() -> None:
            async with AsyncClient(f"sqlite:{store_path}") as reader:
                while not stop.is_set():
                    assert (await async_page(reader)).subscribers
                    pages_read[0] += 1

        asyncio.run(read())

    callers = [threading.Thread(target=keep_registering), threading.Thread(target=keep_reading)]
    for caller in callers:
        caller.start()
    exit_codes = []
    try:
        for i in range(FORKS):
            pid = os.fork()
            if pid == 0:  # the child: never returns into pytest
                code = 1
                try:
                    own_path = store_path.parent / f"child-{i}.db"
                    with Client(f"sqlite:{own_path}") as own:
                        theirs = Archive(own)
                        theirs.start()
                        theirs.register(i)
                    code = 0 if asyncio.run(async_page_of(own_path)).subscribers else 2
                finally:
                    os._exit(code)
            exit_codes.append(wait_for(pid, FORK_CHILD_TIMEOUT_SECONDS))
    finally:
        stop.set()
        for caller in callers:
            caller.join()
    assert exit_codes == [0] * FORKS
    assert registered
    assert pages_read[0]
    stored = [s.subscriber_id for s in archive.all_subscribers()]
    assert sorted(stored) == sorted(f"subscriber-{n:03d}" for n in [1, *registered])
    client.close()
    with Client(f"sqlite:{store_path.parent / f'child-{FORKS - 1}.db'}") as last:
        stored = [s.subscriber_id for s in Archive(last).all_subscribers()]
    assert stored == [f"subscriber-{FORKS - 1:03d}"]
