// Kernels of the ops of src/ops/misc.cpp: quantization, window functions, DFT, STFT, mel weights.
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear; HannWindow, HammingWindow,
// BlackmanWindow; DFT, STFT, MelWeightMatrix.
#include "../kernel_util.h"
#include "quantized.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sf::eval::detail {
namespace {

/// Where a quantization parameter (scale or zero point) applies: one for the tensor, one per
/// index along `axis` (1-D), or with `block` > 0 (opset 21) one per `block` consecutive indices
/// along `axis` (the parameter has X's rank, the axis's size divided by `block` rounded up).
struct QuantLayout {
  size_t axis = 0;
  int64_t block = 0;
};

/// Parameter `p` (of shape `ps`) of element `i` of X (of shape `xs`).
double paramAt(const std::vector<double> &p, const Shape &ps, const Shape &xs, const QuantLayout &l, int64_t i) {
  if (p.size() == 1) return p[0];
  if (l.block <= 0) {
    int64_t inner = 1;
    for (size_t d = l.axis + 1; d < xs.size(); ++d) inner *= xs[d];
    return p[size_t((i / inner) % xs[l.axis])];
  }
  int64_t at = 0, stride = 1;
  for (size_t d = xs.size(); d-- > 0;) {
    int64_t c = i % xs[d];
    i /= xs[d];
    if (d == l.axis) c /= l.block;
    at += c * stride;
    stride *= ps[d];
  }
  return p[size_t(at)];
}

/// The layout of the parameters of a Q/DQ node on X, checked against their shapes (the zero
/// point, input 2, has the scale's).
Result<QuantLayout> quantLayout(EvalContext &ctx, const Shape &x, const Shape &scale) {
  if (ctx.hasInput(2) && ctx.input(2).shape() != scale && !(countOf(ctx.input(2).shape()) == 1 && countOf(scale) == 1))
    return errorf("the zero point {} and the scale {} differ in shape", shapeText(ctx.input(2).shape()), shapeText(scale));
  QuantLayout l;
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 1));
  SF_ASSIGN(l.block, ctx.attrs().getInt("block_size", 0));
  if (countOf(scale) == 1 && scale.size() <= 1) return l;
  SF_ASSIGN(l.axis, normAxis(axisAttr, x.size()));
  if (l.block <= 0) {
    if (scale.size() != 1 || scale[0] != x[l.axis])
      return errorf("a scale of shape {} for X {} along axis {}", shapeText(scale), shapeText(x), axisAttr);
    return l;
  }
  if (scale.size() != x.size()) return errorf("blocked scale {} for X {}: the ranks differ", shapeText(scale), shapeText(x));
  for (size_t d = 0; d < x.size(); ++d) {
    int64_t want = d == l.axis ? (x[d] + l.block - 1) / l.block : x[d];
    if (scale[d] != want)
      return errorf("blocked scale {} for X {} in blocks of {} along axis {}: axis {} must be {}", shapeText(scale),
                    shapeText(x), l.block, axisAttr, d, want);
  }
  return l;
}

Result<std::pair<double, double>> rangeOf(ElementType t) {
  switch (t) {
  case ElementType::U8: return std::pair{0.0, 255.0};
  case ElementType::I8: return std::pair{-128.0, 127.0};
  case ElementType::U16: return std::pair{0.0, 65535.0};
  case ElementType::I16: return std::pair{-32768.0, 32767.0};
  case ElementType::I32: return std::pair{-2147483648.0, 2147483647.0};
  case ElementType::I4: return std::pair{-8.0, 7.0};
  case ElementType::U4: return std::pair{0.0, 15.0};
  default: return errorf("quantized type {} is not supported", shortName(t));
  }
}

/// QuantizeLinear to a float8 or float4 type: x / scale + zero point, the nearest value of the
/// type, beyond its largest saturated or not by attribute `saturate` (default 1).
Result<void> quantizeToFloat(EvalContext &ctx, const std::vector<double> &xs, const std::vector<double> &scale,
                             const std::vector<double> &zp, const Shape &ps, const QuantLayout &layout, ElementType out) {
  SF_ASSIGN(int64_t saturate, ctx.attrs().getInt("saturate", 1));
  const Shape &shape = ctx.input(0).shape();
  SF_ASSIGN(auto bytes, ctx.allocate(out, shape));
  auto *p = reinterpret_cast<uint8_t *>(bytes.data());
  for (size_t i = 0; i < xs.size(); ++i) {
    double s = paramAt(scale, ps, shape, layout, int64_t(i));
    double ratio = ctx.input(0).type() == ElementType::F32 ? double(float(xs[i]) / float(s)) : xs[i] / s;
    p[i] = doubleToNarrow(narrowFormat(out), ratio + paramAt(zp, ps, shape, layout, int64_t(i)), saturate != 0);
  }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(out, shape));
  return ctx.setOutput(0, std::move(t));
}

