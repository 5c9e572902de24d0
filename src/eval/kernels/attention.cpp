// Kernels of the attention family (src/ops/attention.cpp): Attention (opsets 23, 24),
// RotaryEmbedding (23), TensorScatter (24); Attention and RotaryEmbedding in f32 where their
// inputs are f32 (attention_f32.h), otherwise in double; as onnxruntime 1.30 computes
// them where it departs from the specification (positions the causal rule or nonpad_kv_seqlen
// leave out take the lowest finite value, not -inf, so a row with every key left out by them
// averages V; a boolean mask's false is -inf, and a row whose every key is -inf gives 0; the
// softcap comes before the mask).
#include "../kernel_util.h"
#include "attention_f32.h"
#include "shapeflow/ops/attention.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace sf::eval::detail {
namespace {

/// The strides, along 4 dims, of a tensor of shape `from` (rank at most 4) broadcast to them
/// (numpy's rules: `from` aligned right, its 1s and the dims it lacks repeated: stride 0), so
/// that element (b, h, i, j) is at b * s[0] + h * s[1] + i * s[2] + j * s[3].
std::array<int64_t, 4> broadcastStrides4(const Shape &from) {
  std::array<int64_t, 4> strides{0, 0, 0, 0};
  int64_t stride = 1;
  for (size_t k = 0; k < from.size() && k < 4; ++k) {
    const int64_t d = from[from.size() - 1 - k];
    strides[3 - k] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return strides;
}

/// A (B, H, S, D) view of Q, K or V given as 4-D or as 3-D (B, S, H*D).
struct Heads {
  const std::vector<double> *v;
  int64_t heads, seq, size;
  bool flat; // 3-D
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return flat ? (*v)[size_t(((b * seq + s) * heads + h) * size + d)] : (*v)[size_t(((b * heads + h) * seq + s) * size + d)];
  }
};

/// past (B, H, P, D) then new (B, H, S, D) along the positions: a present cache.
std::vector<double> present(const std::vector<double> *past, const Heads &now, int64_t batch, int64_t pastLen) {
  const int64_t total = pastLen + now.seq;
  std::vector<double> out(size_t(batch * now.heads * total * now.size));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < now.heads; ++h)
      for (int64_t t = 0; t < total; ++t)
        for (int64_t d = 0; d < now.size; ++d)
          out[size_t(((b * now.heads + h) * total + t) * now.size + d)] =
              t < pastLen ? (*past)[size_t(((b * now.heads + h) * pastLen + t) * now.size + d)] : now.at(b, h, t - pastLen, d);
  return out;
}

struct AttentionOptions {
  bool causal = false;
  double scale = 1, softcap = 0;
  int64_t mode = 0;
};

/// The attributes, the scale defaulting to 1/sqrt(head).
Result<AttentionOptions> attentionOptions(EvalContext &ctx, int64_t head) {
  AttentionOptions o;
  SF_ASSIGN(int64_t causal, ctx.attrs().getInt("is_causal", 0));
  o.causal = causal != 0;
  SF_ASSIGN(o.scale, ctx.attrs().getFloat("scale", 1.0 / std::sqrt(double(head))));
  SF_ASSIGN(o.softcap, ctx.attrs().getFloat("softcap", 0.0));
  SF_ASSIGN(o.mode, ctx.attrs().getInt("qk_matmul_output_mode", 0));
  return o;
}

/// attn_mask's shape and, `withValues`, its elements (none without the input), checked to
/// broadcast to (B, Hq, Sq, T).
struct AttentionMask {
  std::vector<double> values;
  Shape shape;
  bool isBool = false;
};

Result<AttentionMask> attentionMask(EvalContext &ctx, int64_t B, int64_t Hq, int64_t Sq, int64_t T, bool withValues) {
  AttentionMask out;
  if (!ctx.hasInput(3)) return out;
  const Tensor &m = ctx.input(3);
  const Shape &maskShape = out.shape = m.shape();
  // From opset 24 a mask may cover the first keys only: the rest are masked out.
  if (maskShape.size() > 4 || maskShape.empty() || maskShape.back() > T || (maskShape.back() < T && ctx.opset() < 24))
    return errorf("attn_mask {} does not cover the {} keys", shapeText(maskShape), T);
  const int64_t to[] = {Sq, Hq, B};
  for (size_t i = 1; i < maskShape.size(); ++i) {
    const int64_t d = maskShape[maskShape.size() - 1 - i];
    if (d != 1 && d != to[i - 1])
      return errorf("attn_mask {} does not broadcast to ({}, {}, {}, {})", shapeText(maskShape), B, Hq, Sq, T);
  }
  out.isBool = m.type() == ElementType::Bool;
  if (withValues) {
    SF_ASSIGN(out.values, doubles(m));
  }
  return out;
}

