// Kernels of the normalisations and the softmax family (src/ops/norm.cpp).
// BatchNormalization (inference, and training with its running statistics),
// InstanceNormalization, LayerNormalization, LRN, MeanVarianceNormalization, Softmax,
// LogSoftmax, Hardmax.
#include "../dnnl.h"
#include "../kernel_util.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sf::eval::detail {
namespace {

Result<void> batchNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  SF_ASSIGN(int64_t training, ctx.attrs().getInt("training_mode", 0));
  if (x.shape().size() < 2) return errorf("X is {}", shapeText(x.shape()));
  int64_t n = x.shape()[0], c = x.shape()[1], inner = x.elementCount() / std::max<int64_t>(n * c, 1);
  if (training) {
    // The batch's own statistics normalise it; the running ones move toward them by momentum.
    SF_ASSIGN(double momentum, ctx.attrs().getFloat("momentum", 0.9));
    SF_ASSIGN(auto xv, doubles(x));
    SF_ASSIGN(auto scale, doubles(ctx.input(1)));
    SF_ASSIGN(auto bias, doubles(ctx.input(2)));
    SF_ASSIGN(auto runMean, doubles(ctx.input(3)));
    SF_ASSIGN(auto runVar, doubles(ctx.input(4)));
    std::vector<double> y(xv.size()), mean(static_cast<size_t>(c), 0.0), var(static_cast<size_t>(c), 0.0);
    double count = double(n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) mean[size_t(ch)] += xv[size_t((b * c + ch) * inner + i)] / count;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          double d = xv[size_t((b * c + ch) * inner + i)] - mean[size_t(ch)];
          var[size_t(ch)] += d * d / count;
        }
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          size_t at = size_t((b * c + ch) * inner + i);
          y[at] = (xv[at] - mean[size_t(ch)]) / std::sqrt(var[size_t(ch)] + eps) * scale[size_t(ch)] + bias[size_t(ch)];
        }
    SF_ASSIGN(Tensor yt, Tensor::fromDoubles(x.type(), x.shape(), y));
    SF_TRY(ctx.setOutput(0, std::move(yt)));
    for (int64_t ch = 0; ch < c; ++ch) {
      runMean[size_t(ch)] = runMean[size_t(ch)] * momentum + mean[size_t(ch)] * (1 - momentum);
      runVar[size_t(ch)] = runVar[size_t(ch)] * momentum + var[size_t(ch)] * (1 - momentum);
    }
    if (ctx.numOutputs() > 1) {
      SF_ASSIGN(Tensor m, Tensor::fromDoubles(ctx.input(3).type(), ctx.input(3).shape(), runMean));
      SF_TRY(ctx.setOutput(1, std::move(m)));
    }
    if (ctx.numOutputs() > 2) {
      SF_ASSIGN(Tensor v, Tensor::fromDoubles(ctx.input(4).type(), ctx.input(4).shape(), runVar));
      SF_TRY(ctx.setOutput(2, std::move(v)));
    }
    return success();
  }
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    SF_ASSIGN(auto scale, doubles(ctx.input(1)));
    SF_ASSIGN(auto bias, doubles(ctx.input(2)));
    SF_ASSIGN(auto mean, doubles(ctx.input(3)));
    SF_ASSIGN(auto var, doubles(ctx.input(4)));
    // BatchNormalization before opset 9 with spatial = 0: one set of parameters per element of
    // an image ([C, D1, ...]), shared across the batch.
    SF_ASSIGN(int64_t spatial, ctx.attrs().getInt("spatial", 1));
    const bool perElement = spatial == 0 && ctx.opset() < 9; // never kept in a channel layout (plan.cpp)
    int64_t image = c; // C times the spatial dims (inner is 0 for an empty batch)
    for (size_t d = 2; d < x.shape().size(); ++d) image *= x.shape()[d];
    const int64_t count = perElement ? image : c;
    if (int64_t(scale.size()) != count || int64_t(bias.size()) != count || int64_t(mean.size()) != count ||
        int64_t(var.size()) != count)
      return errorf("scale, B, mean and var must have {} elements", count);
    Elements<T> xs(x);
    if (perElement) {
      Output<T> o(ctx, x.type(), x.shape());
      SF_ASSIGN(T * p, o.makeForOverwrite(true));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t e = 0; e < count; ++e) {
          const double k = scale[size_t(e)] / std::sqrt(var[size_t(e)] + eps);
          p[b * count + e] = T(double(xs[size_t(b * count + e)]) * k + (bias[size_t(e)] - mean[size_t(e)] * k));
        }
      return o.finish(0);
    }
    Output<T> o(ctx, x.type(), x.shape());
    // Element i written after reading element i only: in place over a dying X.
    SF_ASSIGN(T *p, o.makeForOverwrite(true));
    if (ctx.inputLayout() != Layout::Plain) {
      // X and Y kept in channel blocks of B (nChw16c, nChw8c; f32 [N, C, H, W]): B channels'
      // factors and shifts against each position's B values; channels last, C against C.
      const bool last = ctx.inputLayout() == Layout::ChannelsLast;
      const int64_t B = channelBlock(ctx.inputLayout());
      if (!std::is_same_v<T, float> || x.shape().size() != 4 || (!last && c % B != 0))
        return errorf("X {} {} kept in a channel layout", shortName(x.type()), shapeText(x.shape()));
      std::vector<T> kt(static_cast<size_t>(c)), sh(static_cast<size_t>(c));
      for (int64_t ch = 0; ch < c; ++ch) {
        const double k = scale[size_t(ch)] / std::sqrt(var[size_t(ch)] + eps);
        kt[size_t(ch)] = T(k), sh[size_t(ch)] = T(bias[size_t(ch)] - mean[size_t(ch)] * k);
      }
      if (last) {
        for (int64_t i = 0; i < n * inner; ++i) {
          const T *in = xs.data() + i * c;
          T *out = p + i * c;
          for (int64_t ch = 0; ch < c; ++ch) out[ch] = in[ch] * kt[size_t(ch)] + sh[size_t(ch)];
        }
        return o.finish(0);
      }
      for (int64_t b = 0; b < n; ++b)
        for (int64_t cb = 0; cb < c / B; ++cb) {
          const T *in = xs.data() + (b * c + cb * B) * inner, *kk = kt.data() + cb * B, *ss = sh.data() + cb * B;
          T *out = p + (b * c + cb * B) * inner;
          for (int64_t i = 0; i < inner; ++i)
            for (int64_t lane = 0; lane < B; ++lane) out[i * B + lane] = in[i * B + lane] * kk[lane] + ss[lane];
        }
      return o.finish(0);
    }
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch) {
        // The per-channel factor and shift in double, then one multiply-add per element in the
        // element type (a pass the compiler vectorises).
        const double k = scale[size_t(ch)] / std::sqrt(var[size_t(ch)] + eps);
        const T kt = T(k), sh = T(bias[size_t(ch)] - mean[size_t(ch)] * k);
        const T *in = xs.data() + (b * c + ch) * inner;
        T *out = p + (b * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) out[i] = in[i] * kt + sh;
      }
    return o.finish(0);
  });
}

