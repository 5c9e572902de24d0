"""shapeflow: the element type and shape of every tensor of a neural network (ONNX), before it
runs: numbers, symbolic expressions of the input sizes (`(H - 1)//2 + 1`) or bounded intervals,
and the small integer values shape subgraphs compute; on those facts, the input sizes a model
accepts, its work and memory, one static memory plan for every input size, and a reference run.

    import shapeflow
    m = shapeflow.load("model.onnx")          # a path, bytes or an onnx.ModelProto
    r = m.infer(dims={"N": (1, 64)})
    r.tensors["logits"].shape                 # [Dim('N', min=1, max=64), 1000]
    shapeflow.infer_shapes(model)             # a drop-in for onnx.shape_inference.infer_shapes

Every error of the library is raised as `shapeflow.Error`.
"""
from __future__ import annotations

import functools
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from . import _core
from ._core import Diagnostic, Dim, Error, Tensor
from ._reports import (SVG, Buffer, CheckResult, Contract, ContractSymbol, Expression, GraphCensus, Lowering, Memory,
                       MemoryRow, NodeStats, Plan, Quantity, RangePlan, RangePlans, Requirement, Sample, SimplifyReport,
                       Stats, SymbolRange, Totals)
from ._shapes import infer_shapes, infer_shapes_path

if TYPE_CHECKING:
    import numpy as np
    import onnx

__version__: str = _core.__version__

__all__ = [
    "__version__", "load", "Model", "Inference", "Tensor", "Dim", "Diagnostic", "Error", "infer_shapes",
    "infer_shapes_path", "Stats", "Totals", "NodeStats", "Plan", "Buffer", "Memory", "MemoryRow", "Contract",
    "ContractSymbol", "Requirement", "CheckResult", "Sample", "Lowering", "Expression", "Quantity", "SymbolRange",
    "SVG", "main", "simplify", "Simplified", "SimplifyReport", "GraphCensus", "RangePlan", "RangePlans",
]

ModelSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, "onnx.ModelProto", Any]
# A symbol's range: (lo, hi) with None for an open end, one size, or "lo..hi".
DimRange = Union[Tuple[Optional[int], Optional[int]], int, str]
Dims = Mapping[str, DimRange]
# An input's shape: sizes and symbol names (None for unknown), or "N,3,H,W".
InputShapes = Mapping[str, Union[Sequence[Union[int, str, None]], str]]
# An integer input's elements: ints and symbol names, or "1,N".
InputValues = Mapping[str, Union[Sequence[Union[int, str]], int, str]]
Binding = Mapping[str, int]

_F = TypeVar("_F", bound=Callable[..., Any])

# The library's messages name the command line's options; a Python caller gives keyword arguments.
_TERMS: List[Tuple[str, Callable[["re.Match[str]"], str]]] = [
    (r"--dim (\w+)=(\d*)\.\.(\d*)",
     lambda m: f"dims={{'{m.group(1)}': ({m.group(2) or 0}, {m.group(3) or 'None'})}}"),
    (r"--dim (\w+)=(\d+)\b", lambda m: f"dims={{'{m.group(1)}': {m.group(2)}}}"),
    (r"--dim SYM=LO\.\.HI", lambda m: "dims={'SYM': (lo, hi)}"),
    (r"--at (\w+)=(\d+)", lambda m: f"at={{'{m.group(1)}': {m.group(2)}}}"),
    (r"--dim\b", lambda m: "dims="),
    (r"--at\b", lambda m: "at="),
    (r"--input\b", lambda m: "inputs="),
    (r"--value\b", lambda m: "values="),
    (r"--feed\b", lambda m: "the arrays given"),
    (r"--max-memory\b", lambda m: "max_memory="),
]


def _python_terms(message: str) -> str:
    for pattern, replace in _TERMS:
        message = re.sub(pattern, replace, message)
    return message


def _translated(f: _F) -> _F:
    """Errors raised with the options named as a Python caller gives them."""

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except Error as e:
            raise Error(_python_terms(str(e))) from None

    return call  # type: ignore[return-value]


def _ranges(dims: Optional[Dims]) -> Optional[Dict[str, Any]]:
    if dims is None:
        return None
    out: Dict[str, Any] = {}
    for k, v in dims.items():
        if isinstance(v, range):
            out[k] = (v.start, v.stop - 1)
        else:
            out[k] = v
    return out


def _bindings(at: Union[None, Binding, Sequence[Binding]]) -> List[Dict[str, int]]:
    if at is None:
        return []
    if isinstance(at, Mapping):
        return [dict(at)]
    return [dict(b) for b in at]