/// nonpad_kv_seqlen (opset 24): per batch entry, the keys that are not padding; empty without it.
Result<std::vector<int64_t>> nonpadLengths(EvalContext &ctx, int64_t B, int64_t T) {
  std::vector<int64_t> nonpad;
  if (ctx.opset() >= 24 && ctx.hasInput(6)) {
    SF_ASSIGN(nonpad, ints(ctx.input(6)));
    if (int64_t(nonpad.size()) != B) return errorf("nonpad_kv_seqlen has {} values for a batch of {}", nonpad.size(), B);
    for (int64_t n : nonpad)
      if (n < 0 || n > T) return errorf("nonpad_kv_seqlen {} is outside 0..{}", n, T);
  }
  return nonpad;
}

/// Y, then the present keys and values and the scores where the node has those outputs.
Result<void> setAttentionOutputs(EvalContext &ctx, const AttentionGeometry &g, const std::vector<double> &y,
                                 const std::vector<double> &keys, const std::vector<double> &values,
                                 const std::vector<double> &scores) {
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  const int64_t B = g.batch, Hq = g.qHeads, Hkv = g.kvHeads, Sq = g.queries, T = g.total();
  const bool flat = g.rank == 3;
  Shape yShape = flat ? Shape{B, Sq, Hq * g.vHead} : Shape{B, Hq, Sq, g.vHead};
  SF_ASSIGN(Tensor yt, Tensor::fromDoubles(q.type(), yShape, y));
  SF_TRY(ctx.setOutput(0, std::move(yt)));
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(k.type(), {B, Hkv, T, g.head}, keys));
    SF_TRY(ctx.setOutput(1, std::move(t)));
  }
  if (ctx.numOutputs() > 2) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(v.type(), {B, Hkv, T, g.vHead}, values));
    SF_TRY(ctx.setOutput(2, std::move(t)));
  }
  if (ctx.numOutputs() > 3) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(q.type(), Shape{B, Hq, Sq, T}, scores));
    SF_TRY(ctx.setOutput(3, std::move(t)));
  }
  return success();
}

/// Whether the f32 kernel takes this node: Q, K, V (and the past) in f32, a mask of f32 or
/// bool, no scores output (qk_matmul_output, which the f64 loops give).
bool attentionInF32(EvalContext &ctx, bool hasPast) {
  for (size_t i : {size_t(0), size_t(1), size_t(2)})
    if (ctx.input(i).type() != ElementType::F32) return false;
  if (hasPast && (ctx.input(4).type() != ElementType::F32 || ctx.input(5).type() != ElementType::F32)) return false;
  if (ctx.hasInput(3) && ctx.input(3).type() != ElementType::F32 && ctx.input(3).type() != ElementType::Bool) return false;
  return ctx.numOutputs() <= 3;
}

/// Heads of an input given as 4-D (B, H, S, D) or 3-D (B, S, H*D).
F32Heads inputHeads(const float *data, bool flat, int64_t heads, int64_t seq, int64_t size) {
  F32Heads h{const_cast<float *>(data), 0, 0, 0};
  if (flat) h.batch = seq * heads * size, h.head = size, h.row = heads * size;
  else h.batch = heads * seq * size, h.head = seq * size, h.row = size;
  return h;
}

/// The present cache (B, H, P + S, D): each head's past rows, then its new ones.
void writePresent(float *out, const float *past, const F32Heads &now, int64_t batch, int64_t heads, int64_t pastLen,
                  int64_t seq, int64_t size) {
  const int64_t total = pastLen + seq;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      float *dst = out + (b * heads + h) * total * size;
      copyBytes(dst, past + (b * heads + h) * pastLen * size, size_t(pastLen * size) * sizeof(float));
      for (int64_t t = 0; t < seq; ++t) copyBytes(dst + (pastLen + t) * size, now.at(b, h, t), size_t(size) * sizeof(float));
    }
}

