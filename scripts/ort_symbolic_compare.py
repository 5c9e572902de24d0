#!/usr/bin/python3
"""Compares shapeflow.infer_shapes with onnxruntime's symbolic shape inference, dim by dim.

usage: ort_symbolic_compare.py --ort-tool symbolic_shape_infer.py [--models a.onnx ...]
                               [--json OUT] [--timeout S] [--list N] [--actual]

onnxruntime's tool (onnxruntime/python/tools/symbolic_shape_infer.py, not part of this
repository: pass its path with --ort-tool or $SF_ORT_SYMBOLIC) runs as
SymbolicShapeInference.infer_shapes(model, int_max=2**31-1, auto_merge=True,
guess_output_rank=False) in a child process (its working directory a temporary one, as it
writes sym_shape_infer_temp.onnx when it gives up); shapeflow.infer_shapes(model) runs here.
For every tensor of ORT's value_info and graph outputs (not initializers or inputs) each dim
falls in one category:
  equal     the same number; or both expressions of the input sizes, agreeing at 6 random
            bindings of the input symbols (1..64)
  sf_more   shapeflow has a number where ORT has none, a symbol or an expression; or an
            expression of the input sizes where ORT has none or an invented symbol (unk__3,
            NonZero_5_o0__d1, or an expression over such names)
  ort_more  the same, the other way round
  differ    two different numbers, or two expressions of the input sizes that disagree at a
            binding (shown with both values)
The bindings are drawn to meet shapeflow's contract for the model (Model.contract()'s
requirements, e.g. a mask length L == S + P), unconstrained when rejection sampling finds
too few.
  neither   both unknown or opaque (data-dependent)
and a tensor whose rank or elem_type differs counts once as rank/type (its dims are not
counted). ORT's names for the input dims are mapped to shapeflow's by (input, axis); ORT
expressions are evaluated with sympy, shapeflow's with shapeflow.Expression.evaluate.
--actual also looks up onnxruntime's actual shapes at the size sets of
scripts/precision_sizes*.json (precision.py's cache) and says, for each differ and ort_more
case, which side matches them.
"""
import argparse
import glob
import importlib.util
import json
import multiprocessing as mp
import os
import random
import re
import sys
import tempfile
import time

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
SF_FUNCS = {"min", "max", "floor", "ceil", "trunc", "round", "f32", "f64"}
ORT_FUNCS = {"floor", "ceiling", "Max", "Min", "Mod", "Abs"}
CATS = ["equal", "sf_more", "ort_more", "differ", "neither", "rank/type"]


# ---------------------------------------------------------------------------------------------
# running the two tools

def _ort_child(tool, path, conn):
    try:
        os.chdir(tempfile.mkdtemp(prefix="ort_sym_"))
        spec = importlib.util.spec_from_file_location("symbolic_shape_infer", tool)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        model = onnx.load(path, load_external_data=False)
        out = mod.SymbolicShapeInference.infer_shapes(model, int_max=2**31 - 1, auto_merge=True,
                                                      guess_output_rank=False, verbose=0)
        if out is None:
            conn.send(("error", "returned None (opset < 7?)"))
            return
        out.graph.ClearField("initializer")
        out.graph.ClearField("node")
        conn.send(("ok", out.SerializeToString()))
    except BaseException as e:  # noqa: BLE001 - any failure of the tool is a result
        conn.send(("error", f"{type(e).__name__}: {str(e).strip()[:200]}"))


