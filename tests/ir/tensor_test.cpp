// Tensors: construction (owned, views, strings, without data), conversions including f16 and
// bf16, budgets, byte sizes, printing.
#include "shapeflow/ir/tensor.h"

#include "ir_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace sf {
namespace {

TEST(Half, KnownValues) {
  struct {
    uint16_t bits;
    float value;
  } rows[] = {
      {0x0000, 0.0f},         {0x3c00, 1.0f},        {0xc000, -2.0f},
      {0x3800, 0.5f},         {0x7bff, 65504.0f},    {0x0400, 0x1p-14f},
      {0x0001, 0x1p-24f},     {0x03ff, 0x3ffp-24f},  {0x7c00, INFINITY},
      {0xfc00, -INFINITY},    {0x3555, 0.333251953125f},
  };
  for (auto r : rows) {
    SCOPED_TRACE(r.bits);
    EXPECT_EQ(halfToFloat(r.bits), r.value);
    EXPECT_EQ(floatToHalf(r.value), r.bits);
  }
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_EQ(floatToHalf(NAN) & 0x7c00, 0x7c00);
  EXPECT_NE(floatToHalf(NAN) & 0x03ff, 0);
}

TEST(Half, Rounding) {
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff); // below the halfway point to inf
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // ties to even: inf
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  // 1 + 3*2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties to even (the latter).
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);        // half of the smallest subnormal: to even
  EXPECT_EQ(floatToHalf(0x1.8p-25f), 0x0001);      // above half: rounds up
  EXPECT_EQ(floatToHalf(0x1p-30f), 0x0000);        // underflow
  EXPECT_EQ(floatToHalf(0x3ffp-24f + 0x1p-25f), 0x0400); // ties to even: into the normals
}

TEST(Half, EveryHalfRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = halfToFloat(uint16_t(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToHalf(f), b) << b;
  }
}

TEST(BFloat16, Conversions) {
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(3.140625f), 0x4049);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even.
  EXPECT_EQ(floatToBfloat16(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(floatToBfloat16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(NAN))));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bfloat16ToFloat(uint16_t(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToBfloat16(f), b) << b;
  }
}

TEST(Tensor, Int64s) {
  Tensor t = Tensor::fromInt64s({1, -1, 7});
  EXPECT_EQ(t.type(), ElementType::I64);
  EXPECT_EQ(t.shape(), (Shape{3}));
  EXPECT_EQ(t.elementCount(), 3);
  EXPECT_EQ(GET(t.byteSize()), 24);
  EXPECT_EQ(t.bytes().size(), 24u);
  EXPECT_EQ(GET(t.toInt64s(3)), (std::vector<int64_t>{1, -1, 7}));
  EXPECT_EQ(GET(t.toDoubles(3)), (std::vector<double>{1, -1, 7}));
  EXPECT_EQ(toString(t), "i64[3] [1, -1, 7]");
}

