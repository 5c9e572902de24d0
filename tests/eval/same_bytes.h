// Test helper: two run-time values hold the same elements, bit for bit (NaN included): tensors
// of one type and shape with equal bytes (strings equal), sequences element by element.
#pragma once

#include "shapeflow/eval/eval.h"

#include <cmath>
#include <cstring>

namespace sf::eval {

inline bool sameTensorBytes(const Tensor &x, const Tensor &y) {
  if (x.type() != y.type() || x.shape() != y.shape()) return false;
  if (x.isString()) return x.strings() == y.strings();
  return x.bytes().size() == y.bytes().size() &&
         (x.bytes().empty() || std::memcmp(x.bytes().data(), y.bytes().data(), x.bytes().size()) == 0);
}

inline bool sameBytes(const Value &a, const Value &b) {
  if (a.isTensor() != b.isTensor() || a.isSequence() != b.isSequence() || a.isNone() != b.isNone()) return false;
  if (a.isTensor()) return sameTensorBytes(*a, *b);
  if (a.elements().size() != b.elements().size()) return false;
  for (size_t i = 0; i < a.elements().size(); ++i)
    if (!sameTensorBytes(*a.elements()[i], *b.elements()[i])) return false;
  return true;
}

/// The same elements, floats compared as numbers (-0 and +0 equal, NaN equal to NaN): what a
/// rewrite that drops `x + 0` keeps.
inline bool sameTensorValues(const Tensor &x, const Tensor &y) {
  if (x.type() != y.type() || x.shape() != y.shape()) return false;
  const ElementType t = x.type();
  if (t != ElementType::F32 && t != ElementType::F64 && t != ElementType::F16 && t != ElementType::BF16)
    return sameTensorBytes(x, y);
  auto a = x.toDoubles(size_t(x.elementCount())), b = y.toDoubles(size_t(y.elementCount()));
  if (!a.ok() || !b.ok()) return sameTensorBytes(x, y);
  for (size_t i = 0; i < a->size(); ++i)
    if (!((*a)[i] == (*b)[i] || (std::isnan((*a)[i]) && std::isnan((*b)[i])))) return false;
  return true;
}

inline bool sameValues(const Value &a, const Value &b) {
  if (a.isTensor() != b.isTensor() || a.isSequence() != b.isSequence() || a.isNone() != b.isNone()) return false;
  if (a.isTensor()) return sameTensorValues(*a, *b);
  if (a.elements().size() != b.elements().size()) return false;
  for (size_t i = 0; i < a.elements().size(); ++i)
    if (!sameTensorValues(*a.elements()[i], *b.elements()[i])) return false;
  return true;
}

} // namespace sf::eval
