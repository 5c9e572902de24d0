// onnxruntime's contrib ops (domain com.microsoft) that its transformer and quantization tools
// write into real models: fused activations and normalizations, fused MatMul/Conv, attention,
// quantized elementwise ops and 4-bit MatMul. Shapes follow onnxruntime's contrib operator
// documentation; an output whose shape that documentation leaves to the kernel (optional
// statistics, packed KV caches) stays unknown rather than guessed.
#include "shapeflow/ops/attention.h"
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shared_rules.h"

namespace sf {

Result<Dimension> splitInto(const Dimension &d, int64_t k, const std::string &what) {
  if (k <= 0) return errorf("{} cannot split into {} parts", what, k);
  if (d.isStatic() && d.length() % k != 0)
    return errorf("{} {} is not a multiple of {}", what, d, k);
  return d.floorDiv(k);
}

Result<void> requireFloat(const Fact &x, size_t i) {
  if (x.type != ElementType::Undefined && !isFloat(x.type)) return errorf("input {} must be a float tensor, got {}", i, x);
  return success();
}

namespace {

const char *const kMs = "com.microsoft";

/// Output 0 like input 0 (optionally broadcast with the inputs listed), the rest unknown.
InferFn inferLikeInput(std::vector<size_t> broadcastWith = {}) {
  return [broadcastWith](InferContext &ctx) -> Result<Facts> {
    const Fact &x = ctx.input(0);
    PartialShape s = x.shape;
    for (size_t i : broadcastWith) {
      if (!ctx.hasInput(i)) continue;
      SF_ASSIGN(s, ctx.broadcast(s, ctx.input(i).shape));
    }
    Facts out{makeFact(x.type, s)};
    for (size_t i = 1; i < ctx.numOutputs(); ++i) out.push_back(Fact{});
    return out;
  };
}

/// The last dim of `f` (merged with `expected` when given).
Result<void> checkLastDim(InferContext &ctx, const Fact &f, const Dimension &expected,
                          const std::string &what) {
  if (!f.shape.rankIsStatic() || f.shape.size() == 0) return success();
  const Dimension &d = f.shape[f.shape.size() - 1];
  if (!d.compatible(expected))
    return errorf("{} {} has last dim {}, expected {}", what, f, d, expected);
  SF_TRY(ctx.mergeDims(d, expected));
  return success();
}

PartialShape swapLastTwo(const PartialShape &s) {
  if (!s.rankIsStatic() || s.size() < 2) return s;
  std::vector<Dimension> d = s.dims();
  std::swap(d[d.size() - 1], d[d.size() - 2]);
  return PartialShape(std::move(d));
}

Result<Facts> inferFusedMatMul(InferContext &ctx) {
  const Fact &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(int64_t transA, ctx.attrs().getInt("transA", 0));
  SF_ASSIGN(int64_t transB, ctx.attrs().getInt("transB", 0));
  SF_ASSIGN(int64_t batchA, ctx.attrs().getInt("transBatchA", 0));
  SF_ASSIGN(int64_t batchB, ctx.attrs().getInt("transBatchB", 0));
  if (batchA || batchB) return factsOf(makeFact(a.type, PartialShape::dynamic()));
  Fact ta = transA ? makeFact(a.type, swapLastTwo(a.shape)) : a;
  Fact tb = transB ? makeFact(b.type, swapLastTwo(b.shape)) : b;
  SF_ASSIGN(PartialShape s, matmulShape(ctx, ta, tb, 0, 1));
  return factsOf(makeFact(a.type, s));
}

/// MatMulIntegerToFloat / DynamicQuantizeMatMul: MatMul's shape, float output (the type of the
/// scale at `scaleInput`).
InferFn inferQuantizedMatMul(size_t scaleInput) {
  return [scaleInput](InferContext &ctx) -> Result<Facts> {
    SF_ASSIGN(PartialShape s, matmulShape(ctx, ctx.input(0), ctx.input(1), 0, 1));
    ElementType t = ctx.input(scaleInput).type;
    if (t == ElementType::Undefined) t = ElementType::F32;
    return factsOf(makeFact(t, s));
  };
}

/// MatMulNBits(A [..., K], B packed, scales, ...) with attributes K and N: [..., N].
Result<Facts> inferMatMulNBits(InferContext &ctx) {
  const Fact &a = ctx.input(0);
  SF_ASSIGN(int64_t k, ctx.attrs().getInt("K"));
  SF_ASSIGN(int64_t n, ctx.attrs().getInt("N"));
  if (k <= 0 || n <= 0) return errorf("K and N must be positive, got K = {}, N = {}", k, n);
  if (!a.shape.rankIsStatic()) return factsOf(makeFact(a.type, PartialShape::dynamic()));
  if (a.shape.size() == 0) return makeError("A must not be a scalar");
  SF_TRY(checkLastDim(ctx, a, Dimension(k), "A"));
  std::vector<Dimension> d = a.shape.dims();
  d.back() = Dimension(n);
  return factsOf(makeFact(a.type, PartialShape(std::move(d))));
}

/// SkipLayerNormalization / SkipSimplifiedLayerNormalization (input, skip, gamma, ...): output
/// 0 and the sum of input, skip and bias (output 3) are input's shape; gamma is [hidden].
Result<Facts> inferSkipLayerNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0), &skip = ctx.input(1);
  PartialShape s = x.shape;
  // skip is input's shape, or for a 3-D input (1, S, H) or (S, H): its last two dims are input's.
  if (s.rankIsStatic() && skip.shape.rankIsStatic() && skip.shape.size() >= 2 && s.size() >= 2) {
    std::vector<Dimension> d = s.dims();
    const auto &k = skip.shape;
    for (size_t i = 1; i <= 2; ++i) {
      SF_ASSIGN(d[d.size() - i], ctx.mergeDims(d[d.size() - i], k[k.size() - i]));
    }
    if (k.size() == d.size() && !(d.size() == 3 && k[0].isStatic() && k[0].length() == 1)) {
      SF_ASSIGN(d[0], ctx.mergeDims(d[0], k[0]));
    }
    s = PartialShape(std::move(d));
  }
  Fact hiddenOf = makeFact(x.type, s);
  if (ctx.hasInput(2) && ctx.input(2).shape.rankIsStatic() && ctx.input(2).shape.size() == 1)
    SF_TRY(checkLastDim(ctx, hiddenOf, ctx.input(2).shape[0], "input"));
  // mean and inv_std_var: float, input's dims with the last one 1.
  PartialShape stats = s;
  if (stats.rankIsStatic() && stats.size() > 0) {
    std::vector<Dimension> d = stats.dims();
    d.back() = Dimension(1);
    stats = PartialShape(std::move(d));
  }
  Facts out{makeFact(x.type, s)};
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    out.push_back(i == 3 ? makeFact(x.type, s) : makeFact(ElementType::F32, stats));
  return out;
}

