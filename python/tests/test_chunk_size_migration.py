"""Chunk-size migration from Python: an archive moved from 100 to 50 to 125 subscribers per
chunk keeps every token valid and naming the same page, walks across the changes, checks
tokens against every layout, and refuses sizes out of range."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import Client, InvalidInputError, InvalidPageTokenError, PageNotFoundError
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    MAX_CHUNK_SIZE,
    SUBSCRIBER_CHUNK_SIZE,
    ChangeChunkSizeInput,
    ChunkLayout,
    ChunkSizeChange,
    archive_chunk_token,
    validate_page_token_form,
)

GOLDEN_PAGES = [
    ("current", 801, 801),
    ("00000000000000000676", 800, 676),
    ("00000000000000000551", 675, 551),
    ("00000000000000000426", 550, 426),
    ("00000000000000000301", 425, 301),
    ("00000000000000000251", 300, 251),
    ("00000000000000000201", 250, 201),
    ("00000000000000000101", 200, 101),
    ("00000000000000000001", 100, 1),
]
"""The migrated archive's pages, newest first: (token, newest, oldest sequence)."""


def change(archive: Archive, chunk_size: int) -> ChunkSizeChange:
    return archive.client.invoke_rpc(
        archive.flow.change_chunk_size, FLOW_ID, ChangeChunkSizeInput(chunk_size)
    )


def register_all(archive: Archive, numbers: range) -> None:
    for n in numbers:
        assert archive.register(n).sequence == n


@pytest.fixture
def migrated(archive: Archive) -> Archive:
    register_all(archive, range(1, 151))
    assert change(archive, 50) == ChunkSizeChange(
        50, 201, [ChunkLayout(1, 100), ChunkLayout(201, 50)]
    )
    register_all(archive, range(151, 301))
    assert change(archive, 125).from_sequence == 301
    register_all(archive, range(301, 802))
    return archive


def test_the_default_chunk_size_is_the_seed_s() -> None:
    assert SUBSCRIBER_CHUNK_SIZE == 100


def test_old_tokens_keep_their_pages_and_the_walk_crosses_every_layout(migrated: Archive) -> None:
    token = "current"
    for golden_token, newest, oldest in GOLDEN_PAGES:
        assert token == golden_token
        page = migrated.page(token)
        assert page.page_token == golden_token
        assert [s.sequence for s in page.subscribers] == list(range(newest, oldest - 1, -1))
        token = page.next_page_token
    assert token == ""


def test_tokens_are_checked_against_every_layout(migrated: Archive) -> None:
    assert validate_page_token_form("") == "current"
    for sequence in (1, 101, 201, 251, 301, 551):
        token = archive_chunk_token(sequence)
        assert validate_page_token_form(token) == token
        assert migrated.page(archive_chunk_token(sequence)).subscribers
    for sequence in (801, 1051):
        with pytest.raises(PageNotFoundError):
            migrated.page(archive_chunk_token(sequence))
    for sequence in (151, 226, 276, 401, 2):
        token = archive_chunk_token(sequence)
        validate_page_token_form(token)
        with pytest.raises(InvalidPageTokenError, match=f'^invalid page token "{token}"$'):
            migrated.page(token)


def test_the_history_survives_reopening_the_store(migrated: Archive, store_url: str) -> None:
    migrated.client.close()
    with Client(store_url) as client:
        page = Archive(client).page("00000000000000000301")
    assert len(page.subscribers) == 125
    assert page.next_page_token == "00000000000000000251"


@pytest.mark.parametrize("bad", [0, MAX_CHUNK_SIZE + 1])
def test_sizes_out_of_range_are_refused(archive: Archive, bad: int) -> None:
    with pytest.raises(
        InvalidInputError, match=f"^chunk size must be between 1 and {MAX_CHUNK_SIZE}, got {bad}$"
    ):
        change(archive, bad)


@pytest.mark.parametrize("bad", ["0000000000000000000x", "00000000000000000000", "1", "a/b"])
def test_the_form_check_refuses_malformed_tokens(bad: str) -> None:
    with pytest.raises(InvalidPageTokenError):
        validate_page_token_form(bad)
