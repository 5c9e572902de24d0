// Kernel of onnxruntime's GroupQueryAttention (com.microsoft; rule in src/ops/contrib.cpp), with
// onnxruntime 1.30's CPU semantics: in f32 where its inputs are (attention_f32.h), else in double.
#include "attention_f32.h"
#include "contrib.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace sf::eval::detail {
namespace {

/// What a GroupQueryAttention node is given, read once.
struct Gqa {
  int64_t batch = 0, seq = 0, heads = 0, kvHeads = 0, head = 0, newKeys = 0, past = 0, present = 0, total = 0;
  bool firstPrompt = false;
  std::vector<int64_t> seqlens; // per batch row: the keys it attends to, minus 1
};

/// The sizes and the checks onnxruntime makes before it runs GroupQueryAttention.
Result<Gqa> gqaSizes(EvalContext &ctx) {
  Gqa g;
  const Tensor &q = ctx.input(0);
  SF_ASSIGN(g.heads, ctx.attrs().getInt("num_heads"));
  SF_ASSIGN(g.kvHeads, ctx.attrs().getInt("kv_num_heads"));
  if (g.heads <= 0 || g.kvHeads <= 0 || g.heads % g.kvHeads != 0 || g.heads > (int64_t(1) << 30) ||
      g.kvHeads > (int64_t(1) << 30))
    return errorf("num_heads {} must be a positive multiple of kv_num_heads {}", g.heads, g.kvHeads);
  // What onnxruntime's CPU kernel does not run: refused rather than computed otherwise.
  SF_ASSIGN(int64_t slidingCache, ctx.attrs().getInt("sliding_window_cache", 0));
  SF_ASSIGN(int64_t cacheBits, ctx.attrs().getInt("kv_cache_bit_width", 0));
  SF_ASSIGN(int64_t causal, ctx.attrs().getInt("causal", 1));
  SF_ASSIGN(int64_t window, ctx.attrs().getInt("local_window_size", -1));
  if (slidingCache != 0 || cacheBits != 0 || ctx.hasInput(12) || ctx.hasInput(13))
    return errorf("a sliding-window or quantized KV cache is not run here");
  if (ctx.hasInput(14) || ctx.hasInput(15)) return errorf("q_norm_weight and k_norm_weight are not supported (onnxruntime's CPU kernel refuses them)");
  if (causal != 0 && causal != 1) return errorf("causal is {}; 0 or 1 expected", causal);
  if (causal == 0 && window != -1) return errorf("causal 0 needs local_window_size -1, not {}", window);
  if (q.shape().size() != 3) return errorf("query {} must be of rank 3", shapeText(q.shape()));
  g.batch = q.shape()[0], g.seq = q.shape()[1];
  const bool packed = !ctx.hasInput(1);
  const int64_t parts = packed ? g.heads + 2 * g.kvHeads : g.heads;
  if (q.shape()[2] % parts != 0) return errorf("query {}'s hidden size is not a multiple of {}", shapeText(q.shape()), parts);
  g.head = q.shape()[2] / parts;
  if (g.head <= 0 || g.head % 8 != 0) return errorf("the head size {} must be a positive multiple of 8", g.head);
  g.newKeys = g.seq;
  if (!packed) {
    const Shape &k = ctx.input(1).shape(), &v = ctx.input(2).shape();
    if (k.size() != 3 || k != v || k[0] != g.batch || k[2] != g.kvHeads * g.head)
      return errorf("key {} and value {} must be [{}, L, {}]", shapeText(k), shapeText(v), g.batch, g.kvHeads * g.head);
    g.newKeys = k[1];
  }
  if (ctx.hasInput(3)) {
    if (ctx.input(3).type() != q.type() || ctx.input(4).type() != q.type())
      return errorf("past_key and past_value must be {} like the query", shortName(q.type()));
    const Shape &pk = ctx.input(3).shape();
    if (pk.size() != 4 || pk != ctx.input(4).shape() || pk[0] != g.batch || pk[1] != g.kvHeads || pk[3] != g.head)
      return errorf("past_key {} and past_value {} must be [{}, {}, P, {}]", shapeText(pk), shapeText(ctx.input(4).shape()),
                    g.batch, g.kvHeads, g.head);
    g.past = pk[2];
  }
  if (g.newKeys != g.seq && !(g.newKeys == 0 && ctx.hasInput(3)))
    return errorf("key has {} positions for {} queries", g.newKeys, g.seq);
  SF_ASSIGN(g.seqlens, ints(ctx.input(5)));
  SF_ASSIGN(auto total, ints(ctx.input(6)));
  if (int64_t(g.seqlens.size()) != g.batch) return errorf("seqlens_k has {} values for a batch of {}", g.seqlens.size(), g.batch);
  if (total.size() != 1 || total[0] <= 0) return errorf("total_sequence_length must be one positive value");
  g.total = total[0];
  g.present = std::max(g.total, g.past);
  if (g.newKeys == 0 && g.total > g.past)
    return errorf("total_sequence_length {} exceeds the {} rows of the shared past", g.total, g.past);
  g.firstPrompt = g.seq == g.total;
  if (g.seq > 1 && !g.firstPrompt && g.batch != 1)
    return errorf("a batch of {} with {} new tokens and a past (total {}): onnxruntime takes batch 1 then", g.batch, g.seq, g.total);
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t n = g.seqlens[size_t(b)];
    if (n < 0 || n >= g.present) return errorf("seqlens_k[{}] = {} is outside [0, {})", b, n, g.present);
    if (!g.firstPrompt && n + 1 < g.seq) return errorf("seqlens_k[{}] = {} is too small for {} new tokens", b, n, g.seq);
    if (ctx.hasInput(3) && g.newKeys != 0 && !g.firstPrompt && n + 1 - g.seq > g.past)
      return errorf("seqlens_k[{}] = {} needs {} past rows; the past has {}", b, n, n + 1 - g.seq, g.past);
    // Keys shared with another layer (no new ones): every key is in the past.
    if (g.newKeys == 0 && n + 1 > g.past)
      return errorf("seqlens_k[{}] = {} reads past the {} rows of the shared past", b, n, g.past);
  }
  return g;
}

