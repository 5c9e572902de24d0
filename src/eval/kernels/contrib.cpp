// Kernels of onnxruntime's contrib ops (rules in src/ops/contrib.cpp) that decoders written by
// onnxruntime-genai's model builder run: SimplifiedLayerNormalization (default domain),
// SkipSimplifiedLayerNormalization, SkipLayerNormalization, MatMulNBits and GroupQueryAttention
// (com.microsoft), with onnxruntime 1.30's CPU semantics. They compute in double.
#include "../kernel_util.h"
#include "quantized.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>
#include <limits>

namespace sf::eval::detail {
namespace {

constexpr const char *kMs = "com.microsoft";

/// A row of `n` values normalised: by the root mean square (`rms`), else by the mean and the
/// standard deviation; times gamma, plus beta when given. Returns 1 / the divisor (and the mean).
double normalizeRow(const double *x, int64_t n, bool rms, double eps, const std::vector<double> &gamma,
                    const std::vector<double> *beta, double *y, double *mean) {
  double m = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) m += x[i], sq += x[i] * x[i];
  m /= double(n);
  const double var = rms ? sq / double(n) : std::max(sq / double(n) - m * m, 0.0);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) {
    double v = (rms ? x[i] : x[i] - m) * inv * gamma[size_t(i)];
    y[i] = beta ? v + (*beta)[size_t(i)] : v;
  }
  if (mean) *mean = rms ? 0.0 : m;
  return inv;
}

/// A per-hidden-element parameter (gamma, beta, bias): `hidden` values.
Result<std::vector<double>> hiddenParam(EvalContext &ctx, size_t i, int64_t hidden, const char *name) {
  SF_ASSIGN(auto v, doubles(ctx.input(i)));
  if (int64_t(v.size()) != hidden) return errorf("{} has {} values for a hidden size of {}", name, v.size(), hidden);
  return v;
}

/// SimplifiedLayerNormalization (X, scale): X / sqrt(mean(X^2) + epsilon) * scale over the axes
/// from `axis` on; output 1, inv_std_var (float), one per row.
Result<void> simplifiedLayerNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, x.shape().size()));
  int64_t rows = 1, n = 1;
  for (size_t d = 0; d < x.shape().size(); ++d) (d < axis ? rows : n) *= x.shape()[d];
  if (n < 1) return errorf("X {} has nothing to normalise from axis {}", shapeText(x.shape()), axisAttr);
  SF_ASSIGN(auto scale, doubles(ctx.input(1)));
  if (scale.size() == 1) scale.assign(size_t(n), scale[0]);
  if (int64_t(scale.size()) != n)
    return errorf("scale {} does not match X {} from axis {}", shapeText(ctx.input(1).shape()), shapeText(x.shape()), axisAttr);
  SF_ASSIGN(auto xs, doubles(x));
  std::vector<double> y(xs.size()), inv(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    inv[size_t(r)] = normalizeRow(&xs[size_t(r * n)], n, true, eps, scale, nullptr, &y[size_t(r * n)], nullptr);
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(ctx.input(1).type(), x.shape(), y));
  SF_TRY(ctx.setOutput(0, std::move(out)));
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::F32, statsShape(x.shape(), axis), inv));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  return success();
}

/// SkipLayerNormalization and SkipSimplifiedLayerNormalization: v = input + skip (+ bias), the
/// skip repeated over the rows when it has fewer (a 3-D input's (1, S, H) or (S, H)); output 0
/// v normalised over its last axis (times gamma, plus beta), 1 the mean, 2 1 / the deviation
/// (float, a value per row), 3 v.
Result<void> skipLayerNorm(EvalContext &ctx, bool rms) {
  const Tensor &x = ctx.input(0), &skip = ctx.input(1);
  const Shape &s = x.shape();
  if (s.size() != 2 && s.size() != 3) return errorf("input {} must be of rank 2 or 3", shapeText(s));
  const int64_t hidden = s.back(), rows = countOf(s) / std::max<int64_t>(hidden, 1);
  const Shape &k = skip.shape();
  if (k.empty() || k.back() != hidden || countOf(k) == 0 || rows % (countOf(k) / hidden) != 0 ||
      (k.size() >= 2 && s.size() >= 2 && k[k.size() - 2] != s[s.size() - 2]))
    return errorf("skip {} does not match input {}", shapeText(k), shapeText(s));
  SF_ASSIGN(auto gamma, hiddenParam(ctx, 2, hidden, "gamma"));
  std::vector<double> beta, bias;
  const size_t biasAt = rms ? 3 : 4;
  if (!rms && ctx.hasInput(3)) {
    SF_ASSIGN(beta, hiddenParam(ctx, 3, hidden, "beta"));
  }
  if (ctx.hasInput(biasAt)) {
    SF_ASSIGN(bias, hiddenParam(ctx, biasAt, hidden, "bias"));
  }
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-12));
  SF_ASSIGN(auto xs, doubles(x));
  SF_ASSIGN(auto ks, doubles(skip));
  const int64_t skipRows = int64_t(ks.size()) / hidden;
  std::vector<double> sum(xs.size()), y(xs.size()), mean(static_cast<size_t>(rows)), inv(mean.size());
  for (int64_t r = 0; r < rows; ++r) {
    double *v = &sum[size_t(r * hidden)];
    for (int64_t i = 0; i < hidden; ++i)
      v[i] = xs[size_t(r * hidden + i)] + ks[size_t((r % skipRows) * hidden + i)] + (bias.empty() ? 0.0 : bias[size_t(i)]);
    inv[size_t(r)] = normalizeRow(v, hidden, rms, eps, gamma, beta.empty() ? nullptr : &beta, &y[size_t(r * hidden)],
                                  &mean[size_t(r)]);
  }
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(x.type(), s, y));
  SF_TRY(ctx.setOutput(0, std::move(out)));
  const Shape stats = statsShape(s, s.size() - 1);
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::F32, stats, mean));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  if (ctx.numOutputs() > 2) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::F32, stats, inv));
    SF_TRY(ctx.setOutput(2, std::move(t)));
  }
  if (ctx.numOutputs() > 3) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), s, sum));
    SF_TRY(ctx.setOutput(3, std::move(t)));
  }
  return success();
}