TEST(Tensor, EveryIntegerTypeConverts) {
  for (ElementType ty : {ElementType::I8, ElementType::I16, ElementType::I32, ElementType::I64}) {
    Tensor t = GET(Tensor::fromInt64s({2, 2}, {-3, 0, 5, 100}, ty));
    EXPECT_EQ(GET(t.toInt64s(4)), (std::vector<int64_t>{-3, 0, 5, 100})) << shortName(ty);
    EXPECT_EQ(t.bytes().size(), 4 * elementSize(ty));
  }
  for (ElementType ty : {ElementType::U8, ElementType::U16, ElementType::U32, ElementType::U64}) {
    Tensor t = GET(Tensor::fromInt64s({3}, {0, 5, 200}, ty));
    EXPECT_EQ(GET(t.toInt64s(3)), (std::vector<int64_t>{0, 5, 200})) << shortName(ty);
    EXPECT_FALSE(Tensor::fromInt64s({1}, {-1}, ty).ok()) << shortName(ty);
  }
  EXPECT_FALSE(Tensor::fromInt64s({1}, {128}, ElementType::I8).ok());
  EXPECT_FALSE(Tensor::fromInt64s({1}, {256}, ElementType::U8).ok());
  EXPECT_FALSE(Tensor::fromInt64s({1}, {int64_t(1) << 40}, ElementType::I32).ok());
  Tensor b = GET(Tensor::fromInt64s({2}, {1, 0}, ElementType::Bool));
  EXPECT_EQ(GET(b.toInt64s(2)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(toString(b), "bool[2] [true, false]");
  EXPECT_FALSE(Tensor::fromInt64s({1}, {2}, ElementType::Bool).ok());
  EXPECT_FALSE(Tensor::fromInt64s({1}, {2}, ElementType::F32).ok());
}

TEST(Tensor, U64BeyondInt64) {
  std::vector<std::byte> bytes(8);
  uint64_t big = uint64_t(1) << 63;
  std::memcpy(bytes.data(), &big, 8);
  Tensor t = GET(Tensor::fromBytes(ElementType::U64, {1}, bytes));
  auto ints = t.toInt64s(1);
  ASSERT_FALSE(ints.ok());
  EXPECT_NE(ints.error().message.find("does not fit int64"), std::string::npos);
  EXPECT_EQ(GET(t.toDoubles(1))[0], 0x1p63);
  EXPECT_EQ(toString(t), "u64[1] [9223372036854775808]");
  EXPECT_EQ(GET(Tensor::fromText(ElementType::U64, {1}, {"9223372036854775808"})), t);
}

TEST(Tensor, Doubles) {
  Tensor f = GET(Tensor::fromDoubles(ElementType::F32, {2}, {0.5, -1.25}));
  EXPECT_EQ(GET(f.toDoubles(2)), (std::vector<double>{0.5, -1.25}));
  EXPECT_EQ(toString(f), "f32[2] [0.5, -1.25]");
  EXPECT_FALSE(f.toInt64s(2).ok());
  Tensor h = GET(Tensor::fromDoubles(ElementType::F16, {3}, {1.0, 0.1, 70000.0}));
  auto hv = GET(h.toDoubles(3));
  EXPECT_EQ(hv[0], 1.0);
  EXPECT_EQ(hv[1], double(halfToFloat(floatToHalf(0.1f))));
  EXPECT_EQ(hv[2], INFINITY);
  EXPECT_EQ(toString(h), "f16[3] [1.0, 0.099975586, inf]");
  Tensor bf = GET(Tensor::fromDoubles(ElementType::BF16, {2}, {3.140625, -2.0}));
  EXPECT_EQ(GET(bf.toDoubles(2)), (std::vector<double>{3.140625, -2.0}));
  Tensor d = GET(Tensor::fromDoubles(ElementType::F64, {1}, {0.1}));
  EXPECT_EQ(GET(d.toDoubles(1))[0], 0.1);
  EXPECT_EQ(toString(d), "f64[1] [0.1]");
  // Integers from doubles must be integral.
  EXPECT_EQ(GET(GET(Tensor::fromDoubles(ElementType::I32, {1}, {-4.0})).toInt64s(1))[0], -4);
  EXPECT_FALSE(Tensor::fromDoubles(ElementType::I32, {1}, {0.5}).ok());
  EXPECT_FALSE(Tensor::fromDoubles(ElementType::I64, {1}, {NAN}).ok());
  EXPECT_FALSE(Tensor::fromDoubles(ElementType::F32, {2}, {1.0}).ok());
  EXPECT_FALSE(Tensor::fromDoubles(ElementType::String, {1}, {1.0}).ok());
}

TEST(Tensor, Scalars) {
  Tensor s = GET(Tensor::scalar(ElementType::F32, 0.5));
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.elementCount(), 1);
  EXPECT_EQ(toString(s), "f32[] 0.5");
  Tensor i = GET(Tensor::fromInt64s({}, {-7}));
  EXPECT_EQ(toString(i), "i64[] -7");
  Tensor c = GET(Tensor::scalar(ElementType::F64, 2.0));
  EXPECT_EQ(toString(c), "f64[] 2.0");
}

TEST(Tensor, Complex) {
  Tensor c = GET(Tensor::fromDoubles(ElementType::C64, {2}, {1.0, -2.0, 0.5, 0.0}));
  EXPECT_EQ(c.bytes().size(), 16u);
  EXPECT_EQ(toString(c), "c64[2] [1.0, -2.0, 0.5, 0.0]");
  EXPECT_FALSE(c.toDoubles(2).ok());
  Tensor s = GET(Tensor::fromDoubles(ElementType::C128, {}, {1.0, 2.0}));
  EXPECT_EQ(toString(s), "c128[] [1.0, 2.0]");
  EXPECT_FALSE(Tensor::fromDoubles(ElementType::C64, {2}, {1.0, 2.0}).ok());
}

TEST(Tensor, Strings) {
  Tensor s = GET(Tensor::fromStrings({2}, {"a", "b\"c"}));
  EXPECT_TRUE(s.isString());
  EXPECT_EQ(s.strings().size(), 2u);
  EXPECT_TRUE(s.bytes().empty());
  EXPECT_EQ(GET(s.byteSize()), 4);
  EXPECT_EQ(toString(s), "str[2] [\"a\", \"b\\\"c\"]");
  EXPECT_FALSE(s.toInt64s(10).ok());
  EXPECT_FALSE(s.toDoubles(10).ok());
  EXPECT_FALSE(Tensor::fromStrings({3}, {"a"}).ok());
}

TEST(Tensor, ViewKeepsOwnerAlive) {
  auto owner = std::make_shared<std::vector<int32_t>>(std::vector<int32_t>{10, 20, 30, 40});
  std::weak_ptr<std::vector<int32_t>> watch = owner;
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(owner->data()), 16);
  Tensor t = GET(Tensor::view(ElementType::I32, {2, 2}, bytes, owner));
  owner.reset();
  EXPECT_FALSE(watch.expired());
  Tensor copy = t;
  t = Tensor();
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(GET(copy.toInt64s(4)), (std::vector<int64_t>{10, 20, 30, 40}));
  copy = Tensor();
  EXPECT_TRUE(watch.expired());
}

