"""AsyncClient calls are completed by the native module's worker threads: many tasks'
calls really run at once (more than the 6 of the event loop's default executor), opening a
store leaves the event loop running, and a cancelled await means the call still runs to its
end and commits while its result is dropped."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Callable

import pytest

from attrflow import (
    AsyncClient,
    Attribute,
    Client,
    Context,
    Flow,
    PersistenceSchema,
    RPCResult,
    StartFlowOptions,
    StorageError,
    WorkerInvocationError,
    async_client,
    rpc,
)

FLOW_ID = "async-1"
IN_FLIGHT = 8
"""More calls at once than the default executor's 6 threads on a 2-core machine, and no more
than a PostgreSQL store's default pool of 8 connections."""

WAIT = 60.0
"""A bound on every wait, so a broken build fails instead of hanging."""


class Gate:
    """What the handlers of one test share: a barrier all overlapping calls must reach, and
    events that hold a call inside its handler."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(IN_FLIGHT, timeout=WAIT)
        self.lock = threading.Lock()
        self.inside = 0
        self.most_inside = 0
        self.entered = threading.Event()
        self.release = threading.Event()


class GateFlow(Flow):
    counter = Attribute("counter", int)

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.counter)

    @rpc(name="Meet")
    def meet(self, context: Context, caller: int) -> RPCResult[int]:
        """Read-only and lock-free: many run at once; each waits for all the others."""
        gate = self.gate
        with gate.lock:
            gate.inside += 1
            gate.most_inside = max(gate.most_inside, gate.inside)
        gate.barrier.wait()
        with gate.lock:
            gate.inside -= 1
        return RPCResult(caller)

    @rpc(name="Increment", lock_attributes=(counter.lock(),))
    def increment(self, context: Context, by: int) -> RPCResult[int]:
        """Waits inside the call until released, then writes."""
        self.gate.entered.set()
        if not self.gate.release.wait(WAIT):
            raise TimeoutError("never released")
        value = self.counter.get(context) + by
        self.counter.set(context, value)
        return RPCResult(value)

    @rpc(name="Read")
    def read(self, context: Context, _: None) -> RPCResult[int]:
        return RPCResult(self.counter.get(context))


def start_options(flow: GateFlow) -> StartFlowOptions:
    return StartFlowOptions().with_attribute(flow.counter, 0)


def test_many_tasks_calls_run_at_once(store_url: str) -> None:
    gate = Gate()
    flow = GateFlow(gate)

    async def main() -> list[int]:
        # A loop whose default executor runs one thing at a time: calls that went through it
        # (asyncio.to_thread) could not overlap at all, on a machine of any size.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
        async with await AsyncClient.open(store_url, built_in_flows=False) as client:
            await client.start_flow(flow, FLOW_ID, None, start_options(flow))
            calls = [client.invoke_rpc(flow.meet, FLOW_ID, n) for n in range(IN_FLIGHT)]
            return await asyncio.gather(*calls)

    assert asyncio.run(main()) == list(range(IN_FLIGHT))
    assert gate.most_inside == IN_FLIGHT


class PacedFlow(Flow):
    """Calls of chosen lengths: quicker and slower than the event loop's wait for a lone
    call, and one held until the event loop itself has served some I/O."""

    counter = Attribute("counter", int)

    def __init__(self) -> None:
        self.release = threading.Event()

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.counter)

    @rpc(name="Add", lock_attributes=(counter.lock(),))
    def add(self, context: Context, pause_ms: int) -> RPCResult[int]:
        if pause_ms:
            threading.Event().wait(pause_ms / 1000)
        value = self.counter.get(context) + 1
        self.counter.set(context, value)
        return RPCResult(value)

    @rpc(name="Held")
    def held(self, context: Context, _: None) -> RPCResult[bool]:
        return RPCResult(self.release.wait(WAIT))

    @rpc(name="Count")
    def count(self, context: Context, _: None) -> RPCResult[int]:
        """Read-only, lock-free and quick: well within the loop's watch for a lone call."""
        return RPCResult(self.counter.get(context))


