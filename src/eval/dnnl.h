// Convolution and pooling in f32 on oneDNN (Debian libdnnl-dev), the CPU library made for these
// kernels, where the build found it. Each function returns false, having written nothing that
// matters, when this build has no oneDNN or oneDNN does not take the case; the caller then runs
// its own kernel. Primitives and reordered weights are kept per thread across runs.
#pragma once

#include "shapeflow/eval/eval.h"
#include "shapeflow/ir/tensor.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace sf::eval::detail {

/// The geometry of a convolution or pooling over 1 to 3 spatial dims (NC + spatial, row-major).
struct WindowGeometry {
  int64_t n = 0, c = 0, m = 0, group = 1; // m: output channels (c for pools)
  std::vector<int64_t> in, kernel, stride, dilation, padBegin, padEnd, out;
  /// The layouts of the input and the output (Layout: plain NCHW, nChw16c [n, c/16, h, w, 16]
  /// or nChw8c for channels a multiple of the block, or channels last [n, h, w, c]); only 2
  /// spatial dims take the channel layouts.
  Layout src = Layout::Plain, dst = Layout::Plain;
};

/// NCHW <-> `layout` (`c` a multiple of the block for a blocked one), `hw` the spatial size (`to` must not
/// alias `from`; a plain layout is a copy).
void relayout(const float *from, float *to, int64_t n, int64_t c, int64_t hw, Layout layout, bool toLayout);

/// y = conv(x, w) (+ b per output channel), w [m, c/group, kernel...] the elements of the tensor
/// `weights`; with `keep` (a constant of the graph) the reordered weights are kept between runs,
/// keyed by the tensor's identity; b may be null.
/// An activation applied to the result in the same pass (a oneDNN post-op): a FusedConv's.
/// oneDNN's Relu and Clip map a NaN to the lower bound where ONNX's keep it: the caller asks for
/// them only where the convolution's output cannot be NaN (convWith, conv_pool.cpp).
struct PostOp {
  enum class Kind : uint8_t { None, Relu, Clip, Swish, HardSwish } kind = Kind::None;
  float alpha = 0; // Swish: x * sigmoid(alpha * x); Clip: the lower bound
  float beta = 0;  // Clip: the upper bound
};
/// `z`, where given, is added to the result before the activation (a residual connection:
/// FusedConv's Z), of y's shape and kept in y's layout; declined (false) unless y is kept in a
/// channel layout that a compiled kernel writes with the sum.
bool dnnlConv(const WindowGeometry &g, const float *x, const float *w,
              const std::shared_ptr<const Tensor> &weights, bool keep, const float *b, float *y,
              PostOp post = {}, const float *z = nullptr);

/// y = conv_transpose(x, w) (+ b per output channel), `g.c` the input channels and `g.m` the
/// output channels, w [c, m/group, kernel...] as ONNX's ConvTranspose holds it; `padBegin` and
/// `padEnd` such that out = (in - 1) * stride + (kernel - 1) * dilation + 1 - padBegin - padEnd.
/// Weights kept as dnnlConv's are.
bool dnnlDeconv(const WindowGeometry &g, const float *x, const float *w,
                const std::shared_ptr<const Tensor> &weights, bool keep, const float *b, float *y);

enum class PoolKind { Max, AverageIncludingPads, AverageExcludingPads };

/// Max or average pooling of x into y (no indices), dilations of 1.
bool dnnlPool(const WindowGeometry &g, PoolKind kind, const float *x, float *y);

/// y[m,n] = a[m,k] * B (+ bias[n]), B the elements `w` of the constant tensor `weights` (the same
/// tensor on every run: its identity and `w` key the packed copy kept between runs; `w` may be a
/// part of the tensor), stored [k,n], or [n,k] when `transposed`; `a` stored [k,m] when
/// `aTransposed`.
bool dnnlMatMul(int64_t m, int64_t k, int64_t n, const float *a, const float *w, bool transposed,
                const std::shared_ptr<const Tensor> &weights, const float *bias, float *y, bool aTransposed = false);

/// dnnlMatMul by one B (not transposed A, no bias) prepared for many products with other `a` and
/// `y` of the same sizes (a recurrent op's steps): the lookups, descriptors and memory objects
/// made once, each `run` only executes.
class DnnlProduct {
public:
  /// False where this build has no oneDNN or oneDNN declines; `run` is then not to be called.
  bool prepare(int64_t m, int64_t k, int64_t n, const float *w, bool transposed,
               const std::shared_ptr<const Tensor> &weights);
  /// y[m,n] = a[m,k] * B.
  void run(const float *a, float *y) const;

private:
  struct State;
  std::shared_ptr<State> s_;
};

/// GeluErf: x/2 (1 + erf(x / sqrt 2)).
enum class EltKind { Sigmoid, Tanh, Exp, GeluErf };

/// y = f(x) elementwise over `count` floats.
bool dnnlEltwise(EltKind kind, const float *x, float *y, int64_t count);

/// This build runs kernels on oneDNN.
bool dnnlAvailable();

/// The channels per block of the blocked layout oneDNN's convolutions run on this machine: 16
/// where it has a compiled kernel for nChw16c (AVX-512), else 8 (AVX2).
int64_t dnnlChannelBlock();

/// Threads oneDNN may use (1 by default, as the matrix products).
void setDnnlThreads(int threads);

/// "oneDNN 2.6.3" or "none".
const char *dnnlBackend();

} // namespace sf::eval::detail
