#!/usr/bin/python3
"""Checks `shapeflow lower --stage bounds` against onnxruntime on the dev corpus.

usage: bounds_check.py [--models a,b] [--shapeflow PATH] [--models-dir DIR] [--sizes FILE]
                       [--cache DIR]

For each model of the size file (scripts/precision_sizes.json: two size sets of its input
symbols), with onnxruntime's actual shapes of every node output at both size sets
(scripts/precision.py's cache):
  1. bounded: `shapeflow lower MODEL --stage bounds --json --dim SYM=LO..HI` with each input
     symbol bounded by its smallest and largest value in the two sets. Every actual dim must be
     at most the tensor's upper bound (WRONG otherwise: must be 0); the script counts the tensors
     whose every dim has a bound ("bounded") and those with a dim that has none.
  2. unbounded: the same without --dim. The report's missing input symbols must be exactly the
     input symbols of the model that the model itself does not bound (`shapeflow contract`: each
     input's own size needs its symbols bounded), and nothing
     else may be called an input symbol.
Exit status 1 on any WRONG or a wrong missing-bounds report, 2 if shapeflow fails to run."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import precision  # noqa: E402  (its helpers: inputs, size sets, onnxruntime's shapes)


def run_bounds(exe, path, dims):
    cmd = [exe, "lower", path, "--stage", "bounds", "--json"]
    for sym, (lo, hi) in sorted(dims.items()):
        cmd += ["--dim", f"{sym}={lo}..{hi}"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout)


def check_model(name, args, size_sets):
    import onnx
    path = os.path.join(args.models_dir, name + ".onnx")
    if not os.path.exists(path):
        return None
    model = onnx.load(path, load_external_data=False)
    inputs = precision.graph_inputs(model)
    del model
    input_syms = sorted({d for i in inputs for d in (i["dims"] or []) if isinstance(d, str)})
    specs = [precision.input_specs(inputs, z) for z in size_sets]
    actual = [precision.ort_actual(path, sp, args.cache) for sp in specs]
    dims = {s: (min(z[s] for z in size_sets), max(z[s] for z in size_sets)) for s in input_syms}

    bounded = run_bounds(args.shapeflow, path, dims)
    tensors = bounded["tensors"]
    wrong, total, full, partial, absent = [], 0, 0, 0, 0
    for act in actual:
        for tname, a in act.items():
            shape = a.get("shape") if isinstance(a, dict) else None
            if shape is None:
                continue
            total += 1
            t = tensors.get(tname)
            if t is None:
                absent += 1
                continue
            upper = t["upper_shape"]
            if upper is None or len(upper) != len(shape):
                if upper is not None:
                    wrong.append(f"{tname}: rank {len(upper)} bound, actual {shape}")
                partial += 1
                continue
            if any(u is not None and d > u for d, u in zip(shape, upper)):
                wrong.append(f"{tname}: upper {upper}, actual {shape}")
            if all(u is not None for u in upper):
                full += 1
            else:
                partial += 1

    unbounded = run_bounds(args.shapeflow, path, {})
    named = sorted(m["symbol"] for m in unbounded["missing_bounds"] if m["kind"] == "input")
    # A symbol the model itself bounds (bert_tiny's S <= 512: its position table) needs no --dim;
    # what the model bounds is what `shapeflow contract` states.
    c = subprocess.run([args.shapeflow, "contract", path, "--json"], capture_output=True, text=True)
    bounded_by_model = {s["name"] for s in json.loads(c.stdout).get("symbols", [])
                        if s.get("max") is not None or s.get("equals") is not None}
    expected = sorted(s for s in input_syms if s not in bounded_by_model)
    report_ok = named == expected
    return {"total": total, "full": full, "partial": partial, "absent": absent, "wrong": wrong,
            "dims": dims, "missing": named, "expected": expected, "report_ok": report_ok,
            "data": [m for m in bounded["missing_bounds"]]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", help="comma-separated subset of the models in --sizes")
    ap.add_argument("--shapeflow", default=os.path.join(ROOT, "build", "src", "cli", "shapeflow"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "dev_models"))
    ap.add_argument("--sizes", default=os.path.join(HERE, "precision_sizes.json"))
    ap.add_argument("--cache", default=os.path.join(ROOT, ".cache", "precision"))
    args = ap.parse_args()
    with open(args.sizes) as f:
        sizes = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    names = args.models.split(",") if args.models else list(sizes)
    print(f"{'model':24} {'tensors':>8} {'bounded':>8} {'partly':>7} {'WRONG':>6}  missing with nothing bounded")
    failed = False
    for name in names:
        try:
            r = check_model(name, args, sizes[name])
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            print(f"{name:24} shapeflow failed: {e}")
            return 2
        if r is None:
            print(f"{name:24} not exported (skipped)")
            continue
        verdict = "ok" if r["report_ok"] else f"WRONG: expected {r['expected']}"
        print(f"{name:24} {r['total']:>8} {r['full']:>8} {r['partial']:>7} {len(r['wrong']):>6}  "
              f"{','.join(r['missing']) or '-'} ({verdict})")
        for w in r["wrong"][:5]:
            print(f"    WRONG {w}")
        for m in r["data"]:
            what = m["symbol"] or f"{m['op']} '{m['node']}'"
            print(f"    with {' '.join(f'{s}={lo}..{hi}' for s, (lo, hi) in r['dims'].items())}: "
                  f"no bound for {what}: {m['tensors']} tensors, e.g. {m['example']}")
        failed |= bool(r["wrong"]) or not r["report_ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
