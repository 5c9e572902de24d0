// Kernels of the unary elementwise ops of src/ops/elementwise.cpp: math, activations, Clip, Cast.
// f32 exponentials, sigmoid, tanh and GELU on oneDNN where the build has it; Cast and CastLike
// to and from text; IsInf, IsNaN, Shrink.
#include "../dnnl.h"
#include "../kernel_util.h"
#include "bounds.h"
#include "shapeflow/support/narrow_float.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace sf::eval::detail {
namespace {

/// A unary op on f32 (computed in float) and f64; with `Ints`, on integers too.
template <bool Ints = false, class F> KernelFn unary(F f) {
  return [f](EvalContext &ctx) -> Result<void> {
    const Tensor &a = ctx.input(0);
    auto body = [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        return errorf("bool is not supported");
      } else {
        Elements<T> x(a);
        Output<T> o(ctx, a.type(), a.shape());
        SF_ASSIGN(T *p, o.makeForOverwrite(true));
        for (size_t i = 0; i < x.size(); ++i) p[i] = T(f(x[i]));
        return o.finish(0);
      }
    };
    if constexpr (Ints) return dispatch(a.type(), body, false);
    else return dispatchFloat(a.type(), body);
  };
}

/// A unary op computed by oneDNN's vectorised eltwise kernels on f32, `other` for the rest (and
/// where the build has no oneDNN). oneDNN clamps its inputs (a NaN comes out finite, exp of a
/// large argument a finite number): elements that are NaN or beyond 80 in magnitude are
/// computed again with `ref`, as the loops do, and all of them where oneDNN declines.
template <class Ref> KernelFn withDnnl(EltKind kind, Ref ref, KernelFn other) {
  return [kind, ref, other](EvalContext &ctx) -> Result<void> {
    const Tensor &a = ctx.input(0);
    if (a.type() != ElementType::F32 || a.elementCount() == 0 || !dnnlAvailable()) return other(ctx);
    Elements<float> x(a);
    Output<float> o(ctx, a.type(), a.shape());
    SF_ASSIGN(float *p, o.makeForOverwrite(true));
    const size_t n = x.size();
    // Written in place, the elements oneDNN would clamp are found before it overwrites them.
    std::vector<std::pair<size_t, float>> beyond;
    if (p == x.data())
      for (size_t i = 0; i < n; ++i)
        if (!(std::abs(x[i]) <= 80.0f)) beyond.push_back({i, x[i]});
    if (dnnlEltwise(kind, x.data(), p, int64_t(n))) {
      if (p == x.data())
        for (const auto &[i, v] : beyond) p[i] = ref(v);
      else
        for (size_t i = 0; i < n; ++i)
          if (!(std::abs(x[i]) <= 80.0f)) p[i] = ref(x[i]);
    } else {
      for (size_t i = 0; i < n; ++i) p[i] = ref(x[i]);
    }
    return o.finish(0);
  };
}

/// A unary op with float attributes (alpha, beta, ...) read once.
template <class F> KernelFn unaryAttr(std::vector<std::pair<std::string, double>> attrs, F f) {
  return [attrs, f](EvalContext &ctx) -> Result<void> {
    std::vector<double> v;
    for (const auto &[name, def] : attrs) {
      SF_ASSIGN(double x, ctx.attrs().getFloat(name, def));
      v.push_back(x);
    }
    const Tensor &a = ctx.input(0);
    return dispatchFloat(a.type(), [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      Elements<T> x(a);
      Output<T> o(ctx, a.type(), a.shape());
      SF_ASSIGN(T *p, o.makeForOverwrite(true));
      for (size_t i = 0; i < x.size(); ++i) p[i] = T(f(double(x[i]), v));
      return o.finish(0);
    });
  };
}

Result<void> notKernel(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  if (a.type() != ElementType::Bool) return errorf("Not of {}", shortName(a.type()));
  Elements<bool> x(a);
  Output<bool> o(ctx, ElementType::Bool, a.shape());
  SF_ASSIGN(bool *p, o.make());
  for (size_t i = 0; i < x.size(); ++i) p[i] = !x[i];
  return o.finish(0);
}

/// BitwiseNot: every bit of an integer flipped.
Result<void> bitwiseNot(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  if (!isInteger(a.type())) return errorf("BitwiseNot of {}", shortName(a.type()));
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      Elements<T> x(a);
      Output<T> o(ctx, a.type(), a.shape());
      SF_ASSIGN(T *p, o.makeForOverwrite(true));
      for (size_t i = 0; i < x.size(); ++i) p[i] = T(~x[i]);
      return o.finish(0);
    } else {
      return errorf("BitwiseNot of {}", shortName(a.type()));
    }
  });
}

