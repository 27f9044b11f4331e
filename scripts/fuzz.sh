#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time and prints how many inputs each
# one tried. `scripts/fuzz.sh` gives the whole campaign 60 seconds (what `make test` runs);
# `scripts/fuzz.sh 3600` runs an hour. Installs cargo-fuzz when it is missing. A crash
# stops the campaign with the failing input saved under fuzz/artifacts/.
#
# FUZZ_SANITIZER picks cargo-fuzz's sanitizer: `none` by default (the targets are safe
# Rust; building the bundled SQLite with AddressSanitizer takes many minutes), `address`
# for a long campaign by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

budget=${1:-60}
sanitizer=${FUZZ_SANITIZER:-none}
# cargo-fuzz builds with nightly-only compiler flags; a stable toolchain accepts them so.
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
cargo fetch --locked --manifest-path fuzz/Cargo.toml
cargo fuzz build --sanitizer "$sanitizer"

targets=$(cargo fuzz list)
count=$(wc -w <<<"$targets")
seconds=$(( budget / count > 0 ? budget / count : 1 ))
log=$(mktemp)
trap 'rm -f "$log"' EXIT
total=0
for target in $targets; do
    case "$target" in
        rpc_input | record_fields) max_len=70000 ;;
        *) max_len=1024 ;;
    esac
    mkdir -p "fuzz/corpus/$target"
    if ! cargo fuzz run --sanitizer "$sanitizer" "$target" -- -max_total_time="$seconds" -max_len="$max_len" >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "fuzz target $target failed" >&2
        exit 1
    fi
    runs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || echo 0)
    total=$(( total + runs ))
    printf '%-14s %10d inputs in %d s\n' "$target" "$runs" "$seconds"
done
printf '%-14s %10d inputs\n' "all targets" "$total"