/// Attention in f32 (attendF32), the scores adjusted as the f64 loops below adjust them.
Result<void> attentionF32(EvalContext &ctx, const AttentionGeometry &g, const AttentionOptions &o, bool hasPast) {
  const int64_t B = g.batch, Hq = g.qHeads, Hkv = g.kvHeads, Sq = g.queries, T = g.total(), P = g.past;
  const bool flat = g.rank == 3;
  Elements<float> qe(ctx.input(0)), ke(ctx.input(1)), ve(ctx.input(2));
  const F32Heads Q = inputHeads(qe.data(), flat, Hq, Sq, g.head), K = inputHeads(ke.data(), flat, Hkv, g.keys, g.head),
                 V = inputHeads(ve.data(), flat, Hkv, g.keys, g.vHead);
  // Keys and values as present caches: the outputs where the node has them, else scratch
  // (without a past the inputs themselves).
  Output<float> pk(ctx, ElementType::F32, Shape{B, Hkv, T, g.head}, 1), pv(ctx, ElementType::F32, Shape{B, Hkv, T, g.vHead}, 2);
  std::vector<float> scratchK, scratchV;
  F32Heads keys = K, values = V;
  if (hasPast || ctx.numOutputs() > 1) {
    float *kp = nullptr, *vp = nullptr;
    if (ctx.numOutputs() > 1) {
      SF_ASSIGN(kp, pk.makeForOverwrite());
    } else {
      scratchK.resize(size_t(B * Hkv * T * g.head));
      kp = scratchK.data();
    }
    if (ctx.numOutputs() > 2) {
      SF_ASSIGN(vp, pv.makeForOverwrite());
    } else {
      scratchV.resize(size_t(B * Hkv * T * g.vHead));
      vp = scratchV.data();
    }
    std::optional<Elements<float>> pastK, pastV;
    if (hasPast) pastK.emplace(ctx.input(4)), pastV.emplace(ctx.input(5));
    writePresent(kp, hasPast ? pastK->data() : nullptr, K, B, Hkv, P, g.keys, g.head);
    writePresent(vp, hasPast ? pastV->data() : nullptr, V, B, Hkv, P, g.keys, g.vHead);
    keys = {kp, Hkv * T * g.head, T * g.head, g.head};
    values = {vp, Hkv * T * g.vHead, T * g.vHead, g.vHead};
  }
  SF_ASSIGN(const AttentionMask am, attentionMask(ctx, B, Hq, Sq, T, false));
  std::optional<Elements<float>> maskF;
  std::optional<Elements<uint8_t>> maskB;
  if (ctx.hasInput(3)) {
    if (am.isBool) maskB.emplace(ctx.input(3));
    else maskF.emplace(ctx.input(3));
  }
  const int64_t maskKeys = am.shape.empty() ? T : am.shape.back();
  const std::array<int64_t, 4> ms = broadcastStrides4(am.shape);
  SF_ASSIGN(const std::vector<int64_t> nonpad, nonpadLengths(ctx, B, T));
  Shape yShape = flat ? Shape{B, Sq, Hq * g.vHead} : Shape{B, Hq, Sq, g.vHead};
  Output<float> yo(ctx, ElementType::F32, yShape, 0);
  SF_ASSIGN(float *yp, yo.makeForOverwrite());
  const F32Heads Y = inputHeads(yp, flat, Hq, Sq, g.vHead);
  const float lowest = std::numeric_limits<float>::lowest(), softcap = float(o.softcap);
  const bool masked = ctx.hasInput(3);
  const AttendSizes z{B, Hq, Hkv, Sq, T, g.head, g.vHead, float(o.scale)};
  // Under the causal rule alone (no mask, no padding), row i reads keys up to i + P only, and
  // each row keeps at least one: the keys after a chunk's last row are not computed. (With a
  // mask, a row could lose every key, and onnxruntime then averages all of them.)
  const bool causalOnly = o.causal && !masked && nonpad.empty();
  attendF32(z, Q, keys, values, Y, [&](int64_t b, int64_t h, int64_t i, float *row, int64_t n) {
    const int64_t maskAt = b * ms[0] + h * ms[1] + i * ms[2];
    for (int64_t j = 0; j < n; ++j) {
      float s = row[j];
      if (softcap > 0) s = softcap * std::tanh(s / softcap);
      if (masked) {
        if (j >= maskKeys) s = lowest;
        else if (maskB) s = (*maskB)[size_t(maskAt + j * ms[3])] != 0 ? s : -std::numeric_limits<float>::infinity();
        else s += (*maskF)[size_t(maskAt + j * ms[3])];
      }
      if (o.causal && j > i + P) s = lowest;
      if (!nonpad.empty() && j >= nonpad[size_t(b)]) s = lowest;
      row[j] = s;
    }
    return KeptKeys{0, n};
  }, [&](int64_t, int64_t end) { return causalOnly ? std::min(T, P + end) : T; });
  SF_TRY(yo.finish(0));
  if (ctx.numOutputs() > 1) SF_TRY(pk.finish(1));
  if (ctx.numOutputs() > 2) SF_TRY(pv.finish(2));
  return success();
}

