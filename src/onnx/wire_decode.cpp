// Decoding of tensor values from a TensorView, on demand and under a budget: element types and
// their sizes, raw_data and the typed repeated fields (packed or not), the small float formats,
// and external data resolved safely against the model's folder.
#include "shapeflow/onnx/wire.h"

#include "shapeflow/support/checked.h"
#include "shapeflow/support/float16.h"
#include "shapeflow/support/narrow_float.h"
#include "wire_internal.h"
#include "wire_reader.h"

#include <bit>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace sf::onnx {

// raw_data is little-endian; the decoders copy it as is.
static_assert(std::endian::native == std::endian::little, "the ONNX reader assumes little-endian");

namespace detail {

const char *tensorFieldName(uint32_t field) {
  switch (field) {
  case kFloatData: return "float_data";
  case kInt32Data: return "int32_data";
  case kStringData: return "string_data";
  case kInt64Data: return "int64_data";
  case kRawData: return "raw_data";
  case kDoubleData: return "double_data";
  case kUInt64Data: return "uint64_data";
  }
  return "?";
}

uint32_t typedFieldFor(int32_t dataType) {
  if (!isKnownDataType(dataType)) return 0;
  switch (static_cast<DataType>(dataType)) {
  case DataType::Float:
  case DataType::Complex64: return kFloatData;
  case DataType::Double:
  case DataType::Complex128: return kDoubleData;
  case DataType::Int64: return kInt64Data;
  case DataType::UInt32:
  case DataType::UInt64: return kUInt64Data;
  case DataType::String: return kStringData;
  default: return kInt32Data; // small ints, BOOL, and the bit patterns of small floats
  }
}

std::optional<int64_t> typedEntries(int32_t dataType, int64_t elements) {
  switch (static_cast<DataType>(dataType)) {
  case DataType::Complex64:
  case DataType::Complex128: return checkedMul(elements, 2);
  case DataType::Int4:
  case DataType::UInt4:
  case DataType::Float4E2M1: return elements / 2 + (elements % 2 != 0);
  case DataType::Int2:
  case DataType::UInt2: return elements / 4 + (elements % 4 != 0);
  default: return elements;
  }
}

std::string formatDims(const std::vector<int64_t> &dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

} // namespace detail

using namespace detail;

namespace {

std::string tensorLabel(const TensorView &t) {
  if (t.name.empty()) return "tensor";
  return "tensor '" + std::string(t.name.substr(0, 80)) + "'";
}

Error tensorError(const TensorView &t, const std::string &message) {
  return makeError(tensorLabel(t) + ": " + message);
}

bool isIntegerType(int32_t dataType) {
  switch (static_cast<DataType>(dataType)) {
  case DataType::UInt8:
  case DataType::Int8:
  case DataType::UInt16:
  case DataType::Int16:
  case DataType::Int32:
  case DataType::Int64:
  case DataType::Bool:
  case DataType::UInt32:
  case DataType::UInt64:
  case DataType::UInt4:
  case DataType::Int4:
  case DataType::UInt2:
  case DataType::Int2: return isKnownDataType(dataType);
  default: return false;
  }
}

// The element count, within the caller's budget; segments are not supported.
Result<int64_t> countWithinBudget(const TensorView &t, size_t maxElements) {
  SF_ASSIGN(int64_t n, elementCount(t));
  if (static_cast<uint64_t>(n) > maxElements)
    return tensorError(t, std::to_string(n) + " values, more than the budget of " +
                              std::to_string(maxElements));
  if (t.hasSegment) return tensorError(t, "segmented tensors are not supported");
  return n;
}

Error countMismatch(const TensorView &t, uint32_t field, int64_t have, int64_t expected) {
  if (have == 0 && expected > 0)
    return tensorError(t, "no values (expected " + std::to_string(expected) + " in " +
                              tensorFieldName(field) + " for " + describeTensorType(t) + ")");
  return tensorError(t, std::string(tensorFieldName(field)) + " has " + std::to_string(have) +
                            " values, expected " + std::to_string(expected) + " for " +
                            describeTensorType(t));
}

// Calls each(bits) for every entry of typed field `field` of t: the single packed run when the
// reader kept one, else every occurrence (packed or not) found by re-scanning t.encoded.
// Exactly `expected` entries must be there; each() returns false to stop with `stop`'s error.
template <class Fn>
Result<void> forEachEntry(const TensorView &t, uint32_t field, int64_t expected, Fn &&each) {
  int64_t have = 0;
  bool stopped = false;
  auto visit = [&](uint64_t bits) {
    if (stopped || ++have > expected) return;
    if (!each(bits)) stopped = true;
  };
  bool fixed = field == kFloatData || field == kDoubleData;
  uint32_t width = field == kDoubleData ? 8 : 4;
  if (!t.scattered) {
    std::string_view run = field == kFloatData    ? t.floatData
                           : field == kDoubleData ? t.doubleData
                           : field == kInt32Data  ? t.int32Data
                           : field == kInt64Data  ? t.int64Data
                                                  : t.uint64Data;
    if (fixed) {
      if (run.size() % width != 0)
        return tensorError(t, std::string(tensorFieldName(field)) + " has " +
                                  std::to_string(run.size()) + " bytes, not a multiple of " +
                                  std::to_string(width));
      for (size_t i = 0; i < run.size() && !stopped; i += width) {
        uint64_t bits = 0;
        std::memcpy(&bits, run.data() + i, width);
        visit(bits);
      }
    } else {
      google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(run.data()),
                                                static_cast<int>(run.size()));
      while (in.CurrentPosition() < static_cast<int>(run.size()) && !stopped) {
        uint64_t v;
        if (!in.ReadVarint64(&v))
          return tensorError(t, std::string("malformed varint in ") + tensorFieldName(field));
        visit(v);
      }
    }
  } else {
    std::string label = tensorLabel(t);
    WireReader r(t.encoded, label, ReadLimits{});
    Field f;
    while (!stopped && r.next(f)) {
      bool ok;
      if (f.number != field) {
        ok = r.skip(f);
      } else if (fixed && width == 4) {
        ok = r.repeatedFixed32(f, tensorFieldName(field), visit);
      } else if (fixed) {
        ok = r.repeatedFixed64(f, tensorFieldName(field), visit);
      } else {
        ok = r.repeatedVarint(f, tensorFieldName(field), visit);
      }
      if (!ok) break;
    }
    if (r.failed()) return makeError(r.error());
  }
  if (stopped) return success(); // each() has recorded why
  if (have != expected) return countMismatch(t, field, have, expected);
  return success();
}

// ---- Small floats ----

double smallFloat(int32_t dataType, uint32_t bits) {
  switch (static_cast<DataType>(dataType)) {
  case DataType::Float16: return halfToFloat(uint16_t(bits));
  case DataType::BFloat16: return bfloat16ToFloat(uint16_t(bits));
  case DataType::Float8E4M3FN: return narrowToDouble(NarrowFloat::E4M3FN, bits);
  case DataType::Float8E4M3FNUZ: return narrowToDouble(NarrowFloat::E4M3FNUZ, bits);
  case DataType::Float8E5M2: return narrowToDouble(NarrowFloat::E5M2, bits);
  case DataType::Float8E5M2FNUZ: return narrowToDouble(NarrowFloat::E5M2FNUZ, bits);
  case DataType::Float8E8M0: return narrowToDouble(NarrowFloat::E8M0, bits);
  case DataType::Float4E2M1: return narrowToDouble(NarrowFloat::E2M1, bits);
  default: return std::numeric_limits<double>::quiet_NaN();
  }
}

// Sub-byte element i of a packed buffer (low bits first), sign-extended for the signed types.
int64_t subByte(const uint8_t *bytes, int64_t i, int bits, bool isSigned) {
  int perByte = 8 / bits;
  uint32_t v = (bytes[i / perByte] >> (bits * (i % perByte))) & ((1u << bits) - 1);
  if (isSigned && (v >> (bits - 1))) return static_cast<int64_t>(v) - (int64_t(1) << bits);
  return v;
}

Result<void> decodeRawInts(const TensorView &t, std::string_view bytes, int64_t n,
                           std::vector<int64_t> &out) {
  auto p = reinterpret_cast<const uint8_t *>(bytes.data());
  auto load = [&](auto zero, int64_t i) {
    decltype(zero) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  auto dt = static_cast<DataType>(t.dataType);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    switch (dt) {
    case DataType::Int8: v = static_cast<int8_t>(p[i]); break;
    case DataType::UInt8: v = p[i]; break;
    case DataType::Bool: v = p[i] != 0; break;
    case DataType::Int16: v = load(int16_t(), i); break;
    case DataType::UInt16: v = load(uint16_t(), i); break;
    case DataType::Int32: v = load(int32_t(), i); break;
    case DataType::UInt32: v = load(uint32_t(), i); break;
    case DataType::Int64: v = load(int64_t(), i); break;
    case DataType::UInt64: {
      uint64_t u = load(uint64_t(), i);
      if (u > static_cast<uint64_t>(INT64_MAX))
        return tensorError(t, "UINT64 value " + std::to_string(u) + " does not fit in int64");
      v = static_cast<int64_t>(u);
      break;
    }
    case DataType::Int4: v = subByte(p, i, 4, true); break;
    case DataType::UInt4: v = subByte(p, i, 4, false); break;
    case DataType::Int2: v = subByte(p, i, 2, true); break;
    case DataType::UInt2: v = subByte(p, i, 2, false); break;
    default: return tensorError(t, "not an integer type");
    }
    out.push_back(v);
  }
  return success();
}

// One typed-field entry of an integer tensor as value(s); sub-byte types pack several per entry.
void appendIntEntry(DataType dt, uint64_t entry, int64_t n, std::vector<int64_t> &out) {
  auto s32 = static_cast<int32_t>(entry);
  switch (dt) {
  case DataType::Int8: out.push_back(static_cast<int8_t>(s32)); return;
  case DataType::UInt8: out.push_back(static_cast<uint8_t>(s32)); return;
  case DataType::Int16: out.push_back(static_cast<int16_t>(s32)); return;
  case DataType::UInt16: out.push_back(static_cast<uint16_t>(s32)); return;
  case DataType::Bool: out.push_back(s32 != 0); return;
  case DataType::Int32: out.push_back(s32); return;
  case DataType::UInt32: out.push_back(static_cast<uint32_t>(entry)); return;
  case DataType::Int64:
  case DataType::UInt64: out.push_back(static_cast<int64_t>(entry)); return; // range checked
  case DataType::Int4:
  case DataType::UInt4:
  case DataType::Int2:
  case DataType::UInt2: {
    int bits = dt == DataType::Int4 || dt == DataType::UInt4 ? 4 : 2;
    bool isSigned = dt == DataType::Int4 || dt == DataType::Int2;
    auto byte = static_cast<uint8_t>(entry);
    for (int k = 0; k < 8 / bits && static_cast<int64_t>(out.size()) < n; ++k)
      out.push_back(subByte(&byte, k, bits, isSigned));
    return;
  }
  default: return; // not an integer type: rejected before
  }
}

} // namespace

