"""The asyncio client: :class:`AsyncClient`, with the methods of the Dex SDK's
``AsyncClient``.

Each call is handed to the native module's own worker threads (not the event loop's default
executor, so there is no cap on how many calls overlap beyond the store's own limits); when
the core is done, the worker queues the result on the loop's native completion queue and
wakes the loop through a socket the loop watches (``loop.add_reader``), without taking the
GIL. The loop drains the queue in one go, decoding each output and completing the awaited
futures, so calls finishing together cost the loop one wake-up. While other calls are in
flight, the writing RPCs its tasks make in one turn of the loop are handed to one worker
when that turn is over, and run together (see :func:`_call`). One exception: a read that
waits for no writer (a read-only RPC of a built-in flow, such as a page read, taking no
locks, on the embedded store) made while the loop has nothing else to do runs on the loop's
thread with the GIL released, as the blocking ``Client`` runs it, since handing it to a
worker would only add two thread hand-offs to the wait.

Cancellation: cancelling a task that awaits a call does not stop the call. The call runs to
its end in the core and may commit its writes (a registration may be stored); its result,
or its error, is dropped. The same holds when the event loop closes while a call runs. To
find out whether a cancelled write happened, read the state again, or use the idempotent
RPCs (a retried key is stored once).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import os
import threading
import weakref
from collections.abc import Generator
from datetime import timedelta
from types import TracebackType
from typing import Any, Callable, TypeVar, overload

from attrflow import _native, codec, flow_info
from attrflow.attribute import Attribute, AttributeMap
from attrflow.client import (
    DEFAULT_STORE,
    Client,
    _attribute_arguments,
    _check_flow_id,
    _check_store,
    _flow_result,
    _flow_wait_arguments,
    _set_attribute_arguments,
    _stop_arguments,
    _wait_arguments,
    _wait_timed_out,
)
from attrflow.errors import DexServiceError, annotated
from attrflow.flow import BoundRpc, Flow
from attrflow.flow_info import FlowInfo
from attrflow.flow_result import FlowResult
from attrflow.metrics import Metrics
from attrflow.options import RPCInvokeOptions, StartFlowOptions, StopFlowOptions

__all__ = ["AsyncClient"]

I = TypeVar("I")  # noqa: E741 - input type
O = TypeVar("O")  # noqa: E741 - output type
T = TypeVar("T")

_DEFAULT_START = StartFlowOptions()
_DEFAULT_INVOKE = RPCInvokeOptions()
_DEFAULT_STOP = StopFlowOptions()

EXIT_WAIT_SECONDS = 60.0
"""How long the interpreter waits at exit for calls still running on the worker threads
(their callers were cancelled, or their loop closed): the calls finish, and may commit, before
the interpreter goes away."""

atexit.register(_native.wait_for_calls, EXIT_WAIT_SECONDS)


class _Done:
    """An awaitable that is already complete, so both ``client.close()`` and
    ``await client.close()`` work."""

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # pragma: no cover - makes this a generator


class AsyncClient:
    """An asyncio client over one store; see :class:`attrflow.Client` for ``store`` and
    ``synchronous``, ``built_in_flows`` and flows defined in Python.

    ``AsyncClient(store)`` (the Dex idiom) opens the store in the constructor, on the
    calling thread: quick for an SQLite file, but a PostgreSQL connect waits for the
    server. ``await AsyncClient.open(store)`` opens it on a worker thread, so the event loop
    keeps running meanwhile."""

    def __init__(
        self,
        store: str | os.PathLike[str] = DEFAULT_STORE,
        *,
        synchronous: str | None = None,
        built_in_flows: bool = True,
    ) -> None:
        self._client = Client(store, synchronous=synchronous, built_in_flows=built_in_flows)

    @classmethod
    async def open(
        cls,
        store: str | os.PathLike[str] = DEFAULT_STORE,
        *,
        synchronous: str | None = None,
        built_in_flows: bool = True,
    ) -> AsyncClient:
        """Opens the store like the constructor, without blocking the event loop. If the
        awaiting task is cancelled, the store opened meanwhile is closed again."""
        url = _check_store(store, synchronous, built_in_flows)
        opening = _Opening(url, synchronous)
        try:
            runtime = await asyncio.wrap_future(opening.result)
        except asyncio.CancelledError:
            opening.abandon()
            raise
        client = cls.__new__(cls)
        client._client = Client._over(runtime, built_in_flows)
        return client

    @property
    def store(self) -> str:
        """Where the store lives."""
        return self._client.store

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._client.closed

    def register_flow(self, flow: Flow[Any]) -> None:
        """See :meth:`attrflow.Client.register_flow` (no store work: not awaited)."""
        self._client.register_flow(flow)

    async def start_flow(
        self,
        flow: Flow[Any],
        flow_id: str,
        input: None = None,
        options: StartFlowOptions = _DEFAULT_START,
    ) -> str:
        """See :meth:`attrflow.Client.start_flow`. Cancelled, the start may still happen."""
        arguments = self._client._start_arguments(flow, flow_id, input, options)
        try:
            run_id: str = await _call(self._client._runtime.start_flow, *arguments)
        except DexServiceError as error:
            annotated(error, "start_flow", flow_id)
            raise
        return run_id

    @overload
    async def get_attribute(
        self, flow_id: str, attribute: Attribute[T], *, run_id: str = ""
    ) -> T: ...

    @overload
    async def get_attribute(
        self, flow_id: str, attribute: AttributeMap[T], instance: str, *, run_id: str = ""
    ) -> T: ...

    async def get_attribute(
        self,
        flow_id: str,
        attribute: Attribute[Any] | AttributeMap[Any],
        instance: str | None = None,
        *,
        run_id: str = "",
    ) -> Any:
        """See :meth:`attrflow.Client.get_attribute`."""
        arguments, what = _attribute_arguments(flow_id, attribute, instance, run_id)
        try:
            text: str | None = await _call(
                self._client._runtime.get_attribute, *arguments, in_place=True
            )
        except DexServiceError as error:
            annotated(error, "get_attribute", flow_id)
            raise
        return None if text is None else codec.from_json(text, attribute.type, what=what)

    @overload
    async def set_attribute(
        self, flow_id: str, attribute: Attribute[T], value: T | None, /, *, run_id: str = ""
    ) -> None: ...

    @overload
    async def set_attribute(
        self,
        flow_id: str,
        attribute: AttributeMap[T],
        instance: str,
        value: T | None,
        /,
        *,
        run_id: str = "",
    ) -> None: ...

    async def set_attribute(
        self,
        flow_id: str,
        attribute: Attribute[Any] | AttributeMap[Any],
        /,
        *args: object,
        run_id: str = "",
    ) -> None:
        """See :meth:`attrflow.Client.set_attribute`. Cancelled, the write may still
        happen."""
        arguments = _set_attribute_arguments(flow_id, attribute, args, run_id)
        try:
            await _call(self._client._runtime.set_attribute, *arguments)
        except DexServiceError as error:
            annotated(error, "set_attribute", flow_id)
            raise

    @overload
    async def wait_for_attribute_equal(
        self, flow_id: str, attribute: Attribute[T], expected: T, timeout: timedelta
    ) -> None: ...

    @overload
    async def wait_for_attribute_equal(
        self,
        flow_id: str,
        attribute: AttributeMap[T],
        instance: str,
        expected: T,
        timeout: timedelta,
    ) -> None: ...

    async def wait_for_attribute_equal(
        self,
        flow_id: str,
        attribute: Attribute[Any] | AttributeMap[Any],
        *args: object,
        **kwargs: object,
    ) -> None:
        """See :meth:`attrflow.Client.wait_for_attribute_equal`; the wait runs on a worker
        thread, so the event loop goes on meanwhile."""
        arguments, shown = _wait_arguments(flow_id, attribute, args, kwargs)
        try:
            seen: bool = await _call(self._client._runtime.wait_for_attribute_equal, *arguments)
        except DexServiceError as error:
            annotated(error, "wait_for_attribute_equal", flow_id)
            raise
        if not seen:
            raise _wait_timed_out(flow_id, shown)

    async def stop_flow(self, flow_id: str, options: StopFlowOptions = _DEFAULT_STOP) -> None:
        """See :meth:`attrflow.Client.stop_flow`. Cancelled, the stop may still happen."""
        arguments = _stop_arguments(flow_id, options)
        try:
            await _call(self._client._runtime.stop_flow, *arguments)
        except DexServiceError as error:
            annotated(error, "stop_flow", flow_id)
            raise

    async def wait_for_flow(self, flow_id: str, timeout: timedelta | None = None) -> FlowResult:
        """See :meth:`attrflow.Client.wait_for_flow`; the wait runs on a worker thread."""
        arguments = _flow_wait_arguments(flow_id, timeout)
        try:
            closed = await _call(self._client._runtime.wait_for_flow, *arguments)
        except DexServiceError as error:
            annotated(error, "wait_for_flow", flow_id)
            raise
        return _flow_result(flow_id, closed, arguments[1])

    async def describe_flow(self, flow_id: str) -> FlowInfo:
        """See :meth:`attrflow.Client.describe_flow`."""
        _check_flow_id(flow_id)
        try:
            described = await _call(self._client._runtime.describe_flow, flow_id)
        except DexServiceError as error:
            annotated(error, "describe_flow", flow_id)
            raise
        return flow_info.from_native(described)

    async def invoke_rpc(
        self,
        rpc: BoundRpc[I, O],
        flow_id: str,
        input: I | None = None,
        *,
        run_id: str = "",
        options: RPCInvokeOptions = _DEFAULT_INVOKE,
    ) -> O:
        """See :meth:`attrflow.Client.invoke_rpc`. Cancelled, the call still runs to its end
        and may commit; its result is dropped."""
        call = self._client._rpc_call(rpc, flow_id, input, run_id, options)
        try:
            output: O = await _call(self._client._runtime.call_rpc, call, in_place=True)
        except DexServiceError as error:
            annotated(error, "invoke_rpc", flow_id)
            raise
        return output

    async def invoke_rpc_json(
        self,
        rpc: BoundRpc[I, O],
        flow_id: str,
        input: I | None = None,
        *,
        run_id: str = "",
        options: RPCInvokeOptions = _DEFAULT_INVOKE,
    ) -> bytes:
        """:meth:`invoke_rpc`, with the output as compact JSON ``bytes`` instead of decoded:
        exactly what ``json.dumps(d, separators=(",", ":"))`` writes for the dict ``d`` holding
        the output type's fields in their declared order under their camelCase names (ASCII
        only, the other characters escaped), written by the native module without building
        the dataclasses. For passing a result on, as an HTTP body say. The output is checked
        against its type as when decoded (``ValueMappingError`` names a mismatch); an output
        type with a ``float`` or an untyped (``Any``) part also raises it."""
        call = self._client._rpc_call(rpc, flow_id, input, run_id, options)
        try:
            output: bytes = await _call(
                functools.partial(self._client._runtime.call_rpc, as_json=True),
                call,
                in_place=True,
            )
        except DexServiceError as error:
            annotated(error, "invoke_rpc_json", flow_id)
            raise
        return output

    async def health_check(self) -> bool:
        """See :meth:`attrflow.Client.health_check`; the check runs on a worker thread."""
        try:
            await _call(self._client._runtime.health_check)
        except DexServiceError as error:
            annotated(error, "health_check", "")
            raise
        return True

    def metrics(self) -> Metrics:
        """See :meth:`attrflow.Client.metrics` (a read of counters, so not awaited)."""
        return self._client.metrics()

    def close(self) -> _Done:
        """Releases the store at once (calls already running finish). The result may be
        awaited or ignored."""
        self._client.close()
        return _Done()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<attrflow.AsyncClient {self.store!r} ({state})>"


class _Watch:
    """One event loop's queue of finished calls, and what tells whether the loop has other
    work: its ready callbacks and its selector's descriptor (an asyncio selector loop's
    own; other loops, uvloop's say, expose neither, and their lone calls are not waited
    for)."""

    __slots__ = ("completions", "holding", "inline", "loop", "ready", "selector", "unused")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.completions = _native.Completions()
        self.loop = loop
        self.inline = 0
        """Calls :func:`_call` returned at once since it last gave the loop a turn."""
        self.holding = False
        """Whether the queue holds wake-ups until the loop's next turn (see :func:`_call`)."""
        self.unused: tuple[_native.Completions, asyncio.Future[Any]] | None = None
        """A ``done`` whose future a call run in place did not need, for the next one."""
        ready = getattr(loop, "_ready", None)
        selector = getattr(getattr(loop, "_selector", None), "fileno", None)
        if ready is not None and callable(selector):
            self.ready: Any = ready
            self.selector: int = selector()
        else:
            self.ready = None
            self.selector = -1
        loop.add_reader(self.completions.fileno(), _drain, self.completions)


