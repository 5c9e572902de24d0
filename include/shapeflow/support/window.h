// One axis of a convolution's or pool's window: auto_pad, the padding it gives, the output length.
// Shared by the window rules (src/ops/conv_pool_window.cpp) and kernels
// (src/eval/kernels/conv_pool*.cpp).
#pragma once

#include "shapeflow/support/pool_length.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sf {

/// ONNX's auto_pad attribute of Conv, ConvTranspose and the pools.
enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

/// auto_pad as the attribute spells it (NOTSET or empty, SAME_UPPER, SAME_LOWER, VALID); nullopt
/// for any other text.
inline std::optional<AutoPad> parseAutoPad(std::string_view text) {
  if (text == "NOTSET" || text.empty()) return AutoPad::NotSet;
  if (text == "SAME_UPPER") return AutoPad::SameUpper;
  if (text == "SAME_LOWER") return AutoPad::SameLower;
  if (text == "VALID") return AutoPad::Valid;
  return std::nullopt;
}

inline bool isSamePadding(AutoPad p) { return p == AutoPad::SameUpper || p == AutoPad::SameLower; }

/// The padding before and after one axis.
struct PadPair {
  int64_t begin = 0, end = 0;
};

/// SAME padding: the `total` padding of an axis split in two, the larger half (when the total is
/// odd) at the end for SAME_UPPER and at the beginning for SAME_LOWER: begin = total / 2 for
/// SAME_UPPER, total - total / 2 for SAME_LOWER. Any other `p` splits as SAME_UPPER (a
/// ConvTranspose given output_shape).
inline PadPair splitSamePadding(int64_t total, AutoPad p) {
  int64_t small = total / 2, big = total - small;
  if (p == AutoPad::SameLower) return {big, small};
  return {small, big};
}

/// The extent of a kernel of `kernel` taps `dilation` apart: (kernel - 1) * dilation + 1.
inline int64_t windowExtent(int64_t kernel, int64_t dilation) { return (kernel - 1) * dilation + 1; }

/// The output length of an input of length `in` >= 0 with SAME padding: ceil(in / stride).
inline int64_t sameOutputLength(int64_t in, int64_t stride) { return in / stride + (in % stride > 0 ? 1 : 0); }

/// One axis of a window op: its pads after auto_pad, and its output length.
struct WindowAxis {
  int64_t padBegin = 0, padEnd = 0;
  /// Negative where the window does not fit the padded input.
  int64_t out = 0;
};

/// Conv and the pools along one axis of length `in`, for a kernel of `kernel` taps, a positive
/// stride and dilation, the pads the attribute gives and auto_pad:
/// - SAME_UPPER, SAME_LOWER: out = ceil(in / stride); the total padding
///   max(0, (out - 1) * stride + extent - in) split by splitSamePadding (the given pads ignored);
/// - VALID: no padding; NOTSET: the given pads.
/// Without SAME, out = (in + pads - extent) / stride + 1 for a convolution, whose window must
/// fit; for a pool (`pool`) the runtimes' pooledLength (with `ceilMode`), where a window may
/// overhang a small input.
inline WindowAxis windowAxis(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                             int64_t padEnd, AutoPad autoPad, bool pool = false, bool ceilMode = false) {
  int64_t ext = windowExtent(kernel, dilation);
  if (isSamePadding(autoPad)) {
    int64_t out = sameOutputLength(in, stride);
    PadPair p = splitSamePadding(std::max<int64_t>(0, (out - 1) * stride + ext - in), autoPad);
    return {p.begin, p.end, out};
  }
  if (autoPad == AutoPad::Valid) padBegin = padEnd = 0;
  if (pool) return {padBegin, padEnd, pooledLength(in, ext, stride, padBegin, padEnd, ceilMode).value_or(-1)};
  int64_t span = in + padBegin + padEnd - ext;
  return {padBegin, padEnd, span >= 0 ? span / stride + 1 : -1};
}

/// ConvTranspose along one axis: the full output is stride * (in - 1) + output_padding + extent
/// long. Given an output length (output_shape) or SAME padding (out = in * stride), the full
/// length minus out is the total padding, split by splitSamePadding (the odd unit at the end
/// only with SAME_UPPER); otherwise the pads (none
/// with VALID) are cut from the full length. `out` may come out negative.
inline WindowAxis transposedWindowAxis(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                       int64_t padBegin, int64_t padEnd, int64_t outputPadding, AutoPad autoPad,
                                       std::optional<int64_t> outputLength = std::nullopt) {
  int64_t full = stride * (in - 1) + outputPadding + (kernel - 1) * dilation + 1;
  if (outputLength || isSamePadding(autoPad)) {
    int64_t out = outputLength ? *outputLength : in * stride;
    // ONNX (its reference, in Python's floor division; onnxruntime alike): the odd unit of a
    // total padding goes at the end with SAME_UPPER, else at the start, an output_shape without
    // auto_pad too; a negative total (an output longer than the full one) extends the end.
    const int64_t total = full - out, half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    if (autoPad == AutoPad::SameUpper) return {half, total - half, out};
    return {total - half, half, out};
  }
  if (autoPad == AutoPad::Valid) padBegin = padEnd = 0;
  return {padBegin, padEnd, full - padBegin - padEnd};
}

} // namespace sf