Result<void> instanceNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  SF_ASSIGN(auto scale, doubles(ctx.input(1)));
  SF_ASSIGN(auto bias, doubles(ctx.input(2)));
  int64_t n = x.shape()[0], c = x.shape()[1], inner = x.elementCount() / std::max<int64_t>(n * c, 1);
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), x.shape());
    SF_ASSIGN(T *p, o.make());
    for (int64_t b = 0; b < n * c; ++b) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < inner; ++i) mean += double(xs[size_t(b * inner + i)]);
      mean /= double(inner);
      for (int64_t i = 0; i < inner; ++i) {
        double d = double(xs[size_t(b * inner + i)]) - mean;
        var += d * d;
      }
      var /= double(inner);
      double k = scale[size_t(b % c)] / std::sqrt(var + eps);
      for (int64_t i = 0; i < inner; ++i)
        p[b * inner + i] = T((double(xs[size_t(b * inner + i)]) - mean) * k + bias[size_t(b % c)]);
    }
    return o.finish(0);
  });
}

Result<void> layerNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, x.shape().size()));
  int64_t outer = 1, inner = 1;
  outer = dimsProduct(x.shape(), 0, axis);
  inner = dimsProduct(x.shape(), axis, x.shape().size());
  const Shape statShape = statsShape(x.shape(), axis);
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Shape normShape(x.shape().begin() + long(axis), x.shape().end());
    std::vector<double> scale, bias;
    SF_ASSIGN(scale, doubles(ctx.input(1)));
    if (ctx.hasInput(2)) {
      SF_ASSIGN(bias, doubles(ctx.input(2)));
    }
    // Scale and B broadcast to the normalised shape, once (not per element).
    auto expand = [&](const std::vector<double> &v, const Shape &s) {
      std::vector<double> full(static_cast<size_t>(inner));
      auto st = broadcastStrides(s, normShape);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t off = 0, rest = i;
        for (size_t d = normShape.size(); d-- > 0;) {
          off += (rest % normShape[d]) * st[d];
          rest /= normShape[d];
        }
        full[size_t(i)] = v[size_t(off)];
      }
      return full;
    };
    for (size_t k : {size_t(1), size_t(2)}) {
      if (!ctx.hasInput(k)) continue;
      auto b = broadcastAll({ctx.input(k).shape(), normShape});
      if (!b.ok() || *b != normShape)
        return errorf("{} of shape {} does not broadcast to the normalised shape {}", k == 1 ? "Scale" : "B",
                      shapeText(ctx.input(k).shape()), shapeText(normShape));
    }
    scale = expand(scale, ctx.input(1).shape());
    if (!bias.empty()) bias = expand(bias, ctx.input(2).shape());
    // In the element type: a pass the compiler vectorises (the mean and variance stay double).
    const std::vector<T> sc(scale.begin(), scale.end());
    std::vector<T> bi(static_cast<size_t>(inner), T(0));
    if (!bias.empty()) bi.assign(bias.begin(), bias.end());
    Output<T> o(ctx, x.type(), x.shape(), 0);
    SF_ASSIGN(T *p, o.make());
    Output<float> om(ctx, ElementType::F32, statShape, 1), oi(ctx, ElementType::F32, statShape, 2);
    float *pm = nullptr, *pi = nullptr;
    if (ctx.numOutputs() > 1) {
      SF_ASSIGN(pm, om.make());
    }
    if (ctx.numOutputs() > 2) {
      SF_ASSIGN(pi, oi.make());
    }
    for (int64_t r = 0; r < outer; ++r) {
      const T *row = xs.data() + r * inner;
      const double mean = laneSum(row, inner, [](double v) { return v; }) / double(inner);
      const double sq = laneSum(row, inner, [mean](double v) { return (v - mean) * (v - mean); });
      double inv = 1 / std::sqrt(sq / double(inner) + eps);
      const T m = T(mean), k = T(inv);
      T *out = p + r * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] = (row[i] - m) * k * sc[size_t(i)] + bi[size_t(i)];
      if (pm) pm[r] = float(mean);
      if (pi) pi[r] = float(inv);
    }
    SF_TRY(o.finish(0));
    if (pm) SF_TRY(om.finish(1));
    if (pi) SF_TRY(oi.finish(2));
    return success();
  });
}

