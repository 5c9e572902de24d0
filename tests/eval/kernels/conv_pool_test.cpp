// Tests of the window kernels (src/eval/kernels/conv_pool.cpp, conv_transpose.cpp) and the
// library paths beside them.
// Convolution, pooling, products with constant weights and the transcendental activations in f32
// (on oneDNN where the build has it) against the same ops in f64 (the executor's own loops) on
// pseudo-random data, over a grid of geometries: spatial ranks 1-3, groups (depthwise included),
// strides, dilations, pads, auto_pad, ceil_mode, channel counts that are and are not multiples of
// 16, with and without bias. Two implementations that share no code must agree to float
// precision.
#include "../run_text.h"

#include "shapeflow/eval/eval.h"
#include "../../../src/eval/dnnl.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

namespace sf::eval {
namespace {

std::string dims(const Shape &s) { return fmt::format("{}", fmt::join(s, ",")); }

/// Runs `op` on x (and w, b) in f32 and in f64, and compares every output element.
void agreeInBothTypes(const std::string &op, const Shape &x, const Shape &w, bool bias,
                      const std::string &attrs, uint64_t seed) {
  SCOPED_TRACE(fmt::format("{} x [{}] w [{}] bias {} {{{}}}", op, dims(x), dims(w), bias, attrs));
  std::vector<double> out[2];
  const char *types[2] = {"f32", "f64"};
  for (int k = 0; k < 2; ++k) {
    ElementType t = k == 0 ? ElementType::F32 : ElementType::F64;
    std::string params = fmt::format("x: {}[{}]", types[k], dims(x));
    std::string args = "x";
    std::map<std::string, Tensor> inputs;
    // The same values in both types: drawn in f32, widened exactly to f64.
    auto draw = [&](const Shape &s, uint64_t sd) {
      Tensor r = *randomTensor(ElementType::F32, s, sd);
      return *Tensor::fromDoubles(t, s, *r.toDoubles(size_t(r.elementCount())));
    };
    inputs.emplace("x", draw(x, seed));
    if (!w.empty()) {
      params += fmt::format(", w: {}[{}]", types[k], dims(w));
      args += ", w";
      inputs.emplace("w", draw(w, seed + 1));
      if (bias) {
        params += fmt::format(", b: {}[{}]", types[k], w[0]);
        args += ", b";
        inputs.emplace("b", draw({w[0]}, seed + 2));
      }
    }
    std::string text = fmt::format("graph main({}) {{\n  y = {}({}) {{{}}}\n  return y\n}}\n", params,
                                   op, args, attrs);
    Ran r = runText(text.c_str(), inputs);
    ASSERT_TRUE(r.result.ok()) << r.result.error().message << "\n" << text;
    out[k] = values(r.result->outputs[0]);
  }
  ASSERT_EQ(out[0].size(), out[1].size());
  ASSERT_FALSE(out[0].empty());
  for (size_t i = 0; i < out[0].size(); ++i)
    ASSERT_NEAR(out[0][i], out[1][i], 1e-4 * (1 + std::abs(out[1][i]))) << "element " << i;
}

TEST(WindowKernels, ConvolutionsAgreeInF32AndF64) {
  uint64_t seed = 1;
  // 2D: plain, strided, dilated, padded, grouped, depthwise, 1x1, blocked channel counts.
  agreeInBothTypes("Conv", {1, 3, 17, 15}, {16, 3, 3, 3}, true, "pads = [1, 1, 1, 1]", seed++);
  agreeInBothTypes("Conv", {2, 16, 12, 12}, {32, 16, 3, 3}, true, "strides = [2, 2], pads = [1, 0, 1, 2]", seed++);
  agreeInBothTypes("Conv", {1, 16, 14, 14}, {16, 16, 3, 3}, false, "dilations = [2, 2], pads = [2, 2, 2, 2]", seed++);
  agreeInBothTypes("Conv", {1, 24, 10, 10}, {24, 1, 3, 3}, true, "group = 24, pads = [1, 1, 1, 1]", seed++);
  agreeInBothTypes("Conv", {1, 32, 9, 9}, {32, 1, 5, 5}, true, "group = 32, strides = [2, 2], pads = [2, 2, 2, 2]", seed++);
  agreeInBothTypes("Conv", {1, 12, 8, 8}, {18, 4, 3, 3}, true, "group = 3", seed++);
  agreeInBothTypes("Conv", {1, 64, 7, 7}, {48, 64, 1, 1}, true, "", seed++);
  agreeInBothTypes("Conv", {1, 32, 8, 8}, {64, 32, 1, 1}, false, "strides = [2, 2]", seed++);
  agreeInBothTypes("Conv", {1, 16, 11, 11}, {16, 16, 3, 3}, true, "auto_pad = \"SAME_UPPER\", strides = [2, 2]", seed++);
  agreeInBothTypes("Conv", {1, 16, 11, 11}, {16, 16, 4, 4}, true, "auto_pad = \"SAME_LOWER\"", seed++);
  agreeInBothTypes("Conv", {1, 5, 6, 9}, {7, 5, 2, 4}, false, "auto_pad = \"VALID\", strides = [1, 3]", seed++);
  // 1D and 3D.
  agreeInBothTypes("Conv", {2, 8, 30}, {16, 8, 5}, true, "pads = [2, 1], strides = [2]", seed++);
  agreeInBothTypes("Conv", {1, 16, 25}, {16, 1, 3}, true, "group = 16, dilations = [3]", seed++);
  agreeInBothTypes("Conv", {1, 4, 6, 7, 5}, {8, 4, 3, 3, 2}, true, "pads = [1, 0, 1, 1, 1, 0]", seed++);
}

// ConvTranspose in f32 (oneDNN's deconvolution where it takes the case, else sgemm and col2im)
// against the f64 loops. W is [C, M/group, kernel...]; a bias needs C == M here (the helper sizes
// it by W's first dim).
TEST(WindowKernels, ConvTransposesAgreeInF32AndF64) {
  uint64_t seed = 100;
  // unet's upsampling: 2x2 stride 2, with and without bias.
  agreeInBothTypes("ConvTranspose", {1, 32, 8, 8}, {32, 32, 2, 2}, true, "strides = [2, 2]", seed++);
  agreeInBothTypes("ConvTranspose", {2, 16, 5, 7}, {16, 8, 2, 2}, false, "strides = [2, 2]", seed++);
  // 3x3 with pads, dilations, odd strides; output_padding within the end pad (oneDNN) and past it
  // (the columns); output_shape; auto_pad.
  agreeInBothTypes("ConvTranspose", {1, 8, 6, 6}, {8, 8, 3, 3}, true, "strides = [2, 2], pads = [1, 1, 1, 1]", seed++);
  agreeInBothTypes("ConvTranspose", {1, 8, 6, 5}, {8, 4, 3, 3}, false,
                   "strides = [2, 3], pads = [1, 1, 1, 1], output_padding = [1, 1]", seed++);
  agreeInBothTypes("ConvTranspose", {1, 8, 6, 5}, {8, 4, 3, 3}, false, "strides = [2, 2], output_padding = [1, 1]",
                   seed++);
  agreeInBothTypes("ConvTranspose", {1, 6, 7, 7}, {6, 6, 3, 3}, true, "dilations = [2, 2], pads = [0, 1, 2, 0]",
                   seed++);
  agreeInBothTypes("ConvTranspose", {1, 4, 5, 5}, {4, 3, 3, 3}, false, "strides = [3, 2], output_shape = [16, 11]",
                   seed++);
  agreeInBothTypes("ConvTranspose", {1, 5, 6, 6}, {5, 5, 4, 4}, true, "auto_pad = \"SAME_UPPER\", strides = [2, 2]",
                   seed++);
  // Groups (depthwise included).
  agreeInBothTypes("ConvTranspose", {1, 12, 6, 6}, {12, 2, 3, 3}, false, "group = 3, strides = [2, 2]", seed++);
  agreeInBothTypes("ConvTranspose", {2, 16, 5, 5}, {16, 1, 4, 4}, true, "group = 16, strides = [2, 2], pads = [1, 1, 1, 1]",
                   seed++);
  // 1D and 3D.
  agreeInBothTypes("ConvTranspose", {2, 6, 9}, {6, 6, 4}, true, "strides = [2], pads = [1, 1]", seed++);
  agreeInBothTypes("ConvTranspose", {1, 4, 3, 4, 5}, {4, 2, 2, 3, 2}, false, "strides = [2, 1, 2]", seed++);
}

TEST(WindowKernels, PoolsAgreeInF32AndF64) {
  uint64_t seed = 100;
  agreeInBothTypes("MaxPool", {1, 16, 12, 12}, {}, false, "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]", seed++);
  agreeInBothTypes("MaxPool", {2, 3, 11, 11}, {}, false, "kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1", seed++);
  agreeInBothTypes("MaxPool", {1, 8, 9, 9}, {}, false, "kernel_shape = [2, 2], dilations = [2, 2]", seed++);
  agreeInBothTypes("AveragePool", {1, 16, 10, 10}, {}, false, "kernel_shape = [3, 3], pads = [1, 1, 1, 1]", seed++);
  agreeInBothTypes("AveragePool", {1, 16, 10, 10}, {}, false,
                   "kernel_shape = [3, 3], pads = [1, 1, 1, 1], count_include_pad = 1", seed++);
  agreeInBothTypes("AveragePool", {1, 4, 11, 11}, {}, false, "kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1", seed++);
  agreeInBothTypes("AveragePool", {1, 4, 11, 11}, {}, false,
                   "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1, count_include_pad = 1", seed++);
  agreeInBothTypes("MaxPool", {1, 4, 20}, {}, false, "kernel_shape = [4], strides = [3], pads = [1, 2]", seed++);
  agreeInBothTypes("AveragePool", {1, 4, 5, 6, 7}, {}, false, "kernel_shape = [2, 3, 2], strides = [2, 2, 2]", seed++);
}

// AveragePool takes dilations from opset 19, each axis its own: a window of [1, 2] with
// dilations [1, 2] over [0, 10, 100] averages 0 and 100 (the kernel had used the first axis's
// dilation on every axis, averaging 0 and 10).
TEST(WindowKernels, AveragePoolDilationsArePerAxis) {
  for (const char *type : {"f32", "f64"}) {
    std::string text = fmt::format("opset 19\ngraph main(x: {}[1,1,1,3]) {{\n"
                                   "  y = AveragePool(x) {{kernel_shape = [1, 2], dilations = [1, 2]}}\n  return y\n}}\n",
                                   type);
    Tensor x = *Tensor::fromDoubles(type == std::string("f32") ? ElementType::F32 : ElementType::F64, {1, 1, 1, 3},
                                    {0, 10, 100});
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", x}});
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    EXPECT_EQ(values(r.result->outputs[0]), (std::vector<double>{50})) << type;
  }
  agreeInBothTypes("AveragePool", {1, 3, 9, 10}, {}, false, "kernel_shape = [2, 3], dilations = [3, 2], pads = [1, 0, 1, 2]", 7);
}

/// `op`(a, W[, C]) with W (and C) constants of the graph, in f32 and in f64: the f32 products take
/// oneDNN's path for constant weights (packed once, kept between runs), f64 the loops. The f32
/// graph runs twice, the second time on the weights kept from the first.
void productAgrees(const std::string &op, const Shape &a, const Shape &w, const Shape &c,
                   const std::string &attrs, uint64_t seed) {
  SCOPED_TRACE(fmt::format("{} a [{}] W [{}] C [{}] {{{}}}", op, dims(a), dims(w), dims(c), attrs));
  auto literal = [](const Tensor &t) {
    auto v = *t.toDoubles(size_t(t.elementCount()));
    return fmt::format("[{}]", fmt::join(v, ", "));
  };
  std::vector<double> out[3]; // f32, f32 again on the same graph (kept weights), f64
  const char *types[3] = {"f32", "", "f64"};
  for (int k = 0; k < 3; k += 2) {
    ElementType t = k == 0 ? ElementType::F32 : ElementType::F64;
    auto draw = [&](const Shape &s, uint64_t sd) {
      Tensor r = *randomTensor(ElementType::F32, s, sd);
      return *Tensor::fromDoubles(t, s, *r.toDoubles(size_t(r.elementCount())));
    };
    std::string text = fmt::format("graph main(a: {}[{}]) {{\n", types[k], dims(a));
    text += fmt::format("  w = Constant() {{value = {}[{}] {}}}\n", types[k], dims(w), literal(draw(w, seed + 1)));
    std::string args = "a, w";
    if (!c.empty()) {
      text += fmt::format("  c = Constant() {{value = {}[{}] {}}}\n", types[k], dims(c), literal(draw(c, seed + 2)));
      args += ", c";
    }
    text += fmt::format("  y = {}({}) {{{}}}\n  return y\n}}\n", op, args, attrs);
    std::map<std::string, Tensor> inputs;
    inputs.emplace("a", draw(a, seed));
    Ran r = runText(text.c_str(), inputs);
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    out[k] = values(r.result->outputs[0]);
    if (k == 0) {
      auto again = run(*r.graph, inputs);
      ASSERT_TRUE(again.ok()) << again.error().message;
      out[1] = values(again->outputs[0]);
    }
  }
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(out[k].size(), out[2].size());
    for (size_t i = 0; i < out[2].size(); ++i)
      ASSERT_NEAR(out[k][i], out[2][i], 1e-4 * (1 + std::abs(out[2][i]))) << "run " << k << " element " << i;
  }
}

TEST(LibraryKernels, ProductsWithConstantWeightsAgreeInF32AndF64) {
  productAgrees("MatMul", {7, 48}, {48, 40}, {}, "", 200);
  productAgrees("MatMul", {2, 5, 33}, {33, 17}, {}, "", 201); // batches folded into rows
  productAgrees("Gemm", {6, 32}, {24, 32}, {24}, "transB = 1", 202);
  productAgrees("Gemm", {6, 32}, {32, 24}, {1, 24}, "", 203);
  productAgrees("Gemm", {3, 16}, {16, 8}, {}, "", 204);
  productAgrees("Gemm", {3, 16}, {16, 8}, {3, 8}, "alpha = 0.5, beta = 2.0", 205); // sgemm path
}

// ConvTranspose with constant weights whose windows do not overlap (each stride at least its
// kernel): one product per image and the outputs written where they land; kernels filling their
// strides, gaps between windows (the bias alone there), pads cropping the ends, an
// output_padding past the last window. A 3x3 stride-2 case with constant weights overlaps and
// goes to oneDNN's deconvolution.
TEST(LibraryKernels, ConvTransposesWithConstantWeightsAgreeInF32AndF64) {
  productAgrees("ConvTranspose", {1, 32, 8, 8}, {32, 16, 2, 2}, {16}, "strides = [2, 2]", 300);
  productAgrees("ConvTranspose", {2, 8, 5, 7}, {8, 4, 2, 2}, {}, "strides = [3, 3]", 301);
  productAgrees("ConvTranspose", {2, 8, 5, 7}, {8, 4, 2, 2}, {4}, "strides = [3, 2]", 302);
  productAgrees("ConvTranspose", {1, 8, 6, 5}, {8, 6, 2, 3}, {6}, "strides = [2, 3], pads = [1, 0, 0, 1]", 303);
  productAgrees("ConvTranspose", {1, 8, 4, 4}, {8, 4, 2, 2}, {4}, "strides = [2, 2], output_padding = [1, 1]", 304);
  productAgrees("ConvTranspose", {1, 8, 6, 6}, {8, 8, 3, 3}, {8}, "strides = [2, 2], pads = [1, 1, 1, 1]", 305);
}

// oneDNN's deconvolution takes a 2x2 stride-2 upsampling and a padded 3x3 (this build has
// oneDNN): the f32 ConvTranspose does not fall back to the columns unseen. Against a direct sum.
TEST(LibraryKernels, DeconvolutionTakesTheUsualCasesAndAgreesWithADirectSum) {
  if (!detail::dnnlAvailable()) GTEST_SKIP() << "this build has no oneDNN";
  struct Case {
    int64_t n, c, m, group, h, w, k, stride, pad;
  };
  for (const Case &t : {Case{1, 8, 4, 1, 5, 6, 2, 2, 0}, Case{2, 6, 6, 1, 4, 4, 3, 2, 1}, Case{1, 8, 8, 4, 3, 5, 3, 1, 1}}) {
    SCOPED_TRACE(fmt::format("c {} m {} group {} kernel {} stride {} pad {}", t.c, t.m, t.group, t.k, t.stride, t.pad));
    const int64_t mg = t.m / t.group, cg = t.c / t.group;
    const int64_t oh = (t.h - 1) * t.stride + t.k - 2 * t.pad, ow = (t.w - 1) * t.stride + t.k - 2 * t.pad;
    Tensor x = *randomTensor(ElementType::F32, {t.n, t.c, t.h, t.w}, 7);
    auto w = std::make_shared<const Tensor>(*randomTensor(ElementType::F32, {t.c, mg, t.k, t.k}, 8));
    std::vector<float> b(size_t(t.m));
    for (int64_t i = 0; i < t.m; ++i) b[size_t(i)] = 0.25f * float(i) - 0.5f;
    detail::WindowGeometry g{t.n, t.c, t.m, t.group, {t.h, t.w}, {t.k, t.k}, {t.stride, t.stride}, {1, 1},
                             {t.pad, t.pad}, {t.pad, t.pad}, {oh, ow}};
    std::vector<float> y(size_t(t.n * t.m * oh * ow), -1.0f);
    auto widen = [](const Tensor &t) {
      std::vector<double> d = *t.toDoubles(size_t(t.elementCount()));
      return std::vector<float>(d.begin(), d.end());
    };
    const std::vector<float> xv = widen(x), wv = widen(*w);
    ASSERT_TRUE(detail::dnnlDeconv(g, xv.data(), wv.data(), w, true, b.data(), y.data()));
    std::vector<double> want(y.size(), 0.0);
    for (int64_t bi = 0; bi < t.n; ++bi)
      for (int64_t ci = 0; ci < t.c; ++ci)
        for (int64_t i = 0; i < t.h; ++i)
          for (int64_t j = 0; j < t.w; ++j)
            for (int64_t mo = 0; mo < mg; ++mo)
              for (int64_t ki = 0; ki < t.k; ++ki)
                for (int64_t kj = 0; kj < t.k; ++kj) {
                  int64_t oi = i * t.stride + ki - t.pad, oj = j * t.stride + kj - t.pad;
                  if (oi < 0 || oi >= oh || oj < 0 || oj >= ow) continue;
                  int64_t mOut = (ci / cg) * mg + mo;
                  want[size_t(((bi * t.m + mOut) * oh + oi) * ow + oj)] +=
                      double(xv[size_t(((bi * t.c + ci) * t.h + i) * t.w + j)]) *
                      double(wv[size_t(((ci * mg + mo) * t.k + ki) * t.k + kj)]);
                }
    for (size_t q = 0; q < y.size(); ++q) {
      double expect = want[q] + b[(q / size_t(oh * ow)) % size_t(t.m)];
      ASSERT_NEAR(y[q], expect, 1e-4 * (1 + std::abs(expect))) << "element " << q;
    }
  }
}

TEST(LibraryKernels, TranscendentalsAgreeInF32AndF64) {
  for (const char *op : {"Sigmoid", "Tanh", "Exp"})
    agreeInBothTypes(op, {3, 37, 5}, {}, false, "", 300);
}

TEST(LibraryKernels, TranscendentalsKeepNaNAndLargeArguments) {
  // oneDNN clamps its inputs: NaN and large arguments must still come out as the loops give them.
  const double nan = std::nan(""), inf = INFINITY;
  std::vector<double> xs{nan, -nan, 100.0, -100.0, 89.0, -89.0, inf, -inf, 0.5, -0.5, 0.0};
  for (const char *op : {"Sigmoid", "Tanh", "Exp"}) {
    SCOPED_TRACE(op);
    std::string text = fmt::format("graph main(x: f32[{}]) {{\n  y = {}(x)\n  return y\n}}\n", xs.size(), op);
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", f32({int64_t(xs.size())}, xs)}});
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    auto got = values(r.result->outputs[0]);
    for (size_t i = 0; i < xs.size(); ++i) {
      float x = float(xs[i]);
      double want = std::string(op) == "Exp" ? double(std::exp(x))
                    : std::string(op) == "Tanh" ? double(std::tanh(x))
                                                : double(1.0f / (1.0f + std::exp(-x)));
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[i])) << "x = " << xs[i];
      else if (std::isinf(want)) EXPECT_EQ(got[i], want) << "x = " << xs[i];
      else EXPECT_NEAR(got[i], want, 1e-6 * (1 + std::abs(want))) << "x = " << xs[i];
    }
  }
}