Result<void> attention(EvalContext &ctx) {
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  SF_ASSIGN(int64_t qHeads, ctx.attrs().getInt("q_num_heads", 0));
  SF_ASSIGN(int64_t kvHeads, ctx.attrs().getInt("kv_num_heads", 0));
  const bool hasPast = ctx.hasInput(4) || ctx.hasInput(5);
  SF_ASSIGN(AttentionGeometry g,
            attentionGeometry(q.shape(), k.shape(), v.shape(), hasPast ? &ctx.input(4).shape() : nullptr,
                              hasPast ? &ctx.input(5).shape() : nullptr, qHeads, kvHeads));
  SF_ASSIGN(const AttentionOptions o, attentionOptions(ctx, g.head));
  if (attentionInF32(ctx, hasPast)) return attentionF32(ctx, g, o, hasPast);
  const int64_t B = g.batch, Hq = g.qHeads, Hkv = g.kvHeads, Sq = g.queries, T = g.total(), P = g.past;
  SF_ASSIGN(auto qv, doubles(q));
  SF_ASSIGN(auto kv, doubles(k));
  SF_ASSIGN(auto vv, doubles(v));
  const bool flat = g.rank == 3;
  Heads Q{&qv, Hq, Sq, g.head, flat}, K{&kv, Hkv, g.keys, g.head, flat}, V{&vv, Hkv, g.keys, g.vHead, flat};
  std::vector<double> pk, pv;
  if (hasPast) {
    SF_ASSIGN(pk, doubles(ctx.input(4)));
    SF_ASSIGN(pv, doubles(ctx.input(5)));
  }
  const std::vector<double> keys = present(hasPast ? &pk : nullptr, K, B, P);
  const std::vector<double> values = present(hasPast ? &pv : nullptr, V, B, P);
  // The mask, broadcast to (B, Hq, Sq, T): added (a float mask) or leaving positions out (a
  // boolean one, false).
  const double lowest = std::numeric_limits<float>::lowest();
  SF_ASSIGN(const AttentionMask am, attentionMask(ctx, B, Hq, Sq, T, true));
  const std::vector<double> &mask = am.values;
  const Shape &maskShape = am.shape;
  const bool boolMask = am.isBool;
  SF_ASSIGN(const std::vector<int64_t> nonpad, nonpadLengths(ctx, B, T));
  std::vector<double> y(static_cast<size_t>(B * Hq * Sq * g.vHead)), scores(static_cast<size_t>(B * Hq * Sq * T));
  std::vector<double> row(static_cast<size_t>(T));
  const int64_t group = Hq / Hkv;
  const std::array<int64_t, 4> ms = broadcastStrides4(maskShape);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t kh = h / group;
      for (int64_t i = 0; i < Sq; ++i) {
        double *qk = scores.data() + ((b * Hq + h) * Sq + i) * T; // no element when T = 0
        for (int64_t j = 0; j < T; ++j) {
          double s = 0;
          for (int64_t d = 0; d < g.head; ++d) s += Q.at(b, h, i, d) * keys[size_t(((b * Hkv + kh) * T + j) * g.head + d)];
          s *= o.scale;
          if (o.mode == 0) qk[j] = s;
          if (o.softcap > 0) s = o.softcap * std::tanh(s / o.softcap);
          if (o.mode == 1) qk[j] = s;
          if (!mask.empty() && j >= maskShape.back()) {
            s = lowest;
          } else if (!mask.empty()) {
            double m = mask[size_t(b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3])];
            s = boolMask ? (m != 0 ? s : -std::numeric_limits<double>::infinity()) : s + m;
          }
          if (o.causal && j > i + P) s = lowest;
          if (!nonpad.empty() && j >= nonpad[size_t(b)]) s = lowest;
          if (o.mode == 2) qk[j] = s;
          row[size_t(j)] = s;
        }
        double top = -std::numeric_limits<double>::infinity(), sum = 0;
        for (double s : row) top = std::max(top, s);
        if (top == -std::numeric_limits<double>::infinity()) // every key -inf: the row gives 0
          std::fill(row.begin(), row.end(), 0.0);
        else {
          for (double &s : row) sum += (s = std::exp(s - top));
          for (double &s : row) s /= sum;
        }
        if (o.mode == 3)
          for (int64_t j = 0; j < T; ++j) qk[j] = row[size_t(j)];
        for (int64_t d = 0; d < g.vHead; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < T; ++j) acc += row[size_t(j)] * values[size_t(((b * Hkv + kh) * T + j) * g.vHead + d)];
          // 3-D inputs give a 3-D output (B, Sq, Hq*Dv).
          size_t at = flat ? size_t(((b * Sq + i) * Hq + h) * g.vHead + d) : size_t(((b * Hq + h) * Sq + i) * g.vHead + d);
          y[at] = acc;
        }
      }
    }
  return setAttentionOutputs(ctx, g, y, keys, values, scores);
}