/// The [N, K] weights of a MatMulNBits, dequantized: element k of row n is (q - zero point) *
/// scale of its block (block k / block_size, or g_idx[k]); q's bits are read low bits first
/// from B [N, blocks, block_size * bits / 8]; the zero point is packed like B (uint8), or of the
/// scales' type, or 2^(bits - 1) when absent.
Result<std::vector<double>> dequantizeNBits(EvalContext &ctx, int64_t K, int64_t N, int64_t bits, int64_t block) {
  const int64_t blocks = (K + block - 1) / block, blob = block * bits / 8;
  const Tensor &b = ctx.input(1);
  auto bytes = checkedMul(N, blocks);
  if (bytes) bytes = checkedMul(*bytes, blob);
  if (!bytes) return errorf("N {} and K {} overflow", N, K);
  if (b.type() != ElementType::U8 || countOf(b.shape()) != *bytes)
    return errorf("B {} must be uint8 [{}, {}, {}] (N, K in blocks of {}, the bytes of a block)", shapeText(b.shape()), N,
                  blocks, blob, block);
  SF_ASSIGN(auto scales, doubles(ctx.input(2)));
  if (int64_t(scales.size()) != N * blocks)
    return errorf("scales {} must hold {} values (N x blocks)", shapeText(ctx.input(2).shape()), N * blocks);
  const int64_t mask = (int64_t(1) << bits) - 1, zpRow = (blocks * bits + 7) / 8;
  std::vector<double> zp;
  bool packedZp = false;
  if (ctx.hasInput(3)) {
    const Tensor &z = ctx.input(3);
    packedZp = z.type() == ElementType::U8;
    if (packedZp && countOf(z.shape()) != N * zpRow)
      return errorf("zero_points {} must hold {} bytes (N x {})", shapeText(z.shape()), N * zpRow, zpRow);
    if (!packedZp && countOf(z.shape()) != N * blocks)
      return errorf("zero_points {} must hold {} values (N x blocks)", shapeText(z.shape()), N * blocks);
    SF_ASSIGN(zp, doubles(z));
  }
  std::vector<int64_t> gIdx;
  if (ctx.hasInput(4)) {
    SF_ASSIGN(gIdx, ints(ctx.input(4)));
    if (int64_t(gIdx.size()) < K) return errorf("g_idx has {} values for K = {}", gIdx.size(), K);
    for (int64_t g : gIdx)
      if (g < 0 || g >= blocks) return errorf("g_idx value {} is outside 0..{}", g, blocks - 1);
  }
  const uint8_t *q = reinterpret_cast<const uint8_t *>(b.bytes().data());
  SF_TRY(ctx.admit(ElementType::F64, Shape{N, K}));
  std::vector<double> w(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t kb = gIdx.empty() ? k / block : gIdx[size_t(k)], bit = (k % block) * bits;
      const int64_t v = (q[size_t((n * blocks + k / block) * blob + bit / 8)] >> (bit % 8)) & mask;
      double z = double(int64_t(1) << (bits - 1));
      if (!zp.empty() && packedZp) {
        const int64_t zbit = kb * bits;
        z = double((int64_t(zp[size_t(n * zpRow + zbit / 8)]) >> (zbit % 8)) & mask);
      } else if (!zp.empty()) {
        z = zp[size_t(n * blocks + kb)];
      }
      w[size_t(n * K + k)] = (double(v) - z) * scales[size_t(n * blocks + kb)];
    }
  return w;
}

/// accuracy_level 4: onnxruntime quantizes A to int8 per row and per block of `block` along K
/// (symmetric: a scale of max|a| / 127 in float, each element rounded to the nearest step) and
/// multiplies those steps; the same values, dequantized.
void quantizeRowsToInt8(std::vector<double> &av, int64_t K, int64_t block) {
  for (size_t row = 0; row + size_t(K) <= av.size(); row += size_t(K))
    for (int64_t k0 = 0; k0 < K; k0 += block) {
      const int64_t k1 = std::min(K, k0 + block);
      float amax = 0;
      for (int64_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(float(av[row + size_t(k)])));
      const float scale = amax / 127.0f;
      for (int64_t k = k0; k < k1; ++k) {
        double &x = av[row + size_t(k)];
        x = scale == 0 ? 0.0 : double(std::round(float(x) / scale) * scale);
      }
    }
}

/// MatMulNBits (A [..., K], B quantized to `bits` in blocks along K): A times the dequantized
/// weights transposed, plus bias: [..., N]; with accuracy_level 4, A first quantized to int8 as
/// onnxruntime does.
Result<void> matMulNBits(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t K, ctx.attrs().getInt("K"));
  SF_ASSIGN(int64_t N, ctx.attrs().getInt("N"));
  SF_ASSIGN(int64_t bits, ctx.attrs().getInt("bits", 4));
  SF_ASSIGN(int64_t block, ctx.attrs().getInt("block_size"));
  if (bits != 2 && bits != 4 && bits != 8) return errorf("bits is {}; 2, 4 or 8 expected", bits);
  if (block != 16 && block != 32 && block != 64 && block != 128 && block != 256)
    return errorf("block_size {} is not 16, 32, 64, 128 or 256 (what onnxruntime runs)", block);
  if (K <= 0 || N <= 0 || K > (int64_t(1) << 40) || N > (int64_t(1) << 40))
    return errorf("K ({}) and N ({}) must be positive sizes", K, N);
  if (a.shape().empty() || a.shape().back() != K) return errorf("A {} must end in K = {}", shapeText(a.shape()), K);
  SF_ASSIGN(auto w, dequantizeNBits(ctx, K, N, bits, block));
  std::vector<double> bias;
  if (ctx.hasInput(5)) {
    SF_ASSIGN(bias, hiddenParam(ctx, 5, N, "bias"));
  }
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(int64_t accuracy, ctx.attrs().getInt("accuracy_level", 0));
  if (accuracy == 4) quantizeRowsToInt8(av, K, block);
  const int64_t M = countOf(a.shape()) / K;
  Shape out = a.shape();
  out.back() = N;
  SF_TRY(ctx.admit(ElementType::F64, out));
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = bias.empty() ? 0.0 : bias[size_t(n)];
      const double *x = &av[size_t(m * K)], *wn = &w[size_t(n * K)];
      for (int64_t k = 0; k < K; ++k) acc += x[k] * wn[k];
      y[size_t(m * N + n)] = acc;
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(a.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// What a GroupQueryAttention node is given, read once.
struct Gqa {
  int64_t batch = 0, seq = 0, heads = 0, kvHeads = 0, head = 0, newKeys = 0, past = 0, present = 0, total = 0;
  bool firstPrompt = false;
  std::vector<int64_t> seqlens; // per batch row: the keys it attends to, minus 1
};

/// Rotates pairs of `x`'s first `rotary` features of one head by the angles of `position`
/// (cos/sin caches [max_position, rotary / 2]); halves apart, or neighbours when interleaved.
void rotate(double *x, int64_t rotary, bool interleaved, const double *cos, const double *sin) {
  const int64_t half = rotary / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    const double x1 = x[a], x2 = x[b];
    x[a] = x1 * cos[i] - x2 * sin[i];
    x[b] = x2 * cos[i] + x1 * sin[i];
  }
}

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

