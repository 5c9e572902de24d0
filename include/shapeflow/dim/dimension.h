// Dimension: one axis of a tensor shape. It is at once an interval (OpenVINO's semantics: static,
// {min, max}, dynamic) and, where known, a symbolic expression of named input dims (tract's // TDim). `expr` is null for an anonymous interval without identity; otherwise the interval is
// always within the expression's bounds. The value API is pure; recording that two symbols are
// equal is SymbolTable's job.
#pragma once

#include "shapeflow/dim/expr.h"
#include "shapeflow/dim/interval.h"
#include "shapeflow/support/format.h"
#include "shapeflow/support/result.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sf {

class Dimension {
public:
  /// Fully dynamic: [0, inf).
  Dimension() = default;
  /// Static dim; -1 (and any negative) means dynamic, as in OpenVINO: there is no static -1.
  Dimension(int64_t v);
  Dimension(int v) : Dimension(int64_t(v)) {}
  /// Interval {lo, hi}; a flipped range is normalised; -1 at either end means open
  /// (lo -> 0, hi -> inf).
  Dimension(int64_t lo, int64_t hi);
  /// A symbolic dimension (bounds from the expression).
  explicit Dimension(Expr e);
  /// A symbolic dimension known to lie within `within` as well.
  Dimension(Expr e, Interval within);

  static Dimension dynamic() { return Dimension(); }
  /// An interval as is (flipped ends swapped). Unlike the seed's {lo, hi} constructor, negative
  /// ends are kept: the elements of shape tensors (`-1` in a Reshape target) use this.
  static Dimension fromInterval(Interval i);
  /// An exact integer, negative values included (for shape-tensor elements; a dim of a tensor
  /// shape uses Dimension(v), where -1 means dynamic).
  static Dimension constantValue(int64_t v) { return fromInterval(Interval::point(v)); }
  /// Intersected with [0, inf): what a tensor dimension can be.
  Dimension nonNegative() const;
  static Dimension symbol(SymbolId s) { return Dimension(sf::symbol(s)); }

  bool isStatic() const { return range_.isPoint(); }
  bool isDynamic() const { return !isStatic(); }
  /// The static length; only meaningful when isStatic().
  int64_t length() const { return range_.lo; }
  Result<int64_t> getLength() const;
  int64_t minLength() const { return range_.lo; }
  /// kInf when the upper end is open.
  int64_t maxLength() const { return range_.hi; }
  Interval interval() const { return range_; }
  bool hasUpperBound() const { return range_.hi != kInf; }
  /// The expression, or null for an anonymous interval.
  Expr expr() const { return expr_; }
  bool isSymbolic() const { return expr_ && !isConst(expr_); }
  /// An expression of named symbols only (no anonymous part).
  bool isNamedExpr() const { return expr_ && !expr_->hasAnonymous; }

  /// Same expression (or both anonymous) and same interval.
  bool operator==(const Dimension &o) const { return expr_ == o.expr_ && range_ == o.range_; }
  bool operator!=(const Dimension &o) const { return !(*this == o); }

  // ---- relations (OpenVINO's) ----
  /// Intersection; nullopt when empty. Symbolic: keeps the more informative expression
  /// (constant > named > anonymous); equal-but-different expressions are for the caller to record.
  static std::optional<Dimension> merge(const Dimension &a, const Dimension &b);
  /// Some value fits both.
  bool compatible(const Dimension &o) const;
  /// Both static, or both dynamic.
  bool sameScheme(const Dimension &o) const;
  /// Every value of `o` is a value of this (this is looser or equal).
  bool relaxes(const Dimension &o) const;
  /// Every value of this is a value of `o` (this is tighter or equal).
  bool refines(const Dimension &o) const { return o.relaxes(*this); }
  /// The smallest dimension containing both (the join of two facts of one value, e.g. an If's
  /// branches): equal dims are kept, an expression both share keeps its identity, anything
  /// else becomes the interval hull (never an intersection). Negative ends are kept, so it
  /// works on value elements too.
  static Dimension hull(const Dimension &a, const Dimension &b);
  /// Numpy broadcast of two dims; nullopt when they cannot broadcast.
  static std::optional<Dimension> broadcastMerge(const Dimension &a, const Dimension &b);

  // ---- arithmetic (checked: a constant overflow is an error) ----
  friend Result<Dimension> operator+(const Dimension &a, const Dimension &b);
  friend Result<Dimension> operator-(const Dimension &a, const Dimension &b);
  friend Result<Dimension> operator*(const Dimension &a, const Dimension &b);
  /// floor(a / c), c > 0.
  Result<Dimension> floorDiv(int64_t c) const;
  Result<Dimension> ceilDiv(int64_t c) const;
  /// floor(a / b) for a dimension b (exact symbolic division where possible, else bounds only).
  Result<Dimension> floorDiv(const Dimension &b) const;
  static Result<Dimension> min(const Dimension &a, const Dimension &b);
  static Result<Dimension> max(const Dimension &a, const Dimension &b);

  /// Printed form: `3`, `N`, `(H - 1)//2 + 1`, `?`, `?{1..8}`, `?{2..}`.
  /// `3`, `N`, `(H - 1)//2 + 1`, `?{1..8}`, `?`; with `names`, derived sizes and anonymous
  /// symbols print by their names.
  std::string toString(const PrintNames *names = nullptr) const;

private:
  Expr expr_ = nullptr;
  Interval range_{0, kInf};
};

std::string toString(const Dimension &d);

/// Adds many dimensions, each times a constant, making the expression once (ExprSum): what a
/// running `total = total + d` gives, at a cost linear in the terms. Checked.
class DimensionSum {
public:
  Result<void> add(const Dimension &d, int64_t k = 1);
  /// The sum; its expression within the limits (ExprSum::result).
  Result<Dimension> value(uint32_t maxSize = 0, uint32_t maxTerms = 0) const;

private:
  int64_t static_ = 0;     // the static dims' sum
  Interval range_{0, 0};   // the symbolic dims' ranges, summed
  bool symbolic_ = false;  // a dim that is not static was added
  bool exprKnown_ = true;  // every such dim had an expression
  ExprSum expr_;
};

/// Numbers as dimensions, each a constant (negatives kept, as values: constantValue).
std::vector<Dimension> constantDims(std::span<const int64_t> v);

/// Rank: static or dynamic.
class Rank {
public:
  Rank() = default;
  Rank(int64_t r) : r_(r) {}
  static Rank dynamic() { return Rank(); }
  bool isStatic() const { return r_.has_value(); }
  bool isDynamic() const { return !r_; }
  int64_t length() const { return *r_; }
  bool operator==(const Rank &o) const = default;
  bool compatible(const Rank &o) const { return !r_ || !o.r_ || *r_ == *o.r_; }
  std::string toString() const { return r_ ? std::to_string(*r_) : "?"; }

private:
  std::optional<int64_t> r_;
};

} // namespace sf

SF_FORMAT_AS_STRING(sf::Dimension, v.toString());
SF_FORMAT_AS_STRING(sf::Rank, v.toString());