bool isKnownDataType(int32_t dataType) { return dataType >= 1 && dataType <= kMaxDataType; }

std::string dataTypeName(int32_t dataType) {
  static constexpr const char *kNames[] = {
      "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
      "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
      "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
      "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0",
      "UINT2",          "INT2"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kMaxDataType + 1);
  if (dataType >= 0 && dataType <= kMaxDataType) return kNames[dataType];
  return "<unknown " + std::to_string(dataType) + ">";
}

int dataTypeBits(int32_t dataType) {
  static constexpr int kBits[] = {0,  32,  8,  8, 16, 16, 32, 64, 0, 8, 16, 64, 32, 64,
                                  64, 128, 16, 8, 8,  8,  8,  4,  4, 4, 8,  2,  2};
  static_assert(sizeof(kBits) / sizeof(kBits[0]) == kMaxDataType + 1);
  if (dataType >= 0 && dataType <= kMaxDataType) return kBits[dataType];
  return 0;
}

Result<int64_t> elementCount(const TensorView &t) {
  int64_t n = 1;
  for (int64_t d : t.dims) {
    if (d < 0)
      return tensorError(t, "negative dim " + std::to_string(d) + " in dims " + formatDims(t.dims));
    auto next = checkedMul(n, d);
    if (!next) return tensorError(t, "dims " + formatDims(t.dims) + " overflow int64");
    n = *next;
  }
  return n;
}

