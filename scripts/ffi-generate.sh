#!/usr/bin/env bash
# Builds the attrflow_ffi library and generates its Kotlin and Swift bindings with the
# workspace's uniffi-bindgen (library mode, so generator and runtime versions match).
#
#   scripts/ffi-generate.sh           Kotlin into bindings/ffi/kotlin/target/generated-sources,
#                                     Swift into the committed bindings/ffi/swift package
#   scripts/ffi-generate.sh --check   the same for Kotlin; fails if the committed Swift
#                                     sources differ from freshly generated ones
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case "${1:-}" in
    "") ;;
    --check) check=true ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

target=${CARGO_TARGET_DIR:-target}
cargo build --locked -p attrflow-ffi -p uniffi-bindgen
library="$target/debug/libattrflow_ffi.so"
[ "$(uname)" = Darwin ] && library="$target/debug/libattrflow_ffi.dylib"
bindgen() { "$target/debug/uniffi-bindgen" generate --no-format --library "$library" "$@"; }

kotlin_out=bindings/ffi/kotlin/target/generated-sources/uniffi
rm -rf "$kotlin_out"
bindgen --language kotlin --out-dir "$kotlin_out"

swift_tmp=$(mktemp -d)
trap 'rm -rf "$swift_tmp"' EXIT
bindgen --language swift --out-dir "$swift_tmp/out"
# The layout a Swift package wants: the Swift sources in their target, the C header and its
# module map in the system-library target they import.
mkdir -p "$swift_tmp/Sources/Attrflow" "$swift_tmp/Sources/AttrflowFFI"
mv "$swift_tmp/out/Attrflow.swift" "$swift_tmp/Sources/Attrflow/Attrflow.swift"
mv "$swift_tmp/out/AttrflowFFI.h" "$swift_tmp/Sources/AttrflowFFI/AttrflowFFI.h"
mv "$swift_tmp/out/AttrflowFFI.modulemap" "$swift_tmp/Sources/AttrflowFFI/module.modulemap"

swift_sources=bindings/ffi/swift/Sources
if $check; then
    if ! diff -r "$swift_tmp/Sources" "$swift_sources" >/dev/null; then
        diff -r "$swift_tmp/Sources" "$swift_sources" | head -40 >&2 || true
        echo "error: $swift_sources is stale; run scripts/ffi-generate.sh and commit it" >&2
        exit 1
    fi
    echo "Swift sources in $swift_sources are up to date"
else
    rm -rf "$swift_sources"
    cp -r "$swift_tmp/Sources" "$swift_sources"
    echo "generated $kotlin_out and $swift_sources"
fi
