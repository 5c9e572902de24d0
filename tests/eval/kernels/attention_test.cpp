// The f32 kernels of the attention family (src/eval/kernels/attention_f32.h: Attention of opsets
// 23 and 24, RotaryEmbedding, com.microsoft's GroupQueryAttention, MultiHeadAttention and
// Attention) against the same nodes on the same values in f64, which the f64 loops compute, on
// sizes the conformance cases do not reach: a decode step with query heads grouped on their
// key/value heads, long caches, an empty cache, no keys at all, masks leaving out whole rows,
// windows and sinks. Every output is compared.
#include "../run_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sf::eval {
namespace {

struct Feed {
  std::string name;
  Shape shape;
  enum Kind { Float, Bool, Int32, Int64 } kind = Float;
  std::vector<int64_t> ints = {}; // Bool, Int32, Int64: the elements
};

/// The graph `text` (its float type written `{T}`) run with float inputs of `type`, the same
/// values in both types (random f32 ones made f64).
std::vector<std::vector<double>> runAs(const std::string &text, ElementType type, const std::vector<Feed> &feeds) {
  const std::string t = type == ElementType::F32 ? "f32" : "f64";
  std::string g = text;
  for (size_t at; (at = g.find("{T}")) != std::string::npos;) g.replace(at, 3, t);
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 11;
  for (const Feed &f : feeds) {
    if (f.kind == Feed::Float) {
      Tensor r = *randomTensor(ElementType::F32, f.shape, seed++);
      inputs.emplace(f.name, *Tensor::fromDoubles(type, f.shape, *r.toDoubles(size_t(r.elementCount()))));
    } else {
      const ElementType it = f.kind == Feed::Bool ? ElementType::Bool : f.kind == Feed::Int32 ? ElementType::I32 : ElementType::I64;
      inputs.emplace(f.name, *Tensor::fromInt64s(f.shape, f.ints, it));
    }
  }
  Ran r = runText(g.c_str(), inputs);
  EXPECT_TRUE(r.result.ok()) << (r.result.ok() ? "" : r.result.error().message) << "\n" << g;
  std::vector<std::vector<double>> out;
  if (!r.result.ok()) return out;
  for (const Value &v : r.result->outputs) out.push_back(values(v));
  return out;
}

/// Every output of the f32 run within 1e-5 (relative to 1 + |f64|) of the f64 run's; `nonZero`:
/// the outputs must not all be zero (the comparison would say nothing).
void expectF32AsF64(const std::string &text, const std::vector<Feed> &feeds, bool nonZero = true) {
  auto single = runAs(text, ElementType::F32, feeds), twice = runAs(text, ElementType::F64, feeds);
  ASSERT_EQ(single.size(), twice.size());
  ASSERT_FALSE(single.empty());
  double largest = 0;
  for (size_t o = 0; o < single.size(); ++o) {
    ASSERT_EQ(single[o].size(), twice[o].size()) << "output " << o;
    for (size_t i = 0; i < single[o].size(); ++i) {
      EXPECT_NEAR(single[o][i], twice[o][i], 1e-5 * (1 + std::abs(twice[o][i]))) << "output " << o << " element " << i;
      largest = std::max(largest, std::abs(twice[o][i]));
    }
  }
  if (nonZero) {
    EXPECT_GT(largest, 0.05) << "the outputs are trivial";
  }
}

TEST(AttentionKernels, DecodeStepWithGroupedHeadsAndALongCacheInF32AsInF64) {
  // One token, six query heads on two key/value heads, a cache of 200, value heads of another
  // size, an additive mask and the causal rule.
  expectF32AsF64("opset 24\ngraph main(q: {T}[2,6,1,16], k: {T}[2,2,1,16], v: {T}[2,2,1,8], m: {T}[2,1,1,201], "
                 "pk: {T}[2,2,200,16], pv: {T}[2,2,200,8]) {\n"
                 "  y, kk, vv = Attention(q, k, v, m, pk, pv) {is_causal = 1}\n  return y, kk, vv\n}\n",
                 {{"q", {2, 6, 1, 16}}, {"k", {2, 2, 1, 16}}, {"v", {2, 2, 1, 8}}, {"m", {2, 1, 1, 201}},
                  {"pk", {2, 2, 200, 16}}, {"pv", {2, 2, 200, 8}}});
}

TEST(AttentionKernels, PromptWithAnEmptyCacheABooleanMaskAndASoftcapInF32AsInF64) {
  // Five tokens after an empty cache; the boolean mask leaves out every key of one row (that row
  // averages the values, as onnxruntime computes it) and some keys of the others.
  std::vector<int64_t> mask(2 * 5 * 5);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i / 5 == 3) ? 0 : int64_t((i * 7) % 3 != 0);
  expectF32AsF64("opset 23\ngraph main(q: {T}[2,4,5,8], k: {T}[2,4,5,8], v: {T}[2,4,5,8], m: bool[2,1,5,5], "
                 "pk: {T}[2,4,0,8], pv: {T}[2,4,0,8]) {\n"
                 "  y, kk, vv = Attention(q, k, v, m, pk, pv) {softcap = 3.0, scale = 0.9}\n  return y, kk, vv\n}\n",
                 {{"q", {2, 4, 5, 8}}, {"k", {2, 4, 5, 8}}, {"v", {2, 4, 5, 8}}, {"m", {2, 1, 5, 5}, Feed::Bool, mask},
                  {"pk", {2, 4, 0, 8}}, {"pv", {2, 4, 0, 8}}});
}

