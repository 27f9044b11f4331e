#!/usr/bin/env bash
# Runs every check and test of the project: Rust formatting, lints and tests; the Python
# package's lints, type checks and tests; the example HTTP service's tests (in-process and
# against the real server process on loopback), on SQLite and on a throwaway PostgreSQL
# server (scripts/postgres.sh). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

section() { printf '\n==> %s\n' "$*"; }

section "Rust: format, lints, the core crate's API docs (no broken or private links)"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p attrflow --no-deps --locked

section "Rust: no import cycles between the files of a crate (and the checker fails on one)"
python3 scripts/check_import_cycles.py --self-test
python3 scripts/check_import_cycles.py

section "Rust: the core crate packages for crates.io (cargo package)"
cargo package -p attrflow --locked --allow-dirty --no-verify

section "PostgreSQL: a throwaway server on loopback, unless ATTRFLOW_TEST_POSTGRES_URL names one"
if [ -z "${ATTRFLOW_TEST_POSTGRES_URL:-}" ]; then
    # shellcheck source=scripts/postgres.sh
    source scripts/postgres.sh
    postgres_start # stopped, and its data removed, when this script exits
fi
export ATTRFLOW_TEST_POSTGRES_REQUIRED=1

section "Rust: tests (unit, integration, doctests)"
cargo test --workspace --locked

section "Verifiable logs: Go's golang.org/x/mod/sumdb checks attrflow's checkpoints and proofs"
cargo build -p attrflow-cli --locked
interop/tlog/run.sh target/debug/attrflow

section "Rust: integration tests again, on PostgreSQL"
ATTRFLOW_TEST_BACKEND=postgres cargo test -p attrflow --tests --locked

section "Rust: PostgreSQL-only tests (listed as ignored in the SQLite pass)"
ATTRFLOW_TEST_BACKEND=postgres cargo test -p attrflow --locked --test postgres_store -- --ignored
ATTRFLOW_TEST_BACKEND=postgres cargo test -p attrflow --locked --lib -- --ignored store::postgres::
ATTRFLOW_TEST_BACKEND=postgres cargo test -p attrflow --locked --features fault-injection \
    --test group_commit -- --include-ignored
ATTRFLOW_TEST_BACKEND=postgres cargo test -p attrflow --locked --test multi_process_appends -- \
    --ignored --exact a_hung_lock_holder_is_cut_off_by_the_server_after_its_idle_timeout
ATTRFLOW_TEST_BACKEND=postgres cargo test -p attrflow --locked --test crash_driver -- \
    --ignored --exact sigkill_near_rollover_loses_nothing_acknowledged_on_postgresql
ATTRFLOW_TEST_BACKEND=postgres cargo test -p attrflow --locked --features fault-injection \
    --test crash_driver -- --exact a_sigkill_between_a_groups_commit_and_its_replies_loses_nothing_acknowledged

section "Rust: a PostgreSQL failover under traffic (a pg_auto_failover formation on loopback)"
(
    # shellcheck source=scripts/pg_auto_failover.sh
    source scripts/pg_auto_failover.sh
    failover_start # stopped, and its data removed, when this subshell exits
    cargo test -p attrflow --locked --test postgres_failover -- \
        --ignored --exact appends_survive_a_primary_failover_exactly_once
)

section "Rust: failure paths (injected commit faults, full disk)"
cargo clippy -p attrflow --all-targets --locked --features fault-injection -- -D warnings
cargo test -p attrflow --locked --features fault-injection --test fault_injection --test disk_full --test group_commit
cargo test -p attrflow --locked --features fault-injection --test crash_driver -- \
    --exact a_sigkill_between_a_groups_commit_and_its_replies_loses_nothing_acknowledged

section "Rust: fuzz campaign (cargo-fuzz, 60 s in all)"
scripts/fuzz.sh 60

section "Python: install attrflow and test dependencies into .venv"
scripts/bootstrap.sh
venv=${VENV:-.venv}

section "Python: ruff, mypy"
"$venv/bin/ruff" check python examples/python scripts
"$venv/bin/ruff" format --check python examples/python scripts
"$venv/bin/mypy" python/attrflow python/tests
"$venv/bin/mypy" examples/python
"$venv/bin/mypy" --strict scripts/check_import_cycles.py

section "Python: pytest (package and HTTP service; the built wheel in a fresh environment)"
wheels=("${DIST_DIR:-dist}"/attrflow-*-abi3-*.whl)
ATTRFLOW_TEST_WHEEL="${wheels[0]}" "$venv/bin/python" -m pytest python/tests examples/python/tests

section "Kotlin, Swift (UniFFI) and Rust examples: bindings, staleness check, mvn install, the Maven consumer"
scripts/ffi-test.sh

section "Benchmarks: lints, types, and the harness at its smallest sizes (make bench --smoke)"
"$venv/bin/python" -m pip install --quiet -r bench/requirements.txt
"$venv/bin/ruff" check bench
"$venv/bin/ruff" format --check bench
"$venv/bin/mypy" --config-file bench/pyproject.toml bench/run.py bench/attrflow_bench bench/tests
cargo build --locked -p attrflow-bench
"$venv/bin/python" -m pytest bench/tests
