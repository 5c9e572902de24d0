// ONNX's 8- and 4-bit floats: decoding by the formats' fields, encoding by search over the
// (at most 128) non-negative finite codes, which grow with the code.
#include "shapeflow/support/narrow_float.h"

#include <cmath>
#include <limits>

namespace sf {
namespace {

struct Format {
  int expBits, mantBits, bias;
  uint8_t largest; // the largest finite non-negative code
  uint8_t sign;    // the sign bit (0: unsigned)
};

Format formatOf(NarrowFloat f) {
  switch (f) {
  case NarrowFloat::E4M3FN: return {4, 3, 7, 0x7e, 0x80};
  case NarrowFloat::E4M3FNUZ: return {4, 3, 8, 0x7f, 0x80};
  case NarrowFloat::E5M2: return {5, 2, 15, 0x7b, 0x80};
  case NarrowFloat::E5M2FNUZ: return {5, 2, 16, 0x7f, 0x80};
  case NarrowFloat::E8M0: return {8, 0, 127, 0xfe, 0};
  case NarrowFloat::E2M1: return {2, 1, 1, 0x7, 0x8};
  }
  return {4, 3, 7, 0x7e, 0x80};
}

/// The value of a non-negative finite code of a sign-magnitude format.
double magnitude(const Format &m, uint32_t code) {
  uint32_t mant = code & ((1u << m.mantBits) - 1);
  uint32_t exp = (code >> m.mantBits) & ((1u << m.expBits) - 1);
  if (exp == 0 && m.mantBits > 0) return std::ldexp(double(mant), 1 - m.bias - m.mantBits);
  return std::ldexp(double(mant | (1u << m.mantBits)), int(exp) - m.bias - m.mantBits);
}

uint8_t nanCode(NarrowFloat f, bool negative) {
  switch (f) {
  case NarrowFloat::E4M3FN: return negative ? 0xff : 0x7f;
  case NarrowFloat::E5M2: return negative ? 0xfe : 0x7e;
  case NarrowFloat::E8M0: return 0xff;
  case NarrowFloat::E2M1: return 0x8; // no NaN: negative zero, as ONNX's reference gives
  default: return 0x80; // the fnuz formats' one NaN
  }
}

/// An e8m0 code: the power of two nearest |v| by `rounding` (0 for zero and what is below the
/// smallest power, the largest power for what is above it when saturating, else NaN).
uint8_t powerCode(double v, bool saturate, PowerRounding rounding) {
  if (std::isnan(v)) return 0xff;
  v = std::fabs(v);
  if (v == 0) return 0;
  if (std::isinf(v)) return saturate ? 0xfe : 0xff;
  int e;
  double frac = std::frexp(v, &e); // v = frac * 2^e, frac in [0.5, 1)
  int lower = e - 1;               // 2^lower <= v < 2^(lower + 1)
  int power = lower;
  if (frac != 0.5) {
    if (rounding == PowerRounding::Up) power = lower + 1;
    else if (rounding == PowerRounding::Nearest) power = v >= std::ldexp(1.5, lower) ? lower + 1 : lower;
  }
  int code = power + 127;
  if (code < 0) return 0;
  if (code > 0xfe) return saturate ? 0xfe : 0xff;
  return uint8_t(code);
}

} // namespace

double narrowToDouble(NarrowFloat f, uint32_t code) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const Format m = formatOf(f);
  code &= f == NarrowFloat::E2M1 ? 0xfu : 0xffu;
  if (f == NarrowFloat::E8M0) return code == 0xff ? kNaN : std::ldexp(1.0, int(code) - 127);
  const bool negative = (code & m.sign) != 0;
  const uint32_t bits = code & ~uint32_t(m.sign);
  switch (f) {
  case NarrowFloat::E4M3FN:
    if (bits == 0x7f) return kNaN;
    break;
  case NarrowFloat::E4M3FNUZ:
  case NarrowFloat::E5M2FNUZ:
    if (code == 0x80) return kNaN;
    break;
  case NarrowFloat::E5M2:
    if ((bits >> 2) == 0x1f) return (bits & 3) ? kNaN : (negative ? -INFINITY : INFINITY);
    break;
  default: break;
  }
  double v = magnitude(m, bits);
  return negative ? -v : v;
}

uint8_t doubleToNarrow(NarrowFloat f, double v, bool saturate, PowerRounding rounding) {
  if (f == NarrowFloat::E8M0) return powerCode(v, saturate, rounding);
  const Format m = formatOf(f);
  const bool negative = std::signbit(v);
  if (std::isnan(v)) return nanCode(f, negative);
  const bool fnuz = f == NarrowFloat::E4M3FNUZ || f == NarrowFloat::E5M2FNUZ;
  auto withSign = [&](uint8_t code) -> uint8_t {
    if (code == 0 && fnuz) return 0; // no negative zero: its code is NaN
    return negative ? uint8_t(code | m.sign) : code;
  };
  const double a = std::fabs(v);
  const double top = magnitude(m, m.largest);
  auto overflow = [&]() -> uint8_t {
    if (saturate || f == NarrowFloat::E2M1) return withSign(m.largest);
    if (f == NarrowFloat::E5M2) return negative ? 0xfc : 0x7c;
    return nanCode(f, negative);
  };
  if (std::isinf(a)) return overflow();
  if (a >= top) {
    // Rounds to the largest value below half a step beyond it (a tie goes to an even code).
    const double step = top - magnitude(m, m.largest - 1u);
    const double edge = top + step / 2;
    if (a < edge || (a == edge && (m.largest & 1) == 0)) return withSign(m.largest);
    return overflow();
  }
  // The codes below `largest` grow with the code: find the two around a.
  uint32_t lo = 0, hi = m.largest;
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    (magnitude(m, mid) <= a ? lo : hi) = mid;
  }
  const double below = magnitude(m, lo), above = magnitude(m, hi);
  uint32_t code;
  if (a - below < above - a) code = lo;
  else if (above - a < a - below) code = hi;
  else code = (lo & 1) == 0 ? lo : hi;
  return withSign(uint8_t(code));
}

} // namespace sf
