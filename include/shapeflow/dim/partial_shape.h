// PartialShape (rank possibly unknown, each dim a Dimension) and Shape (fully static).
#pragma once

#include "shapeflow/dim/dimension.h"
#include "shapeflow/support/format.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace sf {

/// A fully static shape.
using Shape = std::vector<int64_t>;
/// `[1,3,224,224]`.
std::string toString(const Shape &s);
/// Element strides of a row-major tensor of shape `s`.
std::vector<int64_t> stridesOf(const Shape &s);
/// Product of the dims, checked.
Result<int64_t> elementCount(const Shape &s);

class PartialShape {
public:
  /// Rank 0 (a scalar).
  PartialShape() : dims_(std::vector<Dimension>{}) {}
  PartialShape(std::initializer_list<Dimension> dims) : dims_(std::vector<Dimension>(dims)) {}
  PartialShape(std::vector<Dimension> dims) : dims_(std::move(dims)) {}
  PartialShape(const Shape &s);
  /// Unknown rank.
  static PartialShape dynamic() { PartialShape p; p.dims_.reset(); return p; }
  /// Known rank, every dim dynamic.
  static PartialShape dynamic(int64_t rank) { return PartialShape(std::vector<Dimension>(rank)); }

  Rank rank() const { return dims_ ? Rank(int64_t(dims_->size())) : Rank::dynamic(); }
  bool rankIsStatic() const { return dims_.has_value(); }
  size_t size() const { return dims_ ? dims_->size() : 0; }
  bool isStatic() const;
  bool isDynamic() const { return !isStatic(); }
  const Dimension &operator[](size_t i) const { return (*dims_)[i]; }
  Dimension &operator[](size_t i) { return (*dims_)[i]; }
  const std::vector<Dimension> &dims() const { return *dims_; }
  std::vector<Dimension> &dims() { return *dims_; }
  bool operator==(const PartialShape &o) const { return dims_ == o.dims_; }
  bool operator!=(const PartialShape &o) const { return !(*this == o); }

  /// To a static Shape; an error naming the shape when it is not static.
  Result<Shape> toShape() const;
  /// Lower / upper bounds per dim (upper kInf where open); require a static rank.
  Shape minShape() const;
  Shape maxShape() const;
  /// Element count as a dimension (symbolic product where possible).
  Result<Dimension> elementCount() const;

  // ---- relations (OpenVINO's) ----
  bool compatible(const PartialShape &o) const;
  bool sameScheme(const PartialShape &o) const;
  bool relaxes(const PartialShape &o) const;
  bool refines(const PartialShape &o) const { return o.relaxes(*this); }
  /// Intersection; nullopt on rank mismatch or an empty dim.
  static std::optional<PartialShape> merge(const PartialShape &a, const PartialShape &b);
  /// Per-dim Dimension::hull for equal ranks; a different or unknown rank gives an unknown rank.
  static PartialShape hull(const PartialShape &a, const PartialShape &b);
  /// merge into `dst` (OpenVINO's merge_into): false when incompatible, `dst` then unspecified.
  static bool mergeInto(PartialShape &dst, const PartialShape &src);
  /// The two are the same shape at every binding of their symbols: the same rank, and per dim
  /// the same number or the same expression (an interval without an expression says nothing of
  /// another one).
  bool equalEverywhere(const PartialShape &o) const;

  /// `[N,3,(H - 1)//2 + 1,?,?{1..8}]`, `[]` for a scalar, `[...]` for unknown rank.
  std::string toString(const PrintNames *names = nullptr) const;

private:
  std::optional<std::vector<Dimension>> dims_;
};

std::string toString(const PartialShape &s);

} // namespace sf

SF_FORMAT_AS_STRING(sf::PartialShape, v.toString());
