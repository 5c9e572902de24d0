#!/usr/bin/env python3
"""Expected outputs of Resize with antialias = 1 (opset 18), from onnxruntime, for
tests/eval/kernels/resize_test.cpp. Debian's onnx (1.12) has neither test data nor a reference
implementation for antialias, so onnxruntime is the oracle: each case is a one-node model run
with scripts/ort/run_npy.js on an input whose element i is ((i * 37) % 101) / 100, and the
output printed as a C++ initializer to paste into the test.

usage: /usr/bin/python3 scripts/ort/resize_antialias_cases.py   (needs scripts/ort/node_modules)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# name, input shape, mode, scales, sizes, coordinate_transformation_mode, exclude_outside, cubic A
CASES = [
    ("LinearHalf", [1, 1, 8, 8], "linear", [1, 1, 0.5, 0.5], None, "half_pixel", 0, -0.75),
    ("LinearUneven", [1, 1, 7, 9], "linear", [1, 1, 0.6, 0.35], None, "half_pixel", 0, -0.75),
    ("CubicHalf", [1, 1, 8, 8], "cubic", [1, 1, 0.5, 0.5], None, "half_pixel", 0, -0.75),
    ("CubicSizes", [1, 2, 11, 13], "cubic", None, [1, 2, 4, 5], "half_pixel", 0, -0.75),
    ("LinearUpAndDown", [1, 1, 4, 5], "linear", None, [1, 1, 7, 3], "half_pixel", 0, -0.75),
    ("CubicExcludeOutside", [1, 1, 9, 9], "cubic", [1, 1, 0.4, 0.7], None, "half_pixel", 1, -0.75),
    ("LinearAsymmetric", [1, 1, 9, 9], "linear", [1, 1, 0.5, 0.5], None, "asymmetric", 0, -0.75),
    ("CubicPytorchHalfPixel", [1, 1, 10, 6], "cubic", None, [1, 1, 3, 2], "pytorch_half_pixel", 0, -0.5),
]


def main():
    with tempfile.TemporaryDirectory() as d:
        for name, shape, mode, scales, sizes, ctm, excl, a in CASES:
            inputs = ["X", "", "scales" if scales else "", "sizes" if sizes else ""]
            while inputs[-1] == "":
                inputs.pop()
            attrs = dict(mode=mode, antialias=1, coordinate_transformation_mode=ctm,
                         exclude_outside=excl)
            if mode == "cubic":
                attrs["cubic_coeff_a"] = a
            inits = []
            if scales:
                inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
            if sizes:
                inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
            g = helper.make_graph([helper.make_node("Resize", inputs, ["Y"], **attrs)], "g",
                                  [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
            m.ir_version = 8
            path = os.path.join(d, name + ".onnx")
            onnx.save(m, path)
            n = int(np.prod(shape))
            x = (((np.arange(n) * 37) % 101) / 100).astype(np.float32).reshape(shape)
            np.save(os.path.join(d, name + ".npy"), x)
            out = os.path.join(d, name)
            os.makedirs(out)
            subprocess.run(["node", os.path.join(HERE, "run_npy.js"), path, out,
                            "X=" + os.path.join(d, name + ".npy")], check=True)
            y = np.load(os.path.join(out, "Y.npy"))
            vals = ", ".join("%.7g" % v for v in y.ravel())
            print(f'    {{"{name}", {list(y.shape)}, {{{vals}}}}},'.replace("[", "{").replace("]", "}"))


if __name__ == "__main__":
    sys.exit(main())
