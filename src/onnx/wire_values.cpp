// The ONNX ModelProto reader (wire.cpp), continued: the messages that hold values, attributes,
// value infos and types, tensors and sparse tensors, each checked as it is read.
#include "wire_parser.h"

#include <charconv>

namespace sf::onnx::detail {

namespace {

bool parseDecimal(std::string_view s, int64_t &out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= 0;
}

} // namespace

bool Parser::attribute(const Field &f, std::vector<AttributeView> &attributes) {
  grow(attributes, f);
  return r_.item(f, "attribute", Scope::Attribute, static_cast<int64_t>(attributes.size()),
                 [&] { return attributeBody(attributes.emplace_back()); });
}

bool Parser::attributeBody(AttributeView &a) {
  uint32_t seen = 0; // value fields present, by field number, to infer a missing type
  size_t limit = r_.limits().maxListElements;
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.bytes(f, "name", a.name); break;
    case 2: ok = r_.float32(f, "f", a.f); break;
    case 3: ok = r_.int64(f, "i", a.i); break;
    case 4: ok = r_.bytes(f, "s", a.s); break;
    case 5: {
      auto &t = a.editExtra().t = std::make_shared<TensorView>();
      ok = r_.item(f, "t", Scope::Tensor, -1, [&] { return tensor(*t); });
      break;
    }
    case 6: ok = graph(f, "g", -1, *(a.editExtra().g = std::make_shared<GraphView>())); break;
    case 7: ok = r_.appendFloats(f, "floats", a.editExtra().floats, limit); break;
    case 8: ok = r_.appendInts(f, "ints", a.ints, limit); break;
    case 9: {
      auto &strings = a.editExtra().strings;
      ok = r_.bytes(f, "strings", grow(strings, f).emplace_back());
      if (ok && strings.size() > limit) ok = r_.failList("strings", limit);
      break;
    }
    case 10: {
      auto &tensors = grow(a.editExtra().tensors, f);
      ok = r_.item(f, "tensors", Scope::Tensor, static_cast<int64_t>(tensors.size()),
                   [&] { return tensor(tensors.emplace_back()); });
      break;
    }
    case 11: {
      auto &graphs = grow(a.editExtra().graphs, f);
      graphs.push_back(std::make_shared<GraphView>());
      ok = graph(f, "graphs", static_cast<int64_t>(graphs.size() - 1), *graphs.back());
      break;
    }
    case 13: ok = r_.ignore(f, "doc_string", kLen); break;
    case 14: {
      auto &tp = a.editExtra().tp = std::make_shared<TypeView>();
      ok = r_.message(f, "tp", [&] { return type(*tp); });
      break;
    }
    case 15: {
      auto &typeProtos = grow(a.editExtra().typeProtos, f);
      ok = r_.message(f, "type_protos", [&] { return type(typeProtos.emplace_back()); });
      break;
    }
    case 20: ok = r_.int32(f, "type", a.type); break;
    case 21: ok = r_.bytes(f, "ref_attr_name", a.refAttrName); break;
    case 22: {
      auto &sparse = a.editExtra().sparseTensor = std::make_shared<SparseTensorView>();
      ok = r_.message(f, "sparse_tensor", [&] { return sparseTensor(*sparse); });
      break;
    }
    case 23: {
      auto &sparseTensors = grow(a.editExtra().sparseTensors, f);
      ok = r_.message(f, "sparse_tensors",
                      [&] { return sparseTensor(sparseTensors.emplace_back()); });
      break;
    }
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
    if (f.number < 32) seen |= bit(f.number);
  }
  if (r_.failed()) return false;
  if (a.type < 0 || a.type > static_cast<int32_t>(AttributeType::TypeProtos))
    return r_.failAt(r_.itemBegin(), "unknown attribute type " + std::to_string(a.type));
  if (a.type == 0) a.type = inferAttributeType(seen);
  return true;
}

