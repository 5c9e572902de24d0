"""The Python package (src/python/shapeflow): the drop-in infer_shapes, the typed answers against
their subcommands' JSON, Dim arithmetic, the version and the command line, errors in Python's terms.

Run by ctest (`python_module`) with PYTHONPATH at the built package, SHAPEFLOW_CLI at the built
executable and SF_SOURCE_DIR at the repository.
"""
import glob
import json
import os
import re
import resource
import shutil
import subprocess
import sys

import numpy as np
import pytest

import shapeflow

SRC = os.environ.get("SF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("SHAPEFLOW_CLI", os.path.join(SRC, "build", "src", "cli", "shapeflow"))
EXAMPLE = os.path.join(SRC, "examples", "tiny_cnn.onnx")
DEV_MODELS = sorted(glob.glob(os.path.join(SRC, "dev_models", "*.onnx")))
DECODERS = [os.path.join(SRC, "dev_models", "extra", m + ".onnx") for m in ("llama_decoder", "gpt_past")]
KV_MODEL = os.path.join(SRC, "tests", "cli", "data", "kv_concat.onnx")
ELEM = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8, "bool": 9,
        "float16": 10, "float64": 11, "uint32": 12, "uint64": 13, "bfloat16": 16}


def cli(*args):
    out = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return out


def cli_json(*args):
    return json.loads(cli(*args, "--json").stdout)


def model_id(path):
    return os.path.basename(path)


# ---- the drop-in ----

def written_dims(type_proto):
    tt = type_proto.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param if d.HasField("dim_param") else None)
            for d in tt.shape.dim]


def expected_dim(d):
    """What infer_shapes writes for a dim of `infer --json --no-names`: a number, the whole
    expression, or nothing where only an interval is known (an expression over an unnamed input
    dim prints `?` without names and is checked apart)."""
    if isinstance(d, int):
        return d
    return None if "?" in d["expr"] else d["expr"]


@pytest.mark.parametrize("path", DEV_MODELS + [EXAMPLE] + [p for p in DECODERS if os.path.exists(p)], ids=model_id)
def test_infer_shapes_writes_the_cli_facts_and_passes_the_checker(path):
    onnx = pytest.importorskip("onnx")
    original = onnx.load(path, load_external_data=False)
    before = original.SerializeToString()
    out = shapeflow.infer_shapes(original)
    assert original.SerializeToString() == before, "the model given must not change"
    onnx.checker.check_model(out)
    want = cli_json("infer", path, "--no-names")
    infos = {vi.name: vi for vi in out.graph.value_info}
    outputs = {vi.name: vi for vi in out.graph.output}
    inits = {t.name for t in out.graph.initializer}
    compared = 0
    for name, t in want["tensors"].items():
        if name in inits or t["dtype"] is None:
            continue
        if name in outputs:
            vi = outputs[name]
        else:
            assert name in infos, f"{name} has no value_info"
            vi = infos[name]
        assert vi.type.tensor_type.elem_type == ELEM[t["dtype"]], name
        dims = written_dims(vi.type)
        if t["shape"] is None:
            continue
        assert dims is not None and len(dims) == len(t["shape"]), name
        for got, d in zip(dims, t["shape"]):
            exp = expected_dim(d)
            if exp is None:
                assert got is None or isinstance(got, str), (name, got, d)
            else:
                assert got == exp, (name, got, d)
        compared += 1
    assert compared >= len(original.graph.node) // 2, f"only {compared} tensors compared"


