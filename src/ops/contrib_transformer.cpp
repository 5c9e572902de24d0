// onnxruntime's com.microsoft transformer ops beside the attention ops of contrib.cpp: mixtures of
// experts (MoE, QMoE: the genai builder's Mixtral and Phi-MoE layers), the packed (padding-free)
// BERT attentions, the older DecoderAttention, and T5's and WavLM's position biases. Shapes from
// onnxruntime's docs/ContribOperators.md and its schemas' inference (bert_defs.cc,
// contrib_defs.cc), with the sizes the schemas leave unknown taken from the inputs where they
// fix them (the position bias's lengths from their values).
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include "shared_rules.h"

namespace sf {
namespace {

const char *const kMs = "com.microsoft";

/// The experts' weights agree with the router and the input: each weight and bias tensor has a
/// first dim per expert; MoE's fc1 holds inter (twice that for SwiGLU with fused rows) rows of
/// `hidden` and fc2 `hidden` rows of inter, in either order of the last two dims (onnxruntime
/// reads the buffers by their sizes and takes both layouts), checked where the sizes are known.
Result<void> checkExperts(InferContext &ctx, const Dimension &experts, const Dimension &hidden, bool quantized) {
  // fc1 and fc2's weights: inputs 2 and 4 (MoE), 2 and 5 (QMoE, each followed by its scales).
  const size_t weights[] = {2, size_t(quantized ? 5 : 4)}, biases[] = {3, 5};
  for (size_t i : weights) {
    const Fact &w = ctx.input(i);
    if (!w.shape.rankIsStatic()) continue;
    if (w.shape.size() != 3) return errorf("input {} (fc{}_experts_weights) {} must be [experts, rows, columns]", i, i == 2 ? 1 : 2, w);
    if (!ctx.mergeDims(w.shape[0], experts).ok())
      return errorf("input {} {} has {} experts, router_probs has {}", i, w, w.shape[0], experts);
  }
  for (size_t i : biases) {
    if (quantized || !ctx.hasInput(i) || !ctx.input(i).shape.rankIsStatic()) continue;
    const Fact &b = ctx.input(i);
    if (b.shape.size() != 2 || !ctx.mergeDims(b.shape[0], experts).ok())
      return errorf("input {} (bias) {} must be [{} experts, rows]", i, b, experts);
  }
  if (quantized) return success();
  const Fact &fc1 = ctx.input(2), &fc2 = ctx.input(4);
  auto size = [](const Fact &w) -> std::optional<int64_t> {
    if (!w.shape.rankIsStatic() || w.shape.size() != 3 || !w.shape[1].isStatic() || !w.shape[2].isStatic()) return std::nullopt;
    return w.shape[1].length() * w.shape[2].length();
  };
  auto s1 = size(fc1), s2 = size(fc2);
  if (!s1 || !s2 || !hidden.isStatic() || hidden.length() <= 0) return success();
  const int64_t h = hidden.length();
  if (*s2 % h != 0) return errorf("fc2_experts_weights {} does not hold rows of the hidden size {}", fc2, h);
  SF_ASSIGN(std::string act, ctx.attrs().getString("activation_type", "relu"));
  SF_ASSIGN(int64_t fusion, ctx.attrs().getInt("swiglu_fusion", 0));
  const int64_t inter = *s2 / h, rows = act == "swiglu" && fusion != 0 ? 2 * inter : inter;
  if (*s1 != rows * h)
    return errorf("fc1_experts_weights {} must hold {} rows of {} for fc2_experts_weights {} ({} activation)", fc1, rows, h,
                  fc2, act);
  return success();
}

/// MoE and QMoE: input [tokens, hidden] or [B, S, hidden], router_probs [tokens, experts]; the
/// output is the input's shape. `k` experts per token, at most `experts`.
InferFn inferMoe(bool quantized) {
  return [quantized](InferContext &ctx) -> Result<Facts> {
  const Fact &x = ctx.input(0), &router = ctx.input(1);
  SF_TRY(requireFloat(x));
  SF_ASSIGN(int64_t k, ctx.attrs().getInt("k", 1));
  if (k <= 0) return errorf("k must be positive, got {}", k);
  if (x.shape.rankIsStatic() && x.shape.size() != 2 && x.shape.size() != 3)
    return errorf("input 0 {} must be [tokens, hidden] or [B, S, hidden]", x);
  if (x.shape.rankIsStatic() && router.shape.rankIsStatic()) {
    if (router.shape.size() != 2) return errorf("input 1 (router_probs) {} must be [tokens, experts]", router);
    std::vector<Dimension> lead(x.shape.dims().begin(), x.shape.dims().end() - 1);
    SF_ASSIGN(Dimension tokens, productOf(lead));
    if (!ctx.mergeDims(router.shape[0], tokens).ok())
      return errorf("input 1 (router_probs) {} must have a row per token of {} ({})", router, x, tokens);
    const Dimension &experts = router.shape[1];
    if (experts.isStatic() && experts.length() < k)
      return errorf("k {} is more than the {} experts of router_probs {}", k, experts, router);
    SF_TRY(checkExperts(ctx, experts, x.shape[x.shape.size() - 1], quantized));
  }
  return factsOf(makeFact(x.type, x.shape));
  };
}

/// Per token, k experts' two or three products (hidden x inter each way) and the activation.
Result<OpCost> costMoe(const CostContext &ctx) {
  OpCost c;
  const Fact &x = ctx.input(0), &fc1 = ctx.input(2);
  const int64_t k = std::max<int64_t>(ctx.attrs().getInt("k", 1).valueOr(1), 1);
  if (!x.shape.rankIsStatic() || x.shape.size() < 2 || !fc1.shape.rankIsStatic() || fc1.shape.size() != 3) {
    SF_TRY(c.addMacs(Dimension::dynamic()));
    return c;
  }
  // fc1 [experts, inter (x2 fused), hidden or packed hidden]: its rows times the input's hidden.
  const Dimension &hidden = x.shape[x.shape.size() - 1];
  SF_ASSIGN(Dimension perExpert, times(fc1.shape[1], hidden));
  SF_ASSIGN(Dimension down, times(hidden, fc1.shape[1]));
  SF_ASSIGN(perExpert, perExpert + down);
  std::vector<Dimension> lead(x.shape.dims().begin(), x.shape.dims().end() - 1);
  SF_ASSIGN(Dimension tokens, productOf(lead));
  SF_ASSIGN(Dimension perToken, times(perExpert, Dimension(k)));
  SF_ASSIGN(Dimension macs, times(tokens, perToken));
  SF_TRY(c.addMacs(macs));
  return c;
}

/// PackedAttention: input [tokens, in_hidden] projected by weights [in_hidden, q + k + v] (and
/// the bias [q + k + v]); output [tokens, v] with v qkv_hidden_sizes[2], else a third of the bias.
Result<Facts> inferPackedAttention(InferContext &ctx) {
  const Fact &x = ctx.input(0), &w = ctx.input(1), &bias = ctx.input(2);
  SF_ASSIGN(std::vector<int64_t> sizes, ctx.attrs().getInts("qkv_hidden_sizes", {}));
  if (!sizes.empty() && sizes.size() != 3) return errorf("qkv_hidden_sizes must hold 3 sizes, got {}", sizes.size());
  Dimension v = Dimension::dynamic();
  if (!sizes.empty()) {
    v = Dimension(sizes[2]);
  } else if (bias.shape.rankIsStatic() && bias.shape.size() == 1) {
    SF_ASSIGN(v, splitInto(bias.shape[0], 3, "the bias's size"));
  } else if (w.shape.rankIsStatic() && w.shape.size() == 2) {
    SF_ASSIGN(v, splitInto(w.shape[1], 3, "the weights' columns"));
  }
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, PartialShape({Dimension::dynamic(), v})));
  if (x.shape.size() != 2) return errorf("input 0 {} must be [tokens, hidden]", x);
  if (w.shape.rankIsStatic() && (w.shape.size() != 2 || !ctx.mergeDims(w.shape[0], x.shape[1]).ok()))
    return errorf("input 1 (weights) {} must be [{}, q + k + v]", w, x.shape[1]);
  return factsOf(makeFact(x.type, PartialShape({x.shape[0], v})));
}

