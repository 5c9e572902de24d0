// Tests of the bounds kernels prove of their float outputs (src/eval/kernels/bounds.cpp): the
// measured bound of a tensor (on its bits), a convolution's bound from its input's and weights',
// sums, and where each gives up (NaN, infinity, past a quarter of float's largest value).
#include "../../../src/eval/kernels/bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace sf::eval::detail {
namespace {

constexpr float kMax = std::numeric_limits<float>::max();

TEST(Bounds, AMeasuredBoundIsTheLargestMagnitudeOrNoneForNanAndInfinity) {
  std::vector<float> x = {-0.0f, 1e-45f, -3.5f, 2.0f, 0.25f};
  EXPECT_EQ(measuredBound(x.data(), int64_t(x.size())), 3.5f);
  EXPECT_EQ(measuredBound(x.data(), 0), 0.0f);
  std::vector<float> big = {kMax, -kMax};
  EXPECT_EQ(measuredBound(big.data(), 2), kMax);
  for (float bad : {NAN, -NAN, INFINITY, -INFINITY}) {
    // Past the first vector's width, so that the vectorised loop and its tail both see one.
    std::vector<float> y(37, 1.0f);
    y[35] = bad;
    EXPECT_EQ(measuredBound(y.data(), int64_t(y.size())), EvalContext::kUnbounded) << bad;
    y[35] = 1.0f;
    y[3] = bad;
    EXPECT_EQ(measuredBound(y.data(), int64_t(y.size())), EvalContext::kUnbounded) << bad;
  }
}

TEST(Bounds, SumsAndConvolutionsGiveUpPastAQuarterOfFloatsLargestValue) {
  EXPECT_EQ(asBound(2.0), 2.0f);
  EXPECT_EQ(asBound(double(kMax) / 4), EvalContext::kUnbounded);
  EXPECT_EQ(asBound(std::nan("")), EvalContext::kUnbounded);
  EXPECT_GE(boundOfSum(1.5f, 2.5f), 4.0f);
  EXPECT_EQ(boundOfSum(kMax / 8, kMax / 8), EvalContext::kUnbounded);
  EXPECT_EQ(boundOfSum(1.0f, EvalContext::kUnbounded), EvalContext::kUnbounded);
  std::vector<float> b = {0.5f, -3.0f};
  EXPECT_GE(convBound(2.0f, 10.0, b.data(), 2), 23.0f);
  EXPECT_LT(convBound(2.0f, 10.0, b.data(), 2), 23.01f);
  EXPECT_GE(convBound(2.0f, 10.0, nullptr, 2), 20.0f);
  b[1] = INFINITY;
  EXPECT_EQ(convBound(2.0f, 10.0, b.data(), 2), EvalContext::kUnbounded);
  EXPECT_EQ(convBound(1e30f, 1e10, nullptr, 0), EvalContext::kUnbounded);
}

TEST(Bounds, AWeightGainIsTheLargestChannelsSumOfMagnitudes) {
  // Two output channels of three weights each.
  std::vector<float> w = {1, -2, 0.5f, -4, 0, 1};
  EXPECT_EQ(weightGain(nullptr, false, w.data(), 2, 3), 5.0);
  w[1] = NAN;
  EXPECT_EQ(weightGain(nullptr, false, w.data(), 2, 3), std::numeric_limits<double>::infinity());
  // Kept for a constant tensor: the same answer from the cache.
  auto t = std::make_shared<const Tensor>(*Tensor::fromDoubles(ElementType::F32, {2, 3}, {1, -2, 0.5, -4, 0, 1}));
  std::vector<float> v = {1, -2, 0.5f, -4, 0, 1};
  EXPECT_EQ(weightGain(t, true, v.data(), 2, 3), 5.0);
  EXPECT_EQ(weightGain(t, true, v.data(), 2, 3), 5.0);
}

// The wrappers of kernels that move elements (Slice, Gather, Split, Concat and the like): their
// outputs' bounds come from the inputs', whatever the kernel does (here nothing).
TEST(Bounds, KernelsThatMoveElementsCarryTheirInputsBounds) {
  KernelFn nothing = [](EvalContext &) -> Result<void> { return success(); };
  Node node;
  node.outputs.resize(2);
  auto two = std::make_shared<const Tensor>(*Tensor::fromDoubles(ElementType::F32, {2}, {1, -2}));
  auto empty = std::make_shared<const Tensor>(*Tensor::fromDoubles(ElementType::F32, {0}, {}));
  int64_t live = 0;
  auto boundsAfter = [&](const KernelFn &k, std::vector<Value> inputs, std::vector<float> bounds) {
    EvalContext ctx(node, std::move(inputs), 17, &live, int64_t(1) << 20);
    ctx.setInputBounds(bounds);
    EXPECT_TRUE(k(ctx).ok());
    return std::pair{ctx.outputBound(0), ctx.outputBound(1)};
  };
  const float none = EvalContext::kUnbounded;
  // Concat: the largest of its inputs' bounds; none where one input has none; an empty input's
  // bound does not count.
  EXPECT_EQ(boundsAfter(keepingLargestBound(nothing), {Value(two), Value(two)}, {2.0f, 3.0f}).first, 3.0f);
  EXPECT_EQ(boundsAfter(keepingLargestBound(nothing), {Value(two), Value(two)}, {2.0f, none}).first, none);
  EXPECT_EQ(boundsAfter(keepingLargestBound(nothing), {Value(two), Value(empty)}, {2.0f, none}).first, 2.0f);
  // Split: input 0's bound on every output (the sizes input's does not count).
  EXPECT_EQ(boundsAfter(keepingBoundEach(nothing), {Value(two), Value(two)}, {2.0f, 9.0f}), std::pair(2.0f, 2.0f));
  EXPECT_EQ(boundsAfter(keepingBoundEach(nothing), {Value(two)}, {none}), std::pair(none, none));
  // Slice, Gather and the like: input 0's on output 0.
  EXPECT_EQ(boundsAfter(keepingBound(nothing), {Value(two), Value(two)}, {4.0f, 1.0f}), std::pair(4.0f, none));
}

} // namespace
} // namespace sf::eval::detail