TEST(AttentionKernels, ThreeDimensionalInputsAShortMaskAndPaddingInF32AsInF64) {
  // 3-D inputs (heads from the attributes), a mask over the first 4 of 6 keys, and
  // nonpad_kv_seqlen cutting the second batch row's keys to 2; only Y asked for.
  expectF32AsF64("opset 24\ngraph main(q: {T}[2,3,32], k: {T}[2,6,16], v: {T}[2,6,16], m: {T}[3,4], n: i64[2]) {\n"
                 "  y = Attention(q, k, v, m, , , n) {q_num_heads = 4, kv_num_heads = 2}\n  return y\n}\n",
                 {{"q", {2, 3, 32}}, {"k", {2, 6, 16}}, {"v", {2, 6, 16}}, {"m", {3, 4}},
                  {"n", {2}, Feed::Int64, {6, 2}}});
}

TEST(AttentionKernels, CausalPromptsInChunksOfRowsInF32AsInF64) {
  // 100 queries after a cache of 30 under the causal rule alone: the f32 kernel takes the rows
  // in chunks of 64 and computes, per chunk, only the keys its last row reads.
  expectF32AsF64("opset 23\ngraph main(q: {T}[1,4,100,16], k: {T}[1,2,100,16], v: {T}[1,2,100,16], "
                 "pk: {T}[1,2,30,16], pv: {T}[1,2,30,16]) {\n"
                 "  y, kk, vv = Attention(q, k, v, , pk, pv) {is_causal = 1}\n  return y, kk, vv\n}\n",
                 {{"q", {1, 4, 100, 16}}, {"k", {1, 2, 100, 16}}, {"v", {1, 2, 100, 16}}, {"pk", {1, 2, 30, 16}},
                  {"pv", {1, 2, 30, 16}}});
  // GroupQueryAttention: a prompt of 70 after a cache of 20 (causal by default), and a first
  // prompt of 80 tokens of which the second row's last 30 are padding.
  expectF32AsF64("graph main(q: {T}[1,70,64], k: {T}[1,70,32], v: {T}[1,70,32], pk: {T}[1,2,20,16], "
                 "pv: {T}[1,2,20,16], sl: i32[1], tl: i32[]) {\n"
                 "  y, kk, vv = com.microsoft.GroupQueryAttention(q, k, v, pk, pv, sl, tl) {num_heads = 4, "
                 "kv_num_heads = 2}\n  return y, kk, vv\n}\n",
                 {{"q", {1, 70, 64}}, {"k", {1, 70, 32}}, {"v", {1, 70, 32}}, {"pk", {1, 2, 20, 16}},
                  {"pv", {1, 2, 20, 16}}, {"sl", {1}, Feed::Int32, {89}}, {"tl", {}, Feed::Int32, {90}}});
  expectF32AsF64("graph main(q: {T}[2,80,64], k: {T}[2,80,32], v: {T}[2,80,32], sl: i32[2], tl: i32[]) {\n"
                 "  y, kk, vv = com.microsoft.GroupQueryAttention(q, k, v, , , sl, tl) {num_heads = 4, "
                 "kv_num_heads = 2}\n  return y, kk, vv\n}\n",
                 {{"q", {2, 80, 64}}, {"k", {2, 80, 32}}, {"v", {2, 80, 32}}, {"sl", {2}, Feed::Int32, {79, 49}},
                  {"tl", {}, Feed::Int32, {80}}});
}

TEST(AttentionKernels, NoKeysAtAllGiveZerosInF32AsInF64) {
  expectF32AsF64("opset 23\ngraph main(q: {T}[1,2,3,8], k: {T}[1,2,0,8], v: {T}[1,2,0,8]) {\n"
                 "  y = Attention(q, k, v)\n  return y\n}\n",
                 {{"q", {1, 2, 3, 8}}, {"k", {1, 2, 0, 8}}, {"v", {1, 2, 0, 8}}}, false);
}

