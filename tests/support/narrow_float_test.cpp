// ONNX's 8- and 4-bit floats: the formats' landmarks (largest values, NaN and infinity codes),
// every code back to itself through its value, rounding ties to an even code, and Cast's
// saturation rules.
#include "shapeflow/support/narrow_float.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sf {
namespace {

TEST(NarrowFloat, LargestValues) {
  EXPECT_EQ(narrowToDouble(NarrowFloat::E4M3FN, 0x7e), 448.0);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E4M3FNUZ, 0x7f), 240.0);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E5M2, 0x7b), 57344.0);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E5M2FNUZ, 0x7f), 57344.0);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E2M1, 0x7), 6.0);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E2M1, 0x1), 0.5);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E8M0, 127), 1.0);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E8M0, 0), std::ldexp(1.0, -127));
}

TEST(NarrowFloat, NanAndInfinityCodes) {
  EXPECT_TRUE(std::isnan(narrowToDouble(NarrowFloat::E4M3FN, 0x7f)));
  EXPECT_TRUE(std::isnan(narrowToDouble(NarrowFloat::E4M3FN, 0xff)));
  EXPECT_TRUE(std::isnan(narrowToDouble(NarrowFloat::E4M3FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(narrowToDouble(NarrowFloat::E5M2FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(narrowToDouble(NarrowFloat::E8M0, 0xff)));
  EXPECT_EQ(narrowToDouble(NarrowFloat::E5M2, 0x7c), INFINITY);
  EXPECT_EQ(narrowToDouble(NarrowFloat::E5M2, 0xfc), -INFINITY);
}

TEST(NarrowFloat, EveryCodeIsItsValuesNearestCode) {
  for (NarrowFloat f : {NarrowFloat::E4M3FN, NarrowFloat::E4M3FNUZ, NarrowFloat::E5M2, NarrowFloat::E5M2FNUZ,
                        NarrowFloat::E2M1}) {
    const uint32_t codes = f == NarrowFloat::E2M1 ? 16 : 256;
    for (uint32_t c = 0; c < codes; ++c) {
      double v = narrowToDouble(f, c);
      if (std::isnan(v)) continue;
      EXPECT_EQ(doubleToNarrow(f, v, false), c) << "format " << int(f) << " code " << c << " value " << v;
    }
  }
  for (uint32_t c = 0; c < 0xff; ++c) EXPECT_EQ(doubleToNarrow(NarrowFloat::E8M0, narrowToDouble(NarrowFloat::E8M0, c)), c);
}

TEST(NarrowFloat, TiesGoToAnEvenCode) {
  // 0.25 is halfway between float4's 0 (code 0) and 0.5 (code 1); 2.5 between 2 (4) and 3 (5).
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E2M1, 0.25), 0);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E2M1, 2.5), 4);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E2M1, -3.5), 0xe);
  // e4m3fn: 1 + 1/16 is halfway between 1 (0x38) and 1.125 (0x39).
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E4M3FN, 1.0625), 0x38);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E4M3FN, 1.0626), 0x39);
}

TEST(NarrowFloat, BeyondTheLargestSaturatesOrNot) {
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E4M3FN, 1e6, true), 0x7e);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E4M3FN, 1e6, false), 0x7f);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E4M3FN, 460.0, false), 0x7e); // rounds down to 448
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E5M2, INFINITY, true), 0x7b);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E5M2, INFINITY, false), 0x7c);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E5M2, -1e6, false), 0xfc);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E5M2FNUZ, 1e6, false), 0x80);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E2M1, 1e6, false), 0x7);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E4M3FNUZ, -0.0), 0); // no negative zero
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E8M0, 1.1), 128);   // rounded up to 2
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E8M0, 1.1, true, PowerRounding::Down), 127);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E8M0, 1.6, true, PowerRounding::Nearest), 128);
  EXPECT_EQ(doubleToNarrow(NarrowFloat::E8M0, 0.0), 0);
}

} // namespace
} // namespace sf
