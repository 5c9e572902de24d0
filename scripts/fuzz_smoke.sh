#!/usr/bin/env bash
# Bounded fuzz run (CI): builds the libFuzzer harnesses with clang, ASan and UBSan, seeds the
# corpus from ONNX's node tests, and runs each harness for a fixed number of inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${SF_FUZZ_RUNS:-4000}
B=${1:-build-fuzz}   # a clang ASan+UBSan build tree configured with -DSF_FUZZ=ON (.ci/run reuses its own)
if [ ! -f "$B/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSF_FUZZ=ON -DSF_SANITIZE=ON -DSF_BUILD_BENCH=OFF >/dev/null
fi
ninja -C "$B" fuzz_infer onnx_wire_fuzz
corpus=$(mktemp -d)
i=0
for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
  cp "$m" "$corpus/seed_$i.onnx"; i=$((i + 1))
  [ "$i" -ge 300 ] && break
done
for h in "$B/tests/fuzz/fuzz_infer" "$B/tests/onnx/onnx_wire_fuzz"; do
  "$h" -runs="$RUNS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 "$corpus" 2>&1 | tail -3
done
rm -rf "$corpus"
echo "fuzz smoke: ok"