/// do_rotary: queries and new keys rotated at their positions (position_ids; else in a first
/// prompt 0.., else after each row's past: seqlens_k + 1 - S + s).
Result<void> gqaRotate(EvalContext &ctx, const Gqa &g, GqaHeads &x) {
  SF_ASSIGN(int64_t interleaved, ctx.attrs().getInt("rotary_interleaved", 0));
  if (!ctx.hasInput(7) || !ctx.hasInput(8)) return errorf("do_rotary needs cos_cache and sin_cache");
  const Shape &cs = ctx.input(7).shape();
  if (cs.size() != 2 || cs != ctx.input(8).shape() || 2 * cs[1] > g.head)
    return errorf("cos_cache {} and sin_cache {} must be [max_position, at most {}]", shapeText(cs),
                  shapeText(ctx.input(8).shape()), g.head / 2);
  SF_ASSIGN(auto cosv, doubles(ctx.input(7)));
  SF_ASSIGN(auto sinv, doubles(ctx.input(8)));
  std::vector<int64_t> ids;
  if (ctx.hasInput(9)) {
    const Shape &ps = ctx.input(9).shape();
    if (ps.size() != 2 || ps[0] != g.batch || ps[1] < g.seq)
      return errorf("position_ids {} must be [{}, at least {}]", shapeText(ps), g.batch, g.seq);
    SF_ASSIGN(ids, ints(ctx.input(9)));
  }
  const int64_t S = g.seq, H = g.head;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t s = 0; s < S; ++s) {
      int64_t pos = g.firstPrompt ? s : g.seqlens[size_t(b)] + 1 - S + s;
      if (!ids.empty()) {
        const int64_t first = ids[0];
        if (g.firstPrompt && (first < 0 || first >= cs[0])) return errorf("position {} is outside the rotary cache of {}", first, cs[0]);
        pos = g.firstPrompt ? first + s : ids[size_t(b * ctx.input(9).shape()[1] + s)];
      }
      if (pos < 0 || pos >= cs[0]) return errorf("position {} is outside the rotary cache of {}", pos, cs[0]);
      const double *c = &cosv[size_t(pos * cs[1])], *n = &sinv[size_t(pos * cs[1])];
      for (int64_t h = 0; h < g.heads; ++h) rotate(&x.q[size_t(((b * g.heads + h) * S + s) * H)], 2 * cs[1], interleaved, c, n);
      if (s < g.newKeys)
        for (int64_t h = 0; h < g.kvHeads; ++h)
          rotate(&x.k[size_t(((b * g.kvHeads + h) * g.newKeys + s) * H)], 2 * cs[1], interleaved, c, n);
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

Result<GqaPresent> gqaPresent(EvalContext &ctx, const Gqa &g, const GqaHeads &x) {
  const int64_t B = g.batch, S = g.seq, Nk = g.kvHeads, H = g.head, L = g.newKeys, C = g.present;
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
    const int64_t total = g.seqlens[size_t(b)] + 1;
    const int64_t pastRows = !hasPast ? 0 : L == 0 ? total : g.firstPrompt ? 0 : total - S;
    p.causalPast[size_t(b)] = !hasPast || g.firstPrompt ? 0 : total - S;
    if (pastRows + L > C) return errorf("batch row {}: {} past and {} new keys overflow the present's {}", b, pastRows, L, C);
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

/// The attention: each query row against its row's keys, causally (a local window when
/// local_window_size >= 0), scaled, soft-capped, plus attention_bias, a softmax (with a sink:
/// smooth_softmax or head_sink), over the values; [B, S, N * H].
Result<std::vector<double>> gqaAttend(EvalContext &ctx, const Gqa &g, const GqaHeads &x, const GqaPresent &p) {
  SF_ASSIGN(double scale, ctx.attrs().getFloat("scale", 0.0));
  if (scale == 0) scale = 1.0 / std::sqrt(double(g.head));
  SF_ASSIGN(double softcap, ctx.attrs().getFloat("softcap", 0.0));
  SF_ASSIGN(int64_t window, ctx.attrs().getInt("local_window_size", -1));
  SF_ASSIGN(int64_t causal, ctx.attrs().getInt("causal", 1));
  SF_ASSIGN(int64_t smooth, ctx.attrs().getInt("smooth_softmax", 0));
  const int64_t B = g.batch, S = g.seq, N = g.heads, Nk = g.kvHeads, H = g.head, C = g.present;
  std::vector<double> bias, sinks;
  Shape bs;
  if (ctx.hasInput(10)) {
    bs = ctx.input(10).shape();
    if (bs.size() != 4 || (bs[0] != 1 && bs[0] != B) || (bs[1] != 1 && bs[1] != N) || bs[2] != S || bs[3] != g.total)
      return errorf("attention_bias {} must be [{} or 1, {} or 1, {}, {}]", shapeText(bs), B, N, S, g.total);
    for (int64_t b = 0; b < B; ++b)
      if (g.seqlens[size_t(b)] + 1 > bs[3])
        return errorf("seqlens_k[{}] = {} exceeds the attention_bias's {} keys", b, g.seqlens[size_t(b)], bs[3]);
    SF_ASSIGN(bias, doubles(ctx.input(10)));
  }
  if (ctx.hasInput(11)) {
    SF_ASSIGN(sinks, doubles(ctx.input(11)));
    if (int64_t(sinks.size()) != N) return errorf("head_sink has {} values for {} heads", sinks.size(), N);
  }
  const bool sink = smooth || !sinks.empty();
  std::vector<double> y(static_cast<size_t>(B * S * N * H)), row(static_cast<size_t>(C));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < N; ++h) {
      const int64_t kh = h / (N / Nk), total = g.seqlens[size_t(b)] + 1;
      const double sinkValue = sinks.empty() ? 0.0 : sinks[size_t(h)];
      for (int64_t s = 0; s < S; ++s) {
        const int64_t end = causal ? std::min(p.causalPast[size_t(b)] + s + 1, total) : total;
        const int64_t start = window >= 0 && end > window ? end - window : 0;
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

/// GroupQueryAttention (onnxruntime's CPU semantics): the heads, rotated (do_rotary), written
/// into the present caches, attended; output [B, S, num_heads * head] and the present caches.
Result<void> groupQueryAttention(EvalContext &ctx) {
  SF_ASSIGN(Gqa g, gqaSizes(ctx));
  SF_ASSIGN(int64_t qkOutput, ctx.attrs().getInt("qk_output", 0));
  if (qkOutput != 0) return errorf("qk_output {} is not supported", qkOutput);
  SF_ASSIGN(GqaHeads x, gqaHeads(ctx, g));
  SF_ASSIGN(int64_t rotary, ctx.attrs().getInt("do_rotary", 0));
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

/// RotaryEmbedding (com.microsoft): input (B, S, hidden) or (B, N, S, H); position_ids one
/// element (the first position, the others following it) or (B, S); cos_cache and sin_cache
/// (max_position, R/2) with R the rotated size (rotary_embedding_dim, else the head size); the
/// features past R copied. onnxruntime's checks: positions within the caches' rows.
Result<void> msRotaryEmbedding(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &pos = ctx.input(1), &cosCache = ctx.input(2), &sinCache = ctx.input(3);
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads", 0));
  SF_ASSIGN(int64_t rotary, ctx.attrs().getInt("rotary_embedding_dim", 0));
  SF_ASSIGN(int64_t interleaved, ctx.attrs().getInt("interleaved", 0));
  const Shape &s = x.shape(), &cs = cosCache.shape();
  if (s.size() != 3 && s.size() != 4) return errorf("input {} is not of rank 3 or 4", shapeText(s));
  if (cs.size() != 2 || cs != sinCache.shape())
    return errorf("cos_cache {} and sin_cache {} must be two equal (max_position, rotated half) shapes", shapeText(cs),
                  shapeText(sinCache.shape()));
  const int64_t B = s[0], S = s.size() == 4 ? s[2] : s[1], rows = cs[0], width = cs[1];
  int64_t N = 0, H = 0;
  if (s.size() == 4) {
    N = s[1], H = s[3];
  } else {
    H = rotary > 0 ? (heads > 0 ? s[2] / heads : 0) : 2 * width;
    N = heads > 0 ? heads : (H > 0 ? s[2] / H : 0);
    if (H <= 0 || N <= 0 || N * H != s[2])
      return errorf("input {} does not split into heads of {} (num_heads {})", shapeText(s), H, heads);
  }
  const int64_t R = rotary > 0 ? rotary : H;
  if (R > H || R % 2 != 0 || (width != R / 2 && width != H / 2))
    return errorf("a rotated size of {} in heads of {} with caches {}", R, H, shapeText(cs));
  SF_ASSIGN(auto pv, ints(pos));
  auto positionOf = [&](int64_t b, int64_t p) -> Result<int64_t> {
    int64_t v = pv.size() == 1 ? pv[0] + p : pv[size_t(b * S + p)];
    if (v < 0 || v >= rows) return errorf("position {} is outside the caches' {} rows", v, rows);
    return v;
  };
  if (pv.size() != 1 && int64_t(pv.size()) != B * S)
    return errorf("position_ids has {} values: one, or (batch, sequence) = {}", pv.size(), B * S);
  SF_ASSIGN(auto y, doubles(x));
  SF_ASSIGN(auto cv, doubles(cosCache));
  SF_ASSIGN(auto sv, doubles(sinCache));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t p = 0; p < S; ++p) {
      SF_ASSIGN(int64_t row, positionOf(b, p));
      for (int64_t n = 0; n < N; ++n) {
        const int64_t base = s.size() == 4 ? ((b * N + n) * S + p) * H : (b * S + p) * N * H + n * H;
        rotate(&y[size_t(base)], R, interleaved != 0, &cv[size_t(row * width)], &sv[size_t(row * width)]);
      }
    }
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(x.type(), s, y));
  return ctx.setOutput(0, std::move(out));
}

/// GatherBlockQuantized (com.microsoft): rows of quantized data gathered along axis 0 and
/// dequantized along the last axis in blocks: (q - zero_point) * scale. uint8 data packs 8/bits
/// values in each byte of its last axis (low bits first), the zero points likewise per row
/// (absent: 2^(bits - 1)); int4/uint4 data holds one value per element (absent zero point: 0).
/// The output takes the scales' type. onnxruntime's restriction kept: gather_axis 0, the
/// quantized axis the last.
Result<void> gatherBlockQuantized(EvalContext &ctx) {
  const Tensor &data = ctx.input(0), &indices = ctx.input(1), &scales = ctx.input(2);
  SF_ASSIGN(int64_t gatherAxis, ctx.attrs().getInt("gather_axis", 0));
  SF_ASSIGN(int64_t quantizeAxis, ctx.attrs().getInt("quantize_axis", 1));
  SF_ASSIGN(int64_t block, ctx.attrs().getInt("block_size", 128));
  SF_ASSIGN(int64_t bits, ctx.attrs().getInt("bits", 4));
  const Shape &ds = data.shape();
  const int64_t r = int64_t(ds.size());
  if (r < 2 || gatherAxis != 0 || (quantizeAxis != r - 1 && quantizeAxis != -1))
    return errorf("data {} with gather_axis {} and quantize_axis {}: this kernel gathers along 0 and "
                  "dequantizes along the last axis", shapeText(ds), gatherAxis, quantizeAxis);
  const bool packed = data.type() == ElementType::U8;
  if (packed ? (bits != 2 && bits != 4 && bits != 8) : bits != 4) return errorf("bits {} for {} data", bits, data.type());
  if (block < 16 || (block & (block - 1)) != 0) return errorf("block_size {} is not a power of 2 of at least 16", block);
  const int64_t comp = packed ? 8 / bits : 1, mask = (int64_t(1) << bits) - 1;
  const int64_t rowsOf = ds[0], stored = ds.back(), K = stored * comp, blocks = (K + block - 1) / block;
  int64_t inner = 1; // rows of the last axis within one gathered slice
  for (int64_t i = 1; i + 1 < r; ++i) inner *= ds[size_t(i)];
  if (scales.shape().size() != size_t(r) || scales.shape().back() != blocks)
    return errorf("scales {} must be {} with {} blocks in its last dim", shapeText(scales.shape()), shapeText(ds), blocks);
  SF_ASSIGN(auto q, ints(data));
  SF_ASSIGN(auto sc, doubles(scales));
  SF_ASSIGN(auto idx, ints(indices));
  std::vector<int64_t> zp;
  const int64_t zpRow = packed ? (blocks + comp - 1) / comp : blocks; // zero points per row, stored
  if (ctx.hasInput(3)) {
    SF_ASSIGN(zp, ints(ctx.input(3)));
    if (int64_t(zp.size()) != rowsOf * inner * zpRow)
      return errorf("zero_points {} for {} rows of {} blocks", shapeText(ctx.input(3).shape()), rowsOf * inner, blocks);
  }
  const int64_t defaultZp = packed ? int64_t(1) << (bits - 1) : 0;
  Shape out;
  for (int64_t d : indices.shape()) out.push_back(d);
  for (int64_t i = 1; i < r; ++i) out.push_back(ds[size_t(i)]);
  out.back() = K;
  SF_TRY(ctx.admit(scales.type(), out));
  std::vector<double> y;
  y.reserve(size_t(countOf(out)));
  for (int64_t i : idx) {
    if (i < -rowsOf || i >= rowsOf) return errorf("index {} is out of range for {} rows", i, rowsOf);
    const int64_t row = i < 0 ? i + rowsOf : i;
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t line = row * inner + j;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t stored1 = q[size_t(line * stored + k / comp)];
        const int64_t v = packed ? (stored1 >> (bits * (k % comp))) & mask : stored1;
        const int64_t b = k / block;
        int64_t z = defaultZp;
        if (!zp.empty()) {
          const int64_t zs = zp[size_t(line * zpRow + b / comp)];
          z = packed ? (zs >> (bits * (b % comp))) & mask : zs;
        }
        y.push_back(double(v - z) * sc[size_t(line * blocks + b)]);
      }
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(scales.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// Sizes and masks of attention over heads: B batches, N heads, S queries, T keys of which the
/// first P are a past cache, H the query and key head size, Hv the value's.
struct HeadsArgs {
  int64_t B, N, S, P, T, H, Hv;
  double scale = 1, filter = -10000.0; // filter: added to a masked score
  bool unidirectional = false;         // a key after the query's position is masked
  const std::vector<int64_t> *mask = nullptr; // (B): key lengths; (B, T) or (B, S, T): 0 masks
  Shape maskShape;
  const std::vector<double> *bias = nullptr; // (B|1, N|1, S, T), added to the scores
  Shape biasShape;
};

/// The sizes and the attributes MultiHeadAttention and Attention share: scale (default
/// 1/sqrt(H)), mask_filter_value, unidirectional.
Result<HeadsArgs> headsArgs(EvalContext &ctx, HeadsArgs a) {
  SF_ASSIGN(double scale, ctx.attrs().getFloat("scale", 0.0));
  SF_ASSIGN(a.filter, ctx.attrs().getFloat("mask_filter_value", -10000.0));
  SF_ASSIGN(int64_t unidirectional, ctx.attrs().getInt("unidirectional", 0));
  a.scale = scale != 0.0 ? scale : 1.0 / std::sqrt(double(a.H));
  a.unidirectional = unidirectional != 0;
  return a;
}

/// softmax(scale * Q K^T + masks + bias) V for Q (B, N, S, H), K (B, N, T, H), V (B, N, T, Hv):
/// (B, S, N*Hv), as onnxruntime's CPU attention kernels compute it.
std::vector<double> attendHeads(const HeadsArgs &a, const std::vector<double> &Q, const std::vector<double> &K,
                                const std::vector<double> &V) {
  const auto [B, N, S, P, T, H, Hv] = std::tuple{a.B, a.N, a.S, a.P, a.T, a.H, a.Hv};
  const Shape &ms = a.maskShape, &as = a.biasShape;
  std::vector<double> y(static_cast<size_t>(B * S * N * Hv)), p(static_cast<size_t>(T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t t = 0; t < T; ++t) {
          double dot = 0;
          for (int64_t h = 0; h < H; ++h)
            dot += Q[size_t(((b * N + n) * S + s) * H + h)] * K[size_t(((b * N + n) * T + t) * H + h)];
          double x = a.scale * dot;
          bool masked = a.unidirectional && t > P + s;
          if (ms.size() == 1) masked |= t >= (*a.mask)[size_t(b)];
          if (ms.size() == 2) masked |= (*a.mask)[size_t(b * T + t)] == 0;
          if (ms.size() == 3) masked |= (*a.mask)[size_t((b * S + s) * T + t)] == 0;
          if (masked) x += a.filter;
          if (a.bias && !a.bias->empty())
            x += (*a.bias)[size_t((((as[0] == 1 ? 0 : b) * as[1] + (as[1] == 1 ? 0 : n)) * S + s) * T + t)];
          p[size_t(t)] = x;
          top = std::max(top, x);
        }
        double sum = 0;
        for (double &x : p) sum += (x = std::exp(x - top));
        for (int64_t h = 0; h < Hv; ++h) {
          double acc = 0;
          for (int64_t t = 0; t < T; ++t) acc += p[size_t(t)] * V[size_t(((b * N + n) * T + t) * Hv + h)];
          y[size_t((b * S + s) * N * Hv + n * Hv + h)] = acc / sum;
        }
      }
  return y;
}

/// The mask and attention_bias inputs of an attention op, checked against its sizes.
Result<void> readMasks(EvalContext &ctx, size_t maskAt, size_t biasAt, HeadsArgs &a, std::vector<int64_t> &mask,
                       std::vector<double> &bias, const char *maskName) {
  if (ctx.hasInput(maskAt)) {
    a.maskShape = ctx.input(maskAt).shape();
    SF_ASSIGN(mask, ints(ctx.input(maskAt)));
    const Shape &ms = a.maskShape;
    if (!(ms == Shape{a.B} || ms == Shape{a.B, a.T} || ms == Shape{a.B, a.S, a.T}))
      return errorf("{} {}: (batch), (batch, {}) or (batch, {}, {}) expected", maskName, shapeText(ms), a.T, a.S, a.T);
  }
  if (ctx.hasInput(biasAt)) {
    const Shape &as = a.biasShape = ctx.input(biasAt).shape();
    if (as.size() != 4 || (as[0] != a.B && as[0] != 1) || (as[1] != a.N && as[1] != 1) || as[2] != a.S || as[3] != a.T)
      return errorf("attention_bias {} for ({}, {}, {}, {})", shapeText(as), a.B, a.N, a.S, a.T);
    SF_ASSIGN(bias, doubles(ctx.input(biasAt)));
  }
  a.mask = &mask, a.bias = &bias;
  return success();
}

/// Attention (com.microsoft), as onnxruntime's CPU kernel computes it: input (B, S, Din) times
/// weights (Din, Dq + Dk + Dv) plus bias, cut into Q, K and V (qkv_hidden_sizes, else three equal
/// parts) of num_heads heads; past (2, B, N, P, H) before the new keys and values (present: P +
/// S); mask_index (B): key lengths, (B, T) or (B, S, T): 0 masks; unidirectional;
/// attention_bias (B|1, N|1, S, T), not with a past (onnxruntime refuses the two together). A
/// shared past/present buffer, rotary and the other mask forms are refused.
Result<void> msAttention(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  SF_ASSIGN(int64_t N, ctx.attrs().getInt("num_heads"));
  SF_ASSIGN(int64_t shared, ctx.attrs().getInt("past_present_share_buffer", 0));
  SF_ASSIGN(int64_t rotary, ctx.attrs().getInt("do_rotary", 0));
  if (shared || rotary) return errorf("past_present_share_buffer and do_rotary are not run by this kernel");
  if (ctx.hasInput(4) && ctx.hasInput(5)) return errorf("past and attention_bias together (onnxruntime refuses them)");
  const Shape &xs = x.shape(), &ws = w.shape();
  if (xs.size() != 3 || ws.size() != 2 || ws[0] != xs[2] || N <= 0)
    return errorf("input {} and weights {} with num_heads {}", shapeText(xs), shapeText(ws), N);
  std::vector<int64_t> sizes{ws[1] / 3, ws[1] / 3, ws[1] / 3};
  if (ctx.attrs().has("qkv_hidden_sizes")) {
    SF_ASSIGN(sizes, ctx.attrs().getInts("qkv_hidden_sizes"));
  }
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != ws[1] || sizes[0] != sizes[1] || sizes[0] % N != 0 ||
      sizes[2] % N != 0)
    return errorf("qkv_hidden_sizes [{}] for weights {} and {} heads", fmt::join(sizes, ","), shapeText(ws), N);
  const int64_t B = xs[0], S = xs[1], Din = xs[2], Dq = sizes[0], Dv = sizes[2], H = Dq / N, Hv = Dv / N,
                Dall = ws[1];
  int64_t P = 0;
  std::vector<double> past;
  if (ctx.hasInput(4)) {
    const Shape &ps = ctx.input(4).shape();
    if (ps.size() != 5 || ps[0] != 2 || ps[1] != B || ps[2] != N || ps[4] != H || Hv != H)
      return errorf("past {}: (2, {}, {}, past, {}) expected", shapeText(ps), B, N, H);
    P = ps[3];
    SF_ASSIGN(past, doubles(ctx.input(4)));
  }
  const int64_t T = P + S;
  SF_TRY(ctx.admit(x.type(), Shape{B, S, Dall}));
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto wv, doubles(w));
  std::vector<double> bias(size_t(Dall), 0.0);
  if (ctx.hasInput(2)) {
    SF_ASSIGN(bias, hiddenParam(ctx, 2, Dall, "bias"));
  }
  // The projections, (B*S, Dall).
  std::vector<double> qkv(size_t(B * S * Dall));
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t i = 0; i < Din; ++i) {
      const double xi = xv[size_t(r * Din + i)];
      for (int64_t j = 0; j < Dall; ++j) qkv[size_t(r * Dall + j)] += xi * wv[size_t(i * Dall + j)];
    }
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t j = 0; j < Dall; ++j) qkv[size_t(r * Dall + j)] += bias[size_t(j)];
  std::vector<double> Q(size_t(B * N * S * H)), K(size_t(B * N * T * H)), V(size_t(B * N * T * Hv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t s = 0; s < S; ++s)
        for (int64_t h = 0; h < H; ++h) Q[size_t(((b * N + n) * S + s) * H + h)] = qkv[size_t((b * S + s) * Dall + n * H + h)];
      for (int64_t t = 0; t < T; ++t) {
        const int64_t s = t - P;
        for (int64_t h = 0; h < H; ++h)
          K[size_t(((b * N + n) * T + t) * H + h)] =
              s < 0 ? past[size_t((((0 * B + b) * N + n) * P + t) * H + h)] : qkv[size_t((b * S + s) * Dall + Dq + n * H + h)];
        for (int64_t h = 0; h < Hv; ++h)
          V[size_t(((b * N + n) * T + t) * Hv + h)] =
              s < 0 ? past[size_t((((1 * B + b) * N + n) * P + t) * H + h)]
                    : qkv[size_t((b * S + s) * Dall + 2 * Dq + n * Hv + h)];
      }
    }
  SF_ASSIGN(HeadsArgs heads, headsArgs(ctx, {B, N, S, P, T, H, Hv}));
  std::vector<int64_t> mask;
  std::vector<double> attnBias;
  SF_TRY(readMasks(ctx, 3, 5, heads, mask, attnBias, "mask_index"));
  std::vector<double> y = attendHeads(heads, Q, K, V);
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(x.type(), Shape{B, S, Dv}, y));
  SF_TRY(ctx.setOutput(0, std::move(out)));
  if (ctx.numOutputs() > 1) {
    std::vector<double> present(K);
    present.insert(present.end(), V.begin(), V.end());
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), Shape{2, B, N, T, H}, present));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  return success();
}

