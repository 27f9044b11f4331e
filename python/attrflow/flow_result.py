"""What ``wait_for_flow`` returns, as Dex's ``dex.flow_result`` and ``FlowErrorType``
describe it: :class:`FlowResult`, a closed run's status, failure category and detail, and
its Step completions (none: attrflow flows have no Steps)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from attrflow.flow_info import FlowInfo, FlowStatus

__all__ = ["FlowErrorType", "FlowResult"]

OutputT = TypeVar("OutputT")


class FlowErrorType(Enum):
    """The category of a failed run's failure, with Dex's names and values. A run
    attrflow fails is one ``stop_flow`` stopped with ``StopType.FAIL``: ``CLIENT_API_FAILED``,
    as Dex reports a run failed by a client call; the others do not occur here."""

    STEP_DECISION_FAILED = "step_decision_failed"
    CLIENT_API_FAILED = "client_api_failed"
    WORKER_API_FAILED = "worker_api_failed"
    INVALID_USER_FLOW_CODE = "invalid_user_flow_code"
    INTERNAL = "internal"
    FLOW_TIMEOUT = "flow_timeout"


@dataclass(frozen=True)
class FlowResult:
    """A closed run, as ``wait_for_flow`` returns it (Dex's fields): its ``status``
    (``CANCELED``, ``TERMINATED`` or ``FAILED``), ``error_type`` (``CLIENT_API_FAILED`` for a
    failed run, else ``None``), ``error_message`` (the reason given to ``stop_flow``, if any)
    and ``completions``, which is always empty: attrflow flows have no Steps.

    >>> from attrflow.flow_info import FlowStatus
    >>> FlowResult(FlowStatus.CANCELED, ()).is_terminal
    True
    """

    status: FlowStatus
    completions: tuple[Any, ...] = ()
    error_type: FlowErrorType | None = None
    error_message: str | None = None

    @property
    def is_terminal(self) -> bool:
        """Whether the run can no longer execute: every status but ``RUNNING`` and
        ``CONTINUED_AS_NEW``."""
        return self.status not in (FlowStatus.RUNNING, FlowStatus.CONTINUED_AS_NEW)

    def single_output(self, output_type: type[OutputT]) -> OutputT:
        """The output of the only Step completion, as Dex's: raises ``ValueError`` for a
        result that is not terminal or whose completions are not exactly one, which here
        is always (no flow has a Step whose output it could hold)."""
        if not self.is_terminal:
            raise ValueError("Flow result is not terminal")
        raise ValueError(f"Expected exactly one Step output, found {len(self.completions)}")


def of_closed(info: FlowInfo) -> FlowResult:
    """The :class:`FlowResult` of a closed run that ``describe_flow`` described."""
    failed = info.status is FlowStatus.FAILED
    return FlowResult(
        info.status,
        (),
        FlowErrorType.CLIENT_API_FAILED if failed else None,
        info.reason,
    )