/// Conv then an activation: rewritten for the executor, Relu, Clip, SiLU and HardSwish become one FusedConv (in
/// f32 a oneDNN post-op; in f64 the loops, then the activation); run as it is, two ops. All agree.
void convThenAgrees(const std::string &activation, uint64_t seed, bool fused) {
  SCOPED_TRACE(activation);
  std::vector<double> out[3];
  for (int k = 0; k < 3; ++k) {
    const char *type = k < 2 ? "f32" : "f64";
    ElementType t = k < 2 ? ElementType::F32 : ElementType::F64;
    auto draw = [&](const Shape &sh, uint64_t sd) {
      Tensor r = *randomTensor(ElementType::F32, sh, sd);
      return *Tensor::fromDoubles(t, sh, *r.toDoubles(size_t(r.elementCount())));
    };
    std::string text = fmt::format(
        "graph main(x: {0}[1,16,9,9], w: {0}[32,16,3,3], b: {0}[32]) {{\n"
        "  lo = Constant() {{value = {0}[] -0.25}}\n  hi = Constant() {{value = {0}[] 0.5}}\n"
        "  c = Conv(x, w, b) {{pads = [1, 1, 1, 1]}}\n  {1}\n  return y\n}}\n",
        type, activation);
    std::map<std::string, Tensor> inputs;
    inputs.emplace("x", draw({1, 16, 9, 9}, seed));
    inputs.emplace("w", draw({32, 16, 3, 3}, seed + 1));
    inputs.emplace("b", draw({32}, seed + 2));
    RunOptions options;
    size_t observed = 0;
    if (k == 1) options.observe = [&](const Node &, size_t, const Tensor &) { ++observed; };
    std::map<std::string, OpTime> profile;
    options.profile = &profile;
    Ran r = runText(text.c_str(), inputs, options, k != 1);
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    out[k] = values(r.result->outputs[0]);
    EXPECT_EQ(profile["ai.shapeflow.FusedConv"].calls, k != 1 && fused ? 1 : 0) << "run " << k;
    if (k == 1) {
      EXPECT_GE(observed, 2u); // the Conv's output and the activation's, apart
    }
  }
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < out[2].size(); ++i)
      ASSERT_NEAR(out[k][i], out[2][i], 1e-4 * (1 + std::abs(out[2][i]))) << "run " << k << " element " << i;
}