/// MultiHeadAttention (com.microsoft), as onnxruntime's CPU kernel computes it: query (B, S, D);
/// key and value (B, L, D) and (B, L, Dv) with the bias (2D + Dv) added to Q, K and V, or a
/// cross-attention cache (B, N, L, H) used as it is; past_key and past_value (B, N, P, H) before
/// the new keys (present: P + L); scores scaled (default 1/sqrt(H)), plus mask_filter_value where
/// key_padding_mask (B: lengths; (B, T) or (B, S, T): 0 masks) or unidirectional (a key after
/// the query's position) masks them, plus attention_bias (B|1, N|1, S, T); softmax over the keys.
Result<void> multiHeadAttention(EvalContext &ctx) {
  const Tensor &q = ctx.input(0);
  SF_ASSIGN(int64_t N, ctx.attrs().getInt("num_heads"));
  if (!ctx.hasInput(1) || !ctx.hasInput(2)) return errorf("this kernel needs key and value (packed QKV is not run)");
  const Tensor &k = ctx.input(1), &v = ctx.input(2);
  const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  if (qs.size() != 3 || N <= 0 || qs[2] % N != 0) return errorf("query {} with num_heads {}", shapeText(qs), N);
  const int64_t B = qs[0], S = qs[1], D = qs[2], H = D / N;
  const bool cross = ks.size() == 4;
  if (cross ? (vs.size() != 4 || ks[0] != B || ks[1] != N || ks[3] != H || vs[0] != B || vs[1] != N || vs[2] != ks[2])
            : (ks.size() != 3 || vs.size() != 3 || ks[0] != B || ks[2] != D || vs[0] != B || vs[1] != ks[1] ||
               vs[2] % N != 0))
    return errorf("key {} and value {} for query {}", shapeText(ks), shapeText(vs), shapeText(qs));
  const int64_t L = cross ? ks[2] : ks[1], Hv = cross ? vs[3] : vs[2] / N;
  SF_ASSIGN(auto qv, doubles(q));
  SF_ASSIGN(auto kv, doubles(k));
  SF_ASSIGN(auto vv, doubles(v));
  std::vector<double> bias;
  if (ctx.hasInput(3)) {
    if (cross) return errorf("a bias with a cross-attention cache");
    SF_ASSIGN(bias, hiddenParam(ctx, 3, 2 * D + N * Hv, "bias"));
  }
  int64_t P = 0;
  std::vector<double> pk, pv;
  if (ctx.hasInput(6) || ctx.hasInput(7)) {
    if (!ctx.hasInput(6) || !ctx.hasInput(7) || cross) return errorf("past_key and past_value go together, without a cache");
    const Shape &ps = ctx.input(6).shape();
    if (ps.size() != 4 || ps[0] != B || ps[1] != N || ps[3] != H || ctx.input(7).shape() != Shape{B, N, ps[2], Hv})
      return errorf("past_key {} and past_value {}", shapeText(ps), shapeText(ctx.input(7).shape()));
    P = ps[2];
    SF_ASSIGN(pk, doubles(ctx.input(6)));
    SF_ASSIGN(pv, doubles(ctx.input(7)));
  }
  const int64_t T = P + L;
  // The present caches: the past, then the new keys and values (with their bias).
  std::vector<double> K(size_t(B * N * T * H)), V(size_t(B * N * T * Hv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t l = t - P;
        for (int64_t h = 0; h < H; ++h)
          K[size_t(((b * N + n) * T + t) * H + h)] =
              l < 0 ? pk[size_t(((b * N + n) * P + t) * H + h)]
              : cross ? kv[size_t(((b * N + n) * L + l) * H + h)]
                      : kv[size_t((b * L + l) * D + n * H + h)] + (bias.empty() ? 0.0 : bias[size_t(D + n * H + h)]);
        for (int64_t h = 0; h < Hv; ++h)
          V[size_t(((b * N + n) * T + t) * Hv + h)] =
              l < 0 ? pv[size_t(((b * N + n) * P + t) * Hv + h)]
              : cross ? vv[size_t(((b * N + n) * L + l) * Hv + h)]
                      : vv[size_t((b * L + l) * N * Hv + n * Hv + h)] +
                            (bias.empty() ? 0.0 : bias[size_t(2 * D + n * Hv + h)]);
      }
  std::vector<double> Q(size_t(B * N * S * H));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t h = 0; h < H; ++h)
          Q[size_t(((b * N + n) * S + s) * H + h)] =
              qv[size_t((b * S + s) * D + n * H + h)] + (bias.empty() ? 0.0 : bias[size_t(n * H + h)]);
  SF_ASSIGN(HeadsArgs heads, headsArgs(ctx, {B, N, S, P, T, H, Hv}));
  std::vector<int64_t> mask;
  std::vector<double> ab;
  SF_TRY(readMasks(ctx, 4, 5, heads, mask, ab, "key_padding_mask"));
  std::vector<double> y = attendHeads(heads, Q, K, V);
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(q.type(), Shape{B, S, N * Hv}, y));
  SF_TRY(ctx.setOutput(0, std::move(out)));
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(q.type(), Shape{B, N, T, H}, K));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  if (ctx.numOutputs() > 2) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(q.type(), Shape{B, N, T, Hv}, V));
    SF_TRY(ctx.setOutput(2, std::move(t)));
  }
  if (ctx.numOutputs() > 3) return errorf("the qk output is not computed by this kernel");
  return success();
}

