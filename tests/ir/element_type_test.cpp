// Element types: the ONNX numbering, sizes, names both ways, predicates.
#include "shapeflow/ir/element_type.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

struct Row {
  ElementType t;
  int onnx;
  size_t size;
  const char *longName;
  const char *shortName;
  bool isFloat, isInteger, isSigned;
};

const Row kRows[] = {
    {ElementType::Undefined, 0, 0, "undefined", "?", false, false, false},
    {ElementType::F32, 1, 4, "float32", "f32", true, false, true},
    {ElementType::U8, 2, 1, "uint8", "u8", false, true, false},
    {ElementType::I8, 3, 1, "int8", "i8", false, true, true},
    {ElementType::U16, 4, 2, "uint16", "u16", false, true, false},
    {ElementType::I16, 5, 2, "int16", "i16", false, true, true},
    {ElementType::I32, 6, 4, "int32", "i32", false, true, true},
    {ElementType::I64, 7, 8, "int64", "i64", false, true, true},
    {ElementType::String, 8, 0, "string", "str", false, false, false},
    {ElementType::Bool, 9, 1, "bool", "bool", false, false, false},
    {ElementType::F16, 10, 2, "float16", "f16", true, false, true},
    {ElementType::F64, 11, 8, "float64", "f64", true, false, true},
    {ElementType::U32, 12, 4, "uint32", "u32", false, true, false},
    {ElementType::U64, 13, 8, "uint64", "u64", false, true, false},
    {ElementType::C64, 14, 8, "complex64", "c64", false, false, true},
    {ElementType::C128, 15, 16, "complex128", "c128", false, false, true},
    {ElementType::BF16, 16, 2, "bfloat16", "bf16", true, false, true},
};

TEST(ElementType, Table) {
  for (const Row &r : kRows) {
    SCOPED_TRACE(r.shortName);
    EXPECT_EQ(int(r.t), r.onnx);
    EXPECT_EQ(elementTypeFromOnnx(r.onnx), r.t);
    EXPECT_EQ(elementSize(r.t), r.size);
    EXPECT_STREQ(longName(r.t), r.longName);
    EXPECT_STREQ(shortName(r.t), r.shortName);
    EXPECT_EQ(toString(r.t), r.shortName);
    EXPECT_EQ(parseElementType(r.shortName), r.t);
    EXPECT_EQ(parseElementType(r.longName), r.t);
    EXPECT_EQ(isFloat(r.t), r.isFloat);
    EXPECT_EQ(isInteger(r.t), r.isInteger);
    EXPECT_EQ(isSigned(r.t), r.isSigned);
    EXPECT_EQ(isComplex(r.t), r.t == ElementType::C64 || r.t == ElementType::C128);
    EXPECT_EQ(isNumeric(r.t), r.t != ElementType::Undefined && r.t != ElementType::String);
  }
}

TEST(ElementType, UnknownNames) {
  EXPECT_FALSE(parseElementType("float"));
  EXPECT_FALSE(parseElementType(""));
  EXPECT_FALSE(parseElementType("F32"));
  EXPECT_EQ(elementTypeFromOnnx(17), ElementType::F8E4M3FN);
  EXPECT_EQ(elementTypeFromOnnx(24), ElementType::F8E8M0);
  EXPECT_FALSE(elementTypeFromOnnx(25)); // uint2 (opset 25)
  EXPECT_FALSE(elementTypeFromOnnx(-1));
  EXPECT_EQ(elementSize(ElementType(200)), 0u);
  EXPECT_STREQ(shortName(ElementType(200)), "?");
}

} // namespace
} // namespace sf