TEST(LibraryKernels, ConvFollowedByAnActivationAgrees) {
  convThenAgrees("y = Relu(c)", 400, true);
  convThenAgrees("y = Clip(c, lo, hi)", 401, true);
  convThenAgrees("y = Clip(c, lo)", 402, true);
  convThenAgrees("s = Sigmoid(c)\n  y = Mul(c, s)", 403, true); // SiLU
  convThenAgrees("s = Sigmoid(c)\n  y = Mul(s, c)", 404, true);
  convThenAgrees("y = HardSwish(c)", 407, true);
  // Not fused: the Sigmoid's output is read twice; the Mul reads something else.
  convThenAgrees("s = Sigmoid(c)\n  m = Mul(c, s)\n  y = Add(m, s)", 405, false);
  convThenAgrees("s = Sigmoid(c)\n  y = Mul(s, s)", 406, false);
}

// BatchNormalization then Relu (a pre-activation block), rewritten for the executor into one
// depthwise 1x1 FusedConv, gives the values of the two ops run as they are and of f64: on 20
// channels (kept channels last between the convolutions) and 32 (in channel blocks).
TEST(LibraryKernels, BatchNormThenReluAsOneDepthwiseConvAgrees) {
  for (int64_t c : {20, 32}) {
    SCOPED_TRACE(c);
    std::vector<double> s, b, m, v;
    for (int64_t i = 0; i < c; ++i) {
      s.push_back(0.5 + 0.07 * double(i)), b.push_back(-0.3 + 0.05 * double(i % 7));
      m.push_back(0.2 * double(i % 5) - 0.4), v.push_back(0.1 + 0.3 * double(i % 4));
    }
    std::vector<double> out[3];
    for (int k = 0; k < 3; ++k) {
      const char *type = k < 2 ? "f32" : "f64";
      ElementType t = k < 2 ? ElementType::F32 : ElementType::F64;
      std::string text = fmt::format(
          "graph main(x: {0}[2,{1},6,5], w: {0}[{1},{1},1,1]) {{\n"
          "  s = Constant() {{value = {0}[{1}] [{2}]}}\n  b = Constant() {{value = {0}[{1}] [{3}]}}\n"
          "  m = Constant() {{value = {0}[{1}] [{4}]}}\n  v = Constant() {{value = {0}[{1}] [{5}]}}\n"
          "  a = Conv(x, w)\n  n = BatchNormalization(a, s, b, m, v) {{epsilon = 0.001}}\n"
          "  r = Relu(n)\n  y = Conv(r, w)\n  return y\n}}\n",
          type, c, fmt::join(s, ", "), fmt::join(b, ", "), fmt::join(m, ", "), fmt::join(v, ", "));
      auto draw = [&](const Shape &sh, uint64_t sd) {
        Tensor r = *randomTensor(ElementType::F32, sh, sd);
        return *Tensor::fromDoubles(t, sh, *r.toDoubles(size_t(r.elementCount())));
      };
      std::map<std::string, Tensor> inputs;
      inputs.emplace("x", draw({2, c, 6, 5}, 960 + uint64_t(c)));
      inputs.emplace("w", draw({c, c, 1, 1}, 961 + uint64_t(c)));
      RunOptions options;
      std::map<std::string, OpTime> profile;
      options.profile = &profile;
      Ran r = runText(text.c_str(), inputs, options, k != 1);
      ASSERT_TRUE(r.result.ok()) << r.result.error().message;
      out[k] = values(r.result->outputs[0]);
      // Rewritten in f32 only (f64 runs the two ops as they are).
      EXPECT_EQ(profile["ai.shapeflow.FusedConv"].calls, k == 0 ? 1 : 0) << "run " << k;
      EXPECT_EQ(profile["BatchNormalization"].calls, k == 0 ? 0 : 1) << "run " << k;
    }
    double scale = 0;
    for (double x : out[2]) scale = std::max(scale, std::abs(x));
    ASSERT_GT(scale, 0.5);
    for (int k = 0; k < 2; ++k)
      for (size_t i = 0; i < out[2].size(); ++i)
        ASSERT_NEAR(out[k][i], out[2][i], 1e-5 * scale) << "run " << k << " element " << i;
  }
}

