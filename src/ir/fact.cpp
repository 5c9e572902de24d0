// Facts: construction, printing and merging.
#include "shapeflow/ir/fact.h"
#include "shapeflow/support/hash.h"

namespace sf {

Fact Fact::known(ElementType t, PartialShape s) {
  Fact f;
  f.type = t;
  f.shape = std::move(s);
  return f;
}

Fact Fact::fromTensor(std::shared_ptr<const Tensor> t, size_t valueBudget) {
  Fact f;
  if (!t) return f;
  f.type = t->type();
  f.shape = PartialShape(t->shape());
  if ((isInteger(t->type()) || t->type() == ElementType::Bool) && t->rank() <= 1 &&
      t->hasData()) {
    auto v = t->toInt64s(valueBudget);
    if (v.ok()) {
      std::vector<Dimension> dims;
      dims.reserve(v->size());
      for (int64_t x : *v) dims.push_back(Dimension::constantValue(x));
      f.value = std::move(dims);
    }
  }
  f.constant = std::move(t);
  return f;
}

std::optional<std::vector<Dimension>> dimValues(const Fact &f, size_t budget) {
  // Values of higher rank exist (moved through Reshape/Transpose/Slice) but are not vectors.
  if (f.value && f.shape.rankIsStatic() && f.shape.size() > 1) return std::nullopt;
  if (f.value) return *f.value;
  if (f.constant && isInteger(f.constant->type())) {
    auto v = f.constant->toInt64s(budget);
    if (!v.ok()) return std::nullopt;
    return constantDims(*v);
  }
  return std::nullopt;
}

Result<Fact> hull(const Fact &a, const Fact &b) {
  if (a.type != ElementType::Undefined && b.type != ElementType::Undefined && a.type != b.type)
    return errorf("element types differ ({} vs {})", a, b);
  Fact out;
  out.type = a.type != ElementType::Undefined ? a.type : b.type;
  out.shape = PartialShape::hull(a.shape, b.shape);
  if (a.constant && b.constant && (a.constant == b.constant || *a.constant == *b.constant))
    out.constant = a.constant;
  auto va = dimValues(a), vb = dimValues(b);
  if (va && vb && va->size() == vb->size() && out.shape.rankIsStatic() && out.shape.size() <= 1) {
    std::vector<Dimension> v;
    v.reserve(va->size());
    for (size_t i = 0; i < va->size(); ++i)
      v.push_back(Dimension::hull((*va)[i], (*vb)[i]));
    out.value = std::move(v);
  }
  if (a.elements && b.elements && *a.elements == *b.elements) out.elements = a.elements;
  return out;
}

Fact resolved(const Fact &f, const SymbolTable &symbols) {
  Fact out = f;
  out.shape = symbols.resolve(f.shape);
  if (out.value)
    for (auto &d : *out.value) d = symbols.resolve(d);
  if (out.elements && symbols.hasBindings())
    out.elements = std::make_shared<const ElementBounds>(
        ElementBounds{symbols.resolve(f.elements->lo), symbols.resolve(f.elements->hi),
                      f.elements->reached});
  return out;
}

namespace {
size_t mixDim(size_t h, const Dimension &d) {
  h = hashMix(h, std::hash<const void *>()(d.expr()));
  h = hashMix(h, std::hash<int64_t>()(d.minLength()));
  return hashMix(h, std::hash<int64_t>()(d.maxLength()));
}
} // namespace

size_t hashOf(const Fact &f) {
  size_t h = hashMix(size_t(f.type), f.shape.rankIsStatic() ? f.shape.size() + 1 : 0);
  if (f.shape.rankIsStatic())
    for (const Dimension &d : f.shape.dims())
      h = mixDim(h, d);
  if (f.value) {
    h = hashMix(h, f.value->size() + 1);
    for (const Dimension &d : *f.value)
      h = mixDim(h, d);
  }
  if (f.constant) {
    h = hashMix(h, size_t(f.constant->type()) + 1);
    for (int64_t d : f.constant->shape())
      h = hashMix(h, std::hash<int64_t>()(d));
  }
  return h;
}

bool Fact::operator==(const Fact &o) const {
  if (type != o.type || shape != o.shape || value != o.value) return false;
  if (elements != o.elements && (!elements || !o.elements || !(*elements == *o.elements)))
    return false;
  if (!constant || !o.constant) return !constant && !o.constant;
  return constant == o.constant || *constant == *o.constant;
}

std::string toString(const std::vector<Dimension> &value, const PrintNames *names) {
  std::string out = "[";
  for (size_t i = 0; i < value.size(); ++i) {
    if (i) out += ",";
    out += value[i].toString(names);
  }
  return out + "]";
}

std::string toString(const Fact &f, const PrintNames *names) {
  std::string out = shortName(f.type) + f.shape.toString(names);
  if (f.value) out += " = " + toString(*f.value, names);
  return out;
}

Result<Fact> merge(const Fact &a, const Fact &b) {
  auto fail = [&](const std::string &why) {
    return errorf("cannot merge {} with {}: {}", toString(a), toString(b), why);
  };
  Fact out;
  if (a.type != ElementType::Undefined && b.type != ElementType::Undefined && a.type != b.type)
    return fail("element types differ");
  out.type = a.type != ElementType::Undefined ? a.type : b.type;
  auto shape = PartialShape::merge(a.shape, b.shape);
  if (!shape) return fail("shapes are not compatible");
  out.shape = std::move(*shape);
  if (a.constant && b.constant && a.constant != b.constant && !(*a.constant == *b.constant))
    return fail("constants differ");
  out.constant = a.constant ? a.constant : b.constant;
  if (a.value && b.value) {
    if (a.value->size() != b.value->size()) return fail("values have different lengths");
    std::vector<Dimension> v;
    v.reserve(a.value->size());
    for (size_t i = 0; i < a.value->size(); ++i) {
      auto d = Dimension::merge((*a.value)[i], (*b.value)[i]);
      if (!d) return fail("value element " + std::to_string(i) + " differs");
      v.push_back(*d);
    }
    out.value = std::move(v);
  } else {
    out.value = a.value ? a.value : b.value;
  }
  out.elements = a.elements ? a.elements : b.elements;
  return out;
}

} // namespace sf
