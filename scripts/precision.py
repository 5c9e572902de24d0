#!/usr/bin/python3
"""Measures shapeflow's precision on the dev corpus against onnxruntime's actual shapes, next to
ONNX's own shape inference (the bar to meet or beat).

usage: precision.py [--models a,b] [--shapeflow PATH] [--no-shapeflow] [--models-dir DIR]
                    [--sizes FILE] [--cache DIR] [--verbose] [--json OUT]

For each model in scripts/precision_sizes.json (two size sets of its input symbols) it runs
  (a) shapeflow concrete:  SHAPEFLOW infer MODEL --json --input x=1,3,224,224 ...   (each size set)
  (b) shapeflow symbolic:  SHAPEFLOW infer MODEL --json                  (the model's own dim_params)
  (c) onnxruntime's actual dtype and shape of every node output           (each size set)
  (d) onnx.shape_inference.infer_shapes(data_prop=True), concrete (each set) and symbolic
and prints per model, over the node outputs onnxruntime reports ("tensors"):
  const    of which constant folding computes them (Constant nodes and what depends only on
           initializers): free for any tool; --exclude-constants leaves them out of the scores
  valdep   tensors whose symbolic shape names a symbol that is not an input symbol (data-dependent)
  conc     concrete exact in both size sets: every dim a number equal to the actual one
  sym      symbolic exact: every dim a number or an expression of input symbols that, evaluated at
           each size set, equals the actual size in both sets ("?" and other symbols never exact)
  bounds   the symbolic run knows the rank and every dim's range contains the actual size in both
           sets (for ONNX a dim_param or unknown dim is the range [0, inf))
  WRONG    a definite dim (number, or expression of input symbols) that disagrees with the actual
           one, a range that excludes it, a wrong rank or a wrong dtype, in any run. Must be 0.
The same columns follow for ONNX, where a dim_param is symbolic-exact only if it is an input
symbol name equal to the actual size. Exit status: 1 if shapeflow has any WRONG, 2 if shapeflow
failed to run or its output broke the JSON contract, 3 if --min-size-only is not met, 0 otherwise.
Results of (c) and (d) are cached under --cache (keyed by model size and mtime).
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import sfexpr  # noqa: E402

IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


# ---------------------------------------------------------------------------------------------
# running the tools

def model_key(path, extra):
    st = os.stat(path)
    h = hashlib.sha1(f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_mtime_ns}\0{extra}".encode())
    return h.hexdigest()[:16]


def input_specs(model_inputs, sizes):
    """--input values for one size set: NAME=d0,d1,... with symbols replaced by their values."""
    specs = []
    for inp in model_inputs:
        if inp["dims"] is None:
            raise SystemExit(f"input {inp['name']} has no shape in the model")
        dims = []
        for d in inp["dims"]:
            if isinstance(d, int):
                dims.append(d)
            elif isinstance(d, str) and d in sizes:
                dims.append(sizes[d])
            else:
                raise SystemExit(f"input {inp['name']}: no value for dim {d!r} in the size set {sizes}")
        specs.append(f"{inp['name']}={','.join(map(str, dims))}")
    return specs


def graph_inputs(model):
    from expose_all_outputs import describe_input
    inits = {i.name for i in model.graph.initializer}
    return [describe_input(vi) for vi in model.graph.input if vi.name not in inits]


def constant_tensors(model):
    """Node outputs that constant folding computes: Constant nodes, and nodes (without subgraphs)
    whose inputs are all initializers or such outputs. Any tool gets their shapes for free."""
    const = {i.name for i in model.graph.initializer}
    folded = set()
    for node in model.graph.node:
        has_subgraph = any(a.type in (onnx_attr_graph(), onnx_attr_graphs()) for a in node.attribute)
        ins = [i for i in node.input if i]
        if node.op_type == "Constant" or (ins and not has_subgraph and all(i in const for i in ins)
                                          and node.op_type not in NONDETERMINISTIC):
            for o in node.output:
                if o:
                    const.add(o)
                    folded.add(o)
    return folded


NONDETERMINISTIC = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial"}


def onnx_attr_graph():
    import onnx
    return onnx.AttributeProto.GRAPH


def onnx_attr_graphs():
    import onnx
    return onnx.AttributeProto.GRAPHS


def ort_actual(path, specs, cache):
    key = model_key(path, " ".join(specs))
    out = os.path.join(cache, "actual", f"{os.path.basename(path)[:-5]}-{key}.json")
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cmd = ["node", os.path.join(HERE, "ort", "actual_shapes.js"), path, "--cache",
               os.path.join(cache, "ort-models"), "-o", out + ".tmp"]
        for s in specs:
            cmd += ["--input", s]
        subprocess.run(cmd, check=True)
        os.replace(out + ".tmp", out)
    with open(out) as f:
        return json.load(f)


def onnx_inferred(path, specs, cache, model_loader):
    import onnx
    from onnx_infer_shapes import infer
    key = model_key(path, "onnx " + onnx.__version__ + " " + " ".join(specs))
    out = os.path.join(cache, "onnx", f"{os.path.basename(path)[:-5]}-{key}.json")
    if os.path.exists(out):
        with open(out) as f:
            return json.load(f)
    inputs = {}
    for s in specs:
        name, _, dims = s.partition("=")
        inputs[name] = [int(d) for d in dims.split(",")] if dims else []
    result, error = infer(model_loader(), inputs)
    data = {"tensors": result, "error": error}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(data, f)
    return data


def run_shapeflow(exe, path, specs):
    """Returns (parsed JSON or None, problem text or None, seconds)."""
    cmd = list(exe) + ["infer", path, "--json"]
    for s in specs:
        cmd += ["--input", s]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return None, "timed out after 900 s", time.monotonic() - t0
    except OSError as e:
        return None, f"could not run {cmd[0]}: {e}", time.monotonic() - t0
    secs = time.monotonic() - t0
    if p.returncode not in (0, 1):  # 1: the model has errors but the facts are printed
        return None, f"exit {p.returncode}: {p.stderr.strip()[-500:]}", secs
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return None, f"stdout is not JSON ({e}); stderr: {p.stderr.strip()[-300:]}", secs
    problem = check_contract(data)
    if problem is None:
        sfexpr.expand_report(data)  # derived sizes (R1 = ...) evaluated through their definitions
    return (data if problem is None else None), problem, secs


def check_contract(data):
    if not isinstance(data, dict) or not isinstance(data.get("tensors"), dict):
        return "JSON has no 'tensors' object"
    for name, t in data["tensors"].items():
        if not isinstance(t, dict) or "shape" not in t:
            return f"tensor {name!r}: no 'shape'"
        shape = t["shape"]
        if shape is None:
            continue
        if not isinstance(shape, list):
            return f"tensor {name!r}: shape is neither null nor a list"
        for d in shape:
            if isinstance(d, bool) or not (isinstance(d, int) or (isinstance(d, dict) and isinstance(d.get("expr"), str))):
                return f"tensor {name!r}: bad dim {d!r}"
    return None


# ---------------------------------------------------------------------------------------------
# scoring one dim against the actual sizes of the two size sets
#
# A dim is normalised to (kind, payload, lo, hi):
#   ("const", n)       a definite number
#   ("expr", text)     an expression over input symbols (definite once the symbols have values)
#   ("dep", names)     names a symbol that is not an input symbol: value-dependent, bounds only
#   ("unknown", None)  "?", an ONNX dim_param that is not an input symbol, or ONNX's unknown dim

def normalise_shapeflow_dim(d, input_syms):
    if isinstance(d, int):
        return "const", d, d, d
    expr, lo, hi = d["expr"].strip(), d.get("min", 0), d.get("max")
    lo = 0 if lo is None else lo
    if expr == "?" or expr.startswith("?"):
        return "unknown", None, lo, hi
    names = {n for n in IDENT.findall(expr) if n not in sfexpr.FUNCTIONS}
    if not names:
        v = eval_expr(expr, {})
        return ("const", v, lo, hi) if v is not None else ("unknown", None, lo, hi)
    foreign = sorted(names - set(input_syms))
    if foreign:
        return "dep", foreign, lo, hi
    return "expr", expr, lo, hi


def normalise_onnx_dim(d, input_syms):
    if isinstance(d, int):
        return "const", d, d, d
    if isinstance(d, str) and d in input_syms:
        return "expr", d, 0, None
    return "unknown", None, 0, None


def eval_expr(expr, syms):
    """The integer value of a shapeflow expression (scripts/sfexpr.py), or None."""
    try:
        v = sfexpr.evaluate(expr, syms)
    except ValueError:  # a broken expression cannot be exact
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


class Score:
    def __init__(self):
        self.exact = True     # every dim definite and right
        self.bounds = True    # rank known and every range contains the actual size
        self.wrong = []       # texts
        self.dep = []         # foreign symbol names (value-dependent)


def score_shape(claim, actuals, size_sets, input_syms, norm):
    """claim: {"dtype", "shape"} or None; actuals: one {"dtype", "shape"} per size set."""
    s = Score()
    if claim is None or claim.get("shape") is None:
        s.exact = s.bounds = False
        if claim is not None:
            check_dtype(s, claim, actuals)
        return s
    check_dtype(s, claim, actuals)
    shape = claim["shape"]
    for a in actuals:
        if len(shape) != len(a["shape"]):
            s.exact = s.bounds = False
            s.wrong.append(f"rank {len(shape)} vs actual {a['shape']}")
            return s
    for i, d in enumerate(shape):
        kind, payload, lo, hi = norm(d, input_syms)
        for a, syms in zip(actuals, size_sets):
            v = a["shape"][i]
            if kind != "const" and (v < lo or hi is not None and v > hi):  # one message per dim
                s.bounds = s.exact = False
                s.wrong.append(f"dim {i} {d['expr'] if isinstance(d, dict) else d} range [{lo}, {'inf' if hi is None else hi}] excludes actual {v} (at {syms})")
            elif kind == "const":
                if payload != v:
                    s.exact = False
                    s.wrong.append(f"dim {i} is {payload}, actual {v} (at {syms})")
            elif kind == "expr":
                got = eval_expr(payload, syms)
                if got != v:
                    s.exact = False
                    s.wrong.append(f"dim {i} is {payload} = {got}, actual {v} (at {syms})")
            else:
                s.exact = False
        if kind == "dep":
            s.dep.extend(n for n in payload if n not in s.dep)
    return s


def check_dtype(s, claim, actuals):
    dt = claim.get("dtype")
    if dt is not None and dt != actuals[0]["dtype"]:
        s.wrong.append(f"dtype {dt}, actual {actuals[0]['dtype']}")
        s.exact = False


# ---------------------------------------------------------------------------------------------

class Tally:
    # conc_sz / sym_sz: the same counts over the tensors whose size does not depend on input
    # values (size_total of them: those shapeflow does not show as value-dependent)
    COLS = ("conc", "sym", "bounds", "conc_sz", "sym_sz")

    def __init__(self):
        self.total = 0
        self.size_total = 0
        self.valdep = []
        self.count = {c: 0 for c in self.COLS}
        self.wrong = []
        self.missing = []  # node outputs absent from some run's JSON
        self.inexact = []  # neither exact in the concrete runs nor value-dependent
        self.failed = None

    def add(self, other):
        self.total += other.total
        self.size_total += other.size_total
        self.valdep += other.valdep
        self.inexact += other.inexact
        for c in self.COLS:
            self.count[c] += other.count[c]
        self.wrong += other.wrong
        self.missing += other.missing


def score_tool(names, actual, size_sets, input_syms, concrete_runs, symbolic_run, norm, tool,
               dep_names=None):
    """concrete_runs: one {tensor: claim} per size set; symbolic_run: {tensor: claim}.
    dep_names: tensors left out of the size-only counts (default: those this tool shows as
    value-dependent)."""
    t = Tally()
    t.dep_names = set()
    for name in names:
        acts = [a[name] for a in actual]
        t.total += 1
        exact_both = True
        for i, run in enumerate(concrete_runs):
            claim = run.get(name)
            if claim is None and t.missing[-1:] != [name]:
                t.missing.append(name)
            sc = score_shape(claim, [acts[i]], [size_sets[i]], input_syms, norm)
            exact_both &= sc.exact
            t.wrong += [f"{tool} concrete {size_sets[i]}: {name}: {w}" for w in sc.wrong]
        t.count["conc"] += exact_both
        claim = symbolic_run.get(name)
        if claim is None and t.missing[-1:] != [name]:
            t.missing.append(name)
        sc = score_shape(claim, acts, size_sets, input_syms, norm)
        t.count["sym"] += sc.exact
        t.count["bounds"] += sc.bounds and not sc.wrong
        t.wrong += [f"{tool} symbolic: {name}: {w}" for w in sc.wrong]
        if not exact_both and not sc.dep:
            claims = [(run.get(name) or {}).get("shape") for run in concrete_runs]
            t.inexact.append(f"{name} {claims} (actual {acts[0]['shape']} / {acts[1]['shape']})")
        if sc.dep:
            t.dep_names.add(name)
        if name not in (t.dep_names if dep_names is None else dep_names):
            t.size_total += 1
            t.count["conc_sz"] += exact_both
            t.count["sym_sz"] += sc.exact
        if sc.dep:
            shape = claim["shape"]
            text = "[" + ", ".join(str(d) if isinstance(d, int) else d["expr"] for d in shape) + "]"
            t.valdep.append(f"{name} {text} (actual {acts[0]['shape']} / {acts[1]['shape']})")
    return t


def pct(n, total):
    return f"{100.0 * n / total:5.1f}%" if total else "    -"


def measure_model(name, args, size_sets):
    import onnx
    path = os.path.join(args.models_dir, name + ".onnx")
    if not os.path.exists(path):
        return None, f"{path} does not exist (scripts/make_dev_models.sh makes it)"
    loader = lambda: onnx.load(path)  # noqa: E731 - infer_shapes mutates the model it gets
    model = onnx.load(path, load_external_data=False)
    inputs = graph_inputs(model)
    consts = constant_tensors(model)
    del model
    input_syms = sorted({d for i in inputs for d in (i["dims"] or []) if isinstance(d, str)})
    missing_syms = [s for s in input_syms for z in size_sets if s not in z]
    if missing_syms:
        return None, f"size sets lack symbols {sorted(set(missing_syms))}"
    specs = [input_specs(inputs, z) for z in size_sets]
    actual = [ort_actual(path, sp, args.cache) for sp in specs]
    names = [n for n in actual[0] if n in actual[1]]
    if len(names) != len(actual[0]) or len(names) != len(actual[1]):
        print(f"  note: {name}: size sets report different tensors; scoring the {len(names)} common ones")
    n_const = sum(n in consts for n in names)
    if args.exclude_constants:
        names = [n for n in names if n not in consts]

    res = {"const": n_const}

    # shapeflow
    if args.shapeflow:
        runs, secs = [], []
        for sp in specs + [[]]:
            data, problem, sec = run_shapeflow(args.shapeflow, path, sp)
            secs.append(sec)
            if problem:
                t = Tally()
                t.total = len(names)
                t.failed = f"shapeflow {'--input ' + ' '.join(sp) if sp else '(symbolic)'}: {problem}"
                res["shapeflow"] = t
                break
            runs.append(data["tensors"])
        else:
            res["shapeflow"] = score_tool(names, actual, size_sets, input_syms, runs[:2], runs[2],
                                          normalise_shapeflow_dim, "shapeflow")
        res["shapeflow_secs"] = secs
    # ONNX's shape inference, its size-only counts over the same tensors as shapeflow's
    sf = res.get("shapeflow")
    deps = getattr(sf, "dep_names", None) if sf is not None and not sf.failed else None
    oc = [onnx_inferred(path, sp, args.cache, loader) for sp in specs]
    os_ = onnx_inferred(path, [], args.cache, loader)
    res["onnx"] = score_tool(names, actual, size_sets, input_syms, [r["tensors"] for r in oc], os_["tensors"],
                             normalise_onnx_dim, "onnx", dep_names=deps)
    res["onnx"].missing = []  # ONNX lists every node output; absent ones are non-tensors
    for r in oc + [os_]:
        if r["error"]:
            res["onnx"].failed = r["error"][:200]
    return res, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", help="comma-separated subset of the models in --sizes")
    default_exe = next((p for p in (os.path.join(ROOT, "build", "src", "cli", "shapeflow"),
                                    os.path.join(ROOT, "build", "shapeflow")) if os.path.exists(p)),
                       os.path.join(ROOT, "build", "src", "cli", "shapeflow"))
    ap.add_argument("--shapeflow", default=default_exe,
                    help="the shapeflow command (split on spaces); default build/src/cli/shapeflow")
    ap.add_argument("--no-shapeflow", action="store_true", help="only ONNX's inference vs onnxruntime")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "dev_models"))
    ap.add_argument("--sizes", default=os.path.join(HERE, "precision_sizes.json"))
    ap.add_argument("--cache", default=os.path.join(ROOT, ".cache", "precision"))
    ap.add_argument("--exclude-constants", action="store_true",
                    help="score only tensors that constant folding does not compute (see the const column)")
    ap.add_argument("--verbose", "-v", action="store_true", help="list value-dependent tensors in full")
    ap.add_argument("--json", dest="json_out", help="also write the figures as JSON here")
    ap.add_argument("--min-size-only", type=float, default=None, metavar="PCT",
                    help="exit 3 when shapeflow's size-only conc or sym is below PCT percent")
    args = ap.parse_args()
    args.shapeflow = None if args.no_shapeflow else args.shapeflow.split()
    with open(args.sizes) as f:
        sizes = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    models = list(sizes)
    if args.models:
        models = [m.strip() for m in args.models.split(",") if m.strip()]
        unknown = [m for m in models if m not in sizes]
        if unknown:
            raise SystemExit(f"no size sets for {unknown} in {args.sizes}")

    tools = (["shapeflow"] if args.shapeflow else []) + ["onnx"]
    head = f"{'model':<20}{'tensors':>8}{'const':>6}{'valdep':>7}"
    for tool in tools:
        head += f" | {tool[:9]:>9}{'conc':>7}{'sym':>7}{'bounds':>7}{'WRONG':>6}"
    print(head)
    print("-" * len(head))
    totals = {tool: Tally() for tool in tools}
    report, failures, errors, n_const = {}, [], [], 0
    for name in models:
        res, err = measure_model(name, args, sizes[name])
        if err:
            errors.append(f"{name}: {err}")
            print(f"{name:<20} skipped: {err}")
            continue
        first = res[tools[0]]
        n_const += res["const"]
        line = (f"{name:<20}{first.total:>8}{'-' if args.exclude_constants else res['const']:>6}"
                f"{len(res['shapeflow'].valdep) if 'shapeflow' in res else 0:>7}")
        for tool in tools:
            t = res[tool]
            totals[tool].add(t)
            if t.failed and tool == "shapeflow":
                line += f" | {'FAILED':>9}{'':>7}{'':>7}{'':>7}{'':>6}"
                failures.append(f"{name}: {t.failed}")
                continue
            line += (f" | {'':>9}{pct(t.count['conc'], t.total):>7}{pct(t.count['sym'], t.total):>7}"
                     f"{pct(t.count['bounds'], t.total):>7}{len(t.wrong):>6}")
        print(line, flush=True)
        report[name] = {"const": res["const"]}
        report[name].update({tool: {"tensors": res[tool].total, "size_only": res[tool].size_total,
                               "valdep": res[tool].valdep,
                               "wrong": res[tool].wrong, "missing": res[tool].missing,
                               "failed": res[tool].failed, **res[tool].count} for tool in tools})
        if "shapeflow_secs" in res:
            report[name]["shapeflow_secs"] = res["shapeflow_secs"]
        for tool in tools:
            t = res[tool]
            if t.failed and tool == "onnx":
                print(f"    onnx inference raised: {t.failed}")
            if t.missing and tool == "shapeflow":
                print(f"    shapeflow JSON lacks {len(t.missing)} node outputs (contract: every node output), "
                      f"e.g. {', '.join(t.missing[:3])}")
            for w in t.wrong[:20]:
                print(f"    WRONG {w}")
            if len(t.wrong) > 20:
                print(f"    ... {len(t.wrong) - 20} more WRONG for {tool}")
        for title, attr in (("value-dependent", "valdep"), ("not exact, not value-dependent", "inexact")):
            items = getattr(res["shapeflow"], attr) if "shapeflow" in res else []
            if not items:
                continue
            print(f"    {title} ({len(items)}{'' if args.verbose else ', -v lists all'}):")
            for d in (items if args.verbose else items[:3]):
                print(f"      {d}")
    print("-" * len(head))
    first = totals[tools[0]]
    line = (f"{'TOTAL':<20}{first.total:>8}{'-' if args.exclude_constants else n_const:>6}"
            f"{len(totals['shapeflow'].valdep) if 'shapeflow' in totals else 0:>7}")
    for tool in tools:
        t = totals[tool]
        line += (f" | {'':>9}{pct(t.count['conc'], t.total):>7}{pct(t.count['sym'], t.total):>7}"
                 f"{pct(t.count['bounds'], t.total):>7}{len(t.wrong):>6}")
    print(line)
    sz = totals[tools[0]].size_total
    line = f"{'size-only':<20}{sz:>8}{'':>6}{'':>7}"
    for tool in tools:
        t = totals[tool]
        line += (f" | {'':>9}{pct(t.count['conc_sz'], t.size_total):>7}"
                 f"{pct(t.count['sym_sz'], t.size_total):>7}{'':>7}{'':>6}")
    print(line)
    print("(size-only: the tensors whose sizes do not depend on input values, i.e. all but the "
          "value-dependent ones)")
    for f_ in failures:
        print(f"FAILED {f_}")
    for e in errors:
        print(f"SKIPPED {e}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(report, f, indent=1)
    if "shapeflow" in totals and totals["shapeflow"].wrong:
        return 1
    if failures or errors:
        return 2
    if args.min_size_only is not None and "shapeflow" in totals:
        t = totals["shapeflow"]
        for col in ("conc_sz", "sym_sz"):
            got = 100.0 * t.count[col] / t.size_total if t.size_total else 100.0
            if got < args.min_size_only:
                print(f"shapeflow size-only {col[:-3]} is {got:.1f}%, below --min-size-only {args.min_size_only}")
                return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