/// SimplifiedLayerNormalization (X, scale): Y is X's shape; the optional inv_std_var (float)
/// keeps X's dims before `axis` and is 1 from it on.
Result<Facts> inferSimplifiedLayerNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  Facts out{makeFact(x.type, x.shape)};
  if (ctx.numOutputs() < 2) return out;
  PartialShape stats = x.shape;
  if (x.shape.rankIsStatic()) {
    const int64_t r = int64_t(x.shape.size());
    SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", -1));
    if (axis < -r || axis >= r) return errorf("axis {} is out of range for {}", axis, x);
    if (axis < 0) axis += r;
    std::vector<Dimension> d = x.shape.dims();
    for (int64_t i = axis; i < r; ++i) d[size_t(i)] = Dimension(1);
    stats = PartialShape(std::move(d));
  }
  for (size_t i = 1; i < ctx.numOutputs(); ++i) out.push_back(makeFact(ElementType::F32, stats));
  return out;
}

/// EmbedLayerNormalization(input_ids [B,S], segment_ids, word_embedding [V,H], ...):
/// output [B,S,H], mask_index [B] (int32), embedding_sum [B,S,H].
Result<Facts> inferEmbedLayerNorm(InferContext &ctx) {
  const Fact &ids = ctx.input(0), &words = ctx.input(2);
  Dimension hidden;
  if (words.shape.rankIsStatic() && words.shape.size() == 2) hidden = words.shape[1];
  if (ctx.hasInput(5) && ctx.input(5).shape.rankIsStatic() && ctx.input(5).shape.size() == 1) {
    SF_ASSIGN(hidden, ctx.mergeDims(hidden, ctx.input(5).shape[0]));
  }
  PartialShape out = PartialShape::dynamic(3);
  Dimension batch;
  if (ids.shape.rankIsStatic()) {
    if (ids.shape.size() != 2) return errorf("input_ids {} must be [B, S]", ids);
    batch = ids.shape[0];
    out = PartialShape({ids.shape[0], ids.shape[1], hidden});
  } else {
    out = PartialShape({Dimension(), Dimension(), hidden});
  }
  ElementType t = words.type;
  Facts r{makeFact(t, out)};
  if (ctx.numOutputs() > 1) r.push_back(makeFact(ElementType::I32, PartialShape({batch})));
  if (ctx.numOutputs() > 2) r.push_back(makeFact(t, out));
  return r;
}

/// Attention(input [B,S,Hin], weights [Hin, 3H] or qkv_hidden_sizes, bias, mask, past, ...):
/// output [B,S,Hv]; present [2,B,heads,P+S,head] when past is given as [2,B,heads,P,head].
Result<Facts> inferAttention(InferContext &ctx) {
  const Fact &x = ctx.input(0), &w = ctx.input(1);
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads"));
  if (heads <= 0) return errorf("num_heads must be positive, got {}", heads);
  Dimension hv;
  if (ctx.attrs().has("qkv_hidden_sizes")) {
    SF_ASSIGN(auto sizes, ctx.attrs().getInts("qkv_hidden_sizes"));
    if (sizes.size() != 3) return makeError("qkv_hidden_sizes must have 3 elements");
    hv = Dimension(sizes[2]);
  } else if (w.shape.rankIsStatic() && w.shape.size() == 2) {
    SF_ASSIGN(hv, splitInto(w.shape[1], 3, "weights dim 1"));
  }
  if (x.shape.rankIsStatic() && x.shape.size() != 3)
    return errorf("input {} must be [B, S, hidden]", x);
  if (x.shape.rankIsStatic() && w.shape.rankIsStatic() && w.shape.size() == 2)
    SF_TRY(ctx.mergeDims(x.shape[2], w.shape[0]));
  Dimension b, s;
  if (x.shape.rankIsStatic()) b = x.shape[0], s = x.shape[1];
  Facts out{makeFact(x.type, PartialShape({b, s, hv}))};
  if (ctx.numOutputs() > 1) {
    Fact present;
    if (ctx.hasInput(4) && ctx.input(4).shape.rankIsStatic() && ctx.input(4).shape.size() == 5) {
      std::vector<Dimension> d = ctx.input(4).shape.dims();
      SF_ASSIGN(d[3], d[3] + s);
      present = makeFact(x.type, PartialShape(std::move(d)));
    }
    out.push_back(present);
  }
  return out;
}

/// RotaryEmbedding (com.microsoft): input [B, S, hidden] or [B, N, S, head], position_ids [B, S]
/// or one offset (positions offset .. offset + S - 1), cos_cache and sin_cache [max positions,
/// rotated / 2]. Output like the input. onnxruntime refuses a position past the caches' rows: with
/// an offset, offset + S must be at most the rows.
Result<Facts> inferMsRotaryEmbedding(InferContext &ctx) {
  const Fact &x = ctx.input(0), &pos = ctx.input(1), &cos = ctx.input(2);
  Facts out{makeFact(x.type, x.shape)};
  if (!x.shape.rankIsStatic()) return out;
  if (x.shape.size() != 3 && x.shape.size() != 4) return errorf("input {} must be of rank 3 or 4", x);
  const Dimension &batch = x.shape[0], &seq = x.shape.size() == 4 ? x.shape[2] : x.shape[1];
  for (size_t i : {size_t(2), size_t(3)}) {
    const Fact &c = ctx.input(i);
    if (c.shape.rankIsStatic() && c.shape.size() != 2)
      return errorf("{} {} must be [max positions, rotated / 2]", i == 2 ? "cos_cache" : "sin_cache", c);
  }
  if (!pos.shape.rankIsStatic() || !cos.shape.rankIsStatic()) return out;
  if (pos.shape.size() == 2) {
    if (!ctx.mergeDims(pos.shape[0], batch).ok() || !ctx.mergeDims(pos.shape[1], seq).ok())
      return errorf("position_ids {} must be [batch, sequence] = [{}, {}]", pos, batch, seq);
    SF_TRY(positionsWithinCache(ctx, pos, cos));
    return out;
  }
  // One offset: the last position is offset + S - 1.
  auto offset = dimValues(pos);
  if (!offset || offset->size() != 1) return out;
  SF_ASSIGN(Dimension end, (*offset)[0] + seq);
  const Dimension &rows = cos.shape[0];
  if (end.isStatic() && rows.isStatic() && end.length() > rows.length())
    return errorf("positions reach {} but cos_cache has {} rows", end.length() - 1, rows);
  if (rows.isStatic() && !end.isStatic() && end.expr() && end.maxLength() > rows.length())
    SF_TRY(ctx.symbols().narrow(end.expr(), {-kInf, rows.length()}));
  else if (auto d = end - rows; !rows.isStatic() && d.ok() && !d->isStatic() && d->expr())
    SF_TRY(ctx.symbols().narrow(d->expr(), {-kInf, 0}));
  return out;
}

