// Tests of the Resize kernel (src/eval/kernels/resize.cpp) with opset 18's antialias = 1.
// Against onnxruntime 1.30's outputs: linear and cubic, scales and sizes, downscaling and a mix of
// up and down, exclude_outside, three coordinate transformations. The expected values come from scripts/ort/resize_antialias_cases.py (Debian's
// onnx 1.12 has no test data for antialias). Also: the antialiased filter equals the plain one
// when upscaling, and nearest ignores the attribute.
#include "../run_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sf::eval {
namespace {

struct Case {
  const char *name;
  std::vector<int64_t> outShape;
  std::vector<double> expected;
};

// name, ONNX's output shape and onnxruntime's output for the model the generator makes.
const std::vector<Case> kCases = {
    {"LinearHalf", {1, 1, 4, 4}, {0.44, 0.4235938, 0.5007812, 0.42125, 0.56125, 0.5764062, 0.5273437, 0.479375, 0.4685937, 0.4995312, 0.46625, 0.5287499, 0.6214063, 0.5260937, 0.5243751, 0.3975}},
    {"LinearUneven", {1, 1, 4, 3}, {0.3260761, 0.4501097, 0.5608882, 0.6002319, 0.4525439, 0.4763255, 0.5514348, 0.5312391, 0.4249561, 0.5403479, 0.5825548, 0.4829166}},
    {"CubicHalf", {1, 1, 4, 4}, {0.4620877, 0.3907782, 0.4949594, 0.3909006, 0.5547978, 0.5872455, 0.5461282, 0.4877448, 0.4085919, 0.4753607, 0.4567747, 0.6007738, 0.6488197, 0.5196637, 0.5420027, 0.3988184}},
    {"CubicSizes", {1, 2, 4, 5}, {0.4350305, 0.5350701, 0.5707103, 0.4910907, 0.4544652, 0.4489995, 0.5160611, 0.4798034, 0.5617577, 0.5330315, 0.5062165, 0.4760614, 0.4761773, 0.4412365, 0.522225, 0.5755348, 0.5389093, 0.475327, 0.4994988, 0.4340637, 0.47385, 0.4906929, 0.5805222, 0.4878612, 0.496942, 0.49584, 0.4757157, 0.4273426, 0.5259796, 0.518316, 0.5585222, 0.4909056, 0.4906392, 0.4477292, 0.5562601, 0.4565441, 0.551801, 0.4885077, 0.5219415, 0.4724797}},
    {"LinearUpAndDown", {1, 1, 7, 3}, {0.13875, 0.5155556, 0.33125, 0.3034822, 0.5350001, 0.4058036, 0.5670536, 0.5661111, 0.5250894, 0.515, 0.485, 0.455, 0.4449107, 0.4038889, 0.4029465, 0.5641965, 0.435, 0.6665179, 0.6387501, 0.4544445, 0.83125}},
    {"CubicExcludeOutside", {1, 1, 3, 6}, {0.4175982, 0.4667187, 0.3801104, 0.4789387, 0.4771319, 0.5869468, 0.6019044, 0.5960611, 0.6470346, 0.3960008, 0.3883603, 0.4616787, 0.4574695, 0.5103334, 0.5764522, 0.5639266, 0.6074299, 0.3948613}},
    {"LinearAsymmetric", {1, 1, 4, 4}, {0.1675, 0.43625, 0.4818749, 0.464375, 0.629375, 0.519375, 0.43875, 0.484375, 0.471875, 0.614375, 0.53375, 0.39, 0.50375, 0.52, 0.565625, 0.61125}},
    {"CubicPytorchHalfPixel", {1, 1, 3, 2}, {0.4644304, 0.4685235, 0.5811352, 0.467445, 0.5487311, 0.4530396}},
};

struct Model {
  Shape in;
  std::string mode, transform = "half_pixel";
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  int excludeOutside = 0;
  double cubicA = -0.75;
};

// The generator's models, by name (scripts/ort/resize_antialias_cases.py, CASES).
Model modelOf(const std::string &name) {
  if (name == "LinearHalf") return {{1, 1, 8, 8}, "linear", "half_pixel", {1, 1, 0.5, 0.5}, {}};
  if (name == "LinearUneven") return {{1, 1, 7, 9}, "linear", "half_pixel", {1, 1, 0.6, 0.35}, {}};
  if (name == "CubicHalf") return {{1, 1, 8, 8}, "cubic", "half_pixel", {1, 1, 0.5, 0.5}, {}};
  if (name == "CubicSizes") return {{1, 2, 11, 13}, "cubic", "half_pixel", {}, {1, 2, 4, 5}};
  if (name == "LinearUpAndDown") return {{1, 1, 4, 5}, "linear", "half_pixel", {}, {1, 1, 7, 3}};
  if (name == "CubicExcludeOutside") return {{1, 1, 9, 9}, "cubic", "half_pixel", {1, 1, 0.4, 0.7}, {}, 1};
  if (name == "LinearAsymmetric") return {{1, 1, 9, 9}, "linear", "asymmetric", {1, 1, 0.5, 0.5}, {}};
  if (name == "CubicPytorchHalfPixel")
    return {{1, 1, 10, 6}, "cubic", "pytorch_half_pixel", {}, {1, 1, 3, 2}, 0, -0.5};
  ADD_FAILURE() << "no model " << name;
  return {};
}

std::string dims(const Shape &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r;
}

Ran runResize(const Model &m, int antialias) {
  std::string consts, args;
  if (!m.scales.empty()) {
    std::string v;
    for (size_t i = 0; i < m.scales.size(); ++i) v += (i ? ", " : "") + fmt::format("{}", m.scales[i]);
    consts = fmt::format("  s = Constant() {{value = f32[{}] [{}]}}\n", m.scales.size(), v);
    args = "x, , s";
  } else {
    consts = fmt::format("  z = Constant() {{value = i64[{}] [{}]}}\n", m.sizes.size(), dims(m.sizes));
    args = "x, , , z";
  }
  std::string attrs = fmt::format("mode = \"{}\", coordinate_transformation_mode = \"{}\", antialias = {}, "
                                  "exclude_outside = {}, cubic_coeff_a = {}",
                                  m.mode, m.transform, antialias, m.excludeOutside, m.cubicA);
  std::string text = fmt::format("opset 18\ngraph main(x: f32[{}]) {{\n{}  y = Resize({}) {{{}}}\n  return y\n}}\n",
                                 dims(m.in), consts, args, attrs);
  int64_t n = 1;
  for (int64_t d : m.in) n *= d;
  std::vector<double> xs;
  for (int64_t i = 0; i < n; ++i) xs.push_back(double((i * 37) % 101) / 100);
  return runText(text.c_str(), std::map<std::string, Tensor>{{"x", f32(m.in, xs)}});
}

TEST(ResizeAntialias, AgreesWithOnnxruntime) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    Ran r = runResize(modelOf(c.name), 1);
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    const Value &y = r.result->outputs[0];
    EXPECT_EQ(y->shape(), Shape(c.outShape));
    std::vector<double> got = values(y);
    ASSERT_EQ(got.size(), c.expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], c.expected[i], 2e-6) << "element " << i;
  }
}