// IR version 1 files have no `type`: take the one value field present (ambiguous: keep 0).
int32_t Parser::inferAttributeType(uint32_t seen) {
  static constexpr std::pair<uint32_t, AttributeType> kFields[] = {
      {2, AttributeType::Float},         {3, AttributeType::Int},
      {4, AttributeType::String},        {5, AttributeType::Tensor},
      {6, AttributeType::Graph},         {7, AttributeType::Floats},
      {8, AttributeType::Ints},          {9, AttributeType::Strings},
      {10, AttributeType::Tensors},      {11, AttributeType::Graphs},
      {14, AttributeType::TypeProto},    {15, AttributeType::TypeProtos},
      {22, AttributeType::SparseTensor}, {23, AttributeType::SparseTensors},
  };
  int32_t found = 0;
  for (auto [field, type] : kFields) {
    if (!(seen & bit(field))) continue;
    if (found != 0) return 0;
    found = static_cast<int32_t>(type);
  }
  return found;
}

bool Parser::valueInfo(const Field &f, const char *name, Scope scope,
                       std::vector<ValueInfoView> &list) {
  grow(list, f);
  return r_.item(f, name, scope, static_cast<int64_t>(list.size()),
                 [&] { return valueInfoBody(list.emplace_back()); });
}

bool Parser::valueInfoBody(ValueInfoView &v) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.bytes(f, "name", v.name); break;
    case 2:
      v.hasType = true;
      ok = r_.message(f, "type", [&] { return type(v.type); });
      break;
    case 3: ok = r_.ignore(f, "doc_string", kLen); break;
    case 4: ok = r_.ignore(f, "metadata_props", kLen); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

// TypeProto: a oneof; a later member replaces an earlier one, as protobuf merges.
bool Parser::type(TypeView &t) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1:
      t.kind = TypeView::Tensor;
      ok = r_.message(f, "tensor_type", [&] { return tensorType(t); });
      break;
    case 4:
      t.kind = TypeView::Sequence;
      t.inner = std::make_shared<TypeView>();
      ok = r_.message(f, "sequence_type", [&] { return elementType(*t.inner); });
      break;
    case 5:
      t.kind = TypeView::Map;
      ok = r_.message(f, "map_type", [&] { return mapType(t); });
      break;
    case 6: ok = r_.ignore(f, "denotation", kLen); break;
    case 7:
      t.kind = TypeView::Opaque;
      ok = r_.ignore(f, "opaque_type", kLen);
      break;
    case 8:
      t.kind = TypeView::SparseTensor;
      ok = r_.message(f, "sparse_tensor_type", [&] { return tensorType(t); });
      break;
    case 9:
      t.kind = TypeView::Optional;
      t.inner = std::make_shared<TypeView>();
      ok = r_.message(f, "optional_type", [&] { return elementType(*t.inner); });
      break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::checkElemType(int32_t elemType) {
  if (elemType == 0 || isKnownDataType(elemType)) return true;
  return r_.fail("unknown elem_type " + std::to_string(elemType));
}

bool Parser::tensorType(TypeView &t) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.int32(f, "elem_type", t.elemType) && checkElemType(t.elemType); break;
    case 2:
      t.hasShape = true;
      ok = r_.message(f, "shape", [&] { return shape(t); });
      break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

