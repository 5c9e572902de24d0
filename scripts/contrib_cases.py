#!/usr/bin/env python3
"""Kernel cases for onnxruntime's contrib ops of LLM decoders (GroupQueryAttention, MatMulNBits,
SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, SkipLayerNormalization,
RotaryEmbedding, MultiHeadAttention, GatherBlockQuantized), the QOperator format's ops of its
quantization tool, the ops ONNX removed at opset 10 that it still runs, and default-domain ops where
onnxruntime decides what the specification leaves open, in the on-disk format of ONNX's
backend node tests (model.onnx and test_data_set_0/{input,output}_N.pb), kept in
tests/conformance/data/contrib/, where value_conformance (the executor's values) and the
conformance harness (shapes) read them like tests/conformance/data/node/.

Each case is a one-node graph (opset imports "" 21 and com.microsoft 1) with small random inputs
drawn from a fixed seed (per case, so adding a case changes no other). The expected outputs are
onnxruntime 1.30's (CPU, one thread, graph optimizations off), the reference this project
follows. Quantized weights (MatMulNBits, GatherBlockQuantized) are initializers, as in real
models (onnxruntime prepacks them: accuracy_level 4 only takes effect on a prepacked B); every
other input is a graph input with its input_N.pb. Each case is also computed by a numpy model
of the op (written from onnxruntime's docs/ContribOperators.md and its CPU kernels), and the
manifest says whether onnxruntime agrees with it; the files always hold onnxruntime's values.
A case onnxruntime refuses is not written, and the manifest lists it as a comment with
onnxruntime's reason.

usage: /usr/bin/python3 scripts/contrib_cases.py [--only PATTERN] [--seed N]
Writes tests/conformance/data/contrib/<case>/ and tests/conformance/data/contrib/MANIFEST.tsv
(case, ops, what it covers, onnxruntime against the numpy model). Needs
scripts/setup_precision.sh (onnxruntime-node) and python3-onnx, python3-numpy.
Run the cases with
  build/tests/conformance/value_conformance --data tests/conformance/data/contrib --list
and their shapes with the conformance harness, whose --suite takes only libonnx-testdata's four
suite names, through a folder that calls this one "node":
  mkdir -p /tmp/contrib_as_node && ln -sfn $PWD/tests/conformance/data/contrib /tmp/contrib_as_node/node
  build/tests/conformance/conformance --data-dir /tmp/contrib_as_node --suite node --jobs 2
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_run import run_ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "conformance", "data", "contrib")
MS = "com.microsoft"
ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32,
        np.dtype(np.int64): TensorProto.INT64, np.dtype(np.uint8): TensorProto.UINT8,
        np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint16): TensorProto.UINT16,
        np.dtype(np.int16): TensorProto.INT16, np.dtype(np.bool_): TensorProto.BOOL}

# --------------------------------------------------------------------------------------------
# Names of the files a case writes (onnxruntime runs through scripts/ort_run.py)


def file_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "output"


# --------------------------------------------------------------------------------------------
# A case: one node, its graph inputs (fed, in order), its initializers, its outputs.


class Case:
    def __init__(self, name, ops, covers):
        self.name, self.ops, self.covers = name, ops, covers
        self.rng = np.random.default_rng(SEED + zlib.crc32(name.encode()))
        self.nodes, self.inputs, self.inits, self.outputs = [], {}, {}, []
        self.ref = None  # numpy model's outputs, by name
        self.note = ""   # what the manifest adds (e.g. a known precision gap)
        self.opset = 21  # the default domain's (the ops ONNX removed at opset 10 need one below)

    def randn(self, *shape, scale=1.0):
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def feed(self, name, arr):
        self.inputs[name] = arr
        return name

    def init(self, name, arr):
        self.inits[name] = arr
        return name

    def model(self, out_shapes=None):
        def vi(name, arr=None, elem=None, shape=None):
            if arr is not None:
                return helper.make_tensor_value_info(name, ELEM[arr.dtype], list(arr.shape))
            return helper.make_tensor_value_info(name, elem, shape)
        ins = [vi(n, a) for n, a in self.inputs.items()]
        outs = []
        for name, elem in self.outputs:
            shape = list(out_shapes[name].shape) if out_shapes and name in out_shapes else None
            outs.append(vi(name, elem=elem, shape=shape))
        inits = [numpy_helper.from_array(a, n) for n, a in self.inits.items()]
        g = helper.make_graph(self.nodes, self.name, ins, outs, initializer=inits)
        m = helper.make_model(g, producer_name="shapeflow contrib_cases.py",
                              opset_imports=[helper.make_opsetid("", self.opset), helper.make_opsetid(MS, 1)])
        m.ir_version = 10
        return m


def node(op, inputs, outputs, domain=MS, **attrs):
    # Trailing absent optional inputs are dropped; inner ones stay as "".
    inputs = list(inputs)
    while inputs and inputs[-1] == "":
        inputs.pop()
    return helper.make_node(op, inputs, outputs, domain=domain, **attrs)


F = TensorProto.FLOAT
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# --------------------------------------------------------------------------------------------
# numpy models


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def rope(x, pos, cos, sin, interleaved, rotary_dim=None):
    """x (..., S, H) with pos (S,) or broadcastable (..., S); rotates the first rotary_dim dims."""
    x = x.astype(np.float64)
    H = x.shape[-1]
    R = rotary_dim or H
    h = R // 2
    c = cos[pos][..., :h].astype(np.float64)
    s = sin[pos][..., :h].astype(np.float64)
    y = x.copy()
    if interleaved:
        a, b = x[..., 0:R:2], x[..., 1:R:2]
        y[..., 0:R:2] = a * c - b * s
        y[..., 1:R:2] = b * c + a * s
    else:
        a, b = x[..., :h], x[..., h:R]
        y[..., :h] = a * c - b * s
        y[..., h:R] = b * c + a * s
    return y


def rope_caches(max_pos, rotary_dim, base=10000.0):
    inv = 1.0 / base ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
    f = np.outer(np.arange(max_pos, dtype=np.float64), inv)
    return np.cos(f).astype(np.float32), np.sin(f).astype(np.float32)


def gqa_model(q, k, v, past_k, past_v, seqlens, T, cos, sin, N, Nk, packed, do_rotary, interleaved,
              W, softcap, smooth, scale=None, attn_bias=None, sink=None):
    B, S, _ = q.shape
    if packed:
        H = q.shape[2] // (N + 2 * Nk)
        qkv = q.reshape(B, S, N + 2 * Nk, H).astype(np.float64)
        Q, K, V = qkv[:, :, :N], qkv[:, :, N:N + Nk], qkv[:, :, N + Nk:]
    else:
        H = q.shape[2] // N
        Q = q.reshape(B, S, N, H).astype(np.float64)
        K = k.reshape(B, S, Nk, H).astype(np.float64)
        V = v.reshape(B, S, Nk, H).astype(np.float64)
    Q, K, V = (t.transpose(0, 2, 1, 3) for t in (Q, K, V))  # BNSH
    P = past_k.shape[2] if past_k is not None else 0
    C = max(T, P)
    first = S == T
    scale = scale or 1.0 / np.sqrt(H)
    pk = np.zeros((B, Nk, C, H))
    pv = np.zeros((B, Nk, C, H))
    out = np.zeros((B, S, N, H))
    for b in range(B):
        total = int(seqlens[b]) + 1
        past_b = 0 if (past_k is None or first) else total - S
        Qb, Kb = Q[b], K[b]
        if do_rotary:
            pos = np.arange(S) if first else total - S + np.arange(S)
            Qb = rope(Qb, pos, cos, sin, interleaved, 2 * cos.shape[1])
            Kb = rope(Kb, pos, cos, sin, interleaved, 2 * cos.shape[1])
        if past_b:
            pk[b, :, :past_b] = past_k[b, :, :past_b]
            pv[b, :, :past_b] = past_v[b, :, :past_b]
        pk[b, :, past_b:past_b + S] = Kb
        pv[b, :, past_b:past_b + S] = V[b]
        for h in range(N):
            kv = h // (N // Nk)
            for s in range(S):
                end = min(past_b + s + 1, total)
                # the window ends at the query's position, also past a padded row's last key
                start = max(0, past_b + s + 1 - W) if W >= 0 else 0
                if start >= end:
                    out[b, s, h] = 0
                    continue
                x = scale * (pk[b, kv, start:end] @ Qb[h, s])
                if softcap > 0:
                    x = softcap * np.tanh(x / softcap)
                if attn_bias is not None:
                    x = x + attn_bias[b % attn_bias.shape[0], h % attn_bias.shape[1], s, start:end]
                if smooth or sink is not None:
                    z = 0.0 if sink is None else float(sink[h])
                    m = max(x.max(), z)
                    e = np.exp(x - m)
                    p = e / (e.sum() + np.exp(z - m))
                else:
                    p = softmax(x)
                out[b, s, h] = p @ pv[b, kv, start:end]
    return {"output": out.reshape(B, S, N * H), "present_key": pk, "present_value": pv}


def mha_model(q, k, v, bias, mask, attn_bias, past_k, past_v, N, unidirectional=0, mask_filter=-10000.0):
    B, S, D = q.shape
    L = k.shape[1]
    Dv = v.shape[2]
    H, Hv = D // N, Dv // N
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    if bias is not None:
        q, k, v = q + bias[:D], k + bias[D:2 * D], v + bias[2 * D:]
    Q = q.reshape(B, S, N, H).transpose(0, 2, 1, 3)
    K = k.reshape(B, L, N, H).transpose(0, 2, 1, 3)
    V = v.reshape(B, L, N, Hv).transpose(0, 2, 1, 3)
    P = 0
    if past_k is not None:
        P = past_k.shape[2]
        K = np.concatenate([past_k, K], axis=2)
        V = np.concatenate([past_v, V], axis=2)
    T = P + L
    x = (Q @ K.transpose(0, 1, 3, 2)) / np.sqrt(H)
    if mask is not None:
        if mask.ndim == 1:
            keep = np.arange(T)[None, :] < mask[:, None]
            keep = keep[:, None, None, :]
        elif mask.ndim == 2:
            keep = (mask != 0)[:, None, None, :]
        else:
            keep = (mask != 0)[:, None, :, :]
        x = x + np.where(keep, 0.0, mask_filter)
    if attn_bias is not None:
        x = x + attn_bias
    if unidirectional:
        t = np.arange(T)[None, :]
        s = np.arange(S)[:, None]
        x = x + np.where(t > P + s, mask_filter, 0.0)
    y = softmax(x) @ V
    res = {"output": y.transpose(0, 2, 1, 3).reshape(B, S, N * Hv)}
    res["present_key"], res["present_value"] = K, V
    return res


def pack_bits(q, bits):
    """Packs the last axis of q (values < 2^bits) low bits first into bytes."""
    per = 8 // bits
    n = q.shape[-1]
    padded = np.zeros(q.shape[:-1] + ((n + per - 1) // per * per,), np.uint8)
    padded[..., :n] = q
    padded = padded.reshape(q.shape[:-1] + (-1, per)).astype(np.uint32)
    out = np.zeros(padded.shape[:-1], np.uint32)
    for i in range(per):
        out |= padded[..., i] << (i * bits)
    return out.astype(np.uint8)


def quantize_a_int8(a, block):
    """MLAS's CompInt8 quantization of A (accuracy_level 4): per row and block of K, symmetric."""
    a = a.astype(np.float32)
    K = a.shape[-1]
    out = np.zeros_like(a)
    for k0 in range(0, K, block):
        blk = a[..., k0:k0 + block]
        amax = np.abs(blk).max(axis=-1, keepdims=True)
        sc = amax / 127.0
        inv = np.where(sc != 0, 1.0 / np.where(sc != 0, sc, 1), 0).astype(np.float32)
        qa = np.clip(np.round(blk * inv), -128, 127)
        out[..., k0:k0 + block] = qa * sc
    return out


