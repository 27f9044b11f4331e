"""Serving the app with hypercorn until SIGINT or SIGTERM, then shutting down cleanly.

On a signal, hypercorn stops accepting connections, lets the requests in flight finish
(within its graceful timeout), and then runs the app's shutdown, which closes the store.
"""

from __future__ import annotations

import asyncio
import signal

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config

from attrflow_examples.app import app_state_of, create_app

GRACEFUL_TIMEOUT_SECONDS = 5.0
"""How long requests in flight may run on after a shutdown signal."""


def hypercorn_config(host: str, port: int) -> Config:
    """Hypercorn's settings for one plain-HTTP listener (access log: stdout; errors: stderr)."""
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = "-"
    config.errorlog = "-"
    config.graceful_timeout = GRACEFUL_TIMEOUT_SECONDS
    return config


async def serve(host: str, port: int, store: str) -> None:
    """Serves the app on ``host:port`` with the store ``store`` until SIGINT or SIGTERM.

    The store is opened before the listener, so that a store that cannot be opened raises
    its ``AttrflowError`` here, plainly, instead of failing hypercorn's start-up.
    """
    app = create_app(store)
    app_state = app_state_of(app)
    app_state.open()
    shutdown = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, shutdown.set)
    try:
        await hypercorn_serve(app, hypercorn_config(host, port), shutdown_trigger=shutdown.wait)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        app_state.close()
