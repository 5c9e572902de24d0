// Element types of tensors, numbered as ONNX's TensorProto.DataType so that the importer maps
// them one to one. Undefined (0) means "not known yet" in a Fact.
#pragma once

#include "shapeflow/support/format.h"
#include "shapeflow/support/narrow_float.h"
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
  // ONNX's narrow types (opsets 19-23). In memory one byte per element: the float8 code, the
  // float4 code in the low 4 bits, an int4 as an int8 and a uint4 as a uint8.
  F8E4M3FN = 17,
  F8E4M3FNUZ = 18,
  F8E5M2 = 19,
  F8E5M2FNUZ = 20,
  U4 = 21,
  I4 = 22,
  F4E2M1 = 23,
  F8E8M0 = 24,
};

/// The largest ElementType value (for tables and range checks).
inline constexpr uint8_t kMaxElementType = 24;

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

/// f16, bf16, f32, f64 (not the narrow floats).
bool isFloat(ElementType t);
/// The float8 types and float4 (a byte per element holding the format's code).
bool isNarrowFloat(ElementType t);
/// i8..i64 and u8..u64 (not bool, not the 4-bit integers).
bool isInteger(ElementType t);
/// int4 and uint4.
bool isInt4(ElementType t);
/// The format of a narrow float type (isNarrowFloat).
NarrowFloat narrowFormat(ElementType t);
/// Types that can hold negative values: signed integers and floats (complex too).
bool isSigned(ElementType t);
bool isComplex(ElementType t);
/// Integers, floats, complex and bool: everything but String and Undefined.
bool isNumeric(ElementType t);

} // namespace sf

SF_FORMAT_AS_STRING(sf::ElementType, std::string(sf::shortName(v)));
