"""Opening and closing clients: store URLs, durability settings, context managers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from archive_support import Archive

from attrflow import AsyncClient, Client, InvalidInputError, StorageError
from attrflow.flows.chunked_subscriber import (
    FLOW_ID,
    ChunkedSubscriberFlow,
    RegisterSubscriberInput,
)


def test_a_closed_client_raises_storage_error(store_url: str) -> None:
    with Client(store_url) as client:
        archive = Archive(client)
        archive.start()
    assert client.closed
    with pytest.raises(StorageError, match="is closed"):
        client.invoke_rpc(
            archive.flow.register_subscriber, FLOW_ID, RegisterSubscriberInput("a", "b")
        )
    client.close()
    assert client.closed


def test_the_default_store_is_under_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Client() as client:
        Archive(client).start()
        assert client.store == "data/attrflow.db"
    assert (tmp_path / "data" / "attrflow.db").is_file()


@pytest.mark.parametrize(
    "store",
    ["{path}", "sqlite:{path}", "sqlite:{path}?synchronous=normal&busy_timeout_ms=100"],
)
def test_paths_and_sqlite_urls_open_the_same_file(store_path: Path, store: str) -> None:
    with Client(store.format(path=store_path)) as client:
        Archive(client).start()
    with Client(store_path) as client:
        assert Archive(client).register(1).sequence == 1


def test_synchronous_overrides_the_url(store_path: Path) -> None:
    with Client(f"sqlite:{store_path}?synchronous=full", synchronous="normal") as client:
        archive = Archive(client)
        archive.start()
        assert archive.register(1).sequence == 1
    with pytest.raises(
        InvalidInputError, match='synchronous must be "full" or "normal", not "off"'
    ):
        Client(store_path, synchronous="off")


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ("", "must not be empty"),
        ("mysql://host/db", 'unknown scheme "mysql"'),
        ("sqlite:a.db?cache=big", 'unknown parameter "cache"'),
        ("postgresql://db.internal/app?sslmode=allow", 'sslmode="allow" is not one of'),
        (
            "postgresql://db.internal/app?pool_max_size=0",
            "pool_max_size must be a whole number of at least 1",
        ),
    ],
)
def test_bad_store_urls_say_what_is_wrong(store: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        Client(store)


def test_a_file_that_is_not_a_store_is_a_storage_error(tmp_path: Path) -> None:
    not_a_store = tmp_path / "notes.txt"
    not_a_store.write_text("hello, this is not SQLite" * 100)
    with pytest.raises(StorageError, match="not an SQLite database"):
        Client(not_a_store)


def test_the_async_client_closes_with_or_without_await(store_url: str) -> None:
    async def main() -> tuple[bool, bool, bool]:
        async with AsyncClient(store_url) as scoped:
            await scoped.start_flow(ChunkedSubscriberFlow(), FLOW_ID)
        awaited = AsyncClient(store_url)
        await awaited.close()
        plain = AsyncClient(store_url)
        plain.close()
        return scoped.closed, awaited.closed, plain.closed

    assert asyncio.run(main()) == (True, True, True)