def max_err(got, want):
    """Largest |got - want| and that relative to want's largest magnitude."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    if got.shape != want.shape:
        return None
    if got.size == 0:
        return 0.0, 0.0
    d = float(np.abs(got - want).max())
    return d, d / max(float(np.abs(want).max()), 1e-30)


# --------------------------------------------------------------------------------------------
# GroupQueryAttention


def gqa(name, covers, B, S, P, N, Nk, H, seqlens, T, packed=False, rotary=None, W=-1, softcap=0.0,
        smooth=0, qscale=1.0, empty_past=False, max_pos=16, bias_shape=None, sink=False):
    c = Case(name, "GroupQueryAttention", covers)
    seqlens = np.array(seqlens, np.int32)
    q = c.randn(B, S, (N + 2 * Nk) * H if packed else N * H, scale=qscale)
    k = v = pk = pv = cos = sin = None
    ins = [c.feed("query", q)]
    if packed:
        ins += ["", ""]
    else:
        k = c.randn(B, S, Nk * H, scale=qscale)
        v = c.randn(B, S, Nk * H)
        ins += [c.feed("key", k), c.feed("value", v)]
    if P is not None:
        pk, pv = c.randn(B, Nk, P, H), c.randn(B, Nk, P, H)
        ins += [c.feed("past_key", pk), c.feed("past_value", pv)]
    else:
        ins += ["", ""]
    ins += [c.feed("seqlens_k", seqlens), c.feed("total_sequence_length", np.array(T, np.int32))]
    attrs = {"num_heads": N, "kv_num_heads": Nk}
    if rotary is not None:
        cos, sin = rope_caches(max_pos, H)
        ins += [c.feed("cos_cache", cos), c.feed("sin_cache", sin)]
        attrs.update(do_rotary=1, rotary_interleaved=rotary)
    ab = sk = None
    if bias_shape is not None or sink:
        ins += [""] * (10 - len(ins))  # up to position_ids, not given
        if bias_shape is not None:
            ab = c.randn(*bias_shape)
            ins.append(c.feed("attention_bias", ab))
        else:
            ins.append("")
        if sink:
            sk = c.randn(N)
            ins.append(c.feed("head_sink", sk))
    if W >= 0:
        attrs["local_window_size"] = W
    if softcap:
        attrs["softcap"] = softcap
    if smooth:
        attrs["smooth_softmax"] = 1
    outs = ["output", "present_key", "present_value"]
    c.nodes.append(node("GroupQueryAttention", ins, outs, **attrs))
    c.outputs = [(o, F) for o in outs]
    c.ref = gqa_model(q, k, v, pk, pv, seqlens, T, cos, sin, N, Nk, packed, rotary is not None,
                      rotary or 0, W, softcap, smooth, attn_bias=ab, sink=sk)
    return c


@case
def gqa_prompt():
    return gqa("gqa_prompt", "separate Q/K/V, no past inputs, prompt B=2 S=4 (seqlens_k=S-1, total=S), N=Nk=2 H=16",
               B=2, S=4, P=None, N=2, Nk=2, H=16, seqlens=[3, 3], T=4)


@case
def gqa_prompt_past0():
    return gqa("gqa_prompt_past0", "prompt B=1 S=5 with empty past_key/past_value (B,Nk,0,H), N=Nk=4 H=8",
               B=1, S=5, P=0, N=4, Nk=4, H=8, seqlens=[4], T=5)


@case
def gqa_prompt_right_padded():
    return gqa("gqa_prompt_right_padded", "first prompt B=2 S=4 right-padded: seqlens_k [3,1] (row 1 has 2 real tokens)",
               B=2, S=4, P=None, N=2, Nk=2, H=16, seqlens=[3, 1], T=4)


@case
def gqa_decode():
    return gqa("gqa_decode", "decode step B=1 S=1 past 5 (seqlens_k=5, total=6), N=Nk=2 H=16",
               B=1, S=1, P=5, N=2, Nk=2, H=16, seqlens=[5], T=6)


@case
def gqa_prompt_after_cache():
    return gqa("gqa_prompt_after_cache", "subsequent prompt B=1 S=3 past 4 (seqlens_k=6, total=7), N=Nk=2 H=16",
               B=1, S=3, P=4, N=2, Nk=2, H=16, seqlens=[6], T=7)


@case
def gqa_decode_batch2():
    return gqa("gqa_decode_batch2", "decode B=2 S=1 past 5, equal lengths (seqlens_k [5,5], total 6)",
               B=2, S=1, P=5, N=2, Nk=2, H=8, seqlens=[5, 5], T=6)


@case
def gqa_decode_batch2_ragged():
    return gqa("gqa_decode_batch2_ragged", "decode B=2 S=1 past buffer 5, ragged seqlens_k [5,2] (row 1's new key at row 2, rest of present zero)",
               B=2, S=1, P=5, N=2, Nk=2, H=8, seqlens=[5, 2], T=6)


@case
def gqa_packed_prompt():
    return gqa("gqa_packed_prompt", "packed QKV (key, value absent), prompt B=1 S=4 no past, N=4 Nk=2 H=8",
               B=1, S=4, P=None, N=4, Nk=2, H=8, seqlens=[3], T=4, packed=True)


@case
def gqa_packed_decode():
    return gqa("gqa_packed_decode", "packed QKV, decode B=2 S=1 past 4, N=2 Nk=2 H=16",
               B=2, S=1, P=4, N=2, Nk=2, H=16, seqlens=[4, 4], T=5, packed=True)


@case
def gqa_rotary():
    return gqa("gqa_rotary", "do_rotary, rotary_interleaved 0, cos/sin (16,8), prompt B=2 S=4 (positions 0..3)",
               B=2, S=4, P=None, N=2, Nk=2, H=16, seqlens=[3, 3], T=4, rotary=0)


@case
def gqa_rotary_interleaved():
    return gqa("gqa_rotary_interleaved", "do_rotary, rotary_interleaved 1, prompt after cache B=1 S=3 past 4 (positions 4..6)",
               B=1, S=3, P=4, N=2, Nk=2, H=16, seqlens=[6], T=7, rotary=1)


@case
def gqa_rotary_decode_ragged():
    return gqa("gqa_rotary_decode_ragged", "do_rotary interleaved 0, packed QKV, decode B=2 past 5 ragged seqlens_k [5,2] (positions 5 and 2)",
               B=2, S=1, P=5, N=4, Nk=2, H=16, seqlens=[5, 2], T=6, rotary=0, packed=True)


@case
def gqa_local_window_prompt():
    return gqa("gqa_local_window_prompt", "local_window_size 2, prompt B=1 S=5 (each query sees itself and 1 earlier key)",
               B=1, S=5, P=None, N=2, Nk=2, H=8, seqlens=[4], T=5, W=2)


@case
def gqa_local_window_padded():
    return gqa("gqa_local_window_padded", "local_window_size 2, prompt B=2 S=5 with row 0 padded after 3 tokens: its "
               "padded queries' windows end at their own positions (query 3 keeps key 2, query 4 none)",
               B=2, S=5, P=None, N=2, Nk=1, H=16, seqlens=[2, 4], T=5, W=2)


@case
def gqa_local_window_decode():
    return gqa("gqa_local_window_decode", "local_window_size 3, decode B=1 past 6 (last 3 of 7 keys)",
               B=1, S=1, P=6, N=2, Nk=2, H=8, seqlens=[6], T=7, W=3)


@case
def gqa_softcap():
    return gqa("gqa_softcap", "softcap 2.0 with large scores (Q, K scaled by 3), prompt after cache B=1 S=2 past 3",
               B=1, S=2, P=3, N=2, Nk=2, H=16, seqlens=[4], T=5, softcap=2.0, qscale=3.0)


@case
def gqa_smooth_softmax():
    return gqa("gqa_smooth_softmax", "smooth_softmax 1 (extra exp(0) in the denominator), decode B=1 past 4",
               B=1, S=1, P=4, N=2, Nk=2, H=8, seqlens=[4], T=5, smooth=1)


@case
def gqa_attention_bias():
    return gqa("gqa_attention_bias", "attention_bias (1,N,S,T) added to the scores, grouped N=4 Nk=2, prompt after cache B=1 S=2 past 3",
               B=1, S=2, P=3, N=4, Nk=2, H=8, seqlens=[4], T=5, bias_shape=(1, 4, 2, 5))


@case
def gqa_attention_bias_batch_decode():
    return gqa("gqa_attention_bias_batch_decode", "attention_bias (B,1,1,T) per batch row, ragged decode B=2 past 6 (seqlens_k [6,3])",
               B=2, S=1, P=6, N=4, Nk=1, H=8, seqlens=[6, 3], T=7, bias_shape=(2, 1, 1, 7))


@case
def gqa_head_sink():
    return gqa("gqa_head_sink", "head_sink (one logit per head in the denominator), grouped decode B=1 past 5",
               B=1, S=1, P=5, N=4, Nk=2, H=8, seqlens=[5], T=6, sink=True)


@case
def gqa_grouped_prompt():
    return gqa("gqa_grouped_prompt", "grouped N=4 Nk=2 H=16, prompt B=2 S=3 no past",
               B=2, S=3, P=None, N=4, Nk=2, H=16, seqlens=[2, 2], T=3)


@case
def gqa_grouped_decode():
    return gqa("gqa_grouped_decode", "grouped N=4 Nk=1 H=8 (multi-query), decode B=2 past 6",
               B=2, S=1, P=6, N=4, Nk=1, H=8, seqlens=[6, 6], T=7)


# --------------------------------------------------------------------------------------------
# MatMulNBits


def matmulnbits(name, covers, bits, block, K=64, N=32, zp=True, bias=False, acc=0, zp_float=False,
                shape=(2, 3)):
    c = Case(name, "MatMulNBits", covers)
    kb = (K + block - 1) // block
    a = c.randn(*shape, K)
    q = c.rng.integers(0, 2 ** bits, (N, kb * block)).astype(np.uint8)
    scales = (c.rng.uniform(0.02, 0.1, (N, kb)) * (2.0 ** (4 - bits))).astype(np.float32)
    ins = [c.feed("A", a), c.init("B", pack_bits(q.reshape(N, kb, block), bits)), c.init("scales", scales)]
    if zp_float:
        z = c.rng.uniform(0, 2 ** bits - 1, (N, kb)).astype(np.float32)
        ins.append(c.init("zero_points", z))
    elif zp:
        z = c.rng.integers(0, 2 ** bits, (N, kb)).astype(np.uint8)
        ins.append(c.init("zero_points", pack_bits(z, bits)))
    else:
        z = np.full((N, kb), 2 ** (bits - 1), np.float32)
        ins.append("")
    ins += [""]  # g_idx
    bv = None
    if bias:
        bv = c.randn(N)
        ins.append(c.init("bias", bv))
    attrs = {"K": K, "N": N, "bits": bits, "block_size": block}
    if acc:
        attrs["accuracy_level"] = acc
    c.nodes.append(node("MatMulNBits", ins, ["Y"], **attrs))
    c.outputs = [("Y", F)]
    w = ((q.astype(np.float64) - np.repeat(z.astype(np.float64), block, axis=1))
         * np.repeat(scales.astype(np.float64), block, axis=1))[:, :K]
    y = a.astype(np.float64) @ w.T
    if bv is not None:
        y = y + bv
    c.ref = {"Y": y}
    if acc == 4:
        y8 = quantize_a_int8(a, block).astype(np.float64) @ w.T + (bv if bv is not None else 0)
        c.alt = ("A quantized to int8 per block", {"Y": y8})
    return c


@case
def mnb_4bit_bs32():
    return matmulnbits("mnb_4bit_bs32", "bits 4, block_size 32, K=64 N=32, no zero_points (zp 8), A (2,3,64)", 4, 32, zp=False)


@case
def mnb_4bit_bs32_zp():
    return matmulnbits("mnb_4bit_bs32_zp", "bits 4, block_size 32, packed uint8 zero_points (N,1)", 4, 32)


@case
def mnb_4bit_bs16_zp():
    return matmulnbits("mnb_4bit_bs16_zp", "bits 4, block_size 16, K=64 (4 blocks), packed uint8 zero_points (N,2)", 4, 16)


@case
def mnb_4bit_bs16_k40():
    return matmulnbits("mnb_4bit_bs16_k40", "bits 4, block_size 16, K=40 (last block half padding), zero_points (N,2), A 2-D (3,40)",
                       4, 16, K=40, N=24, shape=(3,))


@case
def mnb_4bit_bs16_k48_zp_odd():
    return matmulnbits("mnb_4bit_bs16_k48_zp_odd", "bits 4, block_size 16, K=48 (3 blocks: zero_points rows padded to 2 bytes)",
                       4, 16, K=48, N=16)


@case
def mnb_4bit_zp_float():
    return matmulnbits("mnb_4bit_zp_float", "bits 4, block_size 32, float zero_points (N,k_blocks), same type as scales", 4, 32, zp_float=True)


@case
def mnb_4bit_bias():
    return matmulnbits("mnb_4bit_bias", "bits 4, block_size 32, zero_points and bias (N)", 4, 32, bias=True)


@case
def mnb_8bit_bs32():
    return matmulnbits("mnb_8bit_bs32", "bits 8, block_size 32, no zero_points (zp 128)", 8, 32, zp=False)


@case
def mnb_8bit_bs16_zp():
    return matmulnbits("mnb_8bit_bs16_zp", "bits 8, block_size 16, uint8 zero_points (N,4)", 8, 16)


@case
def mnb_2bit_bs16_zp():
    return matmulnbits("mnb_2bit_bs16_zp", "bits 2, block_size 16, packed zero_points (N,1), 4 blocks per byte", 2, 16)


@case
def mnb_2bit_bs32():
    return matmulnbits("mnb_2bit_bs32", "bits 2, block_size 32, no zero_points (zp 2)", 2, 32, zp=False)


@case
def mnb_4bit_bs32_acc4():
    return matmulnbits("mnb_4bit_bs32_acc4", "bits 4, block_size 32, zero_points, accuracy_level 4 (A quantized to int8 inside onnxruntime)",
                       4, 32, acc=4)


@case
def mnb_4bit_bs16_acc4():
    return matmulnbits("mnb_4bit_bs16_acc4", "bits 4, block_size 16, no zero_points, bias, accuracy_level 4",
                       4, 16, zp=False, bias=True, acc=4)


@case
def mnb_8bit_bs32_acc4():
    return matmulnbits("mnb_8bit_bs32_acc4", "bits 8, block_size 32, zero_points, accuracy_level 4", 8, 32, acc=4)


# --------------------------------------------------------------------------------------------
# GatherBlockQuantized


def gbq(name, covers, bits, block, V=12, hidden=32, zp=True, idx_type=np.int64, indices=None):
    c = Case(name, "GatherBlockQuantized", covers)
    nb = (hidden + block - 1) // block
    q = c.rng.integers(0, 2 ** bits, (V, hidden)).astype(np.uint8)
    scales = c.rng.uniform(0.05, 0.2, (V, nb)).astype(np.float32)
    data = pack_bits(q, bits) if bits < 8 else q
    if indices is None:
        indices = c.rng.integers(0, V, (2, 3))
    indices = np.array(indices, idx_type)
    ins = [c.init("data", data), c.feed("indices", indices), c.init("scales", scales)]
    if zp:
        z = c.rng.integers(0, 2 ** bits, (V, nb)).astype(np.uint8)
        ins.append(c.init("zero_points", pack_bits(z, bits) if bits < 8 else z))
    else:
        z = np.full((V, nb), 2 ** (bits - 1), np.uint8)
    c.nodes.append(node("GatherBlockQuantized", ins, ["output"], gather_axis=0, quantize_axis=1,
                        block_size=block, bits=bits))
    c.outputs = [("output", F)]
    w = (q.astype(np.float64) - np.repeat(z, block, axis=1)[:, :hidden]) * np.repeat(scales, block, axis=1)[:, :hidden]
    c.ref = {"output": w[np.where(indices < 0, indices + V, indices)]}
    return c


@case
def gbq_4bit_bs16_zp():
    return gbq("gbq_4bit_bs16_zp", "uint8 data (12,16) = 4-bit (12,32), block_size 16, packed zero_points (12,1), int64 indices (2,3)", 4, 16)


@case
def gbq_4bit_bs32():
    return gbq("gbq_4bit_bs32", "4-bit, block_size 32, no zero_points (zp 8), int64 indices (2,3)", 4, 32, zp=False)


@case
def gbq_4bit_bs32_int32_neg():
    return gbq("gbq_4bit_bs32_int32_neg", "4-bit, block_size 32, zero_points, hidden 64, int32 indices (4) with negative ones",
               4, 32, hidden=64, idx_type=np.int32, indices=[0, -1, 5, -12])


@case
def gbq_4bit_bs16_odd_blocks_zp():
    return gbq("gbq_4bit_bs16_odd_blocks_zp", "4-bit, block_size 16, hidden 48 (3 blocks per row: zero_points rows padded to 2 bytes)",
               4, 16, hidden=48)


@case
def gbq_8bit_bs16_zp():
    return gbq("gbq_8bit_bs16_zp", "8-bit uint8 data, block_size 16, uint8 zero_points (12,2)", 8, 16)


# --------------------------------------------------------------------------------------------
# Normalizations


def rms(x, gamma, eps):
    x = x.astype(np.float64)
    inv = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    return x * inv * gamma, inv


@case
def simplified_ln():
    c = Case("simplified_ln", "SimplifiedLayerNormalization", "domain \"\", X (2,3,32), scale (32), epsilon 1e-5, axis -1, Y only")
    x, g = c.randn(2, 3, 32), c.randn(32)
    c.nodes.append(node("SimplifiedLayerNormalization", [c.feed("X", x), c.feed("scale", g)], ["Y"], domain="",
                        axis=-1, epsilon=1e-5, stash_type=1))
    c.outputs = [("Y", F)]
    c.ref = {"Y": rms(x, g, 1e-5)[0]}
    return c


@case
def simplified_ln_inv_std():
    c = Case("simplified_ln_inv_std", "SimplifiedLayerNormalization", "X (4,48) 2-D, epsilon 1e-6, with the optional inv_std_var output (4,1)")
    x, g = c.randn(4, 48, scale=2.0), c.randn(48)
    c.nodes.append(node("SimplifiedLayerNormalization", [c.feed("X", x), c.feed("scale", g)], ["Y", "inv_std_var"], domain="",
                        epsilon=1e-6))
    c.outputs = [("Y", F), ("inv_std_var", F)]
    y, inv = rms(x, g, 1e-6)
    c.ref = {"Y": y, "inv_std_var": inv}
    return c


def skip_ln(name, covers, simplified, shape=(2, 3, 32), skip_shape=None, beta=False, bias=False,
            outs=("output",), eps=None):
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    c = Case(name, op, covers)
    H = shape[-1]
    x, s, g = c.randn(*shape), c.randn(*(skip_shape or shape)), c.randn(H)
    ins = [c.feed("input", x), c.feed("skip", s), c.feed("gamma", g)]
    bt = bs = None
    if not simplified:
        if beta:
            bt = c.randn(H)
            ins.append(c.feed("beta", bt))
        else:
            ins.append("")
    if bias:
        bs = c.randn(H)
        ins.append(c.feed("bias", bs))
    names = ["output", "mean", "inv_std_var", "input_skip_bias_sum"]
    node_outs = [n if n in outs else "" for n in names]
    while node_outs[-1] == "":
        node_outs.pop()
    attrs = {} if eps is None else {"epsilon": eps}
    c.nodes.append(node(op, ins, node_outs, **attrs))
    c.outputs = [(n, F) for n in names if n in outs]
    e = 1e-12 if eps is None else eps
    v = x.astype(np.float64) + s + (bs if bs is not None else 0)
    if simplified:
        y, inv = rms(v, g, e)
        mean = np.zeros(v.shape[:-1] + (1,))
        if "mean" in outs:
            c.note = "onnxruntime's mean output of the simplified op is all zeros"
    else:
        mean = v.mean(axis=-1, keepdims=True)
        var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
        inv = 1.0 / np.sqrt(var + e)
        y = (v - mean) * inv * g + (bt if bt is not None else 0)
    ref = {"output": y, "mean": mean, "inv_std_var": inv, "input_skip_bias_sum": v}
    c.ref = {n: ref[n] for n in outs}
    return c


@case
def skip_simplified_ln():
    return skip_ln("skip_simplified_ln", "input/skip (2,3,32), gamma, default epsilon (1e-12), output only", True)


@case
def skip_simplified_ln_sum():
    return skip_ln("skip_simplified_ln_sum", "genai's form: outputs [output, \"\", \"\", input_skip_bias_sum], epsilon 1e-6",
                   True, outs=("output", "input_skip_bias_sum"), eps=1e-6)


@case
def skip_simplified_ln_all_outputs():
    return skip_ln("skip_simplified_ln_all_outputs", "with bias (input 3) and all four outputs (mean, inv_std_var (2,3,1), input_skip_bias_sum), epsilon 1e-5",
                   True, bias=True, outs=("output", "mean", "inv_std_var", "input_skip_bias_sum"), eps=1e-5)


@case
def skip_simplified_ln_skip_2d():
    return skip_ln("skip_simplified_ln_skip_2d", "3-D input (2,3,32) with 2-D skip (3,32) broadcast over batch, epsilon 1e-6",
                   True, skip_shape=(3, 32), eps=1e-6)


@case
def skip_ln_bias_all_outputs():
    return skip_ln("skip_ln_bias_all_outputs", "beta and bias, outputs output, mean, inv_std_var, input_skip_bias_sum; input (2,3,48), epsilon 1e-5",
                   False, shape=(2, 3, 48), beta=True, bias=True, outs=("output", "mean", "inv_std_var", "input_skip_bias_sum"), eps=1e-5)


@case
def skip_ln_basic():
    return skip_ln("skip_ln_basic", "no beta, no bias, 2-D input (5,32), default epsilon, output only", False, shape=(5, 32))


@case
def skip_ln_sum_only():
    return skip_ln("skip_ln_sum_only", "beta, bias, outputs [output, \"\", \"\", input_skip_bias_sum]; skip (1,3,32) broadcast",
                   False, skip_shape=(1, 3, 32), beta=True, bias=True, outs=("output", "input_skip_bias_sum"), eps=1e-5)


# --------------------------------------------------------------------------------------------
# RotaryEmbedding (com.microsoft)


def rotary(name, covers, B, S, N, H, interleaved, rank=3, pos_scalar=None, rotary_dim=0, max_pos=16):
    c = Case(name, "RotaryEmbedding", covers)
    R = rotary_dim or H
    x = c.randn(B, S, N * H) if rank == 3 else c.randn(B, N, S, H)
    if pos_scalar is not None:
        pos = np.array([pos_scalar], np.int64)
        p2 = np.broadcast_to(pos_scalar + np.arange(S), (B, S))
    else:
        pos = c.rng.integers(0, max_pos, (B, S)).astype(np.int64)
        p2 = pos
    cos, sin = rope_caches(max_pos, R)
    attrs = {"interleaved": interleaved}
    if rank == 3 or rotary_dim:
        attrs["num_heads"] = N
    if rotary_dim:
        attrs["rotary_embedding_dim"] = rotary_dim
    c.nodes.append(node("RotaryEmbedding", [c.feed("input", x), c.feed("position_ids", pos), c.feed("cos_cache", cos),
                                            c.feed("sin_cache", sin)], ["output"], **attrs))
    c.outputs = [("output", F)]
    xb = x.reshape(B, S, N, H).transpose(0, 2, 1, 3) if rank == 3 else x
    y = rope(xb, p2[:, None, :], cos, sin, interleaved, R)
    c.ref = {"output": y.transpose(0, 2, 1, 3).reshape(B, S, N * H) if rank == 3 else y}
    return c


@case
def rope_3d():
    return rotary("rope_3d", "3-D input (2,3,32) num_heads 2 H=16, interleaved 0, position_ids (2,3), cos/sin (16,8)", 2, 3, 2, 16, 0)


@case
def rope_3d_interleaved():
    return rotary("rope_3d_interleaved", "3-D input (2,4,48) num_heads 3 H=16, interleaved 1, position_ids (2,4)", 2, 4, 3, 16, 1)


@case
def rope_4d():
    return rotary("rope_4d", "4-D BNSH input (1,4,5,8), interleaved 0, position_ids (1,5), no num_heads", 1, 5, 4, 8, 0, rank=4)


@case
def rope_pos_offset():
    return rotary("rope_pos_offset", "position_ids of one element (base offset 6: positions 6..8), 3-D (2,3,32), interleaved 1",
                  2, 3, 4, 8, 1, pos_scalar=6)


@case
def rope_partial():
    return rotary("rope_partial", "rotary_embedding_dim 8 of head size 16 (rest copied), num_heads 2, cos/sin (16,4), interleaved 0",
                  2, 2, 2, 16, 0, rotary_dim=8)


# --------------------------------------------------------------------------------------------
# MultiHeadAttention


def mha(name, covers, B, S, L, N, H, P=None, bias=False, mask=None, attn_bias=False, unidirectional=0):
    c = Case(name, "MultiHeadAttention", covers)
    D = N * H
    q, k, v = c.randn(B, S, D), c.randn(B, L, D), c.randn(B, L, D)
    ins = [c.feed("query", q), c.feed("key", k), c.feed("value", v)]
    bv = m = ab = pk = pv = None
    if bias:
        bv = c.randn(3 * D)
        ins.append(c.feed("bias", bv))
    else:
        ins.append("")
    T = L + (P or 0)
    if mask is not None:
        m = np.array(mask, np.int32)
        ins.append(c.feed("key_padding_mask", m))
    else:
        ins.append("")
    if attn_bias:
        ab = c.randn(1, N, S, T)
        ins.append(c.feed("attention_bias", ab))
    else:
        ins.append("")
    outs = ["output"]
    if P is not None:
        pk, pv = c.randn(B, N, P, H), c.randn(B, N, P, H)
        ins += [c.feed("past_key", pk), c.feed("past_value", pv)]
        outs += ["present_key", "present_value"]
    attrs = {"num_heads": N}
    if unidirectional:
        attrs["unidirectional"] = 1
    c.nodes.append(node("MultiHeadAttention", ins, outs, **attrs))
    c.outputs = [(o, F) for o in outs]
    ref = mha_model(q, k, v, bv, m, ab, pk, pv, N, unidirectional)
    c.ref = {o: ref[o] for o in outs}
    return c


@case
def mha_self():
    return mha("mha_self", "self attention Q/K/V (2,3,32), num_heads 4 H=8, no past, no mask", 2, 3, 3, 4, 8)


@case
def mha_past():
    return mha("mha_past", "past_key/past_value (2,2,4,16) and present outputs (2,2,6,16), Q/K/V (2,2,32)", 2, 2, 2, 2, 16, P=4)


@case
def mha_past_decode_unidirectional():
    return mha("mha_past_decode_unidirectional", "decode S=1 past 5, unidirectional 1, num_heads 4 H=8, present outputs", 1, 1, 1, 4, 8, P=5,
               unidirectional=1)


@case
def mha_key_padding_mask_2d():
    return mha("mha_key_padding_mask_2d", "past 3 + L 2, key_padding_mask int32 (B,T)=(2,5) with zeros (additive -10000), present outputs",
               2, 2, 2, 2, 16, P=3, mask=[[1, 1, 1, 1, 1], [0, 1, 1, 1, 0]])


@case
def mha_key_padding_mask_1d():
    return mha("mha_key_padding_mask_1d", "key_padding_mask int32 (B) = valid lengths [4,2], no past, S=L=4", 2, 4, 4, 2, 16, mask=[4, 2])


@case
def mha_bias_attention_bias():
    return mha("mha_bias_attention_bias", "bias (3*D=96) added to Q/K/V and attention_bias (1,N,S,T), cross lengths S=2 L=5", 2, 2, 5, 4, 8,
               bias=True, attn_bias=True)


# --------------------------------------------------------------------------------------------
# Activations of transformer exports (fused by onnxruntime's optimizers)


def gelu_erf(x):
    from math import erf, sqrt
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


@case
def gelu_ms():
    c = Case("gelu_ms", "Gelu", "com.microsoft Gelu (erf form), X (2,3,16)")
    x = c.randn(2, 3, 16, scale=2.0)
    c.nodes.append(node("Gelu", [c.feed("X", x)], ["Y"]))
    c.outputs = [("Y", F)]
    c.ref = {"Y": gelu_erf(x.astype(np.float64))}
    return c


@case
def bias_gelu():
    c = Case("bias_gelu", "BiasGelu", "A (2,3,16) plus bias (16), then Gelu (erf form)")
    a, b = c.randn(2, 3, 16, scale=2.0), c.randn(16)
    c.nodes.append(node("BiasGelu", [c.feed("A", a), c.feed("B", b)], ["C"]))
    c.outputs = [("C", F)]
    c.ref = {"C": gelu_erf((a + b).astype(np.float64))}
    return c


@case
def fast_gelu():
    c = Case("fast_gelu", "FastGelu", "X (2,3,16), tanh approximation, no bias")
    x = c.randn(2, 3, 16, scale=2.0)
    c.nodes.append(node("FastGelu", [c.feed("X", x)], ["Y"]))
    c.outputs = [("Y", F)]
    c.ref = {"Y": gelu_tanh(x.astype(np.float64))}
    return c


@case
def fast_gelu_bias():
    c = Case("fast_gelu_bias", "FastGelu", "X (2,3,16) plus bias (16), tanh approximation")
    x, b = c.randn(2, 3, 16, scale=2.0), c.randn(16)
    c.nodes.append(node("FastGelu", [c.feed("X", x), c.feed("bias", b)], ["Y"]))
    c.outputs = [("Y", F)]
    c.ref = {"Y": gelu_tanh((x + b).astype(np.float64))}
    return c


@case
def quick_gelu():
    c = Case("quick_gelu", "QuickGelu", "X (2,3,16), alpha 1.702 (default): x * sigmoid(alpha * x)")
    x = c.randn(2, 3, 16, scale=2.0)
    c.nodes.append(node("QuickGelu", [c.feed("X", x)], ["Y"]))
    c.outputs = [("Y", F)]
    xd = x.astype(np.float64)
    c.ref = {"Y": xd / (1.0 + np.exp(-1.702 * xd))}
    return c


@case
def quick_gelu_alpha():
    c = Case("quick_gelu_alpha", "QuickGelu", "X (4,8), alpha 1.0 (SiLU)")
    x = c.randn(4, 8, scale=2.0)
    c.nodes.append(node("QuickGelu", [c.feed("X", x)], ["Y"], alpha=1.0))
    c.outputs = [("Y", F)]
    xd = x.astype(np.float64)
    c.ref = {"Y": xd / (1.0 + np.exp(-xd))}
    return c


def fused_matmul_case(name, covers, a_shape, b_shape, trans_a, trans_b, alpha):
    c = Case(name, "FusedMatMul", covers)
    a, b = c.randn(*a_shape), c.randn(*b_shape)
    c.nodes.append(node("FusedMatMul", [c.feed("A", a), c.feed("B", b)], ["Y"], alpha=alpha,
                        transA=trans_a, transB=trans_b))
    c.outputs = [("Y", F)]
    ad, bd = a.astype(np.float64), b.astype(np.float64)
    if trans_a:
        ad = np.swapaxes(ad, -1, -2)
    if trans_b:
        bd = np.swapaxes(bd, -1, -2)
    c.ref = {"Y": alpha * np.matmul(ad, bd)}
    return c


def ms_attention(name, covers, B, S, N, sizes, mask=None, P=0, unidirectional=0, attn_bias=False):
    """com.microsoft Attention: the projections, then the same attention as MultiHeadAttention."""
    c = Case(name, "Attention", covers)
    Din = 8
    Dq, Dk, Dv = sizes
    x, w, b = c.randn(B, S, Din), c.randn(Din, Dq + Dk + Dv, scale=0.5), c.randn(Dq + Dk + Dv)
    ins = [c.feed("input", x), c.feed("weights", w), c.feed("bias", b), "", "", ""]
    past_k = past_v = None
    if mask is not None:
        ins[3] = c.feed("mask_index", mask)
    if P:
        H = Dq // N
        past = c.randn(2, B, N, P, H)
        ins[4] = c.feed("past", past)
        past_k, past_v = past[0].astype(np.float64), past[1].astype(np.float64)
    ab = None
    if attn_bias:
        ab = c.randn(1, N, S, P + S)
        ins[5] = c.feed("attention_bias", ab)
    attrs = {"num_heads": N, "unidirectional": unidirectional}
    if sizes[0] * 3 != sum(sizes) or sizes[2] != sizes[0]:
        attrs["qkv_hidden_sizes"] = list(sizes)
    outs = ["output"] + (["present"] if P else [])
    c.nodes.append(node("Attention", ins, outs, **attrs))
    c.outputs = [(o, F) for o in outs]
    proj = x.astype(np.float64) @ w.astype(np.float64) + b
    q, k, v = proj[..., :Dq], proj[..., Dq:Dq + Dk], proj[..., Dq + Dk:]
    r = mha_model(q, k, v, None, mask, None if ab is None else ab.astype(np.float64), past_k, past_v, N,
                  unidirectional=unidirectional)
    c.ref = {"output": r["output"]}
    if P:
        c.ref["present"] = np.stack([r["present_key"], r["present_value"]])
    return c


def q_attention(name, covers, B, S, N, D, P=0, mask=None, unidirectional=0, per_column=False):
    """QAttention: u8 input and i8 weights less their zero points, their product scaled, plus bias,
    then Attention."""
    c = Case(name, "QAttention", covers)
    Din = 8
    x = c.rng.integers(0, 256, (B, S, Din)).astype(np.uint8)
    # 7-bit weights, as onnxruntime's quantizer makes them (reduce_range): onnxruntime's u8 x i8
    # products add pairs in int16, which saturates with full-range weights (not copied here).
    w = c.rng.integers(-64, 64, (Din, 3 * D)).astype(np.int8)
    b = c.randn(3 * D)
    xs, xz = np.array(np.float32(0.02)), np.array(np.uint8(128))
    ws = (np.linspace(0.004, 0.008, 3 * D).astype(np.float32) if per_column else np.array(np.float32(0.005)))
    wz = np.array(np.int8(0))
    ins = [c.feed("input", x), c.feed("weight", w), c.feed("bias", b), c.feed("input_scale", xs),
           c.feed("weight_scale", ws), "", c.feed("input_zero_point", xz), c.feed("weight_zero_point", wz), ""]
    past_k = past_v = None
    if mask is not None:
        ins[5] = c.feed("mask_index", mask)
    if P:
        past = c.randn(2, B, N, P, D // N)
        ins[8] = c.feed("past", past)
        past_k, past_v = past[0].astype(np.float64), past[1].astype(np.float64)
    outs = ["output"] + (["present"] if P else [])
    c.nodes.append(node("QAttention", ins, outs, num_heads=N, unidirectional=unidirectional))
    c.outputs = [(o, F) for o in outs]
    proj = ((x.astype(np.float64) - 128) @ w.astype(np.float64)) * (0.02 * ws.astype(np.float64)) + b
    q, k, v = proj[..., :D], proj[..., D:2 * D], proj[..., 2 * D:]
    r = mha_model(q, k, v, None, mask, None, past_k, past_v, N, unidirectional=unidirectional)
    c.ref = {"output": r["output"]}
    if P:
        c.ref["present"] = np.stack([r["present_key"], r["present_value"]])
    return c


@case
def q_attention_basic():
    return q_attention("q_attention_basic", "u8 input (2,3,8), i8 weights (8,24), 2 heads, key lengths [3, 2]", 2, 3, 2, 8,
                       mask=np.array([3, 2], np.int32))


@case
def q_attention_past_per_column():
    return q_attention("q_attention_past_per_column", "a past of 2, unidirectional, per-column weight scales", 1, 2, 2, 8,
                       P=2, unidirectional=1, per_column=True)


@case
def attention_ms():
    return ms_attention("attention_ms", "input (2,3,8), weights (8,24), bias, 2 heads, no mask", 2, 3, 2, (8, 8, 8))


@case
def attention_ms_raw_mask():
    mask = np.array([[1, 1, 0], [1, 0, 1]], dtype=np.int32)
    return ms_attention("attention_ms_raw_mask", "mask_index (2,3) of 0 and 1, 2 heads", 2, 3, 2, (8, 8, 8), mask=mask)


@case
def attention_ms_lengths():
    mask = np.array([2, 3], dtype=np.int32)
    return ms_attention("attention_ms_lengths", "mask_index (2): key lengths 2 and 3", 2, 3, 2, (8, 8, 8), mask=mask)


@case
def attention_ms_past_unidirectional():
    return ms_attention("attention_ms_past_unidirectional",
                        "past (2,2,2,4,4), 2 new tokens, unidirectional, present (2,2,2,6,4)",
                        2, 2, 2, (8, 8, 8), P=4, unidirectional=1)


@case
def attention_ms_bias():
    return ms_attention("attention_ms_bias", "attention_bias (1,2,3,3) added to the scores, unidirectional",
                        2, 3, 2, (8, 8, 8), unidirectional=1, attn_bias=True)


@case
def attention_ms_qkv_sizes():
    return ms_attention("attention_ms_qkv_sizes", "qkv_hidden_sizes [8, 8, 4]: values of head size 2, 2 heads",
                        1, 4, 2, (8, 8, 4))


def layer_norm_ref(x, g, b, eps):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def embed_case(name, covers, with_segments, with_mask, position_ids=None):
    c = Case(name, "EmbedLayerNormalization", covers)
    B, S, V, P, H = 2, 5, 20, 8, 16
    ids = c.rng.integers(0, V, (B, S)).astype(np.int32)
    words, pos, gamma, beta = c.randn(V, H), c.randn(P, H), c.randn(H), c.randn(H)
    ins = [c.feed("input_ids", ids), "", c.feed("word_embedding", words), c.feed("position_embedding", pos), "",
           c.feed("gamma", gamma), c.feed("beta", beta), "", ""]
    total = words[ids].astype(np.float64)
    pidx = np.arange(S)[None, :] if position_ids is None else position_ids
    if position_ids is not None:
        ins[8] = c.feed("position_ids", position_ids)
    total = total + pos[pidx].astype(np.float64)
    if with_segments:
        seg_ids = c.rng.integers(0, 2, (B, S)).astype(np.int32)
        seg = c.randn(2, H)
        ins[1], ins[4] = c.feed("segment_ids", seg_ids), c.feed("segment_embedding", seg)
        total = total + seg[seg_ids]
    mask = None
    if with_mask:
        mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=np.int32)
        ins[7] = c.feed("mask", mask)
    c.nodes.append(node("EmbedLayerNormalization", ins, ["output", "mask_index", "embedding_sum"], epsilon=1e-5))
    c.outputs = [("output", F), ("mask_index", TensorProto.INT32), ("embedding_sum", F)]
    c.ref = {"output": layer_norm_ref(total, gamma, beta, 1e-5), "embedding_sum": total,
             "mask_index": (mask != 0).sum(1).astype(np.int32) if mask is not None else np.zeros(B, np.int32)}
    return c


@case
def embed_layer_norm():
    return embed_case("embed_layer_norm", "input_ids (2,5), words (20,16), positions (8,16), segments and a mask",
                      True, True)


@case
def embed_layer_norm_plain():
    return embed_case("embed_layer_norm_plain", "input_ids (2,5), words and positions only: mask_index without a mask",
                      False, False)


@case
def embed_layer_norm_position_ids():
    return embed_case("embed_layer_norm_position_ids", "position_ids (1,5) read, not 0..S-1", False, True,
                      position_ids=np.array([[3, 1, 4, 1, 5]], dtype=np.int32))


@case
def matmul_integer_to_float():
    c = Case("matmul_integer_to_float", "MatMulIntegerToFloat",
             "A u8 (2,3,8), B i8 (8,5), a_scale, b_scale per column, zero points, bias")
    a = c.rng.integers(0, 256, (2, 3, 8)).astype(np.uint8)
    b = c.rng.integers(-128, 128, (8, 5)).astype(np.int8)
    a_scale, b_scale = np.array(0.02, np.float32), (c.rng.random(5) * 0.05 + 0.01).astype(np.float32)
    a_zp, b_zp = np.array(128, np.uint8), np.array([1, -2, 0, 3, -1], np.int8)
    bias = c.randn(5)
    c.nodes.append(node("MatMulIntegerToFloat", [c.feed("A", a), c.init("B", b), c.feed("a_scale", a_scale),
                                                 c.init("b_scale", b_scale), c.feed("a_zero_point", a_zp),
                                                 c.init("b_zero_point", b_zp), c.init("bias", bias)], ["Y"]))
    c.outputs = [("Y", F)]
    prod = (a.astype(np.float64) - 128) @ (b.astype(np.float64) - b_zp.astype(np.float64))
    c.ref = {"Y": prod * float(a_scale) * b_scale.astype(np.float64) + bias}
    return c


@case
def dynamic_quantize_matmul():
    c = Case("dynamic_quantize_matmul", "DynamicQuantizeMatMul",
             "A f32 (3,8) quantized to uint8 at run time, B i8 (8,4), b_scale per column, bias")
    a = c.randn(3, 8)
    b = c.rng.integers(-128, 128, (8, 4)).astype(np.int8)
    b_scale = (c.rng.random(4) * 0.05 + 0.01).astype(np.float32)
    bias = c.randn(4)
    c.nodes.append(node("DynamicQuantizeMatMul", [c.feed("A", a), c.init("B", b), c.init("b_scale", b_scale), "",
                                                  c.init("bias", bias)], ["Y"]))
    c.outputs = [("Y", F)]
    lo, hi = min(0.0, float(a.min())), max(0.0, float(a.max()))
    scale = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
    zp = np.clip(np.rint(-np.float32(lo) / scale), 0, 255)
    aq = np.clip(np.rint(a / scale) + zp, 0, 255)
    c.ref = {"Y": (aq - zp) @ b.astype(np.float64) * float(scale) * b_scale.astype(np.float64) + bias}
    return c


def qlinear_binary_case(name, covers, op, dtype, a_shape, b_shape):
    c = Case(name, op, covers)
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    a = c.rng.integers(lo, hi, a_shape).astype(dtype)
    b = c.rng.integers(lo, hi, b_shape).astype(dtype)
    sa, sb, sc = np.float32(0.05), np.float32(0.03), np.float32(0.07 if op == "QLinearAdd" else 0.2)
    za, zb, zc = (dtype(128), dtype(120), dtype(125)) if dtype == np.uint8 else (dtype(3), dtype(-5), dtype(1))
    ins = [c.feed("A", a), c.feed("A_scale", np.array(sa)), c.feed("A_zero_point", np.array(za)),
           c.feed("B", b), c.feed("B_scale", np.array(sb)), c.feed("B_zero_point", np.array(zb)),
           c.feed("C_scale", np.array(sc)), c.feed("C_zero_point", np.array(zc))]
    c.nodes.append(node(op, ins, ["C"]))
    c.outputs = [("C", TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8)]
    x, z = (a.astype(np.float64) - float(za)) * float(sa), (b.astype(np.float64) - float(zb)) * float(sb)
    r = x + z if op == "QLinearAdd" else x * z
    c.ref = {"C": np.clip(np.rint(r / float(sc)) + float(zc), lo, hi - 1).astype(dtype)}
    return c


@case
def qlinear_add():
    return qlinear_binary_case("qlinear_add", "u8 A (2,3,4) plus B (4), broadcast", "QLinearAdd", np.uint8, (2, 3, 4), (4,))


@case
def qlinear_add_int8():
    return qlinear_binary_case("qlinear_add_int8", "i8 A (3,1) plus B (1,5)", "QLinearAdd", np.int8, (3, 1), (1, 5))


@case
def qlinear_mul():
    return qlinear_binary_case("qlinear_mul", "u8 A (2,3,4) times B (2,3,4)", "QLinearMul", np.uint8, (2, 3, 4), (2, 3, 4))


def qlinear_unary_case(name, covers, op, dtype, f, **attrs):
    c = Case(name, op, covers)
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    x = np.arange(lo, hi).astype(dtype).reshape(16, 16)  # every value once
    sx, sy = np.float32(0.04), np.float32(1 / 256 if op == "QLinearSigmoid" else 0.03)
    zx, zy = (dtype(128), dtype(0 if op == "QLinearSigmoid" else 100)) if dtype == np.uint8 else (dtype(-3), dtype(-128 if op == "QLinearSigmoid" else 10))
    ins = [c.feed("X", x), c.feed("X_scale", np.array(sx)), c.feed("X_zero_point", np.array(zx)),
           c.feed("Y_scale", np.array(sy)), c.feed("Y_zero_point", np.array(zy))]
    c.nodes.append(node(op, ins, ["Y"], **attrs))
    c.outputs = [("Y", TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8)]
    v = f((x.astype(np.float64) - float(zx)) * float(sx))
    c.ref = {"Y": np.clip(np.rint(v / float(sy)) + float(zy), lo, hi - 1).astype(dtype)}
    return c


@case
def qlinear_sigmoid():
    return qlinear_unary_case("qlinear_sigmoid", "u8 X, every value 0..255 once", "QLinearSigmoid", np.uint8,
                              lambda v: 1 / (1 + np.exp(-v)))


@case
def qlinear_sigmoid_int8():
    return qlinear_unary_case("qlinear_sigmoid_int8", "i8 X, every value -128..127 once", "QLinearSigmoid", np.int8,
                              lambda v: 1 / (1 + np.exp(-v)))


@case
def qlinear_leaky_relu():
    return qlinear_unary_case("qlinear_leaky_relu", "u8 X, every value once, alpha 0.1", "QLinearLeakyRelu", np.uint8,
                              lambda v: np.where(v >= 0, v, 0.1 * v), alpha=0.1)


@case
def fused_matmul():
    return fused_matmul_case("fused_matmul", "A (2,3,4) x B (4,5), alpha 0.5", (2, 3, 4), (4, 5), 0, 0, 0.5)


@case
def fused_matmul_trans():
    return fused_matmul_case("fused_matmul_trans", "A (2,1,4,3) transposed x B (3,5,4) transposed, batch broadcast, alpha 2",
                             (2, 1, 4, 3), (3, 5, 4), 1, 1, 2.0)


def activation_ref(name, x, params):
    if name == "Relu":
        return np.maximum(x, 0)
    if name == "LeakyRelu":
        return np.where(x >= 0, x, params[0] * x)
    if name == "Sigmoid":
        return 1 / (1 + np.exp(-x))
    if name == "Tanh":
        return np.tanh(x)
    if name == "Clip":
        return np.clip(x, params[0], params[1])
    if name == "HardSigmoid":
        return np.clip(params[0] * x + params[1], 0, 1)
    raise ValueError(name)


def fused_gemm_case(name, covers, activation, params, trans_b=0):
    c = Case(name, "FusedGemm", covers)
    a, b, bias = c.randn(3, 4), c.randn(5, 4) if trans_b else c.randn(4, 5), c.randn(5)
    attrs = {"activation": activation, "alpha": 0.75, "beta": 1.5, "transB": trans_b}
    if params:
        attrs["activation_alpha"] = params[0]
    if len(params) > 1:
        attrs["activation_beta"] = params[1]
    c.nodes.append(node("FusedGemm", [c.feed("A", a), c.feed("B", b), c.feed("C", bias)], ["Y"], **attrs))
    c.outputs = [("Y", F)]
    bd = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    c.ref = {"Y": activation_ref(activation, 0.75 * a.astype(np.float64) @ bd + 1.5 * bias, params)}
    return c


@case
def fused_gemm_relu():
    return fused_gemm_case("fused_gemm_relu", "A (3,4) x B (4,5) + C (5), alpha 0.75, beta 1.5, then Relu", "Relu", [])


@case
def fused_gemm_leaky_relu():
    return fused_gemm_case("fused_gemm_leaky_relu", "A (3,4) x B (5,4) transposed + C, then LeakyRelu alpha 0.2",
                           "LeakyRelu", [0.2], trans_b=1)


def conv2d_ref(x, w, b, pads, strides):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, -1, 1, 1)


def fused_conv_case(name, covers, activation, params, with_z):
    c = Case(name, "FusedConv", covers)
    x, w, b = c.randn(1, 3, 6, 6), c.randn(4, 3, 3, 3, scale=0.5), c.randn(4)
    ins = [c.feed("X", x), c.feed("W", w), c.feed("B", b)]
    y = conv2d_ref(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), [1, 1, 1, 1], [2, 2])
    if with_z:
        z = c.randn(*y.shape)
        ins.append(c.feed("Z", z))
        y = y + z
    attrs = {"activation": activation, "pads": [1, 1, 1, 1], "strides": [2, 2], "kernel_shape": [3, 3]}
    if params:
        attrs["activation_params"] = params
    c.nodes.append(node("FusedConv", ins, ["Y"], **attrs))
    c.outputs = [("Y", F)]
    c.ref = {"Y": activation_ref(activation, y, params)}
    return c


@case
def fused_conv_relu():
    return fused_conv_case("fused_conv_relu", "Conv 3x3 stride 2 pad 1, X (1,3,6,6), W (4,3,3,3), bias, then Relu",
                           "Relu", [], False)


@case
def fused_conv_sum_clip():
    return fused_conv_case("fused_conv_sum_clip", "Conv 3x3 stride 2 pad 1 plus Z (the sum input), then Clip (-0.5, 0.5)",
                           "Clip", [-0.5, 0.5], True)


@case
def fused_conv_hard_sigmoid():
    return fused_conv_case("fused_conv_hard_sigmoid", "Conv 3x3 stride 2 pad 1, then HardSigmoid (alpha 0.3, beta 0.4)",
                           "HardSigmoid", [0.3, 0.4], False)


# --------------------------------------------------------------------------------------------


def verdict(c, got):
    """onnxruntime against the numpy model, as the manifest says it."""
    worst = (0.0, 0.0, "")
    if not c.ref:
        return "no numpy model: onnxruntime's outputs (and their shapes) are the reference"
    for name, _ in c.outputs:
        e = max_err(got[file_name(name)], np.asarray(c.ref[name]))
        if e is None:
            return f"onnxruntime's {name} has shape {list(got[file_name(name)].shape)}, numpy model {list(np.shape(c.ref[name]))}"
        if e[1] >= worst[1]:
            worst = (e[0], e[1], name)
    ok = worst[1] <= 1e-5
    text = (f"onnxruntime agrees with the numpy model (max |diff| {worst[0]:.2g}, {worst[1]:.2g} of max |value|)" if ok else
            f"onnxruntime DIFFERS from the numpy model: {worst[2]} max |diff| {worst[0]:.3g} ({worst[1]:.3g} of max |value|)")
    alt = getattr(c, "alt", None)
    if alt:
        what, ref = alt
        name = c.outputs[0][0]
        y, want = got[file_name(name)].astype(np.float64), np.asarray(c.ref[name], np.float64)
        e = max_err(y, ref[name])
        rel = float((np.abs(y - want) / np.maximum(np.abs(want), 1e-30)).max())
        # value_conformance's tolerance, for a float reference against onnxruntime's values
        off = int((np.abs(want - y) > 1e-7 + 1e-6 * np.abs(y).max() + 1e-3 * np.abs(y)).sum())
        text += (f"; against the model with {what}: max |diff| {e[0]:.3g} ({e[1]:.3g} of max |value|)"
                 f"; accuracy_level 4: the float reference is off by {worst[1]:.2g} of max |Y| "
                 f"({'more' if worst[1] > 1e-2 else 'less'} than 1e-2; largest element-wise relative "
                 f"difference {rel:.2g}; {off} of {y.size} elements outside value_conformance's tolerance)")
    if c.note:
        text += "; " + c.note
    return text


def write_pb(path, arr, name):
    t = numpy_helper.from_array(np.ascontiguousarray(arr), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


# --------------------------------------------------------------------------------------------
# The QOperator format's ops (onnxruntime's quantization tool) and its QDQ pair with wider types


def qparams(c, prefix, dtype, scale, zero):
    return [c.feed(prefix + "_scale", np.array(np.float32(scale))), c.feed(prefix + "_zero_point", np.array(dtype(zero)))]


def quant_ref(v, scale, zero, dtype):
    lo, hi = (0, 255) if dtype == np.uint8 else (-128, 127)
    return np.clip(np.rint(v / float(scale)) + float(zero), lo, hi).astype(dtype)


def rand_q(c, dtype, *shape):
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    return c.rng.integers(lo, hi, shape).astype(dtype)


def elem_of(dtype):
    return ELEM[np.dtype(dtype)]


def qlinear_concat_case(name, covers, dtype, shapes, axis, params):
    c = Case(name, "QLinearConcat", covers)
    ys, yz = params[0]
    ins = qparams(c, "Y", dtype, ys, yz)
    parts = []
    for i, (shape, (s_, z_)) in enumerate(zip(shapes, params[1:])):
        x = rand_q(c, dtype, *shape)
        ins += [c.feed(f"X{i}", x)] + qparams(c, f"X{i}", dtype, s_, z_)
        parts.append(quant_ref((x.astype(np.float64) - z_) * np.float32(s_), ys, yz, dtype))
    c.nodes.append(node("QLinearConcat", ins, ["Y"], axis=axis))
    c.outputs = [("Y", elem_of(dtype))]
    c.ref = {"Y": np.concatenate(parts, axis)}
    return c


@case
def qlinear_concat():
    return qlinear_concat_case("qlinear_concat", "u8 (2,3,4), (2,2,4), (2,1,4) along axis 1; the first with Y's own scale "
                               "and zero point (copied), the others requantized", np.uint8, [(2, 3, 4), (2, 2, 4), (2, 1, 4)], 1,
                               [(0.05, 128), (0.05, 128), (0.03, 100), (0.11, 140)])


@case
def qlinear_concat_int8():
    return qlinear_concat_case("qlinear_concat_int8", "i8 (3,2) and (3,5) along axis -1", np.int8, [(3, 2), (3, 5)], -1,
                               [(0.04, -3), (0.02, 5), (0.07, -10)])


def qlinear_gap_case(name, covers, dtype, shape, channels_last):
    c = Case(name, "QLinearGlobalAveragePool", covers)
    x = rand_q(c, dtype, *shape)
    sx, zx, sy, zy = (0.05, 128, 0.02, 120) if dtype == np.uint8 else (0.05, -3, 0.02, 4)
    ins = [c.feed("X", x)] + qparams(c, "X", dtype, sx, zx) + qparams(c, "Y", dtype, sy, zy)
    c.nodes.append(node("QLinearGlobalAveragePool", ins, ["Y"], channels_last=channels_last))
    c.outputs = [("Y", elem_of(dtype))]
    axes = tuple(range(1, len(shape) - 1)) if channels_last else tuple(range(2, len(shape)))
    v = ((x.astype(np.float64) - zx) * sx).mean(axis=axes, keepdims=True)
    c.ref = {"Y": quant_ref(v, sy, zy, dtype)}
    return c


@case
def qlinear_global_average_pool():
    return qlinear_gap_case("qlinear_global_average_pool", "u8 X (2,3,5,5)", np.uint8, (2, 3, 5, 5), 0)


@case
def qlinear_global_average_pool_nhwc():
    return qlinear_gap_case("qlinear_global_average_pool_nhwc", "i8 X (2,4,4,3), channels_last", np.int8, (2, 4, 4, 3), 1)


def avg_pool_ref(x, kernel, strides, pads, count_include_pad, ceil_mode):
    n, ch, h, w = x.shape
    out = []
    def olen(i, k, s, lo, hi):
        v = (i + lo + hi - k) / s + 1
        o = int(np.ceil(v)) if ceil_mode else int(np.floor(v))
        if ceil_mode and (o - 1) * s >= i + lo:
            o -= 1
        return o
    oh, ow = olen(h, kernel[0], strides[0], pads[0], pads[2]), olen(w, kernel[1], strides[1], pads[1], pads[3])
    y = np.zeros((n, ch, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * strides[0] - pads[0], j * strides[1] - pads[1]
            h1, w1 = h0 + kernel[0], w0 + kernel[1]
            win = x[:, :, max(h0, 0):min(h1, h), max(w0, 0):min(w1, w)]
            if count_include_pad:
                cnt = (min(h1, h + pads[2]) - h0) * (min(w1, w + pads[3]) - w0)
            else:
                cnt = win.shape[2] * win.shape[3]
            y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y


def qlinear_avg_pool_case(name, covers, dtype, shape, channels_last, **attrs):
    c = Case(name, "QLinearAveragePool", covers)
    x = rand_q(c, dtype, *shape)
    sx, zx, sy, zy = (0.05, 128, 0.03, 125) if dtype == np.uint8 else (0.05, 2, 0.03, -1)
    ins = [c.feed("X", x)] + qparams(c, "X", dtype, sx, zx) + qparams(c, "Y", dtype, sy, zy)
    c.nodes.append(node("QLinearAveragePool", ins, ["Y"], channels_last=channels_last, **attrs))
    c.outputs = [("Y", elem_of(dtype))]
    xf = (x.astype(np.float64) - zx) * sx
    if channels_last:
        xf = xf.transpose(0, 3, 1, 2)
    y = avg_pool_ref(xf, attrs["kernel_shape"], attrs.get("strides", [1, 1]), attrs.get("pads", [0, 0, 0, 0]),
                     attrs.get("count_include_pad", 0), attrs.get("ceil_mode", 0))
    if channels_last:
        y = y.transpose(0, 2, 3, 1)
    c.ref = {"Y": quant_ref(y, sy, zy, dtype)}
    return c


@case
def qlinear_average_pool():
    return qlinear_avg_pool_case("qlinear_average_pool", "u8 X (1,2,7,7), 3x3 window, stride 2, pads 1, pads not counted",
                                 np.uint8, (1, 2, 7, 7), 0, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])


@case
def qlinear_average_pool_include_pad_ceil():
    return qlinear_avg_pool_case("qlinear_average_pool_include_pad_ceil", "u8 X (2,3,6,5), 3x2 window, stride 2, pads "
                                 "counted, ceil_mode", np.uint8, (2, 3, 6, 5), 0, kernel_shape=[3, 2], strides=[2, 2],
                                 pads=[1, 0, 1, 1], count_include_pad=1, ceil_mode=1)


@case
def qlinear_average_pool_nhwc():
    return qlinear_avg_pool_case("qlinear_average_pool_nhwc", "i8 X (1,6,6,4), channels_last, 2x2 window, stride 2",
                                 np.int8, (1, 6, 6, 4), 1, kernel_shape=[2, 2], strides=[2, 2])


def qlinear_softmax_case(name, covers, dtype, shape, opset, axis, ys, yz):
    c = Case(name, "QLinearSoftmax", covers)
    x = rand_q(c, dtype, *shape)
    sx, zx = (0.08, 128) if dtype == np.uint8 else (0.08, 3)
    ins = [c.feed("X", x)] + qparams(c, "X", dtype, sx, zx) + qparams(c, "Y", dtype, ys, yz)
    attrs = {"opset": opset}
    if axis is not None:
        attrs["axis"] = axis
    c.nodes.append(node("QLinearSoftmax", ins, ["Y"], **attrs))
    c.outputs = [("Y", elem_of(dtype))]
    xf = (x.astype(np.float64) - zx) * sx
    a = (1 if opset < 13 else -1) if axis is None else axis
    if opset < 13:
        flat = xf.reshape(int(np.prod(shape[:a])), -1)
        e = np.exp(flat - flat.max(axis=1, keepdims=True))
        y = (e / e.sum(axis=1, keepdims=True)).reshape(shape)
    else:
        e = np.exp(xf - xf.max(axis=a, keepdims=True))
        y = e / e.sum(axis=a, keepdims=True)
    c.ref = {"Y": quant_ref(y, ys, yz, dtype)}
    c.note = ("onnxruntime's kernel scales by floor(1 / y_scale) and rounds a float table of exponentials: "
              "off by one step from the exact softmax where that lands near a half")
    return c


@case
def qlinear_softmax():
    return qlinear_softmax_case("qlinear_softmax", "u8 X (2,3,10), opset 13, last axis, y_scale 1/256", np.uint8,
                                (2, 3, 10), 13, None, 1 / 256, 0)


@case
def qlinear_softmax_axis1_opset13():
    return qlinear_softmax_case("qlinear_softmax_axis1_opset13", "u8 X (2,5,3), opset 13, axis 1 (not the last)",
                                np.uint8, (2, 5, 3), 13, 1, 1 / 256, 0)


@case
def qlinear_softmax_int8_opset12():
    return qlinear_softmax_case("qlinear_softmax_int8_opset12", "i8 X (2,3,4), opset 12 (rows from axis 1 on), "
                                "y_zero_point -128", np.int8, (2, 3, 4), 12, 1, 1 / 256, -128)


@case
def qlinear_where():
    c = Case("qlinear_where", "QLinearWhere", "u8 X (2,3,4) and Y (4) into Z's scale, condition (2,1,4)")
    cond = c.rng.integers(0, 2, (2, 1, 4)).astype(np.bool_)
    x, y = rand_q(c, np.uint8, 2, 3, 4), rand_q(c, np.uint8, 4)
    ins = [c.feed("C", cond), c.feed("X", x)] + qparams(c, "X", np.uint8, 0.05, 128) + [c.feed("Y", y)] + \
        qparams(c, "Y", np.uint8, 0.03, 100) + qparams(c, "Z", np.uint8, 0.07, 120)
    c.nodes.append(node("QLinearWhere", ins, ["Z"]))
    c.outputs = [("Z", TensorProto.UINT8)]
    xq = quant_ref((x.astype(np.float64) - 128) * np.float32(0.05), 0.07, 120, np.uint8)
    yq = quant_ref((y.astype(np.float64) - 100) * np.float32(0.03), 0.07, 120, np.uint8)
    c.ref = {"Z": np.where(cond, xq, yq)}
    return c


def qgemm_case(name, covers, a_type, b_type, M, K, N, transA=0, transB=0, per_column=False, bias=True, out=np.uint8,
               alpha=1.0):
    c = Case(name, "QGemm", covers)
    a = rand_q(c, a_type, *((K, M) if transA else (M, K)))
    b = rand_q(c, b_type, *((N, K) if transB else (K, N)))
    za = a_type(120) if a_type == np.uint8 else a_type(-2)
    sb = (np.linspace(0.01, 0.03, N).astype(np.float32) if per_column else np.array(np.float32(0.02)))
    zb = (np.array([b_type(v) for v in np.linspace(-3, 3, N).round()]) if per_column and b_type == np.int8 else
          np.array([b_type(128)] * N) if per_column else np.array(b_type(0 if b_type == np.int8 else 128)))
    ins = [c.feed("A", a), c.feed("a_scale", np.array(np.float32(0.03))), c.feed("a_zero_point", np.array(za)),
           c.feed("B", b), c.feed("b_scale", sb), c.feed("b_zero_point", zb)]
    cv = c.rng.integers(-500, 500, (N,)).astype(np.int32) if bias else None
    ins.append(c.feed("C", cv) if bias else "")
    if out is not None:
        ins += [c.feed("y_scale", np.array(np.float32(0.4))), c.feed("y_zero_point", np.array(out(128 if out == np.uint8 else 0)))]
    attrs = dict(transA=transA, transB=transB)
    if alpha != 1.0:
        attrs["alpha"] = alpha
    c.nodes.append(node("QGemm", ins, ["Y"], **attrs))
    c.outputs = [("Y", TensorProto.FLOAT if out is None else elem_of(out))]
    af = (a.T if transA else a).astype(np.float64) - float(za)
    bf = (b.T if transB else b).astype(np.float64) - zb.astype(np.float64)
    acc = af @ bf + (cv.astype(np.float64) if bias else 0)
    v = acc * alpha * 0.03 * sb.astype(np.float64)
    c.ref = {"Y": v if out is None else quant_ref(v, 0.4, 128 if out == np.uint8 else 0, out)}
    return c


@case
def qgemm_u8_s8():
    return qgemm_case("qgemm_u8_s8", "u8 A (3,16) times i8 B (16,5), i32 C (5), u8 Y", np.uint8, np.int8, 3, 16, 5)


@case
def qgemm_trans_per_column():
    return qgemm_case("qgemm_trans_per_column", "u8 A transposed (16,4), u8 B transposed (6,16) with per-column scale "
                      "and zero point, alpha 0.5", np.uint8, np.uint8, 4, 16, 6, transA=1, transB=1, per_column=True,
                      alpha=0.5)


@case
def qgemm_float_out():
    return qgemm_case("qgemm_float_out", "u8 A (2,8) times i8 B (8,3), no C, f32 Y (no y_scale)", np.uint8, np.int8, 2, 8, 3,
                      bias=False, out=None)


@case
def ms_quantize_linear_u16():
    c = Case("ms_quantize_linear_u16", "QuantizeLinear", "com.microsoft QuantizeLinear to u16, per channel (axis 1)")
    x = c.randn(2, 3, 4, scale=3.0)
    s = np.array([0.001, 0.002, 0.0005], np.float32)
    z = np.array([30000, 32768, 1000], np.uint16)
    c.nodes.append(node("QuantizeLinear", [c.feed("x", x), c.feed("y_scale", s), c.feed("y_zero_point", z)], ["y"], axis=1))
    c.outputs = [("y", TensorProto.UINT16)]
    v = np.rint(x / s.reshape(1, 3, 1)) + z.reshape(1, 3, 1).astype(np.float64)
    c.ref = {"y": np.clip(v, 0, 65535).astype(np.uint16)}
    return c


@case
def ms_dequantize_linear_i16():
    c = Case("ms_dequantize_linear_i16", "DequantizeLinear", "com.microsoft DequantizeLinear of i16, per tensor")
    x = c.rng.integers(-32768, 32768, (3, 5)).astype(np.int16)
    c.nodes.append(node("DequantizeLinear", [c.feed("x", x), c.feed("x_scale", np.array(np.float32(0.01))),
                                             c.feed("x_zero_point", np.array(np.int16(-7)))], ["y"]))
    c.outputs = [("y", F)]
    c.ref = {"y": (x.astype(np.float64) + 7) * np.float32(0.01)}
    return c


@case
def attention23_bool_mask_row_all_false():
    c = Case("attention23_bool_mask_row_all_false", "Attention", "opset 23 Attention with a bool mask whose first row "
             "masks every key (that row's output is 0 in onnxruntime), 2 query heads over 1 KV head")
    c.opset = 23
    q, k, v = c.randn(1, 2, 32), c.randn(1, 2, 16), c.randn(1, 2, 16)
    mask = np.array([[[[False, False], [True, False]]]])
    c.nodes.append(node("Attention", [c.feed("Q", q), c.feed("K", k), c.feed("V", v), c.feed("attn_mask", mask)], ["Y"],
                        domain="", q_num_heads=2, kv_num_heads=1))
    c.outputs = [("Y", F)]
    qh, kh, vh = q.reshape(1, 2, 2, 16).transpose(0, 2, 1, 3), k.reshape(1, 2, 1, 16).transpose(0, 2, 1, 3), \
        v.reshape(1, 2, 1, 16).transpose(0, 2, 1, 3)
    y = np.zeros((1, 2, 2, 16))
    for h in range(2):
        s_ = qh[0, h].astype(np.float64) @ kh[0, 0].T.astype(np.float64) / np.sqrt(16)
        s_[1, 1] = -np.inf
        p_ = np.exp(s_[1] - s_[1].max()); p_ /= p_.sum()
        y[0, h, 1] = p_ @ vh[0, 0]
    c.ref = {"Y": y.transpose(0, 2, 1, 3).reshape(1, 2, 32)}
    return c


# --------------------------------------------------------------------------------------------
# Ops ONNX removed at opset 10 that onnxruntime still runs (the default domain, opset 8 here)


def legacy_case(name, op, covers, x, ref, **attrs):
    c = Case(name, op, covers)
    c.opset = 8
    c.nodes.append(node(op, [c.feed("X", x)], ["Y"], domain="", **attrs))
    c.outputs = [("Y", F)]
    c.ref = {"Y": ref}
    return c


@case
def image_scaler():
    x = np.random.default_rng(7).standard_normal((2, 3, 4, 5)).astype(np.float32)
    bias = [0.5, -1.0, 2.0]
    return legacy_case("image_scaler", "ImageScaler", "X (2,3,4,5) times 0.25 plus a bias per channel", x,
                       x.astype(np.float64) * 0.25 + np.array(bias).reshape(1, 3, 1, 1), scale=0.25, bias=bias)


@case
def scale_legacy():
    x = np.random.default_rng(8).standard_normal((3, 4)).astype(np.float32)
    return legacy_case("scale_legacy", "Scale", "X (3,4) times -1.5", x, x.astype(np.float64) * -1.5, scale=-1.5)


@case
def affine():
    x = np.random.default_rng(9).standard_normal((3, 4)).astype(np.float32)
    return legacy_case("affine", "Affine", "2 X + 0.5, X (3,4)", x, 2 * x.astype(np.float64) + 0.5, alpha=2.0, beta=0.5)


@case
def scaled_tanh():
    x = np.random.default_rng(10).standard_normal((3, 4)).astype(np.float32) * 3
    return legacy_case("scaled_tanh", "ScaledTanh", "1.5 tanh(0.7 X), X (3,4)", x, 1.5 * np.tanh(0.7 * x.astype(np.float64)),
                       alpha=1.5, beta=0.7)


@case
def parametric_softplus():
    x = np.random.default_rng(11).standard_normal((4, 5)).astype(np.float32) * 20
    return legacy_case("parametric_softplus", "ParametricSoftplus", "0.5 ln(exp(2 X) + 1), X (4,5) up to |40|", x,
                       0.5 * np.logaddexp(0, 2 * x.astype(np.float64)), alpha=0.5, beta=2.0)


@case
def crop_border():
    x = np.random.default_rng(12).standard_normal((2, 3, 7, 8)).astype(np.float32)
    return legacy_case("crop_border", "Crop", "X (2,3,7,8), borders left 1 top 2 right 3 bottom 0", x, x[:, :, 2:7, 1:5],
                       border=[1, 2, 3, 0])


@case
def crop_scale():
    x = np.random.default_rng(13).standard_normal((1, 2, 6, 6)).astype(np.float32)
    return legacy_case("crop_scale", "Crop", "X (1,2,6,6), a 3x4 window from top 1, left 2", x, x[:, :, 1:4, 2:6],
                       border=[2, 1, 0, 0], scale=[3, 4])


@case
def dynamic_slice():
    c = Case("dynamic_slice", "DynamicSlice", "X (4,6), starts [1, -4], ends [1000, -1] on axes [0, 1]")
    c.opset = 8
    x = c.randn(4, 6)
    c.nodes.append(node("DynamicSlice", [c.feed("X", x), c.feed("starts", np.array([1, -4], np.int64)),
                                         c.feed("ends", np.array([1000, -1], np.int64)),
                                         c.feed("axes", np.array([0, 1], np.int64))], ["Y"], domain=""))
    c.outputs = [("Y", F)]
    c.ref = {"Y": x[1:, 2:5]}
    return c


# --------------------------------------------------------------------------------------------
# Default-domain ops where onnxruntime decides what the specification leaves open or where a
# sweep of exports found shapeflow apart from it (onnxruntime's values are the expected ones)


def plain_case(name, op, covers, opset, inputs, ref=None, outputs=(("Y", F),), inits=None, domain="", **attrs):
    """A one-node case of `op` in `domain`: inputs fed in order (None: absent), then `inits` as
    initializers."""
    c = Case(name, op, covers)
    c.opset = opset
    names = [c.feed(k, v) if v is not None else "" for k, v in inputs]
    for k, v in (inits or {}).items():
        c.init(k, v)
        names.append(k)
    c.nodes.append(node(op, names, [o for o, _ in outputs], domain=domain, **attrs))
    c.outputs = list(outputs)
    c.ref = ref if ref is not None else {}
    return c


@case
def convtranspose_output_shape_odd():
    rng = np.random.default_rng(21)
    x, w = rng.standard_normal((1, 4, 4, 5)).astype(np.float32), rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    c = plain_case("convtranspose_output_shape_odd", "ConvTranspose", "output_shape [9, 10] from X (4, 5), stride 2: "
                   "a total padding of 1 on W goes at the start without auto_pad", 17, [("X", x), ("W", w)],
                   output_shape=[9, 10], strides=[2, 2])
    full = np.zeros((1, 2, 9, 11))
    for ci in range(4):
        for i in range(4):
            for j in range(5):
                full[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += x[0, ci, i, j] * w[ci]
    c.ref = {"Y": full[:, :, :, 1:]}
    return c


@case
def dropout7_mask():
    x = np.random.default_rng(22).standard_normal((2, 3)).astype(np.float32)
    return plain_case("dropout7_mask", "Dropout", "Dropout-7 in inference: the mask has X's type, zeros", 7, [("X", x)],
                      {"Y": x, "M": np.zeros((2, 3), np.float32)}, outputs=(("Y", F), ("M", F)), ratio=0.4)


@case
def dropout10_mask():
    x = np.random.default_rng(23).standard_normal((2, 3)).astype(np.float32)
    return plain_case("dropout10_mask", "Dropout", "Dropout-10 in inference: a bool mask, false (onnxruntime)", 10,
                      [("X", x)], {"Y": x, "M": np.zeros((2, 3), bool)}, outputs=(("Y", F), ("M", TensorProto.BOOL)),
                      ratio=0.4)


@case
def resize10_nearest_downsample():
    x = np.arange(35, dtype=np.float32).reshape(1, 1, 5, 7)
    sc = np.array([1, 1, 0.5, 0.75], np.float32)
    rows, cols = np.ceil(np.arange(2) / np.float32(0.5)).astype(int), np.ceil(np.arange(5) / np.float32(0.75)).astype(int)
    return plain_case("resize10_nearest_downsample", "Resize", "Resize-10 nearest at scales 0.5 and 0.75: the ceiling "
                      "of the coordinate on a shrinking axis (onnxruntime)", 10, [("X", x), ("scales", sc)],
                      {"Y": x[:, :, rows][:, :, :, cols]})


@case
def resize_tf_half_pixel_kept_axes():
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 1, 4)
    return plain_case("resize_tf_half_pixel_kept_axes", "Resize", "tf_half_pixel_for_nn, round_prefer_ceil, sizes "
                      "[1, 2, 2, 4]: the kept axes read themselves", 18, [("X", x), ("roi", None), ("scales", None),
                      ("sizes", np.array([1, 2, 2, 4], np.int64))], {"Y": np.repeat(x, 2, axis=2)},
                      mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn",
                      nearest_mode="round_prefer_ceil")


@case
def resize_scale_float_length():
    x = np.random.default_rng(24).standard_normal((1, 1, 10, 2)).astype(np.float32)
    c = plain_case("resize_scale_float_length", "Resize", "scale 2.3 on 10 rows: 23 rows (10 * 2.3 in float)", 13,
                   [("X", x), ("roi", None), ("scales", np.array([1, 1, 2.3, 1], np.float32))], mode="nearest")
    xo = (np.arange(23, dtype=np.float32) + np.float32(0.5)) / np.float32(2.3) - np.float32(0.5)
    rows = np.clip(np.ceil(xo - 0.5).astype(int), 0, 9)
    c.ref = {"Y": x[:, :, rows]}
    return c


@case
def batch_norm_spatial0():
    rng = np.random.default_rng(26)
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    sc, b, m = (rng.standard_normal((3, 2, 2)).astype(np.float32) for _ in range(3))
    v = (rng.random((3, 2, 2)) + 0.5).astype(np.float32)
    ref = (x - m) / np.sqrt(v.astype(np.float64) + 1e-5) * sc + b
    return plain_case("batch_norm_spatial0", "BatchNormalization", "opset 7 with spatial = 0: scale, B, mean and var "
                      "per element of an image [3, 2, 2]", 7, [("X", x), ("scale", sc), ("B", b), ("mean", m), ("var", v)],
                      {"Y": ref}, spatial=0)


@case
def lp_normalization_zero_norm():
    x = np.random.default_rng(25).standard_normal((2, 4, 3)).astype(np.float32)
    x[0, :, 0] = 0
    n = np.sqrt((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True))
    return plain_case("lp_normalization_zero_norm", "LpNormalization", "p = 2 along axis 1, one column all zeros (0 "
                      "out, as onnxruntime)", 13, [("X", x)], {"Y": np.where(n == 0, 0, x / np.where(n == 0, 1, n))},
                      axis=1, p=2)


def ms_case(name, op, covers, inputs, outputs=(("Y", F),), inits=None, ref=None, **attrs):
    """A com.microsoft op's case (the default domain at opset 21 beside it)."""
    return plain_case(name, op, covers, 21, inputs, ref, outputs, inits, domain=MS, **attrs)


