r"""Serving the app with uvicorn (uvloop, httptools) until SIGINT or SIGTERM.

On a signal, uvicorn stops accepting connections, lets the requests in flight finish (within
the graceful timeout), and then runs the app's shutdown, which closes the store.

uvicorn answers a request it cannot parse before the app sees it; here those answers are
JSON too, ``{"error": "<message>"}``: a request that is not valid HTTP/1.1 (a raw ``\xff``
in the path, say) is a 400, and a request line plus headers over
:data:`MAX_HEAD_BYTES` a 431. uvicorn was chosen over hypercorn by measurement
(BENCHMARKS.md).

After such an answer the connection closes the way RFC 9112 (section 9.6) asks of a server
that stops reading a request part-way: it ends its side of the connection, then reads and
discards what the client still sends until the client ends its side too, for at most
:data:`LINGER_SECONDS` and :data:`LINGER_MAX_BYTES`. Closing at once, with the rest of the
request unread, makes the kernel reset the connection, and a client still sending its
request gets that reset, not the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from attrflow_examples.app import app_state_of, create_app
from attrflow_examples.fast_register import with_fast_routes

T = TypeVar("T")

GRACEFUL_TIMEOUT_SECONDS = 5
"""How long requests in flight may run on after a shutdown signal."""

MAX_HEAD_BYTES = 16 * 1024
"""The largest request line plus headers accepted, in bytes; more is answered with 431."""

LINGER_SECONDS = 5.0
"""How long a connection refused before the app saw its request goes on reading (and
discarding) what the client still sends before it closes."""

LINGER_MAX_BYTES = 1024 * 1024
"""How much such a connection reads and discards at most before it closes."""

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _HeadTooLargeError(Exception):
    """Raised from a parser callback to stop parsing a request head over the limit."""


class JsonErrorsProtocol(HttpToolsProtocol):
    """Uvicorn's httptools protocol, with JSON bodies for what it refuses itself.

    It also refuses a request head over :data:`MAX_HEAD_BYTES` with a 431.
    """

    _head_bytes = 0
    """Bytes of the current request's URL and headers parsed so far."""
    _unparsed_head_bytes = 0
    """Bytes received while the current request's head is incomplete."""
    _reading_head = True
    _head_too_large = False
    _lingering = False
    """Whether the connection was refused and now only discards what the client sends."""
    _lingered_bytes = 0
    """Bytes discarded since the connection was refused."""
    _linger_timer: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        """Parses ``data``, refusing a head that grows past the limit unfinished."""
        if self._lingering:
            self._discard(data)
            return
        if self._reading_head:
            self._unparsed_head_bytes += len(data)
        super().data_received(data)
        # A head that never ends (one endless header, say) is refused as it grows.
        if (
            self._reading_head
            and self._unparsed_head_bytes > MAX_HEAD_BYTES
            and not self._lingering
            and not self.transport.is_closing()
        ):
            self._send_error(431, "request header fields too large")

    def on_url(self, url: bytes) -> None:
        """Counts the URL's bytes towards the head's limit."""
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        """Counts the header's bytes towards the head's limit."""
        self._count_head(len(name) + len(value))
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        """Ends the head: what follows is the body."""
        self._reading_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        """Ends the request: what follows is the next request's head."""
        super().on_message_complete()
        self._reading_head = True
        self._head_bytes = self._unparsed_head_bytes = 0

    def send_400_response(self, msg: str) -> None:
        """Answers a request the parser refused: 431 for a head over the limit, else 400."""
        if self._head_too_large:
            self._send_error(431, "request header fields too large")
        else:
            self._send_error(400, msg)

    def _count_head(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            self._head_too_large = True
            raise _HeadTooLargeError

    def _send_error(self, status: int, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        reason = {400: b"Bad Request", 431: b"Request Header Fields Too Large"}[status]
        head = [b"HTTP/1.1 %d %s\r\n" % (status, reason)]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"content-type: application/json\r\n")
        head.append(b"content-length: %d\r\n" % len(body))
        head.append(b"connection: close\r\n\r\n")
        self.transport.write(b"".join(head) + body)
        self._close_lingering()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stops the linger timer, if any, and lets uvicorn clean up."""
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
        super().connection_lost(exc)

    def _close_lingering(self) -> None:
        """Ends this side of the connection, to close it fully later.

        It closes once the client ends its side (uvicorn's ``eof_received`` lets the
        transport close then), after :data:`LINGER_SECONDS`, or after
        :data:`LINGER_MAX_BYTES` discarded. A connection with an earlier request's
        answer still being written (a refused request pipelined behind it) closes at once
        instead, as uvicorn's own refusals do: that answer may not be written after this
        side has ended.
        """
        answering = self.cycle is not None and not self.cycle.response_complete
        if answering or not self.transport.can_write_eof():
            self.transport.close()
            return
        self._lingering = True
        self.transport.write_eof()
        self._linger_timer = self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def _discard(self, data: bytes) -> None:
        self._lingered_bytes += len(data)
        if self._lingered_bytes > LINGER_MAX_BYTES:
            self.transport.close()


class _Server(uvicorn.Server):
    """Uvicorn's server without its own signal handling.

    :func:`serve` installs handlers that ask it to stop, so the process exits with status 0
    after a clean shutdown (uvicorn's own would raise the signal again).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def uvicorn_config(app: Any, *, access_log: bool = True) -> uvicorn.Config:
    """Uvicorn's settings for ``app``.

    httptools with JSON errors, the app's lifespan, the access log on stdout unless
    ``access_log`` is false; the event loop is the one :func:`run` starts.
    """
    return uvicorn.Config(
        app,
        loop="none",  # the loop is the one run() starts
        http=JsonErrorsProtocol,
        lifespan="on",
        access_log=access_log,
        timeout_graceful_shutdown=GRACEFUL_TIMEOUT_SECONDS,
        server_header=False,
    )


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; raises ``OSError`` if that is impossible."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


async def serve(
    host: str,
    port: int,
    store: str,
    *,
    access_log: bool = True,
    checkpoint_key: str | None = None,
) -> None:
    """Serves the app on ``host:port`` with the store ``store`` until SIGINT or SIGTERM.

    ``checkpoint_key`` (a note signer key text) signs the archive's checkpoints.

    The store is opened before the listener, so that a store that cannot be opened raises
    its ``AttrflowError`` here, plainly, and an address that cannot be listened on raises
    ``OSError``, instead of failing uvicorn's start-up.
    """
    app = create_app(store, checkpoint_key=checkpoint_key)
    app_state = app_state_of(app)
    app_state.open()
    try:
        sock = listen(host, port)
    except OSError:
        app_state.close()
        raise
    server = _Server(uvicorn_config(with_fast_routes(app), access_log=access_log))
    loop = asyncio.get_running_loop()

    def stop() -> None:
        server.should_exit = True

    for signum in _SIGNALS:
        loop.add_signal_handler(signum, stop)
    try:
        await server.serve(sockets=[sock])
    finally:
        for signum in _SIGNALS:
            loop.remove_signal_handler(signum)
        sock.close()
        app_state.close()


def run(main: Coroutine[Any, Any, T]) -> T:
    """Runs ``main`` on a uvloop event loop (asyncio's own where uvloop is not installed)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] installs it
        return asyncio.run(main)
    return uvloop.run(main)
