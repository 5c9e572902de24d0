#!/usr/bin/env python3
"""Evaluation speed: the median time of one run of each model,
shapeflow's executor (`shapeflow run --repeat R --threads T`) against onnxruntime (one intra-op
thread, graph optimisations off and on: scripts/ort/run_npy.js --repeat R), on the same random
inputs (the first size set of scripts/precision_sizes.json), in the same run, as ratios.

usage: bench/eval/eval_bench.py [--shapeflow PATH] [--models a,b] [--repeat R] [--threads T]
Needs scripts/setup_precision.sh (the dev corpus and onnxruntime-node).
"""
import argparse, json, os, subprocess, sys, tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from eval_check import inputs_of  # noqa: E402

MODELS = "resnet18,mobilenet_v2,efficientnet_v2_s,unet_small,bert_tiny,vit_b_32"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default=os.path.join(ROOT, "build/src/cli/shapeflow"))
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    sizes = json.load(open(os.path.join(ROOT, "scripts", "precision_sizes.json")))
    runner = os.path.join(ROOT, "scripts", "ort", "run_npy.js")
    print(f"{'model':<20} {'shapeflow ms':>13} {'ort (opt off)':>14} {'ort (opt on)':>13} {'vs off':>7} {'vs on':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            path = os.path.join(ROOT, "dev_models", name + ".onnx")
            feeds = inputs_of(path, sizes[name][0], np.random.default_rng(0))
            specs = []
            for k, v in feeds.items():
                f = os.path.join(tmp, f"{name}_{len(specs)}.npy")
                np.save(f, v)
                specs.append(f"{k}={f}")
            cmd = [a.shapeflow, "run", path, "--repeat", str(a.repeat), "--threads", str(a.threads), "--json"]
            for s in specs:
                cmd += ["--input", s]
            sf = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["median_ms"]
            ort = {}
            for opt in (False, True):
                c = ["node", runner, path, "-", *specs, "--repeat", str(a.repeat)] + (["--optimize"] if opt else [])
                out = subprocess.run(c, check=True, capture_output=True, text=True).stdout
                ort[opt] = json.loads(out.strip().splitlines()[-1])["median_ms"]
            print(f"{name:<20} {sf:>13.1f} {ort[False]:>14.1f} {ort[True]:>13.1f} {sf / ort[False]:>7.2f} {sf / ort[True]:>7.2f}")


if __name__ == "__main__":
    main()