/// The GELU family of transformer exports, element by element on input 0 plus an optional bias
/// (input `biasAt`, broadcast over the last axis): `f` of each sum.
Result<void> activationWithBias(EvalContext &ctx, size_t biasAt, double (*f)(double, double), double param) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto v, doubles(x));
  if (ctx.hasInput(biasAt)) {
    const int64_t last = x.shape().empty() ? 1 : x.shape().back();
    SF_ASSIGN(auto bias, hiddenParam(ctx, biasAt, last, "bias"));
    for (size_t i = 0; i < v.size(); ++i) v[i] += bias[i % size_t(last)];
  }
  for (double &e : v) e = f(e, param);
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(x.type(), x.shape(), v));
  return ctx.setOutput(0, std::move(out));
}

double geluErf(double x, double) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x, double) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
double quickGelu(double x, double alpha) { return x / (1.0 + std::exp(-alpha * x)); }

/// EmbedLayerNormalization (com.microsoft), BERT's embeddings: for input_ids (B, S), the rows of
/// word_embedding (V, H), position_embedding (P, H) at position_ids (B, S) or (1, S) (else 0..S-1)
/// and segment_embedding at segment_ids (where both are given) summed, then layer-normalized with
/// gamma and beta (epsilon); mask_index (B): the count of the mask's non-zero elements per row
/// (0 without a mask); embedding_sum: the sum before the normalization. An index outside its
/// table is an error naming it.
Result<void> embedLayerNorm(EvalContext &ctx) {
  const Tensor &ids = ctx.input(0), &words = ctx.input(2), &positions = ctx.input(3);
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-12));
  const Shape &is = ids.shape(), &ws = words.shape(), &ps = positions.shape();
  if (is.size() != 2 || ws.size() != 2 || ps.size() != 2 || ps[1] != ws[1])
    return errorf("input_ids {}, word_embedding {} and position_embedding {}", shapeText(is), shapeText(ws), shapeText(ps));
  const int64_t B = is[0], S = is[1], H = ws[1];
  SF_TRY(ctx.admit(words.type(), Shape{B, S, H}));
  SF_ASSIGN(auto id, ints(ids));
  SF_ASSIGN(auto wv, doubles(words));
  SF_ASSIGN(auto pv, doubles(positions));
  SF_ASSIGN(auto gamma, hiddenParam(ctx, 5, H, "gamma"));
  std::vector<double> beta(size_t(H), 0.0);
  if (ctx.hasInput(6)) {
    SF_ASSIGN(beta, hiddenParam(ctx, 6, H, "beta"));
  }
  const bool segments = ctx.hasInput(1) && ctx.hasInput(4);
  std::vector<int64_t> seg;
  std::vector<double> sv;
  if (segments) {
    if (ctx.input(1).shape() != is || ctx.input(4).shape().size() != 2 || ctx.input(4).shape()[1] != H)
      return errorf("segment_ids {} and segment_embedding {}", shapeText(ctx.input(1).shape()), shapeText(ctx.input(4).shape()));
    SF_ASSIGN(seg, ints(ctx.input(1)));
    SF_ASSIGN(sv, doubles(ctx.input(4)));
  }
  std::vector<int64_t> pos;
  bool posPerBatch = false;
  if (ctx.hasInput(8)) {
    const Shape &qs = ctx.input(8).shape();
    if (!(qs == is || qs == Shape{1, S})) return errorf("position_ids {}: ({}, {}) or (1, {})", shapeText(qs), B, S, S);
    posPerBatch = qs[0] == B && B != 1;
    SF_ASSIGN(pos, ints(ctx.input(8)));
  }
  auto row = [](const std::vector<double> &table, int64_t rows, int64_t at, int64_t H, const char *name)
      -> Result<const double *> {
    if (at < 0 || at >= rows) return errorf("{} index {} is outside its {} rows", name, at, rows);
    return table.data() + at * H;
  };
  std::vector<double> sum(size_t(B * S * H)), y(size_t(B * S * H));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t i = b * S + s;
      SF_ASSIGN(const double *w, row(wv, ws[0], id[size_t(i)], H, "input_ids"));
      const int64_t at = pos.empty() ? s : pos[size_t(posPerBatch ? i : s)];
      SF_ASSIGN(const double *p, row(pv, ps[0], at, H, "position_ids"));
      const double *g = nullptr;
      if (segments) {
        SF_ASSIGN(g, row(sv, ctx.input(4).shape()[0], seg[size_t(i)], H, "segment_ids"));
      }
      for (int64_t h = 0; h < H; ++h) sum[size_t(i * H + h)] = w[h] + p[h] + (g ? g[h] : 0.0);
      normalizeRow(sum.data() + i * H, H, false, eps, gamma, &beta, y.data() + i * H, nullptr);
    }
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(words.type(), Shape{B, S, H}, y));
  SF_TRY(ctx.setOutput(0, std::move(out)));
  if (ctx.numOutputs() > 1) {
    std::vector<double> count(size_t(B), 0.0);
    if (ctx.hasInput(7)) {
      if (ctx.input(7).shape() != is) return errorf("mask {}: ({}, {})", shapeText(ctx.input(7).shape()), B, S);
      SF_ASSIGN(auto m, ints(ctx.input(7)));
      for (int64_t i = 0; i < B * S; ++i) count[size_t(i / S)] += m[size_t(i)] != 0;
    }
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::I32, Shape{B}, count));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  if (ctx.numOutputs() > 2) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(words.type(), Shape{B, S, H}, sum));
    SF_TRY(ctx.setOutput(2, std::move(t)));
  }
  return success();
}

