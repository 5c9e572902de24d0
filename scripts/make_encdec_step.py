#!/usr/bin/env python3
"""One decoder step of a small encoder-decoder (Whisper-style decoder) with a self-attention KV
cache, written in torch (random weights, seeded) and exported by torch.onnx.export (opset 17):
input_ids [batch_size, sequence_length] (int64), encoder_hidden_states
[batch_size, encoder_sequence_length, 64] (float32), past_key_values.N.decoder.key/value
[batch_size, 4, past_sequence_length, 16] in; logits [batch_size, sequence_length, 96] and
present.N.decoder.key/value [batch_size, 4, total_sequence_length, 16] (past and new keys
concatenated on dim 2, total = past + seq) out. The cross-attention keys and values are computed
inside the graph from encoder_hidden_states (k/v projections of the encoder states at every
step; they are neither inputs nor outputs). Per layer (pre-LayerNorm, 2 layers, 4 heads of 16):
causal self-attention over cache + new tokens (the mask built from the shapes: key j is seen by
query i when j <= past + i), cross-attention without a mask, a GELU MLP (256). Token embedding
plus learned positions sliced [past : past + seq] (as Whisper's decoder), a final LayerNorm, and
logits by the tied token embedding (vocab 96). Traced with past > 0 and every length taken from
a tensor's .shape, so the graph stays symbolic and runs with an empty cache (past 0) as well.
Needs python3 with torch and onnx; --verify also needs scripts/ort (onnxruntime for node).
  /usr/bin/python3 scripts/make_encdec_step.py dev_models/extra/encdec_step.onnx [--verify]
--verify runs the exported model with onnxruntime (scripts/ort/run_npy.js) at past 0 and past > 0
(batch 1 and 2) and compares every output with torch's."""
import math
import os
import sys

import torch
import torch.nn as nn

from ort_run import check_against_ort

VOCAB, HIDDEN, HEADS, HEAD, LAYERS, FF, MAX_POS = 96, 64, 4, 16, 2, 256, 448


def split_heads(t):
    bsz, length, _ = t.shape
    return t.view(bsz, length, HEADS, HEAD).transpose(1, 2)


def attend(q, k, v, mask=None):
    w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HEAD)
    if mask is not None:
        w = w + mask
    a = torch.matmul(w.softmax(-1), v).transpose(1, 2)
    return a.reshape(a.shape[0], a.shape[1], HEADS * HEAD)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn_layer_norm = nn.LayerNorm(HIDDEN)
        self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN, bias=b) for b in (True, False, True, True))
        self.encoder_attn_layer_norm = nn.LayerNorm(HIDDEN)
        self.cq, self.ck, self.cv, self.co = (nn.Linear(HIDDEN, HIDDEN, bias=b) for b in (True, False, True, True))
        self.final_layer_norm = nn.LayerNorm(HIDDEN)
        self.fc1, self.fc2 = nn.Linear(HIDDEN, FF), nn.Linear(FF, HIDDEN)

    def forward(self, x, enc, mask, past_k, past_v):
        h = self.self_attn_layer_norm(x)
        k = torch.cat([past_k, split_heads(self.k(h))], dim=2)
        v = torch.cat([past_v, split_heads(self.v(h))], dim=2)
        x = x + self.o(attend(split_heads(self.q(h)), k, v, mask))
        h = self.encoder_attn_layer_norm(x)
        x = x + self.co(attend(split_heads(self.cq(h)), split_heads(self.ck(enc)), split_heads(self.cv(enc))))
        x = x + self.fc2(nn.functional.gelu(self.fc1(self.final_layer_norm(x))))
        return x, (k, v)


class DecoderStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.embed_positions = nn.Parameter(0.02 * torch.randn(MAX_POS, HIDDEN))
        self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
        self.layer_norm = nn.LayerNorm(HIDDEN)

    def forward(self, input_ids, encoder_hidden_states, *past):
        seq = input_ids.shape[1]
        past_len = past[0].shape[2]
        x = self.embed_tokens(input_ids) + self.embed_positions[past_len:past_len + seq]
        # [seq, past + seq]: 0 where key j <= past + query i, -inf above that diagonal.
        q_pos = torch.arange(seq).unsqueeze(1) + past_len
        k_pos = torch.arange(past_len + seq).unsqueeze(0)
        mask = torch.zeros(seq, past_len + seq).masked_fill(k_pos > q_pos, float("-inf"))[None, None]
        presents = []
        for i, layer in enumerate(self.layers):
            x, present = layer(x, encoder_hidden_states, mask, past[2 * i], past[2 * i + 1])
            presents.extend(present)
        return (torch.matmul(self.layer_norm(x), self.embed_tokens.weight.t()), *presents)


def names():
    ins, outs = ["input_ids", "encoder_hidden_states"], ["logits"]
    for i in range(LAYERS):
        ins += [f"past_key_values.{i}.decoder.key", f"past_key_values.{i}.decoder.value"]
        outs += [f"present.{i}.decoder.key", f"present.{i}.decoder.value"]
    return ins, outs


def sample(gen, batch, seq, enc_len, past):
    ids = torch.randint(0, VOCAB, (batch, seq), generator=gen)
    enc = torch.randn(batch, enc_len, HIDDEN, generator=gen)
    kv = [torch.randn(batch, HEADS, past, HEAD, generator=gen) for _ in range(2 * LAYERS)]
    return (ids, enc, *kv)


def export(path):
    torch.manual_seed(0)
    model = DecoderStep().eval()
    ins, outs = names()
    dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"},
           "encoder_hidden_states": {0: "batch_size", 1: "encoder_sequence_length"},
           "logits": {0: "batch_size", 1: "sequence_length"}}
    for n in ins[2:]:
        dyn[n] = {0: "batch_size", 2: "past_sequence_length"}
    for n in outs[1:]:
        dyn[n] = {0: "batch_size", 2: "total_sequence_length"}
    # Traced with batch 2, seq 3, encoder length 7, past 4: no length is 0 or 1, so none is baked in.
    args = sample(torch.Generator().manual_seed(1), 2, 3, 7, 4)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=ins, output_names=outs, dynamic_axes=dyn,
                          opset_version=17, do_constant_folding=True)
    return model


def verify(model, path, cases):
    """Runs PATH with onnxruntime (scripts/ort/run_npy.js) at each (batch, seq, enc_len, past) and
    compares every output with torch's; raises on a mismatch or an onnxruntime failure."""
    ins, outs = names()
    gen = torch.Generator().manual_seed(2)
    for batch, seq, enc_len, past in cases:
        args = sample(gen, batch, seq, enc_len, past)
        with torch.no_grad():
            want = model(*args)
        what = f"batch {batch} seq {seq} enc {enc_len} past {past}"
        worst = check_against_ort(path, ins, outs, args, want, what)
        print(f"verified {what}: logits {list(want[0].shape)}, "
              f"present.0.decoder.key {list(want[1].shape)}, max |ort - torch| {worst:.2e}")


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--verify"]
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    out = argv[0] if argv else "dev_models/extra/encdec_step.onnx"
    m = export(out)
    print("wrote", out)
    if "--verify" in sys.argv:
        verify(m, out, [(1, 1, 10, 0), (1, 4, 12, 0), (2, 1, 15, 5), (2, 3, 9, 11)])
