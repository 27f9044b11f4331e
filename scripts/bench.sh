#!/usr/bin/env bash
# Runs every benchmark and writes BENCHMARKS.md (and BENCHMARKS-append-growth.png): installs
# redis-server, redis-benchmark and wrk from Debian's packages, attrflow and the driver's
# Python packages into .venv, builds the benchmark binary with --release, then runs
# bench/run.py, which starts and stops redis-server and the HTTP service itself. Options are passed on to bench/run.py
# (--smoke runs every part at the smallest sizes).
set -euo pipefail
cd "$(dirname "$0")/.."

section() { printf '\n==> %s\n' "$*"; }

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v wrk >/dev/null || missing+=(wrk)
if [ ${#missing[@]} -gt 0 ]; then
    section "Debian packages: ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update
    $sudo apt-get install -y -o DPkg::Lock::Timeout=600 "${missing[@]}"
fi

section "Python: attrflow (maturin release build) and the driver's packages into .venv"
scripts/bootstrap.sh
venv=${VENV:-.venv}
"$venv/bin/python" -m pip install --quiet -r bench/requirements.txt

section "Rust: the benchmark binary (--release)"
cargo build --release --locked -p attrflow-bench

section "Benchmarks"
data_dir=${BENCH_DATA_DIR:-target/bench-data}
"$venv/bin/python" bench/run.py --bench-bin target/release/attrflow-bench \
    --data-dir "$data_dir" --out BENCHMARKS.md "$@"
