#!/usr/bin/env bash
# Builds what a user installs from, into dist/ (DIST_DIR):
# - the Python wheel: one abi3 wheel for every CPython >= 3.9, release build, checked by
#   maturin's auditwheel check against the manylinux policy (MANYLINUX): the default,
#   manylinux_2_34, is what a build on a glibc 2.34+ distribution (Debian 12, Ubuntu 22.04)
#   can meet; the check fails the build if the module links anything else from this machine.
#   An older baseline needs an older build image (or `maturin build --zig`);
# - the Python sdist (`--wheel` skips it; scripts/bootstrap.sh builds only the wheel).
# Prints the wheel's path last. Uses maturin from .venv (scripts/bootstrap.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${VENV:-.venv}
dist=${DIST_DIR:-dist}
manylinux=${MANYLINUX:-manylinux_2_34}
sdist=1
if [ "${1:-}" = "--wheel" ]; then
    sdist=0
fi
if [ ! -x "$venv/bin/maturin" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet -r python/requirements-dev.txt
fi
mkdir -p "$dist"
rm -f "$dist"/attrflow-*.whl
out=$(cd "$dist" && pwd)
maturin=$(cd "$venv/bin" && pwd)/maturin
(cd python && "$maturin" build --release --locked \
    --compatibility "$manylinux" --auditwheel check --out "$out" >&2)
if [ "$sdist" = 1 ]; then
    rm -f "$dist"/attrflow-*.tar.gz
    (cd python && "$maturin" sdist --out "$out" >&2)
fi
wheels=("$dist"/attrflow-*-abi3-*.whl)
if [ "${#wheels[@]}" != 1 ] || [ ! -f "${wheels[0]}" ]; then
    echo "dist: expected one abi3 wheel in $dist, found: ${wheels[*]}" >&2
    exit 1
fi
echo "${wheels[0]}"
