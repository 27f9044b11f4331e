#!/usr/bin/env bash
# Builds the Kotlin artifact io.attrflow:attrflow from a release build of attrflow_ffi and
# installs it into the local Maven repository (MAVEN_REPO_LOCAL, default ~/.m2/repository):
# a JAR with the generated bindings and this platform's native library under JNA's resource
# path (JNA_PLATFORM, default linux-x86-64). Tests run in make test (scripts/ffi-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

target=${CARGO_TARGET_DIR:-target}
platform=${JNA_PLATFORM:-linux-x86-64}
scripts/ffi-generate.sh --check # the bindings (from the debug library; same interface)
cargo build --locked --release -p attrflow-ffi
(
    cd bindings/ffi/kotlin
    mvn -B -q -Dstyle.color=never -Dkotlin.compiler.daemon=false \
        -Dmaven.repo.local="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}" \
        -Dattrflow.native.dir="$(cd "../../../$target/release" && pwd)" \
        -Dattrflow.jna.platform="$platform" \
        -DskipTests install
)
echo "bindings/ffi/kotlin/target/attrflow-0.1.0.jar (io.attrflow:attrflow:0.1.0, $platform)"
