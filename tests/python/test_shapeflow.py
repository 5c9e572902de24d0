"""The Python module (src/python/module.cpp) against the CLI and the library's own guarantees.

Run by ctest (`python_module`) with PYTHONPATH at the built module, SHAPEFLOW_CLI at the built
executable and SF_SOURCE_DIR at the repository.
"""
import glob
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import shapeflow

SRC = os.environ.get("SF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("SHAPEFLOW_CLI", os.path.join(SRC, "build", "src", "cli", "shapeflow"))
EXAMPLE = os.path.join(SRC, "examples", "tiny_cnn.onnx")
DEV_MODELS = sorted(glob.glob(os.path.join(SRC, "dev_models", "*.onnx")))
FUNCTIONS = {"min", "max", "floor", "ceil", "trunc", "round", "f32", "f64"}


def model_id(path):
    return os.path.basename(path) if isinstance(path, str) else str(path)


def cli_json(path, *args):
    out = subprocess.run([CLI, "infer", path, "--json", *args], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def dim_as_json(d):
    """A Dim or int of the object API in the JSON's form."""
    if isinstance(d, int):
        return d
    return {"expr": d.expr, "min": d.min, "max": d.max}


@pytest.mark.parametrize("path", DEV_MODELS + [EXAMPLE], ids=model_id)
def test_every_dev_model_equals_the_cli_json(path):
    r = shapeflow.load(path).infer()
    got, want = r.json(), cli_json(path)
    assert got == want
    # The object API says the same as the expanded JSON, tensor by tensor.
    want = cli_json(path, "--no-names")
    assert r.json(names=False) == want
    tensors = r.tensors
    assert set(tensors) == set(want["tensors"])
    for name, t in want["tensors"].items():
        o = tensors[name]
        assert o.dtype == (t["dtype"] or "")
        assert o.op == t["op"] and o.producer == t["producer"]
        if t["shape"] is None:
            assert o.shape is None
        else:
            assert [dim_as_json(d) for d in o.shape] == t["shape"], name
        if "value" in t:
            assert [dim_as_json(d) for d in o.value] == t["value"], name


@pytest.mark.parametrize("path", DEV_MODELS + [EXAMPLE], ids=model_id)
def test_the_json_follows_the_published_schema(path):
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(SRC, "docs", "schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    for args in ((), ("--no-names",)):
        data = cli_json(path, *args)
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
        # Every name an expression uses is a symbol or a definition (the JSON is evaluable).
        known = set(data["symbols"]) | set(data.get("definitions", {}))
        texts = [d["expr"] for t in data["tensors"].values() for key in ("shape", "value")
                 for d in (t.get(key) or []) if isinstance(d, dict)] + list(data.get("definitions", {}).values())
        for text in texts:
            if text.startswith("?"):
                continue
            names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) - FUNCTIONS
            assert names <= known, (text, names - known)


def test_bytes_path_and_modelproto_load_the_same():
    by_path = shapeflow.load(EXAMPLE).infer().json()
    with open(EXAMPLE, "rb") as f:
        data = f.read()
    by_bytes = shapeflow.load(data).infer().json()
    by_bytearray = shapeflow.load(bytearray(data)).infer().json()
    for j in (by_bytes, by_bytearray):
        assert j["tensors"] == by_path["tensors"]
        assert j["symbols"] == by_path["symbols"]
    onnx = pytest.importorskip("onnx")
    by_proto = shapeflow.load(onnx.load(EXAMPLE)).infer().json()
    assert by_proto["tensors"] == by_path["tensors"]


def test_inputs_dims_and_values_match_the_cli_options():
    m = shapeflow.load(EXAMPLE)
    r = m.infer(inputs={"x": ["N", 3, 64, "W"]}, dims={"N": (1, 8), "W": (16, None)})
    assert r.json()["tensors"] == cli_json(EXAMPLE, "--input", "x=N,3,64,W", "--dim", "N=1..8",
                                           "--dim", "W=16..")["tensors"]
    c1 = r.tensors["c1"]
    n, _, h, w = c1.shape
    assert (n.expr, n.min, n.max) == ("N", 1, 8)
    assert h == 32 and int(h) == 32
    assert w.expr == "(W - 1)//2 + 1" and w.min == 8 and w.max is None
    assert w.evaluate(W=225) == 113
    with pytest.raises(shapeflow.Error):
        int(w)
    with pytest.raises(shapeflow.Error, match="no symbol 'Q'"):
        w.evaluate(Q=1)


def test_values_of_integer_inputs(tmp_path):
    text = b"""opset 17
graph main(x: f32[N,64], t: i64[2]) {
  y = Reshape(x, t)
  return y
}
"""
    r = shapeflow.load(text).infer(values={"t": [-1, 16]})
    assert r.tensors["y"].shape[0].expr == "4*N" and r.tensors["y"].shape[1] == 16
    (tmp_path / "g.txt").write_bytes(text)
    assert r.json()["tensors"] == cli_json(str(tmp_path / "g.txt"), "--value", "t=-1,16")["tensors"]
    with pytest.raises(shapeflow.Error, match="3 elements for input 't'"):
        shapeflow.load(text).infer(values={"t": ["N", 8, 8]})


def test_errors_raise_shapeflow_error_with_the_diagnostic_text():
    with pytest.raises(shapeflow.Error, match="cannot open"):
        shapeflow.load("/nonexistent/model.onnx")
    with pytest.raises(shapeflow.Error):
        shapeflow.load(b"\x00\x01garbage that is not a model")
    with pytest.raises(shapeflow.Error, match="no input 'q'"):
        shapeflow.load(EXAMPLE).infer(inputs={"q": [1]})
    with pytest.raises(shapeflow.Error, match="empty or negative range"):
        shapeflow.load(EXAMPLE).infer(dims={"N": (9, 3)})
    # A model with an error still gives its facts; the error is a Diagnostic.
    bad = b"""opset 17
graph main(a: f32[2,3], b: f32[4,5]) {
  y = Add(a, b)
  return y
}
"""
    r = shapeflow.load(bad).infer()
    assert len(r.errors) == 1
    e = r.errors[0]
    assert (e.severity, e.node, e.op) == ("error", "y", "Add")
    assert "y" in str(e) and "Add" in str(e)
    assert r.json()["diagnostics"][0]["message"] == e.message


def test_the_annotated_model_passes_the_checker():
    onnx = pytest.importorskip("onnx")
    r = shapeflow.load(EXAMPLE).infer()
    m = onnx.load_from_string(r.annotated_model())
    onnx.checker.check_model(m)
    annotated = {vi.name for vi in m.graph.value_info}
    assert {"c1", "r1", "p1"} <= annotated
    c1 = next(vi for vi in m.graph.value_info if vi.name == "c1")
    dims = [d.dim_param or d.dim_value for d in c1.type.tensor_type.shape.dim]
    assert dims == ["N", 8, "(H - 1)//2 + 1", "(W - 1)//2 + 1"]


ORT_RUNNER = os.path.join(SRC, "scripts", "ort", "run_model.js")
ORT_PACKAGE = os.path.join(SRC, "scripts", "ort", "node_modules", "onnxruntime-node")


@pytest.mark.parametrize("path", DEV_MODELS, ids=model_id)
def test_the_annotated_model_passes_the_checker_and_runs_in_onnxruntime(path, tmp_path):
    """`shapeflow infer --out`: onnx.checker accepts it and onnxruntime loads and runs it at the
    first size set of scripts/precision_sizes.json (needs scripts/setup_precision.sh)."""
    onnx = pytest.importorskip("onnx")
    if not shutil.which("node") or not os.path.isdir(ORT_PACKAGE):
        pytest.skip("onnxruntime-node is not set up (scripts/setup_precision.sh)")
    out = tmp_path / "annotated.onnx"
    r = subprocess.run([CLI, "infer", path, "--out", str(out)], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    m = onnx.load(str(out))
    onnx.checker.check_model(m)
    assert len(m.graph.value_info) > 0
    with open(os.path.join(SRC, "scripts", "precision_sizes.json")) as f:
        sizes = json.load(f)[os.path.basename(path)[:-5]][0]
    inits = {t.name for t in m.graph.initializer}
    types = {1: "float32", 6: "int32", 7: "int64", 9: "bool"}
    feed = {}
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in tt.shape.dim]
        kind = types[tt.elem_type]
        value = 0.5 if kind == "float32" else (1 if "mask" in inp.name.lower() or kind == "bool" else 0)
        feed[inp.name] = {"type": kind, "value": value, "dims": dims}
    (tmp_path / "annotated.onnx.feed.json").write_text(json.dumps(feed))
    ran = subprocess.run(["node", ORT_RUNNER, str(out)], capture_output=True, text=True, timeout=600)
    verdict = json.loads(ran.stdout.strip().splitlines()[-1])
    assert verdict["ok"], verdict


def test_stats_and_plan_equal_their_subcommands():
    r = shapeflow.load(EXAMPLE).infer()
    out = subprocess.run([CLI, "stats", EXAMPLE, "--json"], capture_output=True, text=True)
    want = json.loads(out.stdout)
    got = r.stats().json()
    got["model"] = want["model"]
    assert got == want
    out = subprocess.run([CLI, "plan", EXAMPLE, "--json", "--dim", "N=1..4", "--dim", "H=1..64", "--dim", "W=1..64"],
                         capture_output=True, text=True)
    want = json.loads(out.stdout)
    got = shapeflow.load(EXAMPLE).infer(dims={"N": (1, 4), "H": (1, 64), "W": (1, 64)}).plan().json()
    got["model"] = want["model"]
    assert got == want


def test_stats_rows_equal_the_subcommands_several_at():
    rows = [{"N": 1, "H": 32, "W": 32}, {"N": 2, "H": 64, "W": 48}]
    out = subprocess.run([CLI, "stats", EXAMPLE, "--json", "--at", "N=1,H=32,W=32", "--at", "N=2,H=64,W=48"],
                         capture_output=True, text=True)
    want = json.loads(out.stdout)
    got = shapeflow.load(EXAMPLE).infer().stats(at=rows)
    assert len(got["rows"]) == 2 and got["rows"] == want["rows"]
    assert got["rows"][1]["macs"] > got["rows"][0]["macs"]


def test_contract_equals_the_subcommand():
    out = subprocess.run([CLI, "contract", EXAMPLE, "--json"], capture_output=True, text=True)
    want = json.loads(out.stdout)
    got = shapeflow.load(EXAMPLE).contract().json()
    got["model"] = want["model"]
    assert got == want
    assert "x[1] == 3 (declared)" in got["summary"]
    # Sizes the model is told about are the contract's too: a fixed H is no longer a range.
    fixed = shapeflow.load(EXAMPLE).contract(inputs={"x": ["N", 3, 32, "W"]}).json()
    assert {"input": "x", "axis": 2, "value": 32} in fixed["declared"]


def test_memory_equals_the_subcommand():
    model = os.path.join(SRC, "tests", "cli", "data", "kv_concat.onnx")
    args = [CLI, "memory", model, "--at", "B=1,S=4,P=0", "--at", "B=2,S=1,P=7", "--fit", "10KB", "--for", "P",
            "--json"]
    want = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    got = shapeflow.load(model).memory(at=[{"B": 1, "S": 4, "P": 0}, {"B": 2, "S": 1, "P": 7}], fit="10KB", for_="P").json()
    got["model"] = want["model"]
    assert got == want
    assert [(p["input"], p["output"]) for p in got["kv_cache"]] == [("past", "present")]
    assert got["fit"]["max"] == 308
    # A budget in bytes, and the part to fit.
    kv = shapeflow.load(model).memory(at=[{"B": 1, "S": 4, "P": 0}], fit=1000, for_="P", part="kv_cache")
    assert kv["fit"]["part"] == "kv_cache" and kv["fit"]["max"] is not None
    with pytest.raises(Exception, match="go together"):
        shapeflow.load(model).memory(at=[{"B": 1, "S": 4, "P": 0}], fit="1GiB")


def test_run_agrees_with_the_cli_run(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 20, 24)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = shapeflow.load(EXAMPLE).run({"x": x})
    subprocess.run([CLI, "run", EXAMPLE, "--feed", f"x={tmp_path / 'x.npy'}", "--out", str(tmp_path)], check=True,
                   capture_output=True)
    for name, value in out.items():
        want = np.load(tmp_path / f"{name}.npy")
        assert value.dtype == want.dtype and value.shape == want.shape
        np.testing.assert_array_equal(value, want)
    with pytest.raises(shapeflow.Error, match="input 'x'"):
        shapeflow.load(EXAMPLE).run({"x": np.zeros((2, 3), np.float32)})


def test_run_prepares_once_per_set_of_sizes():
    # A loop at one size prepares the model once; another size prepares it again (the prepared
    # run is for its sizes), and going back finds the first one kept; the outputs are those of a
    # model loaded afresh each time.
    rng = np.random.default_rng(3)
    small = rng.standard_normal((1, 3, 20, 24)).astype(np.float32)
    large = rng.standard_normal((2, 3, 28, 16)).astype(np.float32)
    model = shapeflow.load(EXAMPLE)
    assert model.prepared_runs == 0
    for x, prepared in ((small, 1), (small, 1), (large, 2), (small, 2), (large, 2)):
        out = model.run({"x": x})
        assert model.prepared_runs == prepared
        fresh = shapeflow.load(EXAMPLE).run({"x": x})
        assert out.keys() == fresh.keys()
        for name in out:
            np.testing.assert_array_equal(out[name], fresh[name])
    model.run({"x": small}, dims={"N": (1, 4)})
    assert model.prepared_runs == 3
    with pytest.raises(shapeflow.Error, match="input 'x'"):
        model.run({"x": np.zeros((2, 3), np.float32)})


def test_a_long_loop_of_loads_keeps_memory_flat():
    with open(EXAMPLE, "rb") as f:
        data = f.read()

    def rss_kb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024

    def rounds(n):
        for _ in range(n):
            r = shapeflow.load(data).infer()
            r.tensors
            r.json()

    rounds(50)
    before = rss_kb()
    rounds(500)
    grown = rss_kb() - before
    assert grown < 4096, f"RSS grew by {grown} kB over 500 loads"


def test_the_readme_example_runs_as_written(capsys, monkeypatch):
    with open(os.path.join(SRC, "README.md")) as f:
        readme = f.read()
    blocks = [b.split("```", 1)[0] for b in readme.split("```python\n")[1:]]
    code = next(b for b in blocks if "examples/tiny_cnn.onnx" in b)
    assert len(code.strip().splitlines()) <= 12
    monkeypatch.chdir(SRC)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("float32 [Dim('N', min=1, max=64), 8, Dim('(H - 1)//2 + 1'")
    assert out[1] == "112"
    assert out[2] == "3*N + 1"
    assert int(out[3].rsplit(" ", 1)[1]) > 0 and int(out[4]) > 0


def test_mutated_models_give_facts_or_shapeflow_error_nothing_else():
    """Byte flips and truncations of ONNX's node-test models (names that are not UTF-8 included):
    every call either works or raises shapeflow.Error; nothing else escapes, nothing crashes."""
    import random
    seeds = [open(p, "rb").read() for p in sorted(glob.glob("/usr/share/libonnx-testdata/data/node/*/model.onnx"))[:200]]
    if not seeds:
        pytest.skip("libonnx-testdata is not installed")
    rng = random.Random(7)
    loaded = 0
    for _ in range(1500):
        b = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        if rng.random() < 0.3:
            b = b[:rng.randrange(len(b))]
        try:
            r = shapeflow.load(bytes(b)).infer()
        except shapeflow.Error:
            continue
        loaded += 1
        r.json(), r.json(names=False), r.text(), [str(d) for d in r.diagnostics]
        for t in r.tensors.values():
            repr(t)
            for d in t.shape or []:
                repr(d), str(d)
    assert loaded > 0


def test_run_takes_an_empty_cache():
    # A named size that is 0 in the data (the first step of a decoder, its KV cache empty) is
    # run, as onnxruntime runs it: the model is inferred with that size from 0.
    model = os.path.join(SRC, "tests", "cli", "data", "kv_concat.onnx")
    past = np.zeros((2, 0, 4), dtype=np.float32)
    new = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = shapeflow.load(model).run({"past": past, "new": new})
    np.testing.assert_array_equal(out["present"], new)
