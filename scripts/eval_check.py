#!/usr/bin/env python3
"""The executor against onnxruntime on real models: for each model (the dev corpus by default),
random inputs at the first size set of scripts/precision_sizes.json are written as .npy, run by
`shapeflow run --out` and by onnxruntime (scripts/ort/run_npy.js, optimisations off), and every
graph output is compared: max |a - b| <= atol + rtol * |b| element-wise (rtol 1e-3, atol 1e-4:
f32 sums accumulated in another order). Prints one line per model; exit 1 if any output differs
or shapeflow fails where onnxruntime runs.

usage: scripts/eval_check.py [--shapeflow PATH] [--run-args ARGS] [--models a,b] [--models-dir DIR] [--sizes FILE]
"""
import argparse, json, os, subprocess, sys, tempfile, time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DTYPES = {1: np.float32, 11: np.float64, 7: np.int64, 6: np.int32, 9: np.bool_, 2: np.uint8, 3: np.int8}


def inputs_of(model_path, sizes, rng):
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    feeds = {}
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        t = inp.type.tensor_type
        shape = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif d.dim_param in sizes:
                shape.append(sizes[d.dim_param])
            else:
                raise ValueError(f"input {inp.name}: no size for dim {d.dim_param or '?'}")
        dt = DTYPES.get(t.elem_type)
        if dt is None:
            raise ValueError(f"input {inp.name}: element type {t.elem_type}")
        if dt in (np.float32, np.float64):
            feeds[inp.name] = rng.uniform(-1, 1, shape).astype(dt)
        elif dt == np.bool_:
            feeds[inp.name] = np.ones(shape, dtype=dt)
        elif "mask" in inp.name.lower():
            feeds[inp.name] = np.ones(shape, dtype=dt)
        else:
            feeds[inp.name] = np.zeros(shape, dtype=dt)  # a valid token id / index
    return feeds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default=os.path.join(ROOT, "build/src/cli/shapeflow"))
    ap.add_argument("--models", default="")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "dev_models"))
    ap.add_argument("--sizes", default=os.path.join(HERE, "precision_sizes.json"))
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--run-args", default="", help="more arguments for `shapeflow run` (e.g. --no-arena)")
    a = ap.parse_args()
    sizes = json.load(open(a.sizes))
    names = [n for n in sizes if not n.startswith("_")]
    if a.models:
        names = [n for n in a.models.split(",")]
    bad = 0
    for name in names:
        path = os.path.join(a.models_dir, name + ".onnx")
        if not os.path.exists(path):
            print(f"{name:22s} missing")
            continue
        rng = np.random.default_rng(1)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                feeds = inputs_of(path, sizes.get(name, [{}])[0], rng)
            except ValueError as e:
                print(f"{name:22s} skipped: {e}")
                continue
            specs = []
            for k, v in feeds.items():
                f = os.path.join(tmp, f"in_{len(specs)}.npy")
                np.save(f, v)
                specs.append(f"{k}={f}")
            t0 = time.time()
            sf = subprocess.run([a.shapeflow, "run", path, "--json", "--out", os.path.join(tmp, "sf")] + a.run_args.split() +
                                sum([["--feed", s] for s in specs], []), capture_output=True, text=True)
            t_sf = time.time() - t0
            t0 = time.time()
            ort = subprocess.run(["node", os.path.join(HERE, "ort", "run_npy.js"), path,
                                  os.path.join(tmp, "ort")] + specs, capture_output=True, text=True)
            t_ort = time.time() - t0
            if ort.returncode != 0:
                print(f"{name:22s} onnxruntime failed: {ort.stderr.strip()[:200]}")
                continue
            if sf.returncode != 0:
                bad += 1
                print(f"{name:22s} FAIL shapeflow: {(sf.stderr or sf.stdout).strip()[:300]}")
                continue
            worst, outs, problems = 0.0, 0, []
            # The run's arena (the static memory plan at these sizes): a place the executor had
            # to refuse is a plan that disagrees with the run (its tensors went to the heap).
            arena = json.loads(sf.stdout).get("arena", {})
            if arena.get("conflicts"):
                problems.append(f"arena: {arena['conflicts']} places refused (the plan disagrees with the run): "
                                + "; ".join(arena.get("refused", [])))
            arena_text = (f", arena {arena['bytes'] / 1e6:.2f} MB {arena['placed']} placed {arena['elsewhere']} elsewhere"
                          if "bytes" in arena else f", no arena: {arena.get('none', '?')[:80]}")
            for f in sorted(os.listdir(os.path.join(tmp, "ort"))):
                b = np.load(os.path.join(tmp, "ort", f))
                p = os.path.join(tmp, "sf", f)
                if not os.path.exists(p):
                    problems.append(f"{f}: not written")
                    continue
                x = np.load(p)
                outs += 1
                if x.shape != b.shape or x.dtype != b.dtype:
                    problems.append(f"{f}: {x.dtype}{list(x.shape)} vs {b.dtype}{list(b.shape)}")
                    continue
                if x.dtype.kind in "fc":
                    # Equal elements match, equal infinities (a causal mask's -inf) and NaN
                    # against NaN included; a NaN or infinity on one side only does not.
                    same = (x == b) | (np.isnan(x) & np.isnan(b))
                    with np.errstate(invalid="ignore"):
                        err = np.where(same, 0.0, np.abs(x.astype(np.float64) - b.astype(np.float64)))
                    err = np.where(np.isnan(err), np.inf, err)
                    # The absolute tolerance scaled down with outputs far below 1 (random weights
                    # can make a network's output ~1e-9, where a fixed 1e-4 would pass anything).
                    finite = np.abs(b[np.isfinite(b)])
                    scale = float(finite.max()) if finite.size else 0.0
                    with np.errstate(invalid="ignore"):
                        tol = min(a.atol, 1e-3 * scale) + a.rtol * np.abs(b.astype(np.float64))
                    tol = np.where(np.isfinite(b), tol, 0.0)  # an infinity matches only itself
                    if not np.all(err <= tol):
                        i = int(np.argmax(err - tol))
                        problems.append(f"{f}: max |diff| {float(err.max()):.3g} (at {i}: {x.flat[i]} vs {b.flat[i]})")
                    worst = max(worst, float(err.max()) if err.size else 0.0)
                elif not np.array_equal(x, b):
                    problems.append(f"{f}: values differ")
            verdict = "ok" if not problems else "FAIL"
            bad += bool(problems)
            print(f"{name:22s} {verdict:4s} {outs} outputs, max |diff| {worst:.2e}, shapeflow {t_sf:.2f} s, onnxruntime {t_ort:.2f} s{arena_text}"
                  + ("".join("\n    " + p for p in problems[:5])))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
