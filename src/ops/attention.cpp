// The attention family of ONNX opsets 23 and 24: Attention (scaled dot-product attention over
// 3-D or 4-D Q, K, V, grouped KV heads, a KV cache of past positions, masks, causal masking,
// softcap, the scores as an optional output), RotaryEmbedding, and TensorScatter (a KV cache of
// fixed capacity written in place). Where onnxruntime 1.30 is stricter than the specification
// on sizes (a mask as long as the keys), the rule states what onnxruntime requires.
#include "shapeflow/ops/attention.h"
#include "shapeflow/ops/refine.h"

#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/support/format.h"

namespace sf {

namespace {

/// Two dims that must be equal (what the rule learns is recorded).
Result<void> sameDims(InferContext &ctx, const Dimension &a, const Dimension &b) {
  SF_ASSIGN(Dimension merged, ctx.mergeDims(a, b));
  (void)merged;
  return success();
}

} // namespace

Result<AttentionShape> attentionShape(InferContext &ctx, const AttentionLayout &layout) {
  const Fact &q = ctx.input(layout.q), &k = ctx.input(layout.k), &v = ctx.input(layout.v);
  AttentionShape a;
  int64_t rank = 0;
  for (const Fact *f : {&q, &k, &v}) {
    if (!f->shape.rankIsStatic()) continue;
    if (f->shape.size() != 3 && f->shape.size() != 4)
      return errorf("Q, K and V must be of rank 3 or 4, not {}", *f);
    if (rank && int64_t(f->shape.size()) != rank) return errorf("Q {}, K {} and V {} differ in rank", q, k, v);
    rank = int64_t(f->shape.size());
  }
  SF_ASSIGN(int64_t qHeads, ctx.attrs().getInt("q_num_heads", 0));
  SF_ASSIGN(int64_t kvHeads, ctx.attrs().getInt("kv_num_heads", 0));
  a.rank = rank;
  if (!rank || !q.shape.rankIsStatic() || !k.shape.rankIsStatic() || !v.shape.rankIsStatic()) return a;
  a.known = true;
  if (rank == 4) {
    // Q (B, Hq, Sq, D), K (B, Hkv, Skv, D), V (B, Hkv, Skv, Dv).
    SF_ASSIGN(a.batch, ctx.mergeDims(q.shape[0], k.shape[0]));
    SF_ASSIGN(a.batch, ctx.mergeDims(a.batch, v.shape[0]));
    a.qHeads = q.shape[1], a.queries = q.shape[2];
    SF_ASSIGN(a.head, ctx.mergeDims(q.shape[3], k.shape[3]));
    SF_ASSIGN(a.kvHeads, ctx.mergeDims(k.shape[1], v.shape[1]));
    SF_ASSIGN(a.keys, ctx.mergeDims(k.shape[2], v.shape[2]));
    a.vHead = v.shape[3];
    if (qHeads > 0) {
      SF_ASSIGN(a.qHeads, ctx.mergeDims(a.qHeads, Dimension(qHeads)));
    }
    if (kvHeads > 0) {
      SF_ASSIGN(a.kvHeads, ctx.mergeDims(a.kvHeads, Dimension(kvHeads)));
    }
  } else {
    // Q (B, Sq, Hq*D), K (B, Skv, Hkv*D), V (B, Skv, Hkv*Dv), with the head counts as attributes.
    if (qHeads <= 0 || kvHeads <= 0)
      return errorf("3-D Q, K and V need attributes q_num_heads and kv_num_heads (given {} and {})", qHeads, kvHeads);
    SF_ASSIGN(a.batch, ctx.mergeDims(q.shape[0], k.shape[0]));
    SF_ASSIGN(a.batch, ctx.mergeDims(a.batch, v.shape[0]));
    a.queries = q.shape[1];
    SF_ASSIGN(a.keys, ctx.mergeDims(k.shape[1], v.shape[1]));
    a.qHeads = Dimension(qHeads), a.kvHeads = Dimension(kvHeads);
    auto split = [&](const Dimension &hidden, int64_t heads, const char *what) -> Result<Dimension> {
      if (hidden.isStatic() && hidden.length() % heads != 0)
        return errorf("{}'s last dim {} is not a multiple of its {} heads", what, hidden, heads);
      ctx.symbols().require(Condition::Divides, hidden, Dimension(heads));
      return hidden.floorDiv(heads);
    };
    SF_ASSIGN(a.head, split(q.shape[2], qHeads, "Q"));
    SF_ASSIGN(Dimension kHead, split(k.shape[2], kvHeads, "K"));
    SF_ASSIGN(a.head, ctx.mergeDims(a.head, kHead));
    SF_ASSIGN(a.vHead, split(v.shape[2], kvHeads, "V"));
  }
  // Grouped heads: each KV head serves Hq / Hkv query heads.
  if (a.qHeads.isStatic() && a.kvHeads.isStatic() && a.kvHeads.length() > 0 &&
      a.qHeads.length() % a.kvHeads.length() != 0)
    return errorf("{} query heads cannot share {} KV heads", a.qHeads, a.kvHeads);
  ctx.symbols().require(Condition::Divides, a.qHeads, a.kvHeads);
  a.total = a.keys;
  return a;
}

Result<void> addPast(InferContext &ctx, AttentionShape &a, size_t pastKey, size_t pastValue) {
  if (!a.known) return success();
  const bool hasKey = ctx.hasInput(pastKey), hasValue = ctx.hasInput(pastValue);
  if (hasKey != hasValue) return errorf("past_key and past_value are given together or not at all");
  if (!hasKey) return success();
  const Fact &pk = ctx.input(pastKey), &pv = ctx.input(pastValue);
  for (const Fact *f : {&pk, &pv})
    if (f->shape.rankIsStatic() && f->shape.size() != 4) return errorf("a past cache must be of rank 4, not {}", *f);
  if (!pk.shape.rankIsStatic() || !pv.shape.rankIsStatic()) {
    a.total = Dimension::dynamic();
    return success();
  }
  // past_key (B, Hkv, P, D), past_value (B, Hkv, P, Dv).
  SF_ASSIGN(a.batch, ctx.mergeDims(a.batch, pk.shape[0]));
  SF_ASSIGN(a.batch, ctx.mergeDims(a.batch, pv.shape[0]));
  SF_ASSIGN(a.kvHeads, ctx.mergeDims(a.kvHeads, pk.shape[1]));
  SF_ASSIGN(a.kvHeads, ctx.mergeDims(a.kvHeads, pv.shape[1]));
  SF_ASSIGN(a.past, ctx.mergeDims(pk.shape[2], pv.shape[2]));
  SF_ASSIGN(a.head, ctx.mergeDims(a.head, pk.shape[3]));
  SF_ASSIGN(a.vHead, ctx.mergeDims(a.vHead, pv.shape[3]));
  SF_ASSIGN(a.total, a.past + a.keys);
  return success();
}

Result<AttentionGeometry> attentionGeometry(const Shape &q, const Shape &k, const Shape &v, const Shape *pastKey,
                                            const Shape *pastValue, int64_t qHeads, int64_t kvHeads) {
  auto text = [](const Shape &s) { return fmt::format("[{}]", fmt::join(s, ",")); };
  auto bad = [&](const char *why) {
    return errorf("Q {}, K {} and V {}: {}", text(q), text(k), text(v), why);
  };
  AttentionGeometry g;
  g.rank = int64_t(q.size());
  if ((g.rank != 3 && g.rank != 4) || k.size() != q.size() || v.size() != q.size())
    return bad("Q, K and V must all be of rank 3 or all of rank 4");
  g.batch = q[0];
  if (k[0] != g.batch || v[0] != g.batch) return bad("their batch sizes differ");
  if (g.rank == 4) {
    g.qHeads = q[1], g.queries = q[2], g.head = q[3];
    g.kvHeads = k[1], g.keys = k[2], g.vHead = v[3];
    if (k[3] != g.head || v[1] != g.kvHeads || v[2] != g.keys) return bad("K does not fit Q or V");
    if ((qHeads > 0 && qHeads != g.qHeads) || (kvHeads > 0 && kvHeads != g.kvHeads))
      return bad("the head counts differ from q_num_heads and kv_num_heads");
  } else {
    if (qHeads <= 0 || kvHeads <= 0) return bad("3-D inputs need q_num_heads and kv_num_heads");
    if (q[2] % qHeads != 0 || k[2] % kvHeads != 0 || v[2] % kvHeads != 0)
      return bad("the hidden sizes are not multiples of the head counts");
    g.qHeads = qHeads, g.kvHeads = kvHeads, g.queries = q[1], g.keys = k[1];
    g.head = q[2] / qHeads, g.vHead = v[2] / kvHeads;
    if (k[2] / kvHeads != g.head || v[1] != g.keys) return bad("K does not fit Q or V");
  }
  if (g.kvHeads <= 0 || g.qHeads % g.kvHeads != 0) return bad("the query heads are not a multiple of the KV heads");
  if ((pastKey == nullptr) != (pastValue == nullptr)) return bad("past_key and past_value go together");
  if (pastKey) {
    const Shape &pk = *pastKey, &pv = *pastValue;
    if (pk.size() != 4 || pv.size() != 4 || pk[0] != g.batch || pv[0] != g.batch || pk[1] != g.kvHeads ||
        pv[1] != g.kvHeads || pk[2] != pv[2] || pk[3] != g.head || pv[3] != g.vHead)
      return errorf("past_key {} and past_value {} do not fit K {} and V {}", text(pk), text(pv), text(k), text(v));
    g.past = pk[2];
  }
  return g;
}

Result<void> positionsWithinCache(InferContext &ctx, const Fact &positions, const Fact &cache) {
  if (!positions.elements || !positions.elements->reached || !cache.shape.rankIsStatic() ||
      cache.shape.size() != 2 || !cache.shape[0].isStatic())
    return success();
  const int64_t rows = cache.shape[0].length();
  const Dimension &lo = positions.elements->lo, &hi = positions.elements->hi;
  if (lo.minLength() < 0 || !hi.expr()) return success();
  if (hi.minLength() >= rows) return errorf("position_ids reach {} but cos_cache has {} rows", hi, rows);
  if (hi.maxLength() >= rows) SF_TRY(ctx.symbols().narrow(hi.expr(), {-kInf, rows - 1}));
  return success();
}

namespace {

/// attn_mask broadcasts to (B, Hq, Sq, T); its last dim is T (onnxruntime requires it exactly,
/// where the specification would broadcast a 1 and, at opset 24, pad a shorter one: onnxruntime
/// pads one only without a KV cache) and the one before it Sq.
Result<void> checkMask(InferContext &ctx, const AttentionShape &a, size_t index) {
  if (!ctx.hasInput(index) || !a.known) return success();
  const Fact &m = ctx.input(index);
  if (!m.shape.rankIsStatic()) return success();
  const size_t r = m.shape.size();
  if (r < 2 || r > 4) return errorf("attn_mask must be of rank 2 to 4, not {}", m);
  // The keys: all of them, or from opset 24 the first ones (the rest are masked out); with a
  // KV cache onnxruntime still requires all of them ("inconsistent total_sequence_length").
  const Dimension &keys = m.shape[r - 1];
  const bool past = ctx.hasInput(4) || ctx.hasInput(5);
  if (ctx.opset() >= 24 && !past && !(keys.isStatic() && a.total.isStatic() && keys.length() == a.total.length())) {
    if (keys.isStatic() && a.total.isStatic() && keys.length() > a.total.length())
      return errorf("attn_mask {} covers {} keys, more than the {} attended to", m, keys, a.total);
    ctx.symbols().require(Condition::AtMost, keys, a.total);
  } else if (a.total.expr() || a.total.isStatic()) {
    if (!sameDims(ctx, keys, a.total).ok())
      return errorf("attn_mask {} covers {} keys, but {} are attended to{}", m, keys, a.total,
                    past ? " (the cache's and the new ones: onnxruntime takes a mask over all of them)" : "");
  }
  const Dimension *against[] = {&a.queries, &a.qHeads, &a.batch};
  for (size_t i = 1; i < r; ++i) {
    const Dimension &d = m.shape[r - 1 - i], &to = *against[i - 1];
    if (d.isStatic() && d.length() != 1 && to.isStatic() && d.length() != to.length())
      return errorf("attn_mask {} does not broadcast to {} at axis {}", m, to, r - 1 - i);
    ctx.symbols().require(Condition::Broadcast, d, to);
  }
  return success();
}

/// onnxruntime's Attention needs a batch and queries (its kernel refuses 0 of either; ONNX's
/// specification does not): an error at 0, else the requirement.
Result<void> atLeastOne(InferContext &ctx, const Dimension &d, const char *what) {
  if (d.isStatic() && d.length() < 1) return errorf("{} is {}; onnxruntime's Attention needs at least 1", what, d);
  if (!d.isStatic() && d.expr() && d.minLength() < 1) SF_TRY(ctx.symbols().narrow(d.expr(), {1, kInf}));
  return success();
}

Result<Facts> inferAttention(InferContext &ctx) {
  SF_ASSIGN(AttentionShape a, attentionShape(ctx, {0, 1, 2}));
  if (a.known) {
    SF_TRY(atLeastOne(ctx, a.batch, "the batch"));
    SF_TRY(atLeastOne(ctx, a.queries, "the query sequence"));
  }
  SF_TRY(addPast(ctx, a, 4, 5));
  SF_TRY(checkMask(ctx, a, 3));
  SF_ASSIGN(int64_t mode, ctx.attrs().getInt("qk_matmul_output_mode", 0));
  if (mode < 0 || mode > 3) return errorf("qk_matmul_output_mode is {}, expected 0 to 3", mode);
  if (ctx.opset() >= 24 && ctx.hasInput(6) && a.known) {
    const Fact &n = ctx.input(6);
    if (n.shape.rankIsStatic()) {
      if (n.shape.size() != 1) return errorf("nonpad_kv_seqlen must be of rank 1, not {}", n);
      SF_TRY(sameDims(ctx, n.shape[0], a.batch));
    }
  }
  const ElementType tq = ctx.input(0).type, tv = ctx.input(2).type;
  if (!a.known) {
    PartialShape y = a.rank ? shapeOfRank(a.rank) : PartialShape::dynamic();
    return factsOf(makeFact(tq, y), makeFact(tq, shapeOfRank(4)), makeFact(tv, shapeOfRank(4)),
                   makeFact(tq, shapeOfRank(4)));
  }
  PartialShape y;
  if (a.rank == 4) {
    y = PartialShape({a.batch, a.qHeads, a.queries, a.vHead});
  } else {
    SF_ASSIGN(Dimension hidden, a.qHeads * a.vHead);
    y = PartialShape({a.batch, a.queries, hidden});
  }
  return factsOf(makeFact(tq, y), makeFact(tq, PartialShape({a.batch, a.kvHeads, a.total, a.head})),
                 makeFact(tv, PartialShape({a.batch, a.kvHeads, a.total, a.vHead})),
                 makeFact(tq, PartialShape({a.batch, a.qHeads, a.queries, a.total})));
}

/// RotaryEmbedding (opset 23): X (B, H, S, D) or (B, S, H*D) with num_heads; cos and sin
/// (max_position, R/2) read at position_ids (B, S), or (B, S, R/2) without them; R is
/// rotary_embedding_dim (0: the head size).
Result<Facts> inferRotaryEmbedding(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads", 0));
  SF_ASSIGN(int64_t rotary, ctx.attrs().getInt("rotary_embedding_dim", 0));
  Facts out{makeFact(x.type, x.shape)};
  if (!x.shape.rankIsStatic()) return out;
  const size_t r = x.shape.size();
  if (r != 3 && r != 4) return errorf("X must be of rank 3 or 4, not {}", x);
  Dimension batch = x.shape[0], seq = r == 4 ? x.shape[2] : x.shape[1], head = x.shape[r - 1];
  if (r == 3) {
    if (heads <= 0) return errorf("a 3-D X needs attribute num_heads");
    if (x.shape[2].isStatic() && x.shape[2].length() % heads != 0)
      return errorf("X's last dim {} is not a multiple of num_heads {}", x.shape[2], heads);
    ctx.symbols().require(Condition::Divides, x.shape[2], Dimension(heads));
    SF_ASSIGN(head, x.shape[2].floorDiv(heads));
  }
  Dimension rot = rotary > 0 ? Dimension(rotary) : head;
  if (rotary > 0 && head.isStatic() && rotary > head.length())
    return errorf("rotary_embedding_dim {} is larger than the head size {}", rotary, head);
  if (rot.isStatic() && rot.length() % 2 != 0) return errorf("the rotated size {} is odd", rot);
  SF_ASSIGN(Dimension half, rot.floorDiv(2));
  const bool positions = ctx.hasInput(3);
  for (size_t i : {size_t(1), size_t(2)}) {
    const Fact &c = ctx.input(i);
    if (!c.shape.rankIsStatic()) continue;
    const size_t want = positions ? 2 : 3;
    if (c.shape.size() != want)
      return errorf("{} must be of rank {} {} position_ids, not {}", i == 1 ? "cos_cache" : "sin_cache", want,
                    positions ? "with" : "without", c);
    // Its last dim is the rotated half, or wider (the head's half: the first columns are read).
    const char *name = i == 1 ? "cos_cache" : "sin_cache";
    const Dimension &width = c.shape[want - 1];
    if (width.isStatic() && half.isStatic() && width.length() != half.length()) {
      SF_ASSIGN(Dimension headHalf, head.floorDiv(2));
      if (width.length() < half.length() || !headHalf.isStatic() || width.length() != headHalf.length())
        return errorf("{} {} must have half the rotated size ({}) or half the head size ({}) in its last dim", name, c,
                      half, headHalf);
    } else {
      SF_TRY(sameDims(ctx, width, half));
    }
    if (!positions) {
      SF_TRY(sameDims(ctx, c.shape[0], batch));
      SF_TRY(sameDims(ctx, c.shape[1], seq));
    }
  }
  if (positions && ctx.input(3).shape.rankIsStatic()) {
    const Fact &p = ctx.input(3);
    if (p.shape.size() != 2) return errorf("position_ids must be (batch, sequence), not {}", p);
    SF_TRY(sameDims(ctx, p.shape[0], batch));
    SF_TRY(sameDims(ctx, p.shape[1], seq));
    SF_TRY(positionsWithinCache(ctx, p, ctx.input(1)));
  }
  out[0].shape = ctx.symbols().resolve(x.shape);
  return out;
}

/// TensorScatter (opset 24): update (past_cache's shape with `seq` on `axis`) written into
/// past_cache at write_indices (B) along axis (default -2, not the batch axis); the output is
/// past_cache's shape.
Result<Facts> inferTensorScatter(InferContext &ctx) {
  const Fact &past = ctx.input(0), &update = ctx.input(1);
  Facts out{makeFact(past.type != ElementType::Undefined ? past.type : update.type, past.shape)};
  if (past.type != ElementType::Undefined && update.type != ElementType::Undefined && past.type != update.type)
    return errorf("past_cache is {} and update {}", past, update);
  if (!past.shape.rankIsStatic() || !update.shape.rankIsStatic()) return out;
  const int64_t r = int64_t(past.shape.size());
  if (int64_t(update.shape.size()) != r) return errorf("past_cache {} and update {} differ in rank", past, update);
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", -2));
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "linear"));
  if (mode != "linear" && mode != "circular") return errorf("mode '{}', expected linear or circular", mode);
  SF_ASSIGN(axis, normalizeAxis(axis, r));
  if (axis == 0) return errorf("axis is the batch axis");
  std::vector<Dimension> dims = past.shape.dims();
  for (int64_t i = 0; i < r; ++i) {
    if (i == axis) continue;
    SF_ASSIGN(dims[i], ctx.mergeDims(dims[i], update.shape[i]));
  }
  // onnxruntime writes at most the cache's capacity.
  const Dimension &seq = update.shape[axis], &capacity = past.shape[axis];
  if (seq.isStatic() && capacity.isStatic() && seq.length() > capacity.length())
    return errorf("update's {} positions do not fit a cache of {}", seq, capacity);
  if (seq.expr() && capacity.expr())
    if (auto d = seq - capacity; d.ok() && d->expr()) SF_TRY(ctx.symbols().narrow(d->expr(), {-kInf, 0}));
  if (ctx.hasInput(2) && ctx.input(2).shape.rankIsStatic()) {
    const Fact &w = ctx.input(2);
    if (w.shape.size() != 1) return errorf("write_indices must be of rank 1, not {}", w);
    SF_ASSIGN(dims[0], ctx.mergeDims(dims[0], w.shape[0]));
  }
  out[0].shape = PartialShape(std::move(dims));
  return out;
}