TEST(Tensor, UnalignedView) {
  std::vector<std::byte> raw(1 + 8);
  int64_t v = -5;
  std::memcpy(raw.data() + 1, &v, 8);
  auto keep = std::make_shared<std::vector<std::byte>>(raw);
  Tensor t = GET(Tensor::view(ElementType::I64, {1}, {keep->data() + 1, 8}, keep));
  EXPECT_EQ(GET(t.toInt64s(1))[0], -5);
}

TEST(Tensor, SizeChecks) {
  EXPECT_FALSE(Tensor::fromBytes(ElementType::F32, {2}, std::vector<std::byte>(7)).ok());
  EXPECT_FALSE(Tensor::fromBytes(ElementType::String, {1}, {}).ok());
  EXPECT_FALSE(Tensor::fromBytes(ElementType::Undefined, {}, {}).ok());
  // Overflowing element counts and byte sizes are errors, never wraps.
  int64_t big = int64_t(1) << 40;
  EXPECT_FALSE(Tensor::withoutData(ElementType::F32, {big, big}).ok());
  EXPECT_FALSE(Tensor::withoutData(ElementType::F64, {int64_t(1) << 61}).ok());
  EXPECT_FALSE(Tensor::withoutData(ElementType::F32, {-1}).ok());
  Tensor z = GET(Tensor::fromBytes(ElementType::F32, {0, 3}, {}));
  EXPECT_EQ(z.elementCount(), 0);
  EXPECT_EQ(toString(z), "f32[0,3] []");
}

TEST(Tensor, Budget) {
  Tensor t = Tensor::fromInt64s(std::vector<int64_t>(100, 1));
  auto r = t.toInt64s(99);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "tensor i64[100] has 100 elements, more than the budget of 99");
  EXPECT_TRUE(t.toInt64s(100).ok());
}

