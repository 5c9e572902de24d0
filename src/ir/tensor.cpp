// Tensor storage, element conversions (including f16/bf16) and printing.
#include "shapeflow/ir/tensor.h"

#include "format_util.h"
#include "shapeflow/support/narrow_float.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace sf {

static_assert(std::endian::native == std::endian::little,
              "tensor data is little-endian; a big-endian host needs byte swapping");

namespace {

/// The integer types, int4 and uint4 among them (a byte each in memory).
bool intLike(ElementType t) { return isInteger(t) || isInt4(t); }
/// The float types, the narrow ones among them (a byte each in memory).
bool floatLike(ElementType t) { return isFloat(t) || isNarrowFloat(t); }


template <class T> T load(const std::byte *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T> void store(std::byte *p, T v) { std::memcpy(p, &v, sizeof v); }

/// Integer element i of an integer or bool tensor; nullopt for a u64 beyond int64.
std::optional<int64_t> intAt(ElementType t, const std::byte *d, int64_t i) {
  switch (t) {
  case ElementType::I8:
  case ElementType::I4: return load<int8_t>(d + i);
  case ElementType::U8:
  case ElementType::U4: return load<uint8_t>(d + i);
  case ElementType::Bool: return load<uint8_t>(d + i) != 0;
  case ElementType::I16: return load<int16_t>(d + 2 * i);
  case ElementType::U16: return load<uint16_t>(d + 2 * i);
  case ElementType::I32: return load<int32_t>(d + 4 * i);
  case ElementType::U32: return load<uint32_t>(d + 4 * i);
  case ElementType::I64: return load<int64_t>(d + 8 * i);
  case ElementType::U64: {
    uint64_t v = load<uint64_t>(d + 8 * i);
    if (v > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return int64_t(v);
  }
  default: return std::nullopt;
  }
}

double floatAt(ElementType t, const std::byte *d, int64_t i) {
  switch (t) {
  case ElementType::F16: return halfToFloat(load<uint16_t>(d + 2 * i));
  case ElementType::BF16: return bfloat16ToFloat(load<uint16_t>(d + 2 * i));
  case ElementType::F32: return load<float>(d + 4 * i);
  case ElementType::F64: return load<double>(d + 8 * i);
  case ElementType::U64: return double(load<uint64_t>(d + 8 * i));
  default:
    if (isNarrowFloat(t)) return narrowToDouble(narrowFormat(t), load<uint8_t>(d + i));
    return double(*intAt(t, d, i));
  }
}

template <class T> bool fitsInt(int64_t v) {
  return v >= int64_t(std::numeric_limits<T>::min()) &&
         (v < 0 || uint64_t(v) <= uint64_t(std::numeric_limits<T>::max()));
}

/// Stores an integer into element i; false when it does not fit the type.
bool storeInt(ElementType t, std::byte *d, int64_t i, int64_t v) {
  switch (t) {
  case ElementType::I8: return fitsInt<int8_t>(v) && (store(d + i, int8_t(v)), true);
  case ElementType::I4: return v >= -8 && v <= 7 && (store(d + i, int8_t(v)), true);
  case ElementType::U4: return v >= 0 && v <= 15 && (store(d + i, uint8_t(v)), true);
  case ElementType::U8: return v >= 0 && fitsInt<uint8_t>(v) && (store(d + i, uint8_t(v)), true);
  case ElementType::Bool: return (v == 0 || v == 1) && (store(d + i, uint8_t(v)), true);
  case ElementType::I16: return fitsInt<int16_t>(v) && (store(d + 2 * i, int16_t(v)), true);
  case ElementType::U16:
    return v >= 0 && fitsInt<uint16_t>(v) && (store(d + 2 * i, uint16_t(v)), true);
  case ElementType::I32: return fitsInt<int32_t>(v) && (store(d + 4 * i, int32_t(v)), true);
  case ElementType::U32:
    return v >= 0 && fitsInt<uint32_t>(v) && (store(d + 4 * i, uint32_t(v)), true);
  case ElementType::I64: return store(d + 8 * i, v), true;
  case ElementType::U64: return v >= 0 && (store(d + 8 * i, uint64_t(v)), true);
  default: return false;
  }
}

void storeFloat(ElementType t, std::byte *d, int64_t i, double v) {
  switch (t) {
  case ElementType::F16: store(d + 2 * i, floatToHalf(float(v))); break;
  case ElementType::BF16: store(d + 2 * i, floatToBfloat16(float(v))); break;
  case ElementType::F32: store(d + 4 * i, float(v)); break;
  case ElementType::F64: store(d + 8 * i, v); break;
  case ElementType::C64: store(d + 4 * i, float(v)); break; // i counts floats here
  case ElementType::C128: store(d + 8 * i, v); break;
  default:
    // The nearest value; infinities and what is beyond the largest value as the type's own
    // infinity or NaN (Cast and QuantizeLinear saturate by their attribute, not here).
    if (isNarrowFloat(t)) store(d + i, doubleToNarrow(narrowFormat(t), v, false));
    break;
  }
}

std::string typeAndShape(ElementType t, const Shape &s) { return shortName(t) + toString(s); }

Error countError(const Tensor &t, size_t have, const char *what) {
  return makeError("tensor " + typeAndShape(t.type(), t.shape()) + " has " +
                   std::to_string(t.elementCount()) + " elements but " + std::to_string(have) +
                   " " + what + " were given");
}

} // namespace

// ---------------------------------------------------------------------------- construction
Result<Tensor> Tensor::make(ElementType t, Shape shape) {
  if (size_t(t) > kMaxElementType) return makeError("unknown element type " + std::to_string(int(t)));
  SF_ASSIGN(int64_t count, sf::elementCount(shape));
  if (elementSize(t) && !checkedMul(count, int64_t(elementSize(t))))
    return makeError("byte size of tensor " + typeAndShape(t, shape) + " overflows int64");
  Tensor r;
  r.type_ = t;
  r.shape_ = std::move(shape);
  r.count_ = count;
  return r;
}

Result<Tensor> Tensor::fromBytes(ElementType t, Shape shape, std::vector<std::byte> bytes) {
  auto owned = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  std::span<const std::byte> span(owned->data(), owned->size());
  return view(t, std::move(shape), span, std::move(owned));
}

Result<Tensor> Tensor::view(ElementType t, Shape shape, std::span<const std::byte> bytes,
                            std::shared_ptr<const void> keepAlive) {
  if (t == ElementType::String) return makeError("a string tensor cannot view bytes");
  if (t == ElementType::Undefined) return makeError("a tensor needs an element type");
  SF_ASSIGN(Tensor r, make(t, std::move(shape)));
  int64_t want = r.count_ * int64_t(elementSize(t));
  if (int64_t(bytes.size()) != want)
    return makeError("tensor " + typeAndShape(t, r.shape_) + " needs " + std::to_string(want) +
                     " bytes, got " + std::to_string(bytes.size()));
  r.keep_ = std::move(keepAlive);
  r.data_ = bytes.data();
  r.size_ = bytes.size();
  r.hasData_ = true;
  return r;
}

Result<Tensor> Tensor::fromStrings(Shape shape, std::vector<std::string> values) {
  SF_ASSIGN(Tensor r, make(ElementType::String, std::move(shape)));
  if (int64_t(values.size()) != r.count_) return countError(r, values.size(), "strings");
  r.strings_ = std::make_shared<const std::vector<std::string>>(std::move(values));
  r.hasData_ = true;
  return r;
}

Result<Tensor> Tensor::withoutData(ElementType t, Shape shape) {
  if (t == ElementType::Undefined) return makeError("a tensor needs an element type");
  return make(t, std::move(shape));
}

Result<Tensor> Tensor::fromInt64s(Shape shape, const std::vector<int64_t> &values,
                                  ElementType t) {
  if (!intLike(t) && t != ElementType::Bool)
    return makeError(std::string("fromInt64s needs an integer or bool type, not ") + shortName(t));
  SF_ASSIGN(Tensor probe, make(t, shape));
  if (int64_t(values.size()) != probe.count_) return countError(probe, values.size(), "values");
  std::vector<std::byte> bytes(values.size() * elementSize(t));
  for (size_t i = 0; i < values.size(); ++i)
    if (!storeInt(t, bytes.data(), int64_t(i), values[i]))
      return makeError("value " + std::to_string(values[i]) + " does not fit " + shortName(t));
  return fromBytes(t, std::move(shape), std::move(bytes));
}

Tensor Tensor::fromInt64s(const std::vector<int64_t> &values) {
  return std::move(fromInt64s(Shape{int64_t(values.size())}, values, ElementType::I64)).value();
}

Result<Tensor> Tensor::fromDoubles(ElementType t, Shape shape, const std::vector<double> &values) {
  if (intLike(t) || t == ElementType::Bool) {
    std::vector<int64_t> ints;
    ints.reserve(values.size());
    for (double v : values) {
      // 2^63 is the first double beyond int64; u64 values above it are out of reach here.
      if (!(v == std::trunc(v) && v >= -0x1p63 && v < 0x1p63))
        return makeError("value " + detail::formatDouble(v) + " is not an integer of type " +
                         shortName(t));
      ints.push_back(int64_t(v));
    }
    return fromInt64s(std::move(shape), ints, t);
  }
  if (!floatLike(t) && !isComplex(t))
    return makeError(std::string("fromDoubles needs a numeric type, not ") + shortName(t));
  SF_ASSIGN(Tensor probe, make(t, shape));
  size_t per = isComplex(t) ? 2 : 1;
  if (values.size() != size_t(probe.count_) * per)
    return countError(probe, values.size(), isComplex(t) ? "numbers (re, im pairs)" : "values");
  std::vector<std::byte> bytes(size_t(probe.count_) * elementSize(t));
  if (t == ElementType::F32) // as storeFloat does, in a loop of its own
    for (size_t i = 0; i < values.size(); ++i) store(bytes.data() + 4 * i, float(values[i]));
  else
    for (size_t i = 0; i < values.size(); ++i) storeFloat(t, bytes.data(), int64_t(i), values[i]);
  return fromBytes(t, std::move(shape), std::move(bytes));
}

Result<Tensor> Tensor::scalar(ElementType t, double value) {
  return fromDoubles(t, Shape{}, {value});
}

Result<Tensor> Tensor::fromText(ElementType t, Shape shape,
                                const std::vector<std::string> &elements) {
  if (t == ElementType::String) return fromStrings(std::move(shape), elements);
  SF_ASSIGN(Tensor probe, make(t, shape));
  if (t == ElementType::Undefined) return makeError("a tensor needs an element type");
  size_t per = isComplex(t) ? 2 : 1;
  if (elements.size() != size_t(probe.count_) * per)
    return countError(probe, elements.size(), "elements");
  std::vector<std::byte> bytes(size_t(probe.count_) * elementSize(t));
  for (size_t i = 0; i < elements.size(); ++i) {
    const std::string &s = elements[i];
    const char *b = s.data(), *e = s.data() + s.size();
    auto bad = [&] {
      return makeError("'" + s + "' is not a valid " + std::string(shortName(t)) + " element");
    };
    if (t == ElementType::Bool) {
      if (s != "true" && s != "false" && s != "0" && s != "1") return bad();
      bytes[i] = std::byte(s == "true" || s == "1");
    } else if (t == ElementType::U64) {
      uint64_t v;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) return bad();
      store(bytes.data() + 8 * i, v);
    } else if (intLike(t)) {
      int64_t v;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) return bad();
      if (!storeInt(t, bytes.data(), int64_t(i), v))
        return makeError("value " + s + " does not fit " + shortName(t));
    } else {
      double v;
      auto r = std::from_chars(b, e, v);
      // from_chars reports out-of-range (1e999) as an error; that is bad input here too.
      if (r.ec != std::errc() || r.ptr != e) return bad();
      storeFloat(t, bytes.data(), int64_t(i), v);
    }
  }
  return fromBytes(t, std::move(shape), std::move(bytes));
}

