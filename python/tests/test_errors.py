"""The exception classes: one base, the built-in bases callers catch, messages kept."""

from __future__ import annotations

import pickle

import pytest
from archive_support import Archive

import attrflow
from attrflow import (
    AttrflowError,
    AttributeMapNotLoadedError,
    Client,
    FlowAlreadyStartedError,
    FlowNotFoundError,
    InvalidInputError,
    InvalidPageTokenError,
    PageNotFoundError,
    PageTrimmedError,
    RecordTrimmedError,
    RpcLockConflictError,
    StorageError,
    ValueMappingError,
    WorkerInvocationError,
    _native,
)
from attrflow.flows.chunked_subscriber import ChunkedSubscriberFlow

ALL = [
    AttributeMapNotLoadedError,
    FlowAlreadyStartedError,
    FlowNotFoundError,
    InvalidInputError,
    InvalidPageTokenError,
    PageNotFoundError,
    PageTrimmedError,
    RecordTrimmedError,
    RpcLockConflictError,
    StorageError,
    ValueMappingError,
    WorkerInvocationError,
]


@pytest.mark.parametrize("error_class", ALL)
def test_every_error_is_an_attrflow_error(error_class: type[AttrflowError]) -> None:
    error = error_class("what went wrong")
    assert isinstance(error, AttrflowError)
    assert error.message == "what went wrong"
    assert str(error) == "what went wrong"


def test_built_in_bases() -> None:
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(InvalidPageTokenError, InvalidInputError)
    assert issubclass(InvalidPageTokenError, ValueError)
    assert issubclass(ValueMappingError, InvalidInputError)
    assert issubclass(PageNotFoundError, LookupError)
    assert issubclass(PageTrimmedError, LookupError)
    assert issubclass(RecordTrimmedError, LookupError)
    assert issubclass(FlowNotFoundError, LookupError)
    assert not issubclass(AttributeMapNotLoadedError, LookupError)
    assert not issubclass(RpcLockConflictError, ValueError)


def test_one_table_maps_every_core_error_kind_onto_its_own_class() -> None:
    table = attrflow.errors.CORE_ERROR_CLASSES
    assert set(table) == set(_native.ERROR_KINDS)
    assert len(set(table.values())) == len(table)
    assert table["lock_conflict"] is RpcLockConflictError
    assert all(issubclass(cls, AttrflowError) for cls in table.values())


def test_core_errors_arrive_with_their_fields() -> None:
    with pytest.raises(InvalidPageTokenError) as raised:
        _native.validate_subscriber_page_token("1")
    assert raised.value.token == "1"
    assert str(raised.value) == 'invalid page token "1"'


def test_worker_invocation_error_carries_the_handler_error() -> None:
    error = WorkerInvocationError("boom", "ValueError", "boom")
    assert error.worker_error_type == "ValueError"
    assert error.worker_error_detail == "boom"
    assert WorkerInvocationError("boom").worker_error_detail == "boom"


def test_errors_raised_by_the_core_pickle_with_their_fields(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    from attrflow.flows.chunked_subscriber import FLOW_ID

    with pytest.raises(FlowAlreadyStartedError) as raised:
        client.start_flow(flow, FLOW_ID)
    copy = pickle.loads(pickle.dumps(raised.value))
    assert type(copy) is FlowAlreadyStartedError
    assert (copy.message, copy.flow_id, copy.run_id) == (
        raised.value.message,
        raised.value.flow_id,
        raised.value.run_id,
    )
