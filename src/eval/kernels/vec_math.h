// exp, the logistic function and tanh in float, written so that a loop over an array of them
// vectorises (no calls, no branches: both sides of a choice are computed and one is kept; GCC
// needs -fno-trapping-math for that, which src/eval/CMakeLists.txt gives the kernels).
// Within 2 ulp of the correctly rounded result in float across the whole range (the tests in
// tests/eval/kernels/vec_math_test.cpp sweep it); NaN stays NaN, infinities give the limits.
// The recurrent ops run their gates' activations through these (libm's scalar expf and tanhf
// were most of a GRU's time).
#pragma once

#include <bit>
#include <cstdint>

namespace sf::eval::detail {

/// e^x in float: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so that n ln2 is exact),
/// e^r by a degree-7 polynomial (Cephes' expf coefficients), times 2^n put in the exponent's
/// bits. Below -87.3 the result is 0 (no subnormals), above 88.7 it is infinity.
inline float expVec(float x) {
  constexpr float hi = 88.72283f, lo = -87.33654f;
  const bool over = x > hi, under = x < lo;
  float c = over ? hi : under ? lo : x; // NaN passes through both comparisons unchanged
  // n = round(c / ln2) by adding 1.5 * 2^23: n is then in the low bits of the sum's mantissa.
  constexpr float shifter = 12582912.0f;
  float sum = c * 1.44269504088896341f + shifter;
  float n = sum - shifter;
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float er = p * r * r + r + 1.0f;
  // 2^n for n in [-126, 128]: n + 127 in the exponent's 8 bits. n = 128 (c near 88.7) is built as
  // 2^127 * 2 so that the biased exponent never reaches 255.
  uint32_t bits = std::bit_cast<uint32_t>(sum) - std::bit_cast<uint32_t>(shifter); // n, two's complement
  uint32_t big = (bits + 127u) == 255u ? 1u : 0u;
  float scale = std::bit_cast<float>(((bits + 127u - big) & 0xffu) << 23);
  float v = er * scale * (big ? 2.0f : 1.0f);
  constexpr float inf = std::bit_cast<float>(0x7f800000u);
  return over ? inf : under ? 0.0f : v;
}

/// 1 / (1 + e^-x).
inline float sigmoidVec(float x) { return 1.0f / (1.0f + expVec(-x)); }

/// tanh x: below |x| = 0.625 an odd polynomial (Cephes' tanhf coefficients: relative accuracy near
/// 0), above it 1 - 2 / (e^2|x| + 1) with x's sign, |x| taken at most 10 (beyond 9.02 the result
/// rounds to 1 in float; so infinities give +-1 and NaN gives NaN).
inline float tanhVec(float x) {
  const float a = x < 0 ? -x : x;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float e = expVec(2.0f * (a > 10.0f ? 10.0f : a));
  float large = 1.0f - 2.0f / (e + 1.0f);
  large = x < 0 ? -large : large;
  return a < 0.625f ? small : large;
}

/// Whether this processor has AVX2 and FMA (asked once): the kernels compiled a second time for
/// them (`__attribute__((target("avx2,fma")))`) run only where it does.
bool hasAvx2Fma();

/// The three over arrays, in place (vec_math.cpp: in 8-wide vectors with FMA where the machine
/// has AVX2, else in the build's 4-wide ones; the results differ by at most the rounding of a
/// fused multiply-add).
void expVec(float *p, int64_t n);
void sigmoidVec(float *p, int64_t n);
void tanhVec(float *p, int64_t n);

} // namespace sf::eval::detail
