#!/usr/bin/env bash
# Every test binary under AddressSanitizer + UndefinedBehaviorSanitizer (clang 14, -O0), with
# every fuzz input ever found replayed: the long form of CI's sanitizer stage, which builds and
# runs only the layers that do arithmetic on sizes and tensors. About 25 minutes on 2 cores.
# usage: scripts/sanitize.sh [BUILD_DIR=build-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-build-asan}"
CC=clang-14 CXX=clang++-14 cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -gline-tables-only" -DCMAKE_C_FLAGS_DEBUG="-O0 -gline-tables-only" \
  -DSF_SANITIZE=ON -DSF_FUZZ=ON -DSF_BUILD_BENCH=OFF >/dev/null
ninja -C "$B"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$B" --output-on-failure -j2 -LE "slow|conformance"