Result<void> clip(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  double lo = -INFINITY, hi = INFINITY;
  if (ctx.opset() < 11) {
    SF_ASSIGN(lo, ctx.attrs().getFloat("min", -3.4028234663852886e38));
    SF_ASSIGN(hi, ctx.attrs().getFloat("max", 3.4028234663852886e38));
  } else {
    if (ctx.hasInput(1)) {
      SF_ASSIGN(auto v, doubles(ctx.input(1)));
      if (v.size() != 1) return errorf("min has {} elements, not 1", v.size());
      lo = v[0];
    }
    if (ctx.hasInput(2)) {
      SF_ASSIGN(auto v, doubles(ctx.input(2)));
      if (v.size() != 1) return errorf("max has {} elements, not 1", v.size());
      hi = v[0];
    }
  }
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("Clip of bool");
    } else {
      Elements<T> x(a);
      Output<T> o(ctx, a.type(), a.shape());
      SF_ASSIGN(T *p, o.makeForOverwrite(true));
      T l = std::isinf(lo) ? std::numeric_limits<T>::lowest() : toElement<T>(lo);
      T h = std::isinf(hi) ? std::numeric_limits<T>::max() : toElement<T>(hi);
      // std::max / std::min keep a NaN (each returns its first argument when the comparison is
      // false) and compile to branch-free vector code.
      for (size_t i = 0; i < x.size(); ++i) p[i] = std::min(std::max(x[i], l), h);
      // |min(max(x, lo), hi)| <= max(|x|, |lo|, |hi|), and <= max(|lo|, |hi|) where lo <= hi
      // (an infinite bound adds nothing: max(x, -inf) is x).
      if (float in = ctx.inputBound(0); in != EvalContext::kUnbounded && x.size() > 0) {
        double b = in, ends = std::max(std::fabs(lo), std::fabs(hi));
        if (std::isfinite(lo)) b = std::max(b, std::fabs(lo));
        if (std::isfinite(hi)) b = std::max(b, std::fabs(hi));
        if (lo <= hi) b = std::min(b, ends);
        ctx.setOutputBound(0, asBound(b));
      }
      return o.finish(0);
    }
  }, false);
}

/// An element as text, as ONNX's Cast to string writes it: integers in decimal, floats in the
/// shortest form that reads back to the same value of their type (`0.039187793`, `1e-05`).
std::string elementAsString(ElementType t, double x) {
  char buf[64];
  std::to_chars_result r;
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "INF" : "-INF";
  if (t == ElementType::F64) r = std::to_chars(buf, buf + sizeof buf, x);
  else if (isFloat(t)) r = std::to_chars(buf, buf + sizeof buf, float(x));
  else r = std::to_chars(buf, buf + sizeof buf, int64_t(x));
  return std::string(buf, r.ptr);
}

/// A string as a number: decimal or scientific, `INF`, `+INF`, `-INF` and `NaN` in any case.
Result<double> stringAsNumber(const std::string &s) {
  const char *begin = s.c_str();
  char *end = nullptr;
  double x = std::strtod(begin, &end);
  if (end == begin) return errorf("'{}' is not a number", s.size() > 40 ? s.substr(0, 40) + "..." : s);
  return x;
}

} // namespace

Result<void> fusedGelu(EvalContext &ctx, const Tensor &a) {
  if (a.type() != ElementType::F32) return errorf("GELU of {}", shortName(a.type()));
  auto ref = [](float v) { return float(0.5 * double(v) * (1 + std::erf(double(v) / std::sqrt(2.0)))); };
  Elements<float> x(a);
  Output<float> o(ctx, a.type(), a.shape());
  SF_ASSIGN(float *p, o.makeForOverwrite(true));
  const size_t n = x.size();
  // oneDNN's gelu_erf keeps NaN and infinities and is exact far out (tests/eval: the special
  // values against the five ops unfolded and f64).
  if (!(dnnlAvailable() && n > 0 && dnnlEltwise(EltKind::GeluErf, x.data(), p, int64_t(n))))
    for (size_t i = 0; i < n; ++i) p[i] = ref(x[i]);
  return o.finish(0);
}