/// MultiHeadAttention(query [B,S,D], key, value, ...): output [B,S,Dv], Dv from value
/// ([B,L,Dv], or [B,heads,L,head] giving heads*head); other layouts leave Dv unknown.
/// MultiHeadAttention's present_key (`input` 1) or present_value (2): [B, heads, P + L, head]
/// from a 3-D key or value [B, L, heads * head] after a past [B, heads, P, head]; a 4-D one
/// (a cross-attention cache, [B, heads, L, head]) as it is; with a shared buffer
/// (past_sequence_length given) the past's shape.
Result<PartialShape> mhaPresent(InferContext &ctx, int64_t heads, size_t input) {
  const size_t pastAt = input == 1 ? 6 : 7;
  const bool past = ctx.hasInput(pastAt) && ctx.input(pastAt).shape.rankIsStatic() && ctx.input(pastAt).shape.size() == 4;
  if (past && ctx.hasInput(8)) return ctx.input(pastAt).shape;
  if (!ctx.hasInput(input) || !ctx.input(input).shape.rankIsStatic()) return PartialShape::dynamic(4);
  const PartialShape &x = ctx.input(input).shape;
  if (x.size() == 4) return x;
  if (x.size() != 3) return PartialShape::dynamic(4);
  SF_ASSIGN(Dimension head, splitInto(x[2], heads, input == 1 ? "the key's hidden size" : "the value's hidden size"));
  Dimension positions = x[1];
  if (past) {
    SF_ASSIGN(positions, ctx.input(pastAt).shape[2] + x[1]);
  }
  return PartialShape({x[0], Dimension(heads), positions, head});
}

Result<Facts> inferMultiHeadAttention(InferContext &ctx) {
  const Fact &q = ctx.input(0);
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads"));
  if (heads <= 0) return errorf("num_heads must be positive, got {}", heads);
  if (!q.shape.rankIsStatic()) return factsOf(makeFact(q.type, PartialShape::dynamic()));
  Dimension dv;
  if (q.shape.size() == 3 && !ctx.hasInput(1)) {
    dv = Dimension(); // packed query, key and value: layout-dependent
  } else if (ctx.hasInput(2) && ctx.input(2).shape.rankIsStatic()) {
    const PartialShape &v = ctx.input(2).shape;
    if (v.size() == 3) dv = v[2];
    else if (v.size() == 4) {
      SF_ASSIGN(dv, v[3] * Dimension(heads));
    }
  } else if (q.shape.size() == 3) {
    dv = q.shape[2]; // key and value packed together: same hidden size as the query
  }
  if (q.shape.size() == 3) {
    // A 2-D key_padding_mask is [B, keys]: the past's and the new keys (onnxruntime refuses
    // another length).
    if (ctx.hasInput(4) && ctx.input(4).shape.rankIsStatic() && ctx.input(4).shape.size() == 2 && ctx.hasInput(1)) {
      const Fact &mask = ctx.input(4);
      SF_ASSIGN(PartialShape keys, mhaPresent(ctx, heads, 1));
      if (keys.rankIsStatic() && (!ctx.mergeDims(mask.shape[0], q.shape[0]).ok() || !ctx.mergeDims(mask.shape[1], keys[2]).ok()))
        return errorf("key_padding_mask {} must be [batch, past and new keys] = [{}, {}]", mask, q.shape[0], keys[2]);
    }
    Facts out{makeFact(q.type, PartialShape({q.shape[0], q.shape[1], dv}))};
    for (size_t i = 1; i < ctx.numOutputs(); ++i) {
      if (i > 2) {
        out.push_back(Fact{});
        continue;
      }
      SF_ASSIGN(PartialShape present, mhaPresent(ctx, heads, i == 1 ? 1 : 2));
      out.push_back(makeFact(q.type, std::move(present)));
    }
    return out;
  }
  if (q.shape.size() == 5) { // packed QKV [B,S,heads,3,head]
    SF_ASSIGN(Dimension hidden, q.shape[2] * q.shape[4]);
    Facts out{makeFact(q.type, PartialShape({q.shape[0], q.shape[1], hidden}))};
    for (size_t i = 1; i < ctx.numOutputs(); ++i) out.push_back(Fact{});
    return out;
  }
  return errorf("query {} must be [B, S, D] or [B, S, heads, 3, head]", q);
}

/// A rank-`rank` input's shape, or an error naming it.
Result<std::vector<Dimension>> dimsOfRank(const Fact &f, size_t i, const char *name, size_t rank) {
  if (!f.shape.rankIsStatic()) return std::vector<Dimension>(rank, Dimension());
  if (f.shape.size() != rank) return errorf("input {} ({}) {} must have rank {}", i, name, f, rank);
  return f.shape.dims();
}

/// A size GroupQueryAttention needs to be at least 1 (onnxruntime divides by its batch, and
/// refuses a total_sequence_length that is not positive): an error at 0, else the requirement.
Result<void> positiveSize(InferContext &ctx, const Dimension &d, const char *what) {
  if (d.isStatic() && d.length() < 1) return errorf("{} is {}; GroupQueryAttention needs at least 1", what, d);
  if (!d.isStatic() && d.expr() && d.minLength() < 1) SF_TRY(ctx.symbols().narrow(d.expr(), {1, kInf}));
  return success();
}

