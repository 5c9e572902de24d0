#!/usr/bin/env python3
"""`shapeflow simplify` checked against onnxruntime on every model of a corpus.

For each model: simplify it, then
  - onnx's checker accepts the simplified model;
  - at two input sizes each (scripts/precision_sizes*.json), onnxruntime runs both models and every
    tensor present in both (every node output, exposed as an output, not only the model's
    outputs) is equal: exactly, or within 1e-5 relative where the report says numerics changed;
  - `shapeflow check` passes on the simplified model at those sizes;
  - `shapeflow infer` gives the same type and shape for every tensor that survives;
  - every input dim that was symbolic still is.
And the node counts side by side: the original, onnxruntime's basic-level optimised model
(scripts/ort/optimize.js), `shapeflow simplify`, and the nodes left computing shapes.

usage: scripts/simplify_check.py [--shapeflow PATH] [--models-dir DIR] [--sizes FILE] [--models a,b]
                                 [--json OUT] [--max-failures N]
Needs scripts/setup_precision.sh (the corpus, onnxruntime-node). Exit 1 on any failure."""
import argparse, glob, json, os, shutil, subprocess, sys, tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from eval_check import inputs_of  # noqa: E402
from ort_run import run_ort  # noqa: E402


def expose_all(path, out):
    subprocess.run([sys.executable, os.path.join(HERE, "expose_all_outputs.py"), path, out], check=True,
                   capture_output=True)


def node_count(path):
    return len(onnx.load(path, load_external_data=False).graph.node)


def ort_basic_nodes(path, tmp):
    out = os.path.join(tmp, "ort_basic.onnx")
    r = subprocess.run(["node", os.path.join(HERE, "ort", "optimize.js"), path, out, "basic"], capture_output=True,
                       text=True)
    return node_count(out) if r.returncode == 0 and os.path.exists(out) else None


def facts(shapeflow, path):
    r = subprocess.run([shapeflow, "infer", path, "--json", "--no-names"], capture_output=True, text=True)
    return json.loads(r.stdout)["tensors"] if r.stdout else {}


def symbolic_inputs(path):
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return {(i.name, k) for i in m.graph.input if i.name not in inits
            for k, d in enumerate(i.type.tensor_type.shape.dim) if not d.HasField("dim_value")}


def compare_runs(original, simplified, feeds, tmp, tolerance):
    """Runs both models with every tensor exposed; the names both have, compared."""
    a_path, b_path = os.path.join(tmp, "a.onnx"), os.path.join(tmp, "b.onnx")
    expose_all(original, a_path)
    expose_all(simplified, b_path)
    a, why_a = run_ort(a_path, feeds, tmp)
    if a is None:
        return None, f"onnxruntime refused the original: {why_a}"
    b, why_b = run_ort(b_path, feeds, tmp)
    if b is None:
        return None, f"onnxruntime refused the simplified model: {why_b}"
    common = sorted(set(a) & set(b))
    for name in common:
        x, y = a[name], b[name]
        if x.shape != y.shape or x.dtype != y.dtype:
            return None, f"{name}: {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
        if tolerance == 0:
            same = np.array_equal(x, y, equal_nan=True) if x.dtype.kind in "fc" else np.array_equal(x, y)
        else:
            same = np.allclose(x, y, rtol=tolerance, atol=tolerance, equal_nan=True)
        if not same:
            worst = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) if x.size else 0.0
            return None, f"{name}: values differ (max |diff| {worst:.3g})"
    return len(common), None


