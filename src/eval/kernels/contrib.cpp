// Kernels of onnxruntime's contrib ops (rules in src/ops/contrib.cpp), with onnxruntime 1.30's
// CPU semantics, computed in double: the normalizations (SimplifiedLayerNormalization in the
// default domain, SkipSimplifiedLayerNormalization, SkipLayerNormalization,
// EmbedLayerNormalization), the GELU family, and FusedConv and FusedGemm on the standard kernels.
// The attention ops are in contrib_attention.cpp, the quantized ones in contrib_quantized.cpp.
#include "contrib.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace sf::eval::detail {

/// A per-hidden-element parameter (gamma, beta, bias): `hidden` values.
Result<std::vector<double>> hiddenParam(EvalContext &ctx, size_t i, int64_t hidden, const char *name) {
  SF_ASSIGN(auto v, doubles(ctx.input(i)));
  if (int64_t(v.size()) != hidden) return errorf("{} has {} values for a hidden size of {}", name, v.size(), hidden);
  return v;
}

namespace {

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

/// The activation of onnxruntime's fused ops (FusedConv, FusedGemm): Relu, Tanh, Sigmoid,
/// LeakyRelu (alpha, 0.01), Clip (min, max), HardSigmoid (alpha 0.2, beta 0.5); none when empty.
Result<std::function<double(double)>> fusedActivation(const std::string &name, const std::vector<double> &p) {
  auto param = [&](size_t i, double otherwise) { return i < p.size() ? p[i] : otherwise; };
  if (name.empty()) return std::function<double(double)>([](double x) { return x; });
  if (name == "Relu") return std::function<double(double)>([](double x) { return x > 0 || x != x ? x : 0.0; });
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

/// com.microsoft Inverse(X [..., M, M]): each matrix inverted by Gauss-Jordan elimination with
/// partial pivoting, in double; a singular matrix gives infinities or NaN (as a runtime's LU does).
Result<void> inverse(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) return errorf("X {} is not [..., M, M]", shapeText(s));
  const size_t m = size_t(s.back());
  SF_ASSIGN(std::vector<double> v, doubles(x));
  std::vector<double> a(m * m), inv(m * m);
  for (size_t at = 0; m > 0 && at < v.size(); at += m * m) {
    std::copy(v.begin() + ptrdiff_t(at), v.begin() + ptrdiff_t(at + m * m), a.begin());
    std::fill(inv.begin(), inv.end(), 0.0);
    for (size_t i = 0; i < m; ++i) inv[i * m + i] = 1.0;
    for (size_t col = 0; col < m; ++col) {
      size_t pivot = col;
      for (size_t r = col + 1; r < m; ++r)
        if (std::abs(a[r * m + col]) > std::abs(a[pivot * m + col])) pivot = r;
      if (pivot != col)
        for (size_t k = 0; k < m; ++k) std::swap(a[col * m + k], a[pivot * m + k]), std::swap(inv[col * m + k], inv[pivot * m + k]);
      const double p = a[col * m + col];
      for (size_t k = 0; k < m; ++k) a[col * m + k] /= p, inv[col * m + k] /= p;
      for (size_t r = 0; r < m; ++r) {
        if (r == col) continue;
        const double f = a[r * m + col];
        if (f == 0.0) continue;
        for (size_t k = 0; k < m; ++k) a[r * m + k] -= f * a[col * m + k], inv[r * m + k] -= f * inv[col * m + k];
      }
    }
    std::copy(inv.begin(), inv.end(), v.begin() + ptrdiff_t(at));
  }
  SF_ASSIGN(Tensor out, Tensor::fromDoubles(x.type(), s, v));
  return ctx.setOutput(0, std::move(out));
}

} // namespace

Result<void> registerContribKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "SimplifiedLayerNormalization", simplifiedLayerNorm));
  SF_TRY(setKernel(r, "SkipSimplifiedLayerNormalization", [](EvalContext &c) { return skipLayerNorm(c, true); }, kMs));
  SF_TRY(setKernel(r, "SkipLayerNormalization", [](EvalContext &c) { return skipLayerNorm(c, false); }, kMs));
  SF_TRY(setKernel(r, "Gelu", [](EvalContext &c) { return activationWithBias(c, 9, geluErf, 0); }, kMs));
  SF_TRY(setKernel(r, "BiasGelu", [](EvalContext &c) { return activationWithBias(c, 1, geluErf, 0); }, kMs));
  SF_TRY(setKernel(r, "FastGelu", [](EvalContext &c) { return activationWithBias(c, 1, geluTanh, 0); }, kMs));
  SF_TRY(setKernel(r, "QuickGelu", [](EvalContext &c) -> Result<void> {
    SF_ASSIGN(double alpha, c.attrs().getFloat("alpha", 1.702));
    return activationWithBias(c, 9, quickGelu, alpha);
  }, kMs));
  SF_TRY(setKernel(r, "EmbedLayerNormalization", embedLayerNorm, kMs));
  SF_TRY(setKernel(r, "Inverse", inverse, kMs));
  SF_TRY(registerContribAttentionKernels(r));
  SF_TRY(registerContribGqaKernels(r));
  SF_TRY(registerContribQuantizedKernels(r));
  SF_TRY(registerContribLegacyKernels(r));
  SF_TRY(registerContribTransformerKernels(r));
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
  // onnxruntime's QuantizeLinear and DequantizeLinear: ONNX's, with its wider types.
  for (const char *name : {"QuantizeLinear", "DequantizeLinear"}) {
    SF_ASSIGN(KernelFn k, standard(name));
    SF_TRY(setKernel(r, name, k, kMs));
  }
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
