#!/usr/bin/env python3
"""Plans are the same on any machine: every dev model planned (`shapeflow plan --json`, both
orders, symbolic over bench/plan/domains.json's ranges) once on an idle machine and once with
every core busy, byte for byte. The planner's searches stop on work budgets, never on time.

usage: scripts/plan_determinism.py [--shapeflow PATH] [--models-dir DIR]
Exit status 1 when a plan differs or no model was planned."""
import argparse, glob, json, multiprocessing, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spin(stop):
    while not stop.is_set():
        sum(i * i for i in range(10000))


def plans(shapeflow, models, domains):
    out = {}
    for path in models:
        name = os.path.basename(path)[:-5]
        dims = [f"--dim={k}={lo}..{hi}" for k, (lo, hi) in domains.get(name, {}).items()]
        for order in ("model", "memory"):
            r = subprocess.run([shapeflow, "plan", path, "--json", "--order", order, *dims], capture_output=True)
            out[(name, order)] = (r.returncode, r.stdout, r.stderr)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapeflow", default=os.path.join(ROOT, "build/src/cli/shapeflow"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "dev_models"))
    a = ap.parse_args()
    domains = {k: v for k, v in json.load(open(os.path.join(ROOT, "bench/plan/domains.json"))).items()
               if not k.startswith("_")}
    models = sorted(glob.glob(os.path.join(a.models_dir, "*.onnx")))
    if not models:
        print(f"no models in {a.models_dir} (scripts/setup_precision.sh makes them)")
        return 1
    idle = plans(a.shapeflow, models, domains)
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=spin, args=(stop,)) for _ in range(2 * (os.cpu_count() or 1))]
    for p in load:
        p.start()
    try:
        busy = plans(a.shapeflow, models, domains)
    finally:
        stop.set()
        for p in load:
            p.join()
    planned = sum(1 for v in idle.values() if v[0] == 0)
    differ = [k for k in idle if idle[k] != busy[k]]
    for name, order in differ:
        print(f"DIFFERS: {name} ({order} order)")
    print(f"{len(idle)} plans ({planned} planned, {len(idle) - planned} refused alike), "
          f"{len(differ)} differ under load")
    return 1 if differ or planned == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
