#!/usr/bin/env python3
"""Concrete memory plans at many sizes: each model of bench/plan/domains.json whose domain has an
image size (H, W) or a sequence length, planned at one size at a time (`shapeflow plan --dim
SYM=V..V` for every symbol; a decoder's mask length its cache's plus its tokens, the cache
empty), the peak against the lower bound of the model's order. The plan
bench judges the ends and the middle of each domain; sizes between them (odd ones, where
strides round) are where a placement can miss its bound while every end is met.

usage: /usr/bin/python3 bench/plan/concrete_sweep.py [--shapeflow build/src/cli/shapeflow]
           [--models-dir dev_models] [--extra dev_models/extra] [--goal 1.01] [--models a,b]
           [--caller-owned-io]
Prints one row per model (sizes planned, the worst ratio and where) and every size above the goal;
exits 0 whatever it finds (a measurement, not a test).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
IMAGE = [33, 47, 64, 97, 128, 161, 224, 257, 320, 383, 448, 512]
SEQ = [1, 3, 17, 64, 100, 257, 512]
BATCH = [1, 3]


def sizes_for(domain):
    """The bindings to plan: every symbol at one value, inside its domain."""
    spatial = [s for s in domain if s in ("H", "W")]
    seq = [s for s in domain if s in ("S", "T", "sequence_length")]
    batch = [s for s in domain if s in ("N", "B", "batch_size")]
    if not spatial and not seq:
        return []
    out = []
    for b in BATCH:
        values = IMAGE if spatial else SEQ
        for v in values:
            binding = {}
            for s, (lo, hi) in domain.items():
                if s in spatial or s in seq:
                    binding[s] = min(max(v, lo), hi)
                elif s in batch:
                    binding[s] = min(max(b, lo), hi)
                else:
                    binding[s] = lo
            # A decoder's mask length is its cache's plus its tokens.
            for total, past, tokens in (("total_sequence_length", "past_sequence_length", "sequence_length"),
                                        ("L", "P", "S")):
                if total in binding and past in binding and tokens in binding:
                    binding[total] = binding[past] + binding[tokens]
            if binding not in out:
                out.append(binding)
    return out


def plan(shapeflow, model, binding, caller_io):
    args = [shapeflow, "plan", model, "--json"] + (["--caller-owned-io"] if caller_io else [])
    for s, v in binding.items():
        args += ["--dim", f"{s}={v}..{v}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr or r.stdout).strip().splitlines()[-1:]
    j = json.loads(r.stdout)
    # A model with sizes that depend on the data keeps them as symbols: its peak and bound at
    # their upper ends (the reference its placement is decided at).
    peak, bound = j["peak"], j["lower_bound_model_order"]
    peak = peak["max"] if isinstance(peak, dict) else peak
    bound = bound["max"] if isinstance(bound, dict) else bound
    return peak / max(1, bound), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default="build/src/cli/shapeflow")
    ap.add_argument("--models-dir", default="dev_models")
    ap.add_argument("--extra", default="dev_models/extra")
    ap.add_argument("--goal", type=float, default=1.01)
    ap.add_argument("--models", default="")
    ap.add_argument("--caller-owned-io", action="store_true",
                    help="graph inputs and outputs outside the arena (plan --caller-owned-io)")
    a = ap.parse_args()
    domains = json.load(open(os.path.join(HERE, "domains.json")))
    wanted = set(a.models.split(",")) if a.models else None
    print("| model | sizes planned | worst | at | above the goal |")
    print("|---|---:|---:|---|---:|")
    misses = []
    for name, domain in domains.items():
        if name.startswith("_") or (wanted and name not in wanted):
            continue
        path = next((p for p in (os.path.join(a.models_dir, name + ".onnx"),
                                 os.path.join(a.extra, name + ".onnx")) if os.path.exists(p)), None)
        bindings = sizes_for(domain)
        if not path or not bindings:
            continue
        worst, worst_at, above, planned = 0.0, None, 0, 0
        for b in bindings:
            ratio, err = plan(a.shapeflow, path, b, a.caller_owned_io)
            if ratio is None:
                print(f"  {name} {b}: {err}", file=sys.stderr)
                continue
            planned += 1
            if ratio > worst:
                worst, worst_at = ratio, b
            if ratio > a.goal:
                above += 1
                misses.append((name, b, ratio))
        at = ",".join(f"{k}={v}" for k, v in (worst_at or {}).items())
        print(f"| {name} | {planned} | {worst:.4f} | {at} | {above} |", flush=True)
    for name, b, ratio in misses:
        print(f"above {a.goal}: {name} {b} {ratio:.4f}")


if __name__ == "__main__":
    main()