Result<int64_t> rawByteSize(const TensorView &t) {
  SF_ASSIGN(int64_t n, elementCount(t));
  int bits = dataTypeBits(t.dataType);
  if (bits == 0)
    return tensorError(t, dataTypeName(t.dataType) + " values have no fixed byte size");
  if (bits % 8 == 0) {
    auto bytes = checkedMul(n, bits / 8);
    if (!bytes) return tensorError(t, "byte size of " + describeTensorType(t) + " overflows int64");
    return *bytes;
  }
  int perByte = 8 / bits;
  return n / perByte + (n % perByte != 0);
}

std::string describeTensorType(const TensorView &t) {
  return dataTypeName(t.dataType) + formatDims(t.dims);
}

// ---- Values ----

Result<std::vector<int64_t>> decodeInts(const TensorView &t, const ModelView &model,
                                        size_t maxElements) {
  if (!isIntegerType(t.dataType))
    return tensorError(t, "expected an integer or BOOL tensor, not " + dataTypeName(t.dataType));
  SF_ASSIGN(int64_t n, countWithinBudget(t, maxElements));
  std::vector<int64_t> out;
  if (t.isExternal || t.hasRawData) {
    SF_ASSIGN(std::string_view bytes, tensorBytes(t, model));
    out.reserve(static_cast<size_t>(n));
    SF_TRY(decodeRawInts(t, bytes, n, out));
    return out;
  }
  uint32_t field = typedFieldFor(t.dataType);
  int64_t entries = *typedEntries(t.dataType, n);
  auto dt = static_cast<DataType>(t.dataType);
  std::string error;
  out.reserve(static_cast<size_t>(n));
  SF_TRY(forEachEntry(t, field, entries, [&](uint64_t entry) {
    if (dt == DataType::UInt64 && entry > static_cast<uint64_t>(INT64_MAX)) {
      error = "UINT64 value " + std::to_string(entry) + " does not fit in int64";
      return false;
    }
    appendIntEntry(dt, entry, n, out);
    return true;
  }));
  if (!error.empty()) return tensorError(t, error);
  return out;
}

