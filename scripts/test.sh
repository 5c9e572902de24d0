#!/usr/bin/env bash
# Builds shapeflow (RelWithDebInfo, with tests; SF_BUILD_TYPE=Release builds without debug
# information, faster to compile) and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${SF_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
ninja -C build
ctest --test-dir build --output-on-failure -j2
