// Kernels of onnxruntime's attention contrib ops (com.microsoft; rules in src/ops/contrib.cpp),
// with onnxruntime 1.30's CPU semantics: MultiHeadAttention and Attention in f32 where their
// inputs are (attention_f32.h), else in double; RotaryEmbedding in double. GroupQueryAttention is
// in contrib_gqa.cpp.
#include "attention_f32.h"
#include "contrib.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace sf::eval::detail {
namespace {

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
        rotatePairs(&y[size_t(base)], &y[size_t(base)], R, interleaved != 0, &cv[size_t(row * width)], &sv[size_t(row * width)]);
      }
    }
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(x.type(), s, y));
  return ctx.setOutput(0, std::move(out));
}

/// Sizes and masks of attention over heads: B batches, N heads, S queries, T keys of which the
/// first P are a past cache, H the query and key head size, Hv the value's.
struct HeadsArgs {
  int64_t B = 0, N = 0, S = 0, P = 0, T = 0, H = 0, Hv = 0;
  double scale = 1, filter = -10000.0; // filter: added to a masked score
  bool unidirectional = false;         // a key after the query's position is masked
  const std::vector<int64_t> *mask = nullptr; // (B): key lengths; (B, T) or (B, S, T): 0 masks
  Shape maskShape;
  const std::vector<double> *bias = nullptr; // (B|1, N|1, S, T), added to the scores
  Shape biasShape;
};

/// The sizes and the attributes MultiHeadAttention and Attention share: scale (default
/// 1/sqrt(H)), mask_filter_value, unidirectional.
Result<HeadsArgs> headsArgs(EvalContext &ctx, int64_t B, int64_t N, int64_t S, int64_t P, int64_t T, int64_t H,
                            int64_t Hv) {
  HeadsArgs a;
  a.B = B, a.N = N, a.S = S, a.P = P, a.T = T, a.H = H, a.Hv = Hv;
  SF_ASSIGN(double scale, ctx.attrs().getFloat("scale", 0.0));
  SF_ASSIGN(a.filter, ctx.attrs().getFloat("mask_filter_value", -10000.0));
  SF_ASSIGN(int64_t unidirectional, ctx.attrs().getInt("unidirectional", 0));
  a.scale = scale != 0.0 ? scale : 1.0 / std::sqrt(double(a.H));
  a.unidirectional = unidirectional != 0;
  return a;
}

/// Whether a mask or the attention bias leaves out or moves key t of query s (batch b, head n):
/// the score plus the mask filter where masked, plus the bias.
inline double adjustedScore(const HeadsArgs &a, int64_t b, int64_t n, int64_t s, int64_t t, double x) {
  const Shape &ms = a.maskShape, &as = a.biasShape;
  bool masked = a.unidirectional && t > a.P + s;
  if (ms.size() == 1) masked |= t >= (*a.mask)[size_t(b)];
  if (ms.size() == 2) masked |= (*a.mask)[size_t(b * a.T + t)] == 0;
  if (ms.size() == 3) masked |= (*a.mask)[size_t((b * a.S + s) * a.T + t)] == 0;
  if (masked) x += a.filter;
  if (a.bias && !a.bias->empty())
    x += (*a.bias)[size_t((((as[0] == 1 ? 0 : b) * as[1] + (as[1] == 1 ? 0 : n)) * a.S + s) * a.T + t)];
  return x;
}

