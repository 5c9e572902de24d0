// Dimension: interval semantics plus symbolic expressions.
#include "shapeflow/dim/dimension.h"

#include "shapeflow/dim/broadcast.h"

#include <algorithm>

namespace sf {
namespace {
Interval clampDim(Interval i) {
  if (i.lo < 0) i.lo = 0;
  if (i.hi < 0) i.hi = 0;
  return i;
}
/// How much a dimension's expression tells: a constant beats a named expression, which beats
/// an expression with anonymous parts, which beats none.
int informativeness(Expr e) {
  if (!e) return 0;
  if (isConst(e)) return 3;
  return e->hasAnonymous ? 1 : 2;
}
} // namespace

Dimension::Dimension(int64_t v) {
  if (v < 0) return;
  expr_ = constant(v);
  range_ = Interval::point(v);
}

Dimension::Dimension(int64_t lo, int64_t hi) {
  if (lo < 0) lo = 0;
  if (hi < 0) hi = kInf;
  if (lo > hi) std::swap(lo, hi);
  range_ = {lo, hi};
  if (lo == hi) expr_ = constant(lo);
}

Dimension::Dimension(Expr e) : Dimension(e, Interval{0, kInf}) {}

Dimension::Dimension(Expr e, Interval within) {
  e = simplifyClamps(e);
  Interval r = e->bounds.intersect(within);
  if (r.empty()) r = within; // callers check emptiness; never produce an empty dim
  range_ = r;
  expr_ = r.isPoint() ? constant(r.lo) : e;
}

Dimension Dimension::nonNegative() const {
  if (range_.lo >= 0) return *this;
  Interval r = clampDim(range_);
  if (!expr_) return fromInterval(r);
  return Dimension(expr_, r);
}

Dimension Dimension::fromInterval(Interval i) {
  if (i.lo > i.hi) std::swap(i.lo, i.hi);
  Dimension d;
  d.range_ = i;
  if (i.isPoint()) d.expr_ = constant(i.lo);
  return d;
}

Result<int64_t> Dimension::getLength() const {
  if (!isStatic()) return makeError("dimension " + toString() + " is not static");
  return range_.lo;
}

Dimension Dimension::hull(const Dimension &a, const Dimension &b) {
  if (a == b) return a;
  Interval r = a.interval().hull(b.interval());
  if (a.expr() && a.expr() == b.expr() && !isConst(a.expr())) return Dimension(a.expr(), r);
  return Dimension::fromInterval(r);
}

std::vector<Dimension> constantDims(std::span<const int64_t> v) {
  std::vector<Dimension> out;
  out.reserve(v.size());
  for (int64_t x : v)
    out.push_back(Dimension::constantValue(x));
  return out;
}

std::optional<Dimension> Dimension::merge(const Dimension &a, const Dimension &b) {
  Interval r = a.range_.intersect(b.range_);
  if (r.empty()) return std::nullopt;
  if (r.isPoint()) return constantValue(r.lo);
  Expr e = a.expr_;
  if (a.expr_ != b.expr_) {
    int ia = informativeness(a.expr_), ib = informativeness(b.expr_);
    // Ties are broken by the canonical order, so that merge is commutative.
    if (ib > ia ||
        (ib == ia && b.expr_ && a.expr_ &&
         (b.expr_->size < a.expr_->size ||
          (b.expr_->size == a.expr_->size && compareExpr(b.expr_, a.expr_) < 0))))
      e = b.expr_;
  }
  if (!e) return fromInterval(r);
  return Dimension(e, r);
}

bool Dimension::compatible(const Dimension &o) const { return !range_.intersect(o.range_).empty(); }

bool Dimension::sameScheme(const Dimension &o) const {
  return (isStatic() && o.isStatic() && length() == o.length()) || (isDynamic() && o.isDynamic());
}

bool Dimension::relaxes(const Dimension &o) const { return range_.contains(o.range_); }

std::optional<Dimension> Dimension::broadcastMerge(const Dimension &a, const Dimension &b) {
  auto r = broadcastDim(a, b);
  if (!r.ok()) return std::nullopt;
  return *r;
}

namespace {
template <class ExprOp>
Result<Dimension> combine(const Dimension &a, const Dimension &b, Interval range, ExprOp op) {
  if (a.expr() && b.expr()) {
    SF_ASSIGN(Expr e, op(a.expr(), b.expr()));
    return Dimension(e, range);
  }
  return Dimension::fromInterval(range);
}
} // namespace

Result<Dimension> operator+(const Dimension &a, const Dimension &b) {
  if (a.isStatic() && b.isStatic()) {
    auto s = checkedAdd(a.length(), b.length());
    if (!s) return makeError("dimension overflow: " + a.toString() + " + " + b.toString());
    return Dimension::constantValue(*s);
  }
  return combine(a, b, add(a.interval(), b.interval()),
                 [](Expr x, Expr y) { return add(x, y); });
}

Result<void> DimensionSum::add(const Dimension &d, int64_t k) {
  if (k == 0) return success();
  if (d.isStatic()) {
    auto scaled = checkedMul(d.length(), k);
    auto s = scaled ? checkedAdd(static_, *scaled) : std::nullopt;
    if (!s) return makeError("dimension overflow in a sum");
    static_ = *s;
    return expr_.add(constant(d.length()), k);
  }
  symbolic_ = true;
  Interval r = d.interval();
  range_ = sf::add(range_, mul(r, Interval::point(k)));
  if (!d.expr()) {
    exprKnown_ = false;
    return success();
  }
  if (exprKnown_) SF_TRY(expr_.add(d.expr(), k));
  return success();
}

Result<Dimension> DimensionSum::value(uint32_t maxSize, uint32_t maxTerms) const {
  if (!symbolic_) return Dimension::constantValue(static_);
  Interval range = sf::add(range_, Interval::point(static_));
  if (!exprKnown_) return Dimension::fromInterval(range);
  SF_ASSIGN(Expr total, expr_.result(maxSize, maxTerms)); // the static part included
  return Dimension(total, range);
}

Result<Dimension> operator-(const Dimension &a, const Dimension &b) {
  if (a.isStatic() && b.isStatic()) {
    auto s = checkedSub(a.length(), b.length());
    if (!s) return makeError("dimension overflow: " + a.toString() + " - " + b.toString());
    return Dimension::fromInterval(Interval::point(*s));
  }
  return combine(a, b, add(a.interval(), neg(b.interval())),
                 [](Expr x, Expr y) { return sub(x, y); });
}

Result<Dimension> operator*(const Dimension &a, const Dimension &b) {
  if (a.isStatic() && b.isStatic()) {
    auto s = checkedMul(a.length(), b.length());
    if (!s) return makeError("dimension overflow: " + a.toString() + " * " + b.toString());
    return Dimension::constantValue(*s);
  }
  return combine(a, b, mul(a.interval(), b.interval()),
                 [](Expr x, Expr y) { return mul(x, y); });
}

Result<Dimension> Dimension::floorDiv(int64_t c) const {
  if (c <= 0) return makeError("division of dimension " + toString() + " by " + std::to_string(c));
  Interval r = sf::floorDiv(range_, c);
  if (!expr_) return fromInterval(r);
  SF_ASSIGN(Expr e, sf::floorDiv(expr_, c));
  return Dimension(e, r);
}

Result<Dimension> Dimension::ceilDiv(int64_t c) const {
  if (c <= 0) return makeError("division of dimension " + toString() + " by " + std::to_string(c));
  Interval r = sf::floorDiv(add(range_, Interval::point(c - 1)), c);
  if (!expr_) return fromInterval(r);
  SF_ASSIGN(Expr e, sf::ceilDiv(expr_, c));
  return Dimension(e, r);
}

Result<Dimension> Dimension::floorDiv(const Dimension &b) const {
  if (b.isStatic()) {
    if (b.length() == 0) return makeError("division of dimension " + toString() + " by 0");
    return floorDiv(b.length());
  }
  Interval r{-kInf, kInf};
  if (b.range_.lo > 0) {
    // floor(x / y) is monotone in x, and in y for a fixed sign of x: the extremes are at corners.
    auto fd = [](int64_t x, int64_t y) -> int64_t {
      if (x == kInf || x == -kInf) return x;
      if (y == kInf) return x >= 0 ? 0 : -1;
      return floorDivUnchecked(x, y);
    };
    int64_t c[4] = {fd(range_.lo, b.range_.lo), fd(range_.lo, b.range_.hi),
                    fd(range_.hi, b.range_.lo), fd(range_.hi, b.range_.hi)};
    r = {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  } else if (range_.lo >= 0) {
    r = {0, kInf};
  }
  if (expr_ && b.expr_) {
    auto e = floorDivExpr(expr_, b.expr_);
    if (e.ok()) return Dimension(*e, r);
  }
  return fromInterval(r);
}

Result<Dimension> Dimension::min(const Dimension &a, const Dimension &b) {
  return combine(a, b, sf::min(a.interval(), b.interval()),
                 [](Expr x, Expr y) { return sf::min(x, y); });
}

Result<Dimension> Dimension::max(const Dimension &a, const Dimension &b) {
  return combine(a, b, sf::max(a.interval(), b.interval()),
                 [](Expr x, Expr y) { return sf::max(x, y); });
}

std::string Dimension::toString(const PrintNames *names) const {
  if (isStatic()) return std::to_string(range_.lo);
  if (expr_ && names && names->namesAnonymousOf(expr_)) return sf::toString(expr_, *names);
  if (expr_ && !expr_->hasAnonymous) return sf::toString(expr_);
  if (range_.lo == 0 && range_.hi == kInf) return "?";
  std::string lo = range_.lo == -kInf ? std::string() : std::to_string(range_.lo);
  return "?{" + lo + ".." +
         (range_.hi == kInf ? std::string() : std::to_string(range_.hi)) + "}";
}

std::string toString(const Dimension &d) { return d.toString(); }

} // namespace sf