/// PackedMultiHeadAttention: query [tokens, hidden] (with key and value [tokens, hidden] and
/// [tokens, v]) or packed [tokens, heads, 3, head]; output [tokens, v].
Result<Facts> inferPackedMha(InferContext &ctx) {
  const Fact &q = ctx.input(0);
  if (!q.shape.rankIsStatic()) return factsOf(makeFact(q.type, PartialShape::dynamic(2)));
  if (q.shape.size() == 4) {
    SF_ASSIGN(Dimension v, q.shape[1] * q.shape[3]);
    return factsOf(makeFact(q.type, PartialShape({q.shape[0], v})));
  }
  if (q.shape.size() != 2) return errorf("query {} must be [tokens, hidden] or [tokens, heads, 3, head]", q);
  Dimension v = Dimension::dynamic();
  if (ctx.hasInput(2) && ctx.input(2).shape.rankIsStatic()) {
    const PartialShape &vs = ctx.input(2).shape;
    if (vs.size() != 2 || !ctx.mergeDims(vs[0], q.shape[0]).ok())
      return errorf("value {} must be [{}, v_hidden]", ctx.input(2), q.shape[0]);
    v = vs[1];
  }
  return factsOf(makeFact(q.type, PartialShape({q.shape[0], v})));
}

/// DecoderAttention: query [S, B, hidden] (sequence first); output the query's shape; the new
/// caches the old ones' shapes with their positions unknown.
Result<Facts> inferDecoderAttention(InferContext &ctx) {
  const Fact &q = ctx.input(0);
  Facts out{makeFact(q.type, q.shape)};
  for (size_t i = 1; i < ctx.numOutputs(); ++i) {
    const Fact &cache = ctx.input(i == 1 ? 6 : 7);
    if (cache.shape.rankIsStatic() && cache.shape.size() == 4) {
      std::vector<Dimension> d = cache.shape.dims();
      d[2] = Dimension::dynamic();
      out.push_back(makeFact(q.type, PartialShape(std::move(d))));
    } else {
      out.push_back(makeFact(q.type, PartialShape::dynamic(4)));
    }
  }
  return out;
}

