#!/usr/bin/env bash
# Runs the HTTP subscriber-archive service on the embedded store, installing attrflow first.
# Options are passed on to examples/python/serve.py (--host, --port, --store).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec "${VENV:-.venv}/bin/python" examples/python/serve.py "$@"
