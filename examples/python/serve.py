"""Runs the example HTTP service on an attrflow store until SIGINT or SIGTERM.

Usage::

    python examples/python/serve.py --host 127.0.0.1 --port 8080 --store data/attrflow.db
    python examples/python/serve.py ... --no-access-log   # no line per request on stdout
    python examples/python/serve.py ... --checkpoint-key-file signer.key  # signed checkpoints

The checkpoint key file holds a note signer key (``PRIVATE+KEY+<name>+<hash>+<base64>``,
as ``attrflow keygen`` or Go's ``note.GenerateKey`` writes it); by default it is the file
the ``ATTRFLOW_CHECKPOINT_KEY_FILE`` environment variable names, and without either
checkpoints are off (``GET .../checkpoint`` is a 404).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from attrflow import AttrflowError
from attrflow.verifiable import note_verifier_key

from attrflow_examples.patterns.sequentially_chunked_attribute_map.verifiable_log import (
    CHECKPOINT_KEY_FILE_ENV,
)
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
    parser.add_argument(
        "--checkpoint-key-file",
        default=os.environ.get(CHECKPOINT_KEY_FILE_ENV) or None,
        help="file holding the note signer key that signs the archive's checkpoints "
        f"(default: ${CHECKPOINT_KEY_FILE_ENV}; unset: checkpoints are off)",
    )
    return parser.parse_args(argv)


def read_checkpoint_key(path: str | None) -> str | None:
    """The signer key text in the file ``path`` (``None`` for none), checked by the core.

    An unreadable file or a malformed key ends the process with the reason, exit status 1.
    """
    if path is None:
        return None
    try:
        key = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        sys.exit(f"serve.py: cannot read the checkpoint key file {path!r}: {error}")
    try:
        note_verifier_key(key)
    except AttrflowError as error:
        sys.exit(f"serve.py: the checkpoint key file {path!r} holds no signer key: {error}")
    return key


def main(argv: list[str] | None = None) -> None:
    """Parses the command line and serves until a shutdown signal.

    A store that cannot be opened, or an address that cannot be listened on, ends the
    process with the reason and exit status 1.
    """
    args = parse_args(argv)
    checkpoint_key = read_checkpoint_key(args.checkpoint_key_file)
    try:
        run(
            serve(
                args.host,
                args.port,
                args.store,
                access_log=args.access_log,
                checkpoint_key=checkpoint_key,
            )
        )
    except AttrflowError as error:
        sys.exit(f"serve.py: cannot serve the store {args.store!r}: {error}")
    except OSError as error:  # the address is taken, or not ours to listen on
        sys.exit(f"serve.py: cannot listen on {args.host}:{args.port}: {error}")


if __name__ == "__main__":
    main()