def test_calls_awaited_one_at_a_time_each_get_their_result() -> None:
    """A lone call is watched for by the loop (asyncio's own loop here): results arrive in
    order whether the call is quicker or slower than that watch, and I/O the loop serves
    meanwhile is not held up by it."""
    flow = PacedFlow()
    pauses = [0, 0, 0, 5, 0, 0, 2, 0] * 8

    async def main(store: str) -> tuple[list[int], bool]:
        async with await AsyncClient.open(store, built_in_flows=False) as client:
            await client.start_flow(
                flow, FLOW_ID, None, StartFlowOptions().with_attribute(flow.counter, 0)
            )
            results = [await client.invoke_rpc(flow.add, FLOW_ID, pause) for pause in pauses]
            loop = asyncio.get_running_loop()
            reader, writer = socket.socketpair()
            reader.setblocking(False)
            with reader, writer:
                held = asyncio.create_task(client.invoke_rpc(flow.held, FLOW_ID))
                threading.Timer(0.05, writer.send, (b"x",)).start()
                # Served while the lone held call runs; then the call is let go.
                assert await asyncio.wait_for(loop.sock_recv(reader, 1), WAIT) == b"x"
                flow.release.set()
                return results, await held

    with tempfile.TemporaryDirectory() as folder:
        results, released = asyncio.run(main(os.path.join(folder, "paced.db")))
    assert results == list(range(1, len(pauses) + 1))
    assert released


def test_a_timer_runs_while_a_task_awaits_quick_calls_back_to_back() -> None:
    """A lone call the loop's watch sees finish returns without the loop taking a turn, but
    not call after call for ever: a timer already due when a task starts awaiting quick
    calls one after another runs within the first ``_INLINE_TURNS`` of them."""
    flow = PacedFlow()
    calls = 200

    async def main(store: str) -> list[int]:
        async with await AsyncClient.open(store, built_in_flows=False) as client:
            await client.start_flow(
                flow, FLOW_ID, None, StartFlowOptions().with_attribute(flow.counter, 0)
            )
            for _ in range(50):  # the worker threads started and watching
                await client.invoke_rpc(flow.count, FLOW_ID)
            done = 0
            fired_after: list[int] = []
            asyncio.get_running_loop().call_later(0, lambda: fired_after.append(done))
            for _ in range(calls):
                assert await client.invoke_rpc(flow.count, FLOW_ID) == 0
                done += 1
            return fired_after

    with tempfile.TemporaryDirectory() as folder:
        fired_after = asyncio.run(main(os.path.join(folder, "timer.db")))
    assert len(fired_after) == 1
    assert fired_after[0] <= async_client._INLINE_TURNS


def test_opening_leaves_the_event_loop_running(store_url: str) -> None:
    async def main() -> tuple[int, bool]:
        ticks = 0
        opened = False

        async def ticker() -> None:
            nonlocal ticks
            while not opened:
                ticks += 1
                await asyncio.sleep(0)

        ticking = asyncio.create_task(ticker())
        await asyncio.sleep(0)  # the ticker's first tick
        before = ticks
        client = await AsyncClient.open(store_url)
        opened = True
        during = ticks - before
        await ticking
        client.close()
        return during, client.closed

    ticks_while_opening, closed = asyncio.run(main())
    assert ticks_while_opening > 0
    assert closed


def test_a_store_that_cannot_be_opened_raises_from_the_await() -> None:
    async def main() -> None:
        await AsyncClient.open("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")

    with pytest.raises(StorageError):
        asyncio.run(main())


def open_descriptors(path: str) -> list[str]:
    """This process's open file descriptors on ``path`` (and its ``-wal`` and ``-shm``)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
        if target.startswith(path):
            found.append(target)
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_a_cancelled_open_closes_the_store_it_opened(tmp_path: Path) -> None:
    path = str(tmp_path / "cancelled.db")

    async def main() -> None:
        opening = asyncio.create_task(AsyncClient.open(path))
        await asyncio.sleep(0)  # the open is under way on a worker thread
        opening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await opening

    asyncio.run(main())
    # The open finishes on its own thread, which then closes the store it opened. Checked
    # once that thread has ended: before, the file may not even have been opened yet.
    for thread in threading.enumerate():
        if thread.name == "attrflow-open":
            thread.join(WAIT)
            assert not thread.is_alive(), "the open did not finish"
    assert open_descriptors(path) == []
    with Client(path) as client:  # and the file is a sound store
        assert client.store.endswith("cancelled.db")


def test_a_cancelled_call_still_commits_and_its_result_is_dropped(store_url: str) -> None:
    gate = Gate()
    flow = GateFlow(gate)

    reported: list[dict[str, object]] = []

    async def main() -> int:
        # What the loop would otherwise only log: an error completing the dropped result.
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: reported.append(context)
        )
        async with await AsyncClient.open(store_url, built_in_flows=False) as client:
            await client.start_flow(flow, FLOW_ID, None, start_options(flow))
            call = asyncio.create_task(client.invoke_rpc(flow.increment, FLOW_ID, 5))
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            gate.release.set()
            # The cancelled call goes on in the core; its write shows once it commits.
            deadline = asyncio.get_running_loop().time() + WAIT
            while True:
                value = await client.invoke_rpc(flow.read, FLOW_ID)
                if value or asyncio.get_running_loop().time() > deadline:
                    break
                await asyncio.sleep(0.01)
            for _ in range(10):  # turns of the loop for the dropped result's completion
                await asyncio.sleep(0)
            return value

    assert asyncio.run(main()) == 5
    assert reported == [], "the dropped result was not dropped quietly"


EXIT_SCRIPT = """
import asyncio, sys, threading, time
from attrflow import AsyncClient, Attribute, Context, Flow, PersistenceSchema, RPCResult
from attrflow import StartFlowOptions, rpc