Result<std::vector<double>> decodeFloats(const TensorView &t, const ModelView &model,
                                         size_t maxElements) {
  if (isIntegerType(t.dataType)) {
    SF_ASSIGN(auto ints, decodeInts(t, model, maxElements));
    return std::vector<double>(ints.begin(), ints.end());
  }
  auto dt = static_cast<DataType>(t.dataType);
  int bits = dataTypeBits(t.dataType);
  if (bits == 0 || dt == DataType::Complex64 || dt == DataType::Complex128)
    return tensorError(t, "expected a real numeric tensor, not " + dataTypeName(t.dataType));
  SF_ASSIGN(int64_t n, countWithinBudget(t, maxElements));
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n));
  if (t.isExternal || t.hasRawData) {
    SF_ASSIGN(std::string_view bytes, tensorBytes(t, model));
    auto p = reinterpret_cast<const uint8_t *>(bytes.data());
    for (int64_t i = 0; i < n; ++i) {
      if (dt == DataType::Float) {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        out.push_back(f);
      } else if (dt == DataType::Double) {
        double d;
        std::memcpy(&d, p + 8 * i, 8);
        out.push_back(d);
      } else if (bits == 16) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out.push_back(smallFloat(t.dataType, h));
      } else if (bits == 8) {
        out.push_back(smallFloat(t.dataType, p[i]));
      } else { // FLOAT4E2M1
        out.push_back(smallFloat(t.dataType, static_cast<uint32_t>(subByte(p, i, 4, false))));
      }
    }
    return out;
  }
  uint32_t field = typedFieldFor(t.dataType);
  int64_t entries = *typedEntries(t.dataType, n);
  SF_TRY(forEachEntry(t, field, entries, [&](uint64_t entry) {
    if (dt == DataType::Float) {
      float f;
      auto b = static_cast<uint32_t>(entry);
      std::memcpy(&f, &b, 4);
      out.push_back(f);
    } else if (dt == DataType::Double) {
      double d;
      std::memcpy(&d, &entry, 8);
      out.push_back(d);
    } else if (dt == DataType::Float4E2M1) {
      out.push_back(smallFloat(t.dataType, entry & 0xf));
      if (static_cast<int64_t>(out.size()) < n)
        out.push_back(smallFloat(t.dataType, (entry >> 4) & 0xf));
    } else {
      out.push_back(smallFloat(t.dataType, static_cast<uint32_t>(entry)));
    }
    return true;
  }));
  return out;
}