def run_ort(tool, path, timeout):
    """(ModelProto or None, error text or None, seconds)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_ort_child, args=(tool, path, child))
    t = time.time()
    p.start()
    child.close()
    if not parent.poll(timeout):
        p.kill()
        p.join()
        return None, f"timeout after {timeout}s", time.time() - t
    try:
        kind, payload = parent.recv()
    except EOFError:
        kind, payload = "error", f"child died (exit code {p.exitcode})"
    p.join()
    if kind != "ok":
        return None, payload, time.time() - t
    m = onnx.ModelProto()
    m.ParseFromString(payload)
    return m, None, time.time() - t


# ---------------------------------------------------------------------------------------------
# dims

def dims_of(vi):
    """(elem_type, [dim...]) with a dim an int, a str or None; dims None when the rank is unknown."""
    if vi is None or vi.type.WhichOneof("value") != "tensor_type":
        return None, None
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return t.elem_type, None
    out = []
    for d in t.shape.dim:
        out.append(d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None)
    return t.elem_type, out


def names_in(text, known):
    """Replaces the known names (longest first, whole words) by placeholders; returns the text,
    the placeholder->name map and the identifiers left over."""
    mapping = {}
    for i, name in enumerate(sorted(known, key=len, reverse=True)):
        ph = f"_v{i}_"
        new = re.sub(r"(?<![A-Za-z0-9_.])" + re.escape(name) + r"(?![A-Za-z0-9_])", ph, text)
        if new != text:
            mapping[ph] = name
            text = new
    left = {w for w in IDENT.findall(text) if w not in mapping}
    return text, mapping, left


class Side:
    """One tool's view: how it names the input dims, and how to evaluate its dims."""

    def __init__(self, funcs, rename):
        self.funcs = funcs
        self.rename = rename  # its input-dim name -> shapeflow's name (or an int)

    def kind(self, d):
        """'int', 'expr' (of the input sizes), 'opaque' or 'none'."""
        if d is None or d == "":
            return "none"
        if isinstance(d, int):
            return "int"
        _, _, left = names_in(d, self.rename)
        return "expr" if not (left - self.funcs) else "opaque"


def eval_ort(text, rename, binding):
    import sympy
    t, mapping, _ = names_in(text, rename)
    syms = {ph: sympy.Symbol(ph, integer=True, positive=True) for ph in mapping}
    e = sympy.sympify(t, locals=dict(syms))
    vals = {}
    for ph, name in mapping.items():
        target = rename[name]
        vals[syms[ph]] = target if isinstance(target, int) else binding[target]
    v = sympy.nsimplify(e.subs(vals))
    return int(v) if v.is_integer else str(v)


def eval_sf(text, binding):
    import shapeflow
    try:
        return shapeflow.Expression(text, None, None).evaluate(**binding)
    except Exception as e:  # noqa: BLE001
        return f"error: {e}"


def compare_dim(o, s, ort, sf, bindings):
    """(category, detail) for ORT's dim o and shapeflow's dim s."""
    ko, ks = ort.kind(o), sf.kind(s)
    if ko == "int" and ks == "int":
        return ("equal", None) if o == s else ("differ", None)
    if ks == "int":
        return "sf_more", None
    if ko == "int":
        return "ort_more", None
    if ko == "expr" and ks == "expr":
        for b in bindings:
            try:
                vo = eval_ort(o, ort.rename, b)
            except Exception as e:  # noqa: BLE001
                vo = f"error: {type(e).__name__}"
            vs = eval_sf(s, b)
            if vo != vs:
                return "differ", {"binding": b, "ort": vo, "sf": vs}
        return "equal", None
    if ks == "expr":
        return "sf_more", None
    if ko == "expr":
        return "ort_more", None
    return "neither", None


# ---------------------------------------------------------------------------------------------
# one model

def valid_bindings(path, syms, rng, want=6, tries=50000):
    """`want` bindings of the input symbols (1..64) that meet shapeflow's contract for the model
    (its requirements, e.g. L == S + P where a mask must match the scores), found by rejection
    sampling; unconstrained ones when too few are found. Returns (bindings, how)."""
    import math
    import shapeflow
    checks = []
    try:
        c = shapeflow.load(path).contract().json()
        for r in c.get("requirements", []):
            checks.append(compile(r["requirement"], "<req>", "eval"))
        for sym in c.get("symbols", []):
            n = sym["name"]
            for key, op in (("min", ">="), ("max", "<="), ("equals", "==")):
                if sym.get(key) is not None:
                    checks.append(compile(f"{n} {op} {sym[key]}", "<req>", "eval"))
    except Exception:  # noqa: BLE001 - no contract: unconstrained
        checks = []
    env = {"min": min, "max": max, "floor": math.floor, "ceil": math.ceil, "__builtins__": {}}

    def ok(b):
        for code in checks:
            try:
                if not eval(code, env, b):  # noqa: S307 - shapeflow's own requirement text
                    return False
            except Exception:  # noqa: BLE001 - a requirement we cannot evaluate is not checked
                pass
        return True
    found = []
    for _ in range(tries if checks else want):
        b = {s: rng.randint(1, 64) for s in syms}
        if ok(b):
            found.append(b)
            if len(found) == want:
                return found, f"meeting shapeflow's contract ({len(checks)} conditions)"
    if len(found) >= 2:
        return found, f"meeting shapeflow's contract ({len(checks)} conditions; only {len(found)} found)"
    return [{s: rng.randint(1, 64) for s in syms} for _ in range(want)], "unconstrained"