/// onnxruntime's classification of a GroupQueryAttention call, as conditions on the sizes alone
/// (seqlens_k's values are the data's): a call with new tokens S other than T is a later prompt
/// (S > 1), allowed for one sequence only, or a decode step (S == 1): min(B - 1, S - 1)*(T - S)
/// == 0 with B, S >= 1; and the new tokens end at seqlens_k + 1 <= max(T, P) positions, so S <=
/// max(T, P).
Result<void> promptConditions(InferContext &ctx, const Dimension &batch, const Dimension &seq,
                              const Dimension &total, const std::optional<Dimension> &past) {
  auto one = Dimension(1);
  auto b1 = batch - one, s1 = seq - one, later = total - seq;
  if (b1.ok() && s1.ok() && later.ok()) {
    auto lhs = Dimension::min(*b1, *s1);
    if (lhs.ok())
      if (auto product = *lhs * *later; product.ok()) {
        if (product->isStatic() && product->length() != 0)
          return errorf("{} new tokens of {} in all with a batch of {}: onnxruntime takes a prompt after a "
                        "cache for one sequence only", seq, total, batch);
        if (!product->isStatic()) ctx.symbols().require(Condition::Equal, *product, Dimension(0));
      }
  }
  auto keys = past ? Dimension::max(total, *past) : Result<Dimension>(total);
  if (!keys.ok()) return success();
  if (auto d = seq - *keys; d.ok()) {
    if (d->isStatic() && d->length() > 0)
      return errorf("{} new tokens do not fit in {} positions of the cache", seq, *keys);
    if (!d->isStatic() && d->expr() && d->maxLength() > 0) ctx.symbols().require(Condition::AtMost, seq, *keys);
  }
  return success();
}

/// The sizes GroupQueryAttention's inputs share.
struct GqaSizes {
  Dimension batch, seq, head, hidden;
  std::optional<Dimension> past;
  ElementType cacheType;
};

/// num_heads and kv_num_heads, positive, the first a multiple of the second.
Result<std::pair<int64_t, int64_t>> headCounts(InferContext &ctx) {
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads"));
  SF_ASSIGN(int64_t kvHeads, ctx.attrs().getInt("kv_num_heads"));
  if (heads <= 0 || kvHeads <= 0)
    return errorf("num_heads ({}) and kv_num_heads ({}) must be positive", heads, kvHeads);
  if (heads % kvHeads != 0) return errorf("num_heads {} is not a multiple of kv_num_heads {}", heads, kvHeads);
  return std::pair{heads, kvHeads};
}

/// Reads query, key and value (or the packed query) into the sizes.
Result<void> queryKeyValueSizes(InferContext &ctx, int64_t heads, int64_t kvHeads, GqaSizes &s) {
  const Fact &q = ctx.input(0);
  SF_ASSIGN(auto qd, dimsOfRank(q, 0, "query", 3));
  s.batch = qd[0], s.seq = qd[1];
  const bool packed = !ctx.hasInput(1);
  if (packed) {
    if (ctx.hasInput(2)) return makeError("value is given without key");
    SF_ASSIGN(s.head, splitInto(qd[2], heads + 2 * kvHeads, "the packed query, key and value's hidden size"));
    SF_ASSIGN(s.hidden, s.head * Dimension(heads));
    return success();
  }
  if (!ctx.hasInput(2)) return makeError("key is given without value");
  SF_ASSIGN(s.head, splitInto(qd[2], heads, "the query's hidden size"));
  s.hidden = qd[2];
  SF_ASSIGN(auto kd, dimsOfRank(ctx.input(1), 1, "key", 3));
  SF_ASSIGN(auto vd, dimsOfRank(ctx.input(2), 2, "value", 3));
  SF_ASSIGN(s.batch, ctx.mergeDims(s.batch, kd[0]));
  SF_ASSIGN(s.batch, ctx.mergeDims(s.batch, vd[0]));
  SF_ASSIGN(Dimension kvHidden, s.head * Dimension(kvHeads));
  SF_ASSIGN(kvHidden, ctx.mergeDims(kvHidden, kd[2]));
  SF_TRY(ctx.mergeDims(kvHidden, vd[2]));
  SF_TRY(ctx.mergeDims(kd[1], vd[1]));
  // The new keys are the new queries' positions (or none: a cache shared with another layer).
  if (!ctx.hasInput(3)) {
    SF_ASSIGN(s.seq, ctx.mergeDims(s.seq, kd[1]));
  }
  return success();
}

/// Reads the cache past_key and past_value into the sizes.
Result<void> pastSizes(InferContext &ctx, int64_t kvHeads, GqaSizes &s) {
  const Fact &q = ctx.input(0);
  if (ctx.hasInput(3) != ctx.hasInput(4)) return makeError("past_key and past_value must be given together");
  if (!ctx.hasInput(3)) return success();
  SF_ASSIGN(auto pk, dimsOfRank(ctx.input(3), 3, "past_key", 4));
  SF_ASSIGN(auto pv, dimsOfRank(ctx.input(4), 4, "past_value", 4));
  for (size_t d = 0; d < 4; ++d) {
    SF_ASSIGN(pk[d], ctx.mergeDims(pk[d], pv[d]));
  }
  SF_ASSIGN(s.batch, ctx.mergeDims(s.batch, pk[0]));
  SF_TRY(ctx.mergeDims(pk[1], Dimension(kvHeads)));
  if (ctx.input(3).type == q.type || ctx.input(3).type == ElementType::Undefined) {
    SF_ASSIGN(s.head, ctx.mergeDims(s.head, pk[3]));
  }
  s.past = pk[2];
  if (ctx.input(3).type != ElementType::Undefined) s.cacheType = ctx.input(3).type;
  return success();
}