/// A quantized tensor's scale and zero point (inputs `scaleAt`, `zeroAt`; the zero point 0 when
/// absent), per tensor.
Result<std::pair<float, float>> quantParams(EvalContext &ctx, size_t scaleAt, size_t zeroAt) {
  SF_ASSIGN(auto scale, doubles(ctx.input(scaleAt)));
  std::vector<double> zero{0.0};
  if (ctx.hasInput(zeroAt)) {
    SF_ASSIGN(zero, doubles(ctx.input(zeroAt)));
  }
  if (scale.size() != 1 || zero.size() != 1) return errorf("per-axis scales or zero points are not run by this kernel");
  return std::pair{float(scale[0]), float(zero[0])};
}

/// `v` quantized to `t` (u8, i8) in float as onnxruntime does: rounded to nearest even, plus the
/// zero point, saturated.
Result<double> quantizeFloat(float v, float zero, ElementType t) {
  SF_ASSIGN(auto range, quantRange(t));
  return std::clamp(double(std::nearbyint(v) + zero), range.first, range.second);
}

/// QLinearAdd and QLinearMul (com.microsoft): A (scale, zero point) and B, broadcast, into C's
/// scale and zero point, computed in float from the scale ratios as onnxruntime's kernels do.
Result<void> qlinearBinary(EvalContext &ctx, bool multiply) {
  const Tensor &a = ctx.input(0), &b = ctx.input(3);
  if (a.type() != b.type()) return errorf("A is {} and B {}", shortName(a.type()), shortName(b.type()));
  SF_ASSIGN(auto pa, quantParams(ctx, 1, 2));
  SF_ASSIGN(auto pb, quantParams(ctx, 4, 5));
  SF_ASSIGN(auto pc, quantParams(ctx, 6, 7));
  SF_ASSIGN(Shape out, broadcastAll({a.shape(), b.shape()}));
  SF_TRY(ctx.admit(a.type(), out));
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto bv, doubles(b));
  std::vector<double> y(size_t(countOf(out)));
  const float ratioA = pa.first / pc.first, ratioB = pb.first / pc.first, ratioMul = pa.first * pb.first / pc.first;
  Result<void> status = success();
  forEachBroadcast<2>(out, {broadcastStrides(a.shape(), out), broadcastStrides(b.shape(), out)},
                      [&](int64_t o, const std::array<int64_t, 2> &off) {
                        const float x = float(av[size_t(off[0])]) - pa.second, z = float(bv[size_t(off[1])]) - pb.second;
                        const float r = multiply ? x * z * ratioMul : x * ratioA + z * ratioB;
                        auto q = quantizeFloat(r, pc.second, a.type());
                        if (!q.ok()) status = q.takeError();
                        else y[size_t(o)] = *q;
                      });
  SF_TRY(std::move(status));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(a.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// QLinearSigmoid and QLinearLeakyRelu (com.microsoft): X (scale, zero point) to Y's, element by
/// element through a table of the 256 values as onnxruntime builds it (dequantized, `f` in float,
/// quantized).
Result<void> qlinearUnary(EvalContext &ctx, const std::function<float(float)> &f) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto px, quantParams(ctx, 1, 2));
  SF_ASSIGN(auto py, quantParams(ctx, 3, 4));
  SF_ASSIGN(auto range, quantRange(x.type()));
  std::vector<double> table(256);
  for (int v = int(range.first); v <= int(range.second); ++v) {
    const float y = f((float(v) - px.second) * px.first);
    SF_ASSIGN(table[size_t(v - int(range.first))], quantizeFloat(y / py.first, py.second, x.type()));
  }
  SF_ASSIGN(auto xv, doubles(x));
  for (double &v : xv) v = table[size_t(int(v) - int(range.first))];
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), x.shape(), xv));
  return ctx.setOutput(0, std::move(t));
}

