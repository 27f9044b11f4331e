"""Flows and their RPCs.

A :class:`Flow` subclass declares a flow type: its Attributes and AttributeMaps as class
attributes, and its RPCs as :class:`RpcDescriptor` class attributes. Reading an RPC from a
flow *instance* gives a :class:`BoundRpc`, the handle ``client.invoke_rpc`` takes, just as
the Dex SDK takes a bound ``@rpc`` method::

    flow = ChunkedSubscriberFlow()
    page = client.invoke_rpc(flow.get_subscriber_page, FLOW_ID, GetSubscriberPageInput(""))

The client finds everything it needs on the handle: ``handle.__self__`` is the flow (its
``flow_type``), ``handle.__attrflow_rpc__`` the :class:`RpcDefinition` (the RPC's name and
its input and output types). Today every RPC is implemented by the Rust core and declared
with :func:`core_rpc`. Python-defined handlers slot in beside it: an ``@rpc`` decorator
will produce a descriptor of its own (or a function carrying ``__attrflow_rpc__``, whose
bound methods then expose both attributes), and the client resolves it the same way.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NoReturn, TypeVar, overload

from attrflow import _native, codec
from attrflow.attribute import Attribute, AttributeMap
from attrflow.errors import FlowDefinitionError, InvalidInputError
from attrflow.schema import PersistenceSchema, StepList

__all__ = ["BoundRpc", "Flow", "RPCResult", "RpcDefinition", "RpcDescriptor", "core_rpc"]

I = TypeVar("I")  # noqa: E741 - input type
O = TypeVar("O")  # noqa: E741 - output type
StartT = TypeVar("StartT")
"""The input type of a flow's start Step: ``None`` for attrflow's RPC-only flows."""


@dataclass(frozen=True)
class RpcDefinition(Generic[I, O]):
    """An RPC as a caller sees it: its name and the types its input and output decode as."""

    name: str
    input_type: type[I]
    output_type: type[O]

    @functools.cached_property
    def codecs(self) -> tuple[_native.Decoder, _native.Decoder, str]:
        """The native decoders of the input and output types and the output's name in
        errors, made once per definition (what a call passes to the native module)."""
        return (
            codec.decoder(self.input_type),
            codec.decoder(self.output_type),
            f"output of RPC {self.name}",
        )


@dataclass(frozen=True)
class RPCResult(Generic[O]):
    """What a handler returns: its output and the Steps to move to (attrflow flows are
    RPC-only today, so ``next_steps`` stays empty)."""

    output: O
    next_steps: tuple[Any, ...] = field(default=())


class Flow(Generic[StartT]):
    """Base class of flow types, generic in the start input as in the Dex SDK: an RPC-only
    flow is declared ``class Orders(Flow[None])`` (a bare ``Flow`` base works too).

    The flow type's name is the class name unless the class sets ``flow_type``, is declared
    as ``class X(Flow[None], flow_type="Name")``, or overrides :meth:`get_flow_type`."""

    flow_type: ClassVar[str] = "Flow"

    def __init_subclass__(cls, *, flow_type: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("flow_type")
        for given in (flow_type, declared):
            if given is not None and (not isinstance(given, str) or not given):
                raise FlowDefinitionError(
                    f"flow type of {cls.__qualname__} must be a non-empty str, not {given!r}"
                )
        name = flow_type or declared or cls.__name__
        try:
            _native.validate_definition_name("flow type", name)
        except InvalidInputError as error:
            raise FlowDefinitionError(str(error)) from error
        cls.flow_type = name
        explicit = flow_type is not None or isinstance(declared, str)
        if cls.get_flow_type is not Flow.get_flow_type and not explicit:
            # Dex code names its flow type by overriding get_flow_type; the instance's
            # answer is then its flow type.
            setattr(cls, "flow_type", _FlowTypeOfInstance(name))  # noqa: B010

    def get_flow_type(self) -> str:
        """The flow type's name, as the Dex SDK asks for it. Override it (or set
        ``flow_type``) to decouple the name from the class name."""
        return type(self).flow_type

    @classmethod
    def rpc_definitions(cls) -> dict[str, RpcDefinition[Any, Any]]:
        """The flow type's RPCs, by RPC name."""
        found: dict[str, RpcDefinition[Any, Any]] = {}
        for klass in reversed(cls.__mro__):
            for value in vars(klass).values():
                if isinstance(value, RpcDescriptor):
                    found[value.definition.name] = value.definition
        return found

    @classmethod
    def attribute_definitions(cls) -> dict[str, Attribute[Any] | AttributeMap[Any]]:
        """The flow type's Attributes and AttributeMaps, by name."""
        found: dict[str, Attribute[Any] | AttributeMap[Any]] = {}
        for klass in reversed(cls.__mro__):
            for value in vars(klass).values():
                if isinstance(value, (Attribute, AttributeMap)):
                    found[value.name] = value
        return found

    def get_persistence_schema(self) -> PersistenceSchema:
        """The Attributes and AttributeMaps the flow type stores; by default every one
        declared on the class. Flows defined in Python override it as in the Dex SDK."""
        return PersistenceSchema.of(*self.attribute_definitions().values())

    def get_steps(self) -> StepList[StartT]:
        """The flow type's Steps: none, as attrflow flows are RPC-only."""
        return StepList.empty()

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} flow type {self.flow_type!r}>"


