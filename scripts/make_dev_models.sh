#!/usr/bin/env bash
# Makes the development corpus (torchvision and hand-written models exported by torch.onnx with
# random weights) in dev_models/ (gitignored), for scripts/precision.py and benchmarks.
# Idempotent: installs Debian's torch/torchvision/onnx only when missing, and the generator skips
# models that already exist. About 1.5 minutes and 1.4 GB the first time.
# usage: scripts/make_dev_models.sh [OUTDIR]     (default: dev_models/ at the repo root)
# The generator is shared/tools/make_dev_models.py beside the repo (DEV_MODELS_GENERATOR overrides).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/dev_models}"
GEN="${DEV_MODELS_GENERATOR:-}"
if [ -z "$GEN" ]; then
  for cand in "$ROOT/../shared/tools/make_dev_models.py" /work/shared/tools/make_dev_models.py; do
    if [ -f "$cand" ]; then GEN="$cand"; break; fi
  done
fi
[ -n "$GEN" ] && [ -f "$GEN" ] || { echo "make_dev_models.sh: generator make_dev_models.py not found" >&2; exit 1; }

if ! /usr/bin/python3 -c 'import torch, torchvision, onnx' 2>/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends python3-torch python3-torchvision python3-onnx >/dev/null
fi

mkdir -p "$OUT"
# The exporter is chatty (TracerWarnings); keep its log, show the per-model verdicts.
/usr/bin/python3 "$GEN" "$OUT" > "$OUT/export.log" 2>&1 || { tail -20 "$OUT/export.log" >&2; exit 1; }
grep -E '^(ok|FAIL) ' "$OUT/export.log" || true
echo "dev models in $OUT:"
ls "$OUT"/*.onnx | xargs -n1 basename | sed 's/\.onnx$//' | tr '\n' ' '
echo
if grep -q '^FAIL ' "$OUT/export.log"; then exit 1; fi
