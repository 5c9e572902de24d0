// Tests of the bounds kernels prove of their float outputs (src/eval/kernels/bounds.cpp): the
// measured bound of a tensor (on its bits), a convolution's bound from its input's and weights',
// sums, and where each gives up (NaN, infinity, past a quarter of float's largest value).
#include "../../../src/eval/kernels/bounds.h"
#include "shapeflow/eval/eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
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

TEST(Bounds, ATransposedWeightGainSumsEveryInputChannelOfTheGroupForEachOutputChannel) {
  // W [C = 2, M/group = 2, 2 taps], one group: output channel 0 sums w[0,0,:] and w[1,0,:].
  std::vector<float> w = {1, -2, 3, 0.5f, -4, 1, 0, 2};
  EXPECT_EQ(transposedWeightGain(nullptr, false, w.data(), 1, 2, 2, 2), 8.0);   // 1 + 2 + 4 + 1
  // Two groups of one input channel: each output channel has its own input channel's two taps.
  EXPECT_EQ(transposedWeightGain(nullptr, false, w.data(), 2, 1, 2, 2), 5.0);   // -4, 1
  w[7] = INFINITY;
  EXPECT_EQ(transposedWeightGain(nullptr, false, w.data(), 1, 2, 2, 2), std::numeric_limits<double>::infinity());
  // Kept apart from a convolution's gain of the same constant tensor.
  auto t = std::make_shared<const Tensor>(*Tensor::fromDoubles(ElementType::F32, {2, 2, 2}, {1, -2, 3, 0.5, -4, 1, 0, 2}));
  std::vector<float> v = {1, -2, 3, 0.5f, -4, 1, 0, 2};
  EXPECT_EQ(weightGain(t, true, v.data(), 2, 4), 7.0);
  EXPECT_EQ(transposedWeightGain(t, true, v.data(), 1, 2, 2, 2), 8.0);
  EXPECT_EQ(weightGain(t, true, v.data(), 2, 4), 7.0);
}

/// Output 0's bound after `op`'s kernel runs on `inputs` with input 0 bounded by `bound`, and
/// the largest |element| of the output.
std::pair<float, double> boundAfter(const std::string &op, Attributes attrs, std::vector<Value> inputs, float bound) {
  Node node;
  node.opType = op;
  node.attrs = std::move(attrs);
  node.outputs.resize(1);
  int64_t live = 0;
  EvalContext ctx(node, std::move(inputs), 19, &live, int64_t(1) << 24);
  std::vector<float> bounds(ctx.numInputs(), EvalContext::kUnbounded);
  bounds[0] = bound;
  ctx.setInputBounds(bounds);
  auto ran = eval::evalRegistry().find("", op)->kernel(ctx);
  EXPECT_TRUE(ran.ok()) << ran.error().message;
  double most = 0;
  if (!ran.ok()) return {ctx.outputBound(0), most};
  auto ys = ctx.outputs()[0]->toDoubles(1 << 20);
  for (double v : *ys) most = std::max(most, std::fabs(v));
  return {ctx.outputBound(0), most};
}

TensorPtr f32s(Shape s, std::vector<double> v) {
  return std::make_shared<const Tensor>(*Tensor::fromDoubles(ElementType::F32, std::move(s), v));
}

// Nearest and linear Resize weigh X's elements convexly (their bound carries over, with room for
// the rounding); cubic overshoots (none); tf_crop_and_resize adds its extrapolation value.
TEST(Bounds, ResizeCarriesItsInputsBoundWhereItsWeightsAreConvex) {
  auto x = f32s({1, 1, 2, 2}, {1, -3, 2, 3});
  auto scales = f32s({4}, {1, 1, 2.5, 2.5});
  Value none; // roi left out
  for (std::string mode : {"nearest", "linear"}) {
    Attributes a;
    a.set("mode", mode);
    auto [bound, most] = boundAfter("Resize", a, {Value(x), none, Value(scales)}, 3.0f);
    EXPECT_GE(bound, 3.0f) << mode;
    EXPECT_LE(bound, 3.01f) << mode;
    EXPECT_LE(most, bound) << mode;
  }
  Attributes aa;
  aa.set("mode", "linear");
  aa.set("antialias", 1);
  EXPECT_LE(boundAfter("Resize", aa, {Value(x), none, Value(f32s({4}, {1, 1, 0.6, 0.6}))}, 3.0f).first, 3.01f);
  Attributes cubic;
  cubic.set("mode", "cubic");
  auto [cb, cmost] = boundAfter("Resize", cubic, {Value(x), none, Value(scales)}, 3.0f);
  EXPECT_EQ(cb, EvalContext::kUnbounded);
  EXPECT_GT(cmost, 3.0); // why: the cubic taps overshoot X's largest element
  Attributes crop;
  crop.set("mode", "linear");
  crop.set("coordinate_transformation_mode", "tf_crop_and_resize");
  crop.set("extrapolation_value", 7.0);
  auto roi = f32s({8}, {0, 0, -1, -1, 1, 1, 2, 2});
  auto [xb, xmost] = boundAfter("Resize", crop, {Value(x), Value(roi), Value(scales)}, 3.0f);
  EXPECT_GE(xb, 7.0f);
  EXPECT_EQ(xmost, 7.0);
  crop.set("extrapolation_value", double(NAN));
  EXPECT_EQ(boundAfter("Resize", crop, {Value(x), Value(roi), Value(scales)}, 3.0f).first, EvalContext::kUnbounded);
  // No bound in, none out.
  EXPECT_EQ(boundAfter("Resize", aa, {Value(x), none, Value(scales)}, EvalContext::kUnbounded).first,
            EvalContext::kUnbounded);
}

// ConvTranspose as a convolution: X's bound times the transposed gain plus the bias's largest.
TEST(Bounds, ConvTransposeBoundsItsOutputByItsWeightsGainAndBias) {
  auto x = f32s({1, 2, 2, 2}, {1, -1, 1, -1, -1, 1, -1, 1});
  auto w = f32s({2, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1});
  auto b = f32s({1}, {-0.5});
  Attributes a;
  auto [bound, most] = boundAfter("ConvTranspose", a, {Value(x), Value(w), Value(b)}, 1.0f);
  EXPECT_GE(bound, 18.5f); // 18 weights of magnitude 1, and the bias
  EXPECT_LE(bound, 18.6f);
  EXPECT_LE(most, bound);
  EXPECT_EQ(boundAfter("ConvTranspose", a, {Value(x), Value(w), Value(b)}, EvalContext::kUnbounded).first,
            EvalContext::kUnbounded);
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
