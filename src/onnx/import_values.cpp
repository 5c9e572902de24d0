// The ONNX importer (import.cpp), continued: what a graph's fields become in the IR: declared
// types as facts, tensors, attributes (subgraphs through Importer::importSubgraph), Constant
// values.
#include "importer.h"

#include <cctype>

namespace sf::onnx::import_detail {

namespace {

ElementType toElementType(int32_t t) {
  auto e = elementTypeFromOnnx(t);
  return e ? *e : ElementType::Undefined;
}

Result<TensorPtr> share(Result<Tensor> t) {
  if (!t.ok()) return t.takeError();
  return TensorPtr(std::make_shared<const Tensor>(std::move(*t)));
}

} // namespace

Fact Importer::factFromType(const TypeView &t, bool mintNames, std::string_view what, std::string_view unnamedStem) {
  Fact f;
  if (t.kind == TypeView::Sequence || t.kind == TypeView::Optional) {
    if (t.inner) return factFromType(*t.inner, mintNames, what, unnamedStem);
    return f;
  }
  if (t.kind != TypeView::Tensor && t.kind != TypeView::SparseTensor) return f;
  f.type = toElementType(t.elemType);
  if (!t.hasShape) return f;
  std::vector<Dimension> dims;
  for (const DimView &d : t.dims) {
    if (d.hasValue && d.value < 0 && !what.empty())
      diags.warning(
          "", "",
          fmt::format("{}: dimension {} is declared {}, a negative size; read as unknown", what,
                      dims.size(), d.value));
    if (d.hasValue && d.value >= 0) dims.push_back(Dimension(d.value));
    else if (!d.param.empty() && (mintNames || symbols->find(str(d.param))))
      dims.push_back(Dimension::symbol(symbols->named(str(d.param))));
    else if (!unnamedStem.empty()) {
      // A name no other size has: `x_d1`, else `x_d1_2`, ...; letters, digits and _ only, so
      // that it reads back in an expression (tf2onnx's `input_1:0` gives `input_1_0_d1`).
      std::string stem(unnamedStem);
      for (char &ch : stem)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
      std::string base = fmt::format("{}_d{}", stem, dims.size()), name = base;
      for (int k = 2; symbols->find(name); ++k) name = fmt::format("{}_{}", base, k);
      dims.push_back(Dimension::symbol(symbols->named(name)));
    } else dims.push_back(Dimension::symbol(symbols->fresh()));
  }
  f.shape = PartialShape(std::move(dims));
  return f;
}

Result<std::shared_ptr<const Tensor>> Importer::tensorFrom(const TensorView &t) {
  SF_ASSIGN(int64_t count, elementCount(t));
  ElementType type = toElementType(t.dataType);
  if (type == ElementType::Undefined)
    return makeError("tensor '" + str(t.name) + "' has unsupported element type " +
                     dataTypeName(t.dataType));
  Shape shape(t.dims.begin(), t.dims.end());
  if (type == ElementType::String) {
    std::vector<std::string> v;
    if (size_t(count) <= options.decodeBudget)
      for (auto s : t.stringData) v.push_back(str(s));
    if (int64_t(v.size()) == count) return share(Tensor::fromStrings(shape, v));
    return share(Tensor::withoutData(type, shape));
  }
  const bool ints = isInteger(type) || isInt4(type) || type == ElementType::Bool;
  const bool floats = isFloat(type) || isNarrowFloat(type);
  // Bytes in raw layout (raw_data or external data, not 4-bit types, which are packed in the
  // file and a byte each in memory) become a view of the file whatever their size: copying them
  // would hold every weight twice (the mapping and the heap). Booleans are decoded when small so
  // that every byte reads as 0 or 1.
  const bool rawLayout = (t.hasRawData || t.isExternal) &&
                         int64_t(elementSize(type)) * 8 == dataTypeBits(t.dataType);
  const bool small = size_t(count) <= options.decodeBudget;
  if (rawLayout && !(small && type == ElementType::Bool)) {
    auto bytes = tensorBytes(t, model);
    if (bytes.ok())
      return share(Tensor::view(
          type, shape,
          std::span<const std::byte>(reinterpret_cast<const std::byte *>(bytes->data()), bytes->size()),
          std::shared_ptr<const void>(model.storage)));
  }
  if (small) {
    if (ints) {
      SF_ASSIGN(auto v, decodeInts(t, model, options.decodeBudget));
      return share(Tensor::fromInt64s(shape, v, type));
    }
    if (floats) {
      SF_ASSIGN(auto v, decodeFloats(t, model, options.decodeBudget));
      return share(Tensor::fromDoubles(type, shape, v));
    }
  }
  if (options.decodeLarge && ints) {
    SF_ASSIGN(auto v, decodeInts(t, model, size_t(count)));
    return share(Tensor::fromInt64s(shape, v, type));
  }
  if (options.decodeLarge && floats) {
    SF_ASSIGN(auto v, decodeFloats(t, model, size_t(count)));
    return share(Tensor::fromDoubles(type, shape, v));
  }
  return share(Tensor::withoutData(type, shape));
}

Result<Attribute> Importer::attributeFrom(const AttributeView &a, Scope &scope) {
  switch (AttributeType(a.type)) {
  case AttributeType::Float: return Attribute(double(a.f));
  case AttributeType::Int: return Attribute(a.i);
  case AttributeType::String: return Attribute(str(a.s));
  case AttributeType::Floats: return Attribute(std::vector<double>(a.extra().floats.begin(), a.extra().floats.end()));
  case AttributeType::Ints: return Attribute(a.ints);
  case AttributeType::Strings: {
    std::vector<std::string> v;
    for (auto s : a.extra().strings) v.push_back(str(s));
    return Attribute(v);
  }
  case AttributeType::Tensor: {
    if (!a.extra().t) return makeError("attribute '" + str(a.name) + "' has no tensor");
    SF_ASSIGN(auto t, tensorFrom(*a.extra().t));
    return Attribute(t);
  }
  case AttributeType::Tensors: {
    std::vector<TensorPtr> v;
    for (const auto &t : a.extra().tensors) {
      SF_ASSIGN(auto x, tensorFrom(t));
      v.push_back(x);
    }
    return Attribute(v);
  }
  case AttributeType::Graph: {
    if (!a.extra().g) return makeError("attribute '" + str(a.name) + "' has no graph");
    SF_ASSIGN(auto g, importSubgraph(*a.extra().g, scope));
    return Attribute(g);
  }
  case AttributeType::Graphs: {
    std::vector<GraphPtr> v;
    for (const auto &g : a.extra().graphs) {
      SF_ASSIGN(auto x, importSubgraph(*g, scope));
      v.push_back(x);
    }
    return Attribute(v);
  }
  case AttributeType::TypeProto: {
    // The fact it declares (a sequence's or optional's element): Optional's `type` is the one
    // standard use.
    if (!a.extra().tp) return errorf("attribute '{}' has no type", a.name);
    return Attribute(TypePtr(std::make_shared<const Fact>(factFromType(*a.extra().tp))));
  }
  case AttributeType::TypeProtos: {
    std::vector<Fact> v;
    for (const auto &t : a.extra().typeProtos)
      v.push_back(factFromType(t));
    return Attribute(std::move(v));
  }
  default:
    return makeError("attribute '" + str(a.name) + "' of type " + std::to_string(a.type) +
                     " is not supported");
  }
}

Result<std::shared_ptr<const Tensor>> Importer::constantValue(const NodeView &n) {
  for (const auto &a : n.attributes) {
    std::string name = str(a.name);
    if (name == "value" && a.extra().t) return tensorFrom(*a.extra().t);
    if (name == "value_float") return share(Tensor::fromDoubles(ElementType::F32, {}, {double(a.f)}));
    if (name == "value_int") return share(Tensor::fromInt64s(Shape{}, std::vector<int64_t>{a.i}));
    if (name == "value_floats")
      return share(Tensor::fromDoubles(ElementType::F32, {int64_t(a.extra().floats.size())},
                                       std::vector<double>(a.extra().floats.begin(), a.extra().floats.end())));
    if (name == "value_ints")
      return share(Tensor::fromInt64s(Shape{int64_t(a.ints.size())}, a.ints));
    if (name == "value_string") return share(Tensor::fromStrings({}, {str(a.s)}));
    if (name == "value_strings") {
      std::vector<std::string> v;
      for (auto s : a.extra().strings) v.push_back(str(s));
      return share(Tensor::fromStrings({int64_t(v.size())}, v));
    }
    if (name == "sparse_value") return makeError("sparse Constant values are not supported");
  }
  return makeError("Constant has no value attribute");
}

} // namespace sf::onnx::import_detail