/// The first `outputs` outputs of a fused run against the same graph run apart: each element
/// equal, and NaN wherever the run apart gives NaN. Returns how many NaN elements there were.
size_t expectSameKeepingNan(const Ran &fused, const Ran &apart, size_t outputs) {
  size_t nans = 0;
  for (size_t k = 0; k < outputs; ++k) {
    auto a = values(fused.result->outputs[k]), b = values(apart.result->outputs[k]);
    EXPECT_EQ(a.size(), b.size()) << "output " << k;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      if (std::isnan(b[i])) {
        ++nans;
        EXPECT_TRUE(std::isnan(a[i])) << "output " << k << " element " << i << " is " << a[i];
      } else {
        EXPECT_EQ(a[i], b[i]) << "output " << k << " element " << i;
      }
    }
  }
  return nans;
}

TEST(LibraryKernels, ConvFollowedByAnActivationKeepsNanAndInfinityAsTheTwoOpsDo) {
  // oneDNN's Relu and Clip map a NaN to the lower bound; ONNX's keep it (HardSwish likewise). The NaN of an input,
  // the NaN of an overflow (1e30 * 1e10 - 1e30 * 1e10: infinity minus infinity, every input
  // finite), an infinity, and the same overflow two convolutions on (the second's input bound
  // carried from the first, not measured): fused, each is what the two ops give apart.
  const double nan = std::nan(""), inf = INFINITY;
  const char *text = R"(
graph main(x: f32[1,2,2,2], w: f32[3,2,1,1], wi: f32[2,2,1,1], wb: f32[1,2,1,1]) {
  lo = Constant() {value = f32[] 0}
  hi = Constant() {value = f32[] 6}
  c = Conv(x, w)
  y = Relu(c)
  d = Conv(x, w)
  z = Clip(d, lo, hi)
  e = Conv(x, wi)
  r = Relu(e)
  f = Conv(r, wb)
  v = Relu(f)
  g = Conv(x, w)
  h = HardSwish(g)
  return y, z, v, h
}
)";
  std::map<std::string, Tensor> inputs{
      {"x", f32({1, 2, 2, 2}, {nan, inf, 1e30, 0.5, 1, 2, 1e30, -3})},
      {"w", f32({3, 2, 1, 1}, {1, 0, 1e10, -1e10, -1, 0})},
      {"wi", f32({2, 2, 1, 1}, {0, 1, 0, 1})},
      {"wb", f32({1, 2, 1, 1}, {1e10, -1e10})}};
  std::map<std::string, OpTime> profile;
  RunOptions fusedOptions;
  fusedOptions.profile = &profile;
  Ran fused = runText(text, inputs, fusedOptions, true), apart = runText(text, inputs);
  ASSERT_TRUE(fused.result.ok()) << fused.result.error().message;
  ASSERT_TRUE(apart.result.ok()) << apart.result.error().message;
  EXPECT_EQ(profile["ai.shapeflow.FusedConv"].calls, 5u);
  const size_t nans = expectSameKeepingNan(fused, apart, 4);
  // At least the input's NaN in every channel of y, z and h (whether an overflow gives NaN or an
  // infinity depends on the order of the sums, fused multiply-adds included).
  EXPECT_GE(nans, 3u * 3u);
}