/// softmax(scale * Q K^T + masks + bias) V for Q (B, N, S, H), K (B, N, T, H), V (B, N, T, Hv):
/// (B, S, N*Hv), as onnxruntime's CPU attention kernels compute it; in f32 by attendF32.
template <class T>
std::vector<T> attendHeads(const HeadsArgs &a, std::vector<T> &Q, std::vector<T> &K, std::vector<T> &V) {
  const int64_t B = a.B, N = a.N, S = a.S, Tk = a.T, H = a.H, Hv = a.Hv;
  std::vector<T> y(static_cast<size_t>(B * S * N * Hv));
  if constexpr (std::is_same_v<T, float>) {
    const F32Heads q{Q.data(), N * S * H, S * H, H}, k{K.data(), N * Tk * H, Tk * H, H}, v{V.data(), N * Tk * Hv, Tk * Hv, Hv},
        out{y.data(), S * N * Hv, Hv, N * Hv};
    attendF32(AttendSizes{B, N, N, S, Tk, H, Hv, float(a.scale)}, q, k, v, out, [&](int64_t b, int64_t n, int64_t s, float *row, int64_t) {
      for (int64_t t = 0; t < Tk; ++t) row[t] = float(adjustedScore(a, b, n, s, t, row[t]));
      return KeptKeys{0, Tk};
    });
    return y;
  } else {
    std::vector<double> p(static_cast<size_t>(Tk));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) {
          double top = -std::numeric_limits<double>::infinity();
          for (int64_t t = 0; t < Tk; ++t) {
            double dot = 0;
            for (int64_t h = 0; h < H; ++h)
              dot += Q[size_t(((b * N + n) * S + s) * H + h)] * K[size_t(((b * N + n) * Tk + t) * H + h)];
            const double x = adjustedScore(a, b, n, s, t, a.scale * dot);
            p[size_t(t)] = x;
            top = std::max(top, x);
          }
          double sum = 0;
          for (double &x : p) sum += (x = std::exp(x - top));
          for (int64_t h = 0; h < Hv; ++h) {
            double acc = 0;
            for (int64_t t = 0; t < Tk; ++t) acc += p[size_t(t)] * V[size_t(((b * N + n) * Tk + t) * Hv + h)];
            y[size_t((b * S + s) * N * Hv + n * Hv + h)] = acc / sum;
          }
        }
    return y;
  }
}

/// A tensor's elements as T: f32 ones as they are, any numeric type as doubles.
template <class T> Result<std::vector<T>> elementsAs(const Tensor &t) {
  if constexpr (std::is_same_v<T, float>) {
    Elements<float> e(t);
    return std::vector<float>(e.data(), e.data() + e.size());
  } else {
    return doubles(t);
  }
}

/// Output i of `type` and `shape` holding `v` (f32 elements copied as they are).
template <class T>
Result<void> setOutputAs(EvalContext &ctx, size_t i, ElementType type, const Shape &shape, const std::vector<T> &v) {
  if constexpr (std::is_same_v<T, float>) {
    Output<float> out(ctx, ElementType::F32, shape, i);
    SF_ASSIGN(float *p, out.makeForOverwrite());
    copyBytes(p, v.data(), v.size() * sizeof(float));
    return out.finish(i);
  } else {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(type, shape, v));
    return ctx.setOutput(i, std::move(t));
  }
}

