#!/usr/bin/env python3
"""Audit of the inputs that ONNX calls scalars or single elements (If's condition, Loop's M,
Trilu's k, CumSum's axis, TopK's K, OneHot's depth, Range's bounds, sequence positions, DFT's
length): for each, models whose such input is a constant of rank 0, [1], [1,1] and [2] are run by
onnxruntime and inferred by shapeflow, and the verdicts are compared. shapeflow must never report
an error where onnxruntime runs the model.

usage: scripts/probe_one_element.py [--shapeflow build/src/cli/shapeflow] [--keep DIR]
Prints a table; exit 1 if shapeflow errs where onnxruntime runs.
"""
import argparse, json, os, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name + "_v"))


def shaped(value, shape, dtype):
    return np.full(shape, value, dtype=dtype) if shape else np.array(value, dtype=dtype)


SHAPES = {"rank 0": (), "[1]": (1,), "[1,1]": (1, 1), "[2]": (2,)}
ONNX_TYPES = {np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}
JS_TYPES = {np.int64: "int64", np.bool_: "bool"}


def loop_body():
    f32 = np.float32
    return helper.make_graph(
        [const("one", np.array(1.0, f32)), helper.make_node("Identity", ["cin"], ["cout"]),
         helper.make_node("Add", ["v", "one"], ["vout"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cin", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cout", TensorProto.BOOL, []),
         helper.make_tensor_value_info("vout", TensorProto.FLOAT, [])])


def probes():
    """(input, value of the probed tensor p, its dtype, the other nodes reading p, outputs, opset)."""
    f32 = np.float32
    x = np.arange(12, dtype=f32).reshape(3, 4)
    branch = lambda n, v: helper.make_graph([const(n, np.array([v], f32))], n, [],
                                            [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1])])
    yield ("If cond", True, np.bool_,
           [helper.make_node("If", ["p"], ["y"], then_branch=branch("t", 1.0), else_branch=branch("e", 2.0))])
    yield ("Loop M", 3, np.int64,
           [const("c", np.array(True)), const("v0", np.array(0.0, f32)),
            helper.make_node("Loop", ["p", "c", "v0"], ["y"], body=loop_body())])
    yield ("Loop cond", True, np.bool_,
           [const("m", np.array(3, np.int64)), const("v0", np.array(0.0, f32)),
            helper.make_node("Loop", ["m", "p", "v0"], ["y"], body=loop_body())])
    yield ("Trilu k", 1, np.int64, [const("x", x), helper.make_node("Trilu", ["x", "p"], ["y"])])
    yield ("CumSum axis", 1, np.int64, [const("x", x), helper.make_node("CumSum", ["x", "p"], ["y"])])
    yield ("TopK K", 2, np.int64, [const("x", x), helper.make_node("TopK", ["x", "p"], ["y", "i"])])
    yield ("OneHot depth", 4, np.int64,
           [const("i", np.array([0, 2], np.int64)), const("v", np.array([0.0, 1.0], f32)),
            helper.make_node("OneHot", ["i", "p", "v"], ["y"])])
    yield ("Range start", 0, np.int64,
           [const("l", np.array(5, np.int64)), const("d", np.array(1, np.int64)),
            helper.make_node("Range", ["p", "l", "d"], ["r"]),
            helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)])
    yield ("SequenceAt position", 1, np.int64,
           [const("a", x), const("b", x), helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
            helper.make_node("SequenceAt", ["s", "p"], ["y"])])
    yield ("STFT frame_step", 2, np.int64,
           [const("sig", np.ones((1, 16, 1), f32)), const("win", np.ones(4, f32)),
            helper.make_node("STFT", ["sig", "p", "win"], ["y"])])
    yield ("HannWindow size", 8, np.int64, [helper.make_node("HannWindow", ["p"], ["y"])])
    yield ("MelWeightMatrix bins", 4, np.int64,
           [const("n", np.array(16, np.int64)), const("sr", np.array(8000, np.int64)),
            const("lo", np.array(0.0, f32)), const("hi", np.array(4000.0, f32)),
            helper.make_node("MelWeightMatrix", ["p", "n", "sr", "lo", "hi"], ["y"])])
    yield ("SequenceInsert position", 1, np.int64,
           [const("a", x), const("b", x), helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
            helper.make_node("SequenceInsert", ["s", "a", "p"], ["t"]),
            helper.make_node("SequenceAt", ["t", "zero"], ["y"]), const("zero", np.array(0, np.int64))])
    yield ("DFT dft_length", 8, np.int64,
           [const("x", np.ones((1, 8, 1), f32)), helper.make_node("DFT", ["x", "p"], ["y"])])


def cases():
    """Every probe with p of each shape, as a constant and as a graph input fed at run time."""
    for op, value, dtype, nodes in probes():
        for label, shape in SHAPES.items():
            for how in ("const", "input"):
                inputs, body, feed = [], list(nodes), None
                if how == "const":
                    body.insert(0, const("p", shaped(value, shape, dtype)))
                else:
                    inputs = [helper.make_tensor_value_info("p", ONNX_TYPES[dtype], list(shape))]
                    feed = {"p": {"type": JS_TYPES[dtype], "value": int(value), "dims": list(shape)}}
                g = helper.make_graph(body, "probe", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
                m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
                yield op, label, how, m, feed


def shapeflow_verdict(binary, path):
    r = subprocess.run([binary, "infer", path, "--json"], capture_output=True, text=True)
    if r.returncode == 2:
        return "load error", r.stderr.strip()
    diags = json.loads(r.stdout)["diagnostics"]
    errors = [d["message"] for d in diags if d["severity"] == "error"]
    warnings = [d["message"] for d in diags if d["severity"] == "warning"]
    if errors:
        return "error", errors[0]
    return ("warning", warnings[0]) if warnings else ("ok", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default=os.path.join(HERE, "..", "build", "src", "cli", "shapeflow"))
    ap.add_argument("--keep", help="write the models here")
    args = ap.parse_args()
    out = args.keep or tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    rows, paths = [], []
    for op, label, how, m, feed in cases():
        name = "%s_%s_%s" % (op.replace(" ", "_"), label.replace(" ", "").replace(",", "x").strip("[]"), how)
        p = os.path.join(out, name + ".onnx")
        onnx.save(m, p)
        if feed:
            with open(p + ".feed.json", "w") as f:
                json.dump(feed, f)
        elif os.path.exists(p + ".feed.json"):
            os.remove(p + ".feed.json")
        rows.append((op, label + " " + how, p))
        paths.append(p)
    res = subprocess.run(["node", os.path.join(HERE, "ort", "run_model.js")] + paths, capture_output=True, text=True)
    ort = {}
    for line in res.stdout.splitlines():
        j = json.loads(line)
        ort[j["model"]] = j
    bad = 0
    print("%-20s %-13s %-6s %-8s %s" % ("input", "given as", "ort", "shapeflow", "shapeflow's message"))
    for op, label, p in rows:
        o = ort.get(p, {"ok": False, "error": "not run"})
        v, msg = shapeflow_verdict(args.shapeflow, p)
        flag = ""
        if o["ok"] and v in ("error", "load error"):
            flag, bad = "  <-- FALSE ERROR", bad + 1
        print("%-20s %-13s %-6s %-8s %s%s" % (op, label, "runs" if o["ok"] else "fails", v, msg[:90], flag))
        if not o["ok"] and os.environ.get("PROBE_VERBOSE"):
            print("      ort: " + o.get("error", "")[:160])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