TEST(LibraryKernels, ResidualAddsFusedIntoConvolutionsGiveWhatTheOpsGiveApart) {
  // Residual blocks: a convolution whose output an Add reads beside a tensor of its shape (Z),
  // then a Relu or not. Z a graph input holding a NaN, an infinity and values that overflow the
  // sum; a downsampling branch's convolution as Z; Z made by an earlier block, kept in channel
  // blocks with the output. Fused (FusedConv with Z) against the ops apart, in channel blocks
  // of 16 and of 8: each element equal, NaN kept through the Relu.
  const double nan = std::nan(""), inf = INFINITY;
  const char *text = R"(
graph main(x: f32[1,16,6,6], z: f32[1,16,6,6], w: f32[16,16,3,3], b: f32[16], we: f32[32,8,3,3], wd: f32[32,16,1,1],
           w2: f32[32,16,3,3]) {
  c = Conv(x, w, b) {pads = [1, 1, 1, 1]}
  s = Add(c, z)
  y = Relu(s)
  d = Conv(y, w) {pads = [1, 1, 1, 1]}
  t = Add(y, d)
  u = Relu(t)
  e = Conv(u, we) {pads = [1, 1, 1, 1], strides = [2, 2], group = 2}
  f = Conv(u, wd) {strides = [2, 2]}
  g = Add(e, f)
  h = Relu(g)
  k = Conv(h, w2) {pads = [1, 1, 1, 1], group = 2}
  m = Add(k, h)
  p = GlobalAveragePool(m)
  return p, y
}
)";
  std::vector<double> xs(16 * 36), zs(16 * 36), ws(16 * 16 * 9), bs(16), wes(32 * 8 * 9), wds(32 * 16), w2s(32 * 16 * 9);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(int(i % 7) - 3) * 0.5, zs[i] = double(int(i % 5) - 2);
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = double(int(i % 11) - 5) * 0.05;
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = double(i) * 0.1 - 0.8;
  for (size_t i = 0; i < wes.size(); ++i) wes[i] = double(int(i % 7) - 3) * 0.04;
  for (size_t i = 0; i < wds.size(); ++i) wds[i] = double(int(i % 13) - 6) * 0.1;
  for (size_t i = 0; i < w2s.size(); ++i) w2s[i] = double(int(i % 9) - 4) * 0.03;
  zs[3] = nan, zs[40] = inf, zs[41] = -inf, zs[100] = 3e38, zs[101] = -3e38;
  std::map<std::string, Tensor> inputs{{"x", f32({1, 16, 6, 6}, xs)},      {"z", f32({1, 16, 6, 6}, zs)},
                                       {"w", f32({16, 16, 3, 3}, ws)},     {"b", f32({16}, bs)},
                                       {"we", f32({32, 8, 3, 3}, wes)},    {"wd", f32({32, 16, 1, 1}, wds)},
                                       {"w2", f32({32, 16, 3, 3}, w2s)}};
  for (int block : {16, 8}) {
    SCOPED_TRACE(fmt::format("blocks of {}", block));
    std::map<std::string, OpTime> profile;
    RunOptions fusedOptions, apartOptions;
    fusedOptions.profile = &profile;
    fusedOptions.channelBlock = apartOptions.channelBlock = block;
    Ran fused = runText(text, inputs, fusedOptions, true), apart = runText(text, inputs, apartOptions);
    ASSERT_TRUE(fused.result.ok()) << fused.result.error().message;
    ASSERT_TRUE(apart.result.ok()) << apart.result.error().message;
    EXPECT_EQ(profile["ai.shapeflow.FusedConv"].calls, 4u);
    EXPECT_EQ(profile["Add"].calls, 0u);
    EXPECT_EQ(profile["Relu"].calls, 0u);
    const size_t nans = expectSameKeepingNan(fused, apart, 2);
    EXPECT_GE(nans, 1u) << "Z's NaN through the Relu";
  }
}

TEST(LibraryKernels, ANanMovedByConcatSliceAndSplitIntoAFusedConvWithReluStaysNan) {
  // The bounds that let a convolution apply its Relu in oneDNN's pass (which maps a NaN to 0)
  // carry through the kernels that move elements: a NaN that a Concat, a Slice and a Split move
  // into a convolution with a Relu stays NaN, as ONNX's max(0, x) keeps it; the rest as the two
  // ops give apart. The convolution's input is large enough for oneDNN to take it.
  const double nan = std::nan("");
  const char *text = R"(
opset 18
graph main(x: f32[1,16,8,8], y: f32[1,16,8,8], w: f32[16,16,1,1]) {
  c = Concat(x, y) {axis = 1}
  st = Constant() {value = i64[1] [0]}
  en = Constant() {value = i64[1] [32]}
  ax = Constant() {value = i64[1] [1]}
  s = Slice(c, st, en, ax)
  a, b = Split(s) {axis = 1, num_outputs = 2}
  v = Conv(a, w)
  o = Relu(v)
  return o
}
)";
  std::vector<double> xs(16 * 64), ys(16 * 64), ws(16 * 16);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(int(i % 7) - 3), ys[i] = 1;
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = i % 17 == 0 ? 1.0 : 0.0; // identity
  xs[5] = nan;
  std::map<std::string, Tensor> inputs{{"x", f32({1, 16, 8, 8}, xs)}, {"y", f32({1, 16, 8, 8}, ys)},
                                       {"w", f32({16, 16, 1, 1}, ws)}};
  std::map<std::string, OpTime> profile;
  RunOptions fusedOptions;
  fusedOptions.profile = &profile;
  Ran fused = runText(text, inputs, fusedOptions, true), apart = runText(text, inputs);
  ASSERT_TRUE(fused.result.ok()) << fused.result.error().message;
  ASSERT_TRUE(apart.result.ok()) << apart.result.error().message;
  EXPECT_EQ(profile["ai.shapeflow.FusedConv"].calls, 1u);
  const size_t nans = expectSameKeepingNan(fused, apart, 1);
  EXPECT_EQ(nans, 16u) << "the NaN's pixel, in every output channel (0 * NaN is NaN)";
}

/// A graph whose tensors the executor may keep in channel blocks, written for an element type
/// (`text(type)`, "f32" or "f64"), and its inputs: name, shape and seed (drawn in f32, the same
/// values in both types).
struct BlockedNetwork {
  std::string (*text)(const char *type);
  std::vector<std::tuple<std::string, Shape, uint64_t>> inputs;
};

/// The network's output in `t`, with every tensor observed (plain everywhere) or not, channel
/// blocks of `block`, and how many tensors the executor kept in a channel layout, and of them
/// channels last.
std::vector<double> runNetwork(const BlockedNetwork &net, ElementType t, bool observe, int block,
                               size_t *blocked, size_t *channelsLast = nullptr) {
  std::map<std::string, Tensor> inputs;
  for (const auto &[name, shape, seed] : net.inputs) {
    Tensor r = *randomTensor(ElementType::F32, shape, seed);
    inputs.emplace(name, *Tensor::fromDoubles(t, shape, *r.toDoubles(size_t(r.elementCount()))));
  }
  const std::string text = net.text(t == ElementType::F32 ? "f32" : "f64");
  RunOptions options;
  options.channelBlock = block;
  if (observe) options.observe = [](const Node &, size_t, const Tensor &) {};
  Ran r = runText(text.c_str(), inputs, options);
  EXPECT_TRUE(r.result.ok()) << r.result.error().message;
  if (!r.result.ok()) return {};
  *blocked = r.result->blockedTensors;
  if (channelsLast) *channelsLast = r.result->channelsLastTensors;
  return values(r.result->outputs[0]);
}

/// The network run in channel blocks of `block` with `kept` tensors in a channel layout (`which`
/// names them), `last` of them channels last, observed (none kept) and in f64 (none kept): the
/// same output, errors measured against its scale (several convolutions deep the sums cancel).
void expectBlocksAgree(const BlockedNetwork &net, int block, size_t kept, const char *which,
                       size_t last = 0) {
  SCOPED_TRACE(fmt::format("blocks of {}", block));
  size_t blocked = 0, none = 0, wide = 0, channelsLast = 0;
  auto inBlocks = runNetwork(net, ElementType::F32, false, block, &blocked, &channelsLast);
  auto plain = runNetwork(net, ElementType::F32, true, block, &none);
  auto exact = runNetwork(net, ElementType::F64, false, block, &wide);
  if (detail::dnnlAvailable()) {
    EXPECT_EQ(blocked, kept) << which;
    EXPECT_EQ(channelsLast, last) << which;
  }
  EXPECT_EQ(none, 0u);
  EXPECT_EQ(wide, 0u);
  ASSERT_EQ(inBlocks.size(), exact.size());
  ASSERT_EQ(plain.size(), exact.size());
  ASSERT_FALSE(exact.empty());
  double scale = 0;
  for (double v : exact)
    scale = std::max(scale, std::abs(v));
  ASSERT_GT(scale, 1.0);
  for (size_t i = 0; i < exact.size(); ++i) {
    ASSERT_NEAR(inBlocks[i], exact[i], 1e-5 * scale) << "element " << i;
    ASSERT_NEAR(plain[i], exact[i], 1e-5 * scale) << "element " << i;
  }
}

