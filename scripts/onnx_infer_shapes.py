#!/usr/bin/python3
"""ONNX's own shape inference, as the bar shapeflow's precision must meet or beat.

usage: onnx_infer_shapes.py MODEL [--input NAME=D0,D1,..]... [--dim SYM=N]... [--all] [-o OUT]

Runs onnx.shape_inference.infer_shapes(model, data_prop=True) after overriding the dims of the
inputs named with --input (or, with --dim, replacing a dim_param by a value everywhere among
the inputs) and prints JSON, one tensor per line, in node order:
  {"tensor": {"dtype": "float32", "shape": [1, "N", null], "producer": "node", "op": "Conv"}}
A dim is an int, a string (dim_param), or null (unknown); shape is null when the rank is unknown,
dtype null when the type is unknown. Every node output of the main graph is listed (unknown ones
too); --all adds the graph inputs. If inference raises, the error goes to stderr, the listing is
of the model as given (without inference) and the exit code is 1.
"""
import argparse
import json
import sys

import onnx

from expose_all_outputs import dtype_name  # the same dtype names as the ground truth


def describe(vi):
    """(dtype, shape) of a ValueInfoProto; non-tensor types report dtype as their kind."""
    if vi is None:
        return None, None
    kind = vi.type.WhichOneof("value")
    if kind is None:
        return None, None
    if kind != "tensor_type":
        return kind.replace("_type", ""), None
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return dtype_name(t.elem_type), None
    dims = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dtype_name(t.elem_type), dims


def parse_kv(text, flag):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"{flag} expects NAME=VALUE, got {text!r}")
    return name, value


def override_inputs(model, inputs, dims):
    initializers = {i.name for i in model.graph.initializer}
    known = {vi.name for vi in model.graph.input if vi.name not in initializers}
    for name in inputs:
        if name not in known:
            raise SystemExit(f"--input {name}: the model has no such input")
    for vi in model.graph.input:
        if vi.name in initializers or vi.type.WhichOneof("value") != "tensor_type":
            continue
        shape = vi.type.tensor_type.shape
        if vi.name in inputs:
            values = inputs[vi.name]
            if len(shape.dim) and len(shape.dim) != len(values):
                raise SystemExit(f"--input {vi.name}: model says rank {len(shape.dim)}, got {len(values)}")
            del shape.dim[:]
            for v in values:
                shape.dim.add().dim_value = v
            continue
        for d in shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                d.dim_value = dims[d.dim_param]  # setting the value clears the oneof's dim_param


def infer(model, inputs=None, dims=None, include_inputs=False):
    """Returns {tensor: {"dtype", "shape", "producer", "op"}} plus {"error": str} if inference failed."""
    override_inputs(model, inputs or {}, dims or {})
    error = None
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception as e:  # noqa: BLE001 - report, don't die: the comparison shows the gap
        error = f"{type(e).__name__}: {e}"
        inferred = model
    g = inferred.graph
    info = {vi.name: vi for vi in list(g.input) + list(g.value_info) + list(g.output)}
    result = {}
    if include_inputs:
        initializers = {i.name for i in g.initializer}
        for vi in g.input:
            if vi.name not in initializers:
                dtype, shape = describe(vi)
                result[vi.name] = {"dtype": dtype, "shape": shape, "producer": "", "op": ""}
    for i, node in enumerate(g.node):
        for name in node.output:
            if name:
                dtype, shape = describe(info.get(name))
                result[name] = {"dtype": dtype, "shape": shape, "producer": node.name or f"#{i}", "op": node.op_type}
    return result, error


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=DIMS")
    ap.add_argument("--dim", action="append", default=[], metavar="SYM=N")
    ap.add_argument("--all", action="store_true", help="also list the graph inputs")
    ap.add_argument("-o", dest="out")
    a = ap.parse_args()
    inputs = {}
    for text in a.input:
        name, value = parse_kv(text, "--input")
        try:
            inputs[name] = [int(v) for v in value.split(",")] if value else []
        except ValueError:
            raise SystemExit(f"--input {name}: dims must be integers, got {value!r}")
    dims = {}
    for text in a.dim:
        name, value = parse_kv(text, "--dim")
        dims[name] = int(value)
    model = onnx.load(a.model)
    result, error = infer(model, inputs, dims, a.all)
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in result.items()]
    if error:
        sys.stderr.write(f"onnx_infer_shapes: {error}\n")
    text = "{\n" + ",\n".join(lines) + "\n}\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 1 if error else 0


if __name__ == "__main__":
    sys.exit(main())
