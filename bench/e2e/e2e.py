#!/usr/bin/env python3
"""End-to-end benchmark of `shapeflow infer` on large graphs, side by side with ONNX.

For each graph (the scale benchmark's synthetic transformers of 10k and 100k nodes, written by
build/bench/scale/scale_bench, and any models given with --models):
  * phases, in one process, median of --reps (build/bench/e2e/e2e_bench), once with the system
    allocator and once with tcmalloc preloaded: walk (the floor: a protobuf walk over the graph's
    fields), read, import, infer, text, json, annotate, and ONNX's ParseFromArray + InferShapes
    (data propagation on) on the same bytes;
  * the load's growth from the smallest to the largest graph three ways: repetitions in one
    process (--runs rounds of both sizes, interleaved, so that a slow spell of the machine falls
    on both), one load per fresh process, and repetitions with the caches flushed before each;
  * whole commands as a user runs them (the CLI as built), median wall time and peak RSS of
    --runs runs under /usr/bin/time: `infer G`, `infer G --json`, `infer G --out F`.
Prints Markdown tables, and the goals' figures: load per node and its growth from 10k to 100k
nodes, --json against ONNX's parse + InferShapes, peak RSS against the file size + 100 MB.

usage: /usr/bin/python3 bench/e2e/e2e.py [--build build] [--reps 7] [--runs 5] [--flush-mb 1024]
                                         [--weights-mb 80] [--models M...]
(--weights-mb M also writes the largest synthetic graph with its own weights, about M MB of them,
and measures it beside the others.)
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
PHASES = ["walk", "read", "import", "infer", "text", "json", "annotate", "onnx"]


def phases(bench, model, reps, preload):
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = preload
    out = subprocess.run([bench, "--reps", str(reps), model], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold(bench, model, runs, preload):
    """Median walk and load (read + import) ms of `runs` fresh processes: one load each, as the
    CLI does, with every page of the process touched for the first time."""
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = preload
    walks, loads = [], []
    for _ in range(runs):
        out = subprocess.run([bench, "--reps", "1", "--load-only", model], capture_output=True,
                             text=True, env=env, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        walks.append(r["walk_ms"])
        loads.append(r["read_ms"] + r["import_ms"])
    return statistics.median(walks), statistics.median(loads)


def flushed(bench, model, reps, preload, flush_mb):
    """Median walk and load ms of `reps` loads in one process, a buffer of `flush_mb` MB
    written and read before each (--flush): every size starts from the same cold caches, where
    the plain repetitions leave a small graph's whole working set cached from the one before."""
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = preload
    out = subprocess.run([bench, "--reps", str(reps), "--load-only", "--flush", str(flush_mb), model],
                         capture_output=True, text=True, env=env, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["walk_ms"], r["read_ms"] + r["import_ms"]


def warm(bench, small, big, runs, reps, preload):
    """The warm growth, sizes interleaved: `runs` rounds, each one process per size (small, then
    big) running every phase `reps` times, as `phases` does. Returns the medians over the rounds
    of each size's walk and load (read + import) ms, and the lowest and highest round's growth.
    Measuring both sizes in every round keeps a slow spell of the machine (a neighbour on the
    host) from landing on one size only, as it can when each size is measured once."""
    loads = {small: [], big: []}
    walks = {small: [], big: []}
    for _ in range(runs):
        for g in (small, big):
            r = phases(bench, g, reps, preload)
            loads[g].append(r["read_ms"] + r["import_ms"])
            walks[g].append(r["walk_ms"])
    ratios = [b / s for s, b in zip(loads[small], loads[big])]
    return ((statistics.median(walks[small]), statistics.median(loads[small])),
            (statistics.median(walks[big]), statistics.median(loads[big])), min(ratios), max(ratios))


def whole(cli, args, runs):
    """Median wall seconds and peak RSS (MB) of `cli args` over `runs` runs."""
    times, rss = [], []
    for _ in range(runs):
        with tempfile.NamedTemporaryFile() as t:
            subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", t.name, cli] + args,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall, kb = open(t.name).read().split()[-2:]
        times.append(float(wall))
        rss.append(int(kb) / 1024)
    return statistics.median(times), statistics.median(rss)


def cli_load(cli, model, runs):
    """Median load ms of `runs` fresh `shapeflow infer` processes, as the command reports it
    (`--timings`: reading and importing the model, the executable's own allocator and heap)."""
    loads = []
    for _ in range(runs):
        err = subprocess.run([cli, "infer", model, "--timings"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True).stderr
        m = re.search(r"timings: load ([0-9.]+) ms \((\d+) load", err)
        if not m:
            raise SystemExit(f"no timings from {cli} infer {model}: {err[-300:]}")
        loads.append(float(m.group(1)) / int(m.group(2)))
    return statistics.median(loads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--models", nargs="*", default=[])
    ap.add_argument("--weights-mb", type=int, default=0,
                    help="also the largest synthetic graph with its own weights (about this many MB)")
    ap.add_argument("--flush-mb", type=int, default=1024,
                    help="the buffer written between the cache-cold repetitions")
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench/e2e/e2e_bench")
    cli = os.path.join(a.build, "src/cli/shapeflow")
    scale = os.path.join(a.build, "bench/scale/scale_bench")
    sizes = [int(s) for s in a.sizes.split(",")]
    subprocess.run([scale, "--shapeflow-only", "--reps", "1"] + [str(s) for s in sizes],
                   stdout=subprocess.DEVNULL, check=True)
    graphs = [f"/tmp/sf_scale_{s}.onnx" for s in sizes]
    if a.weights_mb:
        subprocess.run([scale, "--shapeflow-only", "--reps", "1", "--weights-mb", str(a.weights_mb),
                        str(sizes[-1])], stdout=subprocess.DEVNULL, check=True)
        graphs.append(f"/tmp/sf_scale_{sizes[-1]}_w{a.weights_mb}.onnx")
    graphs += a.models

    rows = {}
    for g in graphs:
        for alloc, preload in (("system", None), ("tcmalloc", TCMALLOC)):
            rows[(g, alloc)] = phases(bench, g, a.reps, preload)

    print("Phases (ms, median of %d, one process; load = read + import):\n" % a.reps)
    print("| graph | nodes | MB | allocator | " + " | ".join(PHASES) +
          " | load us/node | allocs/node (read, import, infer) |")
    print("|---|---:|---:|---|" + "---:|" * len(PHASES) + "---:|---|")
    for (g, alloc), r in rows.items():
        load = (r["read_ms"] + r["import_ms"]) * 1000 / r["nodes"]
        print(f"| {os.path.basename(g)} | {r['nodes']:,} | {r['bytes'] / 1e6:.1f} | {alloc} | " +
              " | ".join(f"{r[p + '_ms']:.1f}" for p in PHASES) +
              f" | {load:.2f} | {r['read_allocs_per_node']:.1f}, {r['import_allocs_per_node']:.1f}, "
              f"{r['infer_allocs_per_node']:.1f} |")

    if len(sizes) >= 2:
        small, big = f"/tmp/sf_scale_{sizes[0]}.onnx", f"/tmp/sf_scale_{sizes[-1]}.onnx"
        print("\nLoad growth from %d to %d nodes (goal: at most 11x for 10x the nodes), beside "
              "the walk's (the floor, which builds nothing):" % (sizes[0], sizes[-1]))
        print("\n| allocator | process | load ms | load growth | per node us | walk ms | walk growth |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for alloc, preload in (("system", None), ("tcmalloc", TCMALLOC)):
            s, b = rows[(small, alloc)], rows[(big, alloc)]
            (ws, ls), (wb, lb), lo, hi = warm(bench, small, big, a.runs, a.reps, preload)
            print(f"| {alloc} | warm (median of {a.reps} in one process; median of {a.runs} such "
                  f"rounds, sizes interleaved; rounds {lo:.1f}x to {hi:.1f}x) | {ls:.1f} -> {lb:.1f} | "
                  f"{lb / ls:.1f}x | {ls * 1000 / s['nodes']:.2f} -> {lb * 1000 / b['nodes']:.2f} | "
                  f"{ws:.2f} -> {wb:.2f} | {wb / ws:.1f}x |")
            (ws, cs), (wb, cb) = cold(bench, small, a.runs, preload), cold(bench, big, a.runs, preload)
            print(f"| {alloc} | cold (one load per process, median of {a.runs}) | {cs:.1f} -> "
                  f"{cb:.1f} | {cb / cs:.1f}x | {cs * 1000 / s['nodes']:.2f} -> "
                  f"{cb * 1000 / b['nodes']:.2f} | {ws:.2f} -> {wb:.2f} | {wb / ws:.1f}x |")
            (ws, cs) = flushed(bench, small, a.reps, preload, a.flush_mb)
            (wb, cb) = flushed(bench, big, a.reps, preload, a.flush_mb)
            print(f"| {alloc} | warm, caches flushed ({a.flush_mb} MB written before each of "
                  f"{a.reps}) | {cs:.1f} -> {cb:.1f} | {cb / cs:.1f}x | "
                  f"{cs * 1000 / s['nodes']:.2f} -> {cb * 1000 / b['nodes']:.2f} | "
                  f"{ws:.2f} -> {wb:.2f} | {wb / ws:.1f}x |")

    print("\nWhole commands (the CLI as built, median of %d runs: wall s / peak RSS MB):\n" % a.runs)
    print("| graph | MB | `infer G` | `infer G --json` | `infer G --out F` | ONNX parse + InferShapes "
          "(in process, tcmalloc / system) | --json / ONNX (tcmalloc) | CLI load, fresh process (ms, us/node) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for g in graphs:
        t = whole(cli, ["infer", g], a.runs)
        j = whole(cli, ["infer", g, "--json"], a.runs)
        o = whole(cli, ["infer", g, "--out", "/tmp/sf_e2e_annotated.onnx"], a.runs)
        size = os.path.getsize(g) / 1e6
        onnx_t, onnx_s = rows[(g, "tcmalloc")]["onnx_ms"], rows[(g, "system")]["onnx_ms"]
        load = cli_load(cli, g, a.runs)
        nodes = rows[(g, "system")]["nodes"]
        print(f"| {os.path.basename(g)} | {size:.1f} | {t[0]:.2f} / {t[1]:.0f} | "
              f"{j[0]:.2f} / {j[1]:.0f} | {o[0]:.2f} / {o[1]:.0f} | "
              f"{onnx_t / 1000:.2f} / {onnx_s / 1000:.2f} s | {j[0] * 1000 / onnx_t:.2f} | "
              f"{load:.1f}, {load * 1000 / nodes:.2f} |")
        print(f"  peak RSS of --json {j[1]:.0f} MB vs the goal file + 100 MB = {size + 100:.0f} MB",
              file=sys.stderr)


if __name__ == "__main__":
    main()