/// Whether every given input among `at` is f32 (the kernel then computes in f32).
bool allF32(EvalContext &ctx, std::initializer_list<size_t> at) {
  for (size_t i : at)
    if (ctx.hasInput(i) && ctx.input(i).type() != ElementType::F32) return false;
  return true;
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
/// Where an attention op's optional inputs are: Attention's mask_index, past and attention_bias
/// (3, 4, 5); QAttention's mask_index and past (5, 8; no attention_bias).
struct AttentionSlots {
  size_t mask = 3, past = 4, attnBias = 5;
};
constexpr size_t kNoInput = size_t(-1);

/// Attention's heads from the projections `qkv` (B*S, Dq + Dq + Dv, bias added): Q, K and V of N
/// heads, the past (2, B, N, P, H) before the new keys, the masks, the output (B, S, Dv) and the
/// present (2, B, N, P + S, H).
template <class T>
Result<void> attendProjected(EvalContext &ctx, const AttentionSlots &at, int64_t B, int64_t S, int64_t N, int64_t Dq,
                             int64_t Dv, std::vector<T> &qkv, ElementType type) {
  const int64_t H = Dq / N, Hv = Dv / N, Dall = 2 * Dq + Dv;
  int64_t P = 0;
  std::vector<T> past;
  if (ctx.hasInput(at.past)) {
    const Shape &ps = ctx.input(at.past).shape();
    if (ps.size() != 5 || ps[0] != 2 || ps[1] != B || ps[2] != N || ps[4] != H || Hv != H)
      return errorf("past {}: (2, {}, {}, past, {}) expected", shapeText(ps), B, N, H);
    P = ps[3];
    SF_ASSIGN(past, elementsAs<T>(ctx.input(at.past)));
  }
  const int64_t Tk = P + S;
  std::vector<T> Q(size_t(B * N * S * H)), K(size_t(B * N * Tk * H)), V(size_t(B * N * Tk * Hv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t s = 0; s < S; ++s)
        for (int64_t h = 0; h < H; ++h) Q[size_t(((b * N + n) * S + s) * H + h)] = qkv[size_t((b * S + s) * Dall + n * H + h)];
      for (int64_t t = 0; t < Tk; ++t) {
        const int64_t s = t - P;
        for (int64_t h = 0; h < H; ++h)
          K[size_t(((b * N + n) * Tk + t) * H + h)] =
              s < 0 ? past[size_t((((0 * B + b) * N + n) * P + t) * H + h)] : qkv[size_t((b * S + s) * Dall + Dq + n * H + h)];
        for (int64_t h = 0; h < Hv; ++h)
          V[size_t(((b * N + n) * Tk + t) * Hv + h)] =
              s < 0 ? past[size_t((((1 * B + b) * N + n) * P + t) * H + h)]
                    : qkv[size_t((b * S + s) * Dall + 2 * Dq + n * Hv + h)];
      }
    }
  SF_ASSIGN(HeadsArgs heads, headsArgs(ctx, B, N, S, P, Tk, H, Hv));
  std::vector<int64_t> mask;
  std::vector<double> attnBias;
  SF_TRY(readMasks(ctx, at.mask, at.attnBias, heads, mask, attnBias, "mask_index"));
  SF_TRY(setOutputAs(ctx, 0, type, Shape{B, S, Dv}, attendHeads(heads, Q, K, V)));
  if (ctx.numOutputs() > 1) {
    std::vector<T> present(K);
    present.insert(present.end(), V.begin(), V.end());
    SF_TRY(setOutputAs(ctx, 1, type, Shape{2, B, N, Tk, H}, present));
  }
  return success();
}

template <class T> Result<void> msAttentionAs(EvalContext &ctx) {
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
  const int64_t B = xs[0], S = xs[1], Din = xs[2], Dall = ws[1];
  SF_TRY(ctx.admit(x.type(), Shape{B, S, Dall}));
  SF_ASSIGN(auto xv, elementsAs<T>(x));
  SF_ASSIGN(auto wv, elementsAs<T>(w));
  std::vector<double> bias(size_t(Dall), 0.0);
  if (ctx.hasInput(2)) {
    SF_ASSIGN(bias, hiddenParam(ctx, 2, Dall, "bias"));
  }
  // The projections, (B*S, Dall).
  std::vector<T> qkv(size_t(B * S * Dall));
  if constexpr (std::is_same_v<T, float>) {
    if (Din > 0) sgemm(false, false, B * S, Dall, Din, 1.0f, xv.data(), Din, wv.data(), Dall, 0.0f, qkv.data(), Dall);
  } else {
    for (int64_t r = 0; r < B * S; ++r)
      for (int64_t i = 0; i < Din; ++i) {
        const double xi = xv[size_t(r * Din + i)];
        for (int64_t j = 0; j < Dall; ++j) qkv[size_t(r * Dall + j)] += xi * wv[size_t(i * Dall + j)];
      }
  }
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t j = 0; j < Dall; ++j) qkv[size_t(r * Dall + j)] += T(bias[size_t(j)]);
  return attendProjected<T>(ctx, AttentionSlots{}, B, S, N, sizes[0], sizes[2], qkv, x.type());
}

