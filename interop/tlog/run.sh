#!/usr/bin/env bash
# Interop proof (issue 53): logs of 1, 2, 3, 100, 101 and 1,000 records, appended in batches
# by `attrflow import`, the first half before the log is switched on (`attrflow verifiable`
# builds the tree from them), the rest after (the appends keep it), checked by
# golang.org/x/mod/sumdb/tlog and /note. Usage: run.sh ATTRFLOW_BIN
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
  half=$(( n / 2 > 0 ? n / 2 : n ))
  lines() { seq "$1" "$2" | awk '{printf "{\"record\":{\"n\":%d,\"text\":\"r%d\"},\"sequence\":%d}\n", $1, $1, $1}'; }
  lines 1 "$half" | "$bin" --store "$store" import audit --log events > /dev/null
  "$bin" --store "$store" verifiable audit --log events > /dev/null
  if (( half < n )); then
    lines $(( half + 1 )) "$n" | "$bin" --store "$store" import audit --log events > /dev/null
  fi
  (cd "$here" && go run . "$bin" "$store" audit events "$work/key" "$verifier")
done