Result<void> quantize(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto xs, doubles(x));
  SF_ASSIGN(auto scale, doubles(ctx.input(1)));
  const Shape &ps = ctx.input(1).shape();
  std::vector<double> zp{0};
  SF_ASSIGN(int64_t dtype, ctx.attrs().getInt("output_dtype", 0));
  ElementType out = ElementType::U8;
  if (dtype != 0) {
    auto t = elementTypeFromOnnx(dtype);
    if (!t) return errorf("attribute 'output_dtype' {} is not an element type", dtype);
    out = *t;
  }
  if (ctx.hasInput(2)) {
    SF_ASSIGN(zp, doubles(ctx.input(2)));
    if (dtype != 0 && ctx.input(2).type() != out)
      return errorf("output_dtype {} and the zero point's type {} differ", shortName(out), shortName(ctx.input(2).type()));
    out = ctx.input(2).type();
  }
  SF_ASSIGN(QuantLayout layout, quantLayout(ctx, x.shape(), ps));
  if (isNarrowFloat(out)) return quantizeToFloat(ctx, xs, scale, zp, ps, layout, out);
  SF_ASSIGN(auto range, rangeOf(out));
  std::vector<double> y(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    // x / scale in the input's precision (f32 inputs divide in float, as runtimes do).
    double s = paramAt(scale, ps, x.shape(), layout, int64_t(i));
    double ratio = x.type() == ElementType::F32 ? double(float(xs[i]) / float(s)) : xs[i] / s;
    double q = std::nearbyint(ratio) + paramAt(zp, ps, x.shape(), layout, int64_t(i));
    y[i] = std::clamp(q, range.first, range.second);
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, x.shape(), y));
  return ctx.setOutput(0, std::move(t));
}

Result<void> dequantize(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto xs, doubles(x));
  SF_ASSIGN(auto scale, doubles(ctx.input(1)));
  const Shape &ps = ctx.input(1).shape();
  std::vector<double> zp{0};
  if (ctx.hasInput(2)) {
    SF_ASSIGN(zp, doubles(ctx.input(2)));
  }
  SF_ASSIGN(QuantLayout layout, quantLayout(ctx, x.shape(), ps));
  std::vector<double> y(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    y[i] = (xs[i] - paramAt(zp, ps, x.shape(), layout, int64_t(i))) * paramAt(scale, ps, x.shape(), layout, int64_t(i));
  SF_ASSIGN(int64_t dtype, ctx.attrs().getInt("output_dtype", 0));
  ElementType out = ctx.input(1).type();
  if (dtype != 0) {
    auto t = elementTypeFromOnnx(dtype);
    if (!t || !isFloat(*t)) return errorf("attribute 'output_dtype' {} is not a float type", dtype);
    out = *t;
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, x.shape(), y));
  return ctx.setOutput(0, std::move(t));
}

Result<void> dynamicQuantize(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto y, doubles(x));
  const auto [scale, zpf] = quantizeU8Dynamic(y);
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::U8, x.shape(), y));
  SF_TRY(ctx.setOutput(0, std::move(t)));
  SF_ASSIGN(Tensor s, Tensor::fromDoubles(ElementType::F32, {}, {double(scale)}));
  SF_TRY(ctx.setOutput(1, std::move(s)));
  SF_ASSIGN(Tensor z, Tensor::fromDoubles(ElementType::U8, {}, {double(zpf)}));
  return ctx.setOutput(2, std::move(z));
}

enum class Window { Hann, Hamming, Blackman };