/// QAttention (com.microsoft, onnxruntime's dynamic quantization of Attention): input (u8, B, S,
/// Din) and weight (u8 or i8, Din x 3D) less their zero points (weight's per tensor or per
/// column), their integer product times input_scale * weight_scale (per tensor or column) in
/// float, plus bias; then Attention on it with mask_index (5) and past (8). Outputs f32.
Result<void> qAttention(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  SF_ASSIGN(int64_t N, ctx.attrs().getInt("num_heads"));
  const Shape &xs = x.shape(), &ws = w.shape();
  if (xs.size() != 3 || ws.size() != 2 || ws[0] != xs[2] || N <= 0 || ws[1] % 3 != 0 || (ws[1] / 3) % N != 0)
    return errorf("input {} and weights {} with num_heads {}", shapeText(xs), shapeText(ws), N);
  const int64_t B = xs[0], S = xs[1], Din = xs[2], Dall = ws[1];
  SF_TRY(ctx.admit(ElementType::F32, Shape{B, S, Dall}));
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto wv, doubles(w));
  SF_ASSIGN(auto bias, hiddenParam(ctx, 2, Dall, "bias"));
  SF_ASSIGN(auto xScale, doubles(ctx.input(3)));
  SF_ASSIGN(auto wScale, doubles(ctx.input(4)));
  std::vector<double> xZero{0.0}, wZero{0.0};
  if (ctx.hasInput(6)) {
    SF_ASSIGN(xZero, doubles(ctx.input(6)));
  }
  if (ctx.hasInput(7)) {
    SF_ASSIGN(wZero, doubles(ctx.input(7)));
  }
  auto perColumn = [&](const std::vector<double> &v) { return v.size() == 1 || int64_t(v.size()) == Dall; };
  if (xScale.size() != 1 || xZero.size() != 1 || !perColumn(wScale) || !perColumn(wZero))
    return errorf("input_scale and input_zero_point must be one value, weight_scale and weight_zero_point one or {}", Dall);
  std::vector<float> qkv(size_t(B * S * Dall));
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t j = 0; j < Dall; ++j) {
      const double zw = wZero.size() == 1 ? wZero[0] : wZero[size_t(j)];
      double acc = 0; // an exact integer sum
      for (int64_t i = 0; i < Din; ++i) acc += (xv[size_t(r * Din + i)] - xZero[0]) * (wv[size_t(i * Dall + j)] - zw);
      const float scale = float(xScale[0]) * float(wScale.size() == 1 ? wScale[0] : wScale[size_t(j)]);
      qkv[size_t(r * Dall + j)] = float(acc) * scale + float(bias[size_t(j)]);
    }
  return attendProjected<float>(ctx, AttentionSlots{5, 8, kNoInput}, B, S, N, Dall / 3, Dall / 3, qkv, ElementType::F32);
}

Result<void> msAttention(EvalContext &ctx) {
  if (allF32(ctx, {0, 1, 2, 4, 5})) return msAttentionAs<float>(ctx);
  return msAttentionAs<double>(ctx);
}