/// Q [B, N, S, H] and the new K and V [B, Nk, L, H], from BSNH inputs (or the packed query's
/// heads: N of Q, Nk of K, Nk of V).
struct GqaHeads {
  std::vector<double> q, k, v;
};

Result<GqaHeads> gqaHeads(EvalContext &ctx, const Gqa &g) {
  const int64_t B = g.batch, S = g.seq, N = g.heads, Nk = g.kvHeads, H = g.head, L = g.newKeys;
  const bool packed = !ctx.hasInput(1);
  SF_TRY(ctx.admit(ElementType::F64, Shape{B, N + 2 * Nk, std::max(S, g.present), H}));
  SF_ASSIGN(auto qv, doubles(ctx.input(0)));
  GqaHeads r;
  r.q.resize(static_cast<size_t>(B * N * S * H));
  r.k.resize(static_cast<size_t>(B * Nk * L * H));
  r.v.resize(r.k.size());
  const int64_t qRow = packed ? (N + 2 * Nk) * H : N * H;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < H; ++d) {
        const size_t base = size_t((b * S + s) * qRow);
        for (int64_t h = 0; h < N; ++h) r.q[size_t(((b * N + h) * S + s) * H + d)] = qv[base + size_t(h * H + d)];
        if (packed)
          for (int64_t h = 0; h < Nk; ++h) {
            r.k[size_t(((b * Nk + h) * L + s) * H + d)] = qv[base + size_t((N + h) * H + d)];
            r.v[size_t(((b * Nk + h) * L + s) * H + d)] = qv[base + size_t((N + Nk + h) * H + d)];
          }
      }
  if (packed) return r;
  SF_ASSIGN(auto kv, doubles(ctx.input(1)));
  SF_ASSIGN(auto vv, doubles(ctx.input(2)));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < L; ++s)
      for (int64_t h = 0; h < Nk; ++h)
        for (int64_t d = 0; d < H; ++d) {
          r.k[size_t(((b * Nk + h) * L + s) * H + d)] = kv[size_t(((b * L + s) * Nk + h) * H + d)];
          r.v[size_t(((b * Nk + h) * L + s) * H + d)] = vv[size_t(((b * L + s) * Nk + h) * H + d)];
        }
  return r;
}

