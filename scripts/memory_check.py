#!/usr/bin/python3
"""`shapeflow memory` checked from outside, on decoders with a KV cache and on models without one.

For each model and each binding of its sizes:
  * the KV cache pairs found are exactly the ones listed here (written by hand from the model);
  * weights: the bytes of the file's initializers and Constant nodes, counted with onnx
    (4-bit types two to a byte);
  * the KV cache bytes: the pairs' inputs at the binding plus their outputs at the shapes
    onnxruntime returns when it runs the model at those sizes;
  * inputs and outputs: the other inputs and outputs, the same way;
  * activations: the peak of `shapeflow plan --caller-owned-io` placed at the binding
    (`--reference`), evaluated here from its JSON expressions, and that plan accepted by
    `shapeflow check-plan`;
  * `--fit`: for random budgets, the total at the answer is within the budget and the total at
    the answer + 1 is not (or the model refuses the answer + 1), both read from `memory` rows.

usage: /usr/bin/python3 scripts/memory_check.py [--shapeflow build/src/cli/shapeflow] [--only a,b]
       [--budgets 6] [--seed 1]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import sfexpr  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# model: (path, {cache input: cache output}, bindings, ties, the symbol --fit searches)
MODELS = {
    "gpt_past": ("dev_models/extra/gpt_past.onnx", {"past_k": "249"},
                 [{"B": 1, "S": 3, "P": 0}, {"B": 2, "S": 1, "P": 5}], [], "P"),
    "builder_decoder": ("dev_models/extra/builder_decoder.onnx",
                        {f"past_key_values.{i}.{kv}": f"present.{i}.{kv}" for i in (0, 1) for kv in ("key", "value")},
                        [{"batch_size": 1, "sequence_length": 3, "past_sequence_length": 0},
                         {"batch_size": 2, "sequence_length": 1, "past_sequence_length": 5}],
                        ["total_sequence_length=past_sequence_length+sequence_length"], "past_sequence_length"),
    "llama_decoder": ("dev_models/extra/llama_decoder.onnx",
                      {f"past_key_values.{i}.{kv}": f"present.{i}.{kv}" for i in (0, 1) for kv in ("key", "value")},
                      [{"batch_size": 1, "sequence_length": 4, "past_sequence_length": 0},
                       {"batch_size": 2, "sequence_length": 1, "past_sequence_length": 9}], [], "past_sequence_length"),
    "encdec_step": ("dev_models/extra/encdec_step.onnx",
                    {f"past_key_values.{i}.decoder.{kv}": f"present.{i}.decoder.{kv}" for i in (0, 1)
                     for kv in ("key", "value")},
                    [{"batch_size": 1, "sequence_length": 1, "encoder_sequence_length": 30, "past_sequence_length": 0},
                     {"batch_size": 2, "sequence_length": 1, "encoder_sequence_length": 30, "past_sequence_length": 12}],
                    [], "past_sequence_length"),
    "attention23_decoder": ("dev_models/extra/attention23_decoder.onnx",
                            {f"past_key_values.{i}.{kv}": f"present.{i}.{kv}" for i in (0, 1) for kv in ("key", "value")},
                            [{"batch_size": 1, "sequence_length": 4, "past_sequence_length": 0},
                             {"batch_size": 2, "sequence_length": 1, "past_sequence_length": 9}], [],
                            "past_sequence_length"),
    "bert_tiny": ("dev_models/bert_tiny.onnx", {}, [{"B": 1, "S": 16}, {"B": 2, "S": 7}], [], "S"),
    "resnet18": ("dev_models/resnet18.onnx", {}, [{"N": 1, "H": 224, "W": 224}, {"N": 2, "H": 96, "W": 128}], [], "N"),
}

ITEMSIZE = {onnx.TensorProto.FLOAT: 4, onnx.TensorProto.FLOAT16: 2, onnx.TensorProto.DOUBLE: 8,
            onnx.TensorProto.INT64: 8, onnx.TensorProto.INT32: 4, onnx.TensorProto.INT16: 2,
            onnx.TensorProto.INT8: 1, onnx.TensorProto.UINT8: 1, onnx.TensorProto.BOOL: 1,
            onnx.TensorProto.UINT16: 2, onnx.TensorProto.UINT32: 4, onnx.TensorProto.UINT64: 8,
            onnx.TensorProto.BFLOAT16: 2}
DTYPE_SIZE = {"float32": 4, "float16": 2, "float64": 8, "int64": 8, "int32": 4, "int8": 1, "uint8": 1,
              "bool": 1, "int16": 2, "uint16": 2}


def tensor_bytes(t):
    n = int(np.prod(t.dims)) if len(t.dims) else 1
    # INT4 = 22, UINT4 = 21, FLOAT4E2M1 = 23 (by number: Debian's onnx predates them)
    if t.data_type in (21, 22, 23):
        return (n + 1) // 2
    return n * ITEMSIZE[t.data_type]


def weight_bytes(model):
    total = sum(tensor_bytes(t) for t in model.graph.initializer)
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    total += tensor_bytes(a.t)
                elif a.name in ("value_int", "value_float"):
                    total += 8 if a.name == "value_int" else 4
                elif a.name in ("value_ints", "value_floats"):
                    total += (8 if a.name == "value_ints" else 4) * len(a.ints or a.floats)
    return total


def input_bytes(model, binding):
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        n = 1
        for d in tt.shape.dim:
            n *= d.dim_value if d.HasField("dim_value") else binding[d.dim_param]
        out[vi.name] = n * ITEMSIZE[tt.elem_type]
    return out


def ort_output_bytes(path, model, binding):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    args = ["node", os.path.join(HERE, "ort", "actual_shapes.js"), path, "-o", out]
    for k, v in binding.items():
        args += ["--dim", f"{k}={v}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"onnxruntime: {r.stderr.strip()[:300]}")
    shapes = json.load(open(out))
    os.unlink(out)
    result = {}
    for o in model.graph.output:
        s = shapes[o.name]
        result[o.name] = int(np.prod(s["shape"])) * DTYPE_SIZE[s["dtype"]] if s["shape"] else DTYPE_SIZE[s["dtype"]]
    return result


def at_arg(binding):
    return ",".join(f"{k}={v}" for k, v in binding.items())


def memory(exe, path, bindings, ties, extra=()):
    args = [exe, "memory", path, "--json"]
    for b in bindings:
        args += ["--at", at_arg(b)]
    for t in ties:
        args += ["--tie", t]
    r = subprocess.run(args + list(extra), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"shapeflow memory: {r.stderr.strip()[:300]}")
    return json.loads(r.stdout)


def plan_peak(exe, path, reference, binding):
    """The plan's peak at `binding` from its JSON, and whether check-plan accepts the plan."""
    # The verifier checks a plan over a bounded domain: each size up to twice the reference.
    dims = [f"--dim={k}={0 if binding[k] == 0 else 1}..{max(2 * v, 2)}" for k, v in reference.items()]
    r = subprocess.run([exe, "plan", path, "--caller-owned-io", "--reference", at_arg(reference), "--json"] + dims,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"shapeflow plan: {r.stderr.strip()[:300]}")
    plan = json.loads(r.stdout)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(r.stdout)
    check = subprocess.run([exe, "check-plan", f.name], capture_output=True, text=True)
    os.unlink(f.name)
    values = dict(binding)
    derived = plan.get("derived", {})

    def value(d):
        if isinstance(d, int):
            return d
        names = [n for n in derived if n in d["expr"] and n not in values]
        for n in sorted(names, key=lambda n: int(n.strip("_o")) if n.startswith("_o") and n[2:].isdigit() else 0):
            values[n] = value(derived[n])
        return sfexpr.evaluate(d["expr"], values)

    for n in derived:  # definitions in order; each may use the ones before it
        if n not in values:
            values[n] = value(derived[n])
    return value(plan["peak"]), check.returncode == 0


