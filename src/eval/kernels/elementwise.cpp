// Kernels of the binary and variadic elementwise ops of src/ops/elementwise.cpp, Identity, Dropout.
// Arithmetic, comparisons and logic with NumPy broadcasting (f16 and bf16 through doubles),
// variadic Max/Min/Sum/Mean, Where, PRelu, BitShift; Identity and Dropout (inference) pass their
// input on.
#include "../kernel_util.h"
#include "bounds.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sf::eval::detail {
namespace {

enum class Bin { Add, Sub, Mul, Div, Pow, Max, Min, Mod, FMod, BitAnd, BitOr, BitXor, Equal, Less, Greater, LessEq, GreaterEq, And, Or, Xor };

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
  case Bin::BitAnd:
  case Bin::BitOr:
  case Bin::BitXor:
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return op == Bin::BitAnd ? T(a & b) : op == Bin::BitOr ? T(a | b) : T(a ^ b);
    } else {
      return T(0); // not defined on floats or bool: binaryKernel refuses them first
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
        for (int64_t i = 0; i < total; ++i) p[i] = toElement<T>(double(x[i]) * double(x[i]));
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

/// Neighbouring dims of a broadcast merged where every operand walks them as one (both
/// contiguous across the pair, or both repeated): [1, C, H, W] by [1, C, 1, 1] is walked as
/// [C, H * W], rows of H * W against one value. Dims of 1 go first. The same elements, in the
/// same order, in longer rows.
void mergeDims(Shape &out, std::array<std::vector<int64_t>, 2> &st) {
  Shape o;
  std::array<std::vector<int64_t>, 2> s;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    if (!o.empty()) {
      bool joins = true;
      for (size_t k = 0; k < 2; ++k) joins = joins && s[k].back() == st[k][d] * out[d];
      if (joins) {
        o.back() *= out[d];
        for (size_t k = 0; k < 2; ++k) s[k].back() = st[k][d];
        continue;
      }
    }
    o.push_back(out[d]);
    for (size_t k = 0; k < 2; ++k) s[k].push_back(st[k][d]);
  }
  out = std::move(o);
  st = std::move(s);
}

/// Add, Sub, Mul or Div of X kept in channel blocks of B and one value per channel: per image and
/// block, each position's B lanes against the block's B values (`cImage`: the values' stride per
/// image, 0 for one set for the batch), X on the left or (`fullFirst` false) on the right.
template <int B, class Op>
void blockRows(const float *x, const float *c, float *p, int64_t n, int64_t blocks, int64_t hw, int64_t cImage,
               bool fullFirst, Op op) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t cb = 0; cb < blocks; ++cb) {
      const float *cv = c + i * cImage + cb * B;
      const int64_t base = (i * blocks + cb) * hw * B;
      const float *xb = x + base;
      float *pb = p + base;
      if (fullFirst)
        for (int64_t k = 0; k < hw; ++k)
          for (int l = 0; l < B; ++l) pb[k * B + l] = op(xb[k * B + l], cv[l]);
      else
        for (int64_t k = 0; k < hw; ++k)
          for (int l = 0; l < B; ++l) pb[k * B + l] = op(cv[l], xb[k * B + l]);
    }
}

/// blockRows with the block and the op chosen once.
template <int B>
bool blockedArithmetic(Bin op, const float *x, const float *c, float *p, int64_t n, int64_t blocks, int64_t hw,
                       int64_t cImage, bool fullFirst) {
  switch (op) {
  case Bin::Add: blockRows<B>(x, c, p, n, blocks, hw, cImage, fullFirst, [](float a, float b) { return a + b; }); return true;
  case Bin::Sub: blockRows<B>(x, c, p, n, blocks, hw, cImage, fullFirst, [](float a, float b) { return a - b; }); return true;
  case Bin::Mul: blockRows<B>(x, c, p, n, blocks, hw, cImage, fullFirst, [](float a, float b) { return a * b; }); return true;
  case Bin::Div: blockRows<B>(x, c, p, n, blocks, hw, cImage, fullFirst, [](float a, float b) { return a / b; }); return true;
  default: return false;
  }
}

