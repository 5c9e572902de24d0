// What kernels prove of their float outputs (EvalContext::inputBound: every element finite and at
// most B in magnitude) and the arithmetic of those bounds: a convolution applies its Relu or Clip
// in oneDNN's pass, which maps a NaN where ONNX keeps it, only where its output is bounded.
#pragma once

#include "shapeflow/eval/eval.h"
#include "shapeflow/ir/tensor.h"

#include <cstdint>
#include <memory>

namespace sf::eval::detail {

/// `b` as a bound: EvalContext::kUnbounded from a quarter of float's largest value on (room for
/// the sums that later bounds add up), and for NaN.
float asBound(double b);

/// The bound of a sum of elements of these bounds, with room for the rounding.
float boundOfSum(float a, float b);

/// A kernel whose output 0 holds only elements of input 0, moved, or each the larger of it and
/// 0 (Relu): input 0's bound carries over, where input 0 has elements.
KernelFn keepingBound(KernelFn k);

/// A kernel each of whose outputs holds only elements of input 0, moved (Split): input 0's
/// bound carries over to every output, where input 0 has elements.
KernelFn keepingBoundEach(KernelFn k);

/// A kernel whose output 0 holds only elements of its inputs, moved (Concat): the largest of the
/// bounds of the inputs that have elements (kUnbounded where one of them is).
KernelFn keepingLargestBound(KernelFn k);

/// The largest |x| (kUnbounded where an element is not finite): one pass, reading.
float measuredBound(const float *x, int64_t count);

/// The largest sum of |w| over one output channel's `perOut` weights of `m` (infinite where a
/// weight is not finite): no convolution output exceeds max|x| times it, plus the bias. Kept per
/// constant weights tensor (`keep`), so that a run does not read the weights once more.
double weightGain(const std::shared_ptr<const Tensor> &weights, bool keep, const float *w, int64_t m,
                  int64_t perOut);

/// ConvTranspose's: the largest sum of |w| over one output channel's weights of W [group * cg,
/// mg, taps] (every input channel of its group, every tap): each output element sums a part of
/// them times elements of X. Kept as weightGain's.
double transposedWeightGain(const std::shared_ptr<const Tensor> &weights, bool keep, const float *w, int64_t group,
                            int64_t cg, int64_t mg, int64_t taps);

/// A bound of a convolution's output from its input's, its weights' gain and its bias (b of m
/// elements, may be null): max|x| * gain + max|b| bounds every partial sum, whatever the order of
/// the additions, so where it is finite the convolution makes neither NaN nor infinity.
float convBound(float xBound, double gain, const float *b, int64_t m);

} // namespace sf::eval::detail
