// Kernels of the quantized contrib ops (src/eval/kernels/contrib_quantized.cpp): MatMulNBits with
// constant weights (dequantized once to f32 and kept, the product on oneDNN) against the same
// op with its weights fed as inputs (dequantized and multiplied in double on every call), and
// the kept weights following a change of the constants.
#include "../run_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sf::eval {
namespace {

std::string list(const std::vector<int> &v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::string listF(const std::vector<float> &v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

/// A MatMulNBits of K = 32, N = 8, 4 bits in blocks of 16 (B [8, 2, 8] bytes, a packed zero point
/// per row and block, a bias), its weights as Constants (`constant`) or as graph inputs.
std::string model(bool constant, const std::vector<int> &b, const std::vector<float> &scales,
                  const std::vector<int> &zp, const std::vector<float> &bias) {
  std::string params = "a: f32[M,32]", body;
  if (constant) {
    body += fmt::format("  b = Constant() {{value = u8[8,2,8] {}}}\n", list(b));
    body += fmt::format("  s = Constant() {{value = f32[16] {}}}\n", listF(scales));
    body += fmt::format("  z = Constant() {{value = u8[8,1] {}}}\n", list(zp));
    body += fmt::format("  c = Constant() {{value = f32[8] {}}}\n", listF(bias));
  } else {
    params += ", b: u8[8,2,8], s: f32[16], z: u8[8,1], c: f32[8]";
  }
  return fmt::format("graph main({}) {{\n{}  y = com.microsoft.MatMulNBits(a, b, s, z, , c) {{K = 32, N = 8, bits = 4, "
                     "block_size = 16}}\n  return y\n}}\n",
                     params, body);
}

std::vector<double> runModel(const std::string &text, const Tensor &a, const std::vector<int> &b,
                             const std::vector<float> &scales, const std::vector<int> &zp,
                             const std::vector<float> &bias) {
  std::map<std::string, Tensor> inputs{{"a", a}};
  if (text.find("Constant") == std::string::npos) {
    std::vector<int64_t> bb(b.begin(), b.end()), zz(zp.begin(), zp.end());
    inputs.emplace("b", *Tensor::fromInt64s({8, 2, 8}, bb, ElementType::U8));
    inputs.emplace("s", *Tensor::fromDoubles(ElementType::F32, {16}, std::vector<double>(scales.begin(), scales.end())));
    inputs.emplace("z", *Tensor::fromInt64s({8, 1}, zz, ElementType::U8));
    inputs.emplace("c", *Tensor::fromDoubles(ElementType::F32, {8}, std::vector<double>(bias.begin(), bias.end())));
  }
  Ran r = runText(text.c_str(), inputs);
  EXPECT_TRUE(r.result.ok()) << (r.result.ok() ? "" : r.result.error().message) << "\n" << text;
  if (!r.result.ok()) return {};
  return values(r.result->outputs[0]);
}

TEST(QuantizedKernels, MatMulNBitsWithConstantWeightsAgreesWithTheWeightsFed) {
  for (int round = 0; round < 2; ++round) { // the second round: other constants, the kept weights replaced
    std::vector<int> b(128), zp(8);
    std::vector<float> scales(16), bias(8);
    for (int i = 0; i < 128; ++i) b[size_t(i)] = (i * 37 + 11 + round * 101) % 256;
    for (int i = 0; i < 8; ++i) zp[size_t(i)] = (i * 29 + 3 + round * 7) % 256; // two 4-bit zero points a byte
    for (int i = 0; i < 16; ++i) scales[size_t(i)] = 0.01f * float(i + 1) * (round ? -1.0f : 1.0f);
    for (int i = 0; i < 8; ++i) bias[size_t(i)] = 0.5f * float(i) - 1.0f;
    for (int64_t m : {1, 5}) {
      SCOPED_TRACE(fmt::format("round {} M {}", round, m));
      Tensor a = *randomTensor(ElementType::F32, {m, 32}, uint64_t(7 + m + round));
      auto kept = runModel(model(true, b, scales, zp, bias), a, b, scales, zp, bias);
      auto fed = runModel(model(false, b, scales, zp, bias), a, b, scales, zp, bias);
      ASSERT_EQ(size_t(m * 8), kept.size());
      ASSERT_EQ(kept.size(), fed.size());
      double largest = 0;
      for (double v : fed) largest = std::max(largest, std::abs(v));
      ASSERT_GT(largest, 0.1) << "the product is not a trivial one";
      for (size_t i = 0; i < kept.size(); ++i) EXPECT_NEAR(kept[i], fed[i], 1e-5 * (1 + std::abs(fed[i]))) << i;
    }
  }
}

} // namespace
} // namespace sf::eval
