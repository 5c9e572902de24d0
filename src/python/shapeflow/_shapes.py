"""A drop-in for `onnx.shape_inference.infer_shapes` and onnxruntime's symbolic shape inference:
a model in, the same model with the facts of every tensor in `value_info` out."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from . import _core
from ._core import Error

if TYPE_CHECKING:
    import onnx

Dim = Union[int, str, None]
# (node's first output, attribute name, index among its graphs): one step into a subgraph.
PathStep = Tuple[str, str, int]
ValueInfo = Tuple[str, str, int, Optional[List[Dim]], List[PathStep]]


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - the message is the point
        raise ImportError("shapeflow.infer_shapes returns an onnx.ModelProto: install onnx "
                          "(apt-get install python3-onnx, or pip install onnx)") from e
    return onnx


def _set_dim(proto: Any, dim: Dim) -> None:
    if isinstance(dim, int):
        proto.dim_value = dim
    elif isinstance(dim, str):
        proto.dim_param = dim


def _write_type(tensor_type: Any, elem_type: int, dims: Optional[List[Dim]]) -> None:
    """Our facts into a TypeProto.Tensor, replacing what it held."""
    tensor_type.Clear()
    tensor_type.elem_type = elem_type
    if dims is not None:
        shape = tensor_type.shape
        shape.SetInParent()  # a rank-0 tensor still has a shape
        for d in dims:
            _set_dim(shape.dim.add(), d)


def _fill_type(tensor_type: Any, elem_type: int, dims: Optional[List[Dim]], replace: bool) -> None:
    """Our facts into a declared TypeProto.Tensor: an unknown element type, rank or dim is filled
    in and a number replaces a declared name; with `replace` (a graph output, or an input the
    caller fixed) every dim we know is written (an output's declared name is the exporter's
    guess; the expression is what the graph computes). A declared number is never replaced."""
    if tensor_type.elem_type == 0:
        tensor_type.elem_type = elem_type
    if dims is None:
        return
    if not tensor_type.HasField("shape"):
        shape = tensor_type.shape
        shape.SetInParent()
        for d in dims:
            _set_dim(shape.dim.add(), d)
        return
    declared = tensor_type.shape.dim
    if len(declared) != len(dims):
        return
    for proto, d in zip(declared, dims):
        if d is None:
            continue
        if replace or not proto.HasField("dim_value") and (isinstance(d, int) or not proto.HasField("dim_param")):
            _set_dim(proto, d)


def _annotate(graph: Any, infos: Sequence[ValueInfo], fixed_inputs: Set[str]) -> None:
    """Writes the facts into `graph`: a value_info per computed tensor (in place of one the file
    had), the graph's outputs and inputs completed where they left something unknown."""
    inputs = {vi.name: vi for vi in graph.input}
    outputs = {vi.name: vi for vi in graph.output}
    initializers = {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    existing: Dict[str, Any] = {vi.name: vi for vi in graph.value_info}
    for name, kind, elem_type, dims, _ in infos:
        if elem_type == 0 or name in initializers:
            continue  # ONNX requires an element type in a value_info; weights are not annotated
        if kind == "input":
            if name in inputs and inputs[name].type.HasField("tensor_type"):
                _fill_type(inputs[name].type.tensor_type, elem_type, dims, name in fixed_inputs)
            continue
        if name in inputs:
            continue
        if name in outputs:
            vi = outputs[name]
            if not vi.type.HasField("sequence_type") and not vi.type.HasField("optional_type"):
                _fill_type(vi.type.tensor_type, elem_type, dims, True)
            continue
        vi = existing.get(name)
        if vi is None:
            vi = graph.value_info.add()
            vi.name = name
            existing[name] = vi
        elif vi.type.HasField("sequence_type") or vi.type.HasField("optional_type"):
            continue
        _write_type(vi.type.tensor_type, elem_type, dims)


def _subgraph(graph: Any, path: Sequence[PathStep]) -> Any:
    """The GraphProto `path` leads to from `graph`, or None when the file has no such graph."""
    for output, attr, index in path:
        node = next((n for n in graph.node if n.output and n.output[0] == output), None)
        if node is None:
            return None
        a = next((a for a in node.attribute if a.name == attr), None)
        if a is None:
            return None
        if a.HasField("g") and index == 0:
            graph = a.g
        elif index < len(a.graphs):
            graph = a.graphs[index]
        else:
            return None
    return graph


def _annotate_all(graph: Any, infos: Sequence[ValueInfo], fixed_inputs: Set[str]) -> None:
    """The model's graph and every subgraph the facts reach."""
    by_path: Dict[Tuple[PathStep, ...], List[ValueInfo]] = {}
    for info in infos:
        by_path.setdefault(tuple(tuple(step) for step in info[4]), []).append(info)  # type: ignore[misc]
    for path, entries in by_path.items():
        target = _subgraph(graph, path)
        if target is not None:
            _annotate(target, entries, fixed_inputs if not path else set())


def _infer(source: Any, inputs: Any, dims: Any, values: Any, strict: bool) -> List[ValueInfo]:
    from . import _python_terms, _ranges
    try:
        inference = _core.load(source).infer(inputs, _ranges(dims), values)
    except Error as e:
        raise Error(_python_terms(str(e))) from None
    if strict:
        problems = [str(d) for d in inference.diagnostics if d.severity in ("error", "assumption")]
        if problems:
            raise Error("inference is not exact (strict=True):\n  " + "\n  ".join(problems))
    return list(inference.value_infos())


def infer_shapes(model: Union["onnx.ModelProto", bytes, str, "os.PathLike[str]"], *,
                 dims: Optional[Mapping[str, Any]] = None, inputs: Optional[Mapping[str, Any]] = None,
                 values: Optional[Mapping[str, Any]] = None, strict: bool = False) -> "onnx.ModelProto":
    """The model with a value_info for every tensor a node computes, as
    `onnx.shape_inference.infer_shapes` returns it: dims are numbers where they are numbers and
    `dim_param` expressions of the input sizes where they depend on them (`(H - 1)//2 + 1`;
    an input's unnamed dim takes the name the expressions use, `x_d0`); graph outputs get what
    the graph computes (over a declared name), inputs what they left unknown, and `inputs=` fixes
    those inputs' dims; subgraphs (If branches, Loop and Scan bodies) are annotated alike;
    sequences and optionals get no tensor type. A dim known only as an interval is left unknown.
    The model given is not modified.

    `model`: an onnx.ModelProto, its bytes, or a path (weights stored as external data stay
    there and are not read). `dims`, `inputs`, `values`: as `Model.infer`. `strict`: an error when
    inference found errors or had to assume something (a named size is at least 1)."""
    onnx = _onnx()
    if isinstance(model, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
        source: Any = model
    elif isinstance(model, (bytes, bytearray, memoryview)):
        source = bytes(model)
        proto = onnx.load_from_string(source)
    else:
        source = os.fspath(model)
        proto = onnx.load(source, load_external_data=False)
    infos = _infer(source, inputs, dims, values, strict)
    _annotate_all(proto.graph, infos, set(inputs or {}))
    return proto


def infer_shapes_path(model_path: Union[str, "os.PathLike[str]"],
                      output_path: Union[str, "os.PathLike[str]", None] = None, *,
                      dims: Optional[Mapping[str, Any]] = None, inputs: Optional[Mapping[str, Any]] = None,
                      values: Optional[Mapping[str, Any]] = None, strict: bool = False) -> None:
    """`infer_shapes` from a file to a file (`output_path`: the input file when None), as
    `onnx.shape_inference.infer_shapes_path` does, for models of any size: weights stored as
    external data are never read, and the written model refers to the same data files by the
    same relative locations (write it into the model's folder, or copy the files beside it)."""
    src = os.fspath(model_path)
    dst = src if output_path is None else os.fspath(output_path)
    proto = infer_shapes(src, dims=dims, inputs=inputs, values=values, strict=strict)
    with open(dst, "wb") as f:
        f.write(proto.SerializeToString())
