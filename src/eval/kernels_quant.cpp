// Quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear), the window functions
// (Hann, Hamming, Blackman), MelWeightMatrix, Det and Einsum.
#include "kernel_util.h"

#include <cctype>
#include <cmath>
#include <map>
#include <numbers>

namespace sf::eval::detail {
namespace {

/// Per-axis (or per-tensor) parameter `p` broadcast to element `i` of `shape` along `axis`.
double perAxis(const std::vector<double> &p, const Shape &shape, size_t axis, int64_t i) {
  if (p.size() == 1) return p[0];
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  return p[size_t((i / inner) % shape[axis])];
}

Result<std::pair<double, double>> rangeOf(ElementType t) {
  switch (t) {
  case ElementType::U8: return std::pair{0.0, 255.0};
  case ElementType::I8: return std::pair{-128.0, 127.0};
  case ElementType::U16: return std::pair{0.0, 65535.0};
  case ElementType::I16: return std::pair{-32768.0, 32767.0};
  case ElementType::I32: return std::pair{-2147483648.0, 2147483647.0};
  default: return errorf("quantized type {} is not supported", shortName(t));
  }
}

Result<void> quantize(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto xs, doubles(x));
  SF_ASSIGN(auto scale, doubles(ctx.input(1)));
  std::vector<double> zp{0};
  ElementType out = ElementType::U8;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(zp, doubles(ctx.input(2)));
    out = ctx.input(2).type();
  }
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 1));
  size_t axis = 0;
  if (scale.size() > 1) {
    SF_ASSIGN(axis, normAxis(axisAttr, x.shape().size()));
  }
  SF_ASSIGN(auto range, rangeOf(out));
  std::vector<double> y(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    // x / scale in the input's precision (f32 inputs divide in float, as runtimes do).
    double s = perAxis(scale, x.shape(), axis, int64_t(i));
    double ratio = x.type() == ElementType::F32 ? double(float(xs[i]) / float(s)) : xs[i] / s;
    double q = std::nearbyint(ratio) + perAxis(zp, x.shape(), axis, int64_t(i));
    y[i] = std::clamp(q, range.first, range.second);
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, x.shape(), y));
  return ctx.setOutput(0, std::move(t));
}

Result<void> dequantize(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto xs, doubles(x));
  SF_ASSIGN(auto scale, doubles(ctx.input(1)));
  std::vector<double> zp{0};
  if (ctx.hasInput(2)) {
    SF_ASSIGN(zp, doubles(ctx.input(2)));
  }
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 1));
  size_t axis = 0;
  if (scale.size() > 1) {
    SF_ASSIGN(axis, normAxis(axisAttr, x.shape().size()));
  }
  std::vector<double> y(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    y[i] = (xs[i] - perAxis(zp, x.shape(), axis, int64_t(i))) * perAxis(scale, x.shape(), axis, int64_t(i));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ctx.input(1).type(), x.shape(), y));
  return ctx.setOutput(0, std::move(t));
}

Result<void> dynamicQuantize(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto xs, doubles(x));
  float lo = 0, hi = 0;
  for (double v : xs) lo = std::min(lo, float(v)), hi = std::max(hi, float(v));
  float scale = (hi - lo) / 255.0f;
  float zpf = scale == 0 ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
  std::vector<double> y(xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    y[i] = scale == 0 ? zpf : std::clamp(double(std::nearbyint(float(xs[i]) / scale)) + zpf, 0.0, 255.0);
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

Result<void> det(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) return errorf("input must be [..., M, M]");
  int64_t m = s.back(), mats = countOf(Shape(s.begin(), s.end() - 2));
  SF_ASSIGN(auto v, doubles(x));
  std::vector<double> out(static_cast<size_t>(mats));
  for (int64_t k = 0; k < mats; ++k) {
    std::vector<double> a(v.begin() + k * m * m, v.begin() + (k + 1) * m * m);
    double d = 1;
    for (int64_t c = 0; c < m; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::abs(a[size_t(r * m + c)]) > std::abs(a[size_t(p * m + c)])) p = r;
      if (a[size_t(p * m + c)] == 0) {
        d = 0;
        break;
      }
      if (p != c) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[size_t(p * m + j)], a[size_t(c * m + j)]);
        d = -d;
      }
      d *= a[size_t(c * m + c)];
      for (int64_t r = c + 1; r < m; ++r) {
        double f = a[size_t(r * m + c)] / a[size_t(c * m + c)];
        for (int64_t j = c; j < m; ++j) a[size_t(r * m + j)] -= f * a[size_t(c * m + j)];
      }
    }
    out[size_t(k)] = d;
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), Shape(s.begin(), s.end() - 2), out));
  return ctx.setOutput(0, std::move(t));
}

