"""Page tokens are checked by the core: malformed ones raise InvalidPageTokenError with
`invalid page token "<t>"`, through the RPC and through the module function alike."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import Client, InvalidInputError, InvalidPageTokenError, RPCInvokeOptions
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    GetSubscriberPageInput,
    archive_chunk_token,
    validate_subscriber_page_token,
)

MALFORMED_TOKENS = [
    "1",
    "archive",
    "000000000000000000101",
    "00000000000000000000",
]
BAD_TOKENS = [*MALFORMED_TOKENS, "00000000000000000002"]
"""Malformed tokens, and one of valid form that names no chunk boundary of the archive."""
GOOD_TOKENS = ["", "current", "00000000000000000001", "00000000000000000101"]


@pytest.mark.parametrize("token", BAD_TOKENS)
def test_a_malformed_token_is_rejected_by_the_rpc(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow, token: str
) -> None:
    with pytest.raises(InvalidPageTokenError) as raised:
        client.invoke_rpc(
            flow.get_subscriber_page,
            FLOW_ID,
            GetSubscriberPageInput(token),
            options=RPCInvokeOptions(
                load_attribute_map_instances=(flow.subscriber_chunks.load(token),)
            ),
        )
    assert str(raised.value) == f'invalid page token "{token}"'
    assert raised.value.message == f'invalid page token "{token}"'
    assert raised.value.token == token
    assert isinstance(raised.value, InvalidInputError)
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize("token", MALFORMED_TOKENS)
def test_a_malformed_token_is_rejected_by_the_validator(token: str) -> None:
    with pytest.raises(InvalidPageTokenError, match=f'^invalid page token "{token}"$'):
        validate_subscriber_page_token(token)


@pytest.mark.parametrize("token", GOOD_TOKENS)
def test_well_formed_tokens_pass_the_validator_and_the_rpc(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow, token: str
) -> None:
    to_use = validate_subscriber_page_token(token)
    assert to_use == (token or "current")
    for n in range(1, 202):
        archive.register(n)
    page = archive.page(token)
    assert page.page_token == (token or "current")
    assert len(page.subscribers) == (1 if token in ("", "current") else 100)


def test_archive_tokens_are_twenty_digit_first_sequences() -> None:
    assert archive_chunk_token(1) == "00000000000000000001"
    assert archive_chunk_token(101) == "00000000000000000101"
    assert archive_chunk_token(2**64 - 1) == "18446744073709551615"
    assert validate_subscriber_page_token(archive_chunk_token(201)) == "00000000000000000201"


@pytest.mark.parametrize("first_sequence", [-1, 0, 2**64])
def test_a_first_sequence_out_of_range_is_invalid_input(first_sequence: int) -> None:
    with pytest.raises(InvalidInputError, match=f"not {first_sequence}$"):
        archive_chunk_token(first_sequence)