/// A network of 2-D convolutions whose tensors the executor keeps in channel blocks between
/// them (a residual Add, a Clip with scalar bounds, a depthwise conv), with readers that need
/// the plain layout (a broadcasting Mul, a pooling, a Shape, a graph output), agrees with the
/// same graph run with every tensor observed (plain everywhere) and in f64.
std::string convolutionsNetworkText(const char *type) {
  return fmt::format(R"(
graph main(x: {0}[1,16,10,10], w1: {0}[32,16,3,3], w2: {0}[32,1,3,3], w3: {0}[32,32,1,1], w4: {0}[16,32,1,1]) {{
  lo = Constant() {{value = {0}[] 0}}
  hi = Constant() {{value = {0}[] 6}}
  a = Conv(x, w1) {{pads = [1, 1, 1, 1]}}
  r = Relu(a)
  d = Conv(r, w2) {{pads = [1, 1, 1, 1], group = 32}}
  c = Clip(d, lo, hi)
  e = Conv(c, w3)
  s = Add(e, r)
  k = Conv(s, w3) {{strides = [1, 1]}}
  q = Relu(k)
  t = Add(q, s)
  u = Conv(t, w4)
  p = GlobalAveragePool(u)
  m = Mul(u, p)
  h = Shape(u)
  return m, h
}}
)",
                     type);
}

TEST(LibraryKernels, ConvolutionsKeptInChannelBlocksAgreeWithThePlainLayout) {
  const BlockedNetwork net = {convolutionsNetworkText,
                              {{"x", {1, 16, 10, 10}, 500},
                               {"w1", {32, 16, 3, 3}, 501},
                               {"w2", {32, 1, 3, 3}, 502},
                               {"w3", {32, 32, 1, 1}, 503},
                               {"w4", {16, 32, 1, 1}, 504}}};
  expectBlocksAgree(net, 16, 9, "a, r, d, c, e, s, k, q, t");
  expectBlocksAgree(net, 8, 9, "a, r, d, c, e, s, k, q, t");
}

/// Squeeze-excite blocks (a GlobalAveragePool, two 1x1 convolutions, a Sigmoid, then the
/// block's input times the per-channel scale, the scale on either side, per image or one for
/// the batch) whose input, scaled output and the convolutions around them stay in channel
/// blocks; Add, Sub and Div by a value per channel too. The squeezed 8 channels between the two
/// 1x1 convolutions are kept channels last.
std::string squeezeExciteNetworkText(const char *type) {
  return fmt::format(R"(
graph main(x: {0}[2,16,9,7], w1: {0}[32,16,3,3], wr: {0}[8,32,1,1], we: {0}[32,8,1,1], w3: {0}[32,32,1,1], c: {0}[1,32,1,1]) {{
  a = Conv(x, w1) {{pads = [1, 1, 1, 1]}}
  r = Relu(a)
  p = GlobalAveragePool(r)
  q = Conv(p, wr)
  z = Relu(q)
  e = Conv(z, we)
  g = Sigmoid(e)
  m = Mul(r, g)
  k = Conv(m, w3)
  n = Mul(g, k)
  s = Sub(n, c)
  d = Div(s, g)
  f = Add(c, d)
  o = Conv(f, w3)
  return o
}}
)",
                     type);
}

TEST(LibraryKernels, SqueezeExciteBlocksKeptInChannelBlocksAgreeWithThePlainLayout) {
  const BlockedNetwork net = {squeezeExciteNetworkText,
                              {{"x", {2, 16, 9, 7}, 600},
                               {"w1", {32, 16, 3, 3}, 601},
                               {"wr", {8, 32, 1, 1}, 602},
                               {"we", {32, 8, 1, 1}, 603},
                               {"w3", {32, 32, 1, 1}, 604},
                               {"c", {1, 32, 1, 1}, 605}}};
  expectBlocksAgree(net, 16, 10, "a, r, m, k, n, s, d, f in blocks; q, z channels last", 2);
  expectBlocksAgree(net, 8, 10, "a, r, m, k, n, s, d, f, q, z in blocks");
}

/// A MobileNetV3-like network whose channel counts are not whole blocks of 16 (24, 40, 72) kept
/// channels last between its convolutions, beside 16 channels in blocks: a convolution from
/// blocks to channels last, depthwise ones, a residual Add, a squeeze-excite block (its
/// GlobalAveragePool reading channels last, its scale a Mul by a value per channel),
/// BatchNormalization, a MaxPool on oneDNN and a dilated one oneDNN declines (the loops on a
/// plain copy, the output put back channels last). Against the same graph observed and in f64.
std::string channelsLastNetworkText(const char *type) {
  std::vector<double> variances(40);
  for (size_t i = 0; i < variances.size(); ++i) variances[i] = 0.25 + 0.05 * double(i);
  return fmt::format(R"(
graph main(x: {0}[2,3,19,17], w0: {0}[16,3,3,3], w1: {0}[24,16,1,1], w2: {0}[24,1,3,3], w3: {0}[72,24,1,1],
           w4: {0}[72,1,5,5], wr: {0}[24,72,1,1], we: {0}[72,24,1,1], w5: {0}[40,72,1,1], w6: {0}[40,40,3,3],
           s: {0}[40], sb: {0}[40], mu: {0}[40]) {{
  v = Constant() {{value = {0}[40] [{1}]}}
  a = Conv(x, w0) {{pads = [1, 1, 1, 1], strides = [2, 2]}}
  h = HardSwish(a)
  b = Conv(h, w1)
  c = Conv(b, w2) {{pads = [1, 1, 1, 1], group = 24}}
  r = Relu(c)
  t = Add(r, b)
  e = Conv(t, w3)
  d = Conv(e, w4) {{pads = [2, 2, 2, 2], strides = [2, 2], group = 72}}
  p = GlobalAveragePool(d)
  q = Conv(p, wr)
  z = Relu(q)
  u = Conv(z, we)
  g = HardSigmoid(u) {{alpha = 0.16666666}}
  m = Mul(d, g)
  f = Conv(m, w5)
  n = BatchNormalization(f, s, sb, mu, v) {{epsilon = 0.001}}
  k = MaxPool(n) {{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}}
  l = MaxPool(k) {{kernel_shape = [2, 2], dilations = [2, 2]}}
  o = Conv(l, w6)
  return o
}}
)",
                     type, fmt::join(variances, ", "));
}

TEST(LibraryKernels, ChannelCountsNotWholeBlocksKeptChannelsLastAgreeWithThePlainLayout) {
  const BlockedNetwork net = {channelsLastNetworkText,
                              {{"x", {2, 3, 19, 17}, 900},
                               {"w0", {16, 3, 3, 3}, 901},
                               {"w1", {24, 16, 1, 1}, 902},
                               {"w2", {24, 1, 3, 3}, 903},
                               {"w3", {72, 24, 1, 1}, 904},
                               {"w4", {72, 1, 5, 5}, 905},
                               {"wr", {24, 72, 1, 1}, 906},
                               {"we", {72, 24, 1, 1}, 907},
                               {"w5", {40, 72, 1, 1}, 908},
                               {"w6", {40, 40, 3, 3}, 909},
                               {"s", {40}, 910},
                               {"sb", {40}, 911},
                               {"mu", {40}, 912}}};
  expectBlocksAgree(net, 16, 15,
                    "a, h in blocks; b, c, r, t, e, d, q, z, m, f, n, k, l channels last", 13);
  // 24, 40 and 72 channels are whole blocks of 8.
  expectBlocksAgree(net, 8, 15, "a, h, b, c, r, t, e, d, q, z, m, f, n, k, l in blocks");
}

