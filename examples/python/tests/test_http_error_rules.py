"""Every core error kind has an HTTP rule of its own.

The core's kinds are the one source (``attrflow._native.ERROR_KINDS``, from core's
``ErrorKind::ALL``). ``attrflow.errors`` maps each kind to its class, and the service's table
must give each of those classes a rule: its own, or a base class's other than
``AttrflowError``. A new kind added to the core then fails here, instead of falling through to
the catch-all 500.
"""

from __future__ import annotations

from http import HTTPStatus

import attrflow.errors
from attrflow import AttrflowError, _native

from attrflow_examples.http_errors import ERROR_RULES, ErrorRule


def rule_of(cls: type[AttrflowError]) -> tuple[type, ErrorRule]:
    """The class whose rule the service applies to ``cls``, and that rule."""
    ruled = next(base for base in cls.__mro__ if base in ERROR_RULES)
    return ruled, ERROR_RULES[ruled]


def test_the_service_has_a_rule_for_every_core_error_kind() -> None:
    classes = attrflow.errors.CORE_ERROR_CLASSES
    assert set(classes) == set(_native.ERROR_KINDS)
    unruled = sorted(kind for kind, cls in classes.items() if rule_of(cls)[0] is AttrflowError)
    assert unruled == [], f"core error kinds with no HTTP rule of their own: {unruled}"


def test_a_caller_fault_is_never_answered_as_a_server_fault() -> None:
    classes = attrflow.errors.CORE_ERROR_CLASSES
    caller_faults = {
        "flow_not_found",
        "invalid_input",
        "invalid_page_token",
        "page_not_found",
        "page_trimmed",
        "record_not_found",
        "record_trimmed",
    }
    assert caller_faults <= set(classes)
    for kind in sorted(caller_faults):
        _, rule = rule_of(classes[kind])
        assert not rule.is_server_fault, (kind, rule)
        assert HTTPStatus.BAD_REQUEST <= rule.status < HTTPStatus.INTERNAL_SERVER_ERROR