Result<void> lrn(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 1e-4));
  SF_ASSIGN(double beta, ctx.attrs().getFloat("beta", 0.75));
  SF_ASSIGN(double bias, ctx.attrs().getFloat("bias", 1.0));
  SF_ASSIGN(int64_t size, ctx.attrs().getInt("size"));
  int64_t n = x.shape()[0], c = x.shape()[1], inner = x.elementCount() / std::max<int64_t>(n * c, 1);
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), x.shape());
    SF_ASSIGN(T *p, o.make());
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
            double v = double(xs[size_t((b * c + k) * inner + i)]);
            sq += v * v;
          }
          size_t at = size_t((b * c + ch) * inner + i);
          p[at] = T(double(xs[at]) / std::pow(bias + alpha / double(size) * sq, beta));
        }
    return o.finish(0);
  });
}

Result<void> mvn(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto axes, ctx.attrs().getInts("axes", {0, 2, 3}));
  size_t r = x.shape().size();
  Shape kept = x.shape();
  for (int64_t a : axes) {
    SF_ASSIGN(size_t d, normAxis(a, r));
    kept[d] = 1;
  }
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    int64_t groups = countOf(kept), count = x.elementCount() / std::max<int64_t>(groups, 1);
    std::vector<double> mean(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
    std::array<std::vector<int64_t>, 1> st{broadcastStrides(kept, x.shape())};
    forEachBroadcast<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1> &f) {
      mean[size_t(f[0])] += double(xs[size_t(i)]);
    });
    for (double &m : mean) m /= double(count);
    forEachBroadcast<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1> &f) {
      double d = double(xs[size_t(i)]) - mean[size_t(f[0])];
      sq[size_t(f[0])] += d * d;
    });
    Output<T> o(ctx, x.type(), x.shape());
    SF_ASSIGN(T *p, o.make());
    forEachBroadcast<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1> &f) {
      double sd = std::sqrt(sq[size_t(f[0])] / double(count));
      p[i] = T((double(xs[size_t(i)]) - mean[size_t(f[0])]) / (sd + 1e-9));
    });
    return o.finish(0);
  });
}