def test_infer_shapes_names_unnamed_input_dims_and_fills_outputs():
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [None, "N", 4])
    nodes = [h.make_node("Relu", ["x"], ["y"]), h.make_node("Concat", ["y", "y"], ["z"], axis=0)]
    g = h.make_graph(nodes, "g", [x], [h.make_tensor_value_info("z", onnx.TensorProto.UNDEFINED, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    out = shapeflow.infer_shapes(m)
    onnx.checker.check_model(out)
    assert written_dims(out.graph.input[0].type) == ["x_d0", "N", 4]
    assert written_dims(out.graph.output[0].type) == ["2*x_d0", "N", 4]
    assert out.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    # Fixed inputs are written as fixed; from bytes and from a path too.
    fixed = shapeflow.infer_shapes(m.SerializeToString(), inputs={"x": [2, 3, 4]})
    assert written_dims(fixed.graph.input[0].type) == [2, 3, 4]
    assert written_dims(fixed.graph.output[0].type) == [4, 3, 4]
    shapeflow.infer_shapes(m, strict=True)  # exact: N is inferred from 0, nothing assumed
    with pytest.raises(shapeflow.Error, match="strict"):
        shapeflow.infer_shapes(EXAMPLE, strict=True)  # it assumes N, H, W >= 1


def test_infer_shapes_annotates_subgraphs():
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 4])
    c = h.make_tensor_value_info("c", onnx.TensorProto.BOOL, [])
    then_g = h.make_graph([h.make_node("Relu", ["x"], ["t1"]), h.make_node("Concat", ["t1", "t1"], ["t2"], axis=0)],
                          "then", [], [h.make_tensor_value_info("t2", onnx.TensorProto.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Concat", ["x", "x"], ["e1"], axis=0)], "else", [],
                          [h.make_tensor_value_info("e1", onnx.TensorProto.FLOAT, None)])
    g = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], "g", [x, c],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    out = shapeflow.infer_shapes(m)
    onnx.checker.check_model(out)
    branches = {a.name: a.g for a in out.graph.node[0].attribute}
    t1 = next(vi for vi in branches["then_branch"].value_info if vi.name == "t1")
    assert written_dims(t1.type) == ["N", 4]
    assert written_dims(branches["then_branch"].output[0].type) == ["2*N", 4]
    assert written_dims(branches["else_branch"].output[0].type) == ["2*N", 4]
    assert written_dims(out.graph.output[0].type) == ["2*N", 4]


def test_infer_shapes_path_leaves_external_data_unread(tmp_path):
    onnx = pytest.importorskip("onnx")
    import onnx.numpy_helper
    m = onnx.load(EXAMPLE)
    onnx.save_model(m, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    weights = (tmp_path / "weights.bin").read_bytes()
    shapeflow.infer_shapes_path(tmp_path / "m.onnx", tmp_path / "annotated.onnx")
    assert (tmp_path / "annotated.onnx").stat().st_size < len(weights), "the weights were copied into the model"
    out = onnx.load(str(tmp_path / "annotated.onnx"))  # the weights, through the same location
    onnx.checker.check_model(out)
    assert len(out.graph.value_info) > 0
    assert (tmp_path / "weights.bin").read_bytes() == weights
    assert np.array_equal(onnx.numpy_helper.to_array(out.graph.initializer[0]),
                          onnx.numpy_helper.to_array(onnx.load(EXAMPLE).graph.initializer[0]))
    shapeflow.infer_shapes_path(tmp_path / "m.onnx")  # in place
    assert onnx.load(str(tmp_path / "m.onnx"), load_external_data=False).graph.value_info


def test_infer_shapes_output_runs_in_onnxruntime(tmp_path):
    """onnxruntime (scripts/setup_precision.sh installs onnxruntime-node) loads and runs the
    model infer_shapes writes."""
    onnx = pytest.importorskip("onnx")
    runner = os.path.join(SRC, "scripts", "ort", "run_model.js")
    if not shutil.which("node") or not os.path.isdir(os.path.join(SRC, "scripts", "ort", "node_modules",
                                                                   "onnxruntime-node")):
        pytest.skip("onnxruntime-node is not set up (scripts/setup_precision.sh)")
    out = tmp_path / "m.onnx"
    onnx.save(shapeflow.infer_shapes(EXAMPLE), str(out))
    feed = {"x": {"type": "float32", "value": 0.5, "dims": [2, 3, 20, 24]}}
    (tmp_path / "m.onnx.feed.json").write_text(json.dumps(feed))
    ran = subprocess.run(["node", runner, str(out)], capture_output=True, text=True, timeout=600)
    assert json.loads(ran.stdout.strip().splitlines()[-1])["ok"], ran.stdout + ran.stderr


def test_a_thousand_infer_shapes_calls_do_not_grow_the_process():
    onnx = pytest.importorskip("onnx")
    m = onnx.load(EXAMPLE)

    def rss_kb():
        with open("/proc/self/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    for _ in range(50):
        shapeflow.infer_shapes(m)
    start = rss_kb()
    for _ in range(1000):
        shapeflow.infer_shapes(m)
    grown = rss_kb() - start
    assert grown < 4096, f"grew {grown} KiB over 1000 calls"


# ---- typed answers equal their subcommands ----

def test_stats_object_equals_the_subcommand():
    want = cli_json("stats", EXAMPLE, "--at", "N=1,H=32,W=32")
    s = shapeflow.load(EXAMPLE).infer().stats(at={"N": 1, "H": 32, "W": 32})
    got = s.json()
    got["model"] = want["model"]
    assert got == want
    assert isinstance(s.total.macs, shapeflow.Expression)
    assert s.total.macs.expr == want["total"]["macs"]["expr"]
    assert s.total.macs.evaluate(N=1, H=32, W=32) > 0
    assert s.total.params == want["total"]["params"]
    assert [n.name for n in s.nodes] == [n["name"] for n in want["nodes"]]
    assert set(s.by_op_type) == set(want["by_op_type"])
    assert "<table>" in s._repr_html_()
    assert s.svg().text.lstrip().startswith("<svg") or "<svg" in s.svg().text[:200]


def test_expression_evaluate_agrees_with_a_concrete_inference():
    s = shapeflow.load(EXAMPLE).infer().stats()
    at = shapeflow.load(EXAMPLE).infer(inputs={"x": [2, 3, 40, 36]}).stats()
    assert s.total.macs.evaluate(N=2, H=40, W=36) == at.total.macs


def test_plan_object_equals_the_subcommand():
    want = cli_json("plan", EXAMPLE, "--dim", "N=1..4", "--dim", "H=1..64", "--dim", "W=1..64")
    p = shapeflow.load(EXAMPLE).infer(dims={"N": (1, 4), "H": (1, 64), "W": (1, 64)}).plan()
    got = p.json()
    got["model"] = want["model"]
    assert got == want
    assert p.order == want["order"] and p.align == want["align"] and p.symbolic
    assert [b.tensor for b in p.buffers] == [b["tensor"] for b in want["buffers"]]
    assert p.peak.max == want["peak"]["max"]
    assert "<svg" in p.svg().text[:400]
    assert "<table>" in p._repr_html_()


def test_memory_and_contract_objects_equal_their_subcommands():
    want = cli_json("memory", KV_MODEL, "--at", "B=1,S=4,P=0", "--at", "B=2,S=1,P=7", "--fit", "10KB", "--for", "P")
    m = shapeflow.load(KV_MODEL).memory(at=[{"B": 1, "S": 4, "P": 0}, {"B": 2, "S": 1, "P": 7}], fit="10KB", for_="P")
    got = m.json()
    got["model"] = want["model"]
    assert got == want
    assert [r.at for r in m.rows] == [r["at"] for r in want["rows"]]
    assert [r.total for r in m.rows] == [r["total"] for r in want["rows"]]
    assert m.fit is not None and m.fit["max"] == 308
    assert "<table>" in m._repr_html_()
    want = cli_json("contract", EXAMPLE)
    c = shapeflow.load(EXAMPLE).contract()
    assert [s.name for s in c.symbols] == [s["name"] for s in want["symbols"]]
    assert [r.requirement for r in c.requirements] == [r["requirement"] for r in want["requirements"]]
    assert c.summary == want["summary"]


def test_check_object_equals_the_subcommand():
    want = cli_json("check", EXAMPLE, "--samples", "2")
    c = shapeflow.load(EXAMPLE).check(samples=2)
    got = c.json()
    got["model"] = want["model"]
    assert got == want
    assert c.passed and bool(c) and c.ran == 2 and c.requested == 2
    assert all(s.ran and s.tensors > 0 for s in c.samples)
    at = shapeflow.load(EXAMPLE).check(at=[{"N": 1, "H": 9, "W": 30}])
    assert at.samples[0].binding == {"N": 1, "H": 9, "W": 30} and at.passed


def test_why_and_lower_equal_their_subcommands():
    r = shapeflow.load(EXAMPLE).infer()
    assert r.why("c1", 2) == cli("why", EXAMPLE, "c1[2]").stdout
    for stage in ("shapes", "bounds", "buffers"):
        want = cli_json("lower", EXAMPLE, "--stage", stage)
        got = r.lower(stage)
        assert got.stage == stage
        j = got.json()
        j["model"] = want["model"]
        assert j == want, stage
    with pytest.raises(shapeflow.Error, match="stage"):
        r.lower("nothing")


# ---- the model's declared facts, runs with dims ----

def test_model_inputs_and_outputs_are_the_declared_facts():
    m = shapeflow.load(EXAMPLE)
    (x,) = m.inputs
    assert x.name == "x" and x.dtype == "float32"
    assert [str(d) for d in x.shape] == ["N", "3", "H", "W"]
    assert [o.name for o in m.outputs] == [o["name"] if isinstance(o, dict) else o
                                           for o in cli_json("infer", EXAMPLE)["outputs"]]


def test_run_takes_dims_as_the_cli_takes_dim():
    x = np.random.default_rng(0).standard_normal((2, 3, 20, 24)).astype(np.float32)
    m = shapeflow.load(EXAMPLE)
    plain = m.run({"x": x})
    bounded = m.run({"x": x}, dims={"N": (1, 4), "H": (1, 64), "W": (1, 64)})
    assert plain.keys() == bounded.keys()
    for k in plain:
        assert np.array_equal(plain[k], bounded[k])
    with pytest.raises(shapeflow.Error):
        m.run({"x": x}, dims={"N": (3, 4)})  # the data's N = 2 is outside the range


# ---- Dim ----

def test_dim_arithmetic_gives_the_library_expressions():
    c1 = shapeflow.load(EXAMPLE).infer().tensors["c1"].shape
    n, h = c1[0], c1[2]
    assert str(h) == "(H - 1)//2 + 1"
    assert isinstance(n * 3 + 1, shapeflow.Dim) and str(n * 3 + 1) == "3*N + 1"
    assert n * 2 == n + n and 2 * n == n * 2
    assert (n - n) == 0 and isinstance(n - n, int)
    assert all((h // 2).evaluate(H=v) == ((v - 1) // 2 + 1) // 2 for v in range(1, 40))
    assert (h * h - 1).evaluate(H=9) == 24
    assert n >= 1 and n > 0 and not (n < 1) and 0 < n
    with pytest.raises(shapeflow.Error, match="depends on the sizes"):
        bool(n < 5)
    assert str(n.maximum(1)) == "N" and str(n.minimum(n + 1)) == "N"
    with pytest.raises(shapeflow.Error, match="different inferences"):
        n + shapeflow.load(EXAMPLE).infer().tensors["c1"].shape[0]


# ---- errors speak Python ----

def test_errors_name_the_keyword_arguments_not_cli_flags():
    m = shapeflow.load(EXAMPLE)
    with pytest.raises(shapeflow.Error) as e:
        m.infer().stats(at={"Q": 1})
    assert "--" not in str(e.value) and "Q" in str(e.value)
    with pytest.raises(shapeflow.Error) as e:
        m.infer(dims={"Q": (1, 2)})
    assert "--dim" not in str(e.value)
    with pytest.raises(shapeflow.Error) as e:
        shapeflow.load(KV_MODEL).memory(at=[{"B": 1, "S": 4, "P": 0}], fit="1GiB")
    assert "--" not in str(e.value)


# ---- the package ----

def test_version_is_one_for_the_package_the_module_and_the_command():
    with open(os.path.join(SRC, "VERSION")) as f:
        version = f.read().strip()
    assert shapeflow.__version__ == version
    assert subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout.strip() == f"shapeflow {version}"
    out = subprocess.run([sys.executable, "-m", "shapeflow", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"shapeflow {version}"


def test_python_m_shapeflow_runs_the_command_line():
    out = subprocess.run([sys.executable, "-m", "shapeflow", "infer", EXAMPLE, "--json"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == cli_json("infer", EXAMPLE)
    bad = subprocess.run([sys.executable, "-m", "shapeflow", "infer"], capture_output=True, text=True)
    assert bad.returncode == 2
    usage = subprocess.run([CLI, "why", "--help"], capture_output=True, text=True).stdout
    assert re.search(r"^Usage: shapeflow why", usage, re.M), usage[:200]


def test_every_public_function_has_a_docstring():
    for name in shapeflow.__all__:
        obj = getattr(shapeflow, name)
        if (isinstance(obj, type) or callable(obj)) and hasattr(obj, "__module__") and name != "Quantity":
            assert (obj.__doc__ or "").strip(), name
    for cls in (shapeflow.Model, shapeflow.Inference):
        for attr, value in vars(cls).items():
            if not attr.startswith("_") and (callable(value) or isinstance(value, property)):
                assert (value.__doc__ or "").strip(), f"{cls.__name__}.{attr}"


def test_the_usage_example_type_checks_strictly():
    """mypy --strict on a program that uses the package (Debian's mypy, scripts/install_deps.sh)."""
    mypy = shutil.which("mypy")
    assert mypy, "mypy is not installed (apt-get install mypy)"
    example = os.path.join(SRC, "tests", "python", "typing_example.py")
    env = dict(os.environ, MYPYPATH=os.path.dirname(os.path.dirname(shapeflow.__file__)))
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null",
                          example], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    ran = subprocess.run([sys.executable, example, EXAMPLE], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr


# ---- simplify ----

def test_simplify_equals_the_subcommand_and_the_model_runs(tmp_path):
    onnx = pytest.importorskip("onnx")
    model = os.path.join(SRC, "tests", "cli", "data", "kv_concat.onnx")
    path = EXAMPLE
    s = shapeflow.simplify(path)
    out = tmp_path / "cli.onnx"
    want = json.loads(subprocess.run([CLI, "simplify", path, "-o", str(out), "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    got = s.report.json()
    for key in ("model", "output", "file_bytes"):
        got.pop(key, None), want.pop(key, None)
    assert got == want
    assert s.bytes == out.read_bytes()
    m = s.model
    onnx.checker.check_model(m)
    assert s.report.after.nodes < s.report.before.nodes
    assert s.report.after.shape_nodes == 0 and s.report.inputs_kept
    assert [d.dim_param or d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim] == ["N", 3, "H", "W"]
    # The same outputs from the executor on the original and the simplified model.
    x = np.random.default_rng(0).standard_normal((2, 3, 20, 24)).astype(np.float32)
    a = shapeflow.load(path).run({"x": x})
    b = shapeflow.load(s.bytes).run({"x": x})
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    s.save(tmp_path / "s.onnx")
    assert (tmp_path / "s.onnx").read_bytes() == s.bytes
    # Simplifying again changes nothing.
    again = shapeflow.simplify(s.bytes)
    assert again.report.after.nodes == s.report.after.nodes and again.bytes == s.bytes
    assert "<table>" in s._repr_html_()
    del model


def test_simplify_keeps_a_decoder_dynamic_and_its_cache_empty_runs():
    path = os.path.join(SRC, "tests", "cli", "data", "kv_concat.onnx")
    s = shapeflow.simplify(path)
    past = np.zeros((1, 0, 4), np.float32)
    new = np.ones((1, 3, 4), np.float32)
    a = shapeflow.load(path).run({"past": past, "new": new})
    b = shapeflow.load(s.bytes).run({"past": past, "new": new})
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert s.report.inputs_kept


def test_simplify_writes_external_data_that_onnx_and_shapeflow_read(tmp_path):
    onnx = pytest.importorskip("onnx")
    out = tmp_path / "s.onnx"
    r = subprocess.run([CLI, "simplify", EXAMPLE, "-o", str(out), "--external-data", "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["external_bytes"] > 0 and (tmp_path / "s.onnx.data").stat().st_size == report["external_bytes"]
    assert out.stat().st_size < report["external_bytes"]
    m = onnx.load(str(out))  # reads the data file
    onnx.checker.check_model(m)
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    a = shapeflow.load(EXAMPLE).run({"x": x})
    b = shapeflow.load(str(out)).run({"x": x})
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_plan_ranges_equals_the_subcommand_and_picks_a_range_by_size():
    model = os.path.join(SRC, "tests", "cli", "data", "slot_lifetimes.txt")
    dims = {"S": (1, 8), "T": (1, 8)}
    plans = shapeflow.load(model).plan_ranges(1.05, dims=dims, caller_owned_io=True)
    assert isinstance(plans, shapeflow.RangePlans)
    cli = json.loads(subprocess.run([CLI, "plan", model, "--dim", "S=1..8", "--dim", "T=1..8", "--caller-owned-io",
                                     "--max-ratio", "1.05", "--json"], check=True, capture_output=True,
                                    text=True).stdout)
    assert plans.whole_domain_worst == cli["whole_domain_worst"] > 1.05
    assert [r.dims["T"].max for r in plans.ranges] == [r["dims"]["T"][1] for r in cli["ranges"]]
    assert [r.worst_ratio for r in plans.ranges] == [r["worst_ratio"] for r in cli["ranges"]]
    assert len(plans.ranges) > 1 and all(r.worst_ratio <= 1.05 and r.judged_at for r in plans.ranges)
    big = plans.plan_for({"S": 4, "T": 7})
    assert big is plans.ranges[-1].plan and isinstance(big, shapeflow.Plan)
    with pytest.raises(KeyError):
        plans.plan_for({"S": 4, "T": 9})
    with pytest.raises(shapeflow.Error):
        shapeflow.load(model).plan_ranges(0.5, dims=dims)
