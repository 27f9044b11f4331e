"""What a flow type declares beyond its RPCs, in the Dex SDK's shape:
:class:`PersistenceSchema` (its Attributes and AttributeMaps) and :class:`StepList` (its
Steps; attrflow flows are RPC-only, so always empty).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, Union

from attrflow.attribute import Attribute, AttributeMap

__all__ = ["PersistenceSchema", "StepList"]

StartT = TypeVar("StartT")

Persisted = Union[Attribute[Any], AttributeMap[Any]]
"""One entry of a schema."""


@dataclass(frozen=True)
class PersistenceSchema:
    """The Attributes and AttributeMaps a flow type stores, returned by
    ``Flow.get_persistence_schema``.

    >>> schema = PersistenceSchema.of(Attribute("counter", int), AttributeMap("items", str))
    >>> [entry.name for entry in schema.entries]
    ['counter', 'items']
    """

    entries: tuple[Persisted, ...] = ()

    @classmethod
    def of(cls, *entries: Persisted) -> PersistenceSchema:
        """A schema of ``entries``. Duplicate names are rejected when the flow type is
        registered."""
        for entry in entries:
            if not isinstance(entry, (Attribute, AttributeMap)):
                raise TypeError(
                    "PersistenceSchema.of takes Attributes and AttributeMaps, "
                    f"not {type(entry).__name__}"
                )
        return cls(tuple(entries))

    @property
    def attributes(self) -> tuple[Attribute[Any], ...]:
        """The singleton Attributes."""
        return tuple(entry for entry in self.entries if isinstance(entry, Attribute))

    @property
    def attribute_maps(self) -> tuple[AttributeMap[Any], ...]:
        """The AttributeMaps."""
        return tuple(entry for entry in self.entries if isinstance(entry, AttributeMap))


@dataclass(frozen=True)
class StepList(Generic[StartT]):
    """The Steps of a flow type, returned by ``Flow.get_steps``; generic in the start input
    as in the Dex SDK (``-> StepList[None]``). attrflow runs RPC-only flows, so a flow type
    with Steps is rejected when it is registered."""

    steps: tuple[Any, ...] = ()

    @classmethod
    def empty(cls) -> StepList[Any]:
        """No Steps: an RPC-only flow, started with ``None`` input."""
        return cls()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self.steps)
