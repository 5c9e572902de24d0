#!/usr/bin/env python3
"""Which input sizes a model accepts: shapeflow's verdict against onnxruntime's (the input
contract). For every model, the sizes that matter (every symbol at its smallest admissible size
and one above, at its largest bound, all equal, extreme aspect ratios each way between every two
symbols) and random input sizes (small, odd, large, unequal H and W, and sizes that contradict a
static dim the model declares) are tried three ways:
  * onnxruntime runs the model on inputs of those sizes (scripts/ort/run_feeds.js): the truth;
  * `shapeflow infer MODEL --input ...` at those sizes (exit 0 or 1), together with the dims the
    model declares (a runtime refuses inputs that contradict them; infer only warns);
  * `shapeflow contract MODEL --json` evaluated at those sizes alone (its ranges, equalities and
    declared dims), without inferring again.
Prints a table per model: samples, agreement of each verdict, false alarms (shapeflow refuses,
onnxruntime runs), missed failures (shapeflow accepts, onnxruntime fails), and each disagreement.

usage: /usr/bin/python3 scripts/contract_check.py [--models-dir dev_models] [--samples 12]
       [--seed 1] [--shapeflow build/src/cli/shapeflow] [--only name,name]
       [--max-disagreements N]   (exit 1 past N disagreements of infer's or the contract's
                                  verdict with onnxruntime's; default 0)
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(__file__))
import sfexpr  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [1, 2, 3, 5, 7, 16, 31, 32, 33, 64, 97, 128, 224, 257, 320, 513]
MAX_ELEMENTS = 4 * 512 * 512  # per input: keeps onnxruntime's runs short
TYPES = {onnx.TensorProto.FLOAT: ("float32", 0.5), onnx.TensorProto.INT64: ("int64", 0),
         onnx.TensorProto.INT32: ("int32", 0), onnx.TensorProto.BOOL: ("bool", 1)}


def model_inputs(path):
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    out = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = []
        for k, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.dim_param:
                dims.append(d.dim_param)
            else:
                dims.append(f"{vi.name}_d{k}")
        out.append((vi.name, tt.elem_type, dims))
    return out


def symbol_bounds(contract):
    """Each input symbol's (min, max) from the contract (max None when unbounded)."""
    return {c["name"]: (c["min"], c["max"]) for c in contract.get("symbols", [])}


def leading(inputs, s):
    return any(dims and dims[0] == s for _, _, dims in inputs)


def extreme_bindings(inputs, symbols, bounds):
    """Sizes that matter: every symbol at its smallest admissible size and one above, at its
    largest bound, all equal, and for each pair of symbols an extreme aspect ratio each way (the
    short side small, the long side near the element budget). Batch-like leading symbols stay
    at their smallest size but in the first two."""
    lo = {s: max(bounds.get(s, (1, None))[0], 0) for s in symbols}
    hi = {s: bounds.get(s, (1, None))[1] for s in symbols}
    def clamp(s, v):
        v = max(v, lo[s])
        return v if hi[s] is None else min(v, hi[s])
    out = [dict(lo), {s: clamp(s, lo[s] + 1) for s in symbols}]
    out.append({s: (lo[s] if leading(inputs, s) else clamp(s, hi[s] if hi[s] is not None else 513))
                for s in symbols})
    for k in (7, 64):
        out.append({s: (lo[s] if leading(inputs, s) else clamp(s, k)) for s in symbols})
    spatial = [s for s in symbols if not leading(inputs, s)]
    for i, a in enumerate(spatial):
        for b in spatial[i + 1:]:
            for short, long_ in ((a, b), (b, a)):
                for small, large in ((lo[short] if lo[short] > 0 else 1, 3000), (2, 1400), (5, 700)):
                    base = {s: (lo[s] if leading(inputs, s) else clamp(s, 32)) for s in symbols}
                    base[short], base[long_] = clamp(short, small), clamp(long_, large)
                    out.append(base)
    return out


