// Tests of the float exp, logistic and tanh the kernels vectorise (src/eval/kernels/vec_math.h),
// scalar and array forms: against libm's double results rounded to float, at most 2 ulp apart
// over a sweep of every float's bit pattern in steps (both signs, every exponent) and densely
// around 0 and the boundaries of exp's range; the special values exactly.
#include "../../../src/eval/kernels/vec_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace sf::eval::detail {
namespace {

/// Distance in representable floats between a and b (both finite).
int64_t ulpsApart(float a, float b) {
  auto ordered = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t(std::numeric_limits<int32_t>::min()) - i : int64_t(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

/// Every 1,999th bit pattern (NaNs left out), then each float within 4,096 steps of 0 and of the
/// given points, both signs.
std::vector<float> sweep(std::initializer_list<float> points) {
  std::vector<float> xs;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 1999) {
    float f = std::bit_cast<float>(uint32_t(b));
    if (!std::isnan(f)) xs.push_back(f);
  }
  for (float p : points)
    for (float s : {p, -p}) {
      float f = s;
      for (int i = 0; i < 4096; ++i) xs.push_back(f = std::nextafter(f, std::numeric_limits<float>::infinity()));
      f = s;
      for (int i = 0; i < 4096; ++i) xs.push_back(f = std::nextafter(f, -std::numeric_limits<float>::infinity()));
    }
  return xs;
}

/// The scalar form and the array form (what the kernels call: on this machine perhaps its
/// AVX2 clone) of one function, both within 2 ulp of `exact` rounded to float at every x.
template <class Scalar, class Exact>
void expectWithin2Ulp(const std::vector<float> &xs, Scalar scalar, void (*array)(float *, int64_t), Exact exact,
                      float flushBelow) {
  std::vector<float> arrayed = xs;
  array(arrayed.data(), int64_t(arrayed.size()));
  for (int form = 0; form < 2; ++form) {
    SCOPED_TRACE(form == 0 ? "scalar form" : "array form");
    int64_t worst = 0;
    float worstAt = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float x = xs[i], want = float(exact(double(x))), got = form == 0 ? scalar(x) : arrayed[i];
      if (std::isinf(want) || std::isinf(got)) {
        ASSERT_EQ(want, got) << "at " << x;
        continue;
      }
      if (std::abs(want) < flushBelow) { // exp's subnormal results are flushed to 0
        ASSERT_LE(std::abs(got), flushBelow) << "at " << x;
        continue;
      }
      int64_t d = ulpsApart(got, want);
      if (d > worst) worst = d, worstAt = x;
    }
    EXPECT_LE(worst, 2) << "worst at " << worstAt;
  }
}

TEST(VecMath, ExpIsWithinTwoUlpOfTheRoundedResult) {
  auto xs = sweep({0.0f, 88.0f, 88.72283f, 87.33654f, 0.34657f, 1.0f});
  expectWithin2Ulp(xs, [](float x) { return expVec(x); }, &expVec, [](double x) { return std::exp(x); },
                   std::numeric_limits<float>::min());
}

TEST(VecMath, SigmoidIsWithinTwoUlpOfTheRoundedResult) {
  auto xs = sweep({0.0f, 1.0f, 16.0f, 87.33654f, 88.72283f});
  expectWithin2Ulp(xs, [](float x) { return sigmoidVec(x); }, &sigmoidVec,
                   [](double x) { return 1 / (1 + std::exp(-x)); }, std::numeric_limits<float>::min());
}

TEST(VecMath, TanhIsWithinTwoUlpOfTheRoundedResult) {
  auto xs = sweep({0.0f, 0.625f, 1.0f, 9.0f, 9.02f, 10.0f, 4.5f});
  expectWithin2Ulp(xs, [](float x) { return tanhVec(x); }, &tanhVec, [](double x) { return std::tanh(x); }, 0.0f);
}

TEST(VecMath, SpecialValuesGiveTheirLimits) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(expVec(inf), inf);
  EXPECT_EQ(expVec(-inf), 0.0f);
  EXPECT_EQ(expVec(0.0f), 1.0f);
  EXPECT_EQ(expVec(100.0f), inf);
  EXPECT_EQ(expVec(-100.0f), 0.0f);
  EXPECT_TRUE(std::isnan(expVec(nan)));
  EXPECT_EQ(sigmoidVec(inf), 1.0f);
  EXPECT_EQ(sigmoidVec(-inf), 0.0f);
  EXPECT_EQ(sigmoidVec(0.0f), 0.5f);
  EXPECT_TRUE(std::isnan(sigmoidVec(nan)));
  EXPECT_EQ(tanhVec(inf), 1.0f);
  EXPECT_EQ(tanhVec(-inf), -1.0f);
  EXPECT_EQ(tanhVec(0.0f), 0.0f);
  EXPECT_EQ(tanhVec(1e-30f), 1e-30f);
  EXPECT_TRUE(std::isnan(tanhVec(nan)));
  // The array forms: the same limits, NaN kept, in a vector's body and its tail (11 elements).
  std::vector<float> xs = {-inf, -90.0f, nan, -0.3f, 0.0f, 0.2f, 0.7f, 5.0f, 20.0f, 89.0f, inf}, e = xs, s = xs, t = xs;
  expVec(e.data(), int64_t(e.size()));
  sigmoidVec(s.data(), int64_t(s.size()));
  tanhVec(t.data(), int64_t(t.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::isnan(xs[i])) {
      EXPECT_TRUE(std::isnan(e[i]) && std::isnan(s[i]) && std::isnan(t[i])) << i;
    } else if (std::isinf(xs[i]) || std::abs(xs[i]) > 80 || xs[i] == 0) {
      EXPECT_EQ(e[i], expVec(xs[i])) << i;
      EXPECT_EQ(s[i], sigmoidVec(xs[i])) << i;
      EXPECT_EQ(t[i], tanhVec(xs[i])) << i;
    }
  }
}

} // namespace
} // namespace sf::eval::detail