/// do_rotary's caches and positions: each (batch row, query)'s position (position_ids; else in a
/// first prompt 0.., else after each row's past: seqlens_k + 1 - S + s), checked to be a row of
/// the caches [max_position, at most head / 2].
struct GqaRotary {
  std::vector<int64_t> positions; // B * S
  int64_t width = 0;              // the caches' columns: a rotated size of 2 * width
  bool interleaved = false;
};

Result<GqaRotary> gqaRotary(EvalContext &ctx, const Gqa &g) {
  GqaRotary r;
  SF_ASSIGN(int64_t interleaved, ctx.attrs().getInt("rotary_interleaved", 0));
  r.interleaved = interleaved != 0;
  if (!ctx.hasInput(7) || !ctx.hasInput(8)) return errorf("do_rotary needs cos_cache and sin_cache");
  const Shape &cs = ctx.input(7).shape();
  if (cs.size() != 2 || cs != ctx.input(8).shape() || 2 * cs[1] > g.head)
    return errorf("cos_cache {} and sin_cache {} must be [max_position, at most {}]", shapeText(cs),
                  shapeText(ctx.input(8).shape()), g.head / 2);
  r.width = cs[1];
  std::vector<int64_t> ids;
  if (ctx.hasInput(9)) {
    const Shape &ps = ctx.input(9).shape();
    if (ps.size() != 2 || ps[0] != g.batch || ps[1] < g.seq)
      return errorf("position_ids {} must be [{}, at least {}]", shapeText(ps), g.batch, g.seq);
    SF_ASSIGN(ids, ints(ctx.input(9)));
  }
  const int64_t S = g.seq;
  r.positions.resize(size_t(g.batch * S));
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t s = 0; s < S; ++s) {
      int64_t pos = g.firstPrompt ? s : g.seqlens[size_t(b)] + 1 - S + s;
      if (!ids.empty()) {
        const int64_t first = ids[0];
        if (g.firstPrompt && (first < 0 || first >= cs[0])) return errorf("position {} is outside the rotary cache of {}", first, cs[0]);
        pos = g.firstPrompt ? first + s : ids[size_t(b * ctx.input(9).shape()[1] + s)];
      }
      if (pos < 0 || pos >= cs[0]) return errorf("position {} is outside the rotary cache of {}", pos, cs[0]);
      r.positions[size_t(b * S + s)] = pos;
    }
  return r;
}

/// do_rotary: queries [B, N, S, H] and new keys [B, Nk, L, H] rotated at their positions.
Result<void> gqaRotate(EvalContext &ctx, const Gqa &g, GqaHeads &x) {
  SF_ASSIGN(const GqaRotary r, gqaRotary(ctx, g));
  SF_ASSIGN(auto cosv, doubles(ctx.input(7)));
  SF_ASSIGN(auto sinv, doubles(ctx.input(8)));
  const int64_t S = g.seq, H = g.head;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t pos = r.positions[size_t(b * S + s)];
      const double *c = &cosv[size_t(pos * r.width)], *n = &sinv[size_t(pos * r.width)];
      for (int64_t h = 0; h < g.heads; ++h) {
        double *q = &x.q[size_t(((b * g.heads + h) * S + s) * H)];
        rotatePairs(q, q, 2 * r.width, r.interleaved, c, n);
      }
      if (s < g.newKeys)
        for (int64_t h = 0; h < g.kvHeads; ++h) {
          double *k = &x.k[size_t(((b * g.kvHeads + h) * g.newKeys + s) * H)];
          rotatePairs(k, k, 2 * r.width, r.interleaved, c, n);
        }
    }
  return success();
}

/// present_key and present_value [B, Nk, C, H]: each row's valid past (none in a first prompt;
/// all its keys when the new keys are shared, L = 0), then its new keys; zeros elsewhere. Also
/// each row's past as the causal mask counts it.
struct GqaPresent {
  std::vector<double> k, v;
  std::vector<int64_t> causalPast;
};

