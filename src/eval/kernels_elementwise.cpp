// Elementwise kernels: binary arithmetic and comparisons with NumPy broadcasting, variadic
// Max/Min/Sum/Mean, Where, unary math and activations, Clip, Cast.
#include "dnnl.h"
#include "kernel_util.h"

#include <charconv>
#include <optional>

#include <cmath>

namespace sf::eval::detail {
namespace {

enum class Bin { Add, Sub, Mul, Div, Pow, Max, Min, Mod, FMod, Equal, Less, Greater, LessEq, GreaterEq, And, Or, Xor };

bool isCompare(Bin b) { return b >= Bin::Equal && b <= Bin::GreaterEq; }
bool isLogic(Bin b) { return b >= Bin::And; }

template <class T> T apply(Bin op, T a, T b, bool &divByZero) {
  switch (op) {
  case Bin::Add: return wrapAdd(a, b);
  case Bin::Sub: return wrapSub(a, b);
  case Bin::Mul: return wrapMul(a, b);
  case Bin::Div:
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) { divByZero = true; return T(0); }
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
      return T(a / b);
    } else {
      return a / b;
    }
  case Bin::Pow: return toElement<T>(std::pow(double(a), double(b)));
  case Bin::Max:
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a > b ? a : b;
  case Bin::Min:
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a < b ? a : b;
  case Bin::Mod: // the sign of the divisor (Python's %)
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) { divByZero = true; return T(0); }
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
        T r = T(a % b);
        return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
      } else {
        return T(a % b);
      }
    } else {
      T r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  case Bin::FMod: // the sign of the dividend (C's fmod)
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) { divByZero = true; return T(0); }
      if constexpr (std::is_signed_v<T>)
        if (b == T(-1)) return T(0);
      return T(a % b);
    } else {
      return std::fmod(a, b);
    }
  default: return T(0);
  }
}

template <class T> bool compare(Bin op, T a, T b) {
  switch (op) {
  case Bin::Equal: return a == b;
  case Bin::Less: return a < b;
  case Bin::Greater: return a > b;
  case Bin::LessEq: return a <= b;
  case Bin::GreaterEq: return a >= b;
  case Bin::And: return bool(a) && bool(b);
  case Bin::Or: return bool(a) || bool(b);
  case Bin::Xor: return bool(a) != bool(b);
  default: return false;
  }
}

bool isHalf(ElementType t) { return t == ElementType::F16 || t == ElementType::BF16; }

/// f16 and bf16: each element widened to double, the op applied, the result rounded back to
/// the type (the float element's own rounding, as a runtime computing in float does for + - * /
/// of two halves).
Result<void> halfBinary(EvalContext &ctx, Bin op, const std::vector<const Tensor *> &ins) {
  std::vector<Shape> shapes;
  for (const Tensor *t : ins) shapes.push_back(t->shape());
  SF_ASSIGN(Shape out, broadcastAll(shapes));
  SF_TRY(ctx.admit(ins[0]->type(), out));
  bool boolOut = isCompare(op) || isLogic(op);
  std::vector<double> acc(static_cast<size_t>(countOf(out)));
  bool divByZero = false;
  for (size_t k = 0; k < ins.size(); ++k) {
    SF_ASSIGN(auto v, doubles(*ins[k]));
    std::array<std::vector<int64_t>, 1> st{broadcastStrides(ins[k]->shape(), out)};
    forEachBroadcast<1>(out, st, [&](int64_t i, const std::array<int64_t, 1> &f) {
      double x = v[size_t(f[0])];
      if (k == 0) acc[size_t(i)] = x;
      else acc[size_t(i)] = boolOut ? double(compare<double>(op, acc[size_t(i)], x))
                                    : apply<double>(op, acc[size_t(i)], x, divByZero);
    });
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(boolOut ? ElementType::Bool : ins[0]->type(), out, acc));
  return ctx.setOutput(0, std::move(t));
}