def input_rename(ort_out, sf_out, model):
    """ORT's input-dim names -> shapeflow's, by (input, axis); and the notes on merges."""
    inits = {i.name for i in model.graph.initializer}
    sf_in = {i.name: dims_of(i)[1] for i in sf_out.graph.input}
    rename, notes = {}, []
    for i in ort_out.graph.input:
        if i.name in inits or i.name not in sf_in:
            continue
        od, sd = dims_of(i)[1], sf_in[i.name]
        for ax, (a, b) in enumerate(zip(od or [], sd or [])):
            if isinstance(a, str) and a:
                if a in rename and rename[a] != b:
                    notes.append(f"ORT merged input dims {rename[a]} and {b} (as {a})")
                else:
                    rename[a] = b
            elif isinstance(a, int) and isinstance(b, str):
                notes.append(f"ORT fixed input dim {i.name}[{ax}] ({b}) to {a}")
    return rename, notes


def compare_model(path, tool, timeout, rng_seed=0):
    model = onnx.load(path, load_external_data=False)
    res = {"model": os.path.relpath(path, ROOT) if path.startswith(ROOT) else path,
           "counts": dict.fromkeys(CATS, 0), "tensors": 0, "cases": [], "notes": []}
    import shapeflow
    t = time.time()
    sf_out = shapeflow.infer_shapes(model)
    res["sf_seconds"] = round(time.time() - t, 2)
    ort_out, err, secs = run_ort(tool, path, timeout)
    res["ort_seconds"] = round(secs, 2)
    if ort_out is None:
        res["ort_failed"] = err
        return res
    sf_syms = sorted({d for i in sf_out.graph.input for d in (dims_of(i)[1] or []) if isinstance(d, str)})
    rename, res["notes"] = input_rename(ort_out, sf_out, model)
    res["rename"], res["symbols"] = rename, sf_syms
    ort = Side(ORT_FUNCS, rename)
    sf = Side(SF_FUNCS, {s: s for s in sf_syms})
    bindings, res["bindings"] = valid_bindings(path, sf_syms, random.Random(rng_seed))
    skip = {i.name for i in model.graph.initializer} | {i.name for i in model.graph.input}
    sf_vi = {v.name: v for v in list(sf_out.graph.value_info) + list(sf_out.graph.output)}
    seen = set()
    for vi in list(ort_out.graph.value_info) + list(ort_out.graph.output):
        if vi.name in skip or vi.name in seen or vi.type.WhichOneof("value") != "tensor_type":
            continue
        seen.add(vi.name)
        res["tensors"] += 1
        ot, od = dims_of(vi)
        st, sd = dims_of(sf_vi.get(vi.name))
        if od is None and sd is None:
            continue
        if od is None or sd is None or len(od) != len(sd) or (ot and st and ot != st):
            res["counts"]["rank/type"] += 1
            res["cases"].append({"cat": "rank/type", "tensor": vi.name, "ort": [ot, od], "sf": [st, sd]})
            continue
        for ax, (o, s) in enumerate(zip(od, sd)):
            cat, detail = compare_dim(o, s, ort, sf, bindings)
            res["counts"][cat] += 1
            if cat in ("differ", "ort_more", "sf_more", "neither"):
                res["cases"].append({"cat": cat, "tensor": vi.name, "axis": ax, "ort": o, "sf": s,
                                     "detail": detail})
    return res


# ---------------------------------------------------------------------------------------------
# onnxruntime's actual shapes (precision.py's cache), for the cases