TEST(ResizeAntialias, DiffersFromThePlainFilterOnlyWhenDownscaling) {
  // Upscaling: the stretched filter is the plain one.
  Model up{{1, 1, 3, 4}, "cubic", "half_pixel", {1, 1, 2.5, 1.5}, {}};
  Ran a = runResize(up, 1), p = runResize(up, 0);
  ASSERT_TRUE(a.result.ok() && p.result.ok());
  std::vector<double> va = values(a.result->outputs[0]), vp = values(p.result->outputs[0]);
  ASSERT_EQ(va.size(), vp.size());
  for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vp[i], 1e-6) << i;
  // Downscaling: it is not (the case would not test the filter otherwise).
  Model down = modelOf("LinearHalf");
  Ran ad = runResize(down, 1), pd = runResize(down, 0);
  ASSERT_TRUE(ad.result.ok() && pd.result.ok());
  EXPECT_NE(values(ad.result->outputs[0]), values(pd.result->outputs[0]));
  // Nearest ignores the attribute.
  Model nearest{{1, 1, 8, 8}, "nearest", "half_pixel", {1, 1, 0.5, 0.5}, {}};
  Ran an = runResize(nearest, 1), pn = runResize(nearest, 0);
  ASSERT_TRUE(an.result.ok() && pn.result.ok());
  EXPECT_EQ(values(an.result->outputs[0]), values(pn.result->outputs[0]));
}

