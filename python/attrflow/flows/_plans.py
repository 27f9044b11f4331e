"""Per-call options from the core's lock and load plans.

The Rust core owns which instances a built-in flow's call locks and loads (the app log's
``<log>.current`` and ``<log>.idempotency-keys``, the customer directory's partition); it
hands them over as ``(map, instance)`` pairs, and this turns them into
:class:`~attrflow.options.RPCInvokeOptions` on the flow's declared maps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrflow.attribute import AttributeMap
from attrflow.options import RPCInvokeOptions

Plan = tuple[Sequence[tuple[str, str]], Sequence[tuple[str, str]]]
"""Locks then loads, each a list of ``(map, instance)`` pairs."""


def plan_options(plan: Plan, maps: Mapping[str, AttributeMap[Any]]) -> RPCInvokeOptions:
    """The options of ``plan``, on the maps of ``maps`` (by name)."""
    locks, loads = plan
    return RPCInvokeOptions(
        lock_attribute_map_instances=tuple(maps[name].lock(key) for name, key in locks),
        load_attribute_map_instances=tuple(maps[name].load(key) for name, key in loads),
    )