/// The rotary caches hold a row per position: total_sequence_length at most their rows.
Result<void> withinRotaryCache(InferContext &ctx, const Dimension &total) {
  if (!ctx.hasInput(7) || !ctx.input(7).shape.rankIsStatic() || ctx.input(7).shape.size() != 2)
    return success();
  const Dimension &rows = ctx.input(7).shape[0];
  if (total.isStatic() && rows.isStatic() && total.length() > rows.length())
    return errorf("total_sequence_length {} is more than cos_cache's {} rows", total, rows);
  if (total.expr() && rows.expr())
    if (auto d = total - rows; d.ok() && !d->isStatic() && d->expr()) SF_TRY(ctx.symbols().narrow(d->expr(), {-kInf, 0}));
  return success();
}

/// The positions present_key and present_value hold.
Result<Dimension> presentLength(InferContext &ctx, const std::optional<Dimension> &total,
                                const std::optional<Dimension> &past) {
  SF_ASSIGN(int64_t slidingCache, ctx.attrs().getInt("sliding_window_cache", 0));
  if (slidingCache != 0 && past) return *past; // a ring buffer of the past's capacity
  if (total && past) return Dimension::max(*total, *past);
  if (total) return *total;
  return ctx.freshDim("present", Interval{past ? past->minLength() : 1, kInf});
}

/// GroupQueryAttention (com.microsoft): query [B, S, N*H] (or Q, K and V packed, [B, S,
/// (N + 2*Nk)*H], without key and value), key and value [B, S, Nk*H], the cache past_key and
/// past_value [B, Nk, P, H], total_sequence_length T (a scalar). Output [B, S, N*H]; present_key
/// and present_value [B, Nk, max(T, P), H] (T without a past); output_qk [B, N, S, T].
Result<Facts> inferGroupQueryAttention(InferContext &ctx) {
  const Fact &q = ctx.input(0);
  SF_ASSIGN(auto counts, headCounts(ctx));
  const auto [heads, kvHeads] = counts;
  GqaSizes s;
  s.cacheType = q.type;
  SF_TRY(queryKeyValueSizes(ctx, heads, kvHeads, s));
  SF_TRY(pastSizes(ctx, kvHeads, s));
  const Dimension &batch = s.batch, &seq = s.seq, &head = s.head, &hidden = s.hidden;
  const std::optional<Dimension> &past = s.past;
  // onnxruntime's kernels take head sizes that are multiples of 8 only.
  if (head.isStatic() && (head.length() <= 0 || head.length() % 8 != 0))
    return errorf("the head size {} is not a positive multiple of 8, which onnxruntime's GroupQueryAttention needs", head);
  // total_sequence_length: the keys attended to, past and new.
  std::optional<Dimension> total;
  if (ctx.hasInput(6)) {
    SF_TRY(expectOneElement(ctx, ctx.input(6), "input 6 (total_sequence_length)", OneValue{0, 1}));
    total = scalarDim(ctx.input(6));
  }
  SF_TRY(positiveSize(ctx, batch, "the batch"));
  SF_TRY(positiveSize(ctx, seq, "sequence_length"));
  if (total) {
    SF_TRY(positiveSize(ctx, *total, "total_sequence_length"));
    SF_TRY(promptConditions(ctx, batch, seq, *total, past));
  }
  if (total) SF_TRY(withinRotaryCache(ctx, *total));
  SF_ASSIGN(Dimension present, presentLength(ctx, total, past));
  const ElementType cacheType = s.cacheType;
  Facts out{makeFact(q.type, PartialShape({batch, seq, hidden}))};
  if (ctx.numOutputs() > 1) out.push_back(makeFact(cacheType, PartialShape({batch, Dimension(kvHeads), present, head})));
  if (ctx.numOutputs() > 2) out.push_back(makeFact(cacheType, PartialShape({batch, Dimension(kvHeads), present, head})));
  if (ctx.numOutputs() > 3) {
    Dimension keys = total ? *total : ctx.freshDim("total", Interval{1, kInf});
    out.push_back(makeFact(q.type, PartialShape({batch, Dimension(heads), seq, keys})));
  }
  return out;
}

/// SparseAttention (com.microsoft): GroupQueryAttention's query, key and value (or the packed
/// query) with block-sparse layouts; output [B, S, heads * head]; the caches are buffers of the
/// largest length shared between past and present: present_key and present_value are
/// past_key's and past_value's shapes [B, kv_heads, max, head].
Result<Facts> inferSparseAttention(InferContext &ctx) {
  const Fact &q = ctx.input(0);
  SF_ASSIGN(auto counts, headCounts(ctx));
  const auto [heads, kvHeads] = counts;
  SF_ASSIGN(int64_t block, ctx.attrs().getInt("sparse_block_size"));
  if (block <= 0) return errorf("sparse_block_size must be positive, got {}", block);
  if (!ctx.hasInput(3) || !ctx.hasInput(4)) return makeError("past_key and past_value are required");
  GqaSizes s;
  s.cacheType = q.type;
  SF_TRY(queryKeyValueSizes(ctx, heads, kvHeads, s));
  SF_TRY(pastSizes(ctx, kvHeads, s));
  Facts out{makeFact(q.type, PartialShape({s.batch, s.seq, s.hidden}))};
  const PartialShape cache({s.batch, Dimension(kvHeads), s.past ? *s.past : Dimension::dynamic(), s.head});
  for (size_t i = 1; i < ctx.numOutputs() && i < 3; ++i) out.push_back(makeFact(s.cacheType, cache));
  return out;
}

