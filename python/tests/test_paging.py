"""201 registrations page back newest first, one chunk a page, with stable tokens."""

from __future__ import annotations

import pytest
from archive_support import Archive

from attrflow import Client, PageNotFoundError, RPCInvokeOptions
from attrflow.flows.chunked_subscriber import FLOW_ID, ChunkedSubscriberFlow, GetSubscriberPageInput


def test_a_fresh_archive_has_an_empty_current_page(archive: Archive) -> None:
    page = archive.page("current")
    assert page.page_token == "current"
    assert page.subscribers == []
    assert page.next_page_token == ""


def test_an_empty_token_reads_current(archive: Archive) -> None:
    archive.register(1)
    page = archive.page("")
    assert page.page_token == "current"
    assert [s.sequence for s in page.subscribers] == [1]


def test_201_registrations_page_back_newest_first(archive: Archive) -> None:
    for n in range(1, 202):
        subscriber = archive.register(n)
        assert subscriber.sequence == n
        assert subscriber.subscriber_id == f"subscriber-{n:03d}"

    current = archive.page("current")
    assert [s.sequence for s in current.subscribers] == [201]
    assert current.next_page_token == "00000000000000000101"

    middle = archive.page(current.next_page_token)
    assert middle.page_token == "00000000000000000101"
    assert len(middle.subscribers) == 100
    assert middle.subscribers[0].sequence == 200
    assert middle.subscribers[99].sequence == 101
    assert middle.next_page_token == "00000000000000000001"

    oldest = archive.page(middle.next_page_token)
    assert len(oldest.subscribers) == 100
    assert oldest.subscribers[0].sequence == 100
    assert oldest.subscribers[99].sequence == 1
    assert oldest.subscribers[99].delivery_address == "subscriber-001@example.com"
    assert oldest.next_page_token == ""


def test_an_archived_page_reads_the_same_twice(archive: Archive) -> None:
    for n in range(1, 106):
        archive.register(n)
    assert archive.page("00000000000000000001") == archive.page("00000000000000000001")


def test_a_well_formed_token_without_a_chunk_is_not_found(
    archive: Archive, client: Client, flow: ChunkedSubscriberFlow
) -> None:
    for n in range(1, 202):
        archive.register(n)
    token = "00000000000000000301"
    with pytest.raises(PageNotFoundError, match="not found") as raised:
        client.invoke_rpc(
            flow.get_subscriber_page,
            FLOW_ID,
            GetSubscriberPageInput(token),
            options=RPCInvokeOptions(
                load_attribute_map_instances=(flow.subscriber_chunks.load(token),)
            ),
        )
    assert str(raised.value) == 'subscriber page "00000000000000000301" not found'
    assert isinstance(raised.value, LookupError)
