"""The ``attrflow`` command (installed by the wheel as a console script): the Rust tool of the
workspace's ``cli`` crate, run inside the native module. ``attrflow --help`` lists its commands.
"""

from __future__ import annotations

import os
import sys

from attrflow import _native


def main(argv: list[str] | None = None) -> int:
    """Runs ``attrflow`` with ``argv`` (default: this process's arguments); returns its exit
    code."""
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.flush()
    sys.stderr.flush()
    # As the bytes the system gave: an argument that is not UTF-8 (Python holds it with
    # surrogate escapes) reaches the tool, which refuses it in one line, not as a traceback.
    return _native.cli_main([os.fsencode(arg) for arg in ["attrflow", *args]])


if __name__ == "__main__":
    sys.exit(main())