@case
def ms_inverse():
    rng = np.random.default_rng(27)
    x = (rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    return ms_case("ms_inverse", "Inverse", "a batch of two 3x3 matrices", [("X", x)],
                   ref={"Y": np.linalg.inv(x.astype(np.float64))})


@case
def ms_expand_dims_negative():
    x = np.random.default_rng(28).standard_normal((2, 3)).astype(np.float32)
    return ms_case("ms_expand_dims_negative", "ExpandDims", "axis -1 (an initializer): a dim of 1 appended, as "
                   "numpy and onnxruntime's kernel do", [("X", x)], inits={"axis": np.array(-1, np.int32)},
                   ref={"Y": x[:, :, None]})


@case
def ms_expand_dims_middle():
    x = np.random.default_rng(29).standard_normal((2, 3)).astype(np.float32)
    return ms_case("ms_expand_dims_middle", "ExpandDims", "axis 1", [("X", x)], inits={"axis": np.array(1, np.int32)},
                   ref={"Y": x[:, None, :]})


@case
def ms_moe_relu():
    rng = np.random.default_rng(30)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    router = rng.standard_normal((6, 4)).astype(np.float32)
    fc1 = (rng.standard_normal((4, 16, 8)) * 0.3).astype(np.float32)
    fc2 = (rng.standard_normal((4, 8, 16)) * 0.3).astype(np.float32)
    return ms_case("ms_moe_relu", "MoE", "[B, S, hidden] input, 4 experts, top 2, relu: the input's shape",
                   [("input", x), ("router_probs", router), ("fc1", fc1), ("fc1_bias", None), ("fc2", fc2)], k=2,
                   activation_type="relu")


def moe_case(name, covers, tokens_shape, E, inter, hidden, k, act, fc1_rows=None, bias=False, **attrs):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal(tokens_shape + (hidden,)).astype(np.float32)
    T = int(np.prod(tokens_shape))
    router = rng.standard_normal((T, E)).astype(np.float32)
    rows = fc1_rows or inter
    fc1 = (rng.standard_normal((E, rows, hidden)) * 0.3).astype(np.float32)
    fc2 = (rng.standard_normal((E, hidden, inter)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal((E, rows)) * 0.1).astype(np.float32) if bias else None
    b2 = (rng.standard_normal((E, hidden)) * 0.1).astype(np.float32) if bias else None
    return ms_case(name, "MoE", covers, [("input", x), ("router_probs", router), ("fc1", fc1), ("fc1_bias", b1),
                   ("fc2", fc2), ("fc2_bias", b2)], k=k, activation_type=act, **attrs)


@case
def ms_moe_silu_normalized_bias():
    return moe_case("ms_moe_silu_normalized_bias", "[tokens, hidden] input, 8 experts, top 3 renormalised, silu, both "
                    "biases", (5,), 8, 12, 6, 3, "silu", bias=True, normalize_routing_weights=1)


@case
def ms_moe_gelu_top1():
    return moe_case("ms_moe_gelu_top1", "top 1 of 3 experts, gelu (tanh form)", (2, 4), 3, 10, 8, 1, "gelu")


@case
def ms_moe_swiglu_interleaved():
    return moe_case("ms_moe_swiglu_interleaved", "swiglu with interleaved gate and linear rows (swiglu_fusion 1), "
                    "alpha 1.702, beta 1, limit 7, biases", (2, 3), 4, 8, 6, 2, "swiglu", fc1_rows=16, bias=True,
                    swiglu_fusion=1, activation_alpha=1.702, activation_beta=1.0, swiglu_limit=7.0)


@case
def ms_decoder_masked_mha():
    rng = np.random.default_rng(31)
    B, N, H, P = 2, 2, 8, 3
    q, k, v = (rng.standard_normal((B, 1, N * H)).astype(np.float32) for _ in range(3))
    pk, pv = (rng.standard_normal((B, N, P, H)).astype(np.float32) for _ in range(2))
    return ms_case("ms_decoder_masked_mha", "DecoderMaskedMultiHeadAttention", "one decoding step after 3 cached "
                   "positions: present = past + 1", [("query", q), ("key", k), ("value", v), ("mask_index", None),
                   ("attention_bias", None), ("past_key", pk), ("past_value", pv)],
                   outputs=(("Y", F), ("present_key", F), ("present_value", F)), num_heads=N)


@case
def ms_decoder_masked_mha_shared():
    rng = np.random.default_rng(32)
    B, N, H, M = 2, 2, 8, 6
    q, k, v = (rng.standard_normal((B, 1, N * H)).astype(np.float32) for _ in range(3))
    pk, pv = (rng.standard_normal((B, N, M, H)).astype(np.float32) for _ in range(2))
    return ms_case("ms_decoder_masked_mha_shared", "DecoderMaskedMultiHeadAttention", "a shared buffer of 6 "
                   "positions, 3 used: present is the buffer", [("query", q), ("key", k), ("value", v),
                   ("mask_index", None), ("attention_bias", None), ("past_key", pk), ("past_value", pv),
                   ("past_sequence_length", np.array([3], np.int32))],
                   outputs=(("Y", F), ("present_key", F), ("present_value", F)), num_heads=N,
                   past_present_share_buffer=1)


def build(c, tmp):
    """Runs the case in onnxruntime and writes it; the manifest row, or None and the reason."""
    path = os.path.join(tmp, "model.onnx")
    onnx.save(c.model(), path)
    got, why = run_ort(path, c.inputs, tmp)
    if got is None:
        return None, why
    missing = [n for n, _ in c.outputs if file_name(n) not in got]
    if missing:
        return None, f"onnxruntime gave no output {missing}"
    shapes = {n: got[file_name(n)] for n, _ in c.outputs}
    dest = os.path.join(OUT, c.name)
    shutil.rmtree(dest, ignore_errors=True)
    data = os.path.join(dest, "test_data_set_0")
    os.makedirs(data)
    onnx.save(c.model(shapes), os.path.join(dest, "model.onnx"))
    for k, (name, arr) in enumerate(c.inputs.items()):
        write_pb(os.path.join(data, f"input_{k}.pb"), arr, name)
    for k, (name, _) in enumerate(c.outputs):
        write_pb(os.path.join(data, f"output_{k}.pb"), shapes[name], name)
    # The written model must run in onnxruntime as well (declared output shapes included).
    again, why = run_ort(os.path.join(dest, "model.onnx"), c.inputs, tmp)
    if again is None or any(not np.array_equal(again[file_name(n)], shapes[n]) for n, _ in c.outputs):
        shutil.rmtree(dest, ignore_errors=True)
        return None, f"the written model does not rerun the same: {why}"
    return verdict(c, got), None


SEED = 20240


def main():
    global SEED
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="only cases whose name matches this regex")
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args()
    SEED = a.seed
    os.makedirs(OUT, exist_ok=True)
    manifest = os.path.join(OUT, "MANIFEST.tsv")
    rows, skipped = {}, {}
    if a.only and os.path.exists(manifest):
        for line in open(manifest):
            if line.startswith("# skipped: "):
                parts = line[len("# skipped: "):].rstrip("\n").split("\t")
                skipped[parts[0]] = parts
            elif not line.startswith("#"):
                parts = line.rstrip("\n").split("\t")
                rows[parts[0]] = parts
    with tempfile.TemporaryDirectory() as tmp:
        for fn in CASES:
            if a.only and not re.search(a.only, fn.__name__):
                continue
            c = fn()
            assert c.name == fn.__name__, c.name
            rows.pop(c.name, None)
            skipped.pop(c.name, None)
            v, why = build(c, tmp)
            if v is None:
                shutil.rmtree(os.path.join(OUT, c.name), ignore_errors=True)
                skipped[c.name] = [c.name, c.ops, c.covers, "onnxruntime refuses: " + why]
                print(f"SKIP {c.name}: {why}", flush=True)
            else:
                rows[c.name] = [c.name, c.ops, c.covers, v]
                print(f"{c.name}\t{v}", flush=True)
    with open(manifest, "w") as f:
        f.write("# onnxruntime 1.30 contrib-op kernel cases (scripts/contrib_cases.py); expected outputs are "
                "onnxruntime's (CPU, one thread, optimizations off)\n"
                "# case\tops\tcovers\tonnxruntime against the script's numpy model\n")
        for name in sorted(rows):
            f.write("\t".join(rows[name]) + "\n")
        for name in sorted(skipped):
            f.write("# skipped: " + "\t".join(skipped[name]) + "\n")
    print(f"{len(rows)} cases written, {len(skipped)} skipped", file=sys.stderr)


if __name__ == "__main__":
    main()
