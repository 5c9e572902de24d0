#!/usr/bin/python3
"""Whole-model MACs and parameter counts from `shapeflow stats` beside the figures torchvision
publishes for the same architectures (the `num_params` and `_ops` of each model's weights
metadata in torchvision 0.21's model files; `_ops` is called GFLOPS in torchvision's documentation
but counts multiply-accumulates of convolutions and linear layers, which is what `macs` counts).

    scripts/stats_published.py [--shapeflow build/src/cli/shapeflow] [--models-dir dev_models]

Models come from the dev corpus (scripts/make_dev_models.sh) and dev_models/extra
(scripts/make_extra_models.py); a model not exported is skipped. Each runs at the input size the
published figure is for (224x224 unless stated). Prints a Markdown table (README "Statistics")
with the relative differences; exits 1 when a model differs by more than 1% and the table gives
no reason for it (EXPLAINED below), so that a new difference is looked at."""
import argparse
import json
import os
import subprocess
import sys

# file, torchvision name, published params, published GMACs, input (C, H, W) or None for 224.
PUBLISHED = [
    ("alexnet", "alexnet", 61100840, 0.714, None),
    ("vgg11_bn", "vgg11_bn", 132868840, 7.609, None),
    ("resnet18", "resnet18", 11689512, 1.814, None),
    ("mobilenet_v2", "mobilenet_v2", 3504872, 0.301, None),
    ("mnasnet0_5", "mnasnet0_5", 2218512, 0.104, None),
    ("efficientnet_v2_s", "efficientnet_v2_s", 21458488, 8.366, (3, 384, 384)),
    ("regnet_x_400mf", "regnet_x_400mf", 5495976, 0.414, None),
    ("vit_b_32", "vit_b_32", 88224232, 4.409, None),
    ("extra/shufflenet", "shufflenet_v2_x0_5", 1366792, 0.040, None),
    ("extra/squeezenet", "squeezenet1_0", 1248424, 0.819, None),
    ("extra/mobilenet_v3_small", "mobilenet_v3_small", 2542856, 0.057, None),
    ("extra/densenet121", "densenet121", 7978856, 2.834, None),
    ("extra/convnext_tiny", "convnext_tiny", 28589128, 4.456, None),
    ("extra/swin_t", "swin_t", 28288354, 4.491, None),
    ("lraspp_mobilenet", "lraspp_mobilenet_v3_large", 3221538, 2.086, (3, 520, 520)),
    ("extra/deeplabv3_mbv3", "deeplabv3_mobilenet_v3_large", 11029328, 10.452, (3, 520, 520)),
]

# Ops whose MACs torchvision's count includes (its counter hooks convolutions, linear layers and
# matrix products); shapeflow also counts the multiply-accumulates of bilinear Resize (4 per output
# element) and of recurrent cells, shown in the "all MACs" column.
PRODUCTS = {"Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum"}

# Differences beyond 1%, each with its reason (checked by hand; see the README).
EXPLAINED = {}


def stats(shapeflow, path, shape):
    c, h, w = shape or (3, 224, 224)
    cmd = [shapeflow, "stats", path, "--input", f"x=1,{c},{h},{w}", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def number(v):
    if isinstance(v, int):
        return v
    raise ValueError(f"not a number at a concrete size: {v}")


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--shapeflow", default=os.path.join(here, "..", "build", "src", "cli", "shapeflow"))
    ap.add_argument("--models-dir", default=os.path.join(here, "..", "dev_models"))
    args = ap.parse_args()
    rows, unexplained = [], []
    for file, name, params, gmacs, shape in PUBLISHED:
        path = os.path.join(args.models_dir, file + ".onnx")
        if not os.path.exists(path):
            print(f"skipped {file}: {path} not found", file=sys.stderr)
            continue
        j = stats(args.shapeflow, path, shape)
        p = number(j["total"]["params"])
        every = number(j["total"]["macs"])
        m = sum(number(v["macs"]) for op, v in j["by_op_type"].items() if op in PRODUCTS)
        dp = (p - params) / params * 100
        dm = (m / 1e9 - gmacs) / gmacs * 100
        size = "x".join(map(str, (shape or (3, 224, 224))[1:]))
        rows.append((name, size, params, p, dp, gmacs, m / 1e9, dm, every / 1e9))
        # Published GMACs have 3 decimals: a difference within their rounding is no difference.
        rounding = 0.0005 / gmacs * 100
        if (abs(dp) > 1 or abs(dm) > max(1, rounding)) and name not in EXPLAINED:
            unexplained.append(name)
    print("| model | input | params (torchvision) | params (shapeflow) | diff | GMACs (torchvision) | GMACs of products (shapeflow) | diff | all MACs (shapeflow) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, size, pp, p, dp, pm, m, dm, every in rows:
        print(f"| {name} | {size} | {pp:,} | {p:,} | {dp:+.2f}% | {pm:.3f} | {m:.3f} | {dm:+.2f}% | {every:.3f} |")
    for name, why in EXPLAINED.items():
        print(f"\n- {name}: {why}")
    if unexplained:
        print(f"\nbeyond 1% without a reason: {', '.join(unexplained)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