/// Add, Sub, Mul or Div of f32 X [N, C, H, W] kept in a channel layout and one value per channel
/// ([1 or N, C, 1, 1]), either side: the output in that layout too (the plan keeps such a node's
/// full input and output so: a squeeze-excite block's scale). In channel blocks (nChw16c,
/// nChw8c) block by block (blockRows); channels last as rows of C: shape [N, H*W, C], the values'
/// strides [C or 0, 0, 1].
Result<void> channelBlockedBinary(EvalContext &ctx, Bin op) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  const bool fullFirst = a.shape().size() == 4 && (b.elementCount() < a.elementCount() || b.shape() == a.shape());
  const Tensor &x = fullFirst ? a : b, &c = fullFirst ? b : a;
  const Shape &xs = x.shape(), &cs = c.shape();
  const bool last = ctx.inputLayout() == Layout::ChannelsLast;
  const int64_t B = channelBlock(ctx.inputLayout());
  if (a.type() != ElementType::F32 || b.type() != ElementType::F32 || xs.size() != 4 || (!last && xs[1] % B != 0) ||
      cs.size() != 4 || cs[1] != xs[1] || cs[2] != 1 || cs[3] != 1 || (cs[0] != 1 && cs[0] != xs[0]))
    return errorf("inputs {} and {} kept in a channel layout: f32 [N, C, H, W] and [1 or N, C, 1, 1] expected",
                  shapeText(a.shape()), shapeText(b.shape()));
  const int64_t C = xs[1], HW = xs[2] * xs[3];
  if (!last) { // the walk below would make rows of B elements: each block's positions at once
    Elements<float> ex(x), ec(c);
    Output<float> o(ctx, ElementType::F32, xs);
    SF_ASSIGN(float *p, o.makeForOverwrite(true));
    const int64_t cImage = cs[0] == 1 ? 0 : C;
    const bool done = B == 16 ? blockedArithmetic<16>(op, ex.data(), ec.data(), p, xs[0], C / B, HW, cImage, fullFirst)
                              : blockedArithmetic<8>(op, ex.data(), ec.data(), p, xs[0], C / B, HW, cImage, fullFirst);
    if (!done) return errorf("this op is not kept in a channel layout");
    return o.finish(0);
  }
  Shape walk{xs[0], HW, C};
  std::array<std::vector<int64_t>, 2> st{std::vector<int64_t>{C * HW, C, 1}, std::vector<int64_t>{cs[0] == 1 ? 0 : C, 0, 1}};
  if (!fullFirst) std::swap(st[0], st[1]);
  Elements<float> ea(a), eb(b);
  Output<float> o(ctx, ElementType::F32, xs);
  SF_ASSIGN(float *p, o.makeForOverwrite(true));
  if (!fastArithmetic<float>(op, walk, st, ea.data(), eb.data(), p)) return errorf("this op is not kept in a channel layout");
  return o.finish(0);
}

/// out = op(a, b) broadcast; comparisons and logic give bool.
Result<void> binary(EvalContext &ctx, Bin op, const Tensor &a, const Tensor &b, size_t outIndex = 0) {
  if (a.type() != b.type())
    return errorf("inputs are {} and {}: the types must agree", shortName(a.type()), shortName(b.type()));
  if (isHalf(a.type())) return halfBinary(ctx, op, {&a, &b});
  SF_ASSIGN(const Shape shape, broadcastAll({a.shape(), b.shape()}));
  Shape out = shape;
  std::array<std::vector<int64_t>, 2> st{broadcastStrides(a.shape(), out), broadcastStrides(b.shape(), out)};
  mergeDims(out, st);
  bool boolOut = isCompare(op) || isLogic(op);
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a), y(b);
    if (boolOut) {
      Output<bool> o(ctx, ElementType::Bool, shape);
      SF_ASSIGN(bool *p, o.make());
      forEachBroadcast<2>(out, st, [&](int64_t i, const std::array<int64_t, 2> &f) {
        p[i] = compare<T>(op, x[size_t(f[0])], y[size_t(f[1])]);
      });
      return o.finish(outIndex);
    }
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("arithmetic on bool is not defined");
    } else {
      Output<T> o(ctx, a.type(), shape);
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
    if ((o == Bin::BitAnd || o == Bin::BitOr || o == Bin::BitXor) && !isInteger(ctx.input(0).type()))
      return errorf("a bitwise op of {}", shortName(ctx.input(0).type()));
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
    if (ctx.inputLayout() != Layout::Plain) return channelBlockedBinary(ctx, o);
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

Result<void> prelu(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &s = ctx.input(1);
  if (a.type() != s.type()) return errorf("X is {} and slope {}", shortName(a.type()), shortName(s.type()));
  // Before opset 7 a 1-D slope of C elements is per channel (axis 1), not NumPy-broadcast.
  Shape slopeShape = s.shape();
  if (ctx.opset() < 7 && slopeShape.size() == 1 && a.shape().size() >= 2 && slopeShape[0] == a.shape()[1] &&
      slopeShape[0] != 1) {
    slopeShape.assign(a.shape().size() - 1, 1);
    slopeShape[0] = s.shape()[0];
  }
  SF_ASSIGN(Shape out, broadcastAll({a.shape(), slopeShape}));
  std::array<std::vector<int64_t>, 2> st{broadcastStrides(a.shape(), out), broadcastStrides(slopeShape, out)};
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a), y(s);
    Output<T> o(ctx, a.type(), out);
    SF_ASSIGN(T *p, o.make());
    forEachBroadcast<2>(out, st, [&](int64_t i, const std::array<int64_t, 2> &f) {
      T v = x[size_t(f[0])];
      p[i] = v < T(0) ? T(v * y[size_t(f[1])]) : v;
    });
    return o.finish(0);
  }, false);
}

