#!/usr/bin/env python3
"""The decode step of an LLM: one token against a cache of P positions (batch 1), the median time
of one run of each decoder of dev_models/extra, shapeflow's executor (`shapeflow run --repeat R`)
against onnxruntime with its optimisations on (scripts/ort/run_npy.js --optimize --repeat R), one
thread, the same random inputs (masks of ones, token ids 0), each pair run `--rounds` times
interleaved; prints every round's figures and their medians.

usage: bench/eval/decode_bench.py [--shapeflow PATH[,PATH2]] [--models a,b] [--past P] [--repeat R] [--rounds K]
With two binaries, both are timed in each round (before/after figures of one change).
Needs scripts/setup_precision.sh and the decoders (README, "LLM decoders").
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from eval_check import inputs_of  # noqa: E402

MODELS = "llama_decoder,builder_decoder,attention23_decoder,gpt_past,encdec_step"


def step_sizes(past):
    """Every decoder's size names at one token against `past` cached positions."""
    return {"batch_size": 1, "sequence_length": 1, "past_sequence_length": past,
            "total_sequence_length": past + 1, "encoder_sequence_length": 64,
            "B": 1, "S": 1, "P": past, "L": past + 1}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default=os.path.join(ROOT, "build/src/cli/shapeflow"))
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--past", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    binaries = a.shapeflow.split(",")
    runner = os.path.join(ROOT, "scripts", "ort", "run_npy.js")
    heads = [f"shapeflow{i + 1 if len(binaries) > 1 else ''} ms" for i in range(len(binaries))]
    print(f"{'model':<22}" + "".join(f"{h:>14}" for h in heads) + f"{'ort (opt on)':>14}" + "".join(f"{'ratio':>8}" for _ in binaries))
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            path = os.path.join(ROOT, "dev_models", "extra", name + ".onnx")
            feeds = inputs_of(path, step_sizes(a.past), np.random.default_rng(0))
            specs = []
            for k, v in feeds.items():
                f = os.path.join(tmp, f"{name}_{len(specs)}.npy")
                np.save(f, v)
                specs.append(f"{k}={f}")
            times = [[] for _ in binaries]
            ort = []
            for _ in range(a.rounds):
                for i, b in enumerate(binaries):
                    cmd = [b, "run", path, "--repeat", str(a.repeat), "--json"]
                    for s in specs:
                        cmd += ["--feed", s]
                    times[i].append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["median_ms"])
                c = ["node", runner, path, "-", *specs, "--repeat", str(a.repeat), "--optimize"]
                out = subprocess.run(c, check=True, capture_output=True, text=True).stdout
                ort.append(json.loads(out.strip().splitlines()[-1])["median_ms"])
            med = [statistics.median(t) for t in times]
            o = statistics.median(ort)
            print(f"{name:<22}" + "".join(f"{m:>14.3f}" for m in med) + f"{o:>14.3f}" + "".join(f"{m / o:>8.2f}" for m in med)
                  + "   rounds: " + "; ".join(" ".join(f"{t:.3f}" for t in ts) for ts in times) + " | ort " + " ".join(f"{t:.3f}" for t in ort))


if __name__ == "__main__":
    main()
