#!/usr/bin/python3
"""A stand-in for `shapeflow infer MODEL --json` built from onnxruntime's actual shapes, to test
scripts/precision.py before shapeflow's ONNX front end exists. It speaks the CLI's JSON contract:

  fake_shapeflow.py infer MODEL [--input NAME=DIMS]... [--dim SYM=LO..HI]... [--json]

With --input it runs the model at those sizes and prints every dim as a number. Without, it runs
the model at both size sets of scripts/precision_sizes.json and, per dim, prints a number when
both agree, else the first simple expression of the input symbols that fits both points
(S, 2*S, (H + 1)//2, B*S, ...), else a fresh non-input symbol (what a data-dependent dim looks
like). So the symbolic answer fits the two points by construction: that is the scorer's
test, not a claim about models.

Fault injection for the scorer's own test: FAKE_SHAPEFLOW_WRONG=K adds 1 to the last dim of the
K-th (0-based) node output of rank >= 1; FAKE_SHAPEFLOW_DTYPE=K reports the K-th output as int8.
"""
import itertools
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)


def actual(model, specs):
    cache = os.environ.get("SHAPEFLOW_ORT_CACHE", os.path.join(ROOT, ".cache", "precision", "ort-models"))
    cmd = ["node", os.path.join(SCRIPTS, "ort", "actual_shapes.js"), model, "--cache", cache]
    for s in specs:
        cmd += ["--input", s]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def candidates(syms):
    """Simple expressions first; each is (text, function of a symbol dict)."""
    ks = [2, 4, 8, 16, 32, 64]
    out = []
    for s in syms:
        out.append((s, lambda z, s=s: z[s]))
    for s in syms:
        for k in range(2, 4097):
            out.append((f"{k}*{s}", lambda z, s=s, k=k: k * z[s]))
    for s in syms:
        for k in ks:
            for c in range(-k, k):
                text = f"({s} + {c})//{k}" if c > 0 else (f"({s} - {-c})//{k}" if c < 0 else f"{s}//{k}")
                out.append((text, lambda z, s=s, k=k, c=c: (z[s] + c) // k))
    for a, b in itertools.combinations(syms, 2):
        for k in range(1, 4097):
            pre = "" if k == 1 else f"{k}*"
            out.append((f"{pre}{a}*{b}", lambda z, a=a, b=b, k=k: k * z[a] * z[b]))
    for s in syms:
        for c in range(-8, 9):
            if c:
                out.append((f"{s} {'+' if c > 0 else '-'} {abs(c)}", lambda z, s=s, c=c: z[s] + c))
    return out


def fit(values, size_sets, cands, fresh, memo):
    if all(v == values[0] for v in values):
        return values[0]
    key = tuple(values)
    if key not in memo:
        memo[key] = next((text for text, f in cands if all(f(z) == v for z, v in zip(size_sets, values))), None)
    return {"expr": memo[key] or fresh(), "min": 0, "max": None}


def model_facts(model):
    import onnx
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    producers = {}
    for i, n in enumerate(m.graph.node):
        for o in n.output:
            if o:
                producers[o] = (n.name or f"#{i}", n.op_type)
    inputs = [vi for vi in m.graph.input if vi.name not in inits]
    syms = sorted({d.dim_param for vi in inputs for d in vi.type.tensor_type.shape.dim if d.dim_param})
    from precision import graph_inputs
    return [vi.name for vi in inputs], [o.name for o in m.graph.output], producers, syms, graph_inputs(m)


def main(argv):
    if len(argv) < 3 or argv[1] != "infer":
        sys.stderr.write(__doc__)
        return 2
    model, specs, i = argv[2], [], 3
    while i < len(argv):
        if argv[i] == "--input":
            specs.append(argv[i + 1]); i += 2
        elif argv[i] == "--dim":
            i += 2  # ranges only narrow bounds; the fake does not use them
        elif argv[i] == "--json":
            i += 1
        else:
            sys.stderr.write(f"fake_shapeflow: unknown argument {argv[i]}\n")
            return 2
    inputs, outputs, producers, syms, inputs_desc = model_facts(model)
    symbols = {}
    if specs:
        act = actual(model, specs)
        shapes = {n: t["shape"] for n, t in act.items()}
    else:
        with open(os.path.join(SCRIPTS, "precision_sizes.json")) as f:
            size_sets = json.load(f)[os.path.basename(model)[:-5]]
        from precision import input_specs
        acts = [actual(model, input_specs(inputs_desc, z)) for z in size_sets]
        act = acts[0]
        cands = candidates(syms)
        counter, memo = itertools.count(), {}
        fresh_names = []

        def fresh():
            fresh_names.append(f"u{next(counter)}")
            return fresh_names[-1]
        shapes = {}
        for n in act:
            if not all(n in a and len(a[n]["shape"]) == len(act[n]["shape"]) for a in acts):
                shapes[n] = None  # rank differs with the sizes: unknown rank
                continue
            shapes[n] = [fit([a[n]["shape"][k] for a in acts], size_sets, cands, fresh, memo)
                         for k in range(len(act[n]["shape"]))]
        symbols = {s: {"min": 1, "max": None} for s in syms}
        symbols.update({u: {"min": 0, "max": None} for u in fresh_names})
    tensors = {}
    wrong_k = int(os.environ.get("FAKE_SHAPEFLOW_WRONG", "-1"))
    dtype_k = int(os.environ.get("FAKE_SHAPEFLOW_DTYPE", "-1"))
    ranked = 0
    for k, (n, t) in enumerate(act.items()):
        shape = shapes[n]
        dtype = t["dtype"]
        if shape:
            if ranked == wrong_k:
                d = shape[-1]
                shape[-1] = d + 1 if isinstance(d, int) else {**d, "expr": f"{d['expr']} + 1"}
            ranked += 1
        if k == dtype_k:
            dtype = "int8"
        producer, op = producers.get(n, ("", ""))
        tensors[n] = {"dtype": dtype, "shape": shape, "producer": producer, "op": op}
    print(json.dumps({"model": model, "symbols": symbols, "inputs": inputs, "outputs": outputs,
                      "tensors": tensors, "diagnostics": []}))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, SCRIPTS)
    sys.exit(main(sys.argv))
