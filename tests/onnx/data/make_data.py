#!/usr/bin/python3
"""Writes the small valid models of tests/onnx/data/ with python3-onnx (Debian, 1.12).

wire_data_test.cpp reads them, checks the values written here, and cross-checks every model
against libonnx's generated classes. Run: /usr/bin/python3 tests/onnx/data/make_data.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("custom", 1)]


def save(model, name, **kwargs):
    onnx.checker.check_model(model)
    onnx.save_model(model, os.path.join(HERE, name), **kwargs)


def functions_model():
    """A model-local function called from the main graph and from a subgraph."""
    fn = helper.make_function(
        "custom", "AddScaled", ["a", "b"], ["c"],
        [helper.make_node("Add", ["a", "b"], ["s"]),
         helper.make_node("Constant", [], ["k"], value_float=2.0),
         helper.make_node("Mul", ["s", "k"], ["c"])],
        [helper.make_opsetid("", 17)], attributes=["alpha"])
    then_g = helper.make_graph(
        [helper.make_node("AddScaled", ["x", "x"], ["t"], domain="custom")], "then_g", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, ["N", 4])])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])], "else_g", [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, ["N", 4])])
    g = helper.make_graph(
        [helper.make_node("AddScaled", ["x", "y"], ["z"], name="call", domain="custom"),
         helper.make_node("If", ["cond"], ["out"], name="branch", then_branch=then_g,
                          else_branch=else_g)],
        "functions_main",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 4])])
    m = helper.make_model(g, opset_imports=OPSETS, functions=[fn], producer_name="make_data")
    save(m, "functions.onnx")


def types_model():
    """Inputs of every TypeProto kind; unknown and symbolic dims; a rank-unknown tensor."""
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", 3]))
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, ["a"]))
    opt_seq = helper.make_optional_type_proto(seq)
    mp = onnx.TypeProto()
    mp.map_type.key_type = TensorProto.INT64
    mp.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    sparse = helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [10, 20])
    no_shape = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    unknown_dim = helper.make_tensor_type_proto(TensorProto.UINT8, [None, 5, "S"])
    inputs = [helper.make_value_info("seq", seq), helper.make_value_info("opt", opt),
              helper.make_value_info("opt_seq", opt_seq), helper.make_value_info("map", mp),
              helper.make_value_info("sparse", sparse),
              helper.make_value_info("no_shape", no_shape),
              helper.make_value_info("unknown_dim", unknown_dim)]
    g = helper.make_graph([helper.make_node("Identity", ["no_shape"], ["y"])], "types", inputs,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("ai.onnx.ml", 3)])
    onnx.save_model(m, os.path.join(HERE, "types.onnx"))  # map inputs fail the 1.12 checker


def values_model():
    """Initializers of many types, raw (numpy_helper) and typed (helper.make_tensor)."""
    inits = [
        numpy_helper.from_array(np.array([[1.5, -2], [3, 4.25]], np.float32), "f32_raw"),
        helper.make_tensor("f32_typed", TensorProto.FLOAT, [3], [0.5, -1.0, 7.0]),
        numpy_helper.from_array(np.array([1e300, -2.5], np.float64), "f64_raw"),
        helper.make_tensor("f64_typed", TensorProto.DOUBLE, [2], [1e-300, 3.0]),
        numpy_helper.from_array(np.array([1, -2, 3], np.int64), "i64_raw"),
        helper.make_tensor("i64_typed", TensorProto.INT64, [4], [-(2**62), 0, 5, 2**40]),
        numpy_helper.from_array(np.array([-128, 127], np.int8), "i8_raw"),
        helper.make_tensor("i8_typed", TensorProto.INT8, [2], [-128, 127]),
        helper.make_tensor("u8_typed", TensorProto.UINT8, [2], [0, 255]),
        numpy_helper.from_array(np.array([-30000, 30000], np.int16), "i16_raw"),
        helper.make_tensor("u16_typed", TensorProto.UINT16, [1], [65535]),
        helper.make_tensor("i32_typed", TensorProto.INT32, [3], [-7, 0, 2**31 - 1]),
        helper.make_tensor("u32_typed", TensorProto.UINT32, [2], [0, 2**32 - 1]),
        helper.make_tensor("u64_typed", TensorProto.UINT64, [2], [7, 2**63 - 1]),
        numpy_helper.from_array(np.array([True, False, True]), "bool_raw"),
        helper.make_tensor("bool_typed", TensorProto.BOOL, [2], [False, True]),
        numpy_helper.from_array(np.array([1.0, -2.0, 0.5], np.float16), "f16_raw"),
        helper.make_tensor("f16_typed", TensorProto.FLOAT16, [2], [1.0, -0.25]),
        helper.make_tensor("bf16_typed", TensorProto.BFLOAT16, [2], [1.0, -3.0]),
        helper.make_tensor("str_typed", TensorProto.STRING, [2], [b"hello", b""]),
        helper.make_tensor("scalar", TensorProto.INT64, [], [42]),
        numpy_helper.from_array(np.zeros((0, 3), np.float32), "empty_raw"),
    ]
    g = helper.make_graph([helper.make_node("Identity", ["f32_raw"], ["y"])], "values", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
                          initializer=inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "values.onnx")


def sparse_model():
    values = helper.make_tensor("sp", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    indices = helper.make_tensor("sp_indices", TensorProto.INT64, [3], [0, 4, 5])
    sp = helper.make_sparse_tensor(values, indices, [2, 3])
    const = helper.make_node("Constant", [], ["c"], name="const", sparse_value=sp)
    g = helper.make_graph([const, helper.make_node("Add", ["c", "sp"], ["y"])], "sparse", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          sparse_initializer=[sp])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "sparse.onnx")


def external_model():
    """Weights in one external file, written by onnx's own external-data saver."""
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w")
    b = numpy_helper.from_array(np.array([10, 20, 30, 40], np.int64), "b")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]),
         helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["h", "bf"], ["y"])],
        "external", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 4])], initializer=[w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    save(m, "external.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
         location="external.weights", size_threshold=0)


def main():
    for name in os.listdir(HERE):
        if name.endswith(".onnx") or name.endswith(".weights"):
            os.remove(os.path.join(HERE, name))
    functions_model()
    types_model()
    values_model()
    sparse_model()
    external_model()
    print("wrote", sorted(n for n in os.listdir(HERE) if not n.endswith(".py")))


if __name__ == "__main__":
    main()
