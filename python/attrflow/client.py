"""The blocking client: :class:`Client`, with the methods of the Dex SDK's ``Client``.

There is no server: a client opens the store (an SQLite file) itself, and every call runs
in the Rust core with the GIL released, so calls from many threads overlap.
"""

from __future__ import annotations

import os
import threading
from datetime import timedelta
from types import TracebackType
from typing import Any, TypeVar, cast, overload

from attrflow import _native, codec, flow_info, registration
from attrflow import metrics as _metrics
from attrflow.attribute import Attribute, AttributeMap
from attrflow.errors import (
    DexServiceError,
    FlowDefinitionError,
    InvalidInputError,
    LongPollTimeoutError,
    annotated,
)
from attrflow.flow import BoundRpc, Flow, resolve_rpc
from attrflow.flow_info import FlowInfo
from attrflow.flow_result import FlowResult, of_closed
from attrflow.metrics import Metrics
from attrflow.options import RPCInvokeOptions, StartFlowOptions, StopFlowOptions

__all__ = ["DEFAULT_STORE", "Client"]

I = TypeVar("I")  # noqa: E741 - input type
O = TypeVar("O")  # noqa: E741 - output type
T = TypeVar("T")

DEFAULT_STORE = "data/attrflow.db"
"""The store a client opens when given none: an SQLite file under the working folder."""

_DEFAULT_START = StartFlowOptions()
_DEFAULT_INVOKE = RPCInvokeOptions()
_DEFAULT_STOP = StopFlowOptions()


