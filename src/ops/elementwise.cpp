// Elementwise ops: unary math, binary ops with numpy broadcasting, variadic Sum/Mean/Max/Min,
// Where, Cast, Clip, PRelu, Dropout. Integer shape values propagate through the arithmetic ones
// (Add, Sub, Mul, Div, Mod, Min, Max, Neg, Abs, Equal, Where, Cast, Identity).
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

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

Result<Facts> inferUnary(InferContext &ctx) {
  Fact f = ctx.input(0);
  f.constant.reset();
  f.value.reset();
  return factsOf(std::move(f));
}

Result<Facts> inferUnaryBool(InferContext &ctx) {
  return factsOf(makeFact(ElementType::Bool, ctx.input(0).shape));
}

Result<Facts> inferIdentity(InferContext &ctx) { return factsOf(ctx.input(0)); }

/// Shared by the binary ops: type agreement (unless `mixedTypes`: Pow's exponent and BitShift's
/// amount may have their own type) and the broadcast shape.
Result<Fact> broadcastBinary(InferContext &ctx, size_t i, size_t j, bool mixedTypes = false) {
  const Fact &a = ctx.input(i), &b = ctx.input(j);
  if (a.type != ElementType::Undefined && b.type != ElementType::Undefined && a.type != b.type &&
      !mixedTypes)
    return errorf("input types differ: {} vs {}", a, b);
  SF_ASSIGN(PartialShape s, ctx.broadcast(a.shape, b.shape));
  ElementType t = a.type != ElementType::Undefined ? a.type : b.type;
  return makeFact(t, std::move(s));
}

InferFn inferBinary(bool mixedTypes = false) {
  return [mixedTypes](InferContext &ctx) -> Result<Facts> {
    SF_ASSIGN(Fact out, broadcastBinary(ctx, 0, 1, mixedTypes));
    return factsOf(std::move(out));
  };
}

/// A value element that may be negative or a float expression.
Dimension valueElement(Expr e) { return Dimension(e, Interval{-kInf, kInf}); }

std::optional<Dimension> opt(Result<Dimension> r) {
  if (!r.ok()) return std::nullopt;
  return *r;
}

using ValueOp = std::function<std::optional<Dimension>(const Dimension &, const Dimension &)>;

/// Integer values of a binary op, element by element (shape math: sizes added, multiplied, ...).
ValueFn intValues(ValueOp op) {
  return [op](InferContext &ctx, Facts &outs) {
    Fact &out = outs[0];
    if (isInteger(out.type) && valueShapeOk(out.shape))
      out.value = combineValues(ctx.input(0), ctx.input(1), op);
  };
}

Result<Facts> inferComparison(InferContext &ctx) {
  SF_ASSIGN(Fact out, broadcastBinary(ctx, 0, 1));
  out.type = ElementType::Bool;
  return factsOf(std::move(out));
}

/// Equal of known elements: 1 where the same expression, 0 where the ranges are disjoint.
void equalValues(InferContext &ctx, Facts &outs) {
  Fact &out = outs[0];
  if (!valueShapeOk(out.shape) || !isInteger(ctx.input(0).type)) return;
  out.value = combineValues(ctx.input(0), ctx.input(1),
                            [](const Dimension &x, const Dimension &y) -> std::optional<Dimension> {
                              if (x.isStatic() && y.isStatic())
                                return Dimension::constantValue(x.length() == y.length());
                              if (x.expr() && x.expr() == y.expr())
                                return Dimension::constantValue(1);
                              if (!x.compatible(y)) return Dimension::constantValue(0);
                              return Dimension::fromInterval({0, 1});
                            });
}