/// One row of a floating-point Add/Sub/Mul/Div: n outputs from x and y read with strides 0 or
/// 1 (a broadcast operand repeats one element): tight loops the compiler vectorises.
template <class T, class Op> void rowOp(T *p, const T *x, int64_t sx, const T *y, int64_t sy, int64_t n, Op op) {
  if (sx == 1 && sy == 1)
    for (int64_t j = 0; j < n; ++j) p[j] = op(x[j], y[j]);
  else if (sx == 1)
    for (int64_t j = 0; j < n; ++j) p[j] = op(x[j], y[0]);
  else if (sy == 1)
    for (int64_t j = 0; j < n; ++j) p[j] = op(x[0], y[j]);
  else
    for (int64_t j = 0; j < n; ++j) p[j] = op(x[0], y[0]);
}

/// The four arithmetic ops on floats where both inputs' last strides are 0 or 1: row by row
/// (forEachBroadcast's outer walk), the op chosen once; and a power by a scalar 2 or 3. False
/// where this does not apply.
template <class T>
bool fastArithmetic(Bin op, const Shape &out, const std::array<std::vector<int64_t>, 2> &st, const T *x,
                    const T *y, T *p) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    size_t r = out.size();
    if (countOf(out) == 0) return true; // nothing to write (and an operand may have no element)
    if (op == Bin::Pow) {
      // A power by one scalar exponent as a product: squares and, in f32, cubes (layer norms'
      // variance). The product is correctly rounded; std::pow in double (the general path) is
      // too on all but rare inputs, where glibc allows half an ulp more.
      bool scalarExponent = true;
      for (size_t d = 0; d < r; ++d) scalarExponent = scalarExponent && (st[1][d] == 0 || out[d] == 1);
      // (A cube in double rounds twice; only floats' cubes are exact in double.)
      bool cube = std::is_same_v<T, float> && y[0] == T(3);
      if (!scalarExponent || (y[0] != T(2) && !cube)) return false;
      int64_t total = countOf(out);
      bool contiguous = true;
      for (size_t d = 0, stride = 1; d < r; ++d) {
        size_t i = r - 1 - d;
        contiguous = contiguous && (out[i] == 1 || st[0][i] == int64_t(stride));
        stride *= size_t(out[i]);
      }
      if (!contiguous) return false;
      if (y[0] == T(2))
        for (int64_t i = 0; i < total; ++i) p[i] = T(double(x[i]) * double(x[i]));
      else
        for (int64_t i = 0; i < total; ++i) p[i] = T(double(x[i]) * double(x[i]) * double(x[i]));
      return true;
    }
    if (op != Bin::Add && op != Bin::Sub && op != Bin::Mul && op != Bin::Div) return false;
    int64_t sx = r ? st[0][r - 1] : 0, sy = r ? st[1][r - 1] : 0;
    if ((sx != 0 && sx != 1) || (sy != 0 && sy != 1)) return false;
    int64_t total = countOf(out), inner = r ? out[r - 1] : 1;
    if (total == 0 || inner == 0) return true;
    std::vector<int64_t> idx(r, 0);
    int64_t ox = 0, oy = 0;
    for (int64_t o = 0; o < total; o += inner) {
      switch (op) {
      case Bin::Add: rowOp(p + o, x + ox, sx, y + oy, sy, inner, [](T a, T b) { return a + b; }); break;
      case Bin::Sub: rowOp(p + o, x + ox, sx, y + oy, sy, inner, [](T a, T b) { return a - b; }); break;
      case Bin::Mul: rowOp(p + o, x + ox, sx, y + oy, sy, inner, [](T a, T b) { return a * b; }); break;
      default: rowOp(p + o, x + ox, sx, y + oy, sy, inner, [](T a, T b) { return a / b; }); break;
      }
      for (size_t d = r >= 1 ? r - 1 : 0; d-- > 0;) {
        idx[d]++;
        ox += st[0][d], oy += st[1][d];
        if (idx[d] < out[d]) break;
        ox -= st[0][d] * out[d], oy -= st[1][d] * out[d];
        idx[d] = 0;
      }
    }
    return true;
  }
}

