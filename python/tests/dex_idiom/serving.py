"""Serves the Dex-idiom Quart app with hypercorn on a loopback port, from a thread of its
own, and calls it over HTTP: what the tests drive the controllers through."""

from __future__ import annotations

import asyncio
import html
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

from attrflow import AsyncClient
from dex_idiom.app import ExampleApp
from dex_idiom.http_app import create_http_app


class HttpAnswer:
    """One HTTP answer: its status and body text."""

    def __init__(self, status: int, body: str) -> None:
        self.status = status
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)

    def text(self) -> str:
        """The body with HTML entities decoded (Quart's error pages are HTML)."""
        return html.unescape(self.body)


class Server:
    """The app's base URL, and HTTP calls against it."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def call(self, method: str, path: str, body: object | None = None) -> HttpAnswer:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return HttpAnswer(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            return HttpAnswer(error.code, error.read().decode())


@contextmanager
def serving(store_url: str) -> Iterator[Server]:
    """The app over a store, served until the block ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    descriptor = listener.detach()  # hypercorn owns and closes the socket from here on
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop: dict[str, asyncio.Event] = {}
    failure: list[BaseException] = []

    async def main() -> None:
        stop["event"] = asyncio.Event()
        async with AsyncClient(store_url) as client:
            app = create_http_app(ExampleApp(client))
            config = Config()
            config.bind = [f"fd://{descriptor}"]
            config.accesslog = None
            ready.set()
            await serve(app, config, shutdown_trigger=stop["event"].wait)

    def run() -> None:
        try:
            loop.run_until_complete(main())
        except BaseException as error:  # reported by the test thread
            failure.append(error)
            ready.set()
        finally:
            loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(timeout=60)
    try:
        if failure:
            raise failure[0]
        yield Server(f"http://127.0.0.1:{port}")
    finally:
        if "event" in stop and not loop.is_closed():
            loop.call_soon_threadsafe(stop["event"].set)
        thread.join(timeout=60)
