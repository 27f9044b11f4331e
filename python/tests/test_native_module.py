"""The native module exposes the core's constants, so Python never repeats their values."""

from __future__ import annotations

from pathlib import Path

from attrflow import __version__, _native
from attrflow.flows import chunked_subscriber


def test_chunked_subscriber_constants_come_from_the_core() -> None:
    assert (
        chunked_subscriber.FLOW_ID
        == _native.CHUNKED_SUBSCRIBER_FLOW_ID
        == "chunked-subscriber-archive"
    )
    assert chunked_subscriber.FLOW_TYPE == "ChunkedSubscriberFlow"
    assert chunked_subscriber.CURRENT_CHUNK_INSTANCE == "current"
    assert chunked_subscriber.SUBSCRIBER_CHUNK_SIZE == 100
    assert chunked_subscriber.ARCHIVE_STATE_ATTRIBUTE == "subscriber_archive_state"
    assert chunked_subscriber.SUBSCRIBER_CHUNKS_MAP == "subscriber_chunks"
    assert chunked_subscriber.REGISTER_SUBSCRIBER == "RegisterSubscriber"
    assert chunked_subscriber.GET_SUBSCRIBER_PAGE == "GetSubscriberPage"


def test_the_physical_name_of_an_instance() -> None:
    assert (
        _native.instance_physical_name("subscriber_chunks", "current")
        == "subscriber_chunks/current"
    )


def test_the_version_is_the_crate_version() -> None:
    assert __version__ == _native.__version__
    assert __version__.count(".") == 2


def test_the_runtime_reports_its_store(store_path: Path) -> None:
    runtime = _native.Runtime(str(store_path))
    assert runtime.location == str(store_path)
    assert not runtime.closed
    assert "open" in repr(runtime)
    runtime.close()
    assert runtime.closed