/// Batch row b's present: its past rows kept (none in a first prompt; all its keys when the new
/// keys are shared, L = 0), and its past as the causal mask counts it.
struct GqaRow {
  int64_t pastRows = 0, causalPast = 0;
};

Result<GqaRow> gqaRow(const Gqa &g, int64_t b, bool hasPast) {
  const int64_t total = g.seqlens[size_t(b)] + 1, S = g.seq, L = g.newKeys;
  GqaRow r;
  r.pastRows = !hasPast ? 0 : L == 0 ? total : g.firstPrompt ? 0 : total - S;
  r.causalPast = !hasPast || g.firstPrompt ? 0 : total - S;
  if (r.pastRows + L > g.present)
    return errorf("batch row {}: {} past and {} new keys overflow the present's {}", b, r.pastRows, L, g.present);
  return r;
}

Result<GqaPresent> gqaPresent(EvalContext &ctx, const Gqa &g, const GqaHeads &x) {
  const int64_t B = g.batch, Nk = g.kvHeads, H = g.head, L = g.newKeys, C = g.present;
  const bool hasPast = ctx.hasInput(3);
  std::vector<double> pk, pv;
  if (hasPast) {
    SF_ASSIGN(pk, doubles(ctx.input(3)));
    SF_ASSIGN(pv, doubles(ctx.input(4)));
  }
  GqaPresent p;
  p.k.resize(static_cast<size_t>(B * Nk * C * H));
  p.v.resize(p.k.size());
  p.causalPast.resize(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    SF_ASSIGN(const GqaRow rowOf, gqaRow(g, b, hasPast));
    const int64_t pastRows = rowOf.pastRows;
    p.causalPast[size_t(b)] = rowOf.causalPast;
    for (int64_t h = 0; h < Nk; ++h)
      for (int64_t t = 0; t < pastRows + L; ++t)
        for (int64_t d = 0; d < H; ++d) {
          const size_t at = size_t(((b * Nk + h) * C + t) * H + d);
          const bool past = t < pastRows;
          const size_t from = past ? size_t(((b * Nk + h) * g.past + t) * H + d) : size_t(((b * Nk + h) * L + t - pastRows) * H + d);
          p.k[at] = past ? pk[from] : x.k[from];
          p.v[at] = past ? pv[from] : x.v[from];
        }
  }
  return p;
}

/// The attributes and inputs that shape GroupQueryAttention's scores, checked: scale (default
/// 1/sqrt(head)), softcap, local_window_size, causal, smooth_softmax; attention_bias's shape;
/// head_sink's count.
struct GqaScores {
  double scale = 1, softcap = 0;
  int64_t window = -1, causal = 1;
  bool smooth = false;
  Shape biasShape;
};

Result<GqaScores> gqaScores(EvalContext &ctx, const Gqa &g) {
  GqaScores o;
  SF_ASSIGN(o.scale, ctx.attrs().getFloat("scale", 0.0));
  if (o.scale == 0) o.scale = 1.0 / std::sqrt(double(g.head));
  SF_ASSIGN(o.softcap, ctx.attrs().getFloat("softcap", 0.0));
  SF_ASSIGN(o.window, ctx.attrs().getInt("local_window_size", -1));
  SF_ASSIGN(o.causal, ctx.attrs().getInt("causal", 1));
  SF_ASSIGN(int64_t smooth, ctx.attrs().getInt("smooth_softmax", 0));
  o.smooth = smooth != 0;
  const int64_t B = g.batch, S = g.seq, N = g.heads;
  if (ctx.hasInput(10)) {
    const Shape &bs = o.biasShape = ctx.input(10).shape();
    if (bs.size() != 4 || (bs[0] != 1 && bs[0] != B) || (bs[1] != 1 && bs[1] != N) || bs[2] != S || bs[3] != g.total)
      return errorf("attention_bias {} must be [{} or 1, {} or 1, {}, {}]", shapeText(bs), B, N, S, g.total);
    for (int64_t b = 0; b < B; ++b)
      if (g.seqlens[size_t(b)] + 1 > bs[3])
        return errorf("seqlens_k[{}] = {} exceeds the attention_bias's {} keys", b, g.seqlens[size_t(b)], bs[3]);
  }
  if (ctx.hasInput(11) && ctx.input(11).elementCount() != N)
    return errorf("head_sink has {} values for {} heads", ctx.input(11).elementCount(), N);
  return o;
}

