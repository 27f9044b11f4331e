"""Runs the example HTTP service on an attrflow store until SIGINT or SIGTERM.

Usage::

    python examples/python/serve.py --host 127.0.0.1 --port 8080 --store data/attrflow.db
    python examples/python/serve.py ... --no-access-log   # no line per request on stdout
"""

from __future__ import annotations

import argparse
import sys

from attrflow import AttrflowError

from attrflow_examples.server import run, serve

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_STORE = "data/attrflow.db"
DESCRIPTION = "Run the example HTTP service on an attrflow store until SIGINT or SIGTERM."


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: where to listen and which store to serve."""
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on")
    parser.add_argument(
        "--store",
        default=DEFAULT_STORE,
        help="SQLite file path, sqlite: or postgresql:// URL of the store (default: %(default)s)",
    )
    parser.add_argument(
        "--no-access-log",
        dest="access_log",
        action="store_false",
        help="do not log each request on stdout",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Parses the command line and serves until a shutdown signal.

    A store that cannot be opened, or an address that cannot be listened on, ends the
    process with the reason and exit status 1.
    """
    args = parse_args(argv)
    try:
        run(serve(args.host, args.port, args.store, access_log=args.access_log))
    except AttrflowError as error:
        sys.exit(f"serve.py: cannot serve the store {args.store!r}: {error}")
    except OSError as error:  # the address is taken, or not ours to listen on
        sys.exit(f"serve.py: cannot listen on {args.host}:{args.port}: {error}")


if __name__ == "__main__":
    main()
