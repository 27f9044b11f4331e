#!/usr/bin/env bash
# Creates the project's virtual environment (.venv) and installs attrflow into it from this
# checkout, with the example service's and the tests' dependencies. The package is installed
# from the wheel scripts/dist.sh builds into dist/ (the one `make dist` ships), so it is built
# once. Safe to run again: it rebuilds the wheel only when the Rust or Python sources changed.
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
    find Cargo.toml Cargo.lock core cli bindings/python python/pyproject.toml python/attrflow README.md \
        -type f \( -name '*.rs' -o -name '*.toml' -o -name '*.py' -o -name '*.pyi' -o -name 'Cargo.lock' -o -name 'py.typed' -o -name 'README.md' \) \
        -print0 2>/dev/null | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
)
wheels=("${DIST_DIR:-dist}"/attrflow-*-abi3-*.whl)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sources_hash" ] || [ ! -f "${wheels[0]}" ]; then
    wheel=$(VENV="$venv" scripts/dist.sh --wheel)
    "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheel"
    echo "$sources_hash" > "$stamp"
fi