// ---- Raw bytes and external data ----

namespace {

Result<std::shared_ptr<MappedFile>> openExternal(const TensorView &t, const ModelView &model) {
  std::string_view location = t.external.location;
  auto refuse = [&](const std::string &why) {
    return tensorError(t, "external data location '" + std::string(location.substr(0, 200)) + "' " +
                              why);
  };
  if (!model.storage) return tensorError(t, "external data needs the ModelView it was read with");
  if (model.directory.empty())
    return refuse("cannot be resolved: the model was read from memory (set ModelView::directory)");
  if (location.empty()) return refuse("is empty");
  if (location.find('\0') != std::string_view::npos) return refuse("contains a NUL byte");
  if (location.front() == '/') return refuse("is absolute; it must be relative to the model");
  for (size_t begin = 0; begin <= location.size();) {
    size_t end = location.find('/', begin);
    if (end == std::string_view::npos) end = location.size();
    if (location.substr(begin, end - begin) == "..")
      return refuse("leaves the model's folder ('..')");
    begin = end + 1;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::canonical(model.directory, ec);
  if (ec) return makeError(model.directory + ": " + ec.message());
  fs::path target = fs::canonical(fs::path(model.directory) / fs::path(location), ec);
  if (ec) return refuse("cannot be opened: " + ec.message());
  std::string dirString = dir.string(), targetString = target.string();
  if (dirString.back() != '/') dirString += '/';
  if (targetString.compare(0, dirString.size(), dirString) != 0)
    return refuse("resolves to " + targetString + ", outside the model's folder");

  std::lock_guard<std::mutex> lock(model.storage->mutex);
  auto &cached = model.storage->external[targetString];
  if (!cached) {
    auto file = MappedFile::open(targetString);
    if (!file.ok()) {
      model.storage->external.erase(targetString);
      return tensorError(t, file.error().message);
    }
    cached = std::move(*file);
  }
  return cached;
}

} // namespace

Result<std::string_view> tensorBytes(const TensorView &t, const ModelView &model) {
  if (t.hasSegment) return tensorError(t, "segmented tensors are not supported");
  if (t.dataType == static_cast<int32_t>(DataType::String))
    return tensorError(t, "STRING values have no raw bytes; read stringData");
  SF_ASSIGN(int64_t expected, rawByteSize(t));
  if (t.isExternal) {
    SF_ASSIGN(auto file, openExternal(t, model));
    auto size = static_cast<int64_t>(file->size());
    int64_t offset = t.external.offset, length = t.external.length;
    if (offset < 0 || offset > size)
      return tensorError(t, "external data offset " + std::to_string(offset) +
                                " is past the end of " + file->path() + " (" +
                                std::to_string(size) + " bytes)");
    if (length < 0) length = size - offset;
    if (length > size - offset)
      return tensorError(t, "external data offset " + std::to_string(offset) + " + length " +
                                std::to_string(length) + " is past the end of " + file->path() +
                                " (" + std::to_string(size) + " bytes)");
    if (length != expected)
      return tensorError(t, "external data has " + std::to_string(length) + " bytes, expected " +
                                std::to_string(expected) + " for " + describeTensorType(t));
    return file->bytes().substr(static_cast<size_t>(offset), static_cast<size_t>(length));
  }
  if (t.hasRawData) {
    if (static_cast<int64_t>(t.rawData.size()) != expected)
      return tensorError(t, "raw_data has " + std::to_string(t.rawData.size()) +
                                " bytes, expected " + std::to_string(expected) + " for " +
                                describeTensorType(t));
    return t.rawData;
  }
  // A single packed run of float_data / double_data is already the raw layout.
  if (!t.scattered) {
    auto dt = static_cast<DataType>(t.dataType);
    std::string_view run = dt == DataType::Float || dt == DataType::Complex64 ? t.floatData
                           : dt == DataType::Double || dt == DataType::Complex128
                               ? t.doubleData
                               : std::string_view();
    if (static_cast<int64_t>(run.size()) == expected) return run;
  }
  if (expected == 0) return std::string_view();
  return tensorError(t, "values of " + describeTensorType(t) + " are in " +
                            tensorFieldName(typedFieldFor(t.dataType)) +
                            ", not raw bytes; decode them with decodeInts or decodeFloats");
}

} // namespace sf::onnx
