// 16-bit floats: IEEE half (f16) and bfloat16 to and from float; conversions to 16 bits round to
// nearest even, and keep infinities and NaNs.
#pragma once

#include <cstdint>

namespace sf {

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBfloat16(float f);

} // namespace sf
