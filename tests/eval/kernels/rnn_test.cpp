// Tests of the recurrent kernels (src/eval/kernels/rnn.cpp): in f32 the whole recurrence runs in
// float (the gates' products on sgemm, every sequence of the batch at once; the activations over
// rows, Sigmoid and Tanh vectorised); in f64 it runs in double loops sequence by sequence (the
// path ONNX's backend cases check in f32 too, before f32 had its own). The two must agree on
// every output, across GRU (linear_before_reset either way), LSTM (peepholes, clip, initial cell
// state, input_forget), RNN, the three directions, the activation lists, sequence_lens shorter
// than the sequence (and 0), the batch-first layout, rows longer than a vector, and sizes of 0.
#include "../run_text.h"

#include <fmt/args.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sf::eval {
namespace {

using Drawn = std::vector<std::tuple<std::string, Shape, uint64_t>>; // name, shape, seed

struct RnnCase {
  std::string text; // with {0} for the element type, {1}, {2}... for the constants' values
  Drawn inputs;                 // drawn in f32, the same values in both types
  std::vector<int32_t> lens;    // sequence_lens where the case has one
  size_t outputs;
  Drawn constants = {};         // drawn so too, written into the text (a model's weights)
};

Tensor drawn(const Shape &shape, uint64_t seed, ElementType t) {
  Tensor r = *randomTensor(ElementType::F32, shape, seed);
  return *Tensor::fromDoubles(t, shape, *r.toDoubles(size_t(r.elementCount())));
}

/// The outputs in type t; with constants, of two runs of the same graph (the second with the
/// weights kept from the first).
std::vector<std::vector<double>> runIn(const RnnCase &c, ElementType t) {
  std::map<std::string, Tensor> inputs;
  for (const auto &[name, shape, seed] : c.inputs) inputs.emplace(name, drawn(shape, seed, t));
  if (!c.lens.empty()) {
    std::vector<double> l(c.lens.begin(), c.lens.end());
    inputs.emplace("lens", *Tensor::fromDoubles(ElementType::I32, {int64_t(l.size())}, l));
  }
  const char *type = t == ElementType::F32 ? "f32" : "f64";
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  args.push_back(std::string(type));
  for (const auto &[name, shape, seed] : c.constants) {
    Tensor v = drawn(shape, seed, t);
    args.push_back(fmt::format("{}[{}] [{}]", type, fmt::join(shape, ","),
                               fmt::join(*v.toDoubles(size_t(v.elementCount())), ", ")));
  }
  const std::string text = fmt::vformat(c.text, args);
  Ran r = runText(text.c_str(), inputs);
  EXPECT_TRUE(r.result.ok()) << (r.result.ok() ? "" : r.result.error().message);
  std::vector<std::vector<double>> out;
  if (!r.result.ok()) return out;
  for (size_t k = 0; k < c.outputs; ++k) out.push_back(values(r.result->outputs[k]));
  if (!c.constants.empty()) {
    auto again = run(*r.graph, inputs);
    EXPECT_TRUE(again.ok()) << (again.ok() ? "" : again.error().message);
    if (!again.ok()) return {};
    for (size_t k = 0; k < c.outputs; ++k) out.push_back(values(again->outputs[k]));
  }
  return out;
}

void expectTypesAgree(const RnnCase &c) {
  auto single = runIn(c, ElementType::F32), wide = runIn(c, ElementType::F64);
  const size_t runs = c.constants.empty() ? 1 : 2;
  ASSERT_EQ(single.size(), runs * c.outputs);
  ASSERT_EQ(wide.size(), runs * c.outputs);
  for (size_t k = 0; k < single.size(); ++k) {
    ASSERT_EQ(single[k].size(), wide[k].size()) << "output " << k;
    for (size_t i = 0; i < wide[k].size(); ++i)
      EXPECT_NEAR(single[k][i], wide[k][i], 2e-6) << "run " << k / c.outputs << " output " << k % c.outputs << " element " << i;
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

TEST(RnnKernels, LstmWithInputForgetActivationListAndBatchFirstAgreesWithF64) {
  expectTypesAgree({R"(
opset 14
graph main(x: {0}[3,5,4], w: {0}[1,36,4], r: {0}[1,36,9], b: {0}[1,72]) {{
  y, yh, yc = LSTM(x, w, r, b) {{hidden_size = 9, layout = 1, input_forget = 1,
                                 activations = ["HardSigmoid", "Softsign", "LeakyRelu"], activation_alpha = [0.3, 0.2],
                                 activation_beta = [0.4]}}
  return y, yh, yc
}}
)",
                    {{"x", {3, 5, 4}, 71}, {"w", {1, 36, 4}, 72}, {"r", {1, 36, 9}, 73}, {"b", {1, 72}, 74}},
                    {},
                    3});
}

TEST(RnnKernels, GruResetBeforeTheProductWithClipLengthsAndLongRowsAgreesWithF64) {
  // 37 hidden units: whole vectors and a tail in every row; the reset gate made for the running
  // sequences only before the second product of each step.
  expectTypesAgree({R"(
graph main(x: {0}[7,3,6], w: {0}[2,111,6], r: {0}[2,111,37], b: {0}[2,222], lens: i32[3]) {{
  y, yh = GRU(x, w, r, b, lens) {{hidden_size = 37, direction = "bidirectional", clip = 1.5}}
  return y, yh
}}
)",
                    {{"x", {7, 3, 6}, 81}, {"w", {2, 111, 6}, 82}, {"r", {2, 111, 37}, 83}, {"b", {2, 222}, 84}},
                    {7, 3, 0},
                    2});
}

TEST(RnnKernels, ConstantWeightsKeptBetweenRunsAgreeWithF64) {
  // W and R constants (a model's weights: the products by them on oneDNN where the build has it,
  // each direction's part of R packed apart and kept for the second run): both GRU forms and LSTM.
  for (int lbr : {0, 1})
    expectTypesAgree({fmt::format(R"(
graph main(x: {{0}}[6,2,5], b: {{0}}[2,60], lens: i32[2]) {{{{
  w = Constant() {{{{value = {{1}}}}}}
  r = Constant() {{{{value = {{2}}}}}}
  y, yh = GRU(x, w, r, b, lens) {{{{hidden_size = 10, direction = "bidirectional", linear_before_reset = {}}}}}
  return y, yh
}}}}
)",
                                  lbr),
                      {{"x", {6, 2, 5}, 91}, {"b", {2, 60}, 92}},
                      {6, 4},
                      2,
                      {{"w", {2, 30, 5}, 93}, {"r", {2, 30, 10}, 94}}});
  expectTypesAgree({R"(
graph main(x: {0}[4,3,5], b: {0}[2,64]) {{
  w = Constant() {{value = {1}}}
  r = Constant() {{value = {2}}}
  y, yh, yc = LSTM(x, w, r, b) {{hidden_size = 8, direction = "bidirectional"}}
  return y, yh, yc
}}
)",
                    {{"x", {4, 3, 5}, 95}, {"b", {2, 64}, 96}},
                    {},
                    3,
                    {{"w", {2, 32, 5}, 97}, {"r", {2, 32, 8}, 98}}});
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