Result<void> window(EvalContext &ctx, Window kind) {
  SF_ASSIGN(auto sizeV, ints(ctx.input(0)));
  if (sizeV.size() != 1 || sizeV[0] < 0) return errorf("size must be one non-negative element");
  int64_t size = sizeV[0];
  SF_ASSIGN(int64_t periodic, ctx.attrs().getInt("periodic", 1));
  SF_ASSIGN(int64_t dt, ctx.attrs().getInt("output_datatype", 1));
  auto type = elementTypeFromOnnx(dt);
  if (!type) return errorf("output_datatype {}", dt);
  SF_TRY(ctx.admit(*type, {size}));
  double n = double(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  const double pi = std::numbers::pi;
  for (int64_t i = 0; i < size; ++i) {
    double a = 2 * pi * double(i) / n;
    switch (kind) {
    case Window::Hann: w[size_t(i)] = 0.5 - 0.5 * std::cos(a); break;
    case Window::Hamming: w[size_t(i)] = 25.0 / 46 - 21.0 / 46 * std::cos(a); break;
    case Window::Blackman: w[size_t(i)] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a); break;
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(*type, {size}, w));
  return ctx.setOutput(0, std::move(t));
}

/// One DFT of `n` complex samples (re, im interleaved) to `bins` outputs.
void dft1(const std::vector<double> &in, size_t n, size_t bins, bool inverse, std::vector<double> &out) {
  const double pi = std::numbers::pi;
  out.assign(2 * bins, 0.0);
  for (size_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (size_t t = 0; t < n; ++t) {
      double a = (inverse ? 2 : -2) * pi * double(k) * double(t) / double(n);
      double c = std::cos(a), s = std::sin(a);
      re += in[2 * t] * c - in[2 * t + 1] * s;
      im += in[2 * t] * s + in[2 * t + 1] * c;
    }
    if (inverse) re /= double(n), im /= double(n);
    out[2 * k] = re, out[2 * k + 1] = im;
  }
}

Result<void> dft(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  if (s.size() < 3 || (s.back() != 1 && s.back() != 2)) return errorf("input must be [batch, ..., 1 or 2]");
  SF_ASSIGN(int64_t inverse, ctx.attrs().getInt("inverse", 0));
  SF_ASSIGN(int64_t onesided, ctx.attrs().getInt("onesided", 0));
  int64_t axisAttr = 1;
  if (ctx.opset() >= 20 && ctx.hasInput(2)) {
    SF_ASSIGN(auto a, ints(ctx.input(2)));
    if (a.size() != 1) return errorf("axis must have one element");
    axisAttr = a[0];
  } else {
    SF_ASSIGN(axisAttr, ctx.attrs().getInt("axis", 1));
  }
  // The axis counts the signal dims, not the trailing real/imaginary one.
  SF_ASSIGN(size_t axis, normAxis(axisAttr, s.size() - 1));
  if (axis == 0) return errorf("the axis cannot be the batch axis");
  int64_t len = s[axis];
  int64_t n = len;
  if (ctx.hasInput(1)) {
    SF_ASSIGN(auto l, ints(ctx.input(1)));
    if (l.size() != 1 || l[0] <= 0) return errorf("dft_length must be one positive element");
    n = l[0];
  }
  int64_t bins = onesided ? n / 2 + 1 : n;
  Shape out = s;
  out[axis] = bins;
  out.back() = 2;
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto v, doubles(x));
  int64_t comp = s.back(), outer = 1, inner = 1;
  outer = dimsProduct(s, 0, axis);
  inner = s.empty() ? 1 : dimsProduct(s, axis + 1, s.size() - 1);
  std::vector<double> y(static_cast<size_t>(countOf(out))), line(static_cast<size_t>(2 * n)), res;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::fill(line.begin(), line.end(), 0.0);
      for (int64_t t = 0; t < std::min(len, n); ++t)
        for (int64_t c = 0; c < comp; ++c) line[size_t(2 * t + c)] = v[size_t(((o * len + t) * inner + i) * comp + c)];
      dft1(line, size_t(n), size_t(bins), inverse != 0, res);
      for (int64_t k = 0; k < bins; ++k)
        for (int64_t c = 0; c < 2; ++c) y[size_t(((o * bins + k) * inner + i) * 2 + c)] = res[size_t(2 * k + c)];
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

Result<void> stft(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  if (s.size() != 3 || (s[2] != 1 && s[2] != 2)) return errorf("signal must be [batch, length, 1 or 2]");
  SF_ASSIGN(int64_t onesided, ctx.attrs().getInt("onesided", 1));
  SF_ASSIGN(auto stepV, ints(ctx.input(1)));
  if (stepV.size() != 1 || stepV[0] <= 0) return errorf("frame_step must be one positive element");
  int64_t step = stepV[0];
  std::vector<double> window;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(window, doubles(ctx.input(2)));
  }
  int64_t frameLen = window.empty() ? 0 : int64_t(window.size());
  if (ctx.hasInput(3)) {
    SF_ASSIGN(auto fl, ints(ctx.input(3)));
    if (fl.size() != 1 || fl[0] <= 0) return errorf("frame_length must be one positive element");
    frameLen = fl[0];
  }
  if (frameLen <= 0) return errorf("neither a window nor a frame_length is given");
  if (!window.empty() && int64_t(window.size()) != frameLen) return errorf("the window has {} elements for frames of {}", window.size(), frameLen);
  int64_t batch = s[0], len = s[1], comp = s[2];
  if (len < frameLen) return errorf("the signal ({}) is shorter than a frame ({})", len, frameLen);
  int64_t frames = (len - frameLen) / step + 1, bins = onesided ? frameLen / 2 + 1 : frameLen;
  Shape out{batch, frames, bins, 2};
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto v, doubles(x));
  std::vector<double> y(static_cast<size_t>(countOf(out))), line(static_cast<size_t>(2 * frameLen)), res;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < frameLen; ++t)
        for (int64_t c = 0; c < 2; ++c) {
          double w = window.empty() ? 1.0 : window[size_t(t)];
          line[size_t(2 * t + c)] = c < comp ? v[size_t(((b * len) + f * step + t) * comp + c)] * w : 0.0;
        }
      dft1(line, size_t(frameLen), size_t(bins), false, res);
      for (int64_t k = 0; k < bins; ++k)
        for (int64_t c = 0; c < 2; ++c) y[size_t(((b * frames + f) * bins + k) * 2 + c)] = res[size_t(2 * k + c)];
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// MelWeightMatrix: the triangular filters of `num_mel_bins` mel bands over the
/// dft_length/2 + 1 bins of a one-sided spectrum ([bins, num_mel_bins]). Band edges are spaced
/// evenly on the mel scale (2595 * log10(1 + f / 700)) over num_mel_bins + 2 points and mapped to
/// bins as floor((dft_length + 1) * f / sample_rate), as ONNX's reference computes them; a band
/// whose lower edge and center share a bin has 1 there.
Result<void> melWeightMatrix(EvalContext &ctx) {
  auto scalar = [&](size_t i) -> Result<double> {
    SF_ASSIGN(auto v, doubles(ctx.input(i)));
    if (v.size() != 1) return errorf("input {} has {} elements, not 1", i, v.size());
    return v[0];
  };
  SF_ASSIGN(double melBins, scalar(0));
  SF_ASSIGN(double dftLength, scalar(1));
  SF_ASSIGN(double sampleRate, scalar(2));
  SF_ASSIGN(double lowHz, scalar(3));
  SF_ASSIGN(double highHz, scalar(4));
  SF_ASSIGN(int64_t outType, ctx.attrs().getInt("output_datatype", 1));
  auto type = elementTypeFromOnnx(outType);
  if (!type) return errorf("output_datatype {} is not an element type", outType);
  int64_t m = int64_t(melBins), dft = int64_t(dftLength), rate = int64_t(sampleRate);
  if (m <= 0 || dft <= 0 || rate <= 0) return errorf("num_mel_bins, dft_length and sample_rate must be positive");
  int64_t bins = dft / 2 + 1;
  Shape out{bins, m};
  SF_TRY(ctx.admit(*type, out));
  // The mel edges in f32, as the reference computes them from its f32 inputs.
  float lowMel = 2595.0f * std::log10(1.0f + float(lowHz) / 700.0f);
  float highMel = 2595.0f * std::log10(1.0f + float(highHz) / 700.0f);
  float step = (highMel - lowMel) / float(m + 2);
  std::vector<int64_t> edge(size_t(m + 2));
  for (int64_t i = 0; i < m + 2; ++i) {
    double mel = double(i) * double(step) + double(lowMel);
    double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    edge[size_t(i)] = int64_t(std::floor(double(dft + 1) * hz / double(rate)));
  }
  std::vector<double> w(size_t(bins * m), 0.0);
  auto at = [&](int64_t j, int64_t i) -> Result<double *> {
    if (j < 0 || j >= bins) return errorf("band {} reaches bin {} of {}", i, j, bins);
    return &w[size_t(j * m + i)];
  };
  for (int64_t i = 0; i < m; ++i) {
    int64_t lo = edge[size_t(i)], center = edge[size_t(i + 1)], hi = edge[size_t(i + 2)];
    if (center == lo) {
      SF_ASSIGN(double *p, at(center, i));
      *p = 1;
    } else {
      for (int64_t j = lo; j <= center; ++j) {
        SF_ASSIGN(double *p, at(j, i));
        *p = double(j - lo) / double(center - lo);
      }
    }
    for (int64_t j = center; j < hi; ++j) {
      SF_ASSIGN(double *p, at(j, i));
      *p = double(hi - j) / double(hi - center);
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(*type, out, w));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerMiscKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "QuantizeLinear", quantize));
  SF_TRY(setKernel(r, "DequantizeLinear", dequantize));
  SF_TRY(setKernel(r, "DynamicQuantizeLinear", dynamicQuantize));
  SF_TRY(setKernel(r, "HannWindow", [](EvalContext &c) { return window(c, Window::Hann); }));
  SF_TRY(setKernel(r, "HammingWindow", [](EvalContext &c) { return window(c, Window::Hamming); }));
  SF_TRY(setKernel(r, "BlackmanWindow", [](EvalContext &c) { return window(c, Window::Blackman); }));
  SF_TRY(setKernel(r, "DFT", dft));
  SF_TRY(setKernel(r, "STFT", stft));
  SF_TRY(setKernel(r, "MelWeightMatrix", melWeightMatrix));
  return success();
}

} // namespace sf::eval::detail