TEST(AttentionKernels, RotaryEmbeddingInF32AsInF64) {
  expectF32AsF64("opset 23\ngraph main(x: {T}[2,3,4,16], c: {T}[12,6], s: {T}[12,6], p: i64[2,4]) {\n"
                 "  y = RotaryEmbedding(x, c, s, p) {rotary_embedding_dim = 12, interleaved = 1}\n  return y\n}\n",
                 {{"x", {2, 3, 4, 16}}, {"c", {12, 6}}, {"s", {12, 6}}, {"p", {2, 4}, Feed::Int64, {0, 3, 7, 11, 2, 2, 9, 5}}});
}

TEST(AttentionKernels, GroupQueryAttentionDecodeOfARaggedBatchInF32AsInF64) {
  // Eight query heads on two key/value heads, one token for rows whose caches hold 40 and 17
  // positions of a present of 64, rotated, within a window of 16, soft-capped, with a sink per
  // head and an attention bias per batch row.
  expectF32AsF64(
      "graph main(q: {T}[2,1,128], k: {T}[2,1,32], v: {T}[2,1,32], pk: {T}[2,2,64,16], pv: {T}[2,2,64,16], "
      "sl: i32[2], tl: i32[], c: {T}[64,8], s: {T}[64,8], b: {T}[2,1,1,64], h: {T}[8]) {\n"
      "  y, kk, vv = com.microsoft.GroupQueryAttention(q, k, v, pk, pv, sl, tl, c, s, , b, h) {num_heads = 8, "
      "kv_num_heads = 2, do_rotary = 1, local_window_size = 16, softcap = 4.0}\n  return y, kk, vv\n}\n",
      {{"q", {2, 1, 128}},
       {"k", {2, 1, 32}},
       {"v", {2, 1, 32}},
       {"pk", {2, 2, 64, 16}},
       {"pv", {2, 2, 64, 16}},
       {"sl", {2}, Feed::Int32, {40, 17}},
       {"tl", {}, Feed::Int32, {64}},
       {"c", {64, 8}},
       {"s", {64, 8}},
       {"b", {2, 1, 1, 64}},
       {"h", {8}}});
}

TEST(AttentionKernels, GroupQueryAttentionPackedPromptInF32AsInF64) {
  // A first prompt of 6 tokens, Q, K and V packed in one input, right-padded rows.
  expectF32AsF64("graph main(q: {T}[2,6,64], sl: i32[2], tl: i32[]) {\n"
                 "  y, kk, vv = com.microsoft.GroupQueryAttention(q, , , , , sl, tl) {num_heads = 2, kv_num_heads = 1, "
                 "smooth_softmax = 1}\n  return y, kk, vv\n}\n",
                 {{"q", {2, 6, 64}}, {"sl", {2}, Feed::Int32, {5, 2}}, {"tl", {}, Feed::Int32, {6}}});
}

TEST(AttentionKernels, MultiHeadAttentionDecodeWithAPastAMaskAndABiasInF32AsInF64) {
  // com.microsoft.MultiHeadAttention: one token against a past of 30, the projections' bias,
  // a key padding mask per key (the second row's last 10 keys left out), an attention bias.
  std::vector<int64_t> mask(2 * 31, 1);
  for (size_t i = 31 + 21; i < mask.size(); ++i) mask[i] = 0;
  expectF32AsF64("graph main(q: {T}[2,1,32], k: {T}[2,1,32], v: {T}[2,1,32], b: {T}[96], m: i32[2,31], a: {T}[1,4,1,31], "
                 "pk: {T}[2,4,30,8], pv: {T}[2,4,30,8]) {\n"
                 "  y, kk, vv = com.microsoft.MultiHeadAttention(q, k, v, b, m, a, pk, pv) {num_heads = 4}\n"
                 "  return y, kk, vv\n}\n",
                 {{"q", {2, 1, 32}}, {"k", {2, 1, 32}}, {"v", {2, 1, 32}}, {"b", {96}}, {"m", {2, 31}, Feed::Int32, mask},
                  {"a", {1, 4, 1, 31}}, {"pk", {2, 4, 30, 8}}, {"pv", {2, 4, 30, 8}}});
}

TEST(AttentionKernels, ContribAttentionWithAPastAndKeyLengthsInF32AsInF64) {
  // com.microsoft.Attention: the projection of a 48-wide input (one product in f32), a past of
  // 5, keys cut per batch row by mask_index lengths, unidirectional.
  expectF32AsF64("graph main(x: {T}[2,3,48], w: {T}[48,96], b: {T}[96], m: i32[2], p: {T}[2,2,4,5,8]) {\n"
                 "  y, present = com.microsoft.Attention(x, w, b, m, p) {num_heads = 4, unidirectional = 1}\n"
                 "  return y, present\n}\n",
                 {{"x", {2, 3, 48}}, {"w", {48, 96}}, {"b", {96}}, {"m", {2}, Feed::Int32, {8, 6}}, {"p", {2, 2, 4, 5, 8}}});
}

} // namespace
} // namespace sf::eval
