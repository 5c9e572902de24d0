// Elementwise ops: unary math, binary ops with numpy broadcasting, variadic Sum/Mean/Max/Min,
// Where, Cast, Clip, PRelu, Dropout. Integer shape values propagate through the arithmetic ones
// (Add, Sub, Mul, Div, Mod, Min, Max, Neg, Abs, Equal, Where, Cast, Identity).
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace sf {
namespace {

/// The broadcast of two value vectors in the 1-D sense (same length, or one of length 1), with
/// the shape of the broadcast fact. nullopt when either side is unknown.
template <class Op>
std::optional<std::vector<Dimension>> combineValues(const Fact &a, const Fact &b, Op op) {
  auto va = dimValues(a), vb = dimValues(b);
  if (!va || !vb) return std::nullopt;
  size_t n = std::max(va->size(), vb->size());
  if (va->size() != n && va->size() != 1) return std::nullopt;
  if (vb->size() != n && vb->size() != 1) return std::nullopt;
  std::vector<Dimension> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Dimension &x = (*va)[va->size() == 1 ? 0 : i];
    const Dimension &y = (*vb)[vb->size() == 1 ? 0 : i];
    std::optional<Dimension> r = op(x, y);
    if (!r) return std::nullopt;
    out.push_back(*r);
  }
  return out;
}

bool valueShapeOk(const PartialShape &s) { return s.rankIsStatic() && s.size() <= 1; }

Result<std::vector<Fact>> unary(InferContext &ctx) {
  Fact f = ctx.input(0);
  f.constant.reset();
  f.value.reset();
  return factsOf(std::move(f));
}

Result<std::vector<Fact>> unaryBool(InferContext &ctx) {
  return factsOf(makeFact(ElementType::Bool, ctx.input(0).shape));
}

Result<std::vector<Fact>> identity(InferContext &ctx) { return factsOf(ctx.input(0)); }

/// Shared by the binary ops: type agreement and the broadcast shape.
Result<Fact> broadcastBinary(InferContext &ctx, size_t i, size_t j) {
  const Fact &a = ctx.input(i), &b = ctx.input(j);
  if (a.type != ElementType::Undefined && b.type != ElementType::Undefined && a.type != b.type &&
      ctx.opType() != "Pow" && ctx.opType() != "BitShift")
    return makeError("input types differ: " + describe(a) + " vs " + describe(b));
  SF_ASSIGN(PartialShape s, ctx.broadcast(a.shape, b.shape));
  ElementType t = a.type != ElementType::Undefined ? a.type : b.type;
  return makeFact(t, std::move(s));
}

/// A value element that may be negative or a float expression.
Dimension valueElement(Expr e) { return Dimension(e, Interval{-kInf, kInf}); }

std::optional<Dimension> opt(Result<Dimension> r) {
  if (!r.ok()) return std::nullopt;
  return *r;
}

template <class ValueOp> InferFn arithmetic(ValueOp valueOp) {
  return [valueOp](InferContext &ctx) -> Result<std::vector<Fact>> {
    SF_ASSIGN(Fact out, broadcastBinary(ctx, 0, 1));
    if (isInteger(out.type) && valueShapeOk(out.shape))
      out.value = combineValues(ctx.input(0), ctx.input(1), valueOp);
    return factsOf(std::move(out));
  };
}

Result<std::vector<Fact>> comparison(InferContext &ctx) {
  SF_ASSIGN(Fact out, broadcastBinary(ctx, 0, 1));
  out.type = ElementType::Bool;
  if (ctx.opType() == "Equal" && valueShapeOk(out.shape) && isInteger(ctx.input(0).type)) {
    // Equal of known elements: 1 where the same expression, 0 where the ranges are disjoint.
    out.value = combineValues(ctx.input(0), ctx.input(1),
                              [](const Dimension &x, const Dimension &y) -> std::optional<Dimension> {
                                if (x.isStatic() && y.isStatic())
                                  return Dimension::constantValue(x.length() == y.length());
                                if (x.expr() && x.expr() == y.expr()) return Dimension::constantValue(1);
                                if (!x.compatible(y)) return Dimension::constantValue(0);
                                return Dimension::fromInterval({0, 1});
                              });
  }
  return factsOf(std::move(out));
}

Result<std::vector<Fact>> logical(InferContext &ctx) {
  SF_ASSIGN(Fact out, broadcastBinary(ctx, 0, 1));
  out.type = ElementType::Bool;
  return factsOf(std::move(out));
}

Result<std::vector<Fact>> variadic(InferContext &ctx) {
  if (ctx.numInputs() == 0) return makeError("needs at least one input");
  Fact out = ctx.input(0);
  out.constant.reset();
  out.value.reset();
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    const Fact &b = ctx.input(i);
    if (out.type != ElementType::Undefined && b.type != ElementType::Undefined && out.type != b.type)
      return makeError("input types differ: " + describe(out) + " vs " + describe(b));
    SF_ASSIGN(out.shape, ctx.broadcast(out.shape, b.shape));
    if (out.type == ElementType::Undefined) out.type = b.type;
  }
  // Max/Min of integer values (e.g. clamping a computed size).
  std::string op = ctx.opType();
  if ((op == "Max" || op == "Min") && isInteger(out.type) && valueShapeOk(out.shape)) {
    Fact acc = ctx.input(0);
    for (size_t i = 1; i < ctx.numInputs() && acc.value; ++i) {
      acc.value = combineValues(acc, ctx.input(i), [&](const Dimension &x, const Dimension &y) {
        return opt(op == "Max" ? Dimension::max(x, y) : Dimension::min(x, y));
      });
      acc.constant.reset();
    }
    if (ctx.numInputs() > 1 || dimValues(acc)) out.value = acc.value ? acc.value : dimValues(acc);
  }
  return factsOf(std::move(out));
}