/// MultiHeadAttention (com.microsoft), as onnxruntime's CPU kernel computes it: query (B, S, D);
/// key and value (B, L, D) and (B, L, Dv) with the bias (2D + Dv) added to Q, K and V, or a
/// cross-attention cache (B, N, L, H) used as it is; past_key and past_value (B, N, P, H) before
/// the new keys (present: P + L); scores scaled (default 1/sqrt(H)), plus mask_filter_value where
/// key_padding_mask (B: lengths; (B, T) or (B, S, T): 0 masks) or unidirectional (a key after
/// the query's position) masks them, plus attention_bias (B|1, N|1, S, T); softmax over the keys.
template <class T> Result<void> multiHeadAttentionAs(EvalContext &ctx) {
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
  SF_ASSIGN(auto qv, elementsAs<T>(q));
  SF_ASSIGN(auto kv, elementsAs<T>(k));
  SF_ASSIGN(auto vv, elementsAs<T>(v));
  std::vector<double> bias;
  if (ctx.hasInput(3)) {
    if (cross) return errorf("a bias with a cross-attention cache");
    SF_ASSIGN(bias, hiddenParam(ctx, 3, 2 * D + N * Hv, "bias"));
  }
  int64_t P = 0;
  std::vector<T> pk, pv;
  if (ctx.hasInput(6) || ctx.hasInput(7)) {
    if (!ctx.hasInput(6) || !ctx.hasInput(7) || cross) return errorf("past_key and past_value go together, without a cache");
    const Shape &ps = ctx.input(6).shape();
    if (ps.size() != 4 || ps[0] != B || ps[1] != N || ps[3] != H || ctx.input(7).shape() != Shape{B, N, ps[2], Hv})
      return errorf("past_key {} and past_value {}", shapeText(ps), shapeText(ctx.input(7).shape()));
    P = ps[2];
    SF_ASSIGN(pk, elementsAs<T>(ctx.input(6)));
    SF_ASSIGN(pv, elementsAs<T>(ctx.input(7)));
  }
  const int64_t Tk = P + L;
  // The present caches: the past, then the new keys and values (with their bias).
  std::vector<T> K(size_t(B * N * Tk * H)), V(size_t(B * N * Tk * Hv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t t = 0; t < Tk; ++t) {
        const int64_t l = t - P;
        for (int64_t h = 0; h < H; ++h)
          K[size_t(((b * N + n) * Tk + t) * H + h)] =
              l < 0 ? pk[size_t(((b * N + n) * P + t) * H + h)]
              : cross ? kv[size_t(((b * N + n) * L + l) * H + h)]
                      : kv[size_t((b * L + l) * D + n * H + h)] + T(bias.empty() ? 0.0 : bias[size_t(D + n * H + h)]);
        for (int64_t h = 0; h < Hv; ++h)
          V[size_t(((b * N + n) * Tk + t) * Hv + h)] =
              l < 0 ? pv[size_t(((b * N + n) * P + t) * Hv + h)]
              : cross ? vv[size_t(((b * N + n) * L + l) * Hv + h)]
                      : vv[size_t((b * L + l) * N * Hv + n * Hv + h)] +
                            T(bias.empty() ? 0.0 : bias[size_t(2 * D + n * Hv + h)]);
      }
  std::vector<T> Q(size_t(B * N * S * H));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t h = 0; h < H; ++h)
          Q[size_t(((b * N + n) * S + s) * H + h)] =
              qv[size_t((b * S + s) * D + n * H + h)] + T(bias.empty() ? 0.0 : bias[size_t(n * H + h)]);
  SF_ASSIGN(HeadsArgs heads, headsArgs(ctx, B, N, S, P, Tk, H, Hv));
  std::vector<int64_t> mask;
  std::vector<double> ab;
  SF_TRY(readMasks(ctx, 4, 5, heads, mask, ab, "key_padding_mask"));
  SF_TRY(setOutputAs(ctx, 0, q.type(), Shape{B, S, N * Hv}, attendHeads(heads, Q, K, V)));
  if (ctx.numOutputs() > 1) SF_TRY(setOutputAs(ctx, 1, q.type(), Shape{B, N, Tk, H}, K));
  if (ctx.numOutputs() > 2) SF_TRY(setOutputAs(ctx, 2, q.type(), Shape{B, N, Tk, Hv}, V));
  if (ctx.numOutputs() > 3) return errorf("the qk output is not computed by this kernel");
  return success();
}

Result<void> multiHeadAttention(EvalContext &ctx) {
  if (allF32(ctx, {0, 1, 2, 6, 7})) return multiHeadAttentionAs<float>(ctx);
  return multiHeadAttentionAs<double>(ctx);
}

} // namespace

Result<void> registerContribAttentionKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "QAttention", qAttention, kMs));
  SF_TRY(setKernel(r, "RotaryEmbedding", msRotaryEmbedding, kMs));
  SF_TRY(setKernel(r, "MultiHeadAttention", multiHeadAttention, kMs));
  SF_TRY(setKernel(r, "Attention", msAttention, kMs));
  return success();
}

} // namespace sf::eval::detail