// ---------------------------------------------------------------------------- access
const std::vector<std::string> &Tensor::strings() const {
  static const std::vector<std::string> empty;
  return strings_ ? *strings_ : empty;
}

Result<int64_t> Tensor::byteSize() const {
  if (type_ == ElementType::String) {
    int64_t n = 0;
    for (const auto &s : strings()) {
      auto a = checkedAdd(n, int64_t(s.size()));
      if (!a) return makeError("byte size of a string tensor overflows int64");
      n = *a;
    }
    return n;
  }
  auto n = checkedMul(count_, int64_t(elementSize(type_)));
  if (!n) return makeError("byte size of tensor " + typeAndShape(type_, shape_) + " overflows");
  return *n;
}

namespace {
Result<void> checkReadable(const Tensor &t, size_t maxElements) {
  if (!t.hasData())
    return makeError("the elements of tensor " + typeAndShape(t.type(), t.shape()) +
                     " are not loaded");
  if (uint64_t(t.elementCount()) > maxElements)
    return makeError("tensor " + typeAndShape(t.type(), t.shape()) + " has " +
                     std::to_string(t.elementCount()) + " elements, more than the budget of " +
                     std::to_string(maxElements));
  return success();
}
} // namespace

Result<std::vector<int64_t>> Tensor::toInt64s(size_t maxElements) const {
  if (!intLike(type_) && type_ != ElementType::Bool)
    return makeError(std::string("cannot read a ") + shortName(type_) + " tensor as integers");
  SF_TRY(checkReadable(*this, maxElements));
  std::vector<int64_t> out(static_cast<size_t>(count_));
  for (int64_t i = 0; i < count_; ++i) {
    auto v = intAt(type_, data_, i);
    if (!v)
      return makeError("element " + std::to_string(i) + " of a u64 tensor does not fit int64");
    out[size_t(i)] = *v;
  }
  return out;
}

