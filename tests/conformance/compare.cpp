// Judging facts against actual tensors: see compare.h.
#include "compare.h"

#include <cmath>

namespace sf::conformance {
namespace {

constexpr size_t kValueBudget = 1 << 20;

std::string joinInts(const std::vector<int64_t> &v, size_t max = 16) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  if (v.size() > max) s += ",...";
  return s + "]";
}

std::string actualText(const DataTensor &t) {
  return std::string(shortName(elementTypeOf(t.dataType()))) + joinInts(t.dims(), 64);
}

void checkType(const Fact &f, const DataTensor &actual, Check &c) {
  ElementType want = elementTypeOf(actual.dataType());
  if (want == ElementType::Undefined) {
    // A type newer than the IR (FLOAT8*, INT4, ...): it cannot be claimed exactly.
    if (f.type == ElementType::Undefined) {
      c.add(Precision::Imprecise, "element type " + onnx::dataTypeName(actual.dataType()) +
                                      " has no IR element type");
      c.looseTypeOrRank = true;
    }
    else
      c.add(Precision::Wrong, "element type " + toString(f.type) + ", actual " +
                                  onnx::dataTypeName(actual.dataType()));
    return;
  }
  if (f.type == ElementType::Undefined) {
    c.add(Precision::Imprecise, "element type unknown");
    c.looseTypeOrRank = true;
  } else if (f.type != want)
    c.add(Precision::Wrong, "element type " + toString(f.type) + ", actual " + toString(want));
}

void checkShape(const Fact &f, const DataTensor &actual, Check &c) {
  const auto &dims = actual.dims();
  if (!f.shape.rankIsStatic()) {
    c.add(Precision::Imprecise, "rank unknown");
    c.looseTypeOrRank = true;
    return;
  }
  if (f.shape.size() != dims.size()) {
    c.add(Precision::Wrong, "rank " + std::to_string(f.shape.size()) + ", actual " +
                                std::to_string(dims.size()));
    return;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dimension &d = f.shape[i];
    std::string at = "dim " + std::to_string(i) + " is " + d.toString();
    if (d.isStatic()) {
      if (d.length() != dims[i]) c.add(Precision::Wrong, at + ", actual " + std::to_string(dims[i]));
    } else if (!d.interval().contains(dims[i])) {
      c.add(Precision::Wrong, at + ": bounds exclude the actual " + std::to_string(dims[i]));
    } else {
      c.add(Precision::Imprecise, at + " (actual " + std::to_string(dims[i]) + ")");
    }
  }
}

/// A propagated value (one Dimension per element) against the actual integers.
void checkPropagatedValue(const Fact &f, const DataTensor &actual, Check &c) {
  ElementType t = elementTypeOf(actual.dataType());
  onnx::ModelView none;
  Result<std::vector<int64_t>> values = std::vector<int64_t>{};
  if (isFloat(t)) {
    // Float shape math carries integral values (elementwise.cpp's folding): each must equal the
    // actual float exactly.
    auto floats = onnx::decodeFloats(actual.view, none, kValueBudget);
    if (!floats.ok()) return;
    std::vector<int64_t> ints;
    for (double v : *floats) {
      if (!std::isfinite(v) || std::trunc(v) != v || std::fabs(v) > 9.0e15) {
        c.add(Precision::Wrong, "value " + toString(*f.value) + ", actual holds a non-integral " +
                                    std::to_string(v));
        return;
      }
      ints.push_back(int64_t(v));
    }
    values = std::move(ints);
  } else if (isInteger(t) || t == ElementType::Bool) {
    values = onnx::decodeInts(actual.view, none, kValueBudget);
  } else {
    c.add(Precision::Wrong, "has a propagated value but the actual tensor is " + toString(t));
    return;
  }
  if (!values.ok()) return; // too large to compare; the shape check covers the count
  const auto &claimed = *f.value;
  if (claimed.size() != values->size()) {
    c.add(Precision::Wrong, "value has " + std::to_string(claimed.size()) + " elements, actual " +
                                std::to_string(values->size()));
    return;
  }
  for (size_t i = 0; i < claimed.size(); ++i) {
    const Dimension &d = claimed[i];
    int64_t a = (*values)[i];
    bool ok = d.isStatic() ? d.length() == a : d.interval().contains(a);
    if (!ok) {
      c.add(Precision::Wrong, "value " + toString(claimed) + ", actual " + joinInts(*values));
      return;
    }
  }
}

bool close(double a, double b, const CheckOptions &o) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= o.atol + o.rtol * std::fabs(b);
}

