// What the integer and quantized products share: zero points, optional inputs, output ranges.
// Used by MatMulInteger and QLinearMatMul (matmul.cpp), ConvInteger and QLinearConv
// (conv_pool_quantized.cpp), all computed exactly in doubles.
#pragma once

#include "../kernel_util.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace sf::eval::detail {

/// x - zero point, the zero point per tensor or per index along `axis` (rows of A, columns of
/// B, output channels of W). A per-index zero point must have one element per index of an axis
/// that exists (`axis` may be negative: an operand of too low a rank has none).
inline Result<std::vector<double>> shifted(std::vector<double> v, const Shape &s, const std::vector<double> &zp,
                                           int64_t axis, const char *name) {
  if (zp.empty()) return v;
  if (zp.size() == 1) {
    for (double &x : v) x -= zp[0];
    return v;
  }
  if (axis < 0 || axis >= int64_t(s.size()))
    return errorf("{} has {} elements; with an operand of shape {} it must have one", name, zp.size(),
                  shapeText(s));
  const int64_t length = s[size_t(axis)];
  if (int64_t(zp.size()) != length)
    return errorf("{} has {} elements; it must have one, or one per index of axis {} of {}", name,
                  zp.size(), axis, shapeText(s));
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < s.size(); ++d) inner *= s[d];
  for (size_t i = 0; i < v.size(); ++i) v[i] -= zp[size_t((int64_t(i) / inner) % length)];
  return v;
}

/// Input `i` as doubles, empty where the node does not have it.
inline Result<std::vector<double>> optionalDoubles(EvalContext &ctx, size_t i) {
  if (!ctx.hasInput(i)) return std::vector<double>{};
  return doubles(ctx.input(i));
}

/// DynamicQuantizeLinear's uint8 quantization of `v` in place (its range widened to hold 0, 255
/// steps, the zero point rounded and saturated, in float as onnxruntime computes it; a range of
/// 0 has the scale 1): the scale and the zero point.
inline std::pair<float, float> quantizeU8Dynamic(std::vector<double> &v) {
  float lo = 0, hi = 0;
  for (double x : v) lo = std::min(lo, float(x)), hi = std::max(hi, float(x));
  // A range of 0 (every element 0, or none) has the scale 1, as onnxruntime gives it.
  const float scale = hi - lo == 0 ? 1.0f : (hi - lo) / 255.0f;
  const float zp = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
  for (double &x : v) x = std::clamp(double(std::nearbyint(float(x) / scale)) + zp, 0.0, 255.0);
  return {scale, zp};
}

/// The range of a quantized output type (u8, i8).
inline Result<std::pair<double, double>> quantRange(ElementType t) {
  if (t == ElementType::U8) return std::pair{0.0, 255.0};
  if (t == ElementType::I8) return std::pair{-128.0, 127.0};
  return errorf("quantized type {} is not supported", shortName(t));
}

} // namespace sf::eval::detail