class Client:
    """A blocking client over one store.

    ``store`` is a path or an ``sqlite:`` URL (``sqlite:data/a.db?synchronous=normal``), or a
    ``postgresql://`` URL of a PostgreSQL database that many processes and hosts share;
    ``synchronous`` (``"full"`` or ``"normal"``) overrides an SQLite URL's durability setting.
    The store is created if missing. Use it as a context manager, or call :meth:`close`.

    Flow types are registered on their first use (or by :meth:`register_flow`, which
    reports a bad definition at once). Handlers written in Python run with that first flow
    instance as ``self``. A flow type name belongs to the first flow used under it, so an
    application's own ``ChunkedSubscriberFlow`` takes the name from the built-in one; with
    ``built_in_flows=False`` the built-in flow types are not offered at all.

    >>> import tempfile, os
    >>> from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow, FLOW_ID
    >>> with tempfile.TemporaryDirectory() as folder, Client(os.path.join(folder, "a.db")) as c:
    ...     run_id = c.start_flow(ChunkedSubscriberFlow(), FLOW_ID)
    ...     len(run_id) > 0
    True
    """

    def __init__(
        self,
        store: str | os.PathLike[str] = DEFAULT_STORE,
        *,
        synchronous: str | None = None,
        built_in_flows: bool = True,
    ) -> None:
        url = _check_store(store, synchronous, built_in_flows)
        # Built-in flow types are registered on first use (see attrflow.registration).
        self._adopt(_native.Runtime(url, synchronous, False), built_in_flows)

    @classmethod
    def _over(cls, runtime: _native.Runtime, built_in_flows: bool) -> Client:
        """A client over a store already opened (by ``AsyncClient.open``) without built-in
        flow types."""
        client = cls.__new__(cls)
        client._adopt(runtime, built_in_flows)
        return client

    def _adopt(self, runtime: _native.Runtime, built_in_flows: bool) -> None:
        self._runtime = runtime
        self._built_in_flows = built_in_flows
        self._registered: dict[str, Flow[Any]] = {}
        self._registering = threading.Lock()

    @property
    def store(self) -> str:
        """Where the store lives."""
        return self._runtime.location

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._runtime.closed

    def register_flow(self, flow: Flow[Any]) -> None:
        """Registers the flow type of ``flow`` so that it can be started and called; handlers
        defined in Python with ``@rpc`` run with ``flow`` as ``self``.
        Registering the same flow type again is harmless. A definition the core rejects
        raises ``FlowDefinitionError`` naming what is wrong."""
        if not isinstance(flow, Flow):
            raise TypeError(f"register_flow takes a Flow instance, not {flow!r}")
        with self._registering:
            registered = self._registered.get(flow.flow_type)
            if registered is not None:
                if type(registered) is not type(flow):
                    raise FlowDefinitionError(
                        f"flow type {flow.flow_type!r} is already registered by "
                        f"{type(registered).__qualname__}"
                    )
                return
            registration.register(self._runtime, flow, built_in_flows=self._built_in_flows)
            self._registered[flow.flow_type] = flow

    def _prepare(self, flow: Flow[Any]) -> None:
        registered = self._registered.get(flow.flow_type)
        if registered is None or type(registered) is not type(flow):
            self.register_flow(flow)

    def start_flow(
        self,
        flow: Flow[Any],
        flow_id: str,
        input: None = None,
        options: StartFlowOptions = _DEFAULT_START,
    ) -> str:
        """Starts ``flow``'s type under ``flow_id`` with its initial values and returns the run
        ID. When the ID already has a run, ``options.id_reuse_policy`` decides, as in Dex:
        the default begins a new run once the previous one is stopped, replacing it (its
        values are removed; the new run holds only its initial values), and a running flow
        raises ``FlowAlreadyStartedError`` unless ``options.ignore_already_started``, which
        returns the running flow's run ID. A start the policy refuses raises
        ``FlowAlreadyStartedError`` whose ``status`` says where the existing run stands.

        attrflow flows are RPC-only (no start Step), so ``input`` must be None."""
        arguments = self._start_arguments(flow, flow_id, input, options)
        try:
            return self._runtime.start_flow(*arguments)
        except DexServiceError as error:
            annotated(error, "start_flow", flow_id)
            raise

    def invoke_rpc(
        self,
        rpc: BoundRpc[I, O],
        flow_id: str,
        input: I | None = None,
        *,
        run_id: str = "",
        options: RPCInvokeOptions = _DEFAULT_INVOKE,
    ) -> O:
        """Invokes ``rpc`` (an RPC of a flow instance, such as ``flow.register_subscriber``)
        on the flow ``flow_id`` and returns its decoded output.

        The RPC takes its fixed locks plus ``options``' (fail-fast: a held lock raises
        ``RpcLockConflictError``, to be retried), loads its fixed instances plus
        ``options``', and commits all of its writes or none. ``run_id`` ``""`` means the
        flow's current run; any other value must be that run's ID."""
        call = self._rpc_call(rpc, flow_id, input, run_id, options)
        try:
            return cast(O, self._runtime.call_rpc(call))
        except DexServiceError as error:
            annotated(error, "invoke_rpc", flow_id)
            raise

    @overload
    def get_attribute(self, flow_id: str, attribute: Attribute[T], *, run_id: str = "") -> T: ...

    @overload
    def get_attribute(
        self, flow_id: str, attribute: AttributeMap[T], instance: str, *, run_id: str = ""
    ) -> T: ...

    def get_attribute(
        self,
        flow_id: str,
        attribute: Attribute[Any] | AttributeMap[Any],
        instance: str | None = None,
        *,
        run_id: str = "",
    ) -> Any:
        """The committed value of ``attribute`` (a singleton Attribute, or with ``instance``
        one instance of an AttributeMap) of the flow ``flow_id``, decoded as declared, or
        None when it holds no value, as Dex's ``Client.get_attribute`` returns it. It is read
        lock-free: it waits for no RPC and sees none that has not committed.

        Raises ``FlowNotFoundError`` for a flow never started, ``TypeError`` when an
        AttributeMap is given no instance or an Attribute one, and ``InvalidInputError``
        for a name the flow's type does not declare (when this client has used that type)
        or a ``run_id`` that is not the flow's run."""
        arguments, what = _attribute_arguments(flow_id, attribute, instance, run_id)
        try:
            text = self._runtime.get_attribute(*arguments)
        except DexServiceError as error:
            annotated(error, "get_attribute", flow_id)
            raise
        return None if text is None else codec.from_json(text, attribute.type, what=what)

    @overload
    def set_attribute(
        self, flow_id: str, attribute: Attribute[T], value: T | None, /, *, run_id: str = ""
    ) -> None: ...

    @overload
    def set_attribute(
        self,
        flow_id: str,
        attribute: AttributeMap[T],
        instance: str,
        value: T | None,
        /,
        *,
        run_id: str = "",
    ) -> None: ...

    def set_attribute(
        self,
        flow_id: str,
        attribute: Attribute[Any] | AttributeMap[Any],
        /,
        *args: object,
        run_id: str = "",
    ) -> None:
        """Writes one value of the flow ``flow_id`` from outside its RPCs, as Dex's
        ``Client.set_attribute``: ``set_attribute(flow_id, attribute, value)`` for a singleton
        Attribute, ``set_attribute(flow_id, attribute_map, instance, value)`` for one instance
        of an AttributeMap. ``value`` is encoded as ``attribute`` declares (a value of
        another type raises ``ValueMappingError`` naming the field); ``None`` deletes it.

        The write takes the value's lock, as an RPC that locks it does: it waits for an RPC
        holding that lock (retrying for up to 5 s, then ``RpcLockConflictError``), a
        lock-free RPC that read the old value retries, and it returns once the write is
        durable. The flow's type must be one this client has used (started, called or passed
        to :meth:`register_flow`) and must declare the name; the built-in flow types are
        written only by their RPCs. Each refusal raises ``InvalidInputError`` naming what
        was wrong and writes nothing; a stopped flow raises ``FlowStoppedError`` (a
        ``FlowNotActiveError``), a flow never started ``FlowNotFoundError``."""
        arguments = _set_attribute_arguments(flow_id, attribute, args, run_id)
        try:
            self._runtime.set_attribute(*arguments)
        except DexServiceError as error:
            annotated(error, "set_attribute", flow_id)
            raise

    @overload
    def wait_for_attribute_equal(
        self, flow_id: str, attribute: Attribute[T], expected: T, timeout: timedelta
    ) -> None: ...

    @overload
    def wait_for_attribute_equal(
        self,
        flow_id: str,
        attribute: AttributeMap[T],
        instance: str,
        expected: T,
        timeout: timedelta,
    ) -> None: ...

    def wait_for_attribute_equal(
        self,
        flow_id: str,
        attribute: Attribute[Any] | AttributeMap[Any],
        *args: object,
        **kwargs: object,
    ) -> None:
        """Waits until the committed value of ``attribute`` (with ``instance``, of that instance
        of an AttributeMap) of the flow ``flow_id`` equals ``expected``, as Dex's
        ``Client.wait_for_attribute_equal``: ``(flow_id, attribute, expected, timeout)`` or
        ``(flow_id, attribute_map, instance, expected, timeout)``, by position or name.

        It returns at once when the value already equals ``expected`` and otherwise when a
        write commits it (of this process at once, of another one after a few
        milliseconds). ``expected`` must be a ``str``, ``bool``, ``int`` or ``float``
        (anything else raises ``ValueError`` before waiting) and is encoded as
        ``attribute`` declares; numbers compare by value. ``timeout`` (a ``timedelta``, at
        most 60 seconds) running out raises ``LongPollTimeoutError``; a flow stopped first
        ``FlowStoppedError``, a flow never started ``FlowNotFoundError``."""
        arguments, shown = _wait_arguments(flow_id, attribute, args, kwargs)
        try:
            seen = self._runtime.wait_for_attribute_equal(*arguments)
        except DexServiceError as error:
            annotated(error, "wait_for_attribute_equal", flow_id)
            raise
        if not seen:
            raise _wait_timed_out(flow_id, shown)

    def stop_flow(self, flow_id: str, options: StopFlowOptions = _DEFAULT_STOP) -> None:
        """Stops the flow ``flow_id``, as Dex's ``Client.stop_flow`` does: its run ends
        ``CANCELED`` (or as ``options.type`` says) with ``options.reason`` kept. From then on
        an RPC on it and a second stop raise ``FlowStoppedError`` (a ``FlowNotActiveError``;
        its ``status`` says how it ended), until :meth:`start_flow` begins a new run under
        its ID; its values stay readable with :meth:`get_attribute` until then. A flow never
        started raises ``FlowNotActiveOrNotFoundError``."""
        arguments = _stop_arguments(flow_id, options)
        try:
            self._runtime.stop_flow(*arguments)
        except DexServiceError as error:
            annotated(error, "stop_flow", flow_id)
            raise

    def describe_flow(self, flow_id: str) -> FlowInfo:
        """Where the flow ``flow_id`` stands, as Dex's ``Client.describe_flow`` says it: its
        run ID, flow type, :class:`FlowStatus` (``RUNNING`` until stopped) and start time, and
        once stopped when and why. Raises ``FlowNotFoundError`` for a flow never started."""
        _check_flow_id(flow_id)
        try:
            described = self._runtime.describe_flow(flow_id)
        except DexServiceError as error:
            annotated(error, "describe_flow", flow_id)
            raise
        return flow_info.from_native(described)

    def wait_for_flow(self, flow_id: str, timeout: timedelta | None = None) -> FlowResult:
        """Waits until the run of the flow ``flow_id`` closes and returns its
        :class:`FlowResult`, as Dex's ``Client.wait_for_flow``: at once for a stopped flow,
        otherwise when ``stop_flow`` (of any client, process or host) commits, or a start
        with ``ALLOW_TERMINATE_IF_RUNNING`` replaces the run (``TERMINATED``); an attrflow
        run closes no other way. The wait is for the run the flow has when it begins; one
        no longer recorded (the flow's run changed twice since) raises
        ``RunNotCurrentError``. ``timeout`` (a ``timedelta``, at most 60 seconds; ``None``
        is 60 seconds) running out raises ``LongPollTimeoutError``, which a caller may
        retry by waiting again; a flow never started raises ``FlowNotFoundError``."""
        arguments = _flow_wait_arguments(flow_id, timeout)
        try:
            closed = self._runtime.wait_for_flow(*arguments)
        except DexServiceError as error:
            annotated(error, "wait_for_flow", flow_id)
            raise
        return _flow_result(flow_id, closed, arguments[1])

    def _start_arguments(
        self, flow: Flow, flow_id: str, input: None, options: StartFlowOptions
    ) -> tuple[str, str, bool, list[tuple[str, str | None, str]], str]:
        """The checked arguments of the native ``start_flow``."""
        if not isinstance(flow, Flow):
            raise TypeError(f"start_flow takes a Flow instance, not {flow!r}")
        _check_flow_id(flow_id)
        if input is not None:
            raise ValueError("Flow without a start Step requires None input")
        if not isinstance(options, StartFlowOptions):
            raise TypeError(f"options must be StartFlowOptions, not {type(options).__name__}")
        self._prepare(flow)
        initial = [
            (value.attribute.name, value.instance, value.json)
            for value in options.initial_attributes
        ]
        return (
            flow.flow_type,
            flow_id,
            options.ignore_already_started,
            initial,
            options.id_reuse_policy.name,
        )

    def _rpc_call(
        self,
        rpc: BoundRpc[I, O],
        flow_id: str,
        input: I | None,
        run_id: str,
        options: RPCInvokeOptions,
    ) -> _native.RpcCall:
        """The checked call the native ``call_rpc`` takes: the output's decoder and name,
        then the call, the input encoded natively along its type. With no locks or loads in
        ``options`` the core plans them from the input."""
        flow, definition = resolve_rpc(rpc)
        _check_flow_id(flow_id)
        self._prepare(flow)
        if not isinstance(run_id, str):
            raise TypeError("run_id must be a str")
        if not isinstance(options, RPCInvokeOptions):
            raise TypeError(f"options must be RPCInvokeOptions, not {type(options).__name__}")
        input_type, output_type, what = definition.codecs
        locks = options.lock_attribute_map_instances
        loads = options.load_attribute_map_instances
        return _native.RpcCall(
            decoder=output_type,
            what=what,
            flow_type=flow.flow_type,
            flow_id=flow_id,
            rpc_name=definition.name,
            input=input,
            lock_instances=_pairs(locks) if locks else [],
            load_instances=_pairs(loads) if loads else [],
            run_id=run_id,
            input_type=input_type,
        )

    def health_check(self) -> bool:
        """Checks that the store answers, as Dex's ``Client.health_check`` checks its service:
        one read of the store's table of flows (a round trip to the server on PostgreSQL).
        Returns True, or raises ``StorageError`` (a ``DexServiceError``) saying what is wrong,
        as it does once the client is closed."""
        try:
            self._runtime.health_check()
        except DexServiceError as error:
            annotated(error, "health_check", "")
            raise
        return True

    def metrics(self) -> Metrics:
        """The counters of every client in this process (see :mod:`attrflow.metrics`)."""
        return _metrics.snapshot()

    def close(self) -> None:
        """Releases the store. Calls already running finish; later calls raise
        ``StorageError``. Closing twice is harmless."""
        self._runtime.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<attrflow.Client {self.store!r} ({state})>"


