#!/usr/bin/env python3
"""Sliding windows at the edges, against onnxruntime: 1-D MaxPool, AveragePool (both
count_include_pad), LpPool, dilated MaxPool and Conv over small inputs (length 1-5), windows
1-4, strides 1-3, pads 0-1, both ceil modes, where the window may overhang the input. For each
configuration onnxruntime runs the one-node model (scripts/ort/run_npy.js) and
`shapeflow infer` / `shapeflow run` give the output length (or an error) and the values; the
two must agree on whether it runs, on the shape, and (for the pools shapeflow runs) on values.

usage: /usr/bin/python3 scripts/pool_edge_check.py [--shapeflow build/src/cli/shapeflow]
Exit 1 on any disagreement.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.helper as h

HERE = os.path.dirname(os.path.abspath(__file__))


def model(op, n, k, s, p, c, cip):
    inits, attrs = [], dict(kernel_shape=[k], strides=[s], pads=[p, p])
    inputs = ["x"]
    if op == "Conv":
        inits = [h.make_tensor("w", onnx.TensorProto.FLOAT, [1, 1, k], np.ones(k, dtype=np.float32))]
        inputs.append("w")
    else:
        attrs["ceil_mode"] = c
    if op == "AveragePool":
        attrs["count_include_pad"] = cip
    real = op
    if op == "DilatedMaxPool":
        real, attrs["dilations"] = "MaxPool", [2]
    node = h.make_node(real, inputs, ["y"], **attrs)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 1, n])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default="build/src/cli/shapeflow")
    a = ap.parse_args()
    bad = total = valued = 0
    tmp = tempfile.mkdtemp()
    mpath, xpath = os.path.join(tmp, "m.onnx"), os.path.join(tmp, "x.npy")
    ort_out, sf_out = os.path.join(tmp, "ort"), os.path.join(tmp, "sf")
    os.makedirs(ort_out)
    os.makedirs(sf_out)
    for op in ["MaxPool", "AveragePool", "LpPool", "DilatedMaxPool", "Conv"]:
        for n, k, s, p, c, cip in itertools.product([1, 2, 3, 4, 5], [1, 2, 3, 4], [1, 2, 3], [0, 1],
                                                    [0, 1], [0, 1]):
            if p >= k or (op == "Conv" and c) or (op != "AveragePool" and cip):
                continue
            onnx.save(model(op, n, k, s, p, c, cip), mpath)
            np.save(xpath, (np.arange(n, dtype=np.float32) * 1.5 + 1).reshape(1, 1, n))
            total += 1
            r = subprocess.run(["node", os.path.join(HERE, "ort", "run_npy.js"), mpath, ort_out, f"x={xpath}"],
                               capture_output=True, text=True)
            ort_ok = r.returncode == 0
            j = subprocess.run([a.shapeflow, "infer", mpath, "--json"], capture_output=True, text=True)
            sf_len = None
            if j.returncode == 0:
                sf_len = json.loads(j.stdout)["tensors"]["y"]["shape"][2]
            what = f"{op} n={n} k={k} s={s} p={p} ceil={c} cip={cip}"
            if ort_ok != (sf_len is not None):
                bad += 1
                print(f"{what}: onnxruntime {'runs' if ort_ok else 'fails'}, shapeflow "
                      f"{'gives ' + str(sf_len) if sf_len is not None else 'refuses'}")
                continue
            if not ort_ok:
                continue
            want = np.load(os.path.join(ort_out, "y.npy"))
            if want.shape[2] != sf_len:
                bad += 1
                print(f"{what}: onnxruntime gives length {want.shape[2]}, shapeflow {sf_len}")
                continue
            if op in ("MaxPool", "AveragePool", "DilatedMaxPool", "Conv"):
                rr = subprocess.run([a.shapeflow, "run", mpath, "--input", f"x={xpath}", "--out", sf_out],
                                    capture_output=True, text=True)
                got = np.load(os.path.join(sf_out, "y.npy")) if rr.returncode == 0 else None
                valued += 1
                if got is None or got.shape != want.shape or not np.allclose(got, want):
                    bad += 1
                    print(f"{what}: values differ: onnxruntime {want.ravel()}, shapeflow "
                          f"{None if got is None else got.ravel()}")
    print(f"{total} configurations, {valued} also compared in values: {bad} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