Result<Facts> inferVariadic(InferContext &ctx) {
  if (ctx.numInputs() == 0) return makeError("needs at least one input");
  Fact out = ctx.input(0);
  out.constant.reset();
  out.value.reset();
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    const Fact &b = ctx.input(i);
    if (out.type != ElementType::Undefined && b.type != ElementType::Undefined && out.type != b.type)
      return errorf("input types differ: {} vs {}", out, b);
    // Sum, Mean, Max and Min broadcast from opset 8; before it their inputs have one shape.
    if (ctx.opset() > 0 && ctx.opset() < 8) {
      auto same = ctx.mergeShapes(out.shape, b.shape);
      if (!same.ok()) return errorf("inputs must have the same shape before opset 8: {} vs {}", out, b);
      out.shape = *same;
    } else {
      SF_ASSIGN(out.shape, ctx.broadcast(out.shape, b.shape));
    }
    if (out.type == ElementType::Undefined) out.type = b.type;
  }
  return factsOf(std::move(out));
}

/// Max/Min of integer values (clamping a computed size).
ValueFn minMaxValues(bool isMax) {
  return [isMax](InferContext &ctx, Facts &outs) {
    Fact &out = outs[0];
    if (!isInteger(out.type) || !valueShapeOk(out.shape)) return;
    Fact acc = ctx.input(0);
    for (size_t i = 1; i < ctx.numInputs() && acc.value; ++i) {
      acc.value = combineValues(acc, ctx.input(i), [&](const Dimension &x, const Dimension &y) {
        return opt(isMax ? Dimension::max(x, y) : Dimension::min(x, y));
      });
      acc.constant.reset();
    }
    if (ctx.numInputs() > 1 || dimValues(acc)) out.value = acc.value ? acc.value : dimValues(acc);
  };
}

Result<Facts> inferWhere(InferContext &ctx) {
  const Fact &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (c.type != ElementType::Undefined && c.type != ElementType::Bool)
    return errorf("condition must be bool, got {}", c);
  if (x.type != ElementType::Undefined && y.type != ElementType::Undefined && x.type != y.type)
    return errorf("branch types differ: {} vs {}", x, y);
  SF_ASSIGN(PartialShape s, ctx.broadcast(c.shape, x.shape));
  SF_ASSIGN(s, ctx.broadcast(s, y.shape));
  return factsOf(makeFact(x.type != ElementType::Undefined ? x.type : y.type, s));
}

/// Where over known elements: the picked branch where the condition is known, else the hull.
void whereValues(InferContext &ctx, Facts &outs) {
  Fact &out = outs[0];
  if (!isInteger(out.type) || !valueShapeOk(out.shape)) return;
  auto vc = dimValues(ctx.input(0)), vx = dimValues(ctx.input(1)), vy = dimValues(ctx.input(2));
  if (!vc || !vx || !vy) return;
  size_t n = std::max({vc->size(), vx->size(), vy->size()});
  std::vector<Dimension> v;
  for (size_t i = 0; i < n; ++i) {
    auto pick = [&](const std::vector<Dimension> &w) -> const Dimension & {
      return w[w.size() == 1 ? 0 : std::min(i, w.size() - 1)];
    };
    const Dimension &ci = pick(*vc);
    if (ci.isStatic()) {
      v.push_back(ci.length() ? pick(*vx) : pick(*vy));
    } else {
      Interval h = pick(*vx).interval().hull(pick(*vy).interval());
      v.push_back(pick(*vx) == pick(*vy) ? pick(*vx) : Dimension::fromInterval(h));
    }
  }
  out.value = std::move(v);
}

/// Cast (the target type from attribute `to`) or CastLike (from input 1's type).
InferFn inferCast(bool like) {
  return [like](InferContext &ctx) -> Result<Facts> {
    ElementType to = ctx.input(1).type;
    if (!like) {
      auto code = ctx.attrs().getInt("to");
      auto t = code.ok() ? elementTypeFromOnnx(*code) : std::nullopt;
      if (!t || *t == ElementType::Undefined)
        return makeError("attribute 'to' is missing or not a supported element type");
      to = *t;
    }
    return factsOf(makeFact(to, ctx.input(0).shape));
  };
}