Result<void> softmax(EvalContext &ctx, bool log) {
  const Tensor &x = ctx.input(0);
  bool legacy = ctx.opset() < 13;
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", legacy ? 1 : -1));
  size_t r = x.shape().size();
  if (r == 0) return errorf("Softmax of a scalar");
  SF_ASSIGN(size_t axis, normAxis(axisAttr, r));
  // Before opset 13 the input is seen as a matrix [outer, inner] at the axis; since 13 the
  // softmax runs along the one axis.
  int64_t outer = dimsProduct(x.shape(), 0, axis), len = 1, inner = 1;
  if (legacy) {
    for (size_t d = axis; d < r; ++d) len *= x.shape()[d];
  } else {
    len = x.shape()[axis];
    for (size_t d = axis + 1; d < r; ++d) inner *= x.shape()[d];
  }
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), x.shape());
    SF_ASSIGN(T *p, o.makeForOverwrite());
    if (inner == 1 && !log && std::is_same_v<T, float> && len > 0) {
      // f32 rows along the last axis: each row less its maximum, the exponentials of the whole
      // tensor in one vectorised pass (oneDNN's where the build has it), each row divided by its
      // sum (in double).
      float *q = reinterpret_cast<float *>(p);
      const float *in = reinterpret_cast<const float *>(xs.data());
      for (int64_t a = 0; a < outer; ++a) {
        const float mx = laneMax(in + a * len, len);
        for (int64_t i = 0; i < len; ++i) q[a * len + i] = in[a * len + i] - mx;
      }
      if (!dnnlEltwise(EltKind::Exp, q, q, outer * len))
        for (int64_t i = 0; i < outer * len; ++i) q[i] = std::exp(q[i]);
      for (int64_t a = 0; a < outer; ++a) {
        float *row = q + a * len;
        const float inv = float(1.0 / laneSum(row, len, [](double v) { return v; }));
        for (int64_t i = 0; i < len; ++i) row[i] *= inv;
      }
      return o.finish(0);
    }
    if (inner == 1 && !log) {
      // Along contiguous rows (the last axis): each exponential once, kept for the division.
      std::vector<double> e(static_cast<size_t>(len));
      for (int64_t a = 0; a < outer; ++a) {
        const T *row = xs.data() + a * len;
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t i = 0; i < len; ++i) mx = std::max(mx, double(row[i]));
        for (int64_t i = 0; i < len; ++i) sum += e[size_t(i)] = std::exp(double(row[i]) - mx);
        for (int64_t i = 0; i < len; ++i) p[a * len + i] = T(e[size_t(i)] / sum);
      }
      return o.finish(0);
    }
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t b = 0; b < inner; ++b) {
        auto idx = [&](int64_t i) { return size_t((a * len + i) * inner + b); };
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < len; ++i) mx = std::max(mx, double(xs[idx(i)]));
        double sum = 0;
        for (int64_t i = 0; i < len; ++i) sum += std::exp(double(xs[idx(i)]) - mx);
        for (int64_t i = 0; i < len; ++i) {
          double v = double(xs[idx(i)]) - mx;
          p[idx(i)] = T(log ? v - std::log(sum) : std::exp(v) / sum);
        }
      }
    return o.finish(0);
  });
}

