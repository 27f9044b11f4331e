#!/usr/bin/env bash
# Creates the project's virtual environment (.venv) and installs attrflow into it from this
# checkout, with the example service's and the tests' dependencies. Safe to run again: it
# rebuilds the native module only when the Rust or Python sources changed.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=${VENV:-.venv}

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -r examples/python/requirements.txt -r python/requirements-dev.txt

stamp="$venv/.attrflow-build-stamp"
sources_hash=$(
    find Cargo.toml Cargo.lock core bindings/python python/pyproject.toml python/attrflow \
        -type f \( -name '*.rs' -o -name '*.toml' -o -name '*.py' -o -name '*.pyi' -o -name 'Cargo.lock' -o -name 'py.typed' \) \
        -print0 2>/dev/null | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sources_hash" ]; then
    "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps ./python
    echo "$sources_hash" > "$stamp"
fi
