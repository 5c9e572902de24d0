// Checked integer arithmetic for dims, element counts and byte sizes: an overflow is reported,
// never wrapped. kInf is the open upper end of an interval; saturating helpers keep it sticky.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace sf {

inline constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checkedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
/// Floor division (Python's //). b must be non-zero; INT64_MIN // -1 overflows.
inline std::optional<int64_t> checkedFloorDiv(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
/// Python's % (result has the sign of b). b must be non-zero.
inline std::optional<int64_t> checkedMod(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
inline int64_t floorDivUnchecked(int64_t a, int64_t b) { return *checkedFloorDiv(a, b); }

/// Saturating helpers for interval bounds: results beyond the int64 range clamp to
/// [-kInf, kInf], which stand for "unbounded" and so stay sound.
inline int64_t satAdd(int64_t a, int64_t b) {
  if (a == kInf || b == kInf) return (a == -kInf || b == -kInf) ? 0 : kInf;
  if (a == -kInf || b == -kInf) return -kInf;
  auto r = checkedAdd(a, b);
  if (!r) return a > 0 ? kInf : -kInf;
  if (*r >= kInf) return kInf;
  if (*r <= -kInf) return -kInf;
  return *r;
}
inline int64_t satMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  if (a == kInf || a == -kInf || b == kInf || b == -kInf) return neg ? -kInf : kInf;
  auto r = checkedMul(a, b);
  if (!r || *r >= kInf || *r <= -kInf) return neg ? -kInf : kInf;
  return *r;
}

} // namespace sf