/// DecoderMaskedMultiHeadAttention (com.microsoft): one decoding step (S = 1) of
/// MultiHeadAttention with beam search's caches. Output [B, S, v_hidden]: from a packed
/// [B, S, heads, 3, head] query heads * head, from a 3-D value its hidden size, from a 4-D
/// (cross-attention) value [B, heads, L, head] heads * head, from a packed 3-D query (no key and
/// value) a third of its hidden size. present_key/present_value (self-attention only): with
/// past_present_share_buffer the past's buffer [B, heads, max, head], else the past with the new
/// positions appended. qk [B, heads, S, keys].
Result<Facts> inferDecoderMaskedMha(InferContext &ctx) {
  const Fact &q = ctx.input(0);
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads"));
  SF_ASSIGN(int64_t share, ctx.attrs().getInt("past_present_share_buffer", 0));
  if (heads <= 0) return errorf("num_heads must be positive, got {}", heads);
  Facts out;
  auto fill = [&](size_t n) {
    while (out.size() < std::min(n, ctx.numOutputs())) out.push_back(Fact{});
  };
  if (!q.shape.rankIsStatic()) {
    out.push_back(makeFact(q.type, PartialShape::dynamic(3)));
    fill(ctx.numOutputs());
    return out;
  }
  const PartialShape &qs = q.shape;
  if (qs.size() != 3 && qs.size() != 5) return errorf("query {} must be [B, S, hidden] or [B, S, heads, 3, head]", q);
  const bool hasKey = ctx.hasInput(1), hasValue = ctx.hasInput(2);
  const Fact &key = ctx.input(1), &value = ctx.input(2);
  const bool cross = hasKey && key.shape.rankIsStatic() && key.shape.size() == 4;
  Dimension dv = Dimension::dynamic(), kvLen = qs[1];
  if (qs.size() == 5) {
    SF_ASSIGN(dv, qs[2] * qs[4]);
  } else if (hasValue && value.shape.rankIsStatic()) {
    const PartialShape &v = value.shape;
    if (v.size() == 3) {
      dv = v[2];
      kvLen = v[1];
    } else if (v.size() == 4) {
      SF_ASSIGN(dv, v[1] * v[3]);
      kvLen = v[2];
    } else {
      return errorf("value {} must have rank 3 or 4", value);
    }
  } else if (!hasKey && !hasValue) {
    SF_ASSIGN(dv, splitInto(qs[2], 3, "the packed query's hidden size"));
  }
  if (qs.size() == 3 && dv.isStatic()) SF_TRY(splitInto(dv, heads, "the value's hidden size"));
  out.push_back(makeFact(q.type, PartialShape({qs[0], qs[1], dv})));
  if (ctx.numOutputs() > 1) {
    Dimension keys = Dimension::dynamic();
    for (size_t i : {size_t(5), size_t(6)}) {
      if (out.size() >= 3 || out.size() >= ctx.numOutputs()) break;
      const Fact &past = ctx.input(i);
      if (cross || !ctx.hasInput(i) || !past.shape.rankIsStatic()) {
        out.push_back(makeFact(past.type == ElementType::Undefined ? q.type : past.type, PartialShape::dynamic(4)));
        continue;
      }
      if (past.shape.size() != 4) return errorf("input {} {} must be [B, heads, positions, head]", i, past);
      std::vector<Dimension> d = past.shape.dims();
      if (!share) {
        SF_ASSIGN(d[2], d[2] + kvLen);
        keys = d[2];
      }
      out.push_back(makeFact(past.type, PartialShape(std::move(d))));
    }
    if (ctx.numOutputs() > 3) {
      if (cross && key.shape.rankIsStatic()) keys = key.shape[2];
      out.push_back(makeFact(q.type, PartialShape({qs[0], Dimension(heads), qs[1], keys})));
    }
  }
  fill(ctx.numOutputs());
  return out;
}

/// GatherBlockQuantized (com.microsoft): Gather of block-quantized data along gather_axis,
/// dequantized into the scales' type: data [..., d_g, ...] and indices I give
/// data.shape[:g] + I + data.shape[g+1:]; uint8 data with bits < 8 packs 8/bits values in each
/// byte of its last axis, which the output unpacks.
Result<Facts> inferGatherBlockQuantized(InferContext &ctx) {
  const Fact &data = ctx.input(0), &indices = ctx.input(1), &scales = ctx.input(2);
  SF_ASSIGN(int64_t gatherAxis, ctx.attrs().getInt("gather_axis", 0));
  SF_ASSIGN(int64_t quantizeAxis, ctx.attrs().getInt("quantize_axis", 1));
  SF_ASSIGN(int64_t bits, ctx.attrs().getInt("bits", 4));
  SF_ASSIGN(int64_t block, ctx.attrs().getInt("block_size", 128));
  if (block < 16 || (block & (block - 1)) != 0) return errorf("block_size {} must be a power of 2 and at least 16", block);
  if (indices.type != ElementType::Undefined && indices.type != ElementType::I32 && indices.type != ElementType::I64)
    return errorf("input 1 (indices) {} must be int32 or int64", indices);
  const bool bytes = data.type == ElementType::U8;
  if (bytes && bits != 2 && bits != 4 && bits != 8) return errorf("bits {} of uint8 data must be 2, 4 or 8", bits);
  if (!data.shape.rankIsStatic() || !indices.shape.rankIsStatic())
    return factsOf(makeFact(scales.type, PartialShape::dynamic()));
  const int64_t r = int64_t(data.shape.size());
  if (r < 1) return errorf("input 0 (data) {} must have rank 1 or more", data);
  SF_ASSIGN(int64_t g, normalizeAxis(gatherAxis, r));
  SF_ASSIGN(int64_t qa, normalizeAxis(quantizeAxis, r));
  if (bytes && (g != 0 || qa != r - 1 || r < 2))
    return errorf("uint8 data gathers along axis 0 and is quantized along its last axis (gather_axis {}, quantize_axis {})",
                  gatherAxis, quantizeAxis);
  if (scales.shape.rankIsStatic() && int64_t(scales.shape.size()) != r)
    return errorf("input 2 (scales) {} must have data's rank {}", scales, r);
  std::vector<Dimension> out;
  for (int64_t d = 0; d < g; ++d) out.push_back(data.shape[size_t(d)]);
  for (const Dimension &d : indices.shape.dims()) out.push_back(d);
  for (int64_t d = g + 1; d < r; ++d) out.push_back(data.shape[size_t(d)]);
  if (bytes && bits < 8) {
    SF_ASSIGN(out.back(), out.back() * Dimension(8 / bits));
  }
  return factsOf(makeFact(scales.type, PartialShape(std::move(out))));
}

/// BiasSplitGelu(X [N, HW, D], bias [D]) -> [N, HW, D/2].
Result<Facts> inferBiasSplitGelu(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, PartialShape::dynamic()));
  if (x.shape.size() != 3) return errorf("input {} must be [N, HW, D]", x);
  std::vector<Dimension> d = x.shape.dims();
  SF_ASSIGN(d[2], splitInto(d[2], 2, "hidden size"));
  return factsOf(makeFact(x.type, PartialShape(std::move(d))));
}