/// The attention: each query row against its row's keys, causally (a local window when
/// local_window_size >= 0), scaled, soft-capped, plus attention_bias, a softmax (with a sink:
/// smooth_softmax or head_sink), over the values; [B, S, N * H].
Result<std::vector<double>> gqaAttend(EvalContext &ctx, const Gqa &g, const GqaHeads &x, const GqaPresent &p) {
  SF_ASSIGN(const GqaScores o, gqaScores(ctx, g));
  const double scale = o.scale, softcap = o.softcap;
  const int64_t window = o.window, causal = o.causal;
  const int64_t B = g.batch, S = g.seq, N = g.heads, Nk = g.kvHeads, H = g.head, C = g.present;
  std::vector<double> bias, sinks;
  const Shape &bs = o.biasShape;
  if (ctx.hasInput(10)) {
    SF_ASSIGN(bias, doubles(ctx.input(10)));
  }
  if (ctx.hasInput(11)) {
    SF_ASSIGN(sinks, doubles(ctx.input(11)));
  }
  const bool sink = o.smooth || !sinks.empty();
  std::vector<double> y(static_cast<size_t>(B * S * N * H)), row(static_cast<size_t>(C));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < N; ++h) {
      const int64_t kh = h / (N / Nk), total = g.seqlens[size_t(b)] + 1;
      const double sinkValue = sinks.empty() ? 0.0 : sinks[size_t(h)];
      for (int64_t s = 0; s < S; ++s) {
        // The window ends at the row's position, past a padded row's keys too (onnxruntime's
        // kernel: a padded row may keep fewer keys than the window, or none).
        const int64_t position = p.causalPast[size_t(b)] + s + 1;
        const int64_t end = causal ? std::min(position, total) : total;
        const int64_t start = window >= 0 && position > window ? position - window : 0;
        double top = sink ? sinkValue : -std::numeric_limits<double>::infinity();
        for (int64_t t = start; t < end; ++t) {
          double v = 0;
          for (int64_t d = 0; d < H; ++d)
            v += x.q[size_t(((b * N + h) * S + s) * H + d)] * p.k[size_t(((b * Nk + kh) * C + t) * H + d)];
          v *= scale;
          if (softcap > 0) v = softcap * std::tanh(v / softcap);
          if (!bias.empty())
            v += bias[size_t((((bs[0] == 1 ? 0 : b) * bs[1] + (bs[1] == 1 ? 0 : h)) * bs[2] + s) * bs[3] + t)];
          top = std::max(top, row[size_t(t)] = v);
        }
        double sum = sink ? std::exp(sinkValue - top) : 0.0;
        for (int64_t t = start; t < end; ++t) sum += (row[size_t(t)] = std::exp(row[size_t(t)] - top));
        for (int64_t d = 0; d < H; ++d) {
          double acc = 0;
          for (int64_t t = start; t < end; ++t) acc += row[size_t(t)] * p.v[size_t(((b * Nk + kh) * C + t) * H + d)];
          y[size_t(((b * S + s) * N + h) * H + d)] = end > start ? acc / sum : 0.0;
        }
      }
    }
  return y;
}

/// Whether GroupQueryAttention runs in f32: the query (so the past), the key and value, the
/// rotary caches, attention_bias and head_sink all f32.
bool gqaInF32(EvalContext &ctx) {
  for (size_t i : {0, 1, 2, 3, 4, 7, 8, 10, 11})
    if ((i == 0 || ctx.hasInput(i)) && ctx.input(i).type() != ElementType::F32) return false;
  return true;
}