// ---- costs ----

/// Attention: Q K^T (D MACs per query-key pair and query head) and the weighted V (Dv per pair
/// and head), and a softmax (5 operations) per score.
Result<OpCost> costAttentionOp(const CostContext &ctx) {
  OpCost c;
  const Fact &scores = ctx.output(3), &y = ctx.output(0);
  const PartialShape &s = scores.shape, &k = ctx.output(1).shape, &v = ctx.output(2).shape;
  if (!s.rankIsStatic() || !k.rankIsStatic() || !v.rankIsStatic() || !y.shape.rankIsStatic()) {
    SF_TRY(c.addMacs(Dimension::dynamic()));
    return c;
  }
  SF_ASSIGN(Dimension pairs, productOf(s, 0, 4)); // (B, Hq, Sq, T)
  SF_ASSIGN(Dimension heads, k[3] + v[3]);
  SF_ASSIGN(Dimension macs, times(pairs, heads));
  SF_TRY(c.addMacs(macs));
  SF_TRY(c.add(FlopKind::Compare, pairs));
  SF_ASSIGN(Dimension adds, times(pairs, Dimension(2)));
  SF_TRY(c.add(FlopKind::Add, adds));
  SF_TRY(c.add(FlopKind::Special, pairs));
  SF_TRY(c.add(FlopKind::Div, pairs));
  return c;
}

} // namespace

/// Attention backwards: Y's rank and type are Q's (its batch, and its heads and positions, or
/// positions for 3-D inputs, too).
Result<void> refineAttention(RefineContext &ctx) {
  if (ctx.numOutputs() == 0) return success();
  const Fact &y = ctx.output(0);
  ctx.refineType(0, y.type);
  if (!y.shape.rankIsStatic()) return success();
  std::vector<Dimension> q = y.shape.dims();
  q.back() = Dimension(); // Q's head size is not Y's (V's head size)
  ctx.refineShape(0, PartialShape(std::move(q)));
  return success();
}

void registerAttentionOps(OpRegistry &r) {
  r.add({.name = "Attention", .infer = inferAttention, .refine = refineAttention, .cost = costAttentionOp});
  r.add({.name = "RotaryEmbedding", .infer = inferRotaryEmbedding, .traits = {.sameShape = true},
         .refine = refineSameShape(), .cost = costPerOutput(FlopKind::Mul, 2)});
  r.add({.name = "TensorScatter", .infer = inferTensorScatter, .traits = {.sameShape = true, .inPlace = true},
         .refine = refineSameShape(), .cost = costNone});
}

} // namespace sf
