// Attributes: the ordered map and its typed getters.
#include "shapeflow/ir/attribute.h"

namespace sf {

const char *toString(AttributeKind k) {
  switch (k) {
  case AttributeKind::Int: return "int";
  case AttributeKind::Float: return "float";
  case AttributeKind::String: return "string";
  case AttributeKind::Ints: return "ints";
  case AttributeKind::Floats: return "floats";
  case AttributeKind::Strings: return "strings";
  case AttributeKind::Tensor: return "tensor";
  case AttributeKind::Tensors: return "tensors";
  case AttributeKind::Graph: return "graph";
  case AttributeKind::Graphs: return "graphs";
  case AttributeKind::Type:
    return "type";
  case AttributeKind::Types:
    return "types";
  }
  return "?";
}

Attributes::Attributes(std::initializer_list<Item> items) {
  for (const auto &i : items) set(i.first, i.second);
}

void Attributes::set(std::string name, Attribute value) {
  if (Attribute *a = find(name)) {
    *a = std::move(value);
    return;
  }
  items_.emplace_back(std::move(name), std::move(value));
}

bool Attributes::erase(std::string_view name) {
  for (auto it = items_.begin(); it != items_.end(); ++it) {
    if (it->first == name) {
      items_.erase(it);
      return true;
    }
  }
  return false;
}

const Attribute *Attributes::find(std::string_view name) const {
  for (const auto &i : items_)
    if (i.first == name) return &i.second;
  return nullptr;
}

Attribute *Attributes::find(std::string_view name) {
  for (auto &i : items_)
    if (i.first == name) return &i.second;
  return nullptr;
}

namespace {
Error missing(std::string_view name) {
  return makeError("attribute '" + std::string(name) + "' is missing");
}
/// `an int`, `a list of ints`, ...: a kind for messages.
std::string describe(AttributeKind k) {
  switch (k) {
  case AttributeKind::Int: return "an int";
  case AttributeKind::Float: return "a float";
  case AttributeKind::String: return "a string";
  case AttributeKind::Ints: return "a list of ints";
  case AttributeKind::Floats: return "a list of floats";
  case AttributeKind::Strings: return "a list of strings";
  case AttributeKind::Tensor: return "a tensor";
  case AttributeKind::Tensors: return "a list of tensors";
  case AttributeKind::Graph: return "a graph";
  case AttributeKind::Graphs: return "a list of graphs";
  case AttributeKind::Type:
    return "a type";
  case AttributeKind::Types:
    return "a list of types";
  }
  return "?";
}
Error wrongKind(std::string_view name, AttributeKind have, AttributeKind want) {
  return makeError("attribute '" + std::string(name) + "' is " + describe(have) + ", expected " +
                   describe(want));
}
bool isEmptyInts(const Attribute &a) {
  auto v = a.get<std::vector<int64_t>>();
  return v && v->empty();
}
} // namespace

template <class T>
Result<T> Attributes::getAs(std::string_view name, AttributeKind want) const {
  const Attribute *a = find(name);
  if (!a) return missing(name);
  if (const T *v = a->get<T>()) return *v;
  if (isEmptyInts(*a) && (want == AttributeKind::Floats || want == AttributeKind::Strings ||
                          want == AttributeKind::Tensors || want == AttributeKind::Graphs ||
                          want == AttributeKind::Types))
    return T{};
  return wrongKind(name, a->kind(), want);
}

Result<int64_t> Attributes::getInt(std::string_view name) const {
  return getAs<int64_t>(name, AttributeKind::Int);
}
Result<int64_t> Attributes::getInt(std::string_view name, int64_t otherwise) const {
  return has(name) ? getInt(name) : Result<int64_t>(otherwise);
}
Result<std::vector<int64_t>> Attributes::getInts(std::string_view name) const {
  return getAs<std::vector<int64_t>>(name, AttributeKind::Ints);
}
Result<std::span<const int64_t>> Attributes::intsView(std::string_view name) const {
  const Attribute *a = find(name);
  if (!a) return missing(name);
  if (const auto *v = a->get<std::vector<int64_t>>()) return std::span<const int64_t>(*v);
  return wrongKind(name, a->kind(), AttributeKind::Ints);
}
Result<std::vector<int64_t>> Attributes::getInts(std::string_view name,
                                                 std::vector<int64_t> otherwise) const {
  return has(name) ? getInts(name) : Result<std::vector<int64_t>>(std::move(otherwise));
}
Result<double> Attributes::getFloat(std::string_view name) const {
  const Attribute *a = find(name);
  if (a)
    if (const int64_t *i = a->get<int64_t>()) return double(*i);
  return getAs<double>(name, AttributeKind::Float);
}
Result<double> Attributes::getFloat(std::string_view name, double otherwise) const {
  return has(name) ? getFloat(name) : Result<double>(otherwise);
}
Result<std::vector<double>> Attributes::getFloats(std::string_view name) const {
  const Attribute *a = find(name);
  if (a)
    if (const auto *i = a->get<std::vector<int64_t>>())
      return std::vector<double>(i->begin(), i->end());
  return getAs<std::vector<double>>(name, AttributeKind::Floats);
}
Result<std::string> Attributes::getString(std::string_view name) const {
  return getAs<std::string>(name, AttributeKind::String);
}
Result<std::string> Attributes::getString(std::string_view name, std::string otherwise) const {
  return has(name) ? getString(name) : Result<std::string>(std::move(otherwise));
}
Result<std::vector<std::string>> Attributes::getStrings(std::string_view name) const {
  return getAs<std::vector<std::string>>(name, AttributeKind::Strings);
}
Result<TensorPtr> Attributes::getTensor(std::string_view name) const {
  SF_ASSIGN(TensorPtr t, getAs<TensorPtr>(name, AttributeKind::Tensor));
  if (!t) return makeError("attribute '" + std::string(name) + "' holds no tensor");
  return t;
}
Result<std::vector<TensorPtr>> Attributes::getTensors(std::string_view name) const {
  return getAs<std::vector<TensorPtr>>(name, AttributeKind::Tensors);
}
Result<GraphPtr> Attributes::getGraph(std::string_view name) const {
  SF_ASSIGN(GraphPtr g, getAs<GraphPtr>(name, AttributeKind::Graph));
  if (!g) return makeError("attribute '" + std::string(name) + "' holds no graph");
  return g;
}
Result<std::vector<GraphPtr>> Attributes::getGraphs(std::string_view name) const {
  return getAs<std::vector<GraphPtr>>(name, AttributeKind::Graphs);
}
Result<TypePtr> Attributes::getType(std::string_view name) const {
  SF_ASSIGN(TypePtr t, getAs<TypePtr>(name, AttributeKind::Type));
  if (!t) return errorf("attribute '{}' holds no type", name);
  return t;
}
Result<std::vector<Fact>> Attributes::getTypes(std::string_view name) const {
  return getAs<std::vector<Fact>>(name, AttributeKind::Types);
}

} // namespace sf
