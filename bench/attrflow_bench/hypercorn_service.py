"""The example app as the service serves it (the page route in front of Quart), but under
hypercorn on asyncio, the server it replaced: the figure that chose the server.
``python -m attrflow_bench.hypercorn_service HOST PORT STORE`` serves until SIGTERM (no
access log, like the uvicorn figures it is compared with)."""

from __future__ import annotations

import asyncio
import signal
import sys

from attrflow_examples.app import app_state_of, create_app
from attrflow_examples.fast_register import with_fast_routes
from hypercorn.asyncio import serve
from hypercorn.config import Config


async def main(host: str, port: int, store: str) -> None:
    """Serves the example app on ``host:port`` until SIGINT or SIGTERM."""
    app = create_app(store)
    app_state = app_state_of(app)
    app_state.open()
    config = Config()
    config.bind = [f"{host}:{port}"]
    config.errorlog = "-"
    shutdown = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, shutdown.set)
    try:
        await serve(with_fast_routes(app), config, shutdown_trigger=shutdown.wait)  # type: ignore[arg-type]
    finally:
        app_state.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
