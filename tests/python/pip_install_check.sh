#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment (Debian's setuptools, offline: no build
# isolation), reusing the CMake build tree given, then the package imported from there (not from
# the source or build tree): its version, an inference, the `shapeflow` script and `python -m`.
# usage: tests/python/pip_install_check.sh PYTHON SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 src=$2 build=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
SHAPEFLOW_BUILD_DIR="$build" "$tmp/venv/bin/pip" install --no-build-isolation --no-deps --quiet "$src"
cd "$tmp"
version=$(cat "$src/VERSION")
"$tmp/venv/bin/python" - "$src/examples/tiny_cnn.onnx" "$tmp/venv" "$version" <<'PY'
import sys
import shapeflow
model, venv, version = sys.argv[1:]
assert shapeflow.__file__.startswith(venv), f"imported from {shapeflow.__file__}, not the environment"
assert shapeflow.__version__ == version, shapeflow.__version__
t = shapeflow.load(model).infer().tensors["c1"]
assert [str(d) for d in t.shape] == ["N", "8", "(H - 1)//2 + 1", "(W - 1)//2 + 1"], t.shape
print("imported", shapeflow.__version__, "from", shapeflow.__file__)
PY
test "$("$tmp/venv/bin/shapeflow" --version)" = "shapeflow $version"
test "$("$tmp/venv/bin/python" -m shapeflow --version)" = "shapeflow $version"
echo "pip install: ok"