def _check_store(store: object, synchronous: object, built_in_flows: object) -> str:
    """The store's path or URL as text, after checking the opening arguments' types."""
    if not isinstance(store, (str, os.PathLike)):
        raise TypeError(f"store must be a path or URL, not {type(store).__name__}")
    if synchronous is not None and not isinstance(synchronous, str):
        raise TypeError('synchronous must be "full", "normal" or None')
    if not isinstance(built_in_flows, bool):
        raise TypeError("built_in_flows must be a bool")
    return os.fspath(store)


def _value_name(attribute: Attribute[Any] | AttributeMap[Any], instance: str | None) -> str:
    """How an error names one value: ``Attribute <name>``, or ``AttributeMap instance
    <map>/<instance>`` (checking the instance key)."""
    if isinstance(attribute, AttributeMap) and instance is not None:
        return f"AttributeMap instance {attribute.load(instance).physical_name}"
    return f"Attribute {attribute.name}"


def _attribute_arguments(
    flow_id: str,
    attribute: Attribute[Any] | AttributeMap[Any],
    instance: str | None,
    run_id: str,
) -> tuple[tuple[str, str, str | None, str], str]:
    """The checked arguments of the native ``get_attribute``, and what a decoding error
    calls the value."""
    _check_flow_id(flow_id)
    if not isinstance(run_id, str):
        raise TypeError("run_id must be a str")
    if isinstance(attribute, AttributeMap):
        if not isinstance(instance, str):
            raise TypeError(
                f"get_attribute on AttributeMap {attribute.name!r} takes "
                "(flow_id, attribute_map, instance)"
            )
        what = _value_name(attribute, instance)
    elif isinstance(attribute, Attribute):
        if instance is not None:
            raise TypeError(
                f"get_attribute on Attribute {attribute.name!r} takes (flow_id, attribute); "
                "only an AttributeMap takes an instance"
            )
        what = _value_name(attribute, None)
    else:
        raise TypeError(
            f"get_attribute takes an Attribute or AttributeMap, not {type(attribute).__name__}"
        )
    return (flow_id, attribute.name, instance, run_id), what


