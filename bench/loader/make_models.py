#!/usr/bin/python3
"""Writes two synthetic models for the loader benchmark (not committed: they are big).

  big_weights.onnx  ~400 MB: three 8192x4096 float initializers and a 5-node graph, the case
                    where a loader should cost nothing (the wire reader never reads weights)
  many_nodes.onnx   ~27 MB: 200k Conv nodes with attributes and 100k value_infos, the case
                    where parsing nodes and attributes is all the work

Usage: /usr/bin/python3 bench/loader/make_models.py OUT_DIR
       build/bench/loader/sf_loader_bench OUT_DIR/big_weights.onnx OUT_DIR/many_nodes.onnx
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def big_weights(path):
    rng = np.random.default_rng(0)
    shapes = [("w0", (8192, 4096)), ("w1", (4096, 8192)), ("w2", (8192, 4096)), ("b", (4096,))]
    inits = [numpy_helper.from_array(rng.random(s, dtype=np.float32), n) for n, s in shapes]
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["h0"]),
             helper.make_node("Relu", ["h0"], ["r0"]),
             helper.make_node("MatMul", ["r0", "w1"], ["h1"]),
             helper.make_node("MatMul", ["h1", "w2"], ["h2"]),
             helper.make_node("Add", ["h2", "b"], ["y"])]
    g = helper.make_graph(nodes, "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8192])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4096])],
                          initializer=inits)
    onnx.save(helper.make_model(g), path)


def many_nodes(path, count=200000):
    nodes, prev = [], "x"
    for i in range(count):
        nodes.append(helper.make_node("Conv", [prev, "w", "b"], ["t%d" % i], name="conv%d" % i,
                                      pads=[1, 1, 1, 1], strides=[1, 1], kernel_shape=[3, 3],
                                      group=1))
        prev = "t%d" % i
    inits = [numpy_helper.from_array(np.ones((4, 4, 3, 3), np.float32), "w"),
             numpy_helper.from_array(np.ones(4, np.float32), "b")]
    infos = [helper.make_tensor_value_info("t%d" % i, TensorProto.FLOAT, ["N", 4, "H", "W"])
             for i in range(0, count, 2)]
    g = helper.make_graph(
        nodes, "many", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, "H", "W"])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], initializer=inits,
        value_info=infos)
    onnx.save(helper.make_model(g), path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    big_weights(os.path.join(out, "big_weights.onnx"))
    many_nodes(os.path.join(out, "many_nodes.onnx"))
    print("wrote big_weights.onnx and many_nodes.onnx to", out)


if __name__ == "__main__":
    main()