entered = threading.Event()

class SlowFlow(Flow):
    counter = Attribute("counter", int)

    def get_persistence_schema(self):
        return PersistenceSchema.of(self.counter)

    @rpc(name="Increment", lock_attributes=(counter.lock(),))
    def increment(self, context: Context, by: int) -> RPCResult[int]:
        entered.set()
        time.sleep(0.5)  # the interpreter is on its way out meanwhile
        self.counter.set(context, self.counter.get(context) + by)
        return RPCResult(self.counter.get(context))

async def main():
    flow = SlowFlow()
    client = await AsyncClient.open(sys.argv[1], built_in_flows=False)
    options = StartFlowOptions().with_attribute(flow.counter, 0)
    await client.start_flow(flow, "slow-1", None, options)
    call = asyncio.create_task(client.invoke_rpc(flow.increment, "slow-1", 5))
    await asyncio.to_thread(entered.wait, 60)
    call.cancel()

asyncio.run(main())
print("exited")
"""


def test_a_call_still_running_at_exit_finishes_before_the_interpreter_ends(
    store_url: str, run_python: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    from attrflow import Client

    result = run_python(EXIT_SCRIPT, store_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "exited"

    class SlowFlow(Flow):
        counter = Attribute("counter", int)

        def get_persistence_schema(self) -> PersistenceSchema:
            return PersistenceSchema.of(self.counter)

        @rpc(name="Read")
        def read(self, context: Context, _: None) -> RPCResult[int]:
            return RPCResult(self.counter.get(context))

    with Client(store_url, built_in_flows=False) as client:
        assert client.invoke_rpc(SlowFlow().read, "slow-1") == 5


TASKS = 16

THREADS_SCRIPT = f"""
import asyncio, os, sys, time
from attrflow import AsyncClient, RpcLockConflictError
from attrflow.retry import RetryPolicy
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow, RegisterSubscriberInput

async def main():
    flow = ChunkedSubscriberFlow()
    policy = RetryPolicy(max_attempts=1000, first_delay=1e-4, max_delay=1e-2, budget=60.0)
    async with await AsyncClient.open(sys.argv[1]) as client:
        for task in range({TASKS}):
            await client.start_flow(flow, f"threads-{{task}}")

        async def append(task):
            for n in range(20):
                record = RegisterSubscriberInput(f"s{{task}}-{{n}}", "s@x.org")
                started, conflicts = time.monotonic(), 0
                while True:
                    try:
                        await client.invoke_rpc(
                            flow.register_subscriber, f"threads-{{task}}", record
                        )
                        break
                    except RpcLockConflictError:
                        # Retryable by contract, and this test is about threads, not
                        # conflicts: each task appends to an archive of its own.
                        pause = policy.pause_before(conflicts, time.monotonic() - started)
                        if pause is None:
                            raise
                        conflicts += 1
                        await asyncio.sleep(pause)

        await asyncio.gather(*(append(task) for task in range({TASKS})))

asyncio.run(main())
names = []
for task in os.listdir("/proc/self/task"):
    with open(f"/proc/self/task/{{task}}/comm") as comm:
        names.append(comm.read().strip())
