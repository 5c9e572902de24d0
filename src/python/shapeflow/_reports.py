"""The answers of shapeflow as typed objects.

Each object is built from the JSON document its subcommand prints (``shapeflow stats --json``,
``plan``, ``memory``, ``contract``, ``check``, ``lower``): the attributes are that document's
fields, typed, and ``.json()`` gives the document itself. Sizes that depend on the input sizes are
``Expression`` objects (the expression as text, its bounds, and ``evaluate``); sizes that do not
are ``int``.
"""
from __future__ import annotations

import ast
import html
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

JsonDict = Dict[str, Any]

__all__ = [
    "Expression", "Quantity", "SymbolRange", "Totals", "NodeStats", "Stats", "Buffer", "Plan",
    "MemoryRow", "Memory", "Requirement", "ContractSymbol", "Contract", "Sample", "CheckResult",
    "Lowering", "SVG", "GraphCensus", "SimplifyReport", "RangePlan", "RangePlans",
]


def _evaluate(text: str, sizes: Mapping[str, int]) -> int:
    """An expression of the reports (`+ - * // %`, `min`, `max`, `floor`, `ceil`, integers and
    symbol names) evaluated in integers, without Python's eval."""
    tree = ast.parse(text, mode="eval")

    def walk(n: ast.AST) -> Any:
        if isinstance(n, ast.Expression):
            return walk(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in sizes:
                raise KeyError(f"the expression {text!r} needs a size for {n.id}")
            return int(sizes[n.id])
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -walk(n.operand)
        if isinstance(n, ast.BinOp):
            a, b = walk(n.left), walk(n.right)
            ops: Dict[type, Callable[[Any, Any], Any]] = {
                ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
                ast.FloorDiv: lambda x, y: x // y, ast.Mod: lambda x, y: x % y, ast.Div: lambda x, y: x / y,
                ast.Pow: lambda x, y: x ** y,
            }
            if type(n.op) in ops:
                return ops[type(n.op)](a, b)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            args = [walk(a) for a in n.args]
            fns: Dict[str, Callable[..., Any]] = {"min": min, "max": max, "floor": math.floor, "ceil": math.ceil}
            if n.func.id in fns:
                return fns[n.func.id](*args)
        raise ValueError(f"the expression {text!r} has a part this evaluator does not know: {ast.dump(n)}")

    value = walk(tree)
    return int(value)


@dataclass(frozen=True)
class Expression:
    """A size that depends on the input sizes: its expression (Python syntax over the symbols,
    with `//`, `min`, `max`), and its bounds over every size the model admits (None: unbounded).
    `value` is the expression's value at the sizes the report was asked at, when there were any."""

    expr: str
    min: Optional[int]
    max: Optional[int]
    value: Optional[int] = None

    def evaluate(self, **sizes: int) -> int:
        """The size at these input sizes: `e.evaluate(B=1, S=128)`."""
        return _evaluate(self.expr, sizes)

    def __str__(self) -> str:
        return self.expr


Quantity = Union[int, float, Expression]


def _quantity(j: Any) -> Quantity:
    if isinstance(j, dict):
        return Expression(str(j.get("expr", "?")), j.get("min"), j.get("max"), j.get("at"))
    if isinstance(j, (int, float)):
        return j
    raise TypeError(f"not a size: {j!r}")


def _opt_quantity(j: Any) -> Optional[Quantity]:
    return None if j is None else _quantity(j)


def _text(q: Any) -> str:
    if isinstance(q, Expression):
        bounds = f" [{q.min}..{'' if q.max is None else q.max}]"
        return q.expr + (f" = {q.value}" if q.value is not None else "") + bounds
    return str(q)


def _table(headers: List[str], rows: List[List[Any]], limit: int = 200) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for r in rows[:limit]:
        body.append("<tr>" + "".join(f"<td>{html.escape(_text(c))}</td>" for c in r) + "</tr>")
    more = f"<p>{len(rows) - limit} more rows (.json())</p>" if len(rows) > limit else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


class SVG:
    """A picture (SVG text) that renders inline in Jupyter."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_svg_(self) -> str:
        return self.text

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.text)

    def __str__(self) -> str:
        return self.text


class _Document:
    """What every answer has: the document it was built from."""

    _json: JsonDict

    def json(self) -> JsonDict:
        """The JSON document of the subcommand (a dict)."""
        return self._json

    def __getitem__(self, key: str) -> Any:
        return self._json[key]

    def keys(self) -> Any:
        return self._json.keys()


@dataclass(frozen=True)
class SymbolRange:
    """A symbol (an input size) and its admitted range (None: unbounded)."""

    name: str
    min: Optional[int]
    max: Optional[int]


def _symbols(j: Any) -> Dict[str, SymbolRange]:
    if isinstance(j, dict):
        return {k: SymbolRange(k, v.get("min"), v.get("max")) for k, v in j.items()}
    return {s["name"]: SymbolRange(s["name"], s.get("min"), s.get("max")) for s in (j or [])}


@dataclass(frozen=True)
class Totals:
    """The work and traffic of a model (or of the nodes of one op type)."""

    macs: Quantity
    flops: Quantity
    flops_by_kind: Dict[str, Quantity]
    read_bytes: Quantity
    write_bytes: Quantity
    params: Optional[int] = None
    param_bytes: Optional[int] = None
    intensity: Optional[float] = None
    nodes: Optional[int] = None

    @staticmethod
    def from_json(j: JsonDict) -> "Totals":
        return Totals(_quantity(j.get("macs", 0)), _quantity(j.get("flops", 0)),
                      {k: _quantity(v) for k, v in j.get("flops_by_kind", {}).items()},
                      _quantity(j.get("read_bytes", 0)), _quantity(j.get("write_bytes", 0)), j.get("params"),
                      j.get("param_bytes"), j.get("intensity"), j.get("nodes"))


@dataclass(frozen=True)
class NodeStats:
    """One node's work and traffic."""

    name: str
    op: str
    macs: Quantity
    flops: Quantity
    read_bytes: Quantity
    write_bytes: Quantity
    runs: Quantity

    @staticmethod
    def from_json(j: JsonDict) -> "NodeStats":
        return NodeStats(j.get("name", ""), j.get("op", ""), _quantity(j.get("macs", 0)), _quantity(j.get("flops", 0)),
                         _quantity(j.get("read_bytes", 0)), _quantity(j.get("write_bytes", 0)),
                         _quantity(j.get("runs", 1)))


class Stats(_Document):
    """What `shapeflow stats --json` prints: work and traffic in total, by op type and per node."""

    model: str
    symbols: Dict[str, SymbolRange]
    total: Totals
    by_op_type: Dict[str, Totals]
    nodes: List[NodeStats]
    notes: List[str]
    rows: Optional[List[JsonDict]]

    def __init__(self, j: JsonDict, svg: Optional[Callable[[], str]] = None) -> None:
        self._json = j
        self._svg = svg
        self.model = j.get("model", "")
        self.symbols = _symbols(j.get("symbols", {}))
        self.total = Totals.from_json(j.get("total", {}))
        self.by_op_type = {k: Totals.from_json(v) for k, v in j.get("by_op_type", {}).items()}
        self.nodes = [NodeStats.from_json(n) for n in j.get("nodes", [])]
        self.notes = [str(n) for n in j.get("notes", [])]
        self.rows = j.get("rows")

    def svg(self) -> SVG:
        """The picture `shapeflow stats --svg` draws."""
        if self._svg is None:
            raise ValueError("these statistics have no picture")
        return SVG(self._svg())

    def _repr_html_(self) -> str:
        t = self.total
        head = _table(["total", "value"], [["MACs", t.macs], ["FLOPs", t.flops], ["read bytes", t.read_bytes],
                                           ["write bytes", t.write_bytes], ["parameters", t.params]])
        ops = _table(["op type", "MACs", "FLOPs", "read bytes", "write bytes"],
                     [[k, v.macs, v.flops, v.read_bytes, v.write_bytes] for k, v in self.by_op_type.items()])
        return f"<h4>{html.escape(self.model)}</h4>{head}{ops}"


@dataclass(frozen=True)
class Buffer:
    """One buffer of the memory plan: its tensor, size in bytes (aligned), offset and the steps it
    lives between."""

    tensor: str
    bytes: Quantity
    size: Quantity
    offset: Quantity
    first: int
    last: int

    @staticmethod
    def from_json(j: JsonDict) -> "Buffer":
        return Buffer(j.get("tensor", ""), _quantity(j.get("bytes", 0)), _quantity(j.get("size", 0)),
                      _quantity(j.get("offset", 0)), int(j.get("first", 0)), int(j.get("last", 0)))


class Plan(_Document):
    """What `shapeflow plan --json` prints: one static memory plan valid at every admitted size."""

    model: str
    symbols: Dict[str, SymbolRange]
    align: int
    symbolic: bool
    order: List[str]
    peak: Quantity
    lower_bound: Optional[Quantity]
    buffers: List[Buffer]

    def __init__(self, j: JsonDict, svg: Optional[Callable[[], str]] = None) -> None:
        self._json = j
        self._svg = svg
        self.model = j.get("model", "")
        self.symbols = _symbols(j.get("symbols", {}))
        self.align = int(j.get("align", 0))
        self.symbolic = bool(j.get("symbolic", False))
        self.order = list(j.get("order", []))
        self.peak = _quantity(j.get("peak", 0))
        self.lower_bound = _opt_quantity(j.get("lower_bound"))
        self.buffers = [Buffer.from_json(b) for b in j.get("buffers", [])]

    def svg(self) -> SVG:
        """The picture `shapeflow plan --svg` draws: the buffers in (step, address)."""
        if self._svg is None:
            raise ValueError("this plan has no picture")
        return SVG(self._svg())

    def _repr_html_(self) -> str:
        head = _table(["", ""], [["peak bytes", self.peak], ["lower bound", self.lower_bound],
                                 ["buffers", len(self.buffers)], ["alignment", self.align]])
        rows = [[b.tensor, b.size, b.offset, b.first, b.last] for b in self.buffers]
        return f"<h4>{html.escape(self.model)}</h4>{head}" + _table(["tensor", "size", "offset", "first", "last"], rows)


@dataclass(frozen=True)
class MemoryRow:
    """Memory at one binding of the sizes: each part in bytes."""

    at: Dict[str, int]
    weights: Quantity
    kv_cache: Quantity
    activations: Quantity
    io: Quantity
    total: Quantity

    @staticmethod
    def from_json(j: JsonDict) -> "MemoryRow":
        return MemoryRow(dict(j.get("at", {})), _quantity(j.get("weights", 0)), _quantity(j.get("kv_cache", 0)),
                         _quantity(j.get("activations", 0)), _quantity(j.get("io", 0)), _quantity(j.get("total", 0)))


def _part(j: Any) -> Quantity:
    """A part of memory in the document: a size, or an object holding one under `bytes` or `peak`."""
    if isinstance(j, dict) and "expr" not in j:
        for key in ("bytes", "peak"):
            if key in j:
                return _quantity(j[key])
        return 0
    if isinstance(j, list):
        return len(j)
    return _quantity(j)


@dataclass
class RangePlan:
    """One range of `shapeflow plan --max-ratio`: its sizes, the worst peak over the lower bound at
    the sizes it was judged at, those sizes, its peak at its upper end and its plan."""

    dims: Dict[str, SymbolRange]
    worst_ratio: float
    judged_at: List[JsonDict]
    peak_at_upper: Optional[int]
    plan: Plan

    @staticmethod
    def from_json(j: JsonDict) -> "RangePlan":
        return RangePlan(dims={k: SymbolRange(k, int(v[0]), int(v[1])) for k, v in j.get("dims", {}).items()},
                         worst_ratio=float(j.get("worst_ratio", 1.0)), judged_at=list(j.get("judged_at", [])),
                         peak_at_upper=j.get("peak_at_upper"), plan=Plan(j.get("plan", {})))

    def holds(self, sizes: Mapping[str, int]) -> bool:
        """Whether `sizes` lie in this range (what a run picks its plan by)."""
        return all(name in sizes and (r.min is None or r.min <= sizes[name]) and (r.max is None or sizes[name] <= r.max)
                   for name, r in self.dims.items())


class RangePlans(_Document):
    """What `shapeflow plan --max-ratio --json` prints: memory plans per range of the sizes."""

    model: str
    max_ratio: float
    whole_domain_worst: float
    ranges: List[RangePlan]

    def __init__(self, j: JsonDict) -> None:
        self._json = j
        self.model = j.get("model", "")
        self.max_ratio = float(j.get("max_ratio", 0.0))
        self.whole_domain_worst = float(j.get("whole_domain_worst", 1.0))
        self.ranges = [RangePlan.from_json(r) for r in j.get("ranges", [])]

    def plan_for(self, sizes: Mapping[str, int]) -> Plan:
        """The plan of the first range that holds `sizes`."""
        for r in self.ranges:
            if r.holds(sizes):
                return r.plan
        raise KeyError(f"no range holds {dict(sizes)}")


class Memory(_Document):
    """What `shapeflow memory --json` prints: weights, KV cache, activations, inputs and outputs,
    as expressions of the sizes, at each row of sizes, and the largest size that fits a budget."""

    model: str
    symbols: List[str]
    weights: Quantity
    activations: Quantity
    io: Quantity
    total: Quantity
    kv_cache: List[JsonDict]
    rows: List[MemoryRow]
    fit: Optional[JsonDict]

    def __init__(self, j: JsonDict) -> None:
        self._json = j
        self.model = j.get("model", "")
        self.symbols = [str(n) for n in j.get("symbols", [])]
        self.weights = _part(j.get("weights", 0))
        self.activations = _part(j.get("activations", 0))
        self.io = _part(j.get("io", 0))
        self.total = _quantity(j.get("total", 0))
        self.kv_cache = list(j.get("kv_cache", []))
        self.rows = [MemoryRow.from_json(r) for r in j.get("rows", [])]
        self.fit = j.get("fit")

    def _repr_html_(self) -> str:
        rows = [[", ".join(f"{k}={v}" for k, v in r.at.items()), r.weights, r.kv_cache, r.activations, r.io, r.total]
                for r in self.rows]
        return f"<h4>{html.escape(self.model)}</h4>" + _table(
            ["sizes", "weights", "KV cache", "activations", "inputs and outputs", "total"], rows)


@dataclass(frozen=True)
class Requirement:
    """One requirement on the input sizes, with the node whose rule imposes it."""

    requirement: str
    condition: str
    node: str
    op: str
    symbol: Optional[str]

    @staticmethod
    def from_json(j: JsonDict) -> "Requirement":
        return Requirement(str(j.get("requirement", "")), str(j.get("condition", "")), str(j.get("node", "")),
                           str(j.get("op", "")), j.get("symbol"))


@dataclass(frozen=True)
class ContractSymbol:
    """A named input size: its admitted range, or the expression it equals."""

    name: str
    min: Optional[int]
    max: Optional[int]
    equals: Optional[str]

    @staticmethod
    def from_json(j: JsonDict) -> "ContractSymbol":
        return ContractSymbol(j["name"], j.get("min"), j.get("max"), j.get("equals"))


class Contract(_Document):
    """What `shapeflow contract --json` prints: the input sizes a model accepts and why."""

    model: str
    symbols: List[ContractSymbol]
    requirements: List[Requirement]
    summary: List[str]
    errors: List[str]

    def __init__(self, j: JsonDict) -> None:
        self._json = j
        self.model = j.get("model", "")
        self.symbols = [ContractSymbol.from_json(s) for s in j.get("symbols", [])]
        self.requirements = [Requirement.from_json(r) for r in j.get("requirements", [])]
        self.summary = [str(s) for s in j.get("summary", [])]
        self.errors = [str(e) if not isinstance(e, dict) else str(e.get("message", e)) for e in j.get("errors", [])]

    def _repr_html_(self) -> str:
        syms = _table(["size", "min", "max", "equals"],
                      [[s.name, s.min, "" if s.max is None else s.max, s.equals or ""] for s in self.symbols])
        reqs = _table(["requirement", "node", "op"], [[r.requirement, r.node, r.op] for r in self.requirements])
        return f"<h4>{html.escape(self.model)}</h4>{syms}{reqs}"


@dataclass(frozen=True)
class Sample:
    """One sample of `check`: its sizes, whether it ran, tensors compared, what disagreed."""

    binding: Dict[str, int]
    ran: bool
    tensors: int
    mismatches: List[str]
    error: str = ""

    @staticmethod
    def from_json(j: JsonDict) -> "Sample":
        return Sample(dict(j.get("binding", {})), bool(j.get("ran", False)), int(j.get("tensors", 0)),
                      [str(m) for m in j.get("mismatches", [])], str(j.get("error", "")))


class CheckResult(_Document):
    """What `shapeflow check --json` prints: the inference compared with runs at sample sizes.
    `passed` is False when fewer samples ran than were requested or any tensor disagreed."""

    model: str
    passed: bool
    requested: int
    ran: int
    mismatches: int
    samples: List[Sample]

    def __init__(self, j: JsonDict) -> None:
        self._json = j
        self.model = j.get("model", "")
        self.passed = bool(j.get("passed", False))
        self.requested = int(j.get("requested", 0))
        self.ran = int(j.get("ran", 0))
        self.mismatches = int(j.get("mismatches", 0))
        self.samples = [Sample.from_json(s) for s in j.get("samples", [])]

    def __bool__(self) -> bool:
        return self.passed

    def _repr_html_(self) -> str:
        rows = [[", ".join(f"{k}={v}" for k, v in s.binding.items()), "yes" if s.ran else "no", s.tensors,
                 len(s.mismatches), s.error] for s in self.samples]
        verdict = "passed" if self.passed else "FAILED"
        return (f"<h4>{html.escape(self.model)}: {verdict}, {self.ran} of {self.requested} samples ran</h4>" +
                _table(["sizes", "ran", "tensors", "mismatches", "error"], rows))


class Lowering(_Document):
    """What `shapeflow lower --stage STAGE --json` prints: shapes as explicit values (`shapes`),
    their upper bounds (`bounds`) or buffers and lifetimes (`buffers`)."""

    model: str
    stage: str
    symbols: Dict[str, SymbolRange]

    def __init__(self, j: JsonDict, stage: str) -> None:
        self._json = j
        self.model = j.get("model", "")
        self.stage = j.get("stage", stage)
        self.symbols = _symbols(j.get("symbols", {}))



@dataclass(frozen=True)
class GraphCensus:
    """A graph's size: op nodes, those computing shapes, nodes by op type, bytes of constants."""

    nodes: int
    shape_nodes: int
    by_op: Dict[str, int]
    weight_bytes: int

    @staticmethod
    def from_json(j: JsonDict) -> "GraphCensus":
        return GraphCensus(int(j.get("nodes", 0)), int(j.get("shape_nodes", 0)), dict(j.get("by_op", {})),
                           int(j.get("weight_bytes", 0)))


class SimplifyReport(_Document):
    """What `shapeflow simplify --json` prints: the graph before and after, what each pass
    rewrote, the nodes removed by op type."""

    model: str
    before: GraphCensus
    after: GraphCensus
    passes: Dict[str, int]
    removed_by_op: Dict[str, int]
    inputs_kept: bool
    numerics_changed: bool

    def __init__(self, j: JsonDict) -> None:
        self._json = j
        self.model = j.get("model", "")
        self.before = GraphCensus.from_json(j.get("before", {}))
        self.after = GraphCensus.from_json(j.get("after", {}))
        self.passes = dict(j.get("passes", {}))
        self.removed_by_op = dict(j.get("removed_by_op", {}))
        self.inputs_kept = bool(j.get("inputs_kept", True))
        self.numerics_changed = bool(j.get("numerics_changed", False))

    def _repr_html_(self) -> str:
        rows = [["nodes", self.before.nodes, self.after.nodes],
                ["nodes computing shapes", self.before.shape_nodes, self.after.shape_nodes],
                ["bytes of weights", self.before.weight_bytes, self.after.weight_bytes]]
        return f"<h4>{html.escape(self.model)}</h4>" + _table(["", "before", "after"], rows) + _table(
            ["op type", "removed"], [[k, v] for k, v in self.removed_by_op.items()])