Result<std::vector<Fact>> where(InferContext &ctx) {
  const Fact &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (c.type != ElementType::Undefined && c.type != ElementType::Bool)
    return makeError("condition must be bool, got " + describe(c));
  if (x.type != ElementType::Undefined && y.type != ElementType::Undefined && x.type != y.type)
    return makeError("branch types differ: " + describe(x) + " vs " + describe(y));
  SF_ASSIGN(PartialShape s, ctx.broadcast(c.shape, x.shape));
  SF_ASSIGN(s, ctx.broadcast(s, y.shape));
  Fact out = makeFact(x.type != ElementType::Undefined ? x.type : y.type, s);
  if (isInteger(out.type) && valueShapeOk(s)) {
    auto vc = dimValues(c), vx = dimValues(x), vy = dimValues(y);
    if (vc && vx && vy) {
      size_t n = std::max({vc->size(), vx->size(), vy->size()});
      std::vector<Dimension> out_v;
      bool ok = true;
      for (size_t i = 0; i < n && ok; ++i) {
        auto pick = [&](const std::vector<Dimension> &v) -> const Dimension & {
          return v[v.size() == 1 ? 0 : std::min(i, v.size() - 1)];
        };
        const Dimension &ci = pick(*vc);
        if (ci.isStatic()) {
          out_v.push_back(ci.length() ? pick(*vx) : pick(*vy));
        } else {
          // Either branch: the hull of both.
          Interval h = pick(*vx).interval().hull(pick(*vy).interval());
          out_v.push_back(pick(*vx) == pick(*vy) ? pick(*vx) : Dimension::fromInterval(h));
        }
      }
      if (ok) out.value = std::move(out_v);
    }
  }
  return factsOf(std::move(out));
}

std::optional<ElementType> castTarget(InferContext &ctx) {
  auto to = ctx.attrs().getInt("to");
  if (!to.ok()) return std::nullopt;
  return elementTypeFromOnnx(*to);
}

