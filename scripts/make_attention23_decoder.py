#!/usr/bin/env python3
"""A small decoder with a KV cache written with ONNX opset 23's own attention operators (no
com.microsoft ops, no torch): RMSNormalization, RotaryEmbedding and Attention, built by hand with
onnx.helper (random weights, seeded) so that an onnx package that does not know opset 23 can
still write it (no checker, no onnx shape inference).
Inputs: input_ids int64 [batch_size, sequence_length], attention_mask int64
[batch_size, total_sequence_length], past_key_values.N.key/value float32
[batch_size, 2, past_sequence_length, 16]. Outputs: logits [batch_size, sequence_length, 64] and
present.N.key/value [batch_size, 2, total_sequence_length, 16] (Attention's present_key and
present_value: past and new keys concatenated on dim 2).
Computed in the graph from shapes: past_sequence_length = Shape(past_key_values.0.key)[2];
position_ids = Expand(Unsqueeze(Range(past, past + seq)), [batch, seq]) fed to RotaryEmbedding
(4-D input, non-interleaved, cos/sin caches [256, 8] as initializers); a boolean attention mask
[batch, 1, seq, total] = And(LessOrEqual(Range(0, past + seq) [1, past + seq],
position [seq, 1]), Cast<bool>(attention_mask) [batch, 1, 1, total]) given to Attention as
attn_mask (is_causal stays 0: Attention-23's is_causal aligns the causal triangle top-left,
which is wrong for a decode step with a past cache). The causal part's length comes from
past + seq and the padding part's from attention_mask, so the And only broadcasts when
total_sequence_length == past_sequence_length + sequence_length.
Per layer: RMSNormalization, Q/K/V MatMuls, Reshape [0, 0, heads, 16] + Transpose to
[batch, heads, seq, 16] (4 query heads, 2 KV heads: GQA implied by the 4-D shapes, no
q_num_heads / kv_num_heads attributes), RotaryEmbedding on Q and K, Attention (attn_mask,
past_key, past_value in; Y, present_key, present_value out), Transpose + Reshape back, o_proj,
residual Add, RMSNormalization, a SiLU-gated MLP (gate * Sigmoid(gate) * up, Swish being opset
24), down_proj, residual Add; then a final RMSNormalization and lm_head.
Vocab 64, hidden 64, 2 layers, MLP 128, opset 23, IR version 10.
Needs python3-onnx and python3-numpy (Debian); --verify also needs scripts/ort (onnxruntime for
node).
  /usr/bin/python3 scripts/make_attention23_decoder.py dev_models/extra/attention23_decoder.onnx [--verify]
--verify runs the model with onnxruntime (scripts/ort/run_npy.js) at past 0 (caches [B, 2, 0, 16])
and past > 0, batch 1 and 2 (two cases with a left-padded attention mask), checks every output's shape
(present.N.* of length past + seq) and compares the values with a numpy reference of the same
decoder; it also checks that a prefill followed by a decode step fed with the prefill's present
caches gives the logits of one prefill of the whole sequence."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD, LAYERS, FF, MAX_POS = 64, 64, 4, 2, 16, 2, 128, 256
THETA, EPS = 10000.0, 1e-6
HERE = os.path.dirname(os.path.abspath(__file__))


def weights():
    """The decoder's parameters, from a fixed seed."""
    rng = np.random.default_rng(23)
    w = {"embed": (rng.standard_normal((VOCAB, HIDDEN)) * 0.5).astype(np.float32)}
    for i in range(LAYERS):
        p = f"layers.{i}."
        for name, shape in (("q_proj", (HIDDEN, HEADS * HEAD)), ("k_proj", (HIDDEN, KV_HEADS * HEAD)),
                            ("v_proj", (HIDDEN, KV_HEADS * HEAD)), ("o_proj", (HEADS * HEAD, HIDDEN)),
                            ("gate_proj", (HIDDEN, FF)), ("up_proj", (HIDDEN, FF)),
                            ("down_proj", (FF, HIDDEN))):
            w[p + name] = (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
        w[p + "input_norm"] = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
        w[p + "post_norm"] = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    w["final_norm"] = (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    w["lm_head"] = (rng.standard_normal((HIDDEN, VOCAB)) / np.sqrt(HIDDEN)).astype(np.float32)
    inv = 1.0 / (THETA ** (np.arange(0, HEAD, 2, dtype=np.float64) / HEAD))
    freqs = np.outer(np.arange(MAX_POS, dtype=np.float64), inv)
    w["cos_cache"] = np.cos(freqs).astype(np.float32)  # [MAX_POS, HEAD / 2]
    w["sin_cache"] = np.sin(freqs).astype(np.float32)
    return w


def build(w):
    nodes, inits = [], []

    def init(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output + "_node", **attrs))
        return output

    for name in ("embed", "cos_cache", "sin_cache", "final_norm", "lm_head"):
        init(name, w[name])
    i64 = lambda name, v: init(name, np.array(v, dtype=np.int64))  # noqa: E731
    i64("zero", 0)
    i64("one", 1)
    i64("axes_0", [0])
    i64("axes_1", [1])
    i64("axes_12", [1, 2])
    i64("axes_m1", [-1])
    i64("shape_q", [0, 0, HEADS, HEAD])
    i64("shape_kv", [0, 0, KV_HEADS, HEAD])
    i64("shape_merge", [0, 0, HEADS * HEAD])

    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                            ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", VOCAB])]
    for i in range(LAYERS):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", TensorProto.FLOAT,
                                                        ["batch_size", KV_HEADS, "past_sequence_length", HEAD]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", TensorProto.FLOAT,
                                                         ["batch_size", KV_HEADS, "total_sequence_length", HEAD]))

    # Lengths from shapes: batch, seq (input_ids), past (past_key_values.0.key dim 2).
    ids_shape = node("Shape", ["input_ids"], "ids_shape")
    batch = node("Gather", [ids_shape, "zero"], "batch", axis=0)            # scalar
    seq = node("Gather", [ids_shape, "one"], "seq", axis=0)                 # scalar
    past_shape = node("Shape", ["past_key_values.0.key"], "past_shape")
    past = node("Gather", [past_shape, init("two", np.array(2, dtype=np.int64))], "past", axis=0)  # scalar
    total = node("Add", [past, seq], "total")
    positions = node("Range", [past, total, "one"], "positions")            # [seq]: past .. past+seq-1
    pos_row = node("Unsqueeze", [positions, "axes_0"], "positions_row")     # [1, seq]
    bs = node("Concat", [node("Unsqueeze", [batch, "axes_0"], "batch_1d"),
                         node("Unsqueeze", [seq, "axes_0"], "seq_1d")], "batch_seq", axis=0)
    position_ids = node("Expand", [pos_row, bs], "position_ids")           # [batch, seq]
    # Boolean mask [batch, 1, seq, total]: key k is visible to query q if k <= past + q and
    # attention_mask[b, k] != 0.
    keys = node("Unsqueeze", [node("Range", ["zero", total, "one"], "key_positions"), "axes_0"],
                "key_positions_row")                                        # [1, past+seq]
    pos_col = node("Unsqueeze", [positions, "axes_m1"], "positions_col")    # [seq, 1]
    causal = node("LessOrEqual", [keys, pos_col], "causal")                 # [seq, past+seq]
    pad = node("Unsqueeze", [node("Cast", ["attention_mask"], "mask_bool", to=TensorProto.BOOL), "axes_12"],
               "mask_b11t")                                                 # [batch, 1, 1, total]
    mask = node("And", [causal, pad], "attn_mask")                          # [batch, 1, seq, total]

    x = node("Gather", ["embed", "input_ids"], "embeddings", axis=0)       # [batch, seq, HIDDEN]
    for i in range(LAYERS):
        p = f"layers.{i}."
        for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
                     "input_norm", "post_norm"):
            init(p + name, w[p + name])
        h = node("RMSNormalization", [x, p + "input_norm"], p + "input_norm.out", axis=-1, epsilon=EPS)

        def heads(proj, shape, n):
            y = node("MatMul", [h, p + proj], p + proj + ".out")
            y = node("Reshape", [y, shape], p + proj + ".split")            # [batch, seq, n, HEAD]
            return node("Transpose", [y], p + proj + ".heads", perm=[0, 2, 1, 3])  # [batch, n, seq, HEAD]

        q = heads("q_proj", "shape_q", HEADS)
        k = heads("k_proj", "shape_kv", KV_HEADS)
        v = heads("v_proj", "shape_kv", KV_HEADS)
        q = node("RotaryEmbedding", [q, "cos_cache", "sin_cache", position_ids], p + "q_rot")
        k = node("RotaryEmbedding", [k, "cos_cache", "sin_cache", position_ids], p + "k_rot")
        attn = p + "attn.out"
        nodes.append(helper.make_node(
            "Attention", [q, k, v, mask, f"past_key_values.{i}.key", f"past_key_values.{i}.value"],
            [attn, f"present.{i}.key", f"present.{i}.value"], name=p + "attn"))  # [batch, HEADS, seq, HEAD]
        a = node("Transpose", [attn], p + "attn.t", perm=[0, 2, 1, 3])
        a = node("Reshape", [a, "shape_merge"], p + "attn.merged")          # [batch, seq, HEADS*HEAD]
        x = node("Add", [x, node("MatMul", [a, p + "o_proj"], p + "o_proj.out")], p + "residual1")
        h = node("RMSNormalization", [x, p + "post_norm"], p + "post_norm.out", axis=-1, epsilon=EPS)
        gate = node("MatMul", [h, p + "gate_proj"], p + "gate_proj.out")
        silu = node("Mul", [gate, node("Sigmoid", [gate], p + "gate.sigmoid")], p + "gate.silu")
        up = node("MatMul", [h, p + "up_proj"], p + "up_proj.out")
        down = node("MatMul", [node("Mul", [silu, up], p + "mlp.in"), p + "down_proj"], p + "down_proj.out")
        x = node("Add", [x, down], p + "residual2")
    h = node("RMSNormalization", [x, "final_norm"], "final_norm.out", axis=-1, epsilon=EPS)
    node("MatMul", [h, "lm_head"], "logits")

    graph = helper.make_graph(nodes, "attention23_decoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)],
                              producer_name="shapeflow/scripts/make_attention23_decoder.py")
    model.ir_version = 10
    return model