/// QLinearAdd / QLinearMul (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp): A and B broadcast.
Result<Facts> inferQlinearBinary(InferContext &ctx) {
  const Fact &a = ctx.input(0), &b = ctx.input(3);
  SF_ASSIGN(PartialShape s, ctx.broadcast(a.shape, b.shape));
  return factsOf(makeFact(a.type, s));
}

} // namespace

// ---- costs (docs/COSTS.md) ----
namespace {

/// Attention scores and their use: per (query position, key position), q_hidden MACs for Q K^T
/// and v_hidden for the weighted V, and a softmax (5 operations) per head.
Result<void> attentionCost(OpCost &c, const Dimension &queries, const Dimension &keys,
                           const Dimension &qHidden, const Dimension &vHidden, int64_t heads) {
  SF_ASSIGN(Dimension pairs, times(queries, keys));
  SF_ASSIGN(Dimension hidden, qHidden + vHidden);
  SF_ASSIGN(Dimension macs, times(pairs, hidden));
  SF_TRY(c.addMacs(macs));
  SF_ASSIGN(Dimension scores, times(pairs, Dimension(std::max<int64_t>(heads, 1))));
  SF_TRY(c.add(FlopKind::Compare, scores));
  SF_ASSIGN(Dimension adds, times(scores, Dimension(2)));
  SF_TRY(c.add(FlopKind::Add, adds));
  SF_TRY(c.add(FlopKind::Special, scores));
  SF_TRY(c.add(FlopKind::Div, scores));
  return success();
}

/// Attention (input [B, S, hidden], weights [hidden, q + k + v], bias, mask, past): the QKV
/// projection (B*S tokens times the weights), the bias, and attention over the S + past keys.
Result<OpCost> costAttention(const CostContext &ctx) {
  OpCost c;
  const PartialShape &x = ctx.input(0).shape, &w = ctx.input(1).shape;
  int64_t heads = ctx.attrs().getInt("num_heads", 1).valueOr(1);
  if (!x.rankIsStatic() || x.size() != 3 || !w.rankIsStatic() || w.size() != 2) {
    SF_TRY(c.addMacs(Dimension::dynamic()));
    return c;
  }
  SF_ASSIGN(Dimension tokens, times(x[0], x[1]));
  SF_ASSIGN(Dimension projection, times(tokens, elementsOf(ctx.input(1))));
  SF_TRY(c.addMacs(projection));
  if (ctx.hasInput(2)) {
    SF_ASSIGN(Dimension biasAdds, times(tokens, w[1]));
    SF_TRY(c.add(FlopKind::Add, biasAdds));
  }
  Dimension keys = x[1];
  const PartialShape &past = ctx.input(4).shape; // [2, B, heads, P, head]
  if (ctx.hasInput(4) && past.rankIsStatic() && past.size() == 5) {
    SF_ASSIGN(keys, keys + past[3]);
  }
  Dimension q = Dimension::dynamic(), v = Dimension::dynamic();
  if (auto sizes = ctx.attrs().getInts("qkv_hidden_sizes"); sizes.ok() && sizes->size() == 3) {
    q = Dimension((*sizes)[0]);
    v = Dimension((*sizes)[2]);
  } else if (auto third = w[1].floorDiv(3); third.ok()) {
    q = v = *third;
  }
  SF_ASSIGN(Dimension queries, times(x[0], x[1]));
  SF_TRY(attentionCost(c, queries, keys, q, v, heads));
  return c;
}

/// MultiHeadAttention (query [B, S, D], key [B, L, D], value [B, L, Dv] or packed): attention
/// only (the projections are separate nodes).
Result<OpCost> costMultiHeadAttention(const CostContext &ctx) {
  OpCost c;
  const PartialShape &q = ctx.input(0).shape, &k = ctx.input(1).shape, &y = ctx.output(0).shape;
  int64_t heads = ctx.attrs().getInt("num_heads", 1).valueOr(1);
  if (!q.rankIsStatic() || q.size() < 3 || !y.rankIsStatic() || y.size() != 3) {
    SF_TRY(c.addMacs(Dimension::dynamic()));
    return c;
  }
  Dimension keys = k.rankIsStatic() && k.size() == 3 ? k[1] : q[1];
  SF_ASSIGN(Dimension queries, times(q[0], q[1]));
  const Dimension &qHidden = q.size() == 3 ? q[2] : y[2];
  SF_TRY(attentionCost(c, queries, keys, qHidden, y[2], heads));
  return c;
}

/// GroupQueryAttention: each query position against the present keys (output_qk's last dim, or
/// present_key's positions), the query's hidden size for the scores and again for the values.
Result<OpCost> costGroupQueryAttention(const CostContext &ctx) {
  OpCost c;
  const PartialShape &y = ctx.output(0).shape;
  int64_t heads = ctx.attrs().getInt("num_heads", 1).valueOr(1);
  std::optional<Dimension> keys;
  if (ctx.numOutputs() > 1 && ctx.output(1).shape.rankIsStatic() && ctx.output(1).shape.size() == 4)
    keys = ctx.output(1).shape[2];
  if (!y.rankIsStatic() || y.size() != 3 || !keys) {
    SF_TRY(c.addMacs(Dimension::dynamic()));
    return c;
  }
  SF_ASSIGN(Dimension queries, times(y[0], y[1]));
  SF_TRY(attentionCost(c, queries, *keys, y[2], y[2], heads));
  return c;
}

/// MatMulNBits: A [..., K] times the dequantised [K, N]: one MAC per output element and per K,
/// and the dequantisation (a subtract and a multiply) of every weight.
Result<OpCost> costMatMulNBits(const CostContext &ctx) {
  OpCost c;
  int64_t k = ctx.attrs().getInt("K", 0).valueOr(0), n = ctx.attrs().getInt("N", 0).valueOr(0);
  SF_ASSIGN(Dimension macs, times(elementsOf(ctx.output(0)), Dimension(k)));
  SF_TRY(c.addMacs(macs));
  auto weights = checkedMul(k, n);
  Dimension w = weights ? Dimension(*weights) : Dimension::dynamic();
  SF_TRY(c.add(FlopKind::Add, w));
  SF_TRY(c.add(FlopKind::Mul, w));
  return c;
}

/// QLinear elementwise ops: dequantise both operands (a subtract and a multiply each), the op,
/// and requantise (a divide, an add, a rounding) per output element.
CostFn costQLinear(FlopKind op) {
  return costSum({costPerOutput(FlopKind::Add, 3), costPerOutput(FlopKind::Mul, 2),
                  costPerOutput(op), costPerOutput(FlopKind::Div), costPerOutput(FlopKind::Other)});
}

} // namespace

