#!/usr/bin/python3
"""Unit tests of scripts/precision.py's scoring (no models, no onnxruntime needed):
  /usr/bin/python3 -m unittest discover -s scripts/tests -v"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import precision as P  # noqa: E402

SETS = [{"N": 1, "H": 224}, {"N": 2, "H": 192}]
SYMS = ["H", "N"]


def act(*shapes, dtype="float32"):
    return [{"dtype": dtype, "shape": list(s)} for s in shapes]


def sf(expr, lo=0, hi=None):
    return {"expr": expr, "min": lo, "max": hi}


def score_sf(shape, actuals, dtype="float32"):
    return P.score_shape({"dtype": dtype, "shape": shape}, actuals, SETS, SYMS, P.normalise_shapeflow_dim)


def score_onnx(shape, actuals, dtype="float32"):
    return P.score_shape({"dtype": dtype, "shape": shape}, actuals, SETS, SYMS, P.normalise_onnx_dim)


class ShapeflowDims(unittest.TestCase):
    def test_constants_and_expressions_exact(self):
        s = score_sf([sf("N"), 64, sf("(H - 1)//2 + 1", 1)], act([1, 64, 112], [2, 64, 96]))
        self.assertTrue(s.exact and s.bounds)
        self.assertEqual(s.wrong, [])

    def test_min_max_in_expressions(self):
        s = score_sf([sf("min(H, 200)"), sf("max(N, 2)")], act([200, 2], [192, 2]))
        self.assertTrue(s.exact)

    def test_wrong_constant(self):
        s = score_sf([sf("N"), 63], act([1, 64], [2, 64]))
        self.assertFalse(s.exact)
        self.assertEqual(len(s.wrong), 2)  # once per size set

    def test_wrong_expression(self):
        s = score_sf([sf("H//2")], act([112], [95]))
        self.assertFalse(s.exact)
        self.assertEqual(len(s.wrong), 1)

    def test_unknown_is_not_exact_but_bounded(self):
        s = score_sf([sf("?", 1, 300)], act([224], [192]))
        self.assertFalse(s.exact)
        self.assertTrue(s.bounds)
        self.assertEqual(s.wrong, [])

    def test_bounds_excluding_actual_is_wrong(self):
        s = score_sf([sf("?", 1, 200)], act([224], [192]))
        self.assertFalse(s.bounds)
        self.assertEqual(len(s.wrong), 1)

    def test_foreign_symbol_is_value_dependent(self):
        s = score_sf([sf("nz0"), 4], act([7, 4], [9, 4]))
        self.assertFalse(s.exact)
        self.assertTrue(s.bounds)
        self.assertEqual(s.dep, ["nz0"])
        self.assertEqual(s.wrong, [])

    def test_expression_mixing_input_and_foreign_symbols(self):
        s = score_sf([sf("N*k")], act([3], [6]))
        self.assertEqual(s.dep, ["k"])
        self.assertFalse(s.exact)

    def test_constant_expression_text(self):
        self.assertTrue(score_sf([sf("3*4")], act([12], [12])).exact)

    def test_rank_mismatch_and_unknown_rank(self):
        self.assertEqual(len(score_sf([1, 2], act([1, 2, 3], [1, 2, 3])).wrong), 1)
        s = P.score_shape({"dtype": None, "shape": None}, act([1], [1]), SETS, SYMS, P.normalise_shapeflow_dim)
        self.assertFalse(s.exact or s.bounds)
        self.assertEqual(s.wrong, [])

    def test_dtype(self):
        self.assertEqual(len(score_sf([1], act([1], [1]), dtype="int64").wrong), 1)
        s = P.score_shape({"dtype": None, "shape": [1]}, act([1], [1]), SETS, SYMS, P.normalise_shapeflow_dim)
        self.assertTrue(s.exact)

    def test_missing_tensor(self):
        s = P.score_shape(None, act([1], [1]), SETS, SYMS, P.normalise_shapeflow_dim)
        self.assertFalse(s.exact or s.bounds)


class OnnxDims(unittest.TestCase):
    def test_input_symbol_name_is_exact(self):
        self.assertTrue(score_onnx(["N", 3], act([1, 3], [2, 3])).exact)

    def test_other_dim_param_is_not_exact_nor_wrong(self):
        s = score_onnx(["unk__0", None], act([1, 3], [2, 3]))
        self.assertFalse(s.exact)
        self.assertTrue(s.bounds)
        self.assertEqual(s.wrong, [])

    def test_input_symbol_at_the_wrong_place_is_wrong(self):
        self.assertEqual(len(score_onnx(["H"], act([1], [2])).wrong), 2)


class Tool(unittest.TestCase):
    def test_tally(self):
        actual = [{"a": {"dtype": "float32", "shape": [1, 3]}, "b": {"dtype": "int64", "shape": [2]}},
                  {"a": {"dtype": "float32", "shape": [2, 3]}, "b": {"dtype": "int64", "shape": [2]}}]
        conc = [{"a": {"dtype": "float32", "shape": [1, 3]}, "b": {"dtype": "int64", "shape": [2]}},
                {"a": {"dtype": "float32", "shape": [2, 3]}, "b": {"dtype": "int64", "shape": None}}]
        sym = {"a": {"dtype": "float32", "shape": [sf("N", 1), 3]}, "b": {"dtype": "int64", "shape": [sf("u0")]}}
        t = P.score_tool(["a", "b"], actual, SETS, SYMS, conc, sym, P.normalise_shapeflow_dim, "sf")
        self.assertEqual((t.total, t.count["conc"], t.count["sym"], t.count["bounds"]), (2, 1, 1, 2))
        self.assertEqual(len(t.valdep), 1)
        self.assertEqual(t.wrong, [])

    def test_contract_check(self):
        self.assertIsNone(P.check_contract({"tensors": {"a": {"shape": [1, {"expr": "N", "min": 1, "max": None}]}}}))
        self.assertIsNotNone(P.check_contract({"tensors": {"a": {"shape": [1.5]}}}))
        self.assertIsNotNone(P.check_contract({"tensors": {"a": {"dtype": "float32"}}}))
        self.assertIsNotNone(P.check_contract([]))


if __name__ == "__main__":
    unittest.main()


class SizeOnlyCounts(unittest.TestCase):
    def test_value_dependent_tensors_leave_the_size_only_counts(self):
        acts = {"a": act([1, 64], [2, 64])[0], "b": act([0], [0])[0]}
        actual = [{"a": act([1, 64])[0], "b": act([0])[0]}, {"a": act([2, 64])[0], "b": act([0])[0]}]
        concrete = [{"a": {"dtype": "float32", "shape": [1, 64]}, "b": {"dtype": "float32", "shape": [sf("?", 0, 5)]}},
                    {"a": {"dtype": "float32", "shape": [2, 64]}, "b": {"dtype": "float32", "shape": [sf("?", 0, 5)]}}]
        symbolic = {"a": {"dtype": "float32", "shape": [sf("N", 1), 64]},
                    "b": {"dtype": "float32", "shape": [sf("nonzero_0", 0, 5)]}}
        t = P.score_tool(["a", "b"], actual, SETS, SYMS, concrete, symbolic, P.normalise_shapeflow_dim, "sf")
        self.assertEqual((t.total, t.size_total), (2, 1))
        self.assertEqual((t.count["conc"], t.count["sym"]), (1, 1))
        self.assertEqual((t.count["conc_sz"], t.count["sym_sz"]), (1, 1))
        self.assertEqual(t.count["bounds"], 2)
        self.assertEqual(len(t.valdep), 1)
        del acts
        # Another tool is scored over the same size-only tensors.
        o = P.score_tool(["a", "b"], actual, SETS, SYMS, concrete, {"a": {"dtype": "float32", "shape": [sf("?"), 64]},
                         "b": {"dtype": "float32", "shape": [sf("?")]}}, P.normalise_shapeflow_dim, "other",
                         dep_names={"b"})
        self.assertEqual(o.size_total, 1)
        self.assertEqual(o.count["sym_sz"], 0)

    def test_float_expressions_are_scored_with_f32_semantics(self):
        e = "floor(H * min(800 * (1 / min(H, 300)), 1333 * (1 / max(H, 300))))"
        s = score_sf([sf(e)], act([800], [800]))
        self.assertTrue(s.exact, s.wrong)
        s = score_sf([sf(e)], act([800], [801]))
        self.assertFalse(s.exact)