Result<void> hardmax(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  bool legacy = ctx.opset() < 13;
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", legacy ? 1 : -1));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  int64_t outer = dimsProduct(a.shape(), 0, axis), len = 1, inner = 1;
  if (legacy) {
    for (size_t d = axis; d < a.shape().size(); ++d) len *= a.shape()[d];
  } else {
    len = a.shape()[axis];
    for (size_t d = axis + 1; d < a.shape().size(); ++d) inner *= a.shape()[d];
  }
  return dispatchFloat(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a);
    Output<T> o(ctx, a.type(), a.shape());
    SF_ASSIGN(T *p, o.make());
    for (int64_t u = 0; u < outer; ++u)
      for (int64_t v = 0; v < inner; ++v) {
        int64_t best = 0;
        for (int64_t i = 1; i < len; ++i)
          if (x[size_t((u * len + i) * inner + v)] > x[size_t((u * len + best) * inner + v)]) best = i;
        for (int64_t i = 0; i < len; ++i) p[(u * len + i) * inner + v] = T(i == best ? 1 : 0);
      }
    return o.finish(0);
  });
}

/// LpNormalization: X divided by its p-norm (p = 1: the sum of |x|, p = 2: the root of the sum
/// of squares) along `axis` (default -1), in double; a zero norm gives 0 (onnxruntime).
Result<void> lpNorm(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(int64_t p, ctx.attrs().getInt("p", 2));
  if (p != 1 && p != 2) return errorf("p must be 1 or 2, got {}", p);
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  const int64_t outer = dimsProduct(a.shape(), 0, axis), len = a.shape()[axis],
                inner = dimsProduct(a.shape(), axis + 1, a.shape().size());
  return dispatchFloat(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a);
    Output<T> o(ctx, a.type(), a.shape());
    SF_ASSIGN(T * y, o.makeForOverwrite());
    for (int64_t u = 0; u < outer; ++u)
      for (int64_t v = 0; v < inner; ++v) {
        double norm = 0;
        for (int64_t i = 0; i < len; ++i) {
          const double e = double(x[size_t((u * len + i) * inner + v)]);
          norm += p == 1 ? std::fabs(e) : e * e;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t i = 0; i < len; ++i) {
          const size_t at = size_t((u * len + i) * inner + v);
          y[at] = T(norm == 0 ? 0.0 : double(x[at]) / norm);
        }
      }
    return o.finish(0);
  });
}