def check_model(exe, name, spec, budgets, rng):
    path, pairs, bindings, ties, fit_symbol = spec
    model = onnx.load(os.path.join(ROOT, path))
    problems = []
    report = memory(exe, path, bindings, ties)
    found = {p["input"]: p["output"] for p in report["kv_cache"]}
    if found != pairs:
        problems.append(f"cache pairs {found}, expected {pairs}")
    if report["weights"]["bytes"] != weight_bytes(model):
        problems.append(f"weights {report['weights']['bytes']}, the file's {weight_bytes(model)}")
    for row in report["rows"]:
        at = row["at"]
        ins, outs = input_bytes(model, at), ort_output_bytes(os.path.join(ROOT, path), model, at)
        kv = sum(ins[i] + outs[o] for i, o in pairs.items())
        io = sum(v for k, v in ins.items() if k not in pairs) + sum(v for k, v in outs.items() if k not in pairs.values())
        if row["kv_cache"] != kv:
            problems.append(f"at {at}: kv cache {row['kv_cache']}, onnxruntime's {kv}")
        if row["io"] != io:
            problems.append(f"at {at}: inputs and outputs {row['io']}, onnxruntime's {io}")
        peak, accepted = plan_peak(exe, path, at, at)
        if row["activations"] != peak:
            problems.append(f"at {at}: activations {row['activations']}, the plan's peak {peak}")
        if not accepted:
            problems.append(f"at {at}: check-plan refuses the plan")
        if row["total"] != row["weights"] + row["kv_cache"] + row["activations"] + row["io"]:
            problems.append(f"at {at}: total {row['total']} is not the sum of the parts")
    # --fit at random budgets between the first row's total and 64 times it.
    base = bindings[0]
    first_total = report["rows"][0]["total"]
    fits = 0
    for _ in range(budgets):
        budget = rng.randint(first_total, 64 * first_total)
        j = memory(exe, path, [base], ties, ["--fit", str(budget), "--for", fit_symbol])
        ans = j["fit"]["max"]
        if ans is None:
            continue
        fits += 1
        at = dict(base)
        at[fit_symbol] = ans
        inside = memory(exe, path, [at], ties)["rows"][0]["total"]
        if inside > budget:
            problems.append(f"--fit {budget}: {fit_symbol} = {ans} totals {inside}, past the budget")
        at[fit_symbol] = ans + 1
        try:
            past = memory(exe, path, [at], ties)["rows"][0]["total"]
            if past <= budget:
                problems.append(f"--fit {budget}: {fit_symbol} = {ans + 1} totals {past}, within the budget")
        except RuntimeError:
            pass  # the model refuses the next size: the answer is its largest
    return problems, len(report["rows"]), fits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default="build/src/cli/shapeflow")
    ap.add_argument("--only", default="")
    ap.add_argument("--budgets", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    names = a.only.split(",") if a.only else list(MODELS)
    failed = 0
    for name in names:
        spec = MODELS[name]
        if not os.path.exists(os.path.join(ROOT, spec[0])):
            print(f"{name}: MISSING {spec[0]}")
            failed += 1
            continue
        problems, rows, fits = check_model(a.shapeflow, name, spec, a.budgets, rng)
        print(f"{name}: {rows} bindings, {fits} budgets fitted: {'ok' if not problems else 'FAILED'}")
        for p in problems:
            print("  " + p)
        failed += bool(problems) or rows == 0 or fits == 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