/// Einsum by direct summation over every label (the ellipsis as labels of its own).
Result<void> einsum(EvalContext &ctx) {
  SF_ASSIGN(std::string eq, ctx.attrs().getString("equation"));
  std::string spaced;
  for (char c : eq)
    if (c != ' ') spaced += c;
  size_t arrow = spaced.find("->");
  std::string lhs = spaced.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t at = 0;;) {
    size_t comma = lhs.find(',', at);
    terms.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (terms.size() != ctx.numInputs()) return errorf("{} terms for {} inputs", terms.size(), ctx.numInputs());
  // Labels: letters, and the ellipsis's dims as labels 0x01, 0x02, ... (right-aligned).
  size_t ellRank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t letters = 0;
    for (char c : terms[k]) letters += std::isalpha(static_cast<unsigned char>(c)) != 0;
    if (terms[k].find("...") != std::string::npos)
      ellRank = std::max(ellRank, ctx.input(k).shape().size() - letters);
  }
  auto expand = [&](const std::string &t, size_t rank) -> Result<std::string> {
    size_t e = t.find("...");
    if (e == std::string::npos) return t;
    size_t letters = 0;
    for (char c : t) letters += std::isalpha(static_cast<unsigned char>(c)) != 0;
    size_t n = rank - letters;
    std::string ell;
    for (size_t i = ellRank - n; i < ellRank; ++i) ell += char(1 + i);
    return t.substr(0, e) + ell + t.substr(e + 3);
  };
  std::vector<std::string> labels;
  std::map<char, int64_t> size;
  std::map<char, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    SF_ASSIGN(std::string t, expand(terms[k], ctx.input(k).shape().size()));
    if (t.size() != ctx.input(k).shape().size()) return errorf("term '{}' does not match input {}'s rank", terms[k], k);
    for (size_t i = 0; i < t.size(); ++i) {
      int64_t d = ctx.input(k).shape()[i];
      auto it = size.find(t[i]);
      if (it != size.end() && it->second != d && it->second != 1 && d != 1)
        return errorf("label '{}' has sizes {} and {}", t[i], it->second, d);
      size[t[i]] = it == size.end() ? d : std::max(it->second, d);
      count[t[i]]++;
    }
    labels.push_back(t);
  }
  std::string out;
  if (arrow != std::string::npos) {
    std::string o = spaced.substr(arrow + 2);
    size_t e = o.find("...");
    std::string ell;
    for (size_t i = 0; i < ellRank; ++i) ell += char(1 + i);
    out = e == std::string::npos ? o : o.substr(0, e) + ell + o.substr(e + 3);
  } else {
    for (size_t i = 0; i < ellRank; ++i) out += char(1 + i);
    for (const auto &[c, n] : count)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) out += c;
  }
  std::string all = out;
  for (const auto &[c, n] : size)
    if (out.find(c) == std::string::npos) all += c;
  Shape outShape;
  for (char c : out) {
    if (!size.count(c)) return errorf("output label '{}' is in no input", c);
    outShape.push_back(size[c]);
  }
  std::vector<std::vector<double>> in;
  for (size_t k = 0; k < terms.size(); ++k) {
    SF_ASSIGN(auto v, doubles(ctx.input(k)));
    in.push_back(std::move(v));
  }
  SF_TRY(ctx.admit(ctx.input(0).type(), outShape));
  std::vector<int64_t> dims;
  for (char c : all) dims.push_back(size[c]);
  int64_t total = countOf(Shape(dims.begin(), dims.end()));
  if (total > (int64_t(1) << 28)) return errorf("{} terms to sum", total);
  std::vector<double> res(static_cast<size_t>(countOf(outShape)), 0.0);
  std::vector<int64_t> idx(all.size(), 0);
  std::map<char, size_t> pos;
  for (size_t i = 0; i < all.size(); ++i) pos[all[i]] = i;
  for (int64_t t = 0; t < total; ++t) {
    int64_t rest = t;
    for (size_t i = all.size(); i-- > 0;) idx[i] = rest % dims[i], rest /= dims[i];
    double prod = 1;
    for (size_t k = 0; k < labels.size(); ++k) {
      int64_t off = 0;
      const Shape &s = ctx.input(k).shape();
      for (size_t i = 0; i < labels[k].size(); ++i) off = off * s[i] + (s[i] == 1 ? 0 : idx[pos[labels[k][i]]]);
      prod *= in[k][size_t(off)];
    }
    int64_t o = 0;
    for (size_t i = 0; i < out.size(); ++i) o = o * outShape[i] + idx[i];
    res[size_t(o)] += prod;
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ctx.input(0).type(), outShape, res));
  return ctx.setOutput(0, std::move(t));
}

enum class Optimizer { Adagrad, Momentum, Adam };