Result<std::vector<Fact>> cast(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  ElementType to = ctx.input(1).type;
  if (ctx.opType() == "Cast") {
    auto t = castTarget(ctx);
    if (!t || *t == ElementType::Undefined)
      return makeError("attribute 'to' is missing or not a supported element type");
    to = *t;
  }
  Fact out = makeFact(to, in.shape);
  // Integer values survive a cast between integer types (shape math commonly goes through
  // i32 or through float and back); a cast to float keeps them too, as the values are exact
  // small integers, so that Cast(float) -> Cast(int64) round trips.
  // Float expressions (dim/expr.h) become integers toward zero; to f32 from an f64 expression
  // they would round, which is not expressed, so that element is only bounded.
  if (in.value && (isInteger(to) || isFloat(to))) {
    std::vector<Dimension> v;
    for (const Dimension &d : *in.value) {
      if (!isFloatExpr(d.expr())) {
        v.push_back(d);
      } else if (isInteger(to)) {
        auto r = roundToInt(RoundMode::Trunc, d.expr());
        v.push_back(r.ok() ? valueElement(*r) : Dimension::fromInterval(d.interval()));
      } else if (to == ElementType::F32 && d.expr()->prec == FloatPrec::F64) {
        v.push_back(Dimension::fromInterval(d.interval()));
      } else if (isFloat(to) && to != ElementType::F32 && to != ElementType::F64) {
        v.push_back(Dimension::fromInterval(d.interval()));
      } else {
        v.push_back(d);
      }
    }
    out.value = std::move(v);
  }
  return factsOf(std::move(out));
}

Result<std::vector<Fact>> clip(InferContext &ctx) { return unary(ctx); }

Result<std::vector<Fact>> prelu(InferContext &ctx) {
  // Slope broadcasts unidirectionally onto X.
  const Fact &x = ctx.input(0), &slope = ctx.input(1);
  // Before opset 7 a 1-D slope holds one value per channel (axis 1), as the old exporters wrote
  // it (pytorch's PReLU with num_parameters = C gives X [N,C,...] and slope [C]).
  if (ctx.opset() < 7 && x.shape.rankIsStatic() && x.shape.size() >= 2 &&
      slope.shape.rankIsStatic() && slope.shape.size() == 1 && slope.shape[0] != Dimension(1)) {
    if (!x.shape[1].compatible(slope.shape[0]))
      return makeError("slope " + describe(slope) + " has " + slope.shape[0].toString() +
                       " elements but X " + describe(x) + " has " + x.shape[1].toString() +
                       " channels");
    SF_ASSIGN(Dimension c, ctx.mergeDims(x.shape[1], slope.shape[0]));
    std::vector<Dimension> dims = x.shape.dims();
    dims[1] = c;
    return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
  }
  SF_ASSIGN(PartialShape s, ctx.broadcast(x.shape, slope.shape));
  if (x.shape.rankIsStatic() && s.rankIsStatic() && s.size() != x.shape.size())
    return makeError("slope " + describe(slope) + " does not broadcast onto " + describe(x));
  return factsOf(makeFact(x.type, x.shape.rankIsStatic() ? x.shape : s));
}

Result<std::vector<Fact>> dropout(InferContext &ctx) {
  Fact out = ctx.input(0);
  out.constant.reset();
  out.value.reset();
  std::vector<Fact> r{out};
  if (ctx.numOutputs() > 1) r.push_back(makeFact(ElementType::Bool, out.shape));
  return r;
}

Result<std::vector<Fact>> negAbs(InferContext &ctx) {
  Fact out = ctx.input(0);
  out.constant.reset();
  if (out.value && isInteger(out.type)) {
    bool isNeg = ctx.opType() == "Neg";
    std::vector<Dimension> v;
    for (const auto &d : *out.value) {
      if (isNeg) {
        auto r = Dimension::constantValue(0) - d;
        if (!r.ok()) {
          out.value.reset();
          break;
        }
        v.push_back(*r);
      } else if (d.minLength() >= 0) {
        v.push_back(d);
      } else if (d.isStatic()) {
        v.push_back(Dimension::constantValue(d.length() < 0 ? -d.length() : d.length()));
      } else {
        v.push_back(Dimension::fromInterval({0, std::max(d.maxLength(), d.minLength() == -kInf ? kInf : -d.minLength())}));
      }
    }
    if (out.value) out.value = std::move(v);
  } else {
    out.value.reset();
  }
  return factsOf(std::move(out));
}

