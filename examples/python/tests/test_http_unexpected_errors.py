"""A failure of the service itself is a logged 500 with a JSON body; the table maps by class."""

from __future__ import annotations

import logging
from http import HTTPStatus

import pytest
from attrflow import (
    AttrflowError,
    InvalidInputError,
    InvalidPageTokenError,
    PageNotFoundError,
    RpcLockConflictError,
    StorageError,
    ValueMappingError,
)

from attrflow_examples.app import create_app
from attrflow_examples.http_errors import ERROR_RULES, rule_for


@pytest.mark.asyncio
async def test_an_unexpected_exception_is_a_logged_json_500(
    store: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(store)

    @app.get("/test-only/fails")
    async def fails() -> str:
        raise RuntimeError("secret internal detail")

    async with app.test_app() as test_app:
        with caplog.at_level(logging.ERROR):
            response = await test_app.test_client().get("/test-only/fails")

    assert response.status_code == 500
    assert await response.get_json() == {"error": "internal server error"}
    assert any(
        record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)
        for record in caplog.records
    )


class _NewKindOfStorageError(StorageError):
    """A subclass the table does not name."""


@pytest.mark.parametrize(
    ("error_type", "status"),
    [
        (RpcLockConflictError, HTTPStatus.CONFLICT),
        (InvalidInputError, HTTPStatus.BAD_REQUEST),
        (InvalidPageTokenError, HTTPStatus.BAD_REQUEST),
        (PageNotFoundError, HTTPStatus.NOT_FOUND),
        (ValueMappingError, HTTPStatus.INTERNAL_SERVER_ERROR),
        (_NewKindOfStorageError, HTTPStatus.INTERNAL_SERVER_ERROR),
        (AttrflowError, HTTPStatus.INTERNAL_SERVER_ERROR),
    ],
)
def test_the_most_specific_class_decides_the_status(
    error_type: type[AttrflowError], status: HTTPStatus
) -> None:
    error = error_type.__new__(error_type)
    assert rule_for(error, ERROR_RULES).status == status