def _set_attribute_arguments(
    flow_id: str,
    attribute: Attribute[Any] | AttributeMap[Any],
    args: tuple[object, ...],
    run_id: str,
) -> tuple[str, str, str | None, str, str]:
    """The checked arguments of the native ``set_attribute``: the value encoded as the
    Attribute or AttributeMap declares it."""
    _check_flow_id(flow_id)
    if not isinstance(run_id, str):
        raise TypeError("run_id must be a str")
    if isinstance(attribute, AttributeMap):
        if len(args) != 2 or not isinstance(args[0], str):
            raise TypeError(
                f"set_attribute on AttributeMap {attribute.name!r} takes "
                "(flow_id, attribute_map, instance, value)"
            )
        instance: str | None = args[0]
        what = _value_name(attribute, args[0])
    elif isinstance(attribute, Attribute):
        if len(args) != 1:
            raise TypeError(
                f"set_attribute on Attribute {attribute.name!r} takes (flow_id, attribute, "
                "value); only an AttributeMap takes an instance"
            )
        instance = None
        what = _value_name(attribute, None)
    else:
        raise TypeError(
            f"set_attribute takes an Attribute or AttributeMap, not {type(attribute).__name__}"
        )
    value = args[-1]
    text = "null" if value is None else codec.to_json(value, attribute.type, what=what)
    return flow_id, attribute.name, instance, text, run_id