/// Integer division as ONNX defines it for integers (truncation toward zero); for the
/// non-negative values of shape math this is floor division.
std::optional<Dimension> divValue(const Dimension &x, const Dimension &y) {
  if (x.isStatic() && y.isStatic()) {
    if (y.length() == 0) return std::nullopt;
    if (x.length() == INT64_MIN && y.length() == -1) return std::nullopt;
    return Dimension::constantValue(x.length() / y.length());
  }
  // x = q * y as polynomials: the quotient is exact whatever the signs (y == 0 would be a
  // division by zero at run time, so it is not).
  if (x.expr() && y.expr() && !isConst(y.expr())) {
    auto q = divExact(x.expr(), y.expr());
    if (q.ok()) return valueElement(*q);
  }
  if (x.minLength() < 0 || y.minLength() <= 0) return std::nullopt;
  return opt(x.floorDiv(y));
}

std::optional<Dimension> modValue(const Dimension &x, const Dimension &y) {
  if (x.isStatic() && y.isStatic()) {
    if (y.length() == 0) return std::nullopt;
    auto m = checkedMod(x.length(), y.length());
    if (!m) return std::nullopt;
    return Dimension::constantValue(*m);
  }
  if (y.isStatic() && y.length() > 0 && x.expr()) {
    auto e = mod(x.expr(), y.length());
    if (e.ok()) return Dimension(*e);
  }
  return std::nullopt;
}

/// Mod with fmod = 1: the remainder takes the dividend's sign (C's %), as for floats.
std::optional<Dimension> fmodValue(const Dimension &x, const Dimension &y) {
  if (x.isStatic() && y.isStatic()) {
    if (y.length() == 0) return std::nullopt;
    if (y.length() == -1) return Dimension::constantValue(0);
    return Dimension::constantValue(x.length() % y.length());
  }
  // A non-negative dividend and a positive divisor: both readings agree.
  if (x.minLength() >= 0 && y.isStatic() && y.length() > 0) return modValue(x, y);
  return std::nullopt;
}

Result<std::vector<Fact>> modOp(InferContext &ctx) {
  static const InferFn pythonMod = arithmetic(modValue), cMod = arithmetic(fmodValue);
  SF_ASSIGN(int64_t fmod, ctx.attrs().getInt("fmod", 0));
  if (fmod != 0 && fmod != 1) return makeError("fmod must be 0 or 1, got " + std::to_string(fmod));
  return fmod ? cMod(ctx) : pythonMod(ctx);
}

// ---------------------------------------------------------------- float folding
// Exporters compute sizes in floating point too (torchvision's detection transform: a scale
// factor min(800 / min(H, W), 1333 / max(H, W)), then floor(H * scale) cast back to int64). When
// every input of such an op is known (a small float constant, or integer values all static), the
// op is evaluated here, in the output's precision (each f32 result rounded to float, as the
// runtime computes it; f16/bf16 are not folded). The result is a constant tensor, and when its
// elements are integral, also a value, so that shape ops and Cast carry it on.

constexpr size_t kFoldBudget = 64;

double roundTo(ElementType t, double v) { return t == ElementType::F32 ? double(float(v)) : v; }

/// Sets `out`'s constant (and integral value) from `values` of `out`'s type and static shape.
void setFolded(Fact &out, const std::vector<double> &values) {
  auto shape = out.shape.toShape();
  if (!shape.ok()) return;
  bool integral = out.shape.size() <= 1;
  for (double v : values)
    integral = integral && std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 9.0e15;
  if (isInteger(out.type)) {
    if (!integral) return;
    std::vector<int64_t> ints(values.begin(), values.end());
    auto t = Tensor::fromInt64s(*shape, ints, out.type);
    if (t.ok()) out.constant = std::make_shared<const Tensor>(std::move(*t));
  } else {
    auto t = Tensor::fromDoubles(out.type, *shape, values);
    if (t.ok()) out.constant = std::make_shared<const Tensor>(std::move(*t));
  }
  if (integral) {
    std::vector<Dimension> dims;
    for (double v : values) dims.push_back(Dimension::constantValue(int64_t(v)));
    out.value = std::move(dims);
  }
}

using FloatFn = std::function<double(const std::vector<double> &)>;