TEST(ResizeAntialias, ScalesThatAreNotPositiveNumbersAreErrors) {
  const char *text = "opset 18\ngraph main(x: f32[1,4], s: f32[2]) {\n"
                     "  y = Resize(x, , s) {mode = \"linear\", antialias = 1}\n  return y\n}\n";
  for (double scale : {0.0, -1.0, double(NAN), double(INFINITY), 1e30}) {
    SCOPED_TRACE(scale);
    Ran r = runText(text, std::map<std::string, Tensor>{{"x", f32({1, 4}, {1, 2, 3, 4})},
                                                        {"s", f32({2}, {1, scale})}});
    ASSERT_FALSE(r.result.ok());
    EXPECT_NE(r.result.error().message.find("(Resize)"), std::string::npos) << r.result.error().message;
  }
}

// A Resize to X's own sizes keeps every element (the transforms map each index to itself, at a
// weight of 1): X as it is, infinities and NaN beside an element included (a sum with 0 times an
// infinite neighbour would make NaN; onnxruntime copies X too). tf_crop_and_resize samples its roi
// and is no copy.
TEST(Resize, ToItsOwnSizesIsXItself) {
  std::vector<double> xs{1, INFINITY, 3, -2, double(NAN), 0.5, 7, -INFINITY, 9, 4, 1, 2};
  for (const char *mode : {"nearest", "linear", "cubic"})
    for (const char *transform : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "half_pixel_symmetric"}) {
      SCOPED_TRACE(fmt::format("{} {}", mode, transform));
      std::string text = fmt::format("opset 18\ngraph main(x: f32[1,1,3,4]) {{\n"
                                     "  z = Constant() {{value = i64[4] [1, 1, 3, 4]}}\n"
                                     "  y = Resize(x, , , z) {{mode = \"{}\", coordinate_transformation_mode = \"{}\"}}\n"
                                     "  return y\n}}\n",
                                     mode, transform);
      Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", f32({1, 1, 3, 4}, xs)}});
      ASSERT_TRUE(r.result.ok()) << r.result.error().message;
      ASSERT_EQ((Shape{1, 1, 3, 4}), r.result->outputs[0]->shape());
      auto got = values(r.result->outputs[0]);
      for (size_t i = 0; i < xs.size(); ++i)
        if (std::isnan(xs[i])) EXPECT_TRUE(std::isnan(got[i])) << i;
        else EXPECT_EQ(xs[i], got[i]) << i;
    }
  // Scales of 1 and an integer type: the same.
  Ran scaled = runText("opset 18\ngraph main(x: i32[2,3]) {\n  s = Constant() {value = f32[2] [1, 1]}\n"
                       "  y = Resize(x, , s) {mode = \"linear\"}\n  return y\n}\n",
                       std::map<std::string, Tensor>{{"x", *Tensor::fromInt64s({2, 3}, {7, -3, 2147483647, 0, 5, -2147483648}, ElementType::I32)}});
  ASSERT_TRUE(scaled.result.ok()) << scaled.result.error().message;
  EXPECT_EQ((std::vector<double>{7, -3, 2147483647, 0, 5, -2147483648.0}), values(scaled.result->outputs[0]));
  // Upsample (opset 9) with scales of 1.
  Ran up = runText("opset 9\ngraph main(x: f32[1,1,2,2]) {\n  s = Constant() {value = f32[4] [1, 1, 1, 1]}\n"
                   "  y = Upsample(x, s) {mode = \"linear\"}\n  return y\n}\n",
                   std::map<std::string, Tensor>{{"x", f32({1, 1, 2, 2}, {1, INFINITY, 3, 4})}});
  ASSERT_TRUE(up.result.ok()) << up.result.error().message;
  EXPECT_EQ((std::vector<double>{1, INFINITY, 3, 4}), values(up.result->outputs[0]));
  // tf_half_pixel_for_nn maps x to x + 0.5, but an axis the resize keeps reads itself in every
  // mode (onnxruntime's kernels; measured with onnxruntime 1.30).
  auto halfPixelForNn = [](const char *attrs) {
    std::string text = fmt::format("opset 18\ngraph main(x: f32[1,1,1,4]) {{\n  z = Constant() {{value = i64[4] [1, 1, 1, 4]}}\n"
                                   "  y = Resize(x, , , z) {{coordinate_transformation_mode = \"tf_half_pixel_for_nn\", {}}}\n"
                                   "  return y\n}}\n",
                                   attrs);
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", f32({1, 1, 1, 4}, {1, 2, 4, 8})}});
    EXPECT_TRUE(r.result.ok()) << r.result.error().message;
    return r.result.ok() ? values(r.result->outputs[0]) : std::vector<double>{};
  };
  EXPECT_EQ((std::vector<double>{1, 2, 4, 8}), halfPixelForNn("mode = \"nearest\", nearest_mode = \"ceil\""));
  EXPECT_EQ((std::vector<double>{1, 2, 4, 8}), halfPixelForNn("mode = \"nearest\", nearest_mode = \"floor\""));
  EXPECT_EQ((std::vector<double>{1, 2, 4, 8}), halfPixelForNn("mode = \"linear\""));
  const char *crop = "opset 18\ngraph main(x: f32[1,1,2,2]) {\n"
                     "  roi = Constant() {value = f32[8] [0, 0, 0, 0, 1, 1, 0.5, 0.5]}\n"
                     "  z = Constant() {value = i64[4] [1, 1, 2, 2]}\n"
                     "  y = Resize(x, roi, , z) {mode = \"linear\", coordinate_transformation_mode = \"tf_crop_and_resize\"}\n"
                     "  return y\n}\n";
  Ran r = runText(crop, std::map<std::string, Tensor>{{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  // The roi's top-left half-square: x and y from 0 to 0.5, corners 1, 1.5, 2, 2.5.
  EXPECT_EQ((std::vector<double>{1, 1.5, 2, 2.5}), values(r.result->outputs[0]));
}

// The coordinate in X is computed in float, as onnxruntime computes it: at scale 1.7 output row
// 17 maps to 17 / 1.7, which is 10 in float and 9.999... in double, so floor takes row 10 (as
// onnxruntime and PyTorch's nearest upsampling do), not 9; in f32 and f64 alike.
TEST(Resize, CoordinatesAreComputedInFloatAsOnnxruntimeDoes) {
  for (const char *type : {"f32", "f64"}) {
    std::string text = fmt::format("opset 13\ngraph main(x: {0}[1,1,24,1]) {{\n  s = Constant() {{value = f32[4] [1, 1, 1.7, 1]}}\n"
                                   "  y = Resize(x, , s) {{mode = \"nearest\", coordinate_transformation_mode = \"asymmetric\", "
                                   "nearest_mode = \"floor\"}}\n  return y\n}}\n",
                                   type);
    std::vector<double> rows(24);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = double(i);
    Tensor x = *Tensor::fromDoubles(type == std::string("f32") ? ElementType::F32 : ElementType::F64, {1, 1, 24, 1}, rows);
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", x}});
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    std::vector<double> y = values(r.result->outputs[0]);
    ASSERT_EQ(y.size(), 40u) << type;
    EXPECT_EQ((std::vector<double>(y.begin() + 14, y.begin() + 20)), (std::vector<double>{8, 8, 9, 10, 10, 11}))
        << type; // why: output 17 reads row 10
  }
}

// f32 resamples in float, its axes in the order that makes the least work (an image's columns
// before its rows when upsampling both); f64 in double in the axes' order. The same filter:
// every element agrees, across the modes, up and down on one tensor, three axes, antialias,
// tf_crop_and_resize's extrapolation and trailing axes of 1.
TEST(Resize, InF32AgreesWithF64WhateverTheOrderOfItsAxes) {
  struct Case {
    Shape x;
    const char *sizes, *attrs, *roi = nullptr;
  };
  const Case cases[] = {
      {{1, 3, 5, 6}, "[1, 3, 40, 48]", "mode = \"linear\""},
      {{1, 2, 16, 12}, "[1, 2, 7, 5]", "mode = \"cubic\", antialias = 1"},
      {{2, 3, 4, 5}, "[2, 6, 2, 15]", "mode = \"linear\", coordinate_transformation_mode = \"align_corners\""},
      {{2, 3, 4, 5}, "[2, 6, 2, 15]", "mode = \"nearest\", nearest_mode = \"round_prefer_ceil\""},
      {{1, 2, 6, 7}, "[1, 2, 9, 4]", "mode = \"cubic\", exclude_outside = 1, coordinate_transformation_mode = \"pytorch_half_pixel\""},
      {{1, 2, 3, 1}, "[1, 5, 9, 1]", "mode = \"linear\""},
      {{1, 1, 4, 5},
       "[1, 1, 6, 8]",
       "mode = \"linear\", coordinate_transformation_mode = \"tf_crop_and_resize\", extrapolation_value = -3.5",
       "[0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4]"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(fmt::format("{} -> {} {{{}}}", fmt::join(c.x, ","), c.sizes, c.attrs));
    std::vector<double> outs[2];
    Tensor drawn = *randomTensor(ElementType::F32, c.x, 5);
    for (int k = 0; k < 2; ++k) {
      const char *type = k == 0 ? "f32" : "f64";
      std::string text = fmt::format("opset 18\ngraph main(x: {}[{}]) {{\n  z = Constant() {{value = i64[4] {}}}\n", type,
                                     fmt::join(c.x, ","), c.sizes);
      if (c.roi) text += fmt::format("  roi = Constant() {{value = f32[8] {}}}\n", c.roi);
      text += fmt::format("  y = Resize(x, {}, , z) {{{}}}\n  return y\n}}\n", c.roi ? "roi" : "", c.attrs);
      Tensor x = *Tensor::fromDoubles(k == 0 ? ElementType::F32 : ElementType::F64, c.x,
                                      *drawn.toDoubles(size_t(drawn.elementCount())));
      Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", x}});
      ASSERT_TRUE(r.result.ok()) << r.result.error().message;
      outs[k] = values(r.result->outputs[0]);
    }
    ASSERT_EQ(outs[0].size(), outs[1].size());
    ASSERT_FALSE(outs[0].empty());
    for (size_t i = 0; i < outs[1].size(); ++i)
      ASSERT_NEAR(outs[0][i], outs[1][i], 2e-6 * (1 + std::abs(outs[1][i]))) << "element " << i;
  }
}

// Sizes of 0: an output without elements is made without reading X (an empty axis kept, another
// resized); an empty axis resized to a length is refused, naming the node (onnxruntime refuses
// its infinite scale).
// Both types.
TEST(Resize, OutputsWithoutElementsRunAndAnEmptyAxisResizedToALengthIsRefused) {
  for (const char *type : {"f32", "i32"}) {
    SCOPED_TRACE(type);
    auto resizeTo = [&](const Shape &xs, const char *sizes) {
      std::string text = fmt::format("opset 18\ngraph main(x: {}[{}]) {{\n  z = Constant() {{value = i64[2] {}}}\n"
                                     "  y = Resize(x, , , z) {{mode = \"linear\"}}\n  return y\n}}\n",
                                     type, fmt::join(xs, ","), sizes);
      return runText(text.c_str(), std::map<std::string, Tensor>{
                                       {"x", *Tensor::fromDoubles(std::string(type) == "f32" ? ElementType::F32 : ElementType::I32, xs,
                                                                  std::vector<double>(size_t(xs[0] * xs[1]), 1.0))}});
    };
    for (auto [x, sizes, out] : {std::tuple{Shape{0, 3}, "[0, 6]", Shape{0, 6}}, std::tuple{Shape{2, 0}, "[4, 0]", Shape{4, 0}},
                                 std::tuple{Shape{0, 0}, "[0, 0]", Shape{0, 0}}}) {
      Ran r = resizeTo(x, sizes);
      ASSERT_TRUE(r.result.ok()) << sizes << ": " << r.result.error().message;
      EXPECT_EQ(out, r.result->outputs[0]->shape());
    }
    Ran refused = resizeTo(Shape{0, 3}, "[2, 3]");
    ASSERT_FALSE(refused.result.ok());
    EXPECT_NE(refused.result.error().message.find("'y' (Resize)"), std::string::npos) << refused.result.error().message;
  }
}

// Seven resized axes: more orders than are weighed (720), the axes in their own order; f32
// agrees with f64.
TEST(Resize, ManyResizedAxesAgreeInF32AndF64) {
  const Shape xs{2, 3, 2, 3, 2, 2, 3};
  Tensor drawn = *randomTensor(ElementType::F32, xs, 17);
  std::vector<double> outs[2];
  for (int k = 0; k < 2; ++k) {
    const char *type = k == 0 ? "f32" : "f64";
    std::string text = fmt::format("opset 18\ngraph main(x: {}[2,3,2,3,2,2,3]) {{\n"
                                   "  z = Constant() {{value = i64[7] [3, 2, 4, 1, 3, 5, 2]}}\n"
                                   "  y = Resize(x, , , z) {{mode = \"linear\"}}\n  return y\n}}\n",
                                   type);
    Tensor x = *Tensor::fromDoubles(k == 0 ? ElementType::F32 : ElementType::F64, xs,
                                    *drawn.toDoubles(size_t(drawn.elementCount())));
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", x}});
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    ASSERT_EQ((Shape{3, 2, 4, 1, 3, 5, 2}), r.result->outputs[0]->shape());
    outs[k] = values(r.result->outputs[0]);
  }
  ASSERT_EQ(outs[0].size(), outs[1].size());
  for (size_t i = 0; i < outs[1].size(); ++i) ASSERT_NEAR(outs[0][i], outs[1][i], 2e-6 * (1 + std::abs(outs[1][i]))) << i;
}

// GridSample over an empty X (fuzz_eval: the kernel read a first pixel that is not there):
// every sample falls outside, so zeros padding gives zeros; border and reflection have no pixel
// to repeat and are errors naming the node.
TEST(GridSample, AnEmptyInputGivesZerosPaddingsZerosAndRefusesTheOthers) {
  std::vector<double> grid{-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5};
  for (const char *padding : {"zeros", "border", "reflection"}) {
    SCOPED_TRACE(padding);
    std::string text = fmt::format("opset 16\ngraph main(x: f32[1,1,0,3], g: f32[1,2,2,2]) {{\n"
                                   "  y = GridSample(x, g) {{padding_mode = \"{}\"}}\n  return y\n}}\n",
                                   padding);
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", f32({1, 1, 0, 3}, {})},
                                                                {"g", f32({1, 2, 2, 2}, grid)}});
    if (std::string(padding) == "zeros") {
      ASSERT_TRUE(r.result.ok()) << r.result.error().message;
      EXPECT_EQ(values(r.result->outputs.at(0)), std::vector<double>(4, 0.0));
    } else {
      ASSERT_FALSE(r.result.ok());
      EXPECT_NE(r.result.error().message.find("(GridSample)"), std::string::npos) << r.result.error().message;
    }
  }
}

} // namespace
} // namespace sf::eval