/// Where RotaryEmbedding's rows are: X (B, H, S, D) or (B, S, H*D), the first R features of each
/// head rotated by the caches' row of its position (`width` columns; `positions` (B*S) or, empty,
/// the caches are (B, S, width)).
struct RotaryRows {
  int64_t B = 0, H = 0, S = 0, D = 0, R = 0, width = 0, cacheRows = 0;
  bool flat = false, interleaved = false;
  std::vector<int64_t> positions;
};

/// X copied to `out` with each head's first R features rotated (out may not be x).
template <class T> Result<void> rotateRows(const RotaryRows &r, const T *x, const T *cos, const T *sin, T *out) {
  copyBytes(out, x, size_t(r.B * r.S * r.H * r.D) * sizeof(T));
  for (int64_t b = 0; b < r.B; ++b)
    for (int64_t p = 0; p < r.S; ++p) {
      int64_t row = b * r.S + p;
      if (!r.positions.empty()) {
        row = r.positions[size_t(b * r.S + p)];
        if (row < 0 || row >= r.cacheRows) return errorf("position {} is outside the cache of {}", row, r.cacheRows);
      }
      const T *c = cos + row * r.width, *n = sin + row * r.width;
      for (int64_t h = 0; h < r.H; ++h) {
        const int64_t base = r.flat ? (b * r.S + p) * r.H * r.D + h * r.D : ((b * r.H + h) * r.S + p) * r.D;
        rotatePairs(x + base, out + base, r.R, r.interleaved, c, n);
      }
    }
  return success();
}

/// RotaryEmbedding: per (batch, position, head) the first R features rotated in pairs (x[i],
/// x[i + R/2]) or, interleaved, (x[2i], x[2i + 1]) by the angle whose cosine and sine the caches
/// hold for the position; the other features copied. In f32 where X and the caches are.
Result<void> rotaryEmbedding(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &cosCache = ctx.input(1), &sinCache = ctx.input(2);
  SF_ASSIGN(int64_t heads, ctx.attrs().getInt("num_heads", 0));
  SF_ASSIGN(int64_t rotary, ctx.attrs().getInt("rotary_embedding_dim", 0));
  SF_ASSIGN(int64_t interleaved, ctx.attrs().getInt("interleaved", 0));
  const Shape &s = x.shape();
  if (s.size() != 3 && s.size() != 4) return errorf("X {} is not of rank 3 or 4", shapeText(s));
  RotaryRows r;
  r.flat = s.size() == 3;
  r.interleaved = interleaved != 0;
  if (r.flat && (heads <= 0 || s[2] % heads != 0)) return errorf("X {} with num_heads {}", shapeText(s), heads);
  r.B = s[0], r.H = r.flat ? heads : s[1], r.S = r.flat ? s[1] : s[2], r.D = r.flat ? s[2] / heads : s[3];
  r.R = rotary > 0 ? rotary : r.D;
  const int64_t half = r.R / 2;
  if (r.R > r.D || r.R % 2 != 0) return errorf("a rotated size of {} in heads of {}", r.R, r.D);
  const bool withPositions = ctx.hasInput(3); // given, even empty (a batch or a sequence of none)
  if (withPositions) {
    SF_ASSIGN(r.positions, ints(ctx.input(3)));
    if (int64_t(r.positions.size()) != r.B * r.S)
      return errorf("position_ids has {} values, not {}", r.positions.size(), r.B * r.S);
  }
  const Shape &cs = cosCache.shape();
  // The caches' rows are the rotated half, or the head's half of which the first columns are read.
  if (cs != sinCache.shape() || cs.empty() || (cs.back() != half && cs.back() != r.D / 2))
    return errorf("cos_cache {} and sin_cache {} for {} rotated features", shapeText(cs), shapeText(sinCache.shape()), r.R);
  r.width = cs.back(), r.cacheRows = cs[0];
  if (!withPositions && (cs.size() != 3 || cs[0] != r.B || cs[1] != r.S))
    return errorf("cos_cache {} without position_ids must be ({}, {}, {})", shapeText(cs), r.B, r.S, r.width);
  if (x.type() == ElementType::F32 && cosCache.type() == ElementType::F32 && sinCache.type() == ElementType::F32) {
    Elements<float> xe(x), ce(cosCache), se(sinCache);
    Output<float> out(ctx, ElementType::F32, s, 0);
    SF_ASSIGN(float *o, out.makeForOverwrite());
    SF_TRY(rotateRows(r, xe.data(), ce.data(), se.data(), o));
    return out.finish(0);
  }
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto cv, doubles(cosCache));
  SF_ASSIGN(auto sv, doubles(sinCache));
  std::vector<double> out(xv.size());
  SF_TRY(rotateRows(r, xv.data(), cv.data(), sv.data(), out.data()));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), s, out));
  return ctx.setOutput(0, std::move(t));
}