// Sequence and Optional: one field, elem_type (a TypeProto).
bool Parser::elementType(TypeView &inner) {
  Field f;
  while (r_.next(f)) {
    bool ok =
        f.number == 1 ? r_.message(f, "elem_type", [&] { return type(inner); }) : r_.skip(f);
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::mapType(TypeView &t) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.int32(f, "key_type", t.keyType) && checkElemType(t.keyType); break;
    case 2:
      t.inner = std::make_shared<TypeView>();
      ok = r_.message(f, "value_type", [&] { return type(*t.inner); });
      break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::shape(TypeView &t) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    if (f.number == 1) {
      if (t.dims.size() >= r_.limits().maxListElements)
        return r_.failList("dim", r_.limits().maxListElements);
      grow(t.dims, f);
      ok = r_.message(f, "dim", [&] { return dim(t.dims.emplace_back()); });
    } else {
      ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::dim(DimView &d) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1:
      ok = r_.int64(f, "dim_value", d.value);
      d.hasValue = true;
      d.param = {};
      break;
    case 2:
      ok = r_.bytes(f, "dim_param", d.param);
      d.hasValue = false;
      d.value = 0;
      break;
    case 3: ok = r_.ignore(f, "denotation", kLen); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::sparseTensor(SparseTensorView &s) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.item(f, "values", Scope::Tensor, -1, [&] { return tensor(s.values); }); break;
    case 2:
      ok = r_.item(f, "indices", Scope::Tensor, -1, [&] { return tensor(s.indices); });
      break;
    case 3: ok = r_.appendInts(f, "dims", s.dims, r_.limits().maxListElements); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  if (r_.failed()) return false;
  for (size_t i = 0; i < s.dims.size(); ++i)
    if (s.dims[i] < 0)
      return r_.failAt(r_.itemBegin(), "negative dim " + std::to_string(s.dims[i]) + " in dims " +
                                           formatDims(s.dims));
  return true;
}

// One occurrence of a fixed-width value field (float_data, double_data).
bool Parser::fixedData(const Field &f, const char *name, uint32_t width, bool first,
                       std::string_view &run, int64_t &count, TensorView &t) {
  uint32_t unpacked = width == 4 ? kFixed32 : kFixed64;
  if (f.wireType == unpacked) {
    t.scattered = true;
    run = {};
    ++count;
    return r_.skip(f);
  }
  if (f.wireType != kLen) return r_.ignore(f, name, kLen); // reports the wire type
  std::string_view payload;
  if (!r_.packedFixedView(f, name, static_cast<int>(width), payload)) return false;
  count += static_cast<int64_t>(payload.size() / width);
  keepRun(first, payload, run, t);
  return true;
}

// One occurrence of a varint value field (int32_data, int64_data, uint64_data).
bool Parser::varintData(const Field &f, const char *name, bool first, std::string_view &run,
                        int64_t &count, TensorView &t) {
  if (f.wireType == kVarint) {
    t.scattered = true;
    run = {};
    ++count;
    return r_.skip(f);
  }
  std::string_view payload;
  if (!r_.packedVarintView(f, name, payload, count)) return false;
  keepRun(first, payload, run, t);
  return true;
}

void Parser::keepRun(bool first, std::string_view payload, std::string_view &run, TensorView &t) {
  if (first && !t.scattered) {
    run = payload;
  } else {
    t.scattered = true;
    run = {};
  }
}

bool Parser::externalEntry(TensorView &t, const StringPairView &kv) {
  if (kv.key == "location") {
    t.external.location = kv.value;
  } else if (kv.key == "offset" || kv.key == "length") {
    int64_t v;
    if (!parseDecimal(kv.value, v))
      return r_.fail("external_data '" + std::string(kv.key) + "' is '" +
                     std::string(kv.value.substr(0, 40)) + "', not a non-negative integer");
    (kv.key == "offset" ? t.external.offset : t.external.length) = v;
  }
  return true; // "checksum" and unknown keys: not needed to read the data
}

bool Parser::segment(TensorView &t) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.int64(f, "begin", t.segmentBegin); break;
    case 2: ok = r_.int64(f, "end", t.segmentEnd); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::tensor(TensorView &t) {
  int begin = r_.position();
  uint32_t present = 0; // value fields seen, by field number
  int32_t location = 0;
  size_t limit = r_.limits().maxListElements;
  Field f;
  while (r_.next(f)) {
    bool ok;
    bool first = f.number < 32 && !(present & bit(f.number));
    switch (f.number) {
    case 1: ok = r_.appendInts(f, "dims", t.dims, limit); break;
    case 2: ok = r_.int32(f, "data_type", t.dataType); break;
    case 3:
      t.hasSegment = true;
      ok = r_.message(f, "segment", [&] { return segment(t); });
      break;
    case kFloatData: ok = fixedData(f, "float_data", 4, first, t.floatData, t.floatCount, t); break;
    case kInt32Data: ok = varintData(f, "int32_data", first, t.int32Data, t.int32Count, t); break;
    case kStringData: ok = r_.bytes(f, "string_data", grow(t.stringData, f).emplace_back()); break;
    case kInt64Data: ok = varintData(f, "int64_data", first, t.int64Data, t.int64Count, t); break;
    case 8: ok = r_.bytes(f, "name", t.name); break;
    case kRawData:
      t.hasRawData = true;
      ok = r_.bytes(f, "raw_data", t.rawData);
      break;
    case kDoubleData:
      ok = fixedData(f, "double_data", 8, first, t.doubleData, t.doubleCount, t);
      break;
    case kUInt64Data:
      ok = varintData(f, "uint64_data", first, t.uint64Data, t.uint64Count, t);
      break;
    case 12: ok = r_.ignore(f, "doc_string", kLen); break;
    case 13: {
      StringPairView kv;
      ok = r_.message(f, "external_data", [&] { return stringPair(kv); }) && externalEntry(t, kv);
      break;
    }
    case 14: ok = r_.int32(f, "data_location", location); break;
    case 16: ok = r_.ignore(f, "metadata_props", kLen); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
    if (f.number < 32) present |= bit(f.number);
  }
  if (r_.failed()) return false;
  t.encoded = r_.bytesBetween(begin, r_.position());
  return validateTensor(t, present, location);
}

bool Parser::validateTensor(TensorView &t, uint32_t present, int32_t location) {
  auto failHere = [&](const std::string &message) { return r_.failAt(r_.itemBegin(), message); };
  if (!isKnownDataType(t.dataType))
    return failHere(t.dataType == 0 ? std::string("data_type is missing (UNDEFINED)")
                                    : "unknown data_type " + std::to_string(t.dataType));
  int64_t count = 1;
  for (int64_t d : t.dims) {
    if (d < 0)
      return failHere("negative dim " + std::to_string(d) + " in dims " + formatDims(t.dims));
    if (__builtin_mul_overflow(count, d, &count))
      return failHere("dims " + formatDims(t.dims) + " overflow int64 as an element count");
  }
  if (location != 0 && location != 1)
    return failHere("unknown data_location " + std::to_string(location));
  t.isExternal = location == 1;
  if (t.isExternal && t.external.location.empty())
    return failHere("data_location is EXTERNAL but external_data has no 'location'");

  static constexpr uint32_t kValueFields[] = {kRawData,   kFloatData,  kInt32Data, kStringData,
                                              kInt64Data, kDoubleData, kUInt64Data};
  std::string fields;
  int nFields = t.isExternal ? 1 : 0;
  if (t.isExternal) fields = "external data";
  for (uint32_t field : kValueFields) {
    if (!(present & bit(field))) continue;
    if (nFields++ > 0) fields += " and ";
    fields += tensorFieldName(field);
  }
  if (nFields > 1) return failHere("more than one value field: " + fields);
  if (t.hasSegment) return true; // the fields hold one segment: sizes are not those of dims

  if (t.hasRawData) {
    if (t.dataType == static_cast<int32_t>(DataType::String))
      return failHere("raw_data is not allowed for STRING tensors");
    auto expected = rawByteSize(t);
    if (!expected.ok()) return failHere(expected.error().message);
    if (static_cast<int64_t>(t.rawData.size()) != *expected)
      return failHere("raw_data has " + std::to_string(t.rawData.size()) + " bytes, expected " +
                      std::to_string(*expected) + " for " + describeTensorType(t));
    return true;
  }
  uint32_t wanted = typedFieldFor(t.dataType);
  for (uint32_t field : kValueFields) {
    if (field == kRawData || !(present & bit(field))) continue;
    if (field != wanted)
      return failHere(std::string(tensorFieldName(field)) + " cannot hold values of a " +
                      dataTypeName(t.dataType) + " tensor");
    int64_t have = field == kFloatData    ? t.floatCount
                   : field == kInt32Data  ? t.int32Count
                   : field == kInt64Data  ? t.int64Count
                   : field == kDoubleData ? t.doubleCount
                   : field == kUInt64Data ? t.uint64Count
                                          : static_cast<int64_t>(t.stringData.size());
    auto expected = typedEntries(t.dataType, count);
    if (!expected) return failHere("dims " + formatDims(t.dims) + " overflow int64");
    if (have != *expected)
      return failHere(std::string(tensorFieldName(field)) + " has " + std::to_string(have) +
                      " values, expected " + std::to_string(*expected) + " for " +
                      describeTensorType(t));
  }
  return true;
}

} // namespace sf::onnx::detail
