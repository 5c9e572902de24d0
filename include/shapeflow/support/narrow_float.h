// ONNX's 8- and 4-bit floats (float8 e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0; float4 e2m1): a
// code to its value, and a value to the nearest code (ties to an even code), with ONNX's Cast
// rules for what no code holds: saturated to the largest finite value, or NaN or infinity.
#pragma once

#include <cstdint>

namespace sf {

enum class NarrowFloat : uint8_t { E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0, E2M1 };

/// How a value between two powers of two becomes an e8m0 code (Cast's round_mode).
enum class PowerRounding : uint8_t { Up, Down, Nearest };

/// The value of `code` (its low 8 bits; the low 4 for e2m1).
double narrowToDouble(NarrowFloat f, uint32_t code);
/// The code nearest `v`. Beyond the largest finite value (and infinities): that value when
/// `saturate` (e2m1 always), else infinity (e5m2) or NaN (the others). NaN: the NaN code (e2m1,
/// which has none: negative zero, as ONNX's reference). e8m0 holds powers of two only: of |v|,
/// `rounding` picks the power (zero and what is below the smallest: the smallest).
uint8_t doubleToNarrow(NarrowFloat f, double v, bool saturate = true, PowerRounding rounding = PowerRounding::Up);

} // namespace sf