/// TensorScatter: past_cache with update written along `axis` at each batch entry's write index
/// (linear: it must fit; circular: positions wrap around the cache).
Result<void> tensorScatter(EvalContext &ctx) {
  const Tensor &past = ctx.input(0), &update = ctx.input(1);
  const Shape &ps = past.shape(), &us = update.shape();
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", -2));
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "linear"));
  const int64_t r = int64_t(ps.size());
  if (int64_t(us.size()) != r || r < 2) return errorf("past_cache {} and update {}", shapeText(ps), shapeText(us));
  if (axis < 0) axis += r;
  if (axis <= 0 || axis >= r) return errorf("axis {} of a rank-{} cache", axis, r);
  for (int64_t i = 0; i < r; ++i)
    if (i != axis && ps[size_t(i)] != us[size_t(i)])
      return errorf("past_cache {} and update {} differ at axis {}", shapeText(ps), shapeText(us), i);
  const int64_t capacity = ps[size_t(axis)], seq = us[size_t(axis)];
  if (seq > capacity) return errorf("update's {} positions do not fit a cache of {}", seq, capacity);
  std::vector<int64_t> at(size_t(ps[0]), 0);
  if (ctx.hasInput(2)) {
    SF_ASSIGN(at, ints(ctx.input(2)));
    if (int64_t(at.size()) != ps[0]) return errorf("write_indices has {} values for a batch of {}", at.size(), ps[0]);
  }
  int64_t outer = 1, inner = 1;
  outer = dimsProduct(ps, 1, size_t(axis));
  inner = dimsProduct(ps, size_t(axis) + 1, size_t(r));
  const size_t elem = elementSize(past.type());
  SF_ASSIGN(auto bytes, ctx.allocate(past.type(), ps));
  copyBytes(bytes.data(), past.bytes().data(), past.bytes().size());
  for (int64_t b = 0; b < ps[0]; ++b) {
    if (at[size_t(b)] < 0) return errorf("write index {} is negative", at[size_t(b)]);
    if (mode != "circular" && at[size_t(b)] + seq > capacity)
      return errorf("writing {} positions at {} passes the cache's {}", seq, at[size_t(b)], capacity);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t s = 0; s < seq; ++s) {
        int64_t pos = at[size_t(b)] + s;
        if (mode == "circular") pos %= capacity;
        const int64_t src = ((b * outer + o) * seq + s) * inner, dst = ((b * outer + o) * capacity + pos) * inner;
        copyBytes(bytes.data() + size_t(dst) * elem, update.bytes().data() + size_t(src) * elem, size_t(inner) * elem);
      }
  }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(past.type(), ps));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerAttentionKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "Attention", attention));
  SF_TRY(setKernel(r, "RotaryEmbedding", rotaryEmbedding));
  SF_TRY(setKernel(r, "TensorScatter", tensorScatter));
  return success();
}

} // namespace sf::eval::detail
