// Float shape math (expr.h): bounds of every node (float nodes' real ranges, integer nodes'
// intervals), and the float operations and roundings.
#include "expr_internal.h"
#include "shapeflow/dim/expr.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "shapeflow/support/small_vec.h"

namespace sf {
using namespace expr_detail;

namespace expr_detail {

// ---------------------------------------------------------------- float bounds
constexpr double kDInf = std::numeric_limits<double>::infinity();

/// Lower and upper real bounds of any node (an integer node's interval, a float node's range).
double realLo(Expr e) {
  if (e->isFloat) return e->flo;
  return e->bounds.lo == -kInf ? -kDInf : double(e->bounds.lo);
}
double realHi(Expr e) {
  if (e->isFloat) return e->fhi;
  return e->bounds.hi == kInf ? kDInf : double(e->bounds.hi);
}

/// Rounded outward by more than the rounding of one operation in `p` (including the conversion
/// of its operands), so that the bounds hold for the value the runtime computes.
void widen(double &lo, double &hi, FloatPrec p) {
  double eps = p == FloatPrec::F32 ? 0x1p-21 : 0x1p-50;
  double tiny = p == FloatPrec::F32 ? 1e-37 : 1e-300;
  if (std::isnan(lo) || std::isnan(hi)) {
    lo = -kDInf, hi = kDInf;
    return;
  }
  // Rounding never changes a sign, so a non-negative range stays non-negative.
  bool nonNegative = lo >= 0, nonPositive = hi <= 0;
  lo = lo - std::fabs(lo) * eps - tiny;
  hi = hi + std::fabs(hi) * eps + tiny;
  if (nonNegative) lo = std::max(lo, 0.0);
  if (nonPositive) hi = std::min(hi, 0.0);
}

double bitsToDouble(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
int64_t doubleToBits(double d) {
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

void computeFloatBounds(ExprNode &n) {
  if (n.kind == ExprKind::FConst) {
    n.flo = n.fhi = bitsToDouble(n.value);
    return;
  }
  double alo = realLo(n.ops[0]), ahi = realHi(n.ops[0]);
  double blo = realLo(n.ops[1]), bhi = realHi(n.ops[1]);
  double lo = -kDInf, hi = kDInf;
  auto hullOf = [&](std::initializer_list<double> xs) {
    lo = kDInf, hi = -kDInf;
    for (double x : xs) {
      if (std::isnan(x)) { // 0 * inf: unbounded
        lo = -kDInf, hi = kDInf;
        return;
      }
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
  };
  switch (n.kind) {
  case ExprKind::FAdd:
    lo = alo + blo, hi = ahi + bhi;
    break;
  case ExprKind::FSub:
    lo = alo - bhi, hi = ahi - blo;
    break;
  case ExprKind::FMul: {
    // An infinite end stands for "unbounded" over finite values: 0 times it is 0, not NaN.
    auto m = [](double x, double y) { return x == 0 || y == 0 ? 0.0 : x * y; };
    hullOf({m(alo, blo), m(alo, bhi), m(ahi, blo), m(ahi, bhi)});
    break;
  }
  case ExprKind::FDiv:
    if (blo > 0 || bhi < 0) hullOf({alo / blo, alo / bhi, ahi / blo, ahi / bhi});
    break;
  case ExprKind::FMin:
    lo = std::min(alo, blo), hi = std::min(ahi, bhi);
    break;
  case ExprKind::FMax:
    lo = std::max(alo, blo), hi = std::max(ahi, bhi);
    break;
  default:
    break;
  }
  widen(lo, hi, n.prec);
  n.flo = lo, n.fhi = hi;
}

/// The integer hull of a real range, saturated to [-kInf, kInf].
int64_t toIntBound(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return kInf;
  if (v <= -9.2e18) return -kInf;
  return int64_t(v);
}

double applyRound(RoundMode m, double v) {
  switch (m) {
  case RoundMode::Floor:
    return std::floor(v);
  case RoundMode::Ceil:
    return std::ceil(v);
  case RoundMode::Trunc:
    return std::trunc(v);
  case RoundMode::HalfEven:
    return std::nearbyint(v); // default rounding mode: half to even
  }
  return v;
}

/// Bounds of a sum of monomials after writing each atom x as x' + lo(x) with x' >= 0 and
/// expanding: 16*a*b + 16*a + 16*b + 16 with a, b >= -1 (ceil-like atoms (F - 1)//32 of sizes
/// that may be 0) is 16*a'*b' >= 0, which interval arithmetic on the terms cannot see. Returns
/// the unbounded interval when it does not apply (an atom unbounded below, a high degree, an
/// overflow).
Interval shiftedSumBounds(const ExprNode &n) {
  const Interval all{-kInf, kInf};
  constexpr size_t kMaxDegree = 6;
  std::map<std::vector<Expr>, int64_t> terms; // shifted monomial (sorted atoms) -> coefficient
  int64_t c0 = n.value;
  for (size_t i = 0; i < n.ops.size(); ++i) {
    Expr m = n.ops[i];
    std::vector<Expr> f = m->kind == ExprKind::Mul ? m->ops : std::vector<Expr>{m};
    if (f.size() > kMaxDegree) return all;
    for (Expr x : f)
      if (x->bounds.lo == -kInf) return all;
    // prod (x'_j + lo_j) = sum over subsets of the x' taken, times the lo's not taken.
    for (uint32_t mask = 0; mask < (1u << f.size()); ++mask) {
      std::optional<int64_t> coef = n.coefs[i];
      std::vector<Expr> taken;
      for (size_t j = 0; j < f.size() && coef; ++j) {
        if (mask & (1u << j))
          taken.push_back(f[j]);
        else
          coef = checkedMul(*coef, f[j]->bounds.lo);
      }
      if (!coef) return all;
      if (*coef == 0) continue;
      if (taken.empty()) {
        auto s = checkedAdd(c0, *coef);
        if (!s) return all;
        c0 = *s;
        continue;
      }
      int64_t &slot = terms[taken];
      auto s = checkedAdd(slot, *coef);
      if (!s) return all;
      slot = *s;
    }
  }
  Interval b = Interval::point(c0);
  for (const auto &[atoms, coef] : terms) {
    Interval t = Interval::point(1);
    for (Expr x : atoms) {
      int64_t w = x->bounds.hi == kInf ? kInf : satAdd(x->bounds.hi, -x->bounds.lo);
      t = mul(t, Interval{0, w});
    }
    b = add(b, scale(t, coef));
  }
  return b;
}

Interval computeBounds(const ExprNode &n) {
  if (n.isFloat) return {toIntBound(std::floor(n.flo)), toIntBound(std::ceil(n.fhi))};
  switch (n.kind) {
  case ExprKind::Round: {
    auto m = RoundMode(n.value);
    return {toIntBound(applyRound(m, n.ops[0]->flo)), toIntBound(applyRound(m, n.ops[0]->fhi))};
  }
  case ExprKind::Const:
    return Interval::point(n.value);
  case ExprKind::Sym:
    return n.symInfo->range;
  case ExprKind::Add: {
    Interval b = Interval::point(n.value);
    for (size_t i = 0; i < n.ops.size(); ++i)
      b = add(b, scale(n.ops[i]->bounds, n.coefs[i]));
    if (b.lo < 0) b = b.intersect(shiftedSumBounds(n)); // both are sound: keep the tighter
    return b;
  }
  case ExprKind::Mul: {
    Interval b = Interval::point(1);
    for (Expr o : n.ops)
      b = mul(b, o->bounds);
    return b;
  }
  case ExprKind::FloorDiv:
    return floorDiv(n.ops[0]->bounds, n.value);
  case ExprKind::Mod:
    return mod(n.ops[0]->bounds, n.value);
  case ExprKind::Min: {
    Interval b = n.ops[0]->bounds;
    for (Expr o : n.ops)
      b = min(b, o->bounds);
    return b;
  }
  case ExprKind::Max: {
    Interval b = n.ops[0]->bounds;
    for (Expr o : n.ops)
      b = max(b, o->bounds);
    return b;
  }
  default:
    break;
  }
  return {-kInf, kInf};
}

} // namespace expr_detail

// ---------------------------------------------------------------- float shape math
namespace expr_detail {
double toPrec(double v, FloatPrec p) { return p == FloatPrec::F32 ? double(float(v)) : v; }

std::optional<double> knownNumber(Expr e) {
  if (e->kind == ExprKind::Const) return double(e->value);
  if (e->kind == ExprKind::FConst) return bitsToDouble(e->value);
  return std::nullopt;
}

double applyFloatOp(FloatOp op, double a, double b) {
  switch (op) {
  case FloatOp::Add:
    return a + b;
  case FloatOp::Sub:
    return a - b;
  case FloatOp::Mul:
    return a * b;
  case FloatOp::Div:
    return a / b;
  case FloatOp::Min:
    return std::min(a, b);
  case FloatOp::Max:
    return std::max(a, b);
  }
  return a;
}

ExprKind kindOf(FloatOp op) {
  switch (op) {
  case FloatOp::Add:
    return ExprKind::FAdd;
  case FloatOp::Sub:
    return ExprKind::FSub;
  case FloatOp::Mul:
    return ExprKind::FMul;
  case FloatOp::Div:
    return ExprKind::FDiv;
  case FloatOp::Min:
    return ExprKind::FMin;
  case FloatOp::Max:
    return ExprKind::FMax;
  }
  return ExprKind::FAdd;
}

FloatOp opOf(ExprKind k) {
  switch (k) {
  case ExprKind::FSub:
    return FloatOp::Sub;
  case ExprKind::FMul:
    return FloatOp::Mul;
  case ExprKind::FDiv:
    return FloatOp::Div;
  case ExprKind::FMin:
    return FloatOp::Min;
  case ExprKind::FMax:
    return FloatOp::Max;
  default:
    return FloatOp::Add;
  }
}

/// `e` used as an operand in precision `p` keeps its value: an integer, or a float of `p`.
bool sameValueIn(Expr e, FloatPrec p) { return !e->isFloat || e->prec == p; }

Error notFinite() { return makeError("float shape math gives a value that is not finite"); }
} // namespace expr_detail

Result<Expr> floatConstant(double v, FloatPrec p) {
  if (p == FloatPrec::None) return makeError("a float constant needs a precision");
  v = toPrec(v, p);
  if (!std::isfinite(v)) return notFinite();
  if (std::trunc(v) == v && std::fabs(v) < 0x1p62) return constant(int64_t(v));
  ExprNode n{};
  n.kind = ExprKind::FConst;
  n.value = doubleToBits(v);
  n.prec = p;
  return intern(std::move(n));
}

Result<Expr> integerArith(FloatOp op, Expr a, Expr b) {
  switch (op) {
  case FloatOp::Add:
    return add(a, b);
  case FloatOp::Sub:
    return sub(a, b);
  case FloatOp::Mul:
    return mul(a, b);
  case FloatOp::Min:
    return min(a, b);
  case FloatOp::Max:
    return max(a, b);
  case FloatOp::Div:
    return divExact(a, b);
  }
  return makeError("unknown integer operation");
}

Result<Expr> floatOp(FloatOp op, Expr a, Expr b, FloatPrec p) {
  if (p == FloatPrec::None) return makeError("float arithmetic needs a precision");
  auto ka = knownNumber(a), kb = knownNumber(b);
  if (ka && kb) {
    double x = toPrec(*ka, p), y = toPrec(*kb, p);
    if (op == FloatOp::Div && y == 0) return makeError("division by zero in float shape math");
    return floatConstant(applyFloatOp(op, x, y), p);
  }
  if (!a->isFloat && !b->isFloat) {
    // Integers stand for themselves in float math (exact below 2^24 in f32).
    auto r = integerArith(op, a, b);
    if (op != FloatOp::Div || r.ok()) return r;
  }
  if (kb && *kb == 0 && op == FloatOp::Div)
    return makeError("division by zero in float shape math");
  // Identities that hold for every float (the value of x * 1.0 is x), when the other operand
  // keeps its value in this precision.
  auto is = [](const std::optional<double> &k, double v) { return k && *k == v; };
  if (op == FloatOp::Mul && is(ka, 1) && sameValueIn(b, p)) return b;
  if ((op == FloatOp::Mul || op == FloatOp::Div) && is(kb, 1) && sameValueIn(a, p)) return a;
  if (op == FloatOp::Add && is(ka, 0) && sameValueIn(b, p)) return b;
  if ((op == FloatOp::Add || op == FloatOp::Sub) && is(kb, 0) && sameValueIn(a, p)) return a;
  if ((op == FloatOp::Min || op == FloatOp::Max) && sameValueIn(a, p) && sameValueIn(b, p)) {
    if (a == b) return a;
    bool aBelow = realHi(a) <= realLo(b), bBelow = realHi(b) <= realLo(a);
    if (aBelow) return op == FloatOp::Min ? a : b;
    if (bBelow) return op == FloatOp::Min ? b : a;
  }
  bool commutative =
      op == FloatOp::Add || op == FloatOp::Mul || op == FloatOp::Min || op == FloatOp::Max;
  if (commutative && compareExpr(a, b) > 0) std::swap(a, b);
  ExprNode n{};
  n.kind = kindOf(op);
  n.prec = p;
  n.ops = {a, b};
  Expr e = intern(std::move(n));
  // A float value cannot become a bounded integer symbol: past the cap it is not expressed.
  if (e->size > kMaxExprSize) return makeError("float expression too large");
  return e;
}

Result<Expr> roundToInt(RoundMode m, Expr a) {
  if (!a->isFloat) return a;
  if (a->kind == ExprKind::FConst) {
    double r = applyRound(m, bitsToDouble(a->value));
    if (!(std::fabs(r) < 0x1p62)) return notFinite();
    return constant(int64_t(r));
  }
  if (m == RoundMode::Trunc && a->flo >= 0)
    m = RoundMode::Floor;
  else if (m == RoundMode::Trunc && a->fhi <= 0)
    m = RoundMode::Ceil;
  // floor / ceil of an integer over a positive integer: the float quotient never rounds across
  // an integer while both are exact in the precision (below 2^24 in f32), so it is a // c.
  if ((m == RoundMode::Floor || m == RoundMode::Ceil) && a->kind == ExprKind::FDiv &&
      !a->ops[0]->isFloat && isConst(a->ops[1]) && a->ops[1]->value > 0) {
    return m == RoundMode::Floor ? floorDiv(a->ops[0], a->ops[1]->value)
                                 : ceilDiv(a->ops[0], a->ops[1]->value);
  }
  ExprNode n{};
  n.kind = ExprKind::Round;
  n.value = int64_t(m);
  n.ops = {a};
  Expr e = intern(std::move(n));
  if (e->bounds.isPoint() && e->bounds.lo != kInf && e->bounds.lo != -kInf)
    return constant(e->bounds.lo);
  return capExpr(e);
}

namespace {
Result<double> evalFloatIn(Expr e, FloatPrec p,
                           const std::function<std::optional<int64_t>(SymbolId)> &value) {
  if (!e->isFloat) {
    SF_ASSIGN(int64_t v, evaluate(e, value));
    return toPrec(double(v), p);
  }
  if (e->kind == ExprKind::FConst) return toPrec(bitsToDouble(e->value), p);
  SF_ASSIGN(double a, evalFloatIn(e->ops[0], e->prec, value));
  SF_ASSIGN(double b, evalFloatIn(e->ops[1], e->prec, value));
  return toPrec(toPrec(applyFloatOp(opOf(e->kind), a, b), e->prec), p);
}
} // namespace

Result<double> evaluateFloat(Expr e, const std::function<std::optional<int64_t>(SymbolId)> &value) {
  // An integer read in f64 is itself (toPrec leaves doubles alone).
  return evalFloatIn(e, e->isFloat ? e->prec : FloatPrec::F64, value);
}

} // namespace sf