/// Integer values survive a cast between integer types (shape math commonly goes through i32
/// or through float and back); a cast to float keeps them too, as the values are exact small
/// integers, so that Cast(float) -> Cast(int64) round trips. Float expressions (dim/expr.h)
/// become integers toward zero; to f32 from an f64 expression they would round, which is not
/// expressed, so that element is only bounded.
void castValues(InferContext &ctx, Facts &outs) {
  const Fact &in = ctx.input(0);
  Fact &out = outs[0];
  ElementType to = out.type;
  if (in.value && to == ElementType::Bool) {
    // To bool: 1 for a value known non-zero, 0 for zero, else either (a loop's condition written
    // as Cast(true) to bool stays known, so its trip count does).
    std::vector<Dimension> v;
    for (const Dimension &d : *in.value) {
      const Interval r = d.interval();
      if (isFloatExpr(d.expr())) v.push_back(Dimension::fromInterval({0, 1})); // 0.3 reads as true
      else if (r.lo == 0 && r.hi == 0) v.push_back(Dimension::constantValue(0));
      else if (r.lo > 0 || r.hi < 0) v.push_back(Dimension::constantValue(1));
      else v.push_back(Dimension::fromInterval({0, 1}));
    }
    out.value = std::move(v);
    return;
  }
  if (!in.value || !(isInteger(to) || isFloat(to))) return;
  // The integers a float type holds exactly: |v| <= 2^bits (f16 11, bf16 8, f32 24, f64 53).
  const int bits = to == ElementType::F16 ? 11 : to == ElementType::BF16 ? 8
                   : to == ElementType::F32 ? 24 : 53;
  const int64_t exact = int64_t(1) << bits;
  std::vector<std::string> assumed;
  std::vector<Dimension> v;
  for (const Dimension &d : *in.value) {
    if (!isFloatExpr(d.expr())) {
      const bool big = isFloat(to) && (d.maxLength() > exact || d.minLength() < -exact);
      if (big && d.isStatic()) {
        // A number the type rounds: its rounded value (f32, f64), or bounds around it.
        const int64_t x = d.length();
        const Dimension unknown = Dimension::fromInterval({-kInf, kInf});
        if (x > (int64_t(1) << 62) || x < -(int64_t(1) << 62) ||
            (to == ElementType::F16 && (x > 65504 || x < -65504))) {
          v.push_back(unknown); // past the type's range, or its rounding past int64's
        } else if (to == ElementType::F32) {
          v.push_back(Dimension::constantValue(int64_t(float(x))));
        } else if (to == ElementType::F64) {
          v.push_back(Dimension::constantValue(int64_t(double(x))));
        } else {
          const int64_t m = (x < 0 ? -x : x) / 128 + 1; // f16, bf16: within 1/128 of x
          v.push_back(Dimension::fromInterval({x - m, x + m}));
        }
        continue;
      }
      // A size that may exceed what the type holds exactly is taken as exact: an assumption
      // (sizes are small in practice; `--dim` bounds them and it goes away).
      if (big) assumed.push_back(d.toString());
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
  if (!assumed.empty())
    ctx.assume(fmt::format("the values {} are taken to be exact in {} (integers up to 2^{}); "
                           "larger sizes would round",
                           fmt::join(assumed, ", "), shortName(to), bits));
}

Result<Facts> inferPRelu(InferContext &ctx) {
  // Slope broadcasts unidirectionally onto X.
  const Fact &x = ctx.input(0), &slope = ctx.input(1);
  // Before opset 7 a 1-D slope holds one value per channel (axis 1), as the old exporters wrote
  // it (pytorch's PReLU with num_parameters = C gives X [N,C,...] and slope [C]).
  if (ctx.opset() < 7 && x.shape.rankIsStatic() && x.shape.size() >= 2 &&
      slope.shape.rankIsStatic() && slope.shape.size() == 1 && slope.shape[0] != Dimension(1)) {
    if (!x.shape[1].compatible(slope.shape[0]))
      return errorf("slope {} has {} elements but X {} has {} channels", slope, slope.shape[0], x,
                    x.shape[1]);
    SF_ASSIGN(Dimension c, ctx.mergeDims(x.shape[1], slope.shape[0]));
    std::vector<Dimension> dims = x.shape.dims();
    dims[1] = c;
    return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
  }
  SF_ASSIGN(PartialShape s, ctx.broadcast(x.shape, slope.shape));
  if (x.shape.rankIsStatic() && s.rankIsStatic() && s.size() != x.shape.size())
    return errorf("slope {} does not broadcast onto {}", slope, x);
  return factsOf(makeFact(x.type, x.shape.rankIsStatic() ? x.shape : s));
}

Result<Facts> inferDropout(InferContext &ctx) {
  Fact out = ctx.input(0);
  out.constant.reset();
  out.value.reset();
  Facts r{out};
  // The mask is of x's type before opset 10 (Dropout-1 to 7), bool from it.
  const bool typed = ctx.opset() > 0 && ctx.opset() < 10;
  if (ctx.numOutputs() > 1) r.push_back(makeFact(typed ? out.type : ElementType::Bool, out.shape));
  return r;
}

/// Neg of integer values.
void negValues(InferContext &ctx, Facts &outs) {
  const Fact &in = ctx.input(0);
  if (!in.value || !isInteger(outs[0].type)) return;
  std::vector<Dimension> v;
  for (const auto &d : *in.value) {
    auto r = Dimension::constantValue(0) - d;
    if (!r.ok()) return;
    v.push_back(*r);
  }
  outs[0].value = std::move(v);
}

/// Abs of integer values.
void absValues(InferContext &ctx, Facts &outs) {
  const Fact &in = ctx.input(0);
  if (!in.value || !isInteger(outs[0].type)) return;
  std::vector<Dimension> v;
  for (const auto &d : *in.value) {
    if (d.minLength() >= 0) {
      v.push_back(d);
    } else if (auto n = Dimension::constantValue(0) - d; !d.isStatic() && d.maxLength() <= 0 && n.ok()) {
      v.push_back(*n); // never positive: its negation (Abs(-N) is N)
    } else if (d.isStatic()) {
      v.push_back(Dimension::constantValue(d.length() < 0 ? -d.length() : d.length()));
    } else {
      v.push_back(Dimension::fromInterval(
          {0, std::max(d.maxLength(), d.minLength() == -kInf ? kInf : -d.minLength())}));
    }
  }
  outs[0].value = std::move(v);
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
  // Never positive over a positive divisor: truncation is the negated floor of -x / y.
  if (x.maxLength() <= 0 && y.minLength() > 0) {
    auto negated = Dimension::constantValue(0) - x;
    if (!negated.ok()) return std::nullopt;
    auto q = negated->floorDiv(y);
    if (!q.ok()) return std::nullopt;
    return opt(Dimension::constantValue(0) - *q);
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

Result<Facts> inferMod(InferContext &ctx) {
  SF_ASSIGN(int64_t fmod, ctx.attrs().getInt("fmod", 0));
  if (fmod != 0 && fmod != 1) return errorf("fmod must be 0 or 1, got {}", fmod);
  SF_ASSIGN(Fact out, broadcastBinary(ctx, 0, 1));
  return factsOf(std::move(out));
}

/// Mod's values: Python's remainder (fmod = 0) or C's (fmod = 1).
void modValues(InferContext &ctx, Facts &outs) {
  static const ValueFn python = intValues(modValue), c = intValues(fmodValue);
  (ctx.attrs().getInt("fmod", 0).valueOr(0) ? c : python)(ctx, outs);
}

// ---------------------------------------------------------------- float folding
// Exporters compute sizes in floating point too (torchvision's detection transform: a scale
// factor min(800 / min(H, W), 1333 / max(H, W)), then floor(H * scale) cast back to int64). When
// every input of such an op is known (a small float constant, or integer values all static), the
// op is evaluated here, in the output's precision (each f32 result rounded to float, as the
// runtime computes it; f16/bf16 are not folded). The result is a constant tensor, and when its
// elements are integral, also a value, so that shape ops and Cast carry it on.

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
using ExprFn = std::function<Result<Expr>(const std::vector<Expr> &, FloatPrec)>;
using Doubles = const std::vector<double> &;
using Exprs = const std::vector<Expr> &;

/// A binary float op over numbers and over float expressions (dim/expr.h), applied left to right
/// over every input (Min and Max are variadic).
ExprFn exprFold(FloatOp o) {
  return [o](Exprs x, FloatPrec p) -> Result<Expr> {
    Expr acc = x[0];
    for (size_t i = 1; i < x.size(); ++i) {
      SF_ASSIGN(acc, floatOp(o, acc, x[i], p));
    }
    return acc;
  };
}

/// Floor, Ceil, Round of a float expression: an integer atom again.
ExprFn exprRound(RoundMode m) {
  return [m](Exprs x, FloatPrec) { return roundToInt(m, x[0]); };
}

/// Folds float arithmetic on known numbers; false when some input is not a known number.
bool foldNumbers(InferContext &ctx, const FloatFn &fn, Fact &out) {
  if (!out.shape.isStatic()) return false;
  auto outShape = out.shape.toShape();
  if (!outShape.ok()) return false;
  size_t n = 1;
  for (int64_t d : *outShape) n *= size_t(d);
  if (n > kValueBudget) return false;
  std::vector<std::vector<double>> in;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Fact &f = ctx.input(i);
    auto v = f.shape.isStatic() ? constFloats(f, kValueBudget) : std::nullopt;
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
    auto v = valueExprs(ctx.input(i), kValueBudget);
    if (!v || v->empty()) return;
    if (v->size() != 1) {
      if (n != 1 && v->size() != n) return;
      n = v->size();
    }
    in.push_back(std::move(*v));
  }
  if (in.empty() || n > kValueBudget) return;
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

/// Float arithmetic on known inputs folded to numbers with `fn`, or else kept as float
/// expressions with `efn` (null: numbers only).
ValueFn floatValues(FloatFn fn, ExprFn efn = nullptr) {
  return [fn, efn](InferContext &ctx, Facts &outs) {
    if (outs.size() != 1) return;
    Fact &out = outs[0];
    bool floatMath = false;
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      floatMath = floatMath || isFloat(ctx.input(i).type);
    if (!floatMath && !isFloat(out.type)) return; // integer math: values do it exactly
    if (out.type != ElementType::F32 && out.type != ElementType::F64 && !isInteger(out.type))
      return;
    if (!foldNumbers(ctx, fn, out) && efn && !out.value) foldExprs(ctx, efn, out);
  };
}

/// Both, in order.
ValueFn chain(ValueFn a, ValueFn b) {
  return [a, b](InferContext &ctx, Facts &outs) {
    a(ctx, outs);
    b(ctx, outs);
  };
}

} // namespace

void registerElementwiseOps(OpRegistry &r) {
  // Costs: one operation per output element , of the kind the op mostly does
  // (docs/COSTS.md).
  const OpTraits elementwise{.sameShape = true, .inPlace = true};
  const OpTraits binary{.inPlace = true};
  const RefineFn same = refineSameShape(), broadcast = refineBroadcast();
  const CostFn special = costPerOutput(FlopKind::Special),
               compare = costPerOutput(FlopKind::Compare), other = costPerOutput(FlopKind::Other);
  // clang-format off
  r.addAll({"Sigmoid", "Tanh", "Exp", "Log", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
            "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus", "Softsign", "Elu", "Selu",
            "Celu", "Mish", "Gelu", "Swish"},
           {.infer = inferUnary, .traits = elementwise, .refine = same, .cost = special});
  r.addAll({"Relu", "Sign", "HardSigmoid", "HardSwish", "LeakyRelu", "ThresholdedRelu", "Shrink",
            "Clip"},
           {.infer = inferUnary, .traits = elementwise, .refine = same, .cost = compare});
  // clang-format on
  for (auto [name, fn] : {std::pair{"Sigmoid", Pointwise::Sigmoid}, std::pair{"Erf", Pointwise::Erf},
                          std::pair{"Relu", Pointwise::Relu}, std::pair{"Clip", Pointwise::Clip},
                          std::pair{"HardSwish", Pointwise::HardSwish}})
    r.findMutable("", name)->traits.pointwise = fn;
  r.add({.name = "BitwiseNot", .infer = inferUnary, .traits = elementwise, .refine = same, .cost = other});
  // Float shape math on sizes (a resize factor, a rounded size) folds; see "float folding".
  auto unaryFloat = [&](const char *name, FloatFn fn, ExprFn efn, CostFn cost) {
    r.add({.name = name,
           .infer = inferUnary,
           .values = floatValues(fn, efn),
           .traits = elementwise, .refine = same,
           .cost = cost});
  };
  unaryFloat(
      "Reciprocal", [](Doubles x) { return 1.0 / x[0]; },
      [](Exprs x, FloatPrec p) { return floatOp(FloatOp::Div, constant(1), x[0], p); },
      costPerOutput(FlopKind::Div));
  unaryFloat(
      "Floor", [](Doubles x) { return std::floor(x[0]); }, exprRound(RoundMode::Floor), other);
  unaryFloat(
      "Ceil", [](Doubles x) { return std::ceil(x[0]); }, exprRound(RoundMode::Ceil), other);
  unaryFloat(
      "Round", [](Doubles x) { return std::nearbyint(x[0]); }, // half to even
      exprRound(RoundMode::HalfEven), other);
  unaryFloat(
      "Sqrt", [](Doubles x) { return std::sqrt(x[0]); }, nullptr, special);
  r.add({.name = "Neg",
         .infer = inferUnary,
         .values = chain(negValues, floatValues([](Doubles x) { return -x[0]; },
                                                [](Exprs x, FloatPrec p) {
                                                  return floatOp(FloatOp::Mul, x[0], constant(-1),
                                                                 p);
                                                })),
         .traits = elementwise, .refine = same,
         .cost = other});
  r.add({.name = "Abs",
         .infer = inferUnary,
         .values = chain(absValues, floatValues([](Doubles x) { return std::fabs(x[0]); })),
         .traits = elementwise, .refine = same,
         .cost = other});
  r.addAll({"Not", "IsNaN", "IsInf"},
           {.infer = inferUnaryBool, .traits = {.sameShape = true}, .refine = refineSameShape(false), .cost = compare});
  r.add({.name = "Identity",
         .infer = inferIdentity,
         .traits = {.sameShape = true, .view = true, .movesElements = true, .keepsElements = true,
                    .pointwise = Pointwise::Identity, .outputKind = OutputKind::AsInput},
         .refine = same,
         .cost = costNone,
         .passThrough = passInput()});

  // `neutral`: the constant that makes the op pass the other input on (x + 0, x * 1).
  auto arithmetic = [&](const char *name, ValueOp op, FloatOp f, FloatFn fn, FlopKind k, Pointwise pw,
                        double neutral, bool commutative) {
    OpTraits traits = binary;
    traits.pointwise = pw;
    r.add({.name = name,
           .infer = inferBinary(),
           .values = chain(intValues(op), floatValues(fn, exprFold(f))),
           .traits = traits, .refine = broadcast,
           .cost = costPerOutput(k),
           .passThrough = passWhenOtherIs(neutral, commutative)});
  };
  arithmetic(
      "Add", [](const Dimension &x, const Dimension &y) { return opt(x + y); }, FloatOp::Add,
      [](Doubles x) { return x[0] + x[1]; }, FlopKind::Add, Pointwise::Add, 0, true);
  arithmetic(
      "Sub", [](const Dimension &x, const Dimension &y) { return opt(x - y); }, FloatOp::Sub,
      [](Doubles x) { return x[0] - x[1]; }, FlopKind::Add, Pointwise::Sub, 0, false);
  arithmetic(
      "Mul", [](const Dimension &x, const Dimension &y) { return opt(x * y); }, FloatOp::Mul,
      [](Doubles x) { return x[0] * x[1]; }, FlopKind::Mul, Pointwise::Mul, 1, true);
  arithmetic(
      "Div", divValue, FloatOp::Div, [](Doubles x) { return x[0] / x[1]; }, FlopKind::Div, Pointwise::Div, 1, false);
  r.add({.name = "Mod",
         .infer = inferMod,
         .values = modValues,
         .traits = binary, .refine = broadcast,
         .cost = costPerOutput(FlopKind::Div)});
  // Pow's exponent and BitShift's amount may have their own element type.
  r.add({.name = "Pow", .infer = inferBinary(true), .traits = binary, .refine = refineBroadcast(0, true, true), .cost = special});
  r.add({.name = "BitShift", .infer = inferBinary(true), .traits = binary, .refine = refineBroadcast(0, true, true), .cost = other});
  r.addAll({"BitwiseAnd", "BitwiseOr", "BitwiseXor"},
           {.infer = inferBinary(), .traits = binary, .refine = broadcast, .cost = other});
  r.add({.name = "Equal", .infer = inferComparison, .values = equalValues, .refine = refineBroadcast(0, false), .cost = compare});
  r.addAll({"Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"},
           {.infer = inferComparison, .refine = refineBroadcast(0, false), .cost = compare});
  r.add({.name = "Sum",
         .infer = inferVariadic,
         .traits = binary, .refine = broadcast,
         .cost = costVariadic(FlopKind::Add),
         .passThrough = passInput(0, true)});
  r.add({.name = "Mean",
         .infer = inferVariadic,
         .traits = binary, .refine = broadcast,
         .cost = costVariadic(FlopKind::Add, 1, FlopKind::Div),
         .passThrough = passInput(0, true)});
  r.add(
      {.name = "Max",
       .infer = inferVariadic,
       .values = chain(minMaxValues(true),
                       floatValues([](Doubles x) { return *std::max_element(x.begin(), x.end()); },
                                   exprFold(FloatOp::Max))),
       .traits = binary, .refine = broadcast,
       .cost = costVariadic(FlopKind::Compare),
       .passThrough = passInput(0, true)});
  r.add(
      {.name = "Min",
       .infer = inferVariadic,
       .values = chain(minMaxValues(false),
                       floatValues([](Doubles x) { return *std::min_element(x.begin(), x.end()); },
                                   exprFold(FloatOp::Min))),
       .traits = binary, .refine = broadcast,
       .cost = costVariadic(FlopKind::Compare),
       .passThrough = passInput(0, true)});
  r.add({.name = "Where", .infer = inferWhere, .values = whereValues, .refine = refineBroadcast(1), .cost = compare});
  r.add({.name = "Cast",
         .infer = inferCast(false),
         .values = chain(castValues, floatValues([](Doubles x) { return x[0]; })),
         .traits = {.sameShape = true},
         .refine = refineSameShape(false),
         .cost = other,
         .passThrough = passWhenSameType()});
  r.add({.name = "CastLike",
         .infer = inferCast(true),
         .values = castValues,
         .traits = {.sameShape = true},
         .refine = refineSameShape(false),
         .cost = other,
         .passThrough = passWhenSameType()});
  r.add({.name = "PRelu",
         .infer = inferPRelu,
         .traits = elementwise, .refine = same,
         .cost = costPerOutput(FlopKind::Mul)});
  // Inference mode: the input passes through (training_mode, opset 12's input 2, absent or false).
  r.add({.name = "Dropout",
         .infer = inferDropout,
         .traits = {.sameShape = true},
         .refine = same,
         .cost = costNone,
         .passThrough = [](const PassThroughArgs &a) -> std::optional<size_t> {
           if (a.inputs.size() > 2 && a.inputs[2]) {
             auto training = constInts(*a.inputs[2]);
             if (!training || training->size() != 1 || (*training)[0] != 0) return std::nullopt;
           }
           return size_t(0);
         }});
}

} // namespace sf
