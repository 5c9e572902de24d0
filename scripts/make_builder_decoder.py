#!/usr/bin/env python3
"""A decoder written the way onnxruntime-genai's model builder writes one (its graph, random
weights): input_ids [batch, seq], attention_mask [batch, total], past_key_values.N.key/value
[batch, kv_heads, past, head] in, logits and present.N.key/value out; per layer
SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization (com.microsoft), the
projections as MatMulNBits with 4-bit weights, GroupQueryAttention with do_rotary and cos/sin
caches, seqlens_k and total_sequence_length computed from the attention mask, a SiLU MLP.
Needs python3-onnx and python3-numpy (Debian).
  /usr/bin/python3 scripts/make_builder_decoder.py dev_models/extra/builder_decoder.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD, LAYERS, FF, MAX_POS, BLOCK = 64, 64, 4, 2, 16, 2, 128, 256, 32
rng = np.random.default_rng(0)
nodes, inits = [], []


def init(name, array):
    inits.append(numpy_helper.from_array(array, name))
    return name


def node(op, inputs, outputs, domain="", **attrs):
    nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0] + "_node", domain=domain, **attrs))
    return outputs[0]


def matmul_nbits(x, k, n, name):
    """x [..., k] times a [k, n] weight quantized to 4 bits in blocks of BLOCK along k."""
    blocks = (k + BLOCK - 1) // BLOCK
    w = init(name + ".qweight", rng.integers(0, 256, size=(n, blocks, BLOCK // 2), dtype=np.uint8))
    s = init(name + ".scales", (rng.random(n * blocks, dtype=np.float32) * 0.02 + 0.005))
    return node("MatMulNBits", [x, w, s], [name + ".out"], "com.microsoft", K=k, N=n, bits=4, block_size=BLOCK)


def main(path):
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])
    inputs, outputs = [ids, mask], []
    # seqlens_k = sum(mask, 1) - 1 as int32; total_sequence_length = mask's length as int32.
    one = init("one_i64", np.array([1], dtype=np.int64))
    summed = node("ReduceSum", ["attention_mask", one], ["mask_sum"], keepdims=0)
    minus = node("Sub", [summed, init("one_scalar", np.array(1, dtype=np.int64))], ["mask_sum_minus_1"])
    seqlens = node("Cast", [minus], ["seqlens_k"], to=TensorProto.INT32)
    shape = node("Shape", ["attention_mask"], ["mask_shape"])
    length = node("Gather", [shape, init("index_1", np.array(1, dtype=np.int64))], ["mask_length"], axis=0)
    total = node("Cast", [length], ["total_seq_len"], to=TensorProto.INT32)
    emb = init("embed_tokens.weight", rng.standard_normal((VOCAB, HIDDEN), dtype=np.float32) * 0.1)
    x = node("Gather", [emb, "input_ids"], ["embeddings"], axis=0)
    inv = 1.0 / (10000 ** (np.arange(0, HEAD, 2, dtype=np.float32) / HEAD))
    freqs = np.outer(np.arange(MAX_POS, dtype=np.float32), inv)
    cos = init("cos_cache", np.cos(freqs).astype(np.float32))
    sin = init("sin_cache", np.sin(freqs).astype(np.float32))
    residual = None
    for layer in range(LAYERS):
        p = f"layers.{layer}"
        gamma = init(p + ".input_norm", np.ones(HIDDEN, dtype=np.float32))
        if residual is None:
            normed = node("SimplifiedLayerNormalization", [x, gamma], [p + ".input_norm.out"], axis=-1, epsilon=1e-5)
            residual = x
        else:
            outs = [p + ".input_norm.out", "", "", p + ".residual"]
            nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [x, residual, gamma], outs,
                                          name=p + ".input_norm", domain="com.microsoft", epsilon=1e-5))
            normed, residual = outs[0], outs[3]
        q = matmul_nbits(normed, HIDDEN, HEADS * HEAD, p + ".q_proj")
        k = matmul_nbits(normed, HIDDEN, KV_HEADS * HEAD, p + ".k_proj")
        v = matmul_nbits(normed, HIDDEN, KV_HEADS * HEAD, p + ".v_proj")
        pk, pv = f"past_key_values.{layer}.key", f"past_key_values.{layer}.value"
        for name in (pk, pv):
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                        ["batch_size", KV_HEADS, "past_sequence_length", HEAD]))
        qk, qv = f"present.{layer}.key", f"present.{layer}.value"
        for name in (qk, qv):
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                         ["batch_size", KV_HEADS, "total_sequence_length", HEAD]))
        nodes.append(helper.make_node(
            "GroupQueryAttention", [q, k, v, pk, pv, seqlens, total, cos, sin], [p + ".attn", qk, qv],
            name=p + ".attn_node", domain="com.microsoft", num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1))
        o = matmul_nbits(p + ".attn", HEADS * HEAD, HIDDEN, p + ".o_proj")
        gamma2 = init(p + ".post_norm", np.ones(HIDDEN, dtype=np.float32))
        outs = [p + ".post_norm.out", "", "", p + ".residual2"]
        nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [o, residual, gamma2], outs,
                                      name=p + ".post_norm", domain="com.microsoft", epsilon=1e-5))
        normed2, residual = outs[0], outs[3]
        gate = matmul_nbits(normed2, HIDDEN, FF, p + ".gate_proj")
        up = matmul_nbits(normed2, HIDDEN, FF, p + ".up_proj")
        act = node("Mul", [gate, node("Sigmoid", [gate], [p + ".gate_sigmoid"])], [p + ".silu"])
        x = matmul_nbits(node("Mul", [act, up], [p + ".mlp_in"]), FF, HIDDEN, p + ".down_proj")
    gamma = init("final_norm", np.ones(HIDDEN, dtype=np.float32))
    outs = ["final_norm.out", "", "", "final_residual"]
    nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [x, residual, gamma], outs,
                                  name="final_norm", domain="com.microsoft", epsilon=1e-5))
    logits = matmul_nbits("final_norm.out", HIDDEN, VOCAB, "lm_head")
    nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits_node"))
    outputs.insert(0, helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                                    ["batch_size", "sequence_length", VOCAB]))
    graph = helper.make_graph(nodes, "builder_decoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "dev_models/extra/builder_decoder.onnx")