# ---- numpy reference of the same decoder (for --verify) ----

def _rms(x, g):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * g


def _rope(x, cos, sin, pos):
    """x [B, n, S, HEAD], pos [B, S]; non-interleaved halves."""
    c, s = cos[pos][:, None], sin[pos][:, None]  # [B, 1, S, HEAD/2]
    x1, x2 = x[..., :HEAD // 2], x[..., HEAD // 2:]
    return np.concatenate([c * x1 - s * x2, s * x1 + c * x2], axis=-1)


def reference(w, ids, mask, pasts):
    w = {k: v.astype(np.float64) for k, v in w.items()}
    b, s = ids.shape
    past = pasts[0].shape[2]
    t = past + s
    pos = np.broadcast_to(np.arange(past, t), (b, s))
    allowed = (np.arange(t)[None, :] <= (past + np.arange(s))[:, None])[None, None] & (mask != 0)[:, None, None, :]
    x = w["embed"][ids]
    presents = []
    for i in range(LAYERS):
        p = f"layers.{i}."
        h = _rms(x, w[p + "input_norm"])
        q = (h @ w[p + "q_proj"]).reshape(b, s, HEADS, HEAD).transpose(0, 2, 1, 3)
        k = (h @ w[p + "k_proj"]).reshape(b, s, KV_HEADS, HEAD).transpose(0, 2, 1, 3)
        v = (h @ w[p + "v_proj"]).reshape(b, s, KV_HEADS, HEAD).transpose(0, 2, 1, 3)
        q, k = _rope(q, w["cos_cache"], w["sin_cache"], pos), _rope(k, w["cos_cache"], w["sin_cache"], pos)
        k = np.concatenate([pasts[2 * i], k], axis=2)
        v = np.concatenate([pasts[2 * i + 1], v], axis=2)
        presents += [k, v]
        kr, vr = np.repeat(k, HEADS // KV_HEADS, axis=1), np.repeat(v, HEADS // KV_HEADS, axis=1)
        sc = q @ kr.transpose(0, 1, 3, 2) / np.sqrt(HEAD)
        sc = np.where(allowed, sc, -np.inf)
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        a = (sc / sc.sum(-1, keepdims=True)) @ vr                       # [B, HEADS, S, HEAD]
        x = x + a.transpose(0, 2, 1, 3).reshape(b, s, HEADS * HEAD) @ w[p + "o_proj"]
        h = _rms(x, w[p + "post_norm"])
        g = h @ w[p + "gate_proj"]
        x = x + ((g / (1 + np.exp(-g))) * (h @ w[p + "up_proj"])) @ w[p + "down_proj"]
    return [_rms(x, w["final_norm"]) @ w["lm_head"]] + presents


def names():
    ins = ["input_ids", "attention_mask"] + [f"past_key_values.{i}.{k}" for i in range(LAYERS) for k in ("key", "value")]
    outs = ["logits"] + [f"present.{i}.{k}" for i in range(LAYERS) for k in ("key", "value")]
    return ins, outs


def run_ort(path, feeds):
    """Runs PATH with onnxruntime (scripts/ort/run_npy.js); returns {output name: array}."""
    with tempfile.TemporaryDirectory() as d:
        args = []
        for n, a in feeds.items():
            f = os.path.join(d, n + ".in.npy")
            np.save(f, a)
            args.append(f"{n}={f}")
        out = os.path.join(d, "out")
        r = subprocess.run(["node", os.path.join(HERE, "ort", "run_npy.js"), path, out] + args,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"onnxruntime failed: {r.stderr.strip()}")
        return {n: np.load(os.path.join(out, n + ".npy")) for n in names()[1]}


def sample(rng, batch, seq, past, pad=0):
    ids = rng.integers(0, VOCAB, size=(batch, seq), dtype=np.int64)
    mask = np.ones((batch, past + seq), dtype=np.int64)
    if pad:
        mask[-1, :pad] = 0  # left padding of the last row
    pasts = [rng.uniform(-1, 1, (batch, KV_HEADS, past, HEAD)).astype(np.float32) for _ in range(2 * LAYERS)]
    return ids, mask, pasts


def verify(w, path, cases):
    ins, outs = names()
    rng = np.random.default_rng(5)
    for batch, seq, past, pad in cases:
        ids, mask, pasts = sample(rng, batch, seq, past, pad)
        got = run_ort(path, dict(zip(ins, [ids, mask] + pasts)))
        want = reference(w, ids, mask, pasts)
        worst = 0.0
        for n, ref in zip(outs, want):
            expect = (batch, seq, VOCAB) if n == "logits" else (batch, KV_HEADS, past + seq, HEAD)
            if got[n].shape != expect:
                raise SystemExit(f"batch {batch} seq {seq} past {past}: {n} has shape {got[n].shape}, "
                                 f"expected {expect}")
            if got[n].size:
                worst = max(worst, float(np.abs(got[n] - ref).max()))
        if not worst <= 1e-4:  # also fails on NaN
            raise SystemExit(f"batch {batch} seq {seq} past {past} pad {pad}: max |ort - numpy| {worst}")
        print(f"verified batch {batch} seq {seq} past {past} pad {pad}: logits {list(got['logits'].shape)}, "
              f"present.0.key {list(got['present.0.key'].shape)}, present.1.value "
              f"{list(got['present.1.value'].shape)}, max |ort - numpy| {worst:.2e}")
    # Prefill of 6 tokens then one decode step from the presents == one prefill of 7 tokens.
    ids, _, _ = sample(rng, 2, 7, 0)
    empty = [np.zeros((2, KV_HEADS, 0, HEAD), dtype=np.float32)] * (2 * LAYERS)
    full = run_ort(path, dict(zip(ins, [ids, np.ones((2, 7), np.int64)] + empty)))
    pre = run_ort(path, dict(zip(ins, [ids[:, :6], np.ones((2, 6), np.int64)] + empty)))
    step = run_ort(path, dict(zip(ins, [ids[:, 6:], np.ones((2, 7), np.int64)] + [pre[n] for n in outs[1:]])))
    diff = float(np.abs(step["logits"][:, 0] - full["logits"][:, 6]).max())
    diff = max(diff, max(float(np.abs(step[n] - full[n]).max()) for n in outs[1:]))
    if not diff <= 1e-4:
        raise SystemExit(f"prefill 6 + decode 1 differs from prefill 7: {diff}")
    print(f"verified prefill 6 + decode 1 == prefill 7 (batch 2): max diff {diff:.2e}")


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--verify"]
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    out = argv[0] if argv else "dev_models/extra/attention23_decoder.onnx"
    w = weights()
    onnx.save(build(w), out)
    print("wrote", out)
    if "--verify" in sys.argv:
        verify(w, out, [(1, 5, 0, 0), (1, 1, 0, 0), (2, 1, 7, 0), (2, 4, 9, 2), (2, 3, 2, 1)])
