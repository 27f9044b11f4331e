#!/usr/bin/env bash
# Runs every check and test of the project: Rust formatting, lints and tests; the Python
# package's lints, type checks and tests; the example HTTP service's tests (in-process and
# against the real server process on loopback). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

section() { printf '\n==> %s\n' "$*"; }

section "Rust: format, lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

section "Rust: tests (unit, integration, doctests)"
cargo test --workspace --locked

section "Rust: failure paths (injected commit faults, full disk)"
cargo clippy -p attrflow --all-targets --locked --features fault-injection -- -D warnings
cargo test -p attrflow --locked --features fault-injection --test fault_injection --test disk_full

section "Rust: fuzz campaign (cargo-fuzz, 60 s in all)"
scripts/fuzz.sh 60

section "Python: install attrflow and test dependencies into .venv"
scripts/bootstrap.sh
venv=${VENV:-.venv}

section "Python: ruff, mypy"
"$venv/bin/ruff" check python examples/python
"$venv/bin/ruff" format --check python examples/python
"$venv/bin/mypy" python/attrflow python/tests
"$venv/bin/mypy" examples/python

section "Python: pytest (package and HTTP service)"
"$venv/bin/python" -m pytest python/tests examples/python/tests
