#!/usr/bin/env bash
# Builds shapeflow (RelWithDebInfo, with tests; SF_DEBUG_INFO=OFF: the same code without debug
# information, faster to compile) and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSF_DEBUG_INFO="${SF_DEBUG_INFO:-ON}" >/dev/null
ninja -C build
ctest --test-dir build --output-on-failure -j2