_SCALARS = (str, bool, int, float)
"""The Python types of the values ``wait_for_attribute_equal`` waits for, as Dex's."""


def _wait_arguments(
    flow_id: str,
    attribute: Attribute[Any] | AttributeMap[Any],
    args: tuple[object, ...],
    kwargs: dict[str, object],
) -> tuple[tuple[str, str, str | None, str, float], str]:
    """The checked arguments of the native ``wait_for_attribute_equal`` (the expected value
    encoded as ``attribute`` declares it), and how a timeout names what was awaited."""
    _check_flow_id(flow_id)
    names: tuple[str, ...]
    if isinstance(attribute, AttributeMap):
        names = ("instance", "expected", "timeout")
    elif isinstance(attribute, Attribute):
        names = ("expected", "timeout")
    else:
        raise TypeError(
            "wait_for_attribute_equal takes an Attribute or AttributeMap, "
            f"not {type(attribute).__name__}"
        )
    usage = f"wait_for_attribute_equal takes (flow_id, {', '.join(('attribute', *names))})"
    if len(args) > len(names):
        raise TypeError(f"{usage}; it was given {len(args) + 2} arguments")
    arguments = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names or name in arguments:
            raise TypeError(f"{usage}; {name!r} is not one of them or was given twice")
        arguments[name] = value
    missing = [name for name in names if name not in arguments]
    if missing:
        raise TypeError(f"{usage}; {', '.join(missing)} missing")
    instance = cast("str | None", arguments.get("instance"))
    if isinstance(attribute, AttributeMap) and not isinstance(instance, str):
        raise TypeError(f"instance must be a str, not {type(instance).__name__}")
    what = _value_name(attribute, instance)
    expected, timeout = arguments["expected"], arguments["timeout"]
    if not isinstance(timeout, timedelta):
        raise TypeError(f"timeout must be a datetime.timedelta, not {type(timeout).__name__}")
    if not isinstance(expected, _SCALARS):
        raise InvalidInputError(
            "wait_for_attribute_equal supports only string, boolean, or number values, "
            f"not {type(expected).__name__}"
        )
    text = codec.to_json(expected, attribute.type, what=what)
    native = (flow_id, attribute.name, instance, text, timeout.total_seconds())
    return native, f"{what} = {expected!r} within {timeout.total_seconds():g} s"


