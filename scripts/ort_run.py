"""Running a model in onnxruntime 1.30 (onnxruntime-node through scripts/ort/run_npy.js), shared by
the scripts that make test cases and dev models: run_ort for one set of inputs, and
check_against_ort for a model exported from torch, compared output by output."""
import os
import shutil
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def run_ort(model_path, inputs, tmp):
    """onnxruntime's outputs (by output name) for the inputs, or None and the reason it gave."""
    specs = []
    for name, arr in inputs.items():
        f = os.path.join(tmp, f"in_{len(specs)}.npy")
        np.save(f, arr)
        specs.append(f"{name}={f}")
    outdir = os.path.join(tmp, "out")
    shutil.rmtree(outdir, ignore_errors=True)
    r = subprocess.run(["node", os.path.join(HERE, "ort", "run_npy.js"), model_path, outdir, *specs],
                       capture_output=True, text=True)
    if r.returncode != 0:
        why = " ".join((r.stderr.strip().splitlines() or ["failed"])[-1].split())
        return None, why.replace("run_npy: ", "")[:300]
    return {f[:-4]: np.load(os.path.join(outdir, f)) for f in os.listdir(outdir)}, None


def check_against_ort(path, input_names, output_names, args, want, what, tolerance=1e-4):
    """Runs the model at path on args (torch tensors, in input_names' order) and compares each
    output with want (torch's, in output_names' order): the same shape, and at most `tolerance`
    apart. Exits with the reason otherwise; returns the largest difference."""
    with tempfile.TemporaryDirectory() as d:
        got, why = run_ort(path, {n: t.numpy() for n, t in zip(input_names, args)}, d)
        if got is None:
            raise SystemExit(f"onnxruntime failed at {what}: {why}")
        worst = 0.0
        for n, w in zip(output_names, want):
            if got[n].shape != tuple(w.shape):
                raise SystemExit(f"{n}: onnxruntime shape {got[n].shape}, torch {tuple(w.shape)}")
            worst = max(worst, float(np.abs(got[n] - w.numpy()).max()) if got[n].size else 0.0)
        if worst > tolerance:
            raise SystemExit(f"{what}: max |ort - torch| {worst}")
        return worst
