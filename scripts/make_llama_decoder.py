#!/usr/bin/env python3
"""A small LLaMA-style decoder with a KV cache, written in torch the way Hugging Face's
LlamaForCausalLM is (random weights, seeded) and exported by torch.onnx.export (opset 17):
input_ids [batch_size, sequence_length], attention_mask [batch_size, total_sequence_length],
position_ids [batch_size, sequence_length] (int64), past_key_values.N.key/value
[batch_size, 2, past_sequence_length, 16] in; logits [batch_size, sequence_length, 128] and
present.N.key/value [batch_size, 2, total_sequence_length, 16] (past and new keys concatenated on
dim 2) out. Per layer: RMSNorm, q/k/v projections (4 query heads, 2 KV heads, head dim 16),
rotary embeddings computed from position_ids (inv_freq @ position_ids, cos/sin, rotate_half),
grouped-query attention by repeat_kv (expand + reshape of the KV heads), a causal mask built from
the shapes (torch.full / masked_fill / cat with zeros [seq, past], as HF's _make_causal_mask)
plus the expanded attention mask, softmax, o_proj, a SiLU-gated MLP; a final RMSNorm and lm_head.
Vocab 128, hidden 64, 2 layers, MLP 128. Traced with past > 0 and every length taken from a
tensor's .shape, so the graph stays symbolic and runs with an empty cache (past 0) as well.
Needs python3 with torch and onnx; --verify also needs scripts/ort (onnxruntime for node).
  /usr/bin/python3 scripts/make_llama_decoder.py dev_models/extra/llama_decoder.onnx [--verify]
--verify runs the exported model with onnxruntime (scripts/ort/run_npy.js) at past 0 and past > 0
(batch 1 and 2) and compares every output with torch's."""
import math
import os
import sys

import torch
import torch.nn as nn

from ort_run import check_against_ort

VOCAB, HIDDEN, HEADS, KV_HEADS, HEAD, LAYERS, FF = 128, 64, 4, 2, 16, 2, 128
THETA, EPS = 10000.0, 1e-6


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + EPS))


class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        inv = 1.0 / (THETA ** (torch.arange(0, HEAD, 2, dtype=torch.float32) / HEAD))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, position_ids):
        # [B, HEAD/2, 1] @ [B, 1, S] -> [B, HEAD/2, S] -> [B, S, HEAD/2]
        inv = self.inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
        freqs = (inv @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(h, n_rep):
    batch, kv_heads, slen, head = h.shape
    h = h[:, :, None, :, :].expand(batch, kv_heads, n_rep, slen, head)
    return h.reshape(batch, kv_heads * n_rep, slen, head)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD, bias=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD, bias=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD, HIDDEN, bias=False)

    def forward(self, x, cos, sin, mask, past_k, past_v):
        bsz, q_len, _ = x.shape
        q = self.q_proj(x).view(bsz, q_len, HEADS, HEAD).transpose(1, 2)
        k = self.k_proj(x).view(bsz, q_len, KV_HEADS, HEAD).transpose(1, 2)
        v = self.v_proj(x).view(bsz, q_len, KV_HEADS, HEAD).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        present = (k, v)
        k, v = repeat_kv(k, HEADS // KV_HEADS), repeat_kv(v, HEADS // KV_HEADS)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(HEAD) + mask
        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32)
        a = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(bsz, q_len, HEADS * HEAD)
        return self.o_proj(a), present


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, FF, bias=False)
        self.up_proj = nn.Linear(HIDDEN, FF, bias=False)
        self.down_proj = nn.Linear(FF, HIDDEN, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm, self.self_attn = RMSNorm(HIDDEN), Attention()
        self.post_attention_layernorm, self.mlp = RMSNorm(HIDDEN), MLP()

    def forward(self, x, cos, sin, mask, past_k, past_v):
        a, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, past_k, past_v)
        x = x + a
        return x + self.mlp(self.post_attention_layernorm(x)), present