CostFn costWithActivation(CostFn base) {
  return costSum({std::move(base), costPerOutput(FlopKind::Compare)});
}

void registerContribOps(OpRegistry &r) {
  const CostFn special = costPerOutput(FlopKind::Special);
  r.add({.name = "Gelu", .domain = kMs, .infer = inferLikeInput(), .cost = special});
  r.add({.name = "QuickGelu", .domain = kMs, .infer = inferLikeInput(), .cost = special});
  r.add({.name = "FastGelu",
         .domain = kMs,
         .infer = inferLikeInput({1}),
         .cost = costSum({special, costPerOutput(FlopKind::Add)})});
  r.add({.name = "BiasGelu",
         .domain = kMs,
         .infer = inferLikeInput({1}),
         .cost = costSum({special, costPerOutput(FlopKind::Add)})});
  r.add({.name = "BiasAdd",
         .domain = kMs,
         .infer = inferLikeInput({1, 2}),
         .cost = costPerOutput(FlopKind::Add, 2)});
  r.add({.name = "BiasDropout",
         .domain = kMs,
         .infer = inferLikeInput(),
         .cost = costPerOutput(FlopKind::Add)});
  // x * cos + rotate(x) * sin: 2 multiplies and an add per element.
  r.add({.name = "RotaryEmbedding",
         .domain = kMs,
         .infer = inferMsRotaryEmbedding,
         .cost = costSum({costPerOutput(FlopKind::Mul, 2), costPerOutput(FlopKind::Add)})});
  r.add({.name = "SimplifiedLayerNormalization", .infer = inferSimplifiedLayerNorm, .cost = costLayerNorm});
  // The skip's add per element, then LayerNorm: SkipLayerNormalization's beta is input 3 (its
  // input 4, a bias added before the norm, is another add per element); the simplified one has
  // no beta (its input 3 is that bias).
  r.add({.name = "SkipLayerNormalization",
         .domain = kMs,
         .infer = inferSkipLayerNorm,
         .cost = costSum({costPerOutput(FlopKind::Add), costLayerNormBiasAt(3),
                          costIfInput(4, costPerOutput(FlopKind::Add))})});
  r.add({.name = "SkipSimplifiedLayerNormalization",
         .domain = kMs,
         .infer = inferSkipLayerNorm,
         .cost = costSum({costPerOutput(FlopKind::Add), costLayerNormBiasAt(size_t(-1)),
                          costIfInput(3, costPerOutput(FlopKind::Add))})});
  // Word, position and segment embeddings gathered and added (2 adds), then normalised.
  r.add({.name = "EmbedLayerNormalization",
         .domain = kMs,
         .infer = inferEmbedLayerNorm,
         .cost = costSum({costPerOutput(FlopKind::Add, 5), costPerOutput(FlopKind::Mul, 3)})});
  r.add({.name = "Attention", .domain = kMs, .infer = inferAttention, .cost = costAttention});
  // Gathers each index's row and dequantizes it (a subtract and a multiply per element).
  r.add({.name = "GatherBlockQuantized",
         .domain = kMs,
         .infer = inferGatherBlockQuantized,
         .cost = costPerOutput(FlopKind::Mul, 2)});
  r.add({.name = "GroupQueryAttention",
         .domain = kMs,
         .infer = inferGroupQueryAttention,
         .cost = costGroupQueryAttention});
  r.add({.name = "MultiHeadAttention",
         .domain = kMs,
         .infer = inferMultiHeadAttention,
         .cost = costMultiHeadAttention});
  r.add({.name = "DecoderMaskedMultiHeadAttention",
         .domain = kMs,
         .infer = inferDecoderMaskedMha,
         .cost = costGroupQueryAttention});
  // Counted as dense attention over the whole cache buffer: an upper bound of the sparse layout's.
  r.add({.name = "SparseAttention", .domain = kMs, .infer = inferSparseAttention, .cost = costGroupQueryAttention});
  r.add({.name = "FusedMatMul", .domain = kMs, .infer = inferFusedMatMul, .cost = costMatMul});
  r.add({.name = "MatMulIntegerToFloat",
         .domain = kMs,
         .infer = inferQuantizedMatMul(2),
         .cost = costSum({costMatMul, costPerOutput(FlopKind::Mul)})});
  r.add({.name = "DynamicQuantizeMatMul",
         .domain = kMs,
         .infer = inferQuantizedMatMul(2),
         .cost = costSum({costMatMul, costPerInput(FlopKind::Other, 3)})});
  r.add({.name = "MatMulNBits", .domain = kMs, .infer = inferMatMulNBits, .cost = costMatMulNBits});
  // Bias add, then half the channels gate the other half through a GELU.
  r.add({.name = "BiasSplitGelu",
         .domain = kMs,
         .infer = inferBiasSplitGelu,
         .cost = costSum({costPerInput(FlopKind::Add), special, costPerOutput(FlopKind::Mul)})});
  r.add({.name = "QLinearAdd",
         .domain = kMs,
         .infer = inferQlinearBinary,
         .cost = costQLinear(FlopKind::Add)});
  r.add({.name = "QLinearMul",
         .domain = kMs,
         .infer = inferQlinearBinary,
         .cost = costQLinear(FlopKind::Mul)});
  r.add({.name = "QLinearSigmoid",
         .domain = kMs,
         .infer = inferLikeInput(),
         .cost = costQLinear(FlopKind::Special)});
  r.add({.name = "QLinearLeakyRelu",
         .domain = kMs,
         .infer = inferLikeInput(),
         .cost = costQLinear(FlopKind::Compare)});
  r.add({.name = "FusedConv", .domain = kMs, .infer = inferConv, .cost = costWithActivation(costConv)});
  r.add({.name = "FusedGemm", .domain = kMs, .infer = inferGemm, .cost = costWithActivation(costGemm)});
  r.add({.name = "LayerNormalization",
         .domain = kMs,
         .infer = inferLayerNorm,
         .cost = costLayerNorm});
}

} // namespace sf
