// Internal: the window rules shared by the convolutions and the pools (conv_pool.cpp): the
// window attributes and the output size of each spatial axis (conv_pool_window.cpp).
#pragma once

#include "shapeflow/ops/op.h"
#include "shapeflow/support/window.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace sf::window_rules {

inline Dimension dimAt(const Fact &f, size_t axis) {
  return f.shape.rankIsStatic() && axis < f.shape.size() ? f.shape[axis] : Dimension();
}

inline Dimension constDim(int64_t v) { return Dimension::constantValue(v); }

struct Window {
  size_t spatial = 0;
  std::vector<Dimension> kernel; // from kernel_shape or the weight; dynamic when unknown
  std::vector<int64_t> strides, dilations, pads; // pads: begins then ends
  AutoPad autoPad = AutoPad::NotSet;
  bool ceilMode = false;
  bool pool = false; // pooling ops: a window may overhang a small input (pooledLength)
};

/// The number of spatial axes: from the data's rank, else the weight's, else the attributes.
std::optional<size_t> spatialRank(const Fact &x, const Fact *w, const Attributes &attrs);

/// The `n` values of attribute `name` (`dflt` each when absent), each > 0 (`positive`) or >= 0.
Result<std::vector<int64_t>> intsOfSize(const Attributes &attrs, const char *name, size_t n,
                                        int64_t dflt, bool positive);

/// Reads kernel_shape, strides, dilations, pads, auto_pad (and ceil_mode for pools) for
/// `spatial` axes. `weightKernel` (possibly empty) are the weight's spatial dims: an explicit
/// kernel_shape must agree with them.
Result<Window> readWindow(InferContext &ctx, size_t spatial,
                          const std::vector<Dimension> &weightKernel, bool kernelRequired);

/// The output size of one spatial axis of a sliding window.
Result<Dimension> windowDim(InferContext &ctx, const Window &w, size_t i, const Dimension &in0);

/// [N, channels, out spatial...] for data `x` and the window.
Result<PartialShape> windowShape(InferContext &ctx, const Fact &x, const Window &w,
                                 const Dimension &channels);

} // namespace sf::window_rules