/// The ai.onnx.preview.training optimizers: R (learning rate), T (update count), then groups of
/// n tensors (X, G, and the optimizer's state), out: the updated X and state.
Result<void> optimizer(EvalContext &ctx, Optimizer kind) {
  size_t groups = kind == Optimizer::Adagrad ? 3 : kind == Optimizer::Momentum ? 3 : 4;
  if (ctx.numInputs() < 2 || (ctx.numInputs() - 2) % groups != 0) return errorf("{} inputs", ctx.numInputs());
  size_t n = (ctx.numInputs() - 2) / groups;
  SF_ASSIGN(auto rv, doubles(ctx.input(0)));
  SF_ASSIGN(auto tv, doubles(ctx.input(1)));
  if (rv.size() != 1 || tv.size() != 1) return errorf("R and T must be scalars");
  double R = rv[0], T = tv[0];
  SF_ASSIGN(double norm, ctx.attrs().getFloat("norm_coefficient", 0.0));
  for (size_t k = 0; k < n; ++k) {
    const Tensor &xt = ctx.input(2 + k);
    SF_ASSIGN(auto X, doubles(xt));
    SF_ASSIGN(auto G, doubles(ctx.input(2 + n + k)));
    SF_ASSIGN(auto S1, doubles(ctx.input(2 + 2 * n + k)));
    std::vector<double> S2;
    if (kind == Optimizer::Adam) {
      SF_ASSIGN(S2, doubles(ctx.input(2 + 3 * n + k)));
    }
    std::vector<double> xNew(X.size()), s1New(X.size()), s2New(S2.size());
    if (kind == Optimizer::Adagrad) {
      SF_ASSIGN(double decay, ctx.attrs().getFloat("decay_factor", 0.0));
      SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-6));
      double r = R / (1 + T * decay);
      for (size_t i = 0; i < X.size(); ++i) {
        double g = norm * X[i] + G[i];
        s1New[i] = S1[i] + g * g;
        xNew[i] = X[i] - r * g / (std::sqrt(s1New[i]) + eps);
      }
    } else if (kind == Optimizer::Momentum) {
      SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha"));
      SF_ASSIGN(double beta, ctx.attrs().getFloat("beta"));
      SF_ASSIGN(std::string mode, ctx.attrs().getString("mode"));
      double b = T > 0 ? beta : 1;
      for (size_t i = 0; i < X.size(); ++i) {
        double g = norm * X[i] + G[i];
        s1New[i] = alpha * S1[i] + b * g;
        xNew[i] = mode == "nesterov" ? X[i] - R * (g + alpha * s1New[i]) : X[i] - R * s1New[i];
      }
    } else {
      SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 0.9));
      SF_ASSIGN(double beta, ctx.attrs().getFloat("beta", 0.999));
      SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-6));
      SF_ASSIGN(double post, ctx.attrs().getFloat("norm_coefficient_post", 0.0));
      double r = T > 0 ? R * std::sqrt(1 - std::pow(beta, T)) / (1 - std::pow(alpha, T)) : R;
      for (size_t i = 0; i < X.size(); ++i) {
        double g = norm * X[i] + G[i];
        s1New[i] = alpha * S1[i] + (1 - alpha) * g;
        s2New[i] = beta * S2[i] + (1 - beta) * g * g;
        xNew[i] = (1 - post) * (X[i] - r * s1New[i] / (std::sqrt(s2New[i]) + eps));
      }
    }
    SF_ASSIGN(Tensor a, Tensor::fromDoubles(xt.type(), xt.shape(), xNew));
    SF_TRY(ctx.setOutput(k, std::move(a)));
    SF_ASSIGN(Tensor b, Tensor::fromDoubles(xt.type(), xt.shape(), s1New));
    SF_TRY(ctx.setOutput(n + k, std::move(b)));
    if (kind == Optimizer::Adam) {
      SF_ASSIGN(Tensor c, Tensor::fromDoubles(xt.type(), xt.shape(), s2New));
      SF_TRY(ctx.setOutput(2 * n + k, std::move(c)));
    }
  }
  return success();
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
  for (size_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d + 1 < s.size(); ++d) inner *= s[d];
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

Result<void> registerQuant(OpRegistry &r) {
  SF_TRY(setKernel(r, "MelWeightMatrix", melWeightMatrix));
  SF_TRY(setKernel(r, "DFT", dft));
  SF_TRY(setKernel(r, "STFT", stft));
  const char *preview = "ai.onnx.preview.training";
  SF_TRY(setKernel(r, "Adagrad", [](EvalContext &c) { return optimizer(c, Optimizer::Adagrad); }, preview));
  SF_TRY(setKernel(r, "Momentum", [](EvalContext &c) { return optimizer(c, Optimizer::Momentum); }, preview));
  SF_TRY(setKernel(r, "Adam", [](EvalContext &c) { return optimizer(c, Optimizer::Adam); }, preview));
  SF_TRY(setKernel(r, "QuantizeLinear", quantize));
  SF_TRY(setKernel(r, "DequantizeLinear", dequantize));
  SF_TRY(setKernel(r, "DynamicQuantizeLinear", dynamicQuantize));
  SF_TRY(setKernel(r, "HannWindow", [](EvalContext &c) { return window(c, Window::Hann); }));
  SF_TRY(setKernel(r, "HammingWindow", [](EvalContext &c) { return window(c, Window::Hamming); }));
  SF_TRY(setKernel(r, "BlackmanWindow", [](EvalContext &c) { return window(c, Window::Blackman); }));
  SF_TRY(setKernel(r, "Det", det));
  SF_TRY(setKernel(r, "Einsum", einsum));
  return success();
}

} // namespace sf::eval::detail
