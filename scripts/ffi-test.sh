#!/usr/bin/env bash
# Tests attrflow from Kotlin, Swift's generated sources and Rust used directly:
# - builds the attrflow_ffi library and generates the Kotlin bindings; fails if the committed
#   Swift sources are stale (no Swift compiler is assumed: they are checked, not compiled);
# - runs the Rust examples (examples/rust) on fresh store files;
# - writes a store with the Python package (.venv, from scripts/bootstrap.sh) and runs the
#   Kotlin JUnit tests on the JVM (Maven, JNA) against the fresh library and that store, then
#   installs the JAR (io.attrflow:attrflow, the library inside) into the local repository;
# - builds examples/kotlin-consumer, which depends only on those coordinates, and runs the
#   README's Kotlin example from it.
# Maven downloads into MAVEN_REPO_LOCAL (default ~/.m2/repository), so a fresh machine works.
# Kotlin compiles inside Maven's own process (no Kotlin daemon), so the run leaves no
# compiler process behind; the tests' JVM gets a temporary folder of its own, which must hold
# none of their store files once they end.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${VENV:-.venv}
if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
    echo "--- installing Java and Maven (apt)"
    apt-get update -o DPkg::Lock::Timeout=600
    apt-get install -y -o DPkg::Lock::Timeout=600 default-jdk-headless maven
fi
target=${CARGO_TARGET_DIR:-target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "--- bindings: build the library, generate Kotlin, check Swift"
scripts/ffi-generate.sh --check

echo "--- Rust examples"
cargo run --locked -q -p attrflow-rust-examples --example subscriber_archive -- "$work/archive.db"
cargo run --locked -q -p attrflow-rust-examples --example app_log -- "$work/app.db"

echo "--- Kotlin: a store written from Python, then mvn install (tests, the JAR)"
"$venv/bin/ruff" check bindings/ffi/kotlin/src/test/python
"$venv/bin/ruff" format --check bindings/ffi/kotlin/src/test/python
MYPYPATH=python/tests "$venv/bin/mypy" --strict bindings/ffi/kotlin/src/test/python
"$venv/bin/python" bindings/ffi/kotlin/src/test/python/write_store.py \
    "$work/python.db" "$work/python-pages.tsv"
rm -rf bindings/ffi/kotlin/target/surefire-reports examples/kotlin-consumer/target
mkdir "$work/jvm-tmp"
(
    cd bindings/ffi/kotlin
    mvn -B -q -Dstyle.color=never -Dkotlin.compiler.daemon=false \
        -Dmaven.repo.local="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}" \
        -Dattrflow.library.path="$(cd "../../../$target/debug" && pwd)" \
        -Dattrflow.python.store="$work/python.db" \
        -Dattrflow.python.pages="$work/python-pages.tsv" \
        -Dattrflow.python="$(cd "../../../$venv/bin" && pwd)/python" \
        -DargLine="-Djava.io.tmpdir=$work/jvm-tmp" \
        install
)
left=$(find "$work/jvm-tmp" -mindepth 1 -maxdepth 1 -name 'attrflow-*')
if [[ -n "$left" ]]; then
    echo "the Kotlin tests left their scratch folders behind:" >&2
    echo "$left" >&2
    exit 1
fi
"$venv/bin/python" -m zipfile -l bindings/ffi/kotlin/target/attrflow-0.1.0.jar | grep '^linux-x86-64/libattrflow_ffi.so ' >/dev/null

echo "--- Kotlin: the README example from the coordinates io.attrflow:attrflow"
(
    cd examples/kotlin-consumer
    mvn -B -q -Dstyle.color=never -Dkotlin.compiler.daemon=false \
        -Dmaven.repo.local="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}" \
        test
)
# Maven is quiet on success; say what ran, from Surefire's reports.
"$venv/bin/python" - bindings/ffi/kotlin/target/surefire-reports \
    examples/kotlin-consumer/target/surefire-reports <<'PY'
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

reports = [p for folder in sys.argv[1:] for p in sorted(Path(folder).glob("TEST-*.xml"))]
suites = [ET.parse(p).getroot() for p in reports]
total = sum(int(s.get("tests", 0)) for s in suites)
failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
print(f"Kotlin: {total - failed - skipped} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or total == 0 else 0)
PY