_INLINE_TURNS = 16
"""Of the calls :func:`_call` returns at once, every this many gives the loop a turn."""

_WATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watch] = weakref.WeakKeyDictionary()
"""Each event loop's queue of finished calls, watched by the loop while the loop lives."""

_last: _Watch | None = None
"""The queue of the loop that submitted last (most programs run one loop)."""


def _watch(loop: asyncio.AbstractEventLoop) -> _Watch:
    global _last
    watch = _last
    if watch is None or watch.loop is not loop:
        watch = _WATCHES.get(loop)
        if watch is None:
            watch = _WATCHES[loop] = _Watch(loop)
        _last = watch
    return watch


def _submit(start: Callable[..., object], *arguments: Any) -> asyncio.Future[Any]:
    """A future of the running loop that ``start(*arguments, done=...)`` completes: the call
    runs on a worker thread, and the loop's thread completes the future.

    When the call is the loop's only one, the loop watches for it for a moment once nothing
    else is ready (see :func:`_call`)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    watch = _watch(loop)
    start(*arguments, done=(watch.completions, future))
    if watch.ready is not None and watch.completions.running == 1:
        loop.call_soon(_wait_for_lone_call, watch)
    return future


async def _call(start: Callable[..., object], *arguments: Any, in_place: bool = False) -> Any:
    """The result of ``start(*arguments, done=...)``, a call run on a worker thread.

    With ``in_place`` (``start`` is the native ``call_rpc`` or ``get_attribute``), a call
    made when none of the loop's calls is in flight and the loop has nothing else ready is
    offered to run on the loop's own thread: one that waits for nothing but its own reads (a
    read-only RPC taking no locks, or a read of one value, on the embedded store:
    ``Runtime.reads_in_place`` and ``reads_values_in_place`` in the core) runs there as the
    blocking ``Client`` runs it, with no thread hand-off, and its output is returned.
    Reads that have been taking longer than the loop watches for a lone call (200 µs) go to
    workers for a while instead.

    A call that has finished by the time it is handed over (its worker ran at once) returns
    at once, as awaiting a finished future does. When the call is the loop's only one and
    the loop has nothing else ready, the loop watches for it for a moment (at most 200 µs,
    without the GIL, stopping early if I/O arrives) instead of going to sleep, and a call
    that finishes meanwhile returns at once too: a program awaiting one call at a time then
    pays neither a thread wake-up nor two turns of the loop per call. Every
    ``_INLINE_TURNS``-th call returned at once (or run in place) still gives the loop a
    turn, so that a task awaiting calls in a loop cannot keep I/O and timers waiting; a
    timer falling due during a watch runs after it, as it would after any other step of
    200 µs. Otherwise the task awaits a future the loop completes when the call has
    finished.

    A call made while other calls of the loop are in flight (many tasks at once) has its
    worker wake-up held until this turn of the loop is over: the writing RPCs that the
    turn's tasks make are then taken by one worker together and run as one batch (one
    commit group on SQLite), instead of a worker taking the first alone and the loop
    waking a thread for nearly every call."""
    loop = asyncio.get_running_loop()
    watch = _last
    if watch is None or watch.loop is not loop:
        watch = _watch(loop)
    completions = watch.completions
    if in_place and not completions.running and watch.ready is not None and not watch.ready:
        # The future is needed only if the call is handed over: one not needed is kept.
        done = watch.unused or (completions, loop.create_future())
        result = start(*arguments, done=done, in_place=True)
        future: asyncio.Future[Any] = done[1]
        if result is not future:
            watch.unused = done
            if _takes_turn(watch):
                await asyncio.sleep(0)
            return result
        watch.unused = None
    else:
        future = loop.create_future()
        if completions.running and not watch.holding:
            watch.holding = True
            completions.hold()
            loop.call_soon(_release, watch)
        start(*arguments, done=(completions, future))
    running = completions.running
    if running == 0 or (
        running == 1
        and watch.ready is not None
        and not watch.ready
        and completions.wait_for_lone_call(watch.selector)
    ):
        own = _drain(completions, future)
        if own is not None:
            if _takes_turn(watch):
                await asyncio.sleep(0)
            value, error = own
            if error is not None:
                raise error
            return value
    elif running == 1 and watch.ready:
        loop.call_soon(_wait_for_lone_call, watch)
    return await future


def _takes_turn(watch: _Watch) -> bool:
    """Counts a call returned without the loop's turn; every ``_INLINE_TURNS``-th must give
    the loop its turn (as if the task had awaited)."""
    watch.inline += 1
    if watch.inline < _INLINE_TURNS:
        return False
    watch.inline = 0
    return True


def _release(watch: _Watch) -> None:
    """Ends the hold :func:`_call` began in the loop's previous turn."""
    watch.holding = False
    watch.completions.release()