/// out = op(a, b) broadcast; comparisons and logic give bool.
Result<void> binary(EvalContext &ctx, Bin op, const Tensor &a, const Tensor &b, size_t outIndex = 0) {
  if (a.type() != b.type())
    return errorf("inputs are {} and {}: the types must agree", shortName(a.type()), shortName(b.type()));
  if (isHalf(a.type())) return halfBinary(ctx, op, {&a, &b});
  SF_ASSIGN(Shape out, broadcastAll({a.shape(), b.shape()}));
  std::array<std::vector<int64_t>, 2> st{broadcastStrides(a.shape(), out), broadcastStrides(b.shape(), out)};
  bool boolOut = isCompare(op) || isLogic(op);
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a), y(b);
    if (boolOut) {
      Output<bool> o(ctx, ElementType::Bool, out);
      SF_ASSIGN(bool *p, o.make());
      forEachBroadcast<2>(out, st, [&](int64_t i, const std::array<int64_t, 2> &f) {
        p[i] = compare<T>(op, x[size_t(f[0])], y[size_t(f[1])]);
      });
      return o.finish(outIndex);
    }
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("arithmetic on bool is not defined");
    } else {
      Output<T> o(ctx, a.type(), out);
      SF_ASSIGN(T *p, o.makeForOverwrite(true));
      if (fastArithmetic<T>(op, out, st, x.data(), y.data(), p)) return o.finish(outIndex);
      bool divByZero = false;
      forEachBroadcast<2>(out, st, [&](int64_t i, const std::array<int64_t, 2> &f) {
        p[i] = apply<T>(op, x[size_t(f[0])], y[size_t(f[1])], divByZero);
      });
      if (divByZero) return errorf("integer division by zero");
      return o.finish(outIndex);
    }
  });
}

KernelFn binaryKernel(Bin op) {
  return [op](EvalContext &ctx) -> Result<void> {
    Bin o = op;
    if (o == Bin::Mod) {
      SF_ASSIGN(int64_t fmod, ctx.attrs().getInt("fmod", 0));
      if (fmod) o = Bin::FMod;
    }
    if (o == Bin::Pow && ctx.input(0).type() != ctx.input(1).type()) {
      // Pow's exponent may have another type: computed in double, the base's type out.
      const Tensor &a = ctx.input(0), &b = ctx.input(1);
      SF_ASSIGN(Shape out, broadcastAll({a.shape(), b.shape()}));
      std::array<std::vector<int64_t>, 2> st{broadcastStrides(a.shape(), out), broadcastStrides(b.shape(), out)};
      SF_ASSIGN(auto ys, doubles(b));
      return dispatch(a.type(), [&](auto tag) -> Result<void> {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>) {
          return errorf("Pow of bool");
        } else {
          Elements<T> x(a);
          Output<T> o2(ctx, a.type(), out);
          SF_ASSIGN(T *p, o2.make());
          forEachBroadcast<2>(out, st, [&](int64_t i, const std::array<int64_t, 2> &f) {
            p[i] = toElement<T>(std::pow(double(x[size_t(f[0])]), ys[size_t(f[1])]));
          });
          return o2.finish(0);
        }
      });
    }
    return binary(ctx, o, ctx.input(0), ctx.input(1));
  };
}

/// Max, Min, Sum, Mean over any number of inputs, broadcast.
KernelFn variadic(Bin op, bool mean) {
  return [op, mean](EvalContext &ctx) -> Result<void> {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      if (ctx.hasInput(i)) shapes.push_back(ctx.input(i).shape());
    if (shapes.empty()) return errorf("no inputs");
    SF_ASSIGN(Shape out, broadcastAll(shapes));
    ElementType type = ctx.input(0).type();
    if (isHalf(type) && !mean) {
      std::vector<const Tensor *> ins;
      for (size_t i = 0; i < ctx.numInputs(); ++i)
        if (ctx.hasInput(i)) ins.push_back(&ctx.input(i));
      return halfBinary(ctx, op, ins);
    }
    return dispatch(type, [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        return errorf("bool is not supported");
      } else {
        Output<T> o(ctx, type, out);
        SF_ASSIGN(T *p, o.make());
        bool first = true, divByZero = false;
        for (size_t i = 0; i < ctx.numInputs(); ++i) {
          if (!ctx.hasInput(i)) continue;
          const Tensor &t = ctx.input(i);
          if (t.type() != type) return errorf("inputs of types {} and {}", shortName(type), shortName(t.type()));
          Elements<T> x(t);
          std::array<std::vector<int64_t>, 1> st{broadcastStrides(t.shape(), out)};
          forEachBroadcast<1>(out, st, [&](int64_t k, const std::array<int64_t, 1> &f) {
            p[k] = first ? x[size_t(f[0])] : apply<T>(op, p[k], x[size_t(f[0])], divByZero);
          });
          first = false;
        }
        if (mean) {
          T n = T(shapes.size());
          for (int64_t k = 0; k < countOf(out); ++k) p[k] = T(p[k] / n);
        }
        return o.finish(0);
      }
    });
  };
}

