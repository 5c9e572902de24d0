// What the convolution kernels share: a window at run time, loops over its positions and taps.
// Also Conv with an activation folded in, which FusedConv runs (fused.cpp).
#pragma once

#include "../dnnl.h"
#include "../kernel_util.h"

#include <vector>

namespace sf::eval::detail {

/// Spatial geometry of a window op over rank-k spatial dims.
struct Window {
  size_t k = 0;
  std::vector<int64_t> in, kernel, stride, dilation, padBegin, padEnd, out;
};

/// The window of a Conv or pool node on input shape `x` ([N, C, spatial...]) with `kernel`: its
/// strides, dilations and pads (auto_pad applied, support/window.h) and output lengths.
/// `pool`: the pooling ops' output lengths (pooledLength), where a window may overhang a small
/// input; for convolutions the window must fit.
Result<Window> windowOf(EvalContext &ctx, const Shape &x, std::vector<int64_t> kernel, bool ceilMode,
                        bool pool = false);

/// Calls f(outFlat, windowOrigins) for each output position; origins per spatial dim.
template <class F> void forEachPosition(const Window &w, F &&f) {
  int64_t total = 1;
  for (int64_t o : w.out) total *= o;
  std::vector<int64_t> idx(w.k, 0);
  for (int64_t o = 0; o < total; ++o) {
    f(o, idx);
    for (size_t d = w.k; d-- > 0;) {
      if (++idx[d] < w.out[d]) break;
      idx[d] = 0;
    }
  }
}

/// Calls f(inputFlatOffset or -1 for padding, kernelFlat) for each tap of the window at `pos`.
template <class F> void forEachTap(const Window &w, const std::vector<int64_t> &pos, F &&f) {
  int64_t taps = 1;
  for (int64_t kk : w.kernel) taps *= kk;
  std::vector<int64_t> kidx(w.k, 0);
  for (int64_t t = 0; t < taps; ++t) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < w.k; ++d) {
      int64_t i = pos[d] * w.stride[d] - w.padBegin[d] + kidx[d] * w.dilation[d];
      if (i < 0 || i >= w.in[d]) inside = false;
      off = off * w.in[d] + i;
    }
    f(inside ? off : -1, t);
    for (size_t d = w.k; d-- > 0;) {
      if (++kidx[d] < w.kernel[d]) break;
      kidx[d] = 0;
    }
  }
}

/// Input 0 ([n, c, hw...] f32 `x`, `spatial` dims) in the plain layout: `x` where the executor
/// keeps it plain, else a plain copy made in `plain`. An error where the layout cannot hold it.
Result<const float *> plainInput(const EvalContext &ctx, const float *x, int64_t n, int64_t c, int64_t hw,
                                 size_t spatial, std::vector<float> &plain);

/// Output 0, written plain at `p` ([n, c, hw] f32), moved into the layout the executor keeps it
/// in (nothing where that is plain).
Result<void> toOutputLayout(const EvalContext &ctx, float *p, int64_t n, int64_t c, int64_t hw, size_t spatial);

/// Conv, with `post` applied to its output (FusedConv): in oneDNN's pass where it runs the
/// convolution, else after the loops. With `addsZ`, input 3 (FusedConv's Z, where present) is
/// added to the output before `post`.
Result<void> convWith(EvalContext &ctx, PostOp post, bool addsZ = false);

} // namespace sf::eval::detail
