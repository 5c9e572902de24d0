// Element type tables.
#include "shapeflow/ir/element_type.h"

namespace sf {
namespace {

struct TypeInfo {
  ElementType type;
  size_t size;
  const char *longName;
  const char *shortName;
};

// Indexed by the enum's value.
constexpr TypeInfo kTypes[] = {
    {ElementType::Undefined, 0, "undefined", "?"},
    {ElementType::F32, 4, "float32", "f32"},
    {ElementType::U8, 1, "uint8", "u8"},
    {ElementType::I8, 1, "int8", "i8"},
    {ElementType::U16, 2, "uint16", "u16"},
    {ElementType::I16, 2, "int16", "i16"},
    {ElementType::I32, 4, "int32", "i32"},
    {ElementType::I64, 8, "int64", "i64"},
    {ElementType::String, 0, "string", "str"},
    {ElementType::Bool, 1, "bool", "bool"},
    {ElementType::F16, 2, "float16", "f16"},
    {ElementType::F64, 8, "float64", "f64"},
    {ElementType::U32, 4, "uint32", "u32"},
    {ElementType::U64, 8, "uint64", "u64"},
    {ElementType::C64, 8, "complex64", "c64"},
    {ElementType::C128, 16, "complex128", "c128"},
    {ElementType::BF16, 2, "bfloat16", "bf16"},
    {ElementType::F8E4M3FN, 1, "float8e4m3fn", "f8e4m3fn"},
    {ElementType::F8E4M3FNUZ, 1, "float8e4m3fnuz", "f8e4m3fnuz"},
    {ElementType::F8E5M2, 1, "float8e5m2", "f8e5m2"},
    {ElementType::F8E5M2FNUZ, 1, "float8e5m2fnuz", "f8e5m2fnuz"},
    {ElementType::U4, 1, "uint4", "u4"},
    {ElementType::I4, 1, "int4", "i4"},
    {ElementType::F4E2M1, 1, "float4e2m1", "f4e2m1"},
    {ElementType::F8E8M0, 1, "float8e8m0", "f8e8m0"},
};
static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == kMaxElementType + 1);

const TypeInfo &info(ElementType t) {
  auto i = size_t(t);
  return i <= kMaxElementType ? kTypes[i] : kTypes[0];
}

} // namespace

size_t elementSize(ElementType t) { return info(t).size; }
const char *longName(ElementType t) { return info(t).longName; }
const char *shortName(ElementType t) { return info(t).shortName; }
std::string toString(ElementType t) { return shortName(t); }

std::optional<ElementType> parseElementType(std::string_view name) {
  for (const TypeInfo &i : kTypes)
    if (name == i.shortName || name == i.longName) return i.type;
  return std::nullopt;
}

std::optional<ElementType> elementTypeFromOnnx(int64_t dataType) {
  if (dataType < 0 || dataType > kMaxElementType) return std::nullopt;
  return ElementType(uint8_t(dataType));
}

bool isFloat(ElementType t) {
  return t == ElementType::F16 || t == ElementType::BF16 || t == ElementType::F32 ||
         t == ElementType::F64;
}

bool isNarrowFloat(ElementType t) {
  switch (t) {
  case ElementType::F8E4M3FN:
  case ElementType::F8E4M3FNUZ:
  case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ:
  case ElementType::F4E2M1:
  case ElementType::F8E8M0:
    return true;
  default:
    return false;
  }
}

NarrowFloat narrowFormat(ElementType t) {
  switch (t) {
  case ElementType::F8E4M3FNUZ: return NarrowFloat::E4M3FNUZ;
  case ElementType::F8E5M2: return NarrowFloat::E5M2;
  case ElementType::F8E5M2FNUZ: return NarrowFloat::E5M2FNUZ;
  case ElementType::F8E8M0: return NarrowFloat::E8M0;
  case ElementType::F4E2M1: return NarrowFloat::E2M1;
  default: return NarrowFloat::E4M3FN;
  }
}

bool isInt4(ElementType t) { return t == ElementType::I4 || t == ElementType::U4; }

bool isInteger(ElementType t) {
  switch (t) {
  case ElementType::I8:
  case ElementType::I16:
  case ElementType::I32:
  case ElementType::I64:
  case ElementType::U8:
  case ElementType::U16:
  case ElementType::U32:
  case ElementType::U64:
    return true;
  default:
    return false;
  }
}

bool isSigned(ElementType t) {
  switch (t) {
  case ElementType::I8:
  case ElementType::I16:
  case ElementType::I32:
  case ElementType::I64:
    return true;
  case ElementType::I4:
    return true;
  default:
    return isFloat(t) || isComplex(t) || (isNarrowFloat(t) && t != ElementType::F8E8M0);
  }
}

bool isComplex(ElementType t) { return t == ElementType::C64 || t == ElementType::C128; }

bool isNumeric(ElementType t) {
  return t != ElementType::Undefined && t != ElementType::String && size_t(t) <= kMaxElementType;
}

} // namespace sf