Result<void> bitShift(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(std::string dir, ctx.attrs().getString("direction"));
  SF_ASSIGN(Shape out, broadcastAll({a.shape(), b.shape()}));
  std::array<std::vector<int64_t>, 2> st{broadcastStrides(a.shape(), out), broadcastStrides(b.shape(), out)};
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_integral_v<T> || std::is_signed_v<T> || std::is_same_v<T, bool>) {
      return errorf("BitShift of {}", shortName(a.type()));
    } else {
      Elements<T> x(a), y(b);
      Output<T> o(ctx, a.type(), out);
      SF_ASSIGN(T *p, o.make());
      forEachBroadcast<2>(out, st, [&](int64_t i, const std::array<int64_t, 2> &f) {
        T v = x[size_t(f[0])], s = y[size_t(f[1])];
        p[i] = s >= T(sizeof(T) * 8) ? T(0) : dir == "LEFT" ? T(v << s) : T(v >> s);
      });
      return o.finish(0);
    }
  });
}

/// Identity passes any value on (tensor, sequence or optional), sharing it.
Result<void> identity(EvalContext &ctx) { return ctx.setOutput(0, ctx.value(0)); }

Result<void> dropout(EvalContext &ctx) {
  // Training mode (opset 12: input 2 true; before 7: is_test 0) draws random numbers: the
  // outputs depend on a generator no two runtimes share, so it is refused rather than guessed.
  bool training = false;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(auto t, ints(ctx.input(2)));
    training = !t.empty() && t[0] != 0;
  }
  if (ctx.opset() < 7 && ctx.attrs().has("is_test")) {
    SF_ASSIGN(int64_t isTest, ctx.attrs().getInt("is_test"));
    training = isTest == 0;
  }
  if (training) {
    double ratio = 0.5;
    if (ctx.hasInput(1)) {
      SF_ASSIGN(auto v, doubles(ctx.input(1)));
      if (!v.empty()) ratio = v[0];
    }
    if (ratio != 0) return errorf("Dropout in training mode draws random numbers; not run");
  }
  SF_TRY(ctx.setOutput(0, ctx.input(0)));
  if (ctx.numOutputs() > 1) {
    // Inference's mask as onnxruntime writes it: of x's type and 0 before opset 10, false at
    // 10 and 11, true from 12 (ONNX's "all ones" is defined from 12 only).
    const ElementType type = ctx.opset() > 0 && ctx.opset() < 10 ? ctx.input(0).type() : ElementType::Bool;
    SF_ASSIGN(auto bytes, ctx.allocate(type, ctx.input(0).shape(), 1));
    if (ctx.opset() == 0 || ctx.opset() >= 12) std::fill(bytes.begin(), bytes.end(), std::byte{1});
    SF_ASSIGN(Tensor m, std::move(bytes).tensor(type, ctx.input(0).shape()));
    SF_TRY(ctx.setOutput(1, std::move(m)));
  }
  return success();
}

} // namespace

Result<void> registerElementwiseKernels(OpRegistry &r) {
  const std::pair<const char *, Bin> bins[] = {
      {"Sub", Bin::Sub},         {"Mul", Bin::Mul},         {"Div", Bin::Div},
      {"Pow", Bin::Pow},     {"Mod", Bin::Mod},         {"Equal", Bin::Equal},     {"Less", Bin::Less},
      {"Greater", Bin::Greater}, {"LessOrEqual", Bin::LessEq}, {"GreaterOrEqual", Bin::GreaterEq},
      {"And", Bin::And},     {"Or", Bin::Or},           {"Xor", Bin::Xor},
      {"BitwiseAnd", Bin::BitAnd}, {"BitwiseOr", Bin::BitOr}, {"BitwiseXor", Bin::BitXor}};
  for (const auto &[name, op] : bins) SF_TRY(setKernel(r, name, binaryKernel(op)));
  // Add, Sub, Mul and Div take a full input in channel blocks with a value per channel.
  for (const char *name : {"Add", "Sub", "Mul", "Div"}) r.findMutable("", name)->kernelTakesBlocked = true;
  // A sum of bounded elements is bounded (EvalContext::inputBound): a residual Add.
  SF_TRY(setKernel(r, "Add", [add = binaryKernel(Bin::Add)](EvalContext &ctx) -> Result<void> {
    SF_TRY(add(ctx));
    if (ctx.hasInput(0) && ctx.hasInput(1) && ctx.input(0).elementCount() > 0 && ctx.input(1).elementCount() > 0)
      ctx.setOutputBound(0, boundOfSum(ctx.inputBound(0), ctx.inputBound(1)));
    return success();
  }));
  SF_TRY(setKernel(r, "Max", variadic(Bin::Max, false)));
  SF_TRY(setKernel(r, "Min", variadic(Bin::Min, false)));
  SF_TRY(setKernel(r, "Sum", variadic(Bin::Add, false)));
  SF_TRY(setKernel(r, "Mean", variadic(Bin::Add, true)));
  SF_TRY(setKernel(r, "Where", where));
  SF_TRY(setKernel(r, "PRelu", prelu));
  SF_TRY(setKernel(r, "BitShift", bitShift));
  SF_TRY(setSequenceKernel(r, "Identity", keepingBound(identity)));
  SF_TRY(setKernel(r, "Dropout", dropout));
  return success();
}

} // namespace sf::eval::detail
