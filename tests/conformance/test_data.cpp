// Reading the test data of ONNX backend tests: see test_data.h.
#include "test_data.h"

#include <fstream>
#include <sstream>
#include <unordered_set>

namespace sf::conformance {
namespace fs = std::filesystem;
namespace {

/// One field of a protobuf message: its number and, for the kinds used here, its payload.
struct WireField {
  uint32_t number = 0;
  int wireType = 0;
  uint64_t varint = 0;
  std::string_view bytes; // wire type 2
};

bool readVarint(std::string_view buf, size_t &pos, uint64_t &out) {
  out = 0;
  for (int shift = 0; shift < 64 && pos < buf.size(); shift += 7) {
    uint8_t b = uint8_t(buf[pos++]);
    out |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

/// The top-level fields of a message, in order; an error on malformed bytes.
Result<std::vector<WireField>> wireFields(std::string_view buf, const std::string &label) {
  std::vector<WireField> fields;
  size_t pos = 0;
  while (pos < buf.size()) {
    uint64_t tag = 0;
    if (!readVarint(buf, pos, tag)) return makeError(label + ": bad tag at byte " + std::to_string(pos));
    WireField f;
    f.number = uint32_t(tag >> 3);
    f.wireType = int(tag & 7);
    switch (f.wireType) {
    case 0:
      if (!readVarint(buf, pos, f.varint)) return makeError(label + ": bad varint");
      break;
    case 1:
      if (buf.size() - pos < 8) return makeError(label + ": truncated fixed64");
      pos += 8;
      break;
    case 5:
      if (buf.size() - pos < 4) return makeError(label + ": truncated fixed32");
      pos += 4;
      break;
    case 2: {
      uint64_t len = 0;
      if (!readVarint(buf, pos, len) || len > buf.size() - pos)
        return makeError(label + ": bad length-delimited field " + std::to_string(f.number));
      f.bytes = buf.substr(pos, size_t(len));
      pos += size_t(len);
      break;
    }
    default:
      return makeError(label + ": unsupported wire type " + std::to_string(f.wireType));
    }
    fields.push_back(f);
  }
  return fields;
}

Result<DataTensor> tensorFrom(std::string bytes, const std::string &label) {
  DataTensor t;
  t.bytes = std::make_shared<const std::string>(std::move(bytes));
  SF_ASSIGN(t.view, onnx::readTensorBuffer(*t.bytes, label));
  return t;
}

// SequenceProto: 1 name, 2 elem_type, 3 tensor_values, 4 sparse_tensor_values,
// 5 sequence_values, 6 map_values, 7 optional_values.
Result<void> readSequence(std::string_view buf, const std::string &label, DataValue &out) {
  SF_ASSIGN(auto fields, wireFields(buf, label));
  out.kind = DataValue::Kind::Sequence;
  for (const auto &f : fields) {
    if (f.number == 1 && f.wireType == 2) out.name = std::string(f.bytes);
    else if (f.number == 3 && f.wireType == 2) {
      SF_ASSIGN(DataTensor t, tensorFrom(std::string(f.bytes), label + ": element " +
                                                                std::to_string(out.tensors.size())));
      out.tensors.push_back(std::move(t));
    } else if (f.number >= 4 && f.number <= 7) {
      return makeError(label + ": sequences of non-tensors are not supported");
    }
  }
  return success();
}

// OptionalProto: 1 name, 2 elem_type, 3 tensor_value, 4 sparse_tensor_value, 5 sequence_value,
// 6 map_value, 7 optional_value.
Result<void> readOptional(std::string_view buf, const std::string &label, DataValue &out) {
  SF_ASSIGN(auto fields, wireFields(buf, label));
  out.kind = DataValue::Kind::EmptyOptional;
  for (const auto &f : fields) {
    if (f.number == 1 && f.wireType == 2) out.name = std::string(f.bytes);
    else if (f.number == 3 && f.wireType == 2) {
      SF_ASSIGN(DataTensor t, tensorFrom(std::string(f.bytes), label));
      out.kind = DataValue::Kind::Tensor;
      out.tensors = {std::move(t)};
    } else if (f.number == 5 && f.wireType == 2) {
      std::string name = out.name;
      SF_TRY(readSequence(f.bytes, label, out));
      if (out.name.empty()) out.name = name;
    } else if (f.number == 4 || f.number == 6 || f.number == 7) {
      return makeError(label + ": optionals of non-tensors are not supported");
    }
  }
  return success();
}

} // namespace

std::vector<fs::path> dataFiles(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> out;
  for (int k = 0;; ++k) {
    fs::path p = dir / (prefix + "_" + std::to_string(k) + ".pb");
    std::error_code ec;
    if (!fs::exists(p, ec)) break;
    out.push_back(p);
  }
  return out;
}

Result<DataValue> readDataValue(const fs::path &path, const onnx::TypeView *declared) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path.string() + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  std::string label = path.filename().string();
  DataValue out;
  auto kind = declared ? declared->kind : onnx::TypeView::Tensor;
  if (kind == onnx::TypeView::Sequence) {
    SF_TRY(readSequence(bytes, label, out));
  } else if (kind == onnx::TypeView::Optional) {
    SF_TRY(readOptional(bytes, label, out));
  } else {
    SF_ASSIGN(DataTensor t, tensorFrom(std::move(bytes), label));
    out.name = std::string(t.view.name);
    out.tensors.push_back(std::move(t));
  }
  return out;
}

ElementType elementTypeOf(int32_t dataType) {
  auto t = elementTypeFromOnnx(dataType);
  return t ? *t : ElementType::Undefined;
}

Result<Tensor> toTensor(const DataTensor &t, size_t maxElements) {
  ElementType type = elementTypeOf(t.dataType());
  if (type == ElementType::Undefined || isComplex(type))
    return makeError(t.describe() + ": not a numeric or string tensor");
  Shape shape(t.dims().begin(), t.dims().end());
  if (type == ElementType::String) {
    if (t.view.stringData.size() > maxElements) return makeError(t.describe() + ": too many strings");
    return Tensor::fromStrings(shape, std::vector<std::string>(t.view.stringData.begin(), t.view.stringData.end()));
  }
  onnx::ModelView none;
  if (isInteger(type) || type == ElementType::Bool) {
    SF_ASSIGN(auto values, onnx::decodeInts(t.view, none, maxElements));
    return Tensor::fromInt64s(shape, values, type);
  }
  SF_ASSIGN(auto values, onnx::decodeFloats(t.view, none, maxElements));
  return Tensor::fromDoubles(type, shape, values);
}

/// Graph inputs that are not initializers (what test_data_set_N/input_K.pb feed), in order.
std::vector<const onnx::ValueInfoView *> formalInputs(const onnx::GraphView &gv) {
  std::unordered_set<std::string_view> inits;
  for (const auto &t : gv.initializers) inits.insert(t.name);
  std::vector<const onnx::ValueInfoView *> out;
  for (const auto &in : gv.inputs)
    if (!inits.count(in.name)) out.push_back(&in);
  return out;
}

int32_t declaredElemType(const onnx::TypeView *t) {
  while (t && (t->kind == onnx::TypeView::Sequence || t->kind == onnx::TypeView::Optional))
    t = t->inner.get();
  return t && (t->kind == onnx::TypeView::Tensor || t->kind == onnx::TypeView::SparseTensor)
             ? t->elemType
             : 0;
}

/// ONNX's test generator stores BFLOAT16 tensors as UINT16 (numpy has no bfloat16): where the
/// model declares BFLOAT16, read UINT16 data as the BFLOAT16 bits it is.
void fixBfloat16(DataValue &v, const onnx::TypeView *declared, const std::string &what,
                 std::vector<std::string> &notes) {
  if (declaredElemType(declared) != int32_t(onnx::DataType::BFloat16)) return;
  bool fixed = false;
  for (auto &t : v.tensors)
    if (t.view.dataType == int32_t(onnx::DataType::UInt16)) {
      t.view.dataType = int32_t(onnx::DataType::BFloat16);
      fixed = true;
    }
  if (fixed) notes.push_back("test data quirk: " + what + " stored as UINT16, read as the BFLOAT16 the model declares");
}

/// A declared static dim or rank that the test data contradicts: the data is what the test runs
/// with, so inference is fed the data's shape (ONNX's runner does not check either).
std::optional<std::string> contradictsDeclared(const onnx::TypeView *declared, const DataValue &v) {
  if (!declared || declared->kind != onnx::TypeView::Tensor || !declared->hasShape ||
      v.kind != DataValue::Kind::Tensor)
    return std::nullopt;
  const auto &dims = v.tensors[0].dims();
  bool differs = declared->dims.size() != dims.size();
  std::string text = "[";
  for (size_t i = 0; i < declared->dims.size(); ++i) {
    const auto &d = declared->dims[i];
    text += (i ? "," : "") + (d.hasValue ? std::to_string(d.value) : d.param.empty() ? "?" : std::string(d.param));
    if (d.hasValue && (i >= dims.size() || d.value != dims[i])) differs = true;
  }
  if (!differs) return std::nullopt;
  return "the model declares " + text + "], the test data is " + v.tensors[0].describe();
}

void admitZeroDims(Graph &g, const std::string &name, const onnx::TypeView *declared, const DataValue &v,
                   std::vector<std::string> &notes) {
  if (!declared || declared->kind != onnx::TypeView::Tensor || v.kind != DataValue::Kind::Tensor ||
      v.tensors.empty())
    return;
  const auto &dims = v.tensors[0].dims();
  for (size_t j = 0; j < declared->dims.size() && j < dims.size(); ++j) {
    const auto &d = declared->dims[j];
    if (d.hasValue || d.param.empty() || dims[j] != 0) continue;
    if (g.symbols.setRange(std::string(d.param), Interval{0, kInf}).ok())
      notes.push_back("input '" + name + "' has 0 for dim " + std::string(d.param) + ": run as with --dim " +
                      std::string(d.param) + "=0..");
  }
}

Fact elementFact(const std::vector<DataTensor> &elements) {
  Fact f;
  if (elements.empty()) return f;
  f.type = elementTypeOf(elements[0].dataType());
  std::vector<int64_t> lo = elements[0].dims(), hi = lo;
  for (const auto &e : elements) {
    if (elementTypeOf(e.dataType()) != f.type) f.type = ElementType::Undefined;
    if (e.dims().size() != lo.size()) return f; // ranks differ: rank unknown
    for (size_t i = 0; i < lo.size(); ++i) {
      lo[i] = std::min(lo[i], e.dims()[i]);
      hi[i] = std::max(hi[i], e.dims()[i]);
    }
  }
  std::vector<Dimension> dims;
  for (size_t i = 0; i < lo.size(); ++i)
    dims.push_back(lo[i] == hi[i] ? Dimension(lo[i]) : Dimension(lo[i], hi[i]));
  f.shape = PartialShape(std::move(dims));
  return f;
}

} // namespace sf::conformance