/// A folded constant against the actual tensor, element by element.
void checkConstant(const Tensor &t, const DataTensor &actual, const CheckOptions &o, Check &c) {
  if (!t.hasData() || t.shape() != Shape(actual.dims().begin(), actual.dims().end())) return;
  onnx::ModelView none;
  ElementType at = elementTypeOf(actual.dataType());
  if (t.type() == ElementType::String || at == ElementType::String) {
    if (t.type() != at) return; // the type check reports it
    const auto &have = t.strings();
    const auto &want = actual.view.stringData;
    if (have.size() != want.size()) return;
    for (size_t i = 0; i < have.size(); ++i)
      if (have[i] != want[i]) {
        c.add(Precision::Wrong, "constant element " + std::to_string(i) + " is \"" + have[i] +
                                    "\", actual \"" + std::string(want[i]) + "\"");
        return;
      }
    return;
  }
  if (isComplex(t.type()) || isComplex(at)) return;
  if ((isInteger(at) || at == ElementType::Bool) && (isInteger(t.type()) || t.type() == ElementType::Bool)) {
    auto have = t.toInt64s(kValueBudget);
    auto want = onnx::decodeInts(actual.view, none, kValueBudget);
    if (!have.ok() || !want.ok() || have->size() != want->size()) return;
    for (size_t i = 0; i < have->size(); ++i)
      if ((*have)[i] != (*want)[i]) {
        c.add(Precision::Wrong, "constant " + joinInts(*have) + ", actual " + joinInts(*want) +
                                    " (element " + std::to_string(i) + ")");
        return;
      }
    return;
  }
  auto have = t.toDoubles(kValueBudget);
  auto want = onnx::decodeFloats(actual.view, none, kValueBudget);
  if (!have.ok() || !want.ok() || have->size() != want->size()) return;
  for (size_t i = 0; i < have->size(); ++i)
    if (!close((*have)[i], (*want)[i], o)) {
      c.add(Precision::Wrong, "constant element " + std::to_string(i) + " is " +
                                  std::to_string((*have)[i]) + ", actual " +
                                  std::to_string((*want)[i]));
      return;
    }
}

} // namespace

const char *toString(Precision p) {
  switch (p) {
  case Precision::Exact: return "exact";
  case Precision::Imprecise: return "imprecise";
  case Precision::Wrong: return "wrong";
  }
  return "?";
}

void Check::add(Precision p, std::string note) {
  if (p > precision) precision = p;
  if (p != Precision::Exact) notes.push_back(std::move(note));
}

void Check::merge(const Check &o) {
  if (o.precision > precision) precision = o.precision;
  looseTypeOrRank |= o.looseTypeOrRank;
  notes.insert(notes.end(), o.notes.begin(), o.notes.end());
}

std::string Check::summary() const {
  std::string s;
  for (const auto &n : notes) s += (s.empty() ? "" : "; ") + n;
  return s;
}

std::string typeAndShape(const Fact &f) {
  return std::string(shortName(f.type)) + f.shape.toString();
}

Check checkTensor(const Fact &f, const DataTensor &actual, const CheckOptions &options) {
  Check c;
  checkType(f, actual, c);
  checkShape(f, actual, c);
  if (options.values && c.precision != Precision::Wrong) {
    if (f.value) checkPropagatedValue(f, actual, c);
    if (f.constant) checkConstant(*f.constant, actual, options, c);
  }
  if (c.precision != Precision::Exact)
    c.notes.insert(c.notes.begin(), typeAndShape(f) + " vs actual " + actualText(actual));
  return c;
}

Check checkValue(const Fact &f, const DataValue &actual, const CheckOptions &options) {
  if (actual.kind == DataValue::Kind::Tensor) return checkTensor(f, actual.tensors.at(0), options);
  Check c;
  if (actual.kind == DataValue::Kind::EmptyOptional) return c;
  // A sequence: the fact stands for every element.
  size_t bad = 0;
  for (size_t i = 0; i < actual.tensors.size(); ++i) {
    Check e = checkTensor(f, actual.tensors[i], options);
    if (e.precision == Precision::Exact) continue;
    c.precision = std::max(c.precision, e.precision);
    c.looseTypeOrRank |= e.looseTypeOrRank;
    if (bad++ == 0) c.notes.push_back("sequence element " + std::to_string(i) + ": " + e.summary());
  }
  if (bad > 1)
    c.notes.push_back("so are " + std::to_string(bad - 1) + " more of " +
                      std::to_string(actual.tensors.size()) + " elements");
  return c;
}

} // namespace sf::conformance
