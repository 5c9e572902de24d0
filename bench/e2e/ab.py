#!/usr/bin/env python3
"""Whole-command wall time of several shapeflow binaries, interleaved (before and after a change,
in one run, so that a slow spell of the machine falls on all of them).

usage: /usr/bin/python3 bench/e2e/ab.py BIN1,BIN2[,...] [--runs N] -- ARGS...
  e.g. bench/e2e/ab.py /tmp/old/shapeflow,build/src/cli/shapeflow -- infer /tmp/sf_scale_100000.onnx --json
Prints each binary's median and fastest wall time over N runs (15 by default).
"""
import argparse
import statistics
import subprocess
import sys
import time


def main():
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries")
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    bins = a.binaries.split(",")
    times = {b: [] for b in bins}
    for _ in range(a.runs):
        for b in bins:
            t0 = time.perf_counter()
            subprocess.run([b] + rest, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[b].append(time.perf_counter() - t0)
    for b in bins:
        print(f"{b}: median {statistics.median(times[b]) * 1000:.1f} ms, fastest {min(times[b]) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
