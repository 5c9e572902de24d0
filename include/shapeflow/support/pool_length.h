// The output length of a pooling window along one axis, as the runtimes compute it at the edges.
#pragma once

#include "shapeflow/support/checked.h"

#include <cstdint>
#include <optional>

namespace sf {

/// MaxPool/AveragePool/LpPool output length for input length `in`, window extent `ext`
/// ((kernel - 1) * dilation + 1), `stride` and the two pads: (in + pads - ext) / stride + 1 with
/// the division truncating toward zero, as onnxruntime computes it, so a window that overhangs a
/// small input by less than a stride still gives one output from its valid part (a 2-wide window
/// with stride 2 on a length-1 axis gives 1), and by up to two strides gives 0. With ceil_mode the
/// division rounds up and a last window that would start in the end padding is dropped.
/// nullopt when the result is negative (the window does not fit) or overflows.
inline std::optional<int64_t> pooledLength(int64_t in, int64_t ext, int64_t stride, int64_t padBegin,
                                           int64_t padEnd, bool ceilMode) {
  if (stride <= 0 || ext <= 0) return std::nullopt;
  auto padded = checkedAdd(padBegin, padEnd);
  auto total = padded ? checkedAdd(in, *padded) : std::nullopt;
  auto span = total ? checkedSub(*total, ext) : std::nullopt;
  if (!span) return std::nullopt;
  int64_t q = *span / stride; // truncates toward zero
  if (ceilMode && *span % stride > 0) ++q;
  auto out = checkedAdd(q, 1);
  if (!out) return std::nullopt;
  if (ceilMode && *out > 0) {
    auto start = checkedMul(*out - 1, stride);
    auto limit = checkedAdd(in, padBegin);
    if (!start || !limit) return std::nullopt;
    if (*start >= *limit) --*out;
  }
  if (*out < 0) return std::nullopt;
  return out;
}

} // namespace sf