def _wait_for_lone_call(watch: _Watch) -> None:
    if not watch.ready and watch.completions.wait_for_lone_call(watch.selector):
        _drain(watch.completions)


def _drain(
    completions: _native.Completions, own: asyncio.Future[Any] | None = None
) -> tuple[Any, BaseException | None] | None:
    """Completes the futures of every finished call but ``own``, whose ``(value, error)``
    it returns instead (``None`` if ``own`` has not finished)."""
    settled = None
    for future, value, error in completions.drain():
        if future is own:
            settled = (value, error)
        elif future.cancelled():
            continue
        elif error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)
    return settled


class _Opening:
    """A store being opened on a thread of its own (the native open releases the GIL), so the
    event loop goes on meanwhile. If the awaiting task is cancelled, the store is closed as
    soon as it is open: by the thread itself, which needs no event loop, so the store is
    closed even when the loop has ended first (a completion left to a closed loop kept the
    store open for the rest of the process)."""

    def __init__(self, url: str, synchronous: str | None) -> None:
        self.result: concurrent.futures.Future[_native.Runtime] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._abandoned = False
        # Built-in flow types are registered on first use, as by Client.
        args = (url, synchronous, False)
        threading.Thread(target=self._open, args=args, name="attrflow-open", daemon=True).start()

    def _open(self, url: str, synchronous: str | None, built_in_flows: bool) -> None:
        try:
            runtime = _native.Runtime(url, synchronous, built_in_flows)
        except BaseException as error:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                self.result.set_exception(error)
            return
        with self._lock:
            if self._abandoned:
                runtime.close()
                return
            try:
                self.result.set_result(runtime)
            except concurrent.futures.InvalidStateError:  # cancelled with its awaiting task
                runtime.close()

    def abandon(self) -> None:
        """No one will take the store: closes it now if it is open, else once it is."""
        with self._lock:
            self._abandoned = True
            done = self.result.done() and not self.result.cancelled()
            if done and self.result.exception() is None:
                self.result.result().close()
