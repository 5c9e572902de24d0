"""Makes examples/tiny_cnn.onnx: a small CNN with symbolic batch and image size, built with
python3-onnx's helper (no download). It carries the patterns shapeflow is for: strided conv and
pooling on symbolic H and W, and a shape subgraph (Shape -> Gather -> Unsqueeze -> Concat ->
Reshape) that flattens the features.
Run: /usr/bin/python3 scripts/make_example.py examples/tiny_cnn.onnx"""
import sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

rng = np.random.default_rng(0)
def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)

nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3],
                     strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("Shape", ["r2"], ["s"], name="shape"),
    helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
    helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="batch_1d"),
    helper.make_node("Concat", ["n1", "minus1"], ["target"], name="target", axis=0),
    helper.make_node("Reshape", ["r2", "target"], ["flat"], name="flatten"),
    helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
    helper.make_node("Flatten", ["gap"], ["feat"], name="feat", axis=1),
    helper.make_node("Gemm", ["feat", "w3", "b3"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
inits = [w("w1", 8, 3, 3, 3), w("b1", 8), w("w2", 16, 8, 3, 3), w("b2", 16), w("w3", 10, 16), w("b3", 10),
         numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
         numpy_helper.from_array(np.array([0], dtype=np.int64), "axes0"),
         numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus1")]
graph = helper.make_graph(
    nodes, "tiny_cnn",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10]),
     helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["N", "F"])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="shapeflow")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1] if len(sys.argv) > 1 else "examples/tiny_cnn.onnx")