class Inference:
    """The facts of one inference of a model, and the answers built on them."""

    def __init__(self, core: Any) -> None:
        self._core = core

    @property
    def tensors(self) -> Dict[str, Tensor]:
        """{name: Tensor} for every tensor a node computes."""
        return dict(self._core.tensors)

    @property
    def diagnostics(self) -> List[Diagnostic]:
        """Errors, warnings and the assumptions inference made."""
        return list(self._core.diagnostics)

    @property
    def errors(self) -> List[Diagnostic]:
        """The errors among the diagnostics."""
        return list(self._core.errors)

    def json(self, names: bool = True) -> Dict[str, Any]:
        """The object `shapeflow infer --json` prints (names=False: `--no-names`, every dim in full)."""
        return dict(self._core.json(names))

    def text(self, names: bool = True) -> str:
        """The listing `shapeflow infer` prints."""
        return str(self._core.text(names))

    def annotated_model(self) -> bytes:
        """The model's bytes with a value_info for every inferred tensor (what `--out` writes)."""
        return bytes(self._core.annotated_model())

    def value_infos(self) -> List[Tuple[str, str, int, Optional[List[Union[int, str, None]]], List[Tuple[str, str, int]]]]:
        """[(name, 'input' | 'tensor', ONNX elem_type, dims, path)]: a dim an int, an expression's
        text or None; `path` leads to a subgraph ([(node's first output, attribute, index)])."""
        return list(self._core.value_infos())

    @_translated
    def stats(self, at: Union[None, Binding, Sequence[Binding]] = None) -> Stats:
        """Work and traffic (`shapeflow stats`): `at` a {symbol: size}, or a list of them (rows)."""
        arg: Any = None if at is None else (dict(at) if isinstance(at, Mapping) else [dict(b) for b in at])
        j = self._core.stats(arg)
        return Stats(j, lambda: str(self._core.stats(arg, svg=True)))

    @_translated
    def plan(self, *, align: int = 64, order: str = "model", caller_owned_io: bool = False,
             reference: Optional[Binding] = None, at: Optional[Binding] = None) -> Plan:
        """One static memory plan valid at every admitted size (`shapeflow plan`)."""
        args = (align, order, caller_owned_io, dict(reference or {}), dict(at or {}))
        j = self._core.plan(*args)
        return Plan(j, lambda: str(self._core.plan(*args, svg=True)))

    @_translated
    def why(self, tensor: str, axis: Optional[int] = None) -> str:
        """How a tensor's dim was derived, op by op, back to the inputs (`shapeflow why`)."""
        return str(self._core.why(tensor if axis is None else f"{tensor}[{axis}]"))

    @_translated
    def lower(self, stage: str = "shapes") -> Lowering:
        """Shapes lowered to explicit values (`shapes`), their upper bounds (`bounds`), or buffers
        and lifetimes (`buffers`): `shapeflow lower --stage STAGE`."""
        return Lowering(self._core.lower(stage), stage)

    def _repr_html_(self) -> str:
        import html
        rows = []
        for name, t in list(self.tensors.items())[:500]:
            shape = "?" if t.shape is None else "[" + ", ".join(str(d) for d in t.shape) + "]"
            rows.append(f"<tr><td>{html.escape(name)}</td><td>{html.escape(t.op)}</td><td>{html.escape(t.dtype)}</td>"
                        f"<td>{html.escape(shape)}</td></tr>")
        errors = "".join(f"<p>{html.escape(str(d))}</p>" for d in self.errors)
        return ("<table><thead><tr><th>tensor</th><th>op</th><th>type</th><th>shape</th></tr></thead><tbody>" +
                "".join(rows) + "</tbody></table>" + errors)

    def __repr__(self) -> str:
        return f"<shapeflow.Inference of {len(self._core.tensors)} tensors, {len(self.errors)} errors>"