/// Poolings between convolutions kept in channel blocks: a first layer of 3 plain channels
/// writing blocks, a MaxPool and an AveragePool (ceil_mode) on oneDNN, a dilated MaxPool that
/// oneDNN declines (the loops on a plain copy, the output put back in blocks). Against the same
/// graph observed (plain everywhere) and in f64.
std::string pooledNetworkText(const char *type) {
  return fmt::format(R"(
graph main(x: {0}[2,3,17,15], w1: {0}[32,3,3,3], w2: {0}[32,32,3,3], w3: {0}[16,32,1,1]) {{
  a = Conv(x, w1) {{pads = [1, 1, 1, 1]}}
  r = Relu(a)
  m = MaxPool(r) {{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}}
  b = Conv(m, w2) {{pads = [1, 1, 1, 1]}}
  p = AveragePool(b) {{kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1}}
  d = MaxPool(p) {{kernel_shape = [2, 2], dilations = [2, 2], pads = [1, 1, 1, 1]}}
  o = Conv(d, w3)
  return o
}}
)",
                     type);
}

TEST(LibraryKernels, PoolingsKeptInChannelBlocksAgreeWithThePlainLayout) {
  const BlockedNetwork net = {pooledNetworkText,
                              {{"x", {2, 3, 17, 15}, 700},
                               {"w1", {32, 3, 3, 3}, 701},
                               {"w2", {32, 32, 3, 3}, 702},
                               {"w3", {16, 32, 1, 1}, 703}}};
  expectBlocksAgree(net, 16, 6, "a, r, m, b, p, d");
  expectBlocksAgree(net, 8, 6, "a, r, m, b, p, d");
}

/// Max poolings of tensors kept in channel blocks (the executor's own kernel) against the maximum
/// over each window computed here from the input: between two identity 1x1 convolutions (which
/// keep the tensors in blocks and copy them exactly), strided, padded, a ceil_mode overhang, and
/// pads as large as the window (the corner windows wholly in the padding give the lowest float,
/// as onnxruntime gives), in blocks of 16 and of 8.
TEST(LibraryKernels, MaxPoolsOfChannelBlocksTakeEachWindowsMaximum) {
  struct Case {
    int64_t kh, kw, sh, sw, pt, pl, pb, pr;
    bool ceil;
  };
  const int64_t C = 16, H = 7, W = 9;
  std::vector<double> xs(size_t(C * H * W)), id(size_t(C * C), 0.0);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double((i * 37) % 101) - 50.0;
  for (int64_t c = 0; c < C; ++c) id[size_t(c * C + c)] = 1.0;
  for (Case k : {Case{3, 3, 2, 2, 1, 1, 1, 1, false}, Case{2, 3, 1, 2, 0, 1, 1, 0, true}, Case{2, 2, 1, 1, 2, 2, 2, 2, false}}) {
    const std::string text = fmt::format(R"(
graph main(x: f32[1,16,7,9], w: f32[16,16,1,1]) {{
  a = Conv(x, w)
  m = MaxPool(a) {{kernel_shape = [{}, {}], strides = [{}, {}], pads = [{}, {}, {}, {}], ceil_mode = {}}}
  o = Conv(m, w)
  return o
}}
)",
                                         k.kh, k.kw, k.sh, k.sw, k.pt, k.pl, k.pb, k.pr, k.ceil ? 1 : 0);
    // The expected output, window by window over the input (ceil_mode: a last window that starts
    // inside the input or its begin padding).
    auto length = [&](int64_t in, int64_t kk, int64_t st, int64_t p0, int64_t p1) {
      int64_t span = in + p0 + p1 - kk;
      int64_t n = (k.ceil ? (span + st - 1) / st : span / st) + 1;
      if (k.ceil && (n - 1) * st >= in + p0) --n;
      return n;
    };
    const int64_t OH = length(H, k.kh, k.sh, k.pt, k.pb), OW = length(W, k.kw, k.sw, k.pl, k.pr);
    std::vector<double> want;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double best = -std::numeric_limits<double>::infinity();
          bool any = false;
          for (int64_t i = oh * k.sh - k.pt; i < oh * k.sh - k.pt + k.kh; ++i)
            for (int64_t j = ow * k.sw - k.pl; j < ow * k.sw - k.pl + k.kw; ++j)
              if (i >= 0 && i < H && j >= 0 && j < W) best = std::max(best, xs[size_t((c * H + i) * W + j)]), any = true;
          want.push_back(any ? best : double(std::numeric_limits<float>::lowest()));
        }
    for (int block : {16, 8}) {
      SCOPED_TRACE(fmt::format("window {}x{}, blocks of {}", k.kh, k.kw, block));
      RunOptions options;
      options.channelBlock = block;
      Ran r = runText(text.c_str(), {{"x", f32({1, C, H, W}, xs)}, {"w", f32({C, C, 1, 1}, id)}}, options);
      ASSERT_TRUE(r.result.ok()) << r.result.error().message;
      if (detail::dnnlAvailable()) EXPECT_EQ(r.result->blockedTensors, 2u) << "a and m in blocks";
      EXPECT_EQ(r.result->outputs[0].tensor()->shape(), (Shape{1, C, OH, OW}));
      EXPECT_EQ(values(r.result->outputs[0]), want);
    }
  }
}

/// Concats of whole channel blocks and a BatchNormalization between convolutions kept in channel
/// blocks (DenseNet's and SqueezeNet's pattern: convolutions joined along the channels, then
/// normalised, a Relu, a convolution; a second Concat with axis -3 read by a pooling). Against
/// the same graph observed (plain everywhere) and in f64.
std::string concatNetworkText(const char *type) {
  std::vector<double> variances(48);
  for (size_t i = 0; i < variances.size(); ++i)
    variances[i] = 0.25 + 0.05 * double(i);
  return fmt::format(R"(
graph main(x: {0}[2,16,9,9], w1: {0}[32,16,3,3], w2: {0}[16,16,1,1], w3: {0}[16,48,1,1], w4: {0}[16,48,1,1],
           s: {0}[48], b: {0}[48], mu: {0}[48]) {{
  v = Constant() {{value = {0}[48] [{1}]}}
  a = Conv(x, w1) {{pads = [1, 1, 1, 1]}}
  e = Conv(x, w2)
  c = Concat(a, e) {{axis = 1}}
  n = BatchNormalization(c, s, b, mu, v) {{epsilon = 0.001}}
  r = Relu(n)
  d = Conv(r, w3)
  j = Concat(d, a) {{axis = -3}}
  m = MaxPool(j) {{kernel_shape = [2, 2], strides = [2, 2]}}
  o = Conv(m, w4)
  return o
}}
)",
                     type, fmt::join(variances, ", "));
}

TEST(LibraryKernels, ChannelConcatsAndBatchNormKeptInChannelBlocksAgreeWithThePlainLayout) {
  const BlockedNetwork net = {concatNetworkText,
                              {{"x", {2, 16, 9, 9}, 800},
                               {"w1", {32, 16, 3, 3}, 801},
                               {"w2", {16, 16, 1, 1}, 802},
                               {"w3", {16, 48, 1, 1}, 803},
                               {"w4", {16, 48, 1, 1}, 804},
                               {"s", {48}, 805},
                               {"b", {48}, 806},
                               {"mu", {48}, 807}}};
  expectBlocksAgree(net, 16, 8, "a, e, c, n, r, d, j, m");
  expectBlocksAgree(net, 8, 8, "a, e, c, n, r, d, j, m");
}