/// Cast (or CastLike) to a narrow float or a 4-bit integer. Floats: the nearest value, beyond
/// the largest saturated or not by attribute `saturate` (default 1); float8e8m0 rounds to a
/// power of two by `round_mode` (up, down, nearest). int4 and uint4 keep the low 4 bits of the
/// value rounded to the nearest integer, halves away from zero, as onnxruntime 1.30 rounds them
/// (0.75 is 1, 2.5 is 3, -7.5 is -8; ONNX's reference implementation rounds halves to even, its
/// tests hold no halves); out of range it wraps, as a C conversion does.
Result<Tensor> narrowCast(EvalContext &ctx, const std::vector<double> &v, const Shape &shape, ElementType to) {
  SF_ASSIGN(auto bytes, ctx.allocate(to, shape));
  auto *p = reinterpret_cast<uint8_t *>(bytes.data());
  if (isInt4(to)) {
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t x = std::isnan(v[i]) ? 0 : int64_t(std::clamp(std::round(v[i]), -9.2e18, 9.2e18));
      uint8_t low = uint8_t(uint64_t(x) & 0xf);
      p[i] = to == ElementType::I4 && low >= 8 ? uint8_t(int8_t(low) - 16) : low;
    }
    return std::move(bytes).tensor(to, shape);
  }
  SF_ASSIGN(int64_t saturate, ctx.attrs().getInt("saturate", 1));
  SF_ASSIGN(std::string mode, ctx.attrs().getString("round_mode", "up"));
  PowerRounding rounding = PowerRounding::Up;
  if (mode == "down") rounding = PowerRounding::Down;
  else if (mode == "nearest") rounding = PowerRounding::Nearest;
  else if (mode != "up") return errorf("round_mode is '{}'; up, down or nearest expected", mode);
  const NarrowFloat f = narrowFormat(to);
  for (size_t i = 0; i < v.size(); ++i) p[i] = doubleToNarrow(f, v[i], saturate != 0, rounding);
  return std::move(bytes).tensor(to, shape);
}

Result<Tensor> castTensor(EvalContext &ctx, const Tensor &a, ElementType to) {
  if (to == a.type()) return a;
  if (to == ElementType::String) {
    SF_ASSIGN(auto v, doubles(a));
    SF_TRY(ctx.admit(ElementType::F64, a.shape()));
    std::vector<std::string> text;
    text.reserve(v.size());
    for (double x : v) text.push_back(elementAsString(a.type(), x));
    return Tensor::fromStrings(a.shape(), std::move(text));
  }
  if (!isNumeric(to) && to != ElementType::Bool) return errorf("Cast to {} is not supported", shortName(to));
  std::vector<double> v;
  if (a.isString()) {
    v.reserve(a.strings().size());
    for (const std::string &s : a.strings()) {
      SF_ASSIGN(double x, stringAsNumber(s));
      v.push_back(x);
    }
  } else {
    SF_ASSIGN(v, doubles(a));
  }
  if (isNarrowFloat(to) || isInt4(to)) return narrowCast(ctx, v, a.shape(), to);
  // Float to integer truncates toward zero, as onnxruntime does; NaN and out-of-range values
  // are undefined in ONNX, here saturated.
  if (isInteger(to) || to == ElementType::Bool)
    for (double &x : v) {
      if (to == ElementType::Bool) x = (x != 0);
      else x = std::isnan(x) ? 0 : std::trunc(x);
    }
  if (isInteger(to) && to != ElementType::U64 && to != ElementType::I64) {
    // Wraps like a C conversion of the 64-bit value (onnxruntime's static_cast).
    SF_ASSIGN(auto bytes, ctx.allocate(to, a.shape()));
    SF_TRY(dispatch(to, [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      T *p = reinterpret_cast<T *>(bytes.data());
      for (size_t i = 0; i < v.size(); ++i) p[i] = T(int64_t(std::clamp(v[i], -9.2e18, 9.2e18)));
      return success();
    }));
    return std::move(bytes).tensor(to, a.shape());
  }
  if (to == ElementType::I64 || to == ElementType::U64) {
    SF_ASSIGN(auto bytes, ctx.allocate(to, a.shape()));
    SF_TRY(dispatch(to, [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      T *p = reinterpret_cast<T *>(bytes.data());
      bool exact = isInteger(a.type()) && elementSize(a.type()) == 8; // i64/u64 sources bit for bit
      std::optional<Elements<int64_t>> direct;
      if (exact) direct.emplace(a);
      for (size_t i = 0; i < v.size(); ++i) {
        if (exact) p[i] = T((*direct)[i]);
        else if constexpr (std::is_signed_v<T>) p[i] = T(std::clamp(v[i], -9.2e18, 9.2e18));
        else p[i] = v[i] < 0 ? T(int64_t(std::max(v[i], -9.2e18))) : T(std::min(v[i], 1.8e19)); // below 0: through int64
      }
      return success();
    }));
    return std::move(bytes).tensor(to, a.shape());
  }
  return Tensor::fromDoubles(to, a.shape(), v);
}

