#!/usr/bin/env bash
# Installs what shapeflow needs to build and test on Debian (run as root; sudo otherwise).
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  g++ clang-14 libclang-rt-14-dev cmake ninja-build ccache \
  libprotobuf-dev protobuf-compiler libcli11-dev nlohmann-json3-dev libfmt-dev libabsl-dev \
  libgtest-dev libgmock-dev libbenchmark-dev libtcmalloc-minimal4 libgoogle-perftools-dev \
  libonnx-dev libonnx-testdata python3-onnx python3-numpy time \
  pybind11-dev python3-dev python3-pytest python3-jsonschema python3-venv python3-pip python3-setuptools mypy \
  libopenblas-dev libdnnl-dev >/dev/null
