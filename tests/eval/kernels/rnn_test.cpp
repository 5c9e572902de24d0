// Tests of the recurrent kernels (src/eval/kernels/rnn.cpp): in f32 the gates' products run on
// sgemm, every sequence of the batch at once; in f64 they run in double loops sequence by
// sequence (the path ONNX's backend cases check in f32 too, before the products moved). The two
// must agree on every output, across GRU (linear_before_reset either way), LSTM (peepholes,
// clip, initial cell state), RNN, the three directions, sequence_lens shorter than the sequence
// (and 0), the batch-first layout, and sizes of 0.
#include "../run_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sf::eval {
namespace {

struct RnnCase {
  std::string text; // with {0} for the element type
  std::vector<std::tuple<std::string, Shape, uint64_t>> inputs; // drawn in f32, the same values in both types
  std::vector<int32_t> lens;                                    // sequence_lens where the case has one
  size_t outputs;
};

std::vector<std::vector<double>> runIn(const RnnCase &c, ElementType t) {
  std::map<std::string, Tensor> inputs;
  for (const auto &[name, shape, seed] : c.inputs) {
    Tensor r = *randomTensor(ElementType::F32, shape, seed);
    inputs.emplace(name, *Tensor::fromDoubles(t, shape, *r.toDoubles(size_t(r.elementCount()))));
  }
  if (!c.lens.empty()) {
    std::vector<double> l(c.lens.begin(), c.lens.end());
    inputs.emplace("lens", *Tensor::fromDoubles(ElementType::I32, {int64_t(l.size())}, l));
  }
  const std::string text = fmt::format(fmt::runtime(c.text), t == ElementType::F32 ? "f32" : "f64");
  Ran r = runText(text.c_str(), inputs);
  EXPECT_TRUE(r.result.ok()) << (r.result.ok() ? "" : r.result.error().message);
  std::vector<std::vector<double>> out;
  if (!r.result.ok()) return out;
  for (size_t k = 0; k < c.outputs; ++k) out.push_back(values(r.result->outputs[k]));
  return out;
}

void expectTypesAgree(const RnnCase &c) {
  auto single = runIn(c, ElementType::F32), wide = runIn(c, ElementType::F64);
  ASSERT_EQ(single.size(), c.outputs);
  ASSERT_EQ(wide.size(), c.outputs);
  for (size_t k = 0; k < c.outputs; ++k) {
    ASSERT_EQ(single[k].size(), wide[k].size()) << "output " << k;
    for (size_t i = 0; i < wide[k].size(); ++i)
      EXPECT_NEAR(single[k][i], wide[k][i], 2e-6) << "output " << k << " element " << i;
  }
}

TEST(RnnKernels, GruInF32AgreesWithF64BidirectionalWithSequenceLengths) {
  expectTypesAgree({R"(
graph main(x: {0}[5,3,4], w: {0}[2,18,4], r: {0}[2,18,6], b: {0}[2,36], lens: i32[3], h0: {0}[2,3,6]) {{
  y, yh = GRU(x, w, r, b, lens, h0) {{hidden_size = 6, direction = "bidirectional", linear_before_reset = 1}}
  return y, yh
}}
)",
                    {{"x", {5, 3, 4}, 11}, {"w", {2, 18, 4}, 12}, {"r", {2, 18, 6}, 13}, {"b", {2, 36}, 14},
                     {"h0", {2, 3, 6}, 15}},
                    {5, 2, 0},
                    2});
}

TEST(RnnKernels, GruResetBeforeTheProductBatchFirstAgreesWithF64) {
  expectTypesAgree({R"(
opset 14
graph main(x: {0}[3,4,5], w: {0}[1,21,5], r: {0}[1,21,7], b: {0}[1,42]) {{
  y, yh = GRU(x, w, r, b) {{hidden_size = 7, layout = 1}}
  return y, yh
}}
)",
                    {{"x", {3, 4, 5}, 21}, {"w", {1, 21, 5}, 22}, {"r", {1, 21, 7}, 23}, {"b", {1, 42}, 24}},
                    {},
                    2});
}

TEST(RnnKernels, LstmWithPeepholesClipAndStatesAgreesWithF64) {
  expectTypesAgree({R"(
graph main(x: {0}[6,2,3], w: {0}[2,20,3], r: {0}[2,20,5], b: {0}[2,40], lens: i32[2], h0: {0}[2,2,5], c0: {0}[2,2,5], p: {0}[2,15]) {{
  y, yh, yc = LSTM(x, w, r, b, lens, h0, c0, p) {{hidden_size = 5, direction = "bidirectional", clip = 0.5}}
  return y, yh, yc
}}
)",
                    {{"x", {6, 2, 3}, 31}, {"w", {2, 20, 3}, 32}, {"r", {2, 20, 5}, 33}, {"b", {2, 40}, 34},
                     {"h0", {2, 2, 5}, 35}, {"c0", {2, 2, 5}, 36}, {"p", {2, 15}, 37}},
                    {4, 6},
                    3});
}

TEST(RnnKernels, RnnReverseWithActivationsAgreesWithF64) {
  expectTypesAgree({R"(
graph main(x: {0}[4,2,3], w: {0}[1,5,3], r: {0}[1,5,5]) {{
  y, yh = RNN(x, w, r) {{hidden_size = 5, direction = "reverse", activations = ["Relu"]}}
  return y, yh
}}
)",
                    {{"x", {4, 2, 3}, 41}, {"w", {1, 5, 3}, 42}, {"r", {1, 5, 5}, 43}},
                    {},
                    2});
}

TEST(RnnKernels, EmptySequencesAndBatchesRun) {
  // No step (the final state is the initial one) and no sequence: both types, no error.
  expectTypesAgree({R"(
graph main(x: {0}[0,2,3], w: {0}[1,12,3], r: {0}[1,12,4], h0: {0}[1,2,4]) {{
  y, yh = GRU(x, w, r, , , h0) {{hidden_size = 4}}
  return y, yh
}}
)",
                    {{"x", {0, 2, 3}, 51}, {"w", {1, 12, 3}, 52}, {"r", {1, 12, 4}, 53}, {"h0", {1, 2, 4}, 54}},
                    {},
                    2});
  expectTypesAgree({R"(
graph main(x: {0}[3,0,3], w: {0}[1,16,3], r: {0}[1,16,4]) {{
  y, yh, yc = LSTM(x, w, r) {{hidden_size = 4}}
  return y, yh, yc
}}
)",
                    {{"x", {3, 0, 3}, 61}, {"w", {1, 16, 3}, 62}, {"r", {1, 16, 4}, 63}},
                    {},
                    3});
}

} // namespace
} // namespace sf::eval