def _wait_timed_out(
    flow_id: str, shown: str, operation: str = "wait_for_attribute_equal"
) -> LongPollTimeoutError:
    """The error of a wait (``operation``) whose time ran out before it saw what it waited
    for: the flow reaching ``shown``."""
    error = LongPollTimeoutError(f"flow {flow_id!r} did not reach {shown}", flow_id)
    error.operation = operation
    return error


def _flow_wait_arguments(flow_id: str, timeout: timedelta | None) -> tuple[str, float]:
    """The checked arguments of the native ``wait_for_flow``."""
    _check_flow_id(flow_id)
    if timeout is None:
        return flow_id, _native.MAX_TAIL_TIMEOUT_SECONDS
    if not isinstance(timeout, timedelta):
        raise TypeError(f"timeout must be a datetime.timedelta, not {type(timeout).__name__}")
    return flow_id, timeout.total_seconds()


def _flow_result(
    flow_id: str,
    closed: tuple[str, str, str, str, int, int | None, str | None] | None,
    seconds: float,
) -> FlowResult:
    """The result of the native ``wait_for_flow``: the closed run's :class:`FlowResult`, or
    ``LongPollTimeoutError`` when the time ran out first."""
    if closed is None:
        raise _wait_timed_out(flow_id, f"a closed run within {seconds:g} s", "wait_for_flow")
    return of_closed(flow_info.from_native(closed))


def _stop_arguments(flow_id: str, options: StopFlowOptions) -> tuple[str, str, str | None]:
    """The checked arguments of the native ``stop_flow``."""
    _check_flow_id(flow_id)
    if not isinstance(options, StopFlowOptions):
        raise TypeError(f"options must be StopFlowOptions, not {type(options).__name__}")
    return flow_id, options.type.value, options.reason


def _check_flow_id(flow_id: object) -> None:
    if not isinstance(flow_id, str):
        raise TypeError(f"flow_id must be a str, not {type(flow_id).__name__}")


def _pairs(selectors: tuple[Any, ...]) -> list[tuple[str, str]]:
    return [(selector.attribute_map.name, selector.instance) for selector in selectors]