def tied(binding, contract):
    """The binding with every symbol an equality or broadcast of the contract ties to others
    (`S + P == L or L == 1`) set to meet it: the sizes a user of the model gives together."""
    out = dict(binding)
    for r in contract.get("requirements", []) if contract else []:
        if r.get("condition") not in ("equal", "broadcast"):
            continue
        for side, other in ((r["lhs"], r["rhs"]), (r["rhs"], r["lhs"])):
            if side in out:
                try:
                    v = sfexpr.evaluate(other, out)
                except Exception:
                    continue
                if isinstance(v, int) and v >= 0:
                    out[side] = v
                    break
    return out


def samples(inputs, n, rng, bounds=None, contract=None):
    """The extreme bindings, then n random ones (small, odd, large, unequal sizes; one in four
    changing a declared spatial dim), each also with the sizes the contract ties together set to
    meet it; every binding within the element budget."""
    symbols = sorted({d for _, _, dims in inputs for d in dims if isinstance(d, str)},
                     key=lambda s: [d for _, _, dims in inputs for d in dims].index(s))
    statics = [(name, k, d) for name, _, dims in inputs for k, d in enumerate(dims) if isinstance(d, int)]
    def shapes_of(binding):
        return {name: [binding[d] if isinstance(d, str) else d for d in dims] for name, _, dims in inputs}
    result, seen = [], set()
    def keep(binding, shapes):
        key = json.dumps(shapes, sort_keys=True)
        if key not in seen and all(prod(s) <= MAX_ELEMENTS for s in shapes.values()):
            seen.add(key)
            result.append((binding, shapes))
    for binding in extreme_bindings(inputs, symbols, bounds or {}):
        keep(binding, shapes_of(binding))
        t = tied(binding, contract)
        keep(t, shapes_of(t))
    extremes = len(result)
    tries = 0
    while len(result) < extremes + n and tries < 100 * n:
        tries += 1
        binding = {s: rng.choice(SIZES) for s in symbols}
        for s in symbols:  # batch-like leading symbols stay small
            if leading(inputs, s):
                binding[s] = rng.choice([1, 2, 3])
        shapes = shapes_of(binding)
        # One sample in four changes a declared spatial dim (axis >= 2): what a user does with an
        # export made at 224x224.
        override = [(name, k, d) for name, k, d in statics if k >= 2]
        if override and rng.random() < 0.25:
            name, k, d = rng.choice(override)
            shapes[name][k] = rng.choice([s for s in SIZES if s != d])
        keep(binding, shapes)
        t = tied(binding, contract)
        keep(t, shapes_of(t))
    return result


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def contract_verdict(contract, inputs, binding, shapes):
    """None when the sizes meet the contract, else the broken requirement."""
    for f in contract["declared"]:
        if shapes[f["input"]][f["axis"]] != f["value"]:
            return f"{f['input']}[{f['axis']}] == {f['value']} (declared)"
    values = dict(binding)
    for s in contract["symbols"]:
        v = values.get(s["name"])
        if v is None:
            continue
        if v < s["min"] or (s["max"] is not None and v > s["max"]):
            return f"{s['name']} in [{s['min']}, {s['max']}], given {v}"
        if s["equals"] is not None:
            want = sfexpr.evaluate(s["equals"], values)
            if want != v:
                return f"{s['name']} == {s['equals']} = {want}, given {v}"
    # Conditions (two dims that broadcast, an equality, a divisibility), where the sizes decide
    # both sides; a solved symbol takes its solution.
    for s in contract["symbols"]:
        if s["equals"] is not None and s["name"] not in values:
            try:
                values[s["name"]] = sfexpr.evaluate(s["equals"], values)
            except Exception:
                pass
    for r in contract.get("requirements", []):
        if not r.get("condition"):
            continue
        try:
            a, b = sfexpr.evaluate(r["lhs"], values), sfexpr.evaluate(r["rhs"], values)
        except Exception:
            continue
        ok = {"broadcast": a == b or a == 1 or b == 1, "equal": a == b,
              "divides": b != 0 and a % b == 0, "at_least": a >= b, "at_most": a <= b}[r["condition"]]
        if not ok:
            return f"{r['requirement']} ({a}, {b}) at node '{r['node']}'"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models-dir", default="dev_models")
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shapeflow", default="build/src/cli/shapeflow")
    ap.add_argument("--only", default="")
    ap.add_argument("--max-disagreements", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    models = sorted(glob.glob(os.path.join(a.models_dir, "*.onnx")))
    if a.only:
        keep = set(a.only.split(","))
        models = [m for m in models if os.path.basename(m)[:-5] in keep]
    totals = dict(samples=0, infer=0, contract=0)
    rows, disagreements = [], []
    for path in models:
        name = os.path.basename(path)[:-5]
        inputs = model_inputs(path)
        if any(t not in TYPES for _, t, _ in inputs):
            print(f"{name}: skipped (an input type run_feeds.js does not make)", file=sys.stderr)
            continue
        c = subprocess.run([a.shapeflow, "contract", path, "--json"], capture_output=True, text=True)
        contract = json.loads(c.stdout)
        cases = samples(inputs, a.samples, rng, symbol_bounds(contract), contract)
        # Elements: floats 0.5, integers 0 (a valid token id), masks 1 (every position attended:
        # a decoder computes its cache lengths from the mask).
        feeds = [{n: {"type": TYPES[t][0], "value": 1 if "mask" in n.lower() else TYPES[t][1],
                      "dims": shapes[n]} for n, t, _ in inputs}
                 for _, shapes in cases]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(feeds, f)
        out = subprocess.run(["node", os.path.join(HERE, "ort", "run_feeds.js"), path, f.name],
                             capture_output=True, text=True)
        os.unlink(f.name)
        truth = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
        agree_infer = agree_contract = false_alarm = missed = 0
        for (binding, shapes), t in zip(cases, truth):
            args = [a.shapeflow, "infer", path]
            for n, _, _ in inputs:
                args += ["--input", f"{n}=" + ",".join(map(str, shapes[n]))]
            r = subprocess.run(args, capture_output=True, text=True)
            declared_broken = contract_verdict({"declared": contract["declared"], "symbols": []},
                                               inputs, binding, shapes)
            sf_ok = r.returncode == 0 and declared_broken is None
            ct = contract_verdict(contract, inputs, binding, shapes)
            ct_ok = ct is None and not contract["errors"]
            ok = t["ok"]
            agree_infer += sf_ok == ok
            agree_contract += ct_ok == ok
            false_alarm += (not sf_ok) and ok
            missed += sf_ok and not ok
            if sf_ok != ok or ct_ok != ok:
                why = declared_broken or next((l for l in r.stdout.splitlines() if "error:" in l), "")
                disagreements.append(f"{name} {shapes}: onnxruntime {'runs' if ok else 'fails'}"
                                     f"{'' if ok else ' (' + t.get('error', '')[:120] + ')'}; infer "
                                     f"{'accepts' if sf_ok else 'refuses: ' + why[:160]}; contract "
                                     f"{'accepts' if ct_ok else 'refuses: ' + str(ct)}")
        n = len(cases)
        totals["samples"] += n
        totals["infer"] += agree_infer
        totals["contract"] += agree_contract
        rows.append(f"| {name} | {n} | {sum(1 for x in truth if x['ok'])} | {agree_infer} | "
                    f"{false_alarm} | {missed} | {agree_contract} | {'; '.join(contract['summary'])} |")
    print("| model | samples | onnxruntime runs | infer agrees | false alarms | missed failures | "
          "contract agrees | contract |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(r)
    print(f"\nTotal: {totals['samples']} samples; infer (with the declared dims) agrees with "
          f"onnxruntime on {totals['infer']}, the contract alone on {totals['contract']}.")
    for d in disagreements:
        print("- " + d)
    wrong = max(totals["samples"] - totals["infer"], totals["samples"] - totals["contract"])
    return 0 if wrong <= a.max_disagreements else 1


if __name__ == "__main__":
    sys.exit(main())
