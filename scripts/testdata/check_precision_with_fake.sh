#!/usr/bin/env bash
# End-to-end check of scripts/precision.py with the fake shapeflow (ORT's own shapes): the scores
# must be 100% concrete-exact with no WRONG, and an injected wrong dim or dtype must make it exit 1.
# Needs dev_models/ and scripts/ort/node_modules (scripts/setup_precision.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-audio_ctc,bert_tiny,unet_small}"
FAKE=scripts/testdata/fake_shapeflow.py
fails=0; passes=0
check() {  # name expected-rc [env...] 
  local name=$1 want=$2; shift 2
  out=$(env "$@" scripts/precision.py --models "$MODELS" --shapeflow "$FAKE" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ]; then passes=$((passes + 1)); echo "ok   $name (exit $rc)";
  else fails=$((fails + 1)); echo "FAIL $name: exit $rc, want $want"; echo "$out"; fi
}
check "fake shapeflow scores clean" 0 X=1
out=$(scripts/precision.py --models "$MODELS" --shapeflow "$FAKE" 2>&1)
if echo "$out" | grep -E '^TOTAL' | grep -q '100.0%.*100.0%.*100.0% +0 \|'; then passes=$((passes + 1)); echo "ok   100% concrete, symbolic and bounds";
else fails=$((fails + 1)); echo "FAIL expected 100% for the fake"; echo "$out"; fi
check "injected wrong dim is caught" 1 FAKE_SHAPEFLOW_WRONG=5
check "injected wrong dtype is caught" 1 FAKE_SHAPEFLOW_DTYPE=7
out=$(scripts/precision.py --models "$MODELS" --shapeflow /nonexistent/shapeflow 2>&1); rc=$?
if [ "$rc" -eq 2 ]; then passes=$((passes + 1)); echo "ok   missing shapeflow exits 2"; else fails=$((fails + 1)); echo "FAIL missing shapeflow: exit $rc"; fi
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