/// The float function of an op, or null when it is not folded.
FloatFn floatFunction(std::string_view op) {
  using V = const std::vector<double> &;
  if (op == "Add") return [](V x) { return x[0] + x[1]; };
  if (op == "Sub") return [](V x) { return x[0] - x[1]; };
  if (op == "Mul") return [](V x) { return x[0] * x[1]; };
  if (op == "Div") return [](V x) { return x[0] / x[1]; };
  if (op == "Min") return [](V x) { return *std::min_element(x.begin(), x.end()); };
  if (op == "Max") return [](V x) { return *std::max_element(x.begin(), x.end()); };
  if (op == "Reciprocal") return [](V x) { return 1.0 / x[0]; };
  if (op == "Floor") return [](V x) { return std::floor(x[0]); };
  if (op == "Ceil") return [](V x) { return std::ceil(x[0]); };
  if (op == "Round") return [](V x) { return std::nearbyint(x[0]); }; // half to even
  if (op == "Sqrt") return [](V x) { return std::sqrt(x[0]); };
  if (op == "Neg") return [](V x) { return -x[0]; };
  if (op == "Abs") return [](V x) { return std::fabs(x[0]); };
  if (op == "Cast") return [](V x) { return x[0]; };
  return nullptr;
}

/// Wraps an elementwise rule: after it, folds float arithmetic on known inputs with `fn` (see
/// above).
using ExprFn = std::function<Result<Expr>(const std::vector<Expr> &, FloatPrec)>;

/// The op on float expressions (dim/expr.h), or null when it has none.
ExprFn exprFunction(std::string_view op) {
  using V = const std::vector<Expr> &;
  auto binary = [](FloatOp o) {
    return [o](V x, FloatPrec p) -> Result<Expr> {
      Expr acc = x[0];
      for (size_t i = 1; i < x.size(); ++i) {
        SF_ASSIGN(acc, floatOp(o, acc, x[i], p));
      }
      return acc;
    };
  };
  auto rounding = [](RoundMode m) {
    return [m](V x, FloatPrec) { return roundToInt(m, x[0]); };
  };
  if (op == "Add") return binary(FloatOp::Add);
  if (op == "Sub") return binary(FloatOp::Sub);
  if (op == "Mul") return binary(FloatOp::Mul);
  if (op == "Div") return binary(FloatOp::Div);
  if (op == "Min") return binary(FloatOp::Min);
  if (op == "Max") return binary(FloatOp::Max);
  if (op == "Reciprocal") return [](V x, FloatPrec p) { return floatOp(FloatOp::Div, constant(1), x[0], p); };
  if (op == "Neg") return [](V x, FloatPrec p) { return floatOp(FloatOp::Mul, x[0], constant(-1), p); };
  if (op == "Floor") return rounding(RoundMode::Floor);
  if (op == "Ceil") return rounding(RoundMode::Ceil);
  if (op == "Round") return rounding(RoundMode::HalfEven);
  return nullptr;
}

/// Folds float arithmetic on known numbers; false when some input is not a known number.
bool foldNumbers(InferContext &ctx, const FloatFn &fn, Fact &out) {
  if (!out.shape.isStatic()) return false;
  auto outShape = out.shape.toShape();
  if (!outShape.ok()) return false;
  size_t n = 1;
  for (int64_t d : *outShape) n *= size_t(d);
  if (n > kFoldBudget) return false;
  std::vector<std::vector<double>> in;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Fact &f = ctx.input(i);
    auto v = f.shape.isStatic() ? constFloats(f, kFoldBudget) : std::nullopt;
    if (!v) return false;
    // Scalars and same-shape inputs only (the shape math this is for).
    if (v->size() != 1 && (f.shape.toShape().valueOr(Shape{}) != *outShape || v->size() != n))
      return false;
    // An f32 input's elements are floats already; integers convert exactly enough (< 2^24).
    in.push_back(std::move(*v));
  }
  if (in.empty()) return false;
  std::vector<double> result(n);
  std::vector<double> args(in.size());
  for (size_t e = 0; e < n; ++e) {
    for (size_t i = 0; i < in.size(); ++i) args[i] = in[i][in[i].size() == 1 ? 0 : e];
    double v = fn(args);
    if (isInteger(out.type)) {
      // Cast to an integer type: toward zero; out of range or NaN is not folded.
      if (!std::isfinite(v) || std::fabs(v) >= 9.0e15) return false;
      v = std::trunc(v);
    }
    result[e] = roundTo(out.type, v);
  }
  setFolded(out, result);
  return true;
}