class _FlowTypeOfInstance:
    """``flow_type`` of a class that overrides ``get_flow_type``: read from an instance it
    is that instance's answer, checked once; read from the class, the class's name."""

    __slots__ = ("_class_name",)

    def __init__(self, class_name: str) -> None:
        self._class_name = class_name

    def __get__(self, instance: Flow[Any] | None, owner: type[Any] | None = None) -> str:
        if instance is None:
            return self._class_name
        name = instance.get_flow_type()
        if not isinstance(name, str):
            raise TypeError(f"get_flow_type must return a str, not {type(name).__name__}")
        _native.validate_definition_name("flow type", name)
        return name


class RpcDescriptor(Generic[I, O]):
    """An RPC declared on a :class:`Flow` class. Read from the class it is itself; read
    from an instance it is that instance's :class:`BoundRpc`."""

    __slots__ = ("_definition", "attribute_name")

    attribute_name: str

    def __init__(self, definition: RpcDefinition[I, O]) -> None:
        _native.validate_definition_name("RPC", definition.name)
        self._definition = definition
        self.attribute_name = definition.name

    @property
    def definition(self) -> RpcDefinition[I, O]:
        """The RPC's name and types."""
        return self._definition

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.attribute_name = name

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> RpcDescriptor[I, O]: ...

    @overload
    def __get__(self, instance: Flow[Any], owner: type[Any] | None = None) -> BoundRpc[I, O]: ...

    def __get__(
        self, instance: Flow[Any] | None, owner: type[Any] | None = None
    ) -> RpcDescriptor[I, O] | BoundRpc[I, O]:
        if instance is None:
            return self
        return BoundRpc(instance, self.definition, self.attribute_name)

    def __repr__(self) -> str:
        return f"<RPC {self.definition.name}>"


class BoundRpc(Generic[I, O]):
    """An RPC of one flow instance: what ``client.invoke_rpc`` takes."""

    __self__: Flow[Any]
    __attrflow_rpc__: RpcDefinition[I, O]
    __name__: str

    def __init__(self, flow: Flow[Any], definition: RpcDefinition[I, O], name: str) -> None:
        self.__self__ = flow
        self.__attrflow_rpc__ = definition
        self.__name__ = name

    @property
    def definition(self) -> RpcDefinition[I, O]:
        """The RPC's name and types."""
        return self.__attrflow_rpc__

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            f"RPC {self.__attrflow_rpc__.name} runs in the attrflow core; "
            f"call it with client.invoke_rpc(flow.{self.__name__}, flow_id, input)"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoundRpc)
            and other.__self__ is self.__self__
            and other.__attrflow_rpc__ == self.__attrflow_rpc__
        )

    def __hash__(self) -> int:
        return hash((id(self.__self__), self.__attrflow_rpc__))

    def __repr__(self) -> str:
        return f"<RPC {self.__attrflow_rpc__.name} of {self.__self__!r}>"


def core_rpc(name: str, input_type: type[I], output_type: type[O]) -> RpcDescriptor[I, O]:
    """Declares an RPC whose handler is part of the Rust core, by its core name.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Ping:
    ...     text: str
    >>> class Echo(Flow):
    ...     echo = core_rpc("Echo", Ping, Ping)
    >>> Echo().echo.__attrflow_rpc__.name
    'Echo'
    """
    return RpcDescriptor(RpcDefinition(name, input_type, output_type))


def resolve_rpc(handle: object) -> tuple[Flow[Any], RpcDefinition[Any, Any]]:
    """The flow and definition behind an RPC handle, or ``TypeError`` for anything else."""
    flow = getattr(handle, "__self__", None)
    definition = getattr(handle, "__attrflow_rpc__", None)
    if not isinstance(flow, Flow) or not isinstance(definition, RpcDefinition):
        raise TypeError(
            "invoke_rpc takes an RPC of a flow instance, such as flow.get_subscriber_page, "
            f"not {handle!r}"
        )
    return flow, definition
