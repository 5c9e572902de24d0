// Element types of tensors, numbered as ONNX's TensorProto.DataType so that the importer maps
// them one to one. Undefined (0) means "not known yet" in a Fact.
#pragma once

#include "shapeflow/support/format.h"
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sf {

enum class ElementType : uint8_t {
  Undefined = 0,
  F32 = 1,
  U8 = 2,
  I8 = 3,
  U16 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
  String = 8,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  U32 = 12,
  U64 = 13,
  C64 = 14,
  C128 = 15,
  BF16 = 16,
};

/// The largest ElementType value (for tables and range checks).
inline constexpr uint8_t kMaxElementType = 16;

/// Bytes per element; 0 for String and Undefined (a string tensor holds std::strings).
size_t elementSize(ElementType t);
/// `float32`, `float16`, `bfloat16`, `int64`, `uint8`, `bool`, `string`, `complex64`, ...;
/// `undefined` for Undefined.
const char *longName(ElementType t);
/// `f32`, `f16`, `bf16`, `i64`, `u8`, `bool`, `str`, `c64`, ...; `?` for Undefined.
const char *shortName(ElementType t);
/// The short name (the printed form in facts and the text format).
std::string toString(ElementType t);
/// From a short name (`f32`, `?` for Undefined) or a long name (`float32`); nullopt otherwise.
std::optional<ElementType> parseElementType(std::string_view name);
/// From an ONNX TensorProto.DataType number; nullopt for numbers this library does not know.
std::optional<ElementType> elementTypeFromOnnx(int64_t dataType);

/// f16, bf16, f32, f64.
bool isFloat(ElementType t);
/// i8..i64 and u8..u64 (not bool).
bool isInteger(ElementType t);
/// Types that can hold negative values: signed integers and floats (complex too).
bool isSigned(ElementType t);
bool isComplex(ElementType t);
/// Integers, floats, complex and bool: everything but String and Undefined.
bool isNumeric(ElementType t);

} // namespace sf

SF_FORMAT_AS_STRING(sf::ElementType, std::string(sf::shortName(v)));
