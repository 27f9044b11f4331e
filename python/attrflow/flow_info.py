"""Where a flow stands, as Dex's ``dex.flow_info`` describes it: :class:`FlowStatus` and the
:class:`FlowInfo` that ``describe_flow`` returns."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum

__all__ = ["FlowInfo", "FlowStatus"]


class FlowStatus(Enum):
    """The state of a flow's run, with Dex's names and values. An attrflow flow is
    ``RUNNING`` from its start until ``stop_flow`` makes it ``CANCELED``, ``TERMINATED`` or
    ``FAILED``; the other statuses of Dex (a run completed by its Steps, timed out or
    continued as new) do not occur, since attrflow flows have no Steps and no timeout."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    TERMINATED = "terminated"
    SERVER_SIDE_TIMEOUT_INTERNAL_ONLY = "server_side_timeout_internal_only"
    CONTINUED_AS_NEW = "continued_as_new"


@dataclass(frozen=True)
class FlowInfo:
    """A flow's run, as ``describe_flow`` returns it (Dex's fields, in Dex's order), with
    attrflow's ``closed_at`` and ``reason`` of a stopped run (``None`` while running)."""

    flow_id: str
    run_id: str
    flow_type: str
    status: FlowStatus
    started_at: datetime
    closed_at: datetime | None = None
    reason: str | None = None


def from_native(described: tuple[str, str, str, str, int, int | None, str | None]) -> FlowInfo:
    """The :class:`FlowInfo` of the native ``describe_flow``'s tuple (times in milliseconds
    since the Unix epoch)."""
    flow_id, run_id, flow_type, status, started_at_ms, closed_at_ms, reason = described
    return FlowInfo(
        flow_id,
        run_id,
        flow_type,
        FlowStatus(status),
        _utc(started_at_ms),
        None if closed_at_ms is None else _utc(closed_at_ms),
        reason,
    )


def _utc(ms: int) -> datetime:
    """The UTC time ``ms`` milliseconds after the Unix epoch."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