/// RelativePositionBias: bias_table [buckets, heads], query_length and key_length (int64
/// scalars); output [1, heads, query_length, key_length].
Result<Facts> inferRelativePositionBias(InferContext &ctx) {
  const Fact &table = ctx.input(0);
  SF_ASSIGN(int64_t maxDistance, ctx.attrs().getInt("max_distance"));
  if (maxDistance <= 0) return errorf("max_distance must be positive, got {}", maxDistance);
  Dimension heads = Dimension::dynamic();
  if (table.shape.rankIsStatic()) {
    if (table.shape.size() != 2) return errorf("input 0 (bias_table) {} must be [buckets, heads]", table);
    heads = table.shape[1];
  }
  auto length = [&](size_t i) -> Result<Dimension> {
    SF_TRY(expectOneElement(ctx, ctx.input(i), i == 1 ? "input 1 (query_length)" : "input 2 (key_length)", OneValue{0, 1}));
    auto d = scalarDim(ctx.input(i));
    return d ? ctx.symbols().resolve(*d).nonNegative() : Dimension::dynamic();
  };
  SF_ASSIGN(Dimension queries, length(1));
  SF_ASSIGN(Dimension keys, length(2));
  return factsOf(makeFact(table.type, PartialShape({Dimension(1), heads, queries, keys})));
}

/// GatedRelativePositionBias: query_layer [B, S, heads * head] (or [tokens, heads * head] with
/// token_offset [B, S]); output [B, heads, S, S].
Result<Facts> inferGatedRelativePositionBias(InferContext &ctx) {
  const Fact &q = ctx.input(0);
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads"));
  if (heads <= 0) return errorf("num_heads must be positive, got {}", heads);
  Dimension batch = Dimension::dynamic(), seq = Dimension::dynamic();
  if (ctx.hasInput(6) && ctx.input(6).shape.rankIsStatic()) {
    const PartialShape &t = ctx.input(6).shape;
    if (t.size() != 2) return errorf("input 6 (token_offset) {} must be [B, S]", ctx.input(6));
    batch = t[0], seq = t[1];
  } else if (!ctx.hasInput(6) && q.shape.rankIsStatic()) {
    if (q.shape.size() != 3) return errorf("query_layer {} must be [B, S, hidden] without token_offset", q);
    batch = q.shape[0], seq = q.shape[1];
  }
  return factsOf(makeFact(q.type, PartialShape({batch, Dimension(heads), seq, seq})));
}

} // namespace

void registerContribTransformerOps(OpRegistry &r) {
  r.add({.name = "MoE", .domain = kMs, .infer = inferMoe(false), .cost = costMoe});
  // Its weights are packed (2 to 8 bits in uint8) and its biases and scales move with the
  // format: only their experts are checked.
  r.add({.name = "QMoE", .domain = kMs, .infer = inferMoe(true), .cost = costMoe});
  r.add({.name = "PackedAttention", .domain = kMs, .infer = inferPackedAttention});
  r.add({.name = "PackedMultiHeadAttention", .domain = kMs, .infer = inferPackedMha});
  r.add({.name = "DecoderAttention", .domain = kMs, .infer = inferDecoderAttention});
  r.add({.name = "RelativePositionBias", .domain = kMs, .infer = inferRelativePositionBias});
  r.add({.name = "GatedRelativePositionBias", .domain = kMs, .infer = inferGatedRelativePositionBias});
}

} // namespace sf