/// A U-Net's decoder step: ConvTransposes (2x2, stride 2) of a tensor kept in channel blocks,
/// written in channel blocks (constant W: the disjoint product writes the layout itself; W an
/// input: oneDNN's deconvolution, moved into the layout after), a Resize to the skip tensor's own
/// sizes (read by Shape: X shared) and a linear upsampling (resampled on the blocks' own axes),
/// joined with the skip tensor by a channel Concat, so that the skip tensor, its MaxPool and the
/// convolution after the Concat stay in blocks; a ConvTranspose of 12 channels (not whole blocks)
/// and an identity Resize of it kept channels last; a Resize of the channels too, from blocks to a
/// plain output (X read plain), and two of the plain graph input into blocks (Y relaid; the
/// identity one a copy, not X shared).
std::string uNetNetworkText(const char *type) {
  auto literal = [&](const Shape &s, uint64_t seed) {
    Tensor t = *randomTensor(ElementType::F32, s, seed);
    return fmt::format("{}[{}] [{}]", type, dims(s), fmt::join(*t.toDoubles(size_t(t.elementCount())), ", "));
  };
  return fmt::format(R"(
graph main(x: {0}[2,16,8,8], w1: {0}[16,16,3,3], wv: {0}[16,16,2,2], w3: {0}[16,96,3,3], wz: {0}[16,12,3,3]) {{
  wu = Constant() {{value = {1}}}
  bu = Constant() {{value = {2}}}
  wy = Constant() {{value = {3}}}
  up = Constant() {{value = f32[4] [1, 1, 2, 2]}}
  same = Constant() {{value = f32[4] [1, 1, 1, 1]}}
  fewer = Constant() {{value = f32[4] [1, 0.5, 2, 2]}}
  a = Conv(x, w1) {{pads = [1, 1, 1, 1]}}
  r = Relu(a)
  p = MaxPool(r) {{kernel_shape = [2, 2], strides = [2, 2]}}
  b = Conv(p, w1) {{pads = [1, 1, 1, 1]}}
  q = Relu(b)
  u = ConvTranspose(q, wu, bu) {{strides = [2, 2]}}
  sz = Shape(r)
  uu = Resize(u, , , sz)
  v = ConvTranspose(q, wv) {{strides = [2, 2]}}
  qq = Resize(q, , up) {{mode = "linear"}}
  xi = Resize(x, , up) {{mode = "cubic"}}
  ci = Conv(xi, w1) {{pads = [1, 1, 1, 1]}}
  xp = MaxPool(ci) {{kernel_shape = [2, 2], strides = [2, 2]}}
  xj = Resize(x, , same)
  cj = Conv(xj, w1) {{pads = [1, 1, 1, 1]}}
  c = Concat(r, uu, v, qq, xp, cj) {{axis = 1}}
  o1 = Conv(c, w3) {{pads = [1, 1, 1, 1]}}
  y = ConvTranspose(q, wy) {{strides = [2, 2]}}
  yy = Resize(y, , same)
  o2 = Conv(yy, wz) {{pads = [1, 1, 1, 1]}}
  g = Resize(q, , fewer) {{mode = "nearest"}}
  gm = ReduceMax(g)
  o3 = Add(o1, o2)
  o = Add(o3, gm)
  return o
}}
)",
                     type, literal({16, 16, 2, 2}, 911), literal({16}, 912), literal({16, 12, 2, 2}, 913));
}

TEST(LibraryKernels, ConvTransposesAndResizesKeptInChannelBlocksAgreeWithThePlainLayout) {
  const BlockedNetwork net = {uNetNetworkText,
                              {{"x", {2, 16, 8, 8}, 900},
                               {"w1", {16, 16, 3, 3}, 901},
                               {"wv", {16, 16, 2, 2}, 902},
                               {"w3", {16, 96, 3, 3}, 903},
                               {"wz", {16, 12, 3, 3}, 904}}};
  const char *kept = "a, r, p, b, q, u, uu, v, qq, xi, ci, xp, xj, cj, c in blocks; y, yy channels last";
  expectBlocksAgree(net, 16, 17, kept, 2);
  expectBlocksAgree(net, 8, 17, kept, 2);
}

/// GELU as torch exports it, rewritten into one Gelu for the executor (both nestings of its Muls,
/// Div or Mul by the root), against the same graph run as it is (five ops) and in f64; NaN,
/// infinities and large arguments included. A pattern whose Erf output is also a graph output
/// is not rewritten and agrees too.
void geluAgrees(const std::string &body, bool folded) {
  SCOPED_TRACE(body);
  std::vector<double> xs = {NAN, INFINITY, -INFINITY, 100, -100, 85, -85, 0, -0.0, 1e-6, -3, 3};
  for (int i = 0; i < 52; ++i) xs.push_back(-5 + 0.2 * i);
  std::vector<double> out[3];
  size_t gelus[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    const char *type = k < 2 ? "f32" : "f64";
    ElementType t = k < 2 ? ElementType::F32 : ElementType::F64;
    std::string text = fmt::format(
        "graph main(x: {0}[64]) {{\n  r2 = Constant() {{value = {0}[] 1.4142135623730951}}\n"
        "  ir2 = Constant() {{value = {0}[] 0.7071067811865476}}\n  one = Constant() {{value = {0}[] 1}}\n"
        "  half = Constant() {{value = {0}[] 0.5}}\n  one2 = Constant() {{value = {0}[1,1] [1]}}\n  {1}\n}}\n",
        type, body);
    RunOptions options;
    std::map<std::string, OpTime> profile;
    options.profile = &profile;
    Ran r = runText(text.c_str(), std::map<std::string, Tensor>{{"x", *Tensor::fromDoubles(t, {64}, xs)}}, options,
                    k != 1);
    ASSERT_TRUE(r.result.ok()) << r.result.error().message;
    out[k] = values(r.result->outputs[0]);
    gelus[k] = size_t(profile["Gelu"].calls);
  }
  EXPECT_EQ(gelus[0], folded ? 1u : 0u);
  EXPECT_EQ(gelus[1], 0u);
  EXPECT_EQ(gelus[2], 0u); // f64 is not rewritten
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < xs.size(); ++i) {
      if (std::isnan(out[2][i])) EXPECT_TRUE(std::isnan(out[k][i])) << "run " << k << " x = " << xs[i];
      else if (std::isinf(out[2][i])) EXPECT_EQ(out[k][i], out[2][i]) << "run " << k << " x = " << xs[i];
      else EXPECT_NEAR(out[k][i], out[2][i], 2e-6 * (1 + std::abs(out[2][i]))) << "run " << k << " x = " << xs[i];
    }
}

TEST(LibraryKernels, GeluFoldedIntoOnePassAgrees) {
  geluAgrees("d = Div(x, r2)\n  e = Erf(d)\n  a = Add(e, one)\n  m = Mul(x, a)\n  y = Mul(m, half)\n  return y", true);
  geluAgrees("d = Mul(ir2, x)\n  e = Erf(d)\n  a = Add(one, e)\n  h = Mul(half, x)\n  y = Mul(h, a)\n  return y", true);
  geluAgrees("d = Div(x, r2)\n  e = Erf(d)\n  a = Add(e, one)\n  m = Mul(a, x)\n  y = Mul(half, m)\n  return y, e", false);
  geluAgrees("d = Div(x, half)\n  e = Erf(d)\n  a = Add(e, one)\n  m = Mul(x, a)\n  y = Mul(m, half)\n  return y", false);
  // A constant of rank 2 broadcasts x [64] to [1,64]: not folded (the fold gives x's shape).
  geluAgrees("d = Div(x, r2)\n  e = Erf(d)\n  a = Add(e, one2)\n  m = Mul(x, a)\n  y = Mul(m, half)\n  return y", false);
}

} // namespace
} // namespace sf::eval
