#!/usr/bin/python3
"""Rewrites an ONNX model so that every node output of the main graph is also a graph output.

onnxruntime returns only graph outputs; scripts/ort/actual_shapes.js runs the rewritten model to
see the actual shape and dtype of every tensor. The added outputs carry no type (a ValueInfoProto
with just a name), so that nothing we add can disagree with what the runtime computes.

Outputs that are not tensors (sequences, optionals, maps) cannot be fetched by onnxruntime-node;
they are left out and listed in the sidecar. The sidecar OUT.json also describes the graph inputs
(name, dtype, dims with dim_param names) so that the runner can build feeds from symbol values.

With --every K only every K-th node output is exposed: the others stay inside the graph, so that
an executor keeps its own layouts for them (a graph output is always plain) while the exposed ones
check what came before them.

usage: expose_all_outputs.py MODEL OUT.onnx [--every K]     (writes OUT.onnx and OUT.onnx.json)
"""
import json
import sys

import onnx
from onnx import TensorProto

# Ops whose outputs are never tensors, so they are skipped even without type information.
NON_TENSOR_OPS = {
    "SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase", "SplitToSequence",
    "Optional", "ZipMap",
}


def dtype_name(elem_type):
    if elem_type == TensorProto.UNDEFINED:
        return None
    name = TensorProto.DataType.Name(elem_type).lower()
    return {"float": "float32", "double": "float64"}.get(name, name)


def describe_input(vi):
    t = vi.type.tensor_type
    dims = None
    if t.HasField("shape"):
        dims = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.HasField("dim_param"):
                dims.append(d.dim_param)
            else:
                dims.append(None)
    return {"name": vi.name, "dtype": dtype_name(t.elem_type), "dims": dims}


def non_tensor_names(model):
    """Names whose inferred type is not a tensor (best effort: inference may fail on odd models)."""
    names = set()
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False)
    except Exception:  # noqa: BLE001 - a model inference cannot handle still gets exposed
        return names
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        kind = vi.type.WhichOneof("value")
        if kind is not None and kind != "tensor_type":
            names.add(vi.name)
    return names


def expose(model, every=1):
    graph = model.graph
    initializer_names = {i.name for i in graph.initializer}
    input_names = {i.name for i in graph.input}
    existing = {o.name for o in graph.output}
    skip = non_tensor_names(model)
    added, skipped = [], []
    seen = 0
    for node in graph.node:
        for name in node.output:
            if not name or name in existing:
                continue
            existing.add(name)
            if node.op_type in NON_TENSOR_OPS or name in skip:
                skipped.append(name)
                continue
            if name in initializer_names or name in input_names:  # malformed, but don't make it worse
                skipped.append(name)
                continue
            seen += 1
            if seen % every:
                continue
            graph.output.append(onnx.ValueInfoProto(name=name))
            added.append(name)
    inputs = [describe_input(vi) for vi in graph.input if vi.name not in initializer_names]
    return {"inputs": inputs, "added": len(added), "skipped": skipped,
            "node_outputs": [n for node in graph.node for n in node.output if n]}


def main(argv):
    every = 1
    if len(argv) == 5 and argv[3] == "--every" and argv[4].isdigit() and int(argv[4]) > 0:
        every = int(argv[4])
    elif len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    model = onnx.load(argv[1])
    info = expose(model, every)
    # Models above 2 GB would need external data; the dev corpus stays below that.
    onnx.save(model, argv[2])
    with open(argv[2] + ".json", "w") as f:
        json.dump(info, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