/// RMSNormalization: Y = X / sqrt(mean(X^2) + epsilon) * scale, the mean over the axes from
/// `axis` on, in double (the stash type's float or better), scale broadcast onto X.
Result<void> rmsNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &scale = ctx.input(1);
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  const int64_t r = int64_t(x.shape().size());
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return errorf("axis out of range for X {}", shapeText(x.shape()));
  SF_ASSIGN(Shape bs, broadcastAll({scale.shape(), x.shape()}));
  if (bs != x.shape()) return errorf("scale {} does not broadcast to X {}", shapeText(scale.shape()), shapeText(x.shape()));
  int64_t inner = 1;
  for (int64_t d = axis; d < r; ++d) inner *= x.shape()[size_t(d)];
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto sv, doubles(scale));
  auto st = broadcastStrides(scale.shape(), x.shape());
  const int64_t rows = inner ? x.elementCount() / inner : 0;
  std::vector<double> y(xv.size());
  std::vector<int64_t> idx(size_t(r), 0);
  for (int64_t row = 0; row < rows; ++row) {
    double ms = 0;
    for (int64_t i = 0; i < inner; ++i) ms += xv[size_t(row * inner + i)] * xv[size_t(row * inner + i)];
    const double inv = 1.0 / std::sqrt(ms / double(inner) + eps);
    for (int64_t i = 0; i < inner; ++i) {
      int64_t flat = row * inner + i, s = 0;
      for (int64_t d = r - 1, rest = flat; d >= 0; --d) s += (rest % x.shape()[size_t(d)]) * st[size_t(d)], rest /= x.shape()[size_t(d)];
      y[size_t(flat)] = xv[size_t(flat)] * inv * sv[size_t(s)];
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(scale.type(), x.shape(), y));
  return ctx.setOutput(0, std::move(t));
}

/// GroupNormalization: per image and group of channels, (x - mean) / sqrt(var + epsilon), then
/// scale and bias: per group before opset 21, per channel from 21.
Result<void> groupNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &scale = ctx.input(1), &bias = ctx.input(2);
  SF_ASSIGN(int64_t groups, ctx.attrs().getInt("num_groups"));
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  if (x.shape().size() < 2) return errorf("X is {}", shapeText(x.shape()));
  const int64_t N = x.shape()[0], C = x.shape()[1];
  if (groups <= 0 || C % groups != 0) return errorf("{} channels in {} groups", C, groups);
  const bool perChannel = ctx.opset() >= 21;
  const int64_t want = perChannel ? C : groups;
  if (scale.elementCount() != want || bias.elementCount() != want)
    return errorf("scale and bias of {} and {} elements, not {}", scale.elementCount(), bias.elementCount(), want);
  const int64_t inner = C ? x.elementCount() / std::max<int64_t>(N * C, 1) : 0, perGroup = (C / groups) * inner;
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto sv, doubles(scale));
  SF_ASSIGN(auto bv, doubles(bias));
  std::vector<double> y(xv.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (n * groups + g) * perGroup;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < perGroup; ++i) mean += xv[size_t(base + i)];
      mean /= double(std::max<int64_t>(perGroup, 1));
      for (int64_t i = 0; i < perGroup; ++i) var += (xv[size_t(base + i)] - mean) * (xv[size_t(base + i)] - mean);
      var /= double(std::max<int64_t>(perGroup, 1));
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < perGroup; ++i) {
        const int64_t ch = g * (C / groups) + i / inner, k = perChannel ? ch : g;
        y[size_t(base + i)] = (xv[size_t(base + i)] - mean) * inv * sv[size_t(k)] + bv[size_t(k)];
      }
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), x.shape(), y));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerNormKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "RMSNormalization", rmsNorm));
  SF_TRY(setKernel(r, "GroupNormalization", groupNorm));
  SF_TRY(setKernel(r, "BatchNormalization", batchNorm));
  r.findMutable("", "BatchNormalization")->kernelTakesBlocked = true; // in inference, per channel
  SF_TRY(setKernel(r, "InstanceNormalization", instanceNorm));
  SF_TRY(setKernel(r, "LayerNormalization", layerNorm));
  SF_TRY(setKernel(r, "LRN", lrn));
  SF_TRY(setKernel(r, "MeanVarianceNormalization", mvn));
  SF_TRY(setKernel(r, "Softmax", [](EvalContext &c) { return softmax(c, false); }));
  SF_TRY(setKernel(r, "LogSoftmax", [](EvalContext &c) { return softmax(c, true); }));
  SF_TRY(setKernel(r, "Hardmax", hardmax));
  SF_TRY(setKernel(r, "LpNormalization", lpNorm));
  return success();
}

} // namespace sf::eval::detail