/// Float arithmetic on values that are not all numbers (a size cast to float): per element a
/// float expression in the output's precision, so that floor(H * scale) stays an expression of H.
void foldExprs(InferContext &ctx, const ExprFn &fn, Fact &out) {
  auto p = precisionOf(out.type);
  if (!p || !out.shape.rankIsStatic() || out.shape.size() > 1) return;
  std::vector<std::vector<Expr>> in;
  size_t n = 1;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    auto v = valueExprs(ctx.input(i), kFoldBudget);
    if (!v || v->empty()) return;
    if (v->size() != 1) {
      if (n != 1 && v->size() != n) return;
      n = v->size();
    }
    in.push_back(std::move(*v));
  }
  if (in.empty() || n > kFoldBudget) return;
  std::vector<Dimension> result;
  std::vector<Expr> args(in.size());
  for (size_t e = 0; e < n; ++e) {
    for (size_t i = 0; i < in.size(); ++i) args[i] = in[i][in[i].size() == 1 ? 0 : e];
    auto r = fn(args, *p);
    if (!r.ok()) return;
    result.push_back(valueElement(*r));
  }
  out.value = std::move(result);
}

/// Wraps an elementwise rule: after it, float arithmetic on known inputs is folded to numbers
/// with `fn`, or else kept as float expressions with `efn`.
InferFn foldingFloats(InferFn rule, FloatFn fn, ExprFn efn) {
  return [rule, fn, efn](InferContext &ctx) -> Result<std::vector<Fact>> {
    SF_ASSIGN(std::vector<Fact> outs, rule(ctx));
    if (outs.size() != 1) return outs;
    Fact &out = outs[0];
    bool floatMath = false;
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      floatMath = floatMath || isFloat(ctx.input(i).type);
    if (!floatMath && !isFloat(out.type)) return outs; // integer math: values do it exactly
    if (out.type != ElementType::F32 && out.type != ElementType::F64 && !isInteger(out.type))
      return outs;
    if (!foldNumbers(ctx, fn, out) && efn && !out.value) foldExprs(ctx, efn, out);
    return outs;
  };
}

} // namespace

void registerElementwiseOps(OpRegistry &r) {
  r.addAll({"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil",
            "Round", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
            "Acosh", "Atanh", "Softplus", "Softsign", "Sign", "HardSigmoid", "HardSwish", "Elu",
            "Selu", "LeakyRelu", "ThresholdedRelu", "Celu", "Mish", "Gelu", "Shrink", "BitwiseNot",
            "Clip"},
           unary);
  r.addAll({"Not", "IsNaN", "IsInf"}, unaryBool);
  r.addAll({"Identity"}, identity);
  r.addAll({"Neg", "Abs"}, negAbs);
  r.addAll({"Add"}, arithmetic([](const Dimension &x, const Dimension &y) { return opt(x + y); }));
  r.addAll({"Sub"}, arithmetic([](const Dimension &x, const Dimension &y) { return opt(x - y); }));
  r.addAll({"Mul"}, arithmetic([](const Dimension &x, const Dimension &y) { return opt(x * y); }));
  r.addAll({"Div"}, arithmetic(divValue));
  r.addAll({"Mod"}, modOp);
  r.addAll({"Pow", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"},
           arithmetic([](const Dimension &, const Dimension &) -> std::optional<Dimension> {
             return std::nullopt;
           }));
  r.addAll({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}, comparison);
  r.addAll({"And", "Or", "Xor"}, logical);
  r.addAll({"Sum", "Mean", "Max", "Min"}, variadic);
  r.addAll({"Where"}, where);
  r.addAll({"Cast", "CastLike"}, cast);
  r.addAll({"PRelu"}, prelu);
  r.addAll({"Dropout"}, dropout);
  (void)clip;
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Min", "Max", "Reciprocal", "Floor", "Ceil",
                         "Round", "Sqrt", "Neg", "Abs", "Cast"}) {
    const OpDef *def = r.find("", op);
    if (def) r.add({op, "", foldingFloats(def->infer, floatFunction(op), exprFunction(op))});
  }
}

} // namespace sf