def actual_check(res, path):
    sys.path.insert(0, HERE)
    import precision
    stem = os.path.basename(path)[:-5]
    sizes = {}
    for f in glob.glob(os.path.join(HERE, "precision_sizes*.json")):
        with open(f) as fh:
            sizes.update(json.load(fh))
    if stem not in sizes or not res["cases"]:
        return
    model = onnx.load(path, load_external_data=False)
    ins = precision.graph_inputs(model)
    cache = os.path.join(ROOT, ".cache", "precision")
    sets = [(s, precision.ort_actual(path, precision.input_specs(ins, s), cache)) for s in sizes[stem]]
    rename = dict(res.get("rename", {}))
    ort, sf = Side(ORT_FUNCS, rename), Side(SF_FUNCS, {n: n for n in res.get("symbols", [])})
    for c in res["cases"]:
        if c["cat"] not in ("differ", "ort_more"):
            continue
        verdict = []
        for s, actual in sets:
            a = actual.get(c["tensor"], {}).get("shape")
            if a is None or len(a) <= c["axis"]:
                continue
            want = a[c["axis"]]

            def val(d, ort_side):
                if isinstance(d, int):
                    return d
                if (ort if ort_side else sf).kind(d) != "expr":
                    return None
                try:
                    return eval_ort(d, rename, s) if ort_side else eval_sf(d, s)
                except Exception:  # noqa: BLE001
                    return None
            verdict.append({"sizes": s, "actual": want, "ort": val(c["ort"], True),
                            "sf": val(c["sf"], False)})
        c["actual"] = verdict


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ort-tool", default=os.environ.get("SF_ORT_SYMBOLIC"))
    ap.add_argument("--models", nargs="+")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--list", type=int, default=20, help="differ/ort_more cases listed per model")
    ap.add_argument("--actual", action="store_true")
    args = ap.parse_args()
    if not args.ort_tool or not os.path.exists(args.ort_tool):
        raise SystemExit("need --ort-tool PATH (onnxruntime's symbolic_shape_infer.py) or $SF_ORT_SYMBOLIC")
    models = args.models or sorted(glob.glob(os.path.join(ROOT, "dev_models", "*.onnx"))) + \
        sorted(glob.glob(os.path.join(ROOT, "dev_models", "extra", "*.onnx")))
    totals = dict.fromkeys(CATS, 0)
    tensors, results = 0, []
    print(f"{'model':28} {'tensors':>7} " + " ".join(f"{c:>9}" for c in CATS) + "   ort s")
    for path in models:
        res = compare_model(os.path.abspath(path), args.ort_tool, args.timeout)
        results.append(res)
        name = os.path.basename(path)
        if "ort_failed" in res:
            print(f"{name:28} ORT failed ({res['ort_seconds']}s): {res['ort_failed']}", flush=True)
            continue
        if args.actual:
            actual_check(res, os.path.abspath(path))
        tensors += res["tensors"]
        for c in CATS:
            totals[c] += res["counts"][c]
        print(f"{name:28} {res['tensors']:7} " + " ".join(f"{res['counts'][c]:9}" for c in CATS)
              + f"   {res['ort_seconds']:5}", flush=True)
        print(f"    bindings: {res['bindings']}")
        for n in res["notes"]:
            print(f"    note: {n}")
        shown = 0
        cases = [c for c in res["cases"] if c["cat"] in ("differ", "ort_more", "rank/type")]
        for c in cases:
            if shown >= args.list:
                print(f"    ... {len(cases) - shown} more")
                break
            shown += 1
            where = c["tensor"] + (f"[{c['axis']}]" if "axis" in c else "")
            line = f"    {c['cat']:9} {where}: ort {c['ort']!r}  sf {c['sf']!r}"
            if c.get("detail"):
                d = c["detail"]
                line += f"  at {d['binding']}: ort={d['ort']} sf={d['sf']}"
            for v in c.get("actual", []):
                line += f"  | actual {v['actual']} (ort {v['ort']}, sf {v['sf']})"
            print(line)
    print(f"{'TOTAL':28} {tensors:7} " + " ".join(f"{totals[c]:9}" for c in CATS))
    failed = [os.path.basename(r["model"]) for r in results if "ort_failed" in r]
    if failed:
        print(f"ORT failed on {len(failed)} model(s): {', '.join(failed)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"totals": totals, "tensors": tensors, "models": results}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
