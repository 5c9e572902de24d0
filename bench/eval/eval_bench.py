#!/usr/bin/env python3
"""Evaluation speed: the median time of one run of each model,
shapeflow's executor (`shapeflow run --repeat R --threads T`) against onnxruntime (T intra-op
threads, one by default; graph optimisations off and on: scripts/ort/run_npy.js --repeat R), on the same random
inputs (the first size set of scripts/precision_sizes.json), in the same run, as ratios.

usage: bench/eval/eval_bench.py [--shapeflow PATH[,PATH2]] [--models a,b] [--repeat R] [--threads T]
                               [--models-dir DIR --sizes SIZES.json]
--models-dir and --sizes time models outside the dev corpus (each model's first size set is used).
With two binaries (before and after a change) both are timed, one after the other, per model.
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
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "dev_models"))
    ap.add_argument("--sizes", default=os.path.join(ROOT, "scripts", "precision_sizes.json"))
    a = ap.parse_args()
    sizes = json.load(open(a.sizes))
    runner = os.path.join(ROOT, "scripts", "ort", "run_npy.js")
    binaries = a.shapeflow.split(",")
    heads = "".join(f"{'shapeflow' + (str(i + 1) if len(binaries) > 1 else '') + ' ms':>15}" for i in range(len(binaries)))
    print(f"{'model':<20}{heads} {'ort (opt off)':>14} {'ort (opt on)':>13}" + " vs off  vs on" * len(binaries))
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            path = os.path.join(a.models_dir, name + ".onnx")
            feeds = inputs_of(path, sizes[name][0], np.random.default_rng(0))
            specs = []
            for k, v in feeds.items():
                f = os.path.join(tmp, f"{name}_{len(specs)}.npy")
                np.save(f, v)
                specs.append(f"{k}={f}")
            sf = []
            for b in binaries:
                cmd = [b, "run", path, "--repeat", str(a.repeat), "--threads", str(a.threads), "--json"]
                for s in specs:
                    cmd += ["--input", s]
                sf.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["median_ms"])
            ort = {}
            for opt in (False, True):
                c = ["node", runner, path, "-", *specs, "--repeat", str(a.repeat), "--threads", str(a.threads)] + (
                    ["--optimize"] if opt else [])
                out = subprocess.run(c, check=True, capture_output=True, text=True).stdout
                ort[opt] = json.loads(out.strip().splitlines()[-1])["median_ms"]
            ratios = "".join(f" {t / ort[False]:>6.2f} {t / ort[True]:>6.2f}" for t in sf)
            print(f"{name:<20}" + "".join(f"{t:>15.1f}" for t in sf) + f" {ort[False]:>14.1f} {ort[True]:>13.1f}" + ratios)


if __name__ == "__main__":
    main()