namespace {

Result<void> cast(EvalContext &ctx) {
  SF_ASSIGN(int64_t to, ctx.attrs().getInt("to"));
  auto type = elementTypeFromOnnx(to);
  if (!type) return errorf("'to' is {}, not an element type", to);
  SF_ASSIGN(Tensor t, castTensor(ctx, ctx.input(0), *type));
  return ctx.setOutput(0, std::move(t));
}

Result<void> castLike(EvalContext &ctx) {
  SF_ASSIGN(Tensor t, castTensor(ctx, ctx.input(0), ctx.input(1).type()));
  return ctx.setOutput(0, std::move(t));
}

double erfGelu(double x, bool tanhApprox) {
  if (tanhApprox) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

Result<void> isInfNan(EvalContext &ctx, bool inf) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t pos, ctx.attrs().getInt("detect_positive", 1));
  SF_ASSIGN(int64_t neg, ctx.attrs().getInt("detect_negative", 1));
  SF_ASSIGN(auto v, doubles(a));
  Output<bool> o(ctx, ElementType::Bool, a.shape());
  SF_ASSIGN(bool *p, o.make());
  for (size_t i = 0; i < v.size(); ++i)
    p[i] = inf ? std::isinf(v[i]) && ((v[i] > 0 && pos) || (v[i] < 0 && neg)) : std::isnan(v[i]);
  return o.finish(0);
}

Result<void> shrink(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(double lambd, ctx.attrs().getFloat("lambd", 0.5));
  SF_ASSIGN(double bias, ctx.attrs().getFloat("bias", 0.0));
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a);
    Output<T> o(ctx, a.type(), a.shape());
    SF_ASSIGN(T *p, o.make());
    for (size_t i = 0; i < x.size(); ++i) {
      double v = double(x[i]);
      // Integers computed in double come back saturated (a value near 2^63 has no exact double).
      p[i] = toElement<T>(v < -lambd ? v + bias : v > lambd ? v - bias : 0.0);
    }
    return o.finish(0);
  }, false);
}

} // namespace

Result<void> registerElementwiseUnaryKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "Not", notKernel));
  SF_TRY(setKernel(r, "BitwiseNot", bitwiseNot));
  SF_TRY(setKernel(r, "Clip", clip));
  SF_TRY(setKernel(r, "Cast", cast));
  auto sign = [](auto x) { return decltype(x)((x > 0) - (x < 0)); };
  SF_TRY(setKernel(r, "Relu", keepingBound(unary<true>([](auto x) { return x > 0 || x != x ? x : decltype(x)(0); }))));
  // Integers wrap as ONNX's two's complement does: Neg and Abs of the lowest value are itself.
  auto negate = [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) return wrapSub(T(0), x);
    else return T(-x);
  };
  SF_TRY(setKernel(r, "Neg", unary<true>(negate)));
  SF_TRY(setKernel(r, "Abs", unary<true>([negate](auto x) { return x < 0 ? negate(x) : x; })));
  SF_TRY(setKernel(r, "Sign", unary<true>(sign)));
  auto expf = [](auto x) { return std::exp(x); };
  SF_TRY(setKernel(r, "Exp", withDnnl(EltKind::Exp, expf, unary(expf))));
  SF_TRY(setKernel(r, "Log", unary([](auto x) { return std::log(x); })));
  SF_TRY(setKernel(r, "Sqrt", unary([](auto x) { return std::sqrt(x); })));
  SF_TRY(setKernel(r, "Reciprocal", unary([](auto x) { return decltype(x)(1) / x; })));
  auto sigmoid = [](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); };
  SF_TRY(setKernel(r, "Sigmoid", withDnnl(EltKind::Sigmoid, sigmoid, unary(sigmoid))));
  auto tanhf = [](auto x) { return std::tanh(x); };
  SF_TRY(setKernel(r, "Tanh", withDnnl(EltKind::Tanh, tanhf, unary(tanhf))));
  SF_TRY(setKernel(r, "Erf", unary([](auto x) { return std::erf(x); })));
  SF_TRY(setKernel(r, "Floor", unary([](auto x) { return std::floor(x); })));
  SF_TRY(setKernel(r, "Ceil", unary([](auto x) { return std::ceil(x); })));
  SF_TRY(setKernel(r, "Round", unary([](auto x) { return std::nearbyint(x); })));
  SF_TRY(setKernel(r, "Sin", unary([](auto x) { return std::sin(x); })));
  SF_TRY(setKernel(r, "Cos", unary([](auto x) { return std::cos(x); })));
  SF_TRY(setKernel(r, "Tan", unary([](auto x) { return std::tan(x); })));
  SF_TRY(setKernel(r, "Asin", unary([](auto x) { return std::asin(x); })));
  SF_TRY(setKernel(r, "Acos", unary([](auto x) { return std::acos(x); })));
  SF_TRY(setKernel(r, "Atan", unary([](auto x) { return std::atan(x); })));
  SF_TRY(setKernel(r, "Sinh", unary([](auto x) { return std::sinh(x); })));
  SF_TRY(setKernel(r, "Cosh", unary([](auto x) { return std::cosh(x); })));
  SF_TRY(setKernel(r, "Asinh", unary([](auto x) { return std::asinh(x); })));
  SF_TRY(setKernel(r, "Acosh", unary([](auto x) { return std::acosh(x); })));
  SF_TRY(setKernel(r, "Atanh", unary([](auto x) { return std::atanh(x); })));
  SF_TRY(setKernel(r, "Softplus", unary([](auto x) { return std::log1p(std::exp(x)); })));
  SF_TRY(setKernel(r, "Softsign", unary([](auto x) { return x / (decltype(x)(1) + std::abs(x)); })));
  SF_TRY(setKernel(r, "Mish", unary([](auto x) { return x * std::tanh(std::log1p(std::exp(x))); })));
  SF_TRY(setKernel(r, "HardSwish", unary([](auto x) {
    using T = decltype(x);
    return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
  })));
  SF_TRY(setKernel(r, "LeakyRelu", unaryAttr({{"alpha", 0.01}}, [](double x, const std::vector<double> &a) {
    return x >= 0 ? x : a[0] * x;
  })));
  SF_TRY(setKernel(r, "Elu", unaryAttr({{"alpha", 1.0}}, [](double x, const std::vector<double> &a) {
    return x >= 0 ? x : a[0] * (std::exp(x) - 1);
  })));
  SF_TRY(setKernel(r, "Selu", unaryAttr({{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}},
                                        [](double x, const std::vector<double> &a) {
                                          return x > 0 ? a[1] * x : a[1] * (a[0] * std::exp(x) - a[0]);
                                        })));
  SF_TRY(setKernel(r, "Celu", unaryAttr({{"alpha", 1.0}}, [](double x, const std::vector<double> &a) {
    return std::max(0.0, x) + std::min(0.0, a[0] * (std::exp(x / a[0]) - 1));
  })));
  SF_TRY(setKernel(r, "ThresholdedRelu", unaryAttr({{"alpha", 1.0}}, [](double x, const std::vector<double> &a) {
    return x > a[0] ? x : 0.0;
  })));
  SF_TRY(setKernel(r, "HardSigmoid", unaryAttr({{"alpha", 0.2}, {"beta", 0.5}}, [](double x, const std::vector<double> &a) {
    return std::max(0.0, std::min(1.0, a[0] * x + a[1]));
  })));
  SF_TRY(setKernel(r, "Swish", unaryAttr({{"alpha", 1.0}}, [](double x, const std::vector<double> &a) {
    return x / (1.0 + std::exp(-a[0] * x));
  })));
  SF_TRY(setKernel(r, "Gelu", [](EvalContext &ctx) -> Result<void> {
    auto approx = ctx.attrs().getString("approximate", "none");
    if (!approx.ok()) return approx.takeError();
    bool t = *approx == "tanh";
    // f32 with erf: one pass on oneDNN (what the executor's GELU rewrite runs).
    if (!t && ctx.hasInput(0) && ctx.input(0).type() == ElementType::F32) return fusedGelu(ctx, ctx.input(0));
    return unaryAttr({}, [t](double x, const std::vector<double> &) { return erfGelu(x, t); })(ctx);
  }));
  SF_TRY(setKernel(r, "CastLike", castLike));
  SF_TRY(setKernel(r, "IsInf", [](EvalContext &c) { return isInfNan(c, true); }));
  SF_TRY(setKernel(r, "IsNaN", [](EvalContext &c) { return isInfNan(c, false); }));
  SF_TRY(setKernel(r, "Shrink", shrink));
  return success();
}

} // namespace sf::eval::detail