print(names.count("attrflow-call"))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads Linux's /proc")
def test_many_tasks_use_no_more_worker_threads_than_calls_in_flight(
    store_url: str, run_python: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    """A call queued while the threads that just finished are on their way back to the queue
    waits for one of them instead of starting a thread of its own."""
    result = run_python(THREADS_SCRIPT, store_url)
    assert 1 <= int(result.stdout) <= TASKS


def _register_in_a_child(store_url: str) -> None:
    from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow, RegisterSubscriberInput

    async def main() -> int:
        flow = ChunkedSubscriberFlow()
        async with await AsyncClient.open(store_url) as client:
            await client.start_flow(flow, "forked-child")
            added = await client.invoke_rpc(
                flow.register_subscriber, "forked-child", RegisterSubscriberInput("c", "c@x.org")
            )
            return added.sequence

    sys.exit(0 if asyncio.run(main()) == 1 else 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_child_makes_awaitable_calls_of_its_own(store_url: str) -> None:
    from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow

    async def parent() -> str:
        async with await AsyncClient.open(store_url) as client:
            return await client.start_flow(ChunkedSubscriberFlow(), "forked-parent")

    assert asyncio.run(parent())  # the parent's worker threads exist now
    child = multiprocessing.get_context("fork").Process(
        target=_register_in_a_child, args=(store_url,)
    )
    child.start()
    child.join(WAIT)
    if child.exitcode is None:
        child.kill()
    assert child.exitcode == 0


class BatchFlow(Flow):
    """A counter per flow; ``Add`` takes its lock (so calls queued together run as one
    batch on SQLite) and refuses a negative amount."""

    counter = Attribute("counter", int)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(self.counter)

    @rpc(name="Add", lock_attributes=(counter.lock(),))
    def add(self, context: Context, by: int) -> RPCResult[int]:
        if by < 0:
            raise ValueError(f"refused {by}")
        value = self.counter.get(context) + by
        self.counter.set(context, value)
        return RPCResult(value)

    @rpc(name="Read")
    def read(self, context: Context, _: None) -> RPCResult[int]:
        return RPCResult(self.counter.get(context))


ROUNDS = 20
"""Calls per task: every fifth refused."""


def test_calls_queued_together_run_in_one_batch_and_each_keeps_its_own_outcome(
    store_url: str,
) -> None:
    """16 tasks on one client, each adding to its own flow: the calls the tasks queue
    together are handed to the store as one batch (on SQLite, which runs a batch as one
    group; PostgreSQL runs them on parallel threads), and a refused call fails alone."""
    flow = BatchFlow()

    async def main() -> tuple[list[list[int | str]], int, list[int]]:
        async with await AsyncClient.open(store_url, built_in_flows=False) as client:
            for n in range(TASKS):
                options = StartFlowOptions().with_attribute(flow.counter, 0)
                await client.start_flow(flow, f"batch-{n}", None, options)
            before = client.metrics().calls_batched

            async def task(n: int) -> list[int | str]:
                outcomes: list[int | str] = []
                for i in range(ROUNDS):
                    try:
                        by = -1 if i % 5 == 4 else 1
                        added: int = await client.invoke_rpc(flow.add, f"batch-{n}", by)
                        outcomes.append(added)
                    except WorkerInvocationError as error:
                        outcomes.append(error.worker_error_detail)
                return outcomes

            outcomes = await asyncio.gather(*(task(n) for n in range(TASKS)))
            batched = client.metrics().calls_batched - before
            finals = [await client.invoke_rpc(flow.read, f"batch-{n}", None) for n in range(TASKS)]
        return outcomes, batched, finals

    outcomes, batched, finals = asyncio.run(main())
    expected: list[int | str] = []
    for i in range(ROUNDS):
        expected.append("refused -1" if i % 5 == 4 else len(expected) - i // 5 + 1)
    assert outcomes == [expected] * TASKS
    assert finals == [ROUNDS - ROUNDS // 5] * TASKS, "every acknowledged call stored once"
    if store_url.startswith("postgresql"):
        assert batched == 0
    else:
        assert batched > 0, "calls queued together were handed over one by one"


HELD = 8
"""Calls one turn of the loop makes while another call is in flight."""


def test_the_calls_of_one_loop_turn_made_while_others_run_reach_one_worker_together(
    store_url: str,
) -> None:
    """While a call of the loop is in flight, the writing calls its tasks make in one turn of
    the loop wait for the turn's end and are then handed to the store together, as one
    batch, even when the loop takes its time between them (a worker woken for the first
    would have taken it alone). Each keeps its own result."""
    flow = BatchFlow()

    async def main() -> tuple[list[int], int]:
        async with await AsyncClient.open(store_url, built_in_flows=False) as client:
            for flow_id in [f"held-{n}" for n in range(HELD)] + ["held-waiter"]:
                options = StartFlowOptions().with_attribute(flow.counter, 0)
                await client.start_flow(flow, flow_id, None, options)
            waiter = asyncio.ensure_future(
                client.wait_for_attribute_equal(
                    "held-waiter", flow.counter, 1, timedelta(seconds=WAIT)
                )
            )
            await asyncio.sleep(0.05)  # the waiter's call runs; idle workers are asleep
            before = client.metrics().calls_batched

            async def add(n: int) -> int:
                time.sleep(0.005)  # the loop busy between the turn's calls
                added: int = await client.invoke_rpc(flow.add, f"held-{n}", n + 1)
                return added

            added = await asyncio.gather(*(add(n) for n in range(HELD)))
            batched = client.metrics().calls_batched - before
            await client.invoke_rpc(flow.add, "held-waiter", 1)
            await waiter
        return list(added), batched

    added, batched = asyncio.run(main())
    assert added == [n + 1 for n in range(HELD)]
    if store_url.startswith("postgresql"):
        assert batched == 0, "PostgreSQL runs every call on a worker of its own"
    else:
        assert batched == HELD, f"{batched} of the turn's {HELD} calls were handed over together"
