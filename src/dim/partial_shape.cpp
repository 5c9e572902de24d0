// PartialShape and Shape: relations lifted from dims to shapes, and printing.
#include "shapeflow/dim/partial_shape.h"

namespace sf {

std::string toString(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

std::vector<int64_t> stridesOf(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

Result<int64_t> elementCount(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) return makeError("negative dimension in shape " + toString(s));
    auto p = checkedMul(n, d);
    if (!p) return makeError("element count of shape " + toString(s) + " overflows int64");
    n = *p;
  }
  return n;
}

PartialShape::PartialShape(const Shape &s) : dims_(std::vector<Dimension>()) {
  for (int64_t d : s) dims_->push_back(Dimension(d));
}

bool PartialShape::isStatic() const {
  if (!dims_) return false;
  for (const auto &d : *dims_)
    if (!d.isStatic()) return false;
  return true;
}

Result<Shape> PartialShape::toShape() const {
  if (!isStatic()) return makeError("shape " + toString() + " is not static");
  Shape s;
  for (const auto &d : *dims_) s.push_back(d.length());
  return s;
}

Shape PartialShape::minShape() const {
  Shape s;
  if (dims_)
    for (const auto &d : *dims_) s.push_back(d.minLength());
  return s;
}

Shape PartialShape::maxShape() const {
  Shape s;
  if (dims_)
    for (const auto &d : *dims_) s.push_back(d.maxLength());
  return s;
}

Result<Dimension> PartialShape::elementCount() const {
  if (!dims_) return Dimension::dynamic();
  Dimension n(1);
  for (const auto &d : *dims_) {
    auto p = n * d;
    if (!p.ok()) return makeError("element count of shape " + toString() + " overflows int64");
    n = *p;
  }
  return n;
}

bool PartialShape::compatible(const PartialShape &o) const {
  if (!dims_ || !o.dims_) return true;
  if (dims_->size() != o.dims_->size()) return false;
  for (size_t i = 0; i < dims_->size(); ++i)
    if (!(*dims_)[i].compatible((*o.dims_)[i])) return false;
  return true;
}

bool PartialShape::sameScheme(const PartialShape &o) const {
  if (!dims_ || !o.dims_) return !dims_ && !o.dims_;
  if (dims_->size() != o.dims_->size()) return false;
  for (size_t i = 0; i < dims_->size(); ++i)
    if (!(*dims_)[i].sameScheme((*o.dims_)[i])) return false;
  return true;
}

bool PartialShape::relaxes(const PartialShape &o) const {
  if (!dims_) return true;
  if (!o.dims_ || dims_->size() != o.dims_->size()) return false;
  for (size_t i = 0; i < dims_->size(); ++i)
    if (!(*dims_)[i].relaxes((*o.dims_)[i])) return false;
  return true;
}

PartialShape PartialShape::hull(const PartialShape &a, const PartialShape &b) {
  if (!a.rankIsStatic() || !b.rankIsStatic() || a.size() != b.size())
    return PartialShape::dynamic();
  std::vector<Dimension> dims;
  dims.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    dims.push_back(Dimension::hull(a[i], b[i]));
  return PartialShape(std::move(dims));
}

std::optional<PartialShape> PartialShape::merge(const PartialShape &a, const PartialShape &b) {
  if (!a.dims_) return b;
  if (!b.dims_) return a;
  if (a.dims_->size() != b.dims_->size()) return std::nullopt;
  std::vector<Dimension> out;
  out.reserve(a.dims_->size());
  for (size_t i = 0; i < a.dims_->size(); ++i) {
    auto m = Dimension::merge((*a.dims_)[i], (*b.dims_)[i]);
    if (!m) return std::nullopt;
    out.push_back(*m);
  }
  return PartialShape(std::move(out));
}

bool PartialShape::mergeInto(PartialShape &dst, const PartialShape &src) {
  auto m = merge(dst, src);
  if (!m) return false;
  dst = std::move(*m);
  return true;
}

std::string PartialShape::toString(const PrintNames *names) const {
  if (!dims_) return "[...]";
  std::string out = "[";
  for (size_t i = 0; i < dims_->size(); ++i) out += (i ? "," : "") + (*dims_)[i].toString(names);
  return out + "]";
}

std::string toString(const PartialShape &s) { return s.toString(); }

bool PartialShape::equalEverywhere(const PartialShape &o) const {
  if (!rankIsStatic() || !o.rankIsStatic() || size() != o.size()) return false;
  for (size_t i = 0; i < size(); ++i) {
    const Dimension &a = (*this)[i], &b = o[i];
    if (a.isStatic() && b.isStatic() && a.length() == b.length()) continue;
    if (a.isStatic() || b.isStatic() || !a.expr() || a.expr() != b.expr()) return false;
  }
  return true;
}

} // namespace sf