/// GroupQueryAttention in f32 (attendF32): what the f64 functions above compute, the present
/// caches written straight into the outputs.
Result<void> gqaF32(EvalContext &ctx, const Gqa &g, bool rotary) {
  const int64_t B = g.batch, S = g.seq, N = g.heads, Nk = g.kvHeads, H = g.head, L = g.newKeys, C = g.present;
  const bool packed = !ctx.hasInput(1), hasPast = ctx.hasInput(3);
  SF_ASSIGN(const GqaScores o, gqaScores(ctx, g));
  std::optional<GqaRotary> rot;
  if (rotary) {
    SF_ASSIGN(rot, gqaRotary(ctx, g));
  }
  std::vector<GqaRow> rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    SF_ASSIGN(rows[size_t(b)], gqaRow(g, b, hasPast));
  }
  SF_TRY(ctx.admit(ElementType::F32, Shape{std::max(S, N / Nk), C}));
  // The queries as [B, S, N, H], rotated; the new keys and values read where they are.
  Elements<float> qe(ctx.input(0));
  const int64_t qRow = packed ? (N + 2 * Nk) * H : N * H;
  std::vector<float> q(size_t(B * S * N * H));
  for (int64_t r = 0; r < B * S; ++r) copyBytes(&q[size_t(r * N * H)], qe.data() + r * qRow, size_t(N * H) * sizeof(float));
  std::optional<Elements<float>> ke, ve, pke, pve, cosE, sinE;
  if (!packed) ke.emplace(ctx.input(1)), ve.emplace(ctx.input(2));
  if (hasPast) pke.emplace(ctx.input(3)), pve.emplace(ctx.input(4));
  if (rotary) cosE.emplace(ctx.input(7)), sinE.emplace(ctx.input(8));
  auto newKey = [&](int64_t b, int64_t s, int64_t h, bool value) -> const float * {
    if (packed) return qe.data() + (b * S + s) * qRow + (N + (value ? Nk : 0) + h) * H;
    return (value ? *ve : *ke).data() + ((b * L + s) * Nk + h) * H;
  };
  // The present caches [B, Nk, C, H]: each row's past, its new keys; zeros after them.
  const Shape presentShape{B, Nk, C, H};
  Output<float> pk(ctx, ElementType::F32, presentShape, 1), pv(ctx, ElementType::F32, presentShape, 2);
  std::vector<float> scratchK, scratchV;
  float *kp = nullptr, *vp = nullptr;
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(kp, pk.make());
  } else {
    scratchK.assign(size_t(B * Nk * C * H), 0.0f);
    kp = scratchK.data();
  }
  if (ctx.numOutputs() > 2) {
    SF_ASSIGN(vp, pv.make());
  } else {
    scratchV.assign(size_t(B * Nk * C * H), 0.0f);
    vp = scratchV.data();
  }
  const size_t rowBytes = size_t(H) * sizeof(float);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Nk; ++h) {
      const int64_t pastRows = rows[size_t(b)].pastRows, at = (b * Nk + h) * C * H, from = (b * Nk + h) * g.past * H;
      if (pastRows > 0) {
        copyBytes(kp + at, pke->data() + from, size_t(pastRows) * rowBytes);
        copyBytes(vp + at, pve->data() + from, size_t(pastRows) * rowBytes);
      }
      for (int64_t t = 0; t < L; ++t) {
        copyBytes(kp + at + (pastRows + t) * H, newKey(b, t, h, false), rowBytes);
        copyBytes(vp + at + (pastRows + t) * H, newKey(b, t, h, true), rowBytes);
      }
    }
  if (rot)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t pos = rot->positions[size_t(b * S + s)];
        const float *c = cosE->data() + pos * rot->width, *n = sinE->data() + pos * rot->width;
        for (int64_t h = 0; h < N; ++h) {
          float *x = &q[size_t(((b * S + s) * N + h) * H)];
          rotatePairs(x, x, 2 * rot->width, rot->interleaved, c, n);
        }
        if (s < L)
          for (int64_t h = 0; h < Nk; ++h) {
            float *x = kp + ((b * Nk + h) * C + rows[size_t(b)].pastRows + s) * H;
            rotatePairs(x, x, 2 * rot->width, rot->interleaved, c, n);
          }
      }
  std::optional<Elements<float>> biasE, sinkE;
  if (ctx.hasInput(10)) biasE.emplace(ctx.input(10));
  if (ctx.hasInput(11)) sinkE.emplace(ctx.input(11));
  Output<float> yo(ctx, ElementType::F32, Shape{B, S, N * H}, 0);
  SF_ASSIGN(float *yp, yo.makeForOverwrite());
  const F32Heads Q{q.data(), S * N * H, H, N * H}, K{kp, Nk * C * H, C * H, H}, V{vp, Nk * C * H, C * H, H},
      Y{yp, S * N * H, H, N * H};
  const Shape &bs = o.biasShape;
  const float softcap = float(o.softcap);
  const bool sink = o.smooth || sinkE;
  attendF32(AttendSizes{B, N, Nk, S, C, H, H, float(o.scale)}, Q, K, V, Y, [&](int64_t b, int64_t h, int64_t s, float *row, int64_t) {
    const int64_t total = g.seqlens[size_t(b)] + 1;
    const int64_t position = rows[size_t(b)].causalPast + s + 1; // the window ends here (above)
    const int64_t end = o.causal ? std::min(position, total) : total;
    const int64_t start = o.window >= 0 && position > o.window ? position - o.window : 0;
    const float *biasRow =
        biasE ? biasE->data() + (((bs[0] == 1 ? 0 : b) * bs[1] + (bs[1] == 1 ? 0 : h)) * bs[2] + s) * bs[3] : nullptr;
    for (int64_t t = start; t < end; ++t) {
      float v = row[t];
      if (softcap > 0) v = softcap * std::tanh(v / softcap);
      if (biasRow) v += biasRow[t];
      row[t] = v;
    }
    return KeptKeys{start, end, sink, sinkE ? (*sinkE)[size_t(h)] : 0.0f};
  }, [&](int64_t b, int64_t end) {
    // The keys the rows before `end` read: their row's total, fewer under the causal rule.
    const int64_t total = g.seqlens[size_t(b)] + 1;
    return o.causal ? std::min(rows[size_t(b)].causalPast + end, total) : total;
  });
  SF_TRY(yo.finish(0));
  if (ctx.numOutputs() > 1) SF_TRY(pk.finish(1));
  if (ctx.numOutputs() > 2) SF_TRY(pv.finish(2));
  return success();
}