class Model:
    """A loaded model: inference, the questions that take several inferences, and runs."""

    def __init__(self, core: Any) -> None:
        self._core = core

    @property
    def inputs(self) -> List[Tensor]:
        """The graph's inputs as the model declares them (weights left out)."""
        return list(self._core.inputs)

    @property
    def outputs(self) -> List[Tensor]:
        """The graph's outputs as the model declares them."""
        return list(self._core.outputs)

    @_translated
    def infer(self, inputs: Optional[InputShapes] = None, dims: Optional[Dims] = None,
              values: Optional[InputValues] = None) -> Inference:
        """Infers every tensor's facts: inputs={'x': ['N', 3, 'H', 'W']}, dims={'N': (1, 64)},
        values={'k': [3]}."""
        return Inference(self._core.infer(inputs, _ranges(dims), values))

    @_translated
    def contract(self, inputs: Optional[InputShapes] = None, dims: Optional[Dims] = None,
                 values: Optional[InputValues] = None) -> Contract:
        """The input sizes the model accepts, with the node behind each requirement."""
        return Contract(self._core.contract(inputs, _ranges(dims), values))

    @_translated
    def memory(self, at: Union[None, Binding, Sequence[Binding]] = None, *, ties: Sequence[str] = (),
               fit: Union[None, int, str] = None, for_: Optional[str] = None, part: str = "total",
               inputs: Optional[InputShapes] = None, dims: Optional[Dims] = None,
               values: Optional[InputValues] = None, align: int = 64) -> Memory:
        """Weights, KV cache, activations, inputs and outputs at each binding of `at`; with
        `fit` (bytes or '8GiB') and `for_` (a symbol), the largest size whose `part` fits."""
        return Memory(self._core.memory(_bindings(at), list(ties), fit, for_, part, inputs, _ranges(dims), values,
                                        align))

    @_translated
    def plan_ranges(self, max_ratio: float = 1.05, *, max_ranges: int = 8, align: int = 64, order: str = "model",
                    caller_owned_io: bool = False, inputs: Optional[InputShapes] = None,
                    dims: Optional[Dims] = None, values: Optional[InputValues] = None) -> RangePlans:
        """Memory plans per range of the sizes, each within `max_ratio` of the lower bound at the
        sizes the model admits in its range (`shapeflow plan --max-ratio`)."""
        return RangePlans(self._core.plan_ranges(max_ratio, max_ranges, align, order, caller_owned_io, inputs,
                                                 _ranges(dims), values))

    @_translated
    def check(self, samples: int = 4, at: Union[None, Binding, Sequence[Binding]] = None, *,
              max_memory: int = 0, dims: Optional[Dims] = None) -> CheckResult:
        """The inference checked against runs of the executor at sample sizes (`shapeflow check`)."""
        return CheckResult(self._core.check(samples, _bindings(at), max_memory, _ranges(dims)))

    @_translated
    def run(self, inputs: Mapping[str, "np.ndarray"], *, dims: Optional[Dims] = None,
            max_memory: int = 0) -> Dict[str, Any]:
        """Runs the model on numpy arrays with the reference executor: {output name: array}
        (a sequence output is a list of arrays, an empty optional None). The model is prepared
        once for each set of input sizes (the last 4 are kept): a loop at one size prepares it
        once."""
        return dict(self._core.run(dict(inputs), max_memory, _ranges(dims)))

    @property
    def prepared_runs(self) -> int:
        """How many times run() has prepared the model (once per new set of input sizes)."""
        return int(self._core.prepared_runs)

    @_translated
    def simplify(self, *, inputs: Optional[InputShapes] = None, dims: Optional[Dims] = None,
                 values: Optional[InputValues] = None, fold_limit: int = 1 << 20) -> "Simplified":
        """A smaller equivalent model that stays dynamic (`shapeflow simplify`): constants and
        shape computations folded from the facts, no-ops, dead and duplicate nodes removed."""
        data, report = self._core.simplify(inputs, _ranges(dims), values, fold_limit)
        return Simplified(bytes(data), SimplifyReport(report))

    def __repr__(self) -> str:
        names = ", ".join(t.name for t in self.inputs)
        return f"<shapeflow.Model with inputs {names}>"


class Simplified:
    """A simplified model: its bytes, the onnx.ModelProto they make (when onnx is installed) and
    the report of what changed."""

    def __init__(self, data: bytes, report: SimplifyReport) -> None:
        self.bytes = data
        self.report = report

    @property
    def model(self) -> "onnx.ModelProto":
        """The simplified model as an onnx.ModelProto (needs onnx)."""
        import onnx
        return onnx.load_from_string(self.bytes)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the model's bytes to `path`."""
        with open(path, "wb") as f:
            f.write(self.bytes)

    def _repr_html_(self) -> str:
        return self.report._repr_html_()


def simplify(model: ModelSource, *, inputs: Optional[InputShapes] = None, dims: Optional[Dims] = None,
             values: Optional[InputValues] = None, fold_limit: int = 1 << 20) -> Simplified:
    """`shapeflow simplify` on a model (a path, bytes or an onnx.ModelProto): `.bytes`,
    `.model` (an onnx.ModelProto), `.report`, `.save(path)`."""
    return load(model).simplify(inputs=inputs, dims=dims, values=values, fold_limit=fold_limit)


@_translated
def load(model: ModelSource) -> Model:
    """Loads a model: a path, bytes, or an object with SerializeToString (onnx.ModelProto)."""
    return Model(_core.load(model))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The `shapeflow` command line (`python -m shapeflow ...`); returns the exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    return int(_core.command_line(list(sys.argv[1:] if argv is None else argv)))
