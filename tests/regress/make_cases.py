#!/usr/bin/env python3
"""Writes the hand-made models of tests/regress/ (impossible or unusual models) with
ONNX's helper; expected.txt lists what shapeflow must say about each.
usage: /usr/bin/python3 tests/regress/make_cases.py [DIR]"""
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def save(name, nodes, inputs, outputs, opset=17, domains=(), value_info=()):
    g = helper.make_graph(nodes, name, inputs, outputs, value_info=list(value_info))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(g, opset_imports=ops, ir_version=8)
    onnx.save(m, os.path.join(out, name + ".onnx"))


f = TensorProto.FLOAT
# A declared dimension that is negative.
save("negative_input_dim", [helper.make_node("Relu", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", f, [1, 3, -5])], [helper.make_tensor_value_info("y", f, None)])
# Element counts past 2^63: an input, and a ConstantOfShape of 2^40 x 2^40 floats.
save("input_elements_overflow", [helper.make_node("Relu", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", f, [2**62, 2**62])], [helper.make_tensor_value_info("y", f, None)])
shape = numpy_helper.from_array(np.array([2**40, 2**40], np.int64), "shape")
save("constant_of_shape_overflow",
     [helper.make_node("Constant", [], ["s"], value=shape), helper.make_node("ConstantOfShape", ["s"], ["y"])],
     [], [helper.make_tensor_value_info("y", f, None)])
# Bytes past 2^63 with an element count that fits: 2^61 f32 elements.
save("input_bytes_overflow", [helper.make_node("Relu", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", f, [2**31, 2**30])], [helper.make_tensor_value_info("y", f, None)])
# An opset newer than shapeflow knows.
save("newer_opset", [helper.make_node("Relu", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", f, ["N", 3])], [helper.make_tensor_value_info("y", f, None)], opset=30)
# An op from a domain nobody knows.
save("unknown_domain", [helper.make_node("Frobnicate", ["x"], ["y"], domain="example.unknown")],
     [helper.make_tensor_value_info("x", f, ["N", 3])], [helper.make_tensor_value_info("y", f, None)],
     domains=("example.unknown",))
# An If whose condition is bool[1,1] (onnxruntime runs it), and an If whose branches disagree in
# rank (its output's rank is unknown: a warning naming both).
then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                           [helper.make_tensor_value_info("t", f, None)])
else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                           [helper.make_tensor_value_info("e", f, None)])
save("if_condition_rank2", [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
     [helper.make_tensor_value_info("c", TensorProto.BOOL, [1, 1]), helper.make_tensor_value_info("x", f, ["N"])],
     [helper.make_tensor_value_info("y", f, None)])
flat = helper.make_graph([helper.make_node("Flatten", ["x"], ["e"], axis=0)], "else", [],
                         [helper.make_tensor_value_info("e", f, None)])
save("if_branch_ranks_differ", [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=flat)],
     [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", f, ["N", 3, 4])],
     [helper.make_tensor_value_info("y", f, None)])
