#!/usr/bin/env python3
"""The case table for ONNX opsets 18 to 24: ONNX's own backend node tests for every op and
version change of those opsets (model.onnx and test_data_set_0 from onnx's repository at a
release whose newest opset is 24), each checked against onnxruntime 1.30 and kept in
tests/conformance/data/node/, where the conformance harness (shapes) and value_conformance (the
executor's values) read them like Debian's test data.

Where onnxruntime computes other values than ONNX's expected outputs, onnxruntime's are kept (the
reference this project follows) and the manifest says so; where onnxruntime refuses the model, or
cannot be fed its types from Node.js (float8, int4, bfloat16, strings), ONNX's values are kept and
the manifest says that too.

usage: /usr/bin/python3 scripts/opset_cases.py [--onnx-repo DIR] [--tag v1.19.0] [--only PATTERN]
  --onnx-repo: a clone of github.com/onnx/onnx (default: /work/.mirror/onnx+onnx/repo)
Writes tests/conformance/data/node/<test>/ and tests/conformance/data/MANIFEST.tsv.
Needs scripts/setup_precision.sh (onnxruntime-node) and python3-onnx, python3-numpy.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

from ort_run import run_ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "conformance", "data")

# Node tests of the ops new in opsets 18 to 24 and of the ops whose semantics changed there.
PATTERNS = [
    r"attention_", r"rms_normalization_", r"rotary_embedding", r"tensorscatter", r"swish",
    r"group_normalization_", r"col2im", r"center_crop_pad_", r"bitwise_", r"lppool_",
    r"deform_conv", r"affine_grid_", r"mish", r"gelu_",
    r"split_.*(num_outputs|uneven)", r"(constant|edge|reflect|wrap)_pad", r"reduce_",
    r"resize_.*(antialias|axes|not_larger|not_smaller|half_pixel_symmetric)",
    r"averagepool_.*dilations", r"averagepool_2d_ceil_last_window", r"dft", r"gridsample",
    r"constantofshape", r"top_k", r"isinf", r"isnan", r"optional_", r"scatter_elements_with_reduction_m",
    r"scatternd_m", r"quantizelinear", r"dequantizelinear", r"cast_", r"castlike_",
    r"regex_full_match", r"string_concat", r"string_split", r"image_decoder",
]
NODE_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
              9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout


def tests_at(repo, tag):
    names = git(repo, "ls-tree", "--name-only", tag, "onnx/backend/test/data/node/").decode().split()
    out = []
    for path in names:
        name = path.rsplit("/", 1)[-1]
        if name.endswith("_expanded") or "_expanded_" in name:
            continue
        if any(re.search(r"^test_(basic_)?" + p, name) for p in PATTERNS):
            out.append(name)
    return out


def export(repo, tag, name, dest):
    """The test's model.onnx and test_data_set_0 into dest; the file names of its inputs and
    outputs."""
    base = f"onnx/backend/test/data/node/{name}"
    files = git(repo, "ls-tree", "-r", "--name-only", tag, base).decode().split()
    os.makedirs(dest, exist_ok=True)
    for f in files:
        rel = f[len(base) + 1:]
        if not (rel == "model.onnx" or rel.startswith("test_data_set_0/")):
            continue
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as w:
            w.write(git(repo, "show", f"{tag}:{f}"))


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def file_name(name):
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return s or "output"


def close(a, b):
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        # Relative to each element and to the output's largest magnitude: rounding in a sum of
        # large terms (a DFT's) leaves small elements off by more than their own size.
        tol = 1e-2 if a.dtype == np.float16 else 1e-4
        wide = a.astype(np.float64)
        finite = np.abs(wide[np.isfinite(wide)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        return bool(np.allclose(wide, b.astype(np.float64), rtol=tol, atol=tol * scale, equal_nan=True))
    return bool(np.array_equal(a, b))


def check(dest):
    """Runs the case in onnxruntime; replaces expected outputs onnxruntime computes otherwise.
    Returns the manifest's verdict."""
    model = onnx.load(os.path.join(dest, "model.onnx"))
    opsets = ",".join(f"{o.domain or 'ai.onnx'}:{o.version}" for o in model.opset_import)
    data = os.path.join(dest, "test_data_set_0")
    inputs, outputs = {}, []
    graph_inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    for k, name in enumerate(graph_inputs):
        p = os.path.join(data, f"input_{k}.pb")
        if not os.path.exists(p):
            continue  # an optional input the test leaves out
        try:
            t = load(p)
            if t.data_type not in NODE_TYPES:
                return opsets, f"kept ONNX's values: input '{name}' has a type onnxruntime-node is not given here ({t.data_type})"
            inputs[name] = numpy_helper.to_array(t)
        except Exception:  # a sequence or an optional, not a tensor
            return opsets, f"kept ONNX's values: input '{name}' is not a tensor onnxruntime-node is given here"
    for k, o in enumerate(model.graph.output):
        p = os.path.join(data, f"output_{k}.pb")
        if os.path.exists(p):
            outputs.append((k, o.name, p))
    with tempfile.TemporaryDirectory() as tmp:
        got, why = run_ort(os.path.join(dest, "model.onnx"), inputs, tmp)
    if got is None:
        return opsets, f"kept ONNX's values: onnxruntime refuses ({why})"
    replaced = []
    for k, name, p in outputs:
        ort = got.get(file_name(name))
        if ort is None:
            return opsets, f"kept ONNX's values: onnxruntime gave no output '{name}'"
        try:
            t = load(p)
            if t.data_type not in NODE_TYPES:
                continue
            want = numpy_helper.to_array(t)
        except Exception:  # not a tensor
            continue
        if not close(want, ort):
            new = numpy_helper.from_array(ort.astype(want.dtype), t.name)
            with open(p, "wb") as f:
                f.write(new.SerializeToString())
            replaced.append(name)
    if replaced:
        return opsets, "onnxruntime's values (ONNX's expected differ): " + ", ".join(replaced)
    return opsets, "agrees with onnxruntime"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx-repo", default="/work/.mirror/onnx+onnx/repo")
    ap.add_argument("--tag", default="v1.19.0")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    names = tests_at(a.onnx_repo, a.tag)
    if a.only:
        names = [n for n in names if re.search(a.only, n)]
    rows = []
    for name in names:
        dest = os.path.join(OUT, "node", name)
        shutil.rmtree(dest, ignore_errors=True)
        export(a.onnx_repo, a.tag, name, dest)
        opsets, verdict = check(dest)
        rows.append((name, opsets, verdict))
        print(f"{name}\t{opsets}\t{verdict}", flush=True)
    manifest = os.path.join(OUT, "MANIFEST.tsv")
    old = {}
    if a.only and os.path.exists(manifest):
        for line in open(manifest):
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            old[parts[0]] = parts
    for name, opsets, verdict in rows:
        old[name] = [name, opsets, verdict]
    with open(manifest, "w") as f:
        f.write(f"# ONNX {a.tag} node tests of opsets 18-24, checked against onnxruntime 1.30 "
                "(scripts/opset_cases.py)\n# test\topset imports\tverdict\n")
        for name in sorted(old):
            f.write("\t".join(old[name]) + "\n")
    agree = sum(1 for r in old.values() if r[2] == "agrees with onnxruntime")
    print(f"{len(old)} cases: {agree} agree with onnxruntime, {len(old) - agree} noted", file=sys.stderr)


if __name__ == "__main__":
    main()