/// GroupQueryAttention (onnxruntime's CPU semantics): the heads, rotated (do_rotary), written
/// into the present caches, attended; output [B, S, num_heads * head] and the present caches.
Result<void> groupQueryAttention(EvalContext &ctx) {
  SF_ASSIGN(Gqa g, gqaSizes(ctx));
  SF_ASSIGN(int64_t qkOutput, ctx.attrs().getInt("qk_output", 0));
  if (qkOutput != 0) return errorf("qk_output {} is not supported", qkOutput);
  SF_ASSIGN(int64_t rotary, ctx.attrs().getInt("do_rotary", 0));
  if (gqaInF32(ctx)) return gqaF32(ctx, g, rotary != 0);
  SF_ASSIGN(GqaHeads x, gqaHeads(ctx, g));
  if (rotary) {
    SF_TRY(gqaRotate(ctx, g, x));
  }
  SF_ASSIGN(GqaPresent p, gqaPresent(ctx, g, x));
  SF_ASSIGN(auto y, gqaAttend(ctx, g, x, p));
  const ElementType type = ctx.input(0).type(), cacheType = ctx.hasInput(3) ? ctx.input(3).type() : type;
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(type, Shape{g.batch, g.seq, g.heads * g.head}, y));
  SF_TRY(ctx.setOutput(0, std::move(out)));
  const Shape present{g.batch, g.kvHeads, g.present, g.head};
  for (size_t i : {size_t(1), size_t(2)})
    if (ctx.numOutputs() > i) {
      SF_ASSIGN(Tensor t, Tensor::fromDoubles(cacheType, present, i == 1 ? p.k : p.v));
      SF_TRY(ctx.setOutput(i, std::move(t)));
    }
  return success();
}

} // namespace

Result<void> registerContribGqaKernels(OpRegistry &r) {
  return setKernel(r, "GroupQueryAttention", groupQueryAttention, kMs);
}

} // namespace sf::eval::detail
