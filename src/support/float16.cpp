// IEEE half and bfloat16 conversions (round to nearest even), shared by the wire decoder and
// tensors.
#include "shapeflow/support/float16.h"

#include <bit>

namespace sf {

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13); // inf or nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: value is mant * 2^-24, exact in float.
    float f = float(mant) * 0x1p-24f;
    return sign ? -f : f;
  }
  return std::bit_cast<float>(bits);
}

uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000) // inf, or nan kept quiet with its top payload bits
    return sign | 0x7c00 | (x > 0x7f800000 ? 0x200 | ((x >> 13) & 0x3ff) : 0);
  if (x >= 0x477ff000) return sign | 0x7c00; // >= 65520 rounds to inf
  if (x < 0x38800000) {
    // Below the smallest normal half: adding 0.5 lines the bits up so that the FPU's own
    // round-to-nearest-even produces the subnormal mantissa.
    float a = std::bit_cast<float>(x) + 0.5f;
    return sign | uint16_t(std::bit_cast<uint32_t>(a) - 0x3f000000u);
  }
  uint32_t odd = (x >> 13) & 1;
  x += (uint32_t(15 - 127) << 23) + 0xfff + odd;
  return sign | uint16_t(x >> 13);
}

float bfloat16ToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

uint16_t floatToBfloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40); // quiet nan
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

} // namespace sf