/// The activation of onnxruntime's fused ops (FusedConv, FusedGemm): Relu, Tanh, Sigmoid,
/// LeakyRelu (alpha, 0.01), Clip (min, max), HardSigmoid (alpha 0.2, beta 0.5); none when empty.
Result<std::function<double(double)>> fusedActivation(const std::string &name, const std::vector<double> &p) {
  auto param = [&](size_t i, double otherwise) { return i < p.size() ? p[i] : otherwise; };
  if (name.empty()) return std::function<double(double)>([](double x) { return x; });
  if (name == "Relu") return std::function<double(double)>([](double x) { return x > 0 ? x : 0.0; });
  if (name == "Tanh") return std::function<double(double)>([](double x) { return std::tanh(x); });
  if (name == "Sigmoid") return std::function<double(double)>([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  if (name == "LeakyRelu") {
    double alpha = param(0, 0.01);
    return std::function<double(double)>([alpha](double x) { return x >= 0 ? x : alpha * x; });
  }
  if (name == "Clip") {
    if (p.size() < 2) return errorf("activation Clip needs its min and max");
    double lo = p[0], hi = p[1];
    return std::function<double(double)>([lo, hi](double x) { return std::min(std::max(x, lo), hi); });
  }
  if (name == "HardSigmoid") {
    double alpha = param(0, 0.2), beta = param(1, 0.5);
    return std::function<double(double)>(
        [alpha, beta](double x) { return std::max(0.0, std::min(1.0, alpha * x + beta)); });
  }
  return errorf("activation '{}' (Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid)", name);
}

/// `base` (the standard op's kernel) and then, on output 0, input `sumInput` added where given
/// (FusedConv's Z) and the activation.
Result<void> withActivation(EvalContext &ctx, const KernelFn &base, const std::string &activation,
                            const std::vector<double> &params, std::optional<size_t> sumInput) {
  SF_ASSIGN(auto f, fusedActivation(activation, params));
  SF_TRY(base(ctx));
  const Value &made = ctx.outputs().at(0);
  if (!made.isTensor()) return errorf("the base op made no tensor");
  std::shared_ptr<const Tensor> y = made.tensor();
  SF_ASSIGN(auto v, doubles(*y));
  if (sumInput && ctx.hasInput(*sumInput)) {
    const Tensor &z = ctx.input(*sumInput);
    if (z.shape() != y->shape()) return errorf("Z is {}, not the output's {}", shapeText(z.shape()), shapeText(y->shape()));
    SF_ASSIGN(auto zv, doubles(z));
    for (size_t i = 0; i < v.size(); ++i) v[i] += zv[i];
  }
  for (double &e : v) e = f(e);
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(y->type(), y->shape(), v));
  return ctx.setOutput(0, std::move(out));
}

Result<void> registerContribKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "SimplifiedLayerNormalization", simplifiedLayerNorm));
  SF_TRY(setKernel(r, "SkipSimplifiedLayerNormalization", [](EvalContext &c) { return skipLayerNorm(c, true); }, kMs));
  SF_TRY(setKernel(r, "SkipLayerNormalization", [](EvalContext &c) { return skipLayerNorm(c, false); }, kMs));
  SF_TRY(setKernel(r, "MatMulNBits", matMulNBits, kMs));
  SF_TRY(setKernel(r, "GroupQueryAttention", groupQueryAttention, kMs));
  SF_TRY(setKernel(r, "RotaryEmbedding", msRotaryEmbedding, kMs));
  SF_TRY(setKernel(r, "GatherBlockQuantized", gatherBlockQuantized, kMs));
  SF_TRY(setKernel(r, "MultiHeadAttention", multiHeadAttention, kMs));
  SF_TRY(setKernel(r, "Gelu", [](EvalContext &c) { return activationWithBias(c, 9, geluErf, 0); }, kMs));
  SF_TRY(setKernel(r, "BiasGelu", [](EvalContext &c) { return activationWithBias(c, 1, geluErf, 0); }, kMs));
  SF_TRY(setKernel(r, "FastGelu", [](EvalContext &c) { return activationWithBias(c, 1, geluTanh, 0); }, kMs));
  SF_TRY(setKernel(r, "QuickGelu", [](EvalContext &c) -> Result<void> {
    SF_ASSIGN(double alpha, c.attrs().getFloat("alpha", 1.702));
    return activationWithBias(c, 9, quickGelu, alpha);
  }, kMs));
  SF_TRY(setKernel(r, "Attention", msAttention, kMs));
  SF_TRY(setKernel(r, "EmbedLayerNormalization", embedLayerNorm, kMs));
  SF_TRY(setKernel(r, "QLinearAdd", [](EvalContext &c) { return qlinearBinary(c, false); }, kMs));
  SF_TRY(setKernel(r, "QLinearMul", [](EvalContext &c) { return qlinearBinary(c, true); }, kMs));
  SF_TRY(setKernel(r, "QLinearSigmoid", [](EvalContext &c) {
    return qlinearUnary(c, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
  }, kMs));
  SF_TRY(setKernel(r, "QLinearLeakyRelu", [](EvalContext &c) -> Result<void> {
    SF_ASSIGN(double alpha, c.attrs().getFloat("alpha", 0.01));
    const float a = float(alpha);
    return qlinearUnary(c, [a](float v) { return v >= 0 ? v : a * v; });
  }, kMs));
  return success();
}

