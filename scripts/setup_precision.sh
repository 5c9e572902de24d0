#!/usr/bin/env bash
# Everything scripts/precision.py needs besides shapeflow itself: the dev corpus (dev_models/),
# onnxruntime-node for the ground truth (scripts/ort/node_modules, from the npm registry; the CPU
# runtime ships inside the package, so install scripts are skipped), and python3-onnx. Idempotent.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
"$HERE/make_dev_models.sh"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ ! -d "$HERE/ort/node_modules/onnxruntime-node" ]; then
  (cd "$HERE/ort" && npm ci --ignore-scripts --no-audit --no-fund)
fi
node -e "require('$HERE/ort/node_modules/onnxruntime-node')" && echo "onnxruntime-node ok"