def check_model(path):
    m = onnx.load(path, load_external_data=False)
    try:
        onnx.checker.check_model(m)
        return None
    except onnx.checker.ValidationError as e:
        msg = str(e).splitlines()[0]
        # Opsets newer than this onnx knows are not its checker's to judge.
        if ("is not a registered function/op" in msg or "higher than the checker" in msg
                or "opset" in msg.lower() and "higher" in msg.lower()):
            return None
        return msg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default=os.path.join(ROOT, "build/src/cli/shapeflow"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "dev_models"))
    ap.add_argument("--sizes", default=os.path.join(HERE, "precision_sizes.json"))
    ap.add_argument("--models", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    sizes = json.load(open(a.sizes))
    models = [m for m in sorted(glob.glob(os.path.join(a.models_dir, "*.onnx")))
              if not a.models or os.path.basename(m)[:-5] in a.models.split(",")]
    if not models:
        print(f"no models in {a.models_dir}")
        return 1
    rows, failures = [], []
    print(f"{'model':<22} {'nodes':>6} {'ort basic':>9} {'simplify':>9} {'shape nodes':>12} "
          f"{'tensors equal':>14} {'facts':>6}")
    for path in models:
        name = os.path.basename(path)[:-5]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "simplified.onnx")
            r = subprocess.run([a.shapeflow, "simplify", path, "-o", out, "--json"], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{name}: simplify failed: {r.stderr.strip()[-300:]}")
                continue
            report = json.loads(r.stdout)
            problems = []
            if (why := check_model(out)):
                problems.append(f"checker: {why}")
            if symbolic_inputs(out) != symbolic_inputs(path):
                problems.append("an input dim that was symbolic is not any more")
            tolerance = 1e-5 if report.get("numerics_changed") else 0
            compared = []
            for k, binding in enumerate((sizes.get(name) or [{}])[:2]):
                feeds = inputs_of(path, binding, np.random.default_rng(k))
                n, why = compare_runs(path, out, feeds, tmp, tolerance)
                if why:
                    problems.append(f"at {binding}: {why}")
                else:
                    compared.append(n)
                at = ",".join(f"{s}={v}" for s, v in binding.items())
                chk = subprocess.run([a.shapeflow, "check", out] + (["--at", at] if at else []), capture_output=True,
                                     text=True)
                if chk.returncode != 0:
                    problems.append(f"check at {binding}: {chk.stdout.strip().splitlines()[-1:]}")
            # The same type and the same dims (numbers, expressions); a range may be wider where
            # the simplified model admits more sizes (a node that refused an empty tensor gone).
            before, after = facts(a.shapeflow, path), facts(a.shapeflow, out)
            dims = lambda t: None if t["shape"] is None else [d if isinstance(d, int) else d["expr"]
                                                              for d in t["shape"]]
            differ = [t for t in after if t in before and
                      (after[t]["dtype"], dims(after[t])) != (before[t]["dtype"], dims(before[t]))]
            if differ:
                problems.append(f"facts differ for {len(differ)} tensors, e.g. {differ[0]}: "
                                f"{before[differ[0]]['shape']} vs {after[differ[0]]['shape']}")
            basic = ort_basic_nodes(path, tmp)
            row = {"model": name, "nodes": node_count(path), "ort_basic": basic, "simplify": node_count(out),
                   "shape_nodes_before": report["before"]["shape_nodes"],
                   "shape_nodes": report["after"]["shape_nodes"], "tensors_compared": compared,
                   "facts_compared": len([t for t in after if t in before]), "problems": problems}
            rows.append(row)
            failures += [f"{name}: {p}" for p in problems]
            print(f"{name:<22} {row['nodes']:>6} {str(basic):>9} {row['simplify']:>9} "
                  f"{row['shape_nodes_before']:>5} -> {row['shape_nodes']:<4} {str(compared):>14} "
                  f"{row['facts_compared']:>6}" + ("  FAIL" if problems else ""))
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    fewer = sum(1 for r in rows if r["ort_basic"] is not None and r["simplify"] < r["ort_basic"])
    print(f"{len(rows)} models simplified; fewer nodes than onnxruntime's basic level on {fewer}; "
          f"{len(failures)} failures")
    for f in failures:
        print("FAIL", f)
    return 1 if failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