TEST(Tensor, WithoutData) {
  Tensor w = GET(Tensor::withoutData(ElementType::F32, {64, 3, 7, 7}));
  EXPECT_FALSE(w.hasData());
  EXPECT_EQ(w.elementCount(), 9408);
  EXPECT_EQ(GET(w.byteSize()), 37632);
  EXPECT_EQ(toString(w), "f32[64,3,7,7] <9408 elements>");
  auto r = w.toDoubles(1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not loaded"), std::string::npos);
}

TEST(Tensor, PrintsLargeTensorsShort) {
  Tensor t = GET(Tensor::fromDoubles(ElementType::F32, {64, 3, 7, 7},
                                     std::vector<double>(64 * 3 * 7 * 7, 0.0)));
  EXPECT_EQ(toString(t), "f32[64,3,7,7] <9408 elements>");
  EXPECT_EQ(toString(Tensor::fromInt64s({1, 2, 3}), 2), "i64[3] <3 elements>");
}

TEST(Tensor, FromTextRoundTrips) {
  struct Row {
    ElementType t;
    Shape shape;
    std::vector<std::string> elems;
  } rows[] = {
      {ElementType::I64, {2}, {"1", "-1"}},
      {ElementType::I8, {3}, {"-128", "0", "127"}},
      {ElementType::U16, {1}, {"65535"}},
      {ElementType::Bool, {2}, {"true", "false"}},
      {ElementType::F32, {4}, {"0.1", "-2.5", "1e-05", "3.4028235e+38"}},
      {ElementType::F32, {3}, {"inf", "-inf", "nan"}},
      {ElementType::F16, {2}, {"0.099975586", "65504.0"}},
      {ElementType::BF16, {2}, {"3.140625", "-0.0"}},
      {ElementType::F64, {2}, {"0.1", "1e+300"}},
      {ElementType::C64, {1}, {"1.5", "-2.0"}},
      {ElementType::String, {2}, {"x", ""}},
  };
  for (const Row &r : rows) {
    SCOPED_TRACE(shortName(r.t));
    Tensor t = GET(Tensor::fromText(r.t, r.shape, r.elems));
    std::vector<std::string> back;
    for (int64_t i = 0; i < t.elementCount(); ++i) back.push_back(t.elementText(i));
    Tensor again = GET(Tensor::fromText(r.t, r.shape, [&] {
      std::vector<std::string> spelled;
      for (int64_t i = 0; i < t.elementCount(); ++i) {
        std::string s = t.elementText(i);
        if (r.t == ElementType::String) s = s.substr(1, s.size() - 2);
        if (isComplex(r.t)) {
          auto comma = s.find(", ");
          spelled.push_back(s.substr(0, comma));
          s = s.substr(comma + 2);
        }
        spelled.push_back(s);
      }
      return spelled;
    }()));
    EXPECT_EQ(t, again);
  }
  EXPECT_FALSE(Tensor::fromText(ElementType::I64, {1}, {"1.5"}).ok());
  EXPECT_FALSE(Tensor::fromText(ElementType::I8, {1}, {"300"}).ok());
  EXPECT_FALSE(Tensor::fromText(ElementType::F32, {1}, {"x"}).ok());
  EXPECT_FALSE(Tensor::fromText(ElementType::Bool, {1}, {"yes"}).ok());
  EXPECT_FALSE(Tensor::fromText(ElementType::F32, {2}, {"1.0"}).ok());
}

TEST(Tensor, Equality) {
  EXPECT_EQ(Tensor::fromInt64s({1, 2}), Tensor::fromInt64s({1, 2}));
  EXPECT_NE(Tensor::fromInt64s({1, 2}), Tensor::fromInt64s({1, 3}));
  EXPECT_NE(Tensor::fromInt64s({1, 2}), GET(Tensor::fromInt64s({1, 2}, {1, 2})));
  EXPECT_NE(Tensor::fromInt64s({1, 2}), GET(Tensor::fromInt64s({2}, {1, 2}, ElementType::I32)));
}

} // namespace
} // namespace sf
