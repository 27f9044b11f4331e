#!/usr/bin/env bash
# Interop proof (issue 53): logs of 1, 2, 3, 100, 101, 1,000 and 100,001 records, appended in batches
# by `attrflow import`, the first half before the log is switched on (`attrflow verifiable`
# builds the tree from them), the rest after (the appends keep it), checked by
# golang.org/x/mod/sumdb/tlog and /note; on SQLite, and on PostgreSQL too when
# ATTRFLOW_TEST_POSTGRES_URL names a server. Usage: run.sh ATTRFLOW_BIN
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" keygen interop > "$work/keys"
head -1 "$work/keys" > "$work/key"
verifier=$(sed -n 2p "$work/keys")
lines() { seq "$1" "$2" | awk '{printf "{\"record\":{\"n\":%d,\"text\":\"r%d\"},\"sequence\":%d}\n", $1, $1, $1}'; }
check() { # STORE FLOW N
  local store=$1 flow=$2 n=$3
  local half=$(( n / 2 > 0 ? n / 2 : n ))
  lines 1 "$half" | "$bin" --store "$store" import "$flow" --log events > /dev/null
  "$bin" --store "$store" verifiable "$flow" --log events > /dev/null
  if (( half < n )); then
    lines $(( half + 1 )) "$n" | "$bin" --store "$store" import "$flow" --log events > /dev/null
  fi
  (cd "$here" && go run . "$bin" "$store" "$flow" events "$work/key" "$verifier")
}
for n in 1 2 3 100 101 1000 100001; do
  check "$work/s$n.db" audit "$n"
done
if [[ -n "${ATTRFLOW_TEST_POSTGRES_URL:-}" ]]; then
  for n in 1 2 3 100 101 1000 100001; do
    check "$ATTRFLOW_TEST_POSTGRES_URL" "interop-$$-$RANDOM-$n" "$n"
  done
fi