Result<void> registerContribKernelsOnStandardOnes(OpRegistry &r) {
  auto standard = [&](const char *name) -> Result<KernelFn> {
    const OpDef *d = r.find("", name);
    if (!d || !d->kernel) return errorf("no kernel for the standard {}", name);
    return d->kernel;
  };
  SF_ASSIGN(KernelFn conv, standard("Conv"));
  SF_TRY(setKernel(r, "FusedConv", [conv](EvalContext &c) -> Result<void> {
    SF_ASSIGN(std::string activation, c.attrs().getString("activation", ""));
    std::vector<double> params;
    if (c.attrs().has("activation_params")) {
      SF_ASSIGN(params, c.attrs().getFloats("activation_params"));
    }
    return withActivation(c, conv, activation, params, 3);
  }, kMs));
  SF_ASSIGN(KernelFn gemm, standard("Gemm"));
  SF_TRY(setKernel(r, "FusedGemm", [gemm](EvalContext &c) -> Result<void> {
    SF_ASSIGN(std::string activation, c.attrs().getString("activation", ""));
    std::vector<double> params;
    for (const char *name : {"activation_alpha", "activation_beta"})
      if (c.attrs().has(name)) {
        SF_ASSIGN(double v, c.attrs().getFloat(name));
        params.push_back(v);
      }
    return withActivation(c, gemm, activation, params, std::nullopt);
  }, kMs));
  return success();
}

} // namespace sf::eval::detail