def causal_mask(input_ids, past_len, dtype):
    """HF's _make_causal_mask: [B, 1, S, past + S], 0 where a query may look, min elsewhere. The
    zeros [S, past] are concatenated always (HF skips them at past 0; here they are empty)."""
    bsz, tgt_len = input_ids.shape
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min)
    cond = torch.arange(mask.size(-1))
    mask = mask.masked_fill(cond < (cond + 1).view(mask.size(-1), 1), 0).to(dtype)
    mask = torch.cat([torch.zeros(tgt_len, past_len, dtype=dtype), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_len)


def expand_mask(mask, dtype, tgt_len):
    """HF's _expand_mask: [B, T] of 1/0 -> [B, 1, S, T] of 0/min."""
    bsz, src_len = mask.size()
    expanded = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted = 1.0 - expanded
    return inverted.masked_fill(inverted.to(torch.bool), torch.finfo(dtype).min)


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.rotary_emb = Rotary()
        self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        x = self.embed_tokens(input_ids)
        past_len = past[0].shape[2]
        mask = causal_mask(input_ids, past_len, x.dtype) + expand_mask(attention_mask, x.dtype, input_ids.shape[1])
        cos, sin = self.rotary_emb(position_ids)
        presents = []
        for i, layer in enumerate(self.layers):
            x, present = layer(x, cos, sin, mask, past[2 * i], past[2 * i + 1])
            presents.extend(present)
        return (self.lm_head(self.norm(x)), *presents)


def names():
    ins = ["input_ids", "attention_mask", "position_ids"]
    outs = ["logits"]
    for i in range(LAYERS):
        ins += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outs += [f"present.{i}.key", f"present.{i}.value"]
    return ins, outs


def sample(gen, batch, seq, past):
    ids = torch.randint(0, VOCAB, (batch, seq), generator=gen)
    mask = torch.ones(batch, past + seq, dtype=torch.long)
    pos = torch.arange(past, past + seq).unsqueeze(0).expand(batch, seq).contiguous()
    kv = [torch.randn(batch, KV_HEADS, past, HEAD, generator=gen) for _ in range(2 * LAYERS)]
    return (ids, mask, pos, *kv)


def export(path):
    torch.manual_seed(0)
    model = Llama().eval()
    ins, outs = names()
    dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"},
           "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
           "position_ids": {0: "batch_size", 1: "sequence_length"},
           "logits": {0: "batch_size", 1: "sequence_length"}}
    for n in ins[3:]:
        dyn[n] = {0: "batch_size", 2: "past_sequence_length"}
    for n in outs[1:]:
        dyn[n] = {0: "batch_size", 2: "total_sequence_length"}
    # Traced with past 4 > 0 (and batch 2, seq 3): no length is 0 or 1, so none is baked in.
    args = sample(torch.Generator().manual_seed(1), 2, 3, 4)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=ins, output_names=outs, dynamic_axes=dyn,
                          opset_version=17, do_constant_folding=True)
    return model


def verify(model, path, cases):
    """Runs PATH with onnxruntime (scripts/ort/run_npy.js) at each (batch, seq, past) and compares
    every output with torch's; raises on a mismatch or an onnxruntime failure."""
    ins, outs = names()
    gen = torch.Generator().manual_seed(2)
    for batch, seq, past in cases:
        args = sample(gen, batch, seq, past)
        with torch.no_grad():
            want = model(*args)
        what = f"batch {batch} seq {seq} past {past}"
        worst = check_against_ort(path, ins, outs, args, want, what)
        print(f"verified batch {batch} seq {seq} past {past}: logits {list(want[0].shape)}, "
              f"present.0.key {list(want[1].shape)}, max |ort - torch| {worst:.2e}")


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--verify"]
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    out = argv[0] if argv else "dev_models/extra/llama_decoder.onnx"
    m = export(out)
    print("wrote", out)
    if "--verify" in sys.argv:
        verify(m, out, [(1, 1, 0), (1, 5, 0), (2, 1, 6), (2, 4, 9)])