Result<void> where(EvalContext &ctx) {
  const Tensor &c = ctx.input(0), &a = ctx.input(1), &b = ctx.input(2);
  if (c.type() != ElementType::Bool) return errorf("the condition is {}, not bool", shortName(c.type()));
  if (a.type() != b.type()) return errorf("X is {} and Y is {}", shortName(a.type()), shortName(b.type()));
  SF_ASSIGN(Shape out, broadcastAll({c.shape(), a.shape(), b.shape()}));
  std::array<std::vector<int64_t>, 3> st{broadcastStrides(c.shape(), out), broadcastStrides(a.shape(), out),
                                         broadcastStrides(b.shape(), out)};
  Elements<bool> cond(c);
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a), y(b);
    Output<T> o(ctx, a.type(), out);
    SF_ASSIGN(T *p, o.make());
    forEachBroadcast<3>(out, st, [&](int64_t i, const std::array<int64_t, 3> &f) {
      p[i] = cond[size_t(f[0])] ? x[size_t(f[1])] : y[size_t(f[2])];
    });
    return o.finish(0);
  });
}

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
        else p[i] = T(std::clamp(v[i], -9.2e18, 1.8e19));
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

double erfGelu(double x, bool tanhApprox) {
  if (tanhApprox) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

} // namespace

Result<void> registerElementwise(OpRegistry &r) {
  const std::pair<const char *, Bin> bins[] = {
      {"Add", Bin::Add},     {"Sub", Bin::Sub},         {"Mul", Bin::Mul},         {"Div", Bin::Div},
      {"Pow", Bin::Pow},     {"Mod", Bin::Mod},         {"Equal", Bin::Equal},     {"Less", Bin::Less},
      {"Greater", Bin::Greater}, {"LessOrEqual", Bin::LessEq}, {"GreaterOrEqual", Bin::GreaterEq},
      {"And", Bin::And},     {"Or", Bin::Or},           {"Xor", Bin::Xor}};
  for (const auto &[name, op] : bins) SF_TRY(setKernel(r, name, binaryKernel(op)));
  SF_TRY(setKernel(r, "Max", variadic(Bin::Max, false)));
  SF_TRY(setKernel(r, "Min", variadic(Bin::Min, false)));
  SF_TRY(setKernel(r, "Sum", variadic(Bin::Add, false)));
  SF_TRY(setKernel(r, "Mean", variadic(Bin::Add, true)));
  SF_TRY(setKernel(r, "Where", where));
  SF_TRY(setKernel(r, "Not", notKernel));
  SF_TRY(setKernel(r, "Clip", clip));
  SF_TRY(setKernel(r, "Cast", cast));
  auto sign = [](auto x) { return decltype(x)((x > 0) - (x < 0)); };
  SF_TRY(setKernel(r, "Relu", unary<true>([](auto x) { return x > 0 ? x : decltype(x)(0); })));
  SF_TRY(setKernel(r, "Neg", unary<true>([](auto x) { return decltype(x)(-x); })));
  SF_TRY(setKernel(r, "Abs", unary<true>([](auto x) { return x < 0 ? decltype(x)(-x) : x; })));
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
  SF_TRY(setKernel(r, "Gelu", [](EvalContext &ctx) -> Result<void> {
    auto approx = ctx.attrs().getString("approximate", "none");
    if (!approx.ok()) return approx.takeError();
    bool t = *approx == "tanh";
    // f32 with erf: one pass on oneDNN (what the executor's GELU rewrite runs).
    if (!t && ctx.hasInput(0) && ctx.input(0).type() == ElementType::F32) return fusedGelu(ctx, ctx.input(0));
    return unaryAttr({}, [t](double x, const std::vector<double> &) { return erfGelu(x, t); })(ctx);
  }));
  return success();
}

} // namespace sf::eval::detail
