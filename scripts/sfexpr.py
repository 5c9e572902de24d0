#!/usr/bin/python3
"""Evaluates the dimension expressions shapeflow prints (its JSON `expr`), with the semantics of
its float shape math: integers are Python integers (`//`, `%`, `min`, `max`); a `/`, a float
literal (`0.5`) or a float operand makes an operation floating point, computed in f32 with the
result rounded to f32 as a runtime does (in f64 inside `f64(..)`, f32 again inside `f32(..)`);
`floor`, `ceil`, `trunc` and `round` (half to even) turn a float back into an integer and read
their argument in f32.

    evaluate("floor(H * min(800 * (1 / min(H, W)), 1333 * (1 / max(H, W))))", {"H": 240, "W": 448})

An integer result is returned as int; a float result as float; a malformed expression, an unknown
name or a division by zero raises ValueError."""
import ast
import math
import re
import struct

FUNCTIONS = {"min", "max", "floor", "ceil", "trunc", "round", "f32", "f64"}


def to_f32(x):
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


class _Float:
    """A float value and the precision it was computed in."""
    __slots__ = ("v", "prec")

    def __init__(self, v, prec):
        self.v, self.prec = v, prec


def _in_prec(x, prec):
    v = float(x.v) if isinstance(x, _Float) else float(x)
    return to_f32(v) if prec == "f32" else v


def _float_op(op, a, b, prec):
    x, y = _in_prec(a, prec), _in_prec(b, prec)
    if op == "div" and y == 0:
        raise ValueError("division by zero")
    r = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y if op == "div" else 0,
         "min": min(x, y), "max": max(x, y)}[op]
    return _Float(to_f32(r) if prec == "f32" else r, prec)


def _arith(op, a, b, prec):
    if isinstance(a, int) and isinstance(b, int) and op != "div":
        return {"add": a + b, "sub": a - b, "mul": a * b, "min": min(a, b), "max": max(a, b)}[op]
    return _float_op(op, a, b, prec)


_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_ROUND = {"floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "round": round}


def _eval(node, syms, prec):
    if isinstance(node, ast.Expression):
        return _eval(node.body, syms, prec)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        if isinstance(node.value, int):
            return node.value
        return _Float(to_f32(node.value) if prec == "f32" else node.value, prec)
    if isinstance(node, ast.Name):
        if node.id not in syms:
            raise ValueError(f"no value for {node.id}")
        return int(syms[node.id])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _eval(node.operand, syms, prec)
        return -v if isinstance(v, int) else _Float(-v.v, v.prec)
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, syms, prec), _eval(node.right, syms, prec)
        if type(node.op) in _BINOPS:
            return _arith(_BINOPS[type(node.op)], a, b, prec)
        if not isinstance(a, int) or not isinstance(b, int):
            raise ValueError("// and % need integers")
        if b == 0:
            raise ValueError("division by zero")
        if isinstance(node.op, ast.FloorDiv):
            return a // b
        if isinstance(node.op, ast.Mod):
            return a % b
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        if name in ("min", "max") and len(node.args) >= 2:
            acc = _eval(node.args[0], syms, prec)
            for arg in node.args[1:]:
                acc = _arith(name, acc, _eval(arg, syms, prec), prec)
            return acc
        if name in _ROUND and len(node.args) == 1:
            v = _eval(node.args[0], syms, "f32")
            if isinstance(v, int):
                return v
            if not math.isfinite(v.v):
                raise ValueError("not finite")
            return int(_ROUND[name](v.v))
        if name in ("f32", "f64") and len(node.args) == 1:
            return _eval(node.args[0], syms, name)
    raise ValueError(f"unsupported expression: {ast.dump(node)}")


def evaluate(expr, syms):
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(str(e)) from None
    v = _eval(tree, syms, "f32")
    return v.v if isinstance(v, _Float) else v


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def expand(expr, definitions, _memo=None):
    """`expr` with the names of `definitions` (the JSON's "definitions": {"R1": "floor(H * ...)"},
    each a derived size over the symbols and other definitions) replaced by their parenthesised
    expansions, so that `evaluate` reads it as shapeflow printed it before naming."""
    if not definitions:
        return expr
    memo = {} if _memo is None else _memo

    def sub(m):
        name = m.group(0)
        if name not in definitions:
            return name
        if name not in memo:
            memo[name] = None  # a cycle cannot happen; guard anyway
            memo[name] = "(" + expand(definitions[name], definitions, memo) + ")"
        if memo[name] is None:
            raise ValueError(f"definition {name} refers to itself")
        return memo[name]

    return _NAME.sub(sub, expr)


def expand_report(data):
    """A `shapeflow infer --json` object with every dim's expr expanded through its
    "definitions" (in place; returns it)."""
    defs = data.get("definitions") or {}
    if not defs:
        return data
    memo = {}
    for t in data.get("tensors", {}).values():
        for key in ("shape", "value"):
            for d in t.get(key) or []:
                if isinstance(d, dict) and isinstance(d.get("expr"), str):
                    d["expr"] = expand(d["expr"], defs, memo)
    return data
