#!/usr/bin/python3
"""Unit tests of scripts/sfexpr.py, the evaluator of shapeflow's printed expressions:
  /usr/bin/python3 -m unittest discover -s scripts/tests -v"""
import math
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sfexpr import evaluate, to_f32  # noqa: E402


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def resized(h, w):
    """torchvision's transform, op by op in float32."""
    r1 = f32(f32(1.0 / f32(min(h, w))) * 800.0)
    r2 = f32(f32(1.0 / f32(max(h, w))) * 1333.0)
    return math.floor(f32(f32(h) * min(r1, r2)))


class Integers(unittest.TestCase):
    def test_python_integer_semantics(self):
        self.assertEqual(evaluate("(H - 1)//2 + 1", {"H": 224}), 112)
        self.assertEqual(evaluate("-N//2", {"N": 3}), -2)
        self.assertEqual(evaluate("N % 4", {"N": -1}), 3)
        self.assertEqual(evaluate("min(T, 512) + max(N, 2)", {"T": 600, "N": 1}), 514)
        self.assertIsInstance(evaluate("2*S + 1", {"S": 3}), int)

    def test_errors(self):
        for bad in ("H +", "foo(H)", "H ** 2", "H // 0", "X"):
            with self.assertRaises(ValueError, msg=bad):
                evaluate(bad, {"H": 1})


class Floats(unittest.TestCase):
    def test_detection_resize_matches_float32_arithmetic(self):
        e = "floor(H * min(800 * (1 / min(H, W)), 1333 * (1 / max(H, W))))"
        for h in range(1, 2000, 13):
            for w in (1, 320, 448, 800, 1333, 1920):
                self.assertEqual(evaluate(e, {"H": h, "W": w}), resized(h, w), (h, w))

    def test_f32_rounds_each_operation(self):
        # 0.1 + 0.2 in f32 is 0.3 in f32, not the f64 0.30000000000000004
        self.assertEqual(evaluate("0.1 + 0.2", {}), f32(0.3))
        self.assertEqual(evaluate("f64(0.1 + 0.2)", {}), 0.1 + 0.2)
        self.assertEqual(evaluate("f64(H / 3) * 0.5", {"H": 7}), f32(f32(7 / 3) * 0.5))
        self.assertEqual(to_f32(1e39), math.inf)

    def test_rounding_back_to_integers(self):
        self.assertEqual(evaluate("floor(H * 0.75)", {"H": 5}), 3)
        self.assertEqual(evaluate("ceil(T / 2.5)", {"T": 6}), 3)
        self.assertEqual(evaluate("trunc((-T + 5) * 0.75)", {"T": 9}), -3)
        self.assertEqual(evaluate("round(T * 0.5)", {"T": 5}), 2)  # half to even
        self.assertEqual(evaluate("round(T * 0.5)", {"T": 7}), 4)
        self.assertIsInstance(evaluate("floor(H * 0.5) + 1", {"H": 3}), int)
        with self.assertRaises(ValueError):
            evaluate("floor(H / 2.5) // 2.5", {"H": 3})


if __name__ == "__main__":
    unittest.main()


class Definitions(unittest.TestCase):
    """Derived sizes named in the JSON ("definitions") expand back to what they stand for."""

    def test_expand_follows_nested_definitions(self):
        from sfexpr import expand, expand_report
        defs = {"R1": "floor(H * min(800 * (1 / min(H, W)), 1333 * (1 / max(H, W))))",
                "R2": "(R1 - 1)//32", "R3": "4*R2"}
        text = expand("R3 + R2 + 1", defs)
        syms = {"H": 240, "W": 448}
        r1 = evaluate(defs["R1"], syms)
        self.assertEqual(evaluate(text, syms), 4 * ((r1 - 1) // 32) + (r1 - 1) // 32 + 1)
        data = {"definitions": defs, "tensors": {"t": {"shape": [{"expr": "R2*2", "min": 0, "max": None}, 3],
                                                     "value": [{"expr": "R1", "min": 1, "max": None}]}}}
        expand_report(data)
        self.assertEqual(evaluate(data["tensors"]["t"]["shape"][0]["expr"], syms), 2 * ((r1 - 1) // 32))
        self.assertEqual(evaluate(data["tensors"]["t"]["value"][0]["expr"], syms), r1)

    def test_names_that_are_not_defined_stay(self):
        from sfexpr import expand
        self.assertEqual(expand("R10 + R1", {"R1": "H//2"}), "R10 + (H//2)")
