#!/usr/bin/env bash
# Interop proof (issue 53): logs of 1, 2, 3, 100, 101 and 1,000 records, appended in batches
# by `attrflow import`, checked by golang.org/x/mod/sumdb/tlog and /note. Usage: run.sh ATTRFLOW_BIN
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" keygen interop > "$work/keys"
head -1 "$work/keys" > "$work/key"
verifier=$(sed -n 2p "$work/keys")
for n in 1 2 3 100 101 1000; do
  store="$work/s$n.db"
  seq 1 "$n" | awk '{printf "{\"record\":{\"n\":%d,\"text\":\"r%d\"},\"sequence\":%d}\n", $1, $1, $1}' \
    | "$bin" --store "$store" import audit --log events > /dev/null
  (cd "$here" && go run . "$bin" "$store" audit events "$work/key" "$verifier")
done