Result<std::vector<double>> Tensor::toDoubles(size_t maxElements) const {
  if (!floatLike(type_) && !intLike(type_) && type_ != ElementType::Bool)
    return makeError(std::string("cannot read a ") + shortName(type_) + " tensor as numbers");
  SF_TRY(checkReadable(*this, maxElements));
  std::vector<double> out(static_cast<size_t>(count_));
  // The common types in loops of their own (the compiler vectorises them); the rest per element.
  if (type_ == ElementType::F32)
    for (int64_t i = 0; i < count_; ++i) out[size_t(i)] = load<float>(data_ + 4 * i);
  else
    for (int64_t i = 0; i < count_; ++i) out[size_t(i)] = floatAt(type_, data_, i);
  return out;
}

std::string Tensor::elementText(int64_t i) const {
  if (!hasData_ || i < 0 || i >= count_) return "?";
  switch (type_) {
  case ElementType::String: return detail::quote((*strings_)[size_t(i)]);
  case ElementType::Bool: return load<uint8_t>(data_ + i) ? "true" : "false";
  case ElementType::U64: return std::to_string(load<uint64_t>(data_ + 8 * i));
  case ElementType::F64: return detail::formatDouble(load<double>(data_ + 8 * i));
  case ElementType::F32:
  case ElementType::F16:
  case ElementType::BF16: return detail::formatFloat(float(floatAt(type_, data_, i)));
  case ElementType::F8E4M3FN:
  case ElementType::F8E4M3FNUZ:
  case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ:
  case ElementType::F4E2M1:
  case ElementType::F8E8M0: return detail::formatDouble(floatAt(type_, data_, i));
  case ElementType::C64:
    return detail::formatFloat(load<float>(data_ + 8 * i)) + ", " +
           detail::formatFloat(load<float>(data_ + 8 * i + 4));
  case ElementType::C128:
    return detail::formatDouble(load<double>(data_ + 16 * i)) + ", " +
           detail::formatDouble(load<double>(data_ + 16 * i + 8));
  default: return std::to_string(*intAt(type_, data_, i));
  }
}

bool Tensor::operator==(const Tensor &o) const {
  if (type_ != o.type_ || shape_ != o.shape_ || hasData_ != o.hasData_) return false;
  if (!hasData_) return true;
  if (type_ == ElementType::String) return strings() == o.strings();
  return size_ == o.size_ && (size_ == 0 || std::memcmp(data_, o.data_, size_) == 0);
}

std::string toString(const Tensor &t, size_t maxElements) {
  std::string out = typeAndShape(t.type(), t.shape()) + " ";
  if (!t.hasData() || uint64_t(t.elementCount()) > maxElements)
    return out + "<" + std::to_string(t.elementCount()) + " elements>";
  if (t.rank() == 0 && !isComplex(t.type())) return out + t.elementText(0);
  out += "[";
  for (int64_t i = 0; i < t.elementCount(); ++i) {
    if (i) out += ", ";
    out += t.elementText(i);
  }
  return out + "]";
}

} // namespace sf
