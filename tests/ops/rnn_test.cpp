// Tests of the recurrent rules (src/ops/rnn.cpp): RNN, GRU, LSTM with both layouts, directions,
// hidden_size from the attribute or the weights, dims merged across inputs, validation of the
// weight shapes; plus ONNX's backend node tests for these ops.
#include "op_test_util.h"

namespace sf::test {
namespace {

TEST(RnnRule, LstmStaticThreeOutputs) {
  OpTester t("LSTM", 14);
  t.input("f32[5,2,4]").input("f32[1,12,4]").input("f32[1,12,3]").attr("hidden_size", 3).outputs(3);
  EXPECT_EQ(t.run(), "f32[5,1,2,3]; f32[1,2,3]; f32[1,2,3]");
}

TEST(RnnRule, BidirectionalSymbolic) {
  OpTester t("GRU", 14);
  t.input("f32[S,N,8]").input("f32[2,12,8]").input("f32[2,12,4]").input("f32[2,24]");
  t.attr("hidden_size", 4).attr("direction", "bidirectional").outputs(2);
  EXPECT_EQ(t.run(), "f32[S,2,N,4]; f32[2,N,4]");
}

TEST(RnnRule, HiddenSizeFromR) {
  // No hidden_size attribute: R's last axis is the hidden size, symbolic or not.
  OpTester sym("RNN", 14);
  sym.input("f32[S,N,I]").input("f32[1,H,I]").input("f32[1,H,H]").outputs(2);
  EXPECT_EQ(sym.run(), "f32[S,1,N,H]; f32[1,N,H]");
  OpTester lstm("LSTM", 14);
  lstm.input("f32[S,N,8]").input("f32[1,20,8]").input("f32[1,20,5]").outputs(3);
  EXPECT_EQ(lstm.run(), "f32[S,1,N,5]; f32[1,N,5]; f32[1,N,5]");
}

TEST(RnnRule, HiddenSizeFromWRows) {
  OpTester t("GRU", 14);
  t.input("f32[S,N,8]").input("f32[1,18,8]").input("f32[?,?,?]").outputs(2);
  EXPECT_EQ(t.run(), "f32[S,1,N,6]; f32[1,N,6]");
  OpTester bad("LSTM", 14);
  bad.input("f32[S,N,8]").input("f32[1,18,8]").input("?[...]").outputs(2);
  EXPECT_EQ(bad.run(),
            "error: W (input 1) has 18 rows, not a multiple of 4 (f32[1,18,8])");
}

TEST(RnnRule, Intervals) {
  OpTester t("RNN", 14);
  t.input("f32[?{1..10},?{2..4},4]").input("f32[1,3,4]").input("f32[1,3,3]").attr("hidden_size", 3);
  t.outputs(2);
  EXPECT_EQ(t.run(), "f32[?{1..10},1,?{2..4},3]; f32[1,?{2..4},3]");
}

TEST(RnnRule, BatchFromInitialState) {
  // X says nothing about the batch: initial_h and sequence_lens do.
  OpTester t("GRU", 14);
  t.input("f32[...]").input("f32[1,9,4]").input("f32[1,9,3]").absent().input("i32[B]");
  t.input("f32[1,B,3]").attr("hidden_size", 3).outputs(2);
  EXPECT_EQ(t.run(), "f32[?,1,B,3]; f32[1,B,3]");
  // ... and a static batch reaches the symbolic X.
  OpTester s("LSTM", 14);
  s.input("f32[S,N,4]").input("f32[1,12,4]").input("f32[1,12,3]").absent().absent();
  s.input("f32[1,2,3]").input("f32[1,2,3]").attr("hidden_size", 3).outputs(3);
  EXPECT_EQ(s.run(), "f32[S,1,2,3]; f32[1,2,3]; f32[1,2,3]");
}

TEST(RnnRule, BatchwiseLayout) {
  OpTester t("LSTM", 14);
  t.input("f32[N,S,8]").input("f32[2,16,8]").input("f32[2,16,4]").absent().absent();
  t.input("f32[N,2,4]").attr("layout", 1).attr("direction", "bidirectional").outputs(3);
  EXPECT_EQ(t.run(), "f32[N,S,2,4]; f32[N,2,4]; f32[N,2,4]");
  // Before opset 14 there is no layout attribute: X is [seq, batch, input].
  OpTester old("RNN", 7);
  old.input("f32[S,N,8]").input("f32[1,4,8]").input("f32[1,4,4]").outputs(2);
  EXPECT_EQ(old.run(), "f32[S,1,N,4]; f32[1,N,4]");
}

TEST(RnnRule, UnknownRankAndType) {
  OpTester t("GRU", 14);
  t.input("?[...]").input("f16[1,15,?]").input("?[...]").attr("hidden_size", 5).outputs(2);
  EXPECT_EQ(t.run(), "f16[?,1,?,5]; f16[1,?,5]");
}

TEST(RnnRule, PeepholesAndBiasChecked) {
  OpTester ok("LSTM", 14);
  ok.input("f32[S,N,4]").input("f32[1,12,4]").input("f32[1,12,3]").input("f32[1,24]").absent();
  ok.absent().absent().input("f32[1,9]").attr("hidden_size", 3).outputs(2);
  EXPECT_EQ(ok.run(), "f32[S,1,N,3]; f32[1,N,3]");
  OpTester p("LSTM", 14);
  p.input("f32[S,N,4]").input("f32[1,12,4]").input("f32[1,12,3]").absent().absent();
  p.absent().absent().input("f32[1,12]").attr("hidden_size", 3).outputs(2);
  EXPECT_EQ(p.run(), "error: input 7 (P) has 12 at axis 1, expected 9 (f32[1,12])");
  OpTester b("GRU", 14);
  b.input("f32[S,N,4]").input("f32[1,9,4]").input("f32[1,9,3]").input("f32[1,9]");
  b.attr("hidden_size", 3).outputs(2);
  EXPECT_EQ(b.run(), "error: input 3 (B) has 9 at axis 1, expected 18 (f32[1,9])");
}

TEST(RnnRule, Errors) {
  OpTester w("GRU", 14);
  w.input("f32[S,N,2]").input("f32[1,15,2]").input("f32[1,12,4]").attr("hidden_size", 4);
  EXPECT_EQ(w.run(), "error: input 1 (W) has 15 at axis 1, expected 12 (f32[1,15,2])");
  OpTester in("RNN", 14);
  in.input("f32[S,N,3]").input("f32[1,4,2]").input("f32[1,4,4]").attr("hidden_size", 4);
  EXPECT_EQ(in.run(), "error: input 1 (W) has 2 at axis 2, expected 3 (f32[1,4,2])");
  OpTester dir("RNN", 14);
  dir.input("f32[S,N,2]").input("f32[1,4,2]").input("f32[1,4,4]").attr("direction", "bidirectional");
  EXPECT_EQ(dir.run(), "error: input 1 (W) has 1 at axis 0, expected 2 (f32[1,4,2])");
  OpTester bad("RNN", 14);
  bad.input("f32[S,N,2]").input("f32[1,4,2]").input("f32[1,4,4]").attr("direction", "both");
  EXPECT_EQ(bad.run(), "error: direction 'both' is not one of forward, reverse, bidirectional");
  OpTester rank("LSTM", 14);
  rank.input("f32[S,2]").input("f32[1,12,2]").input("f32[1,12,3]");
  EXPECT_EQ(rank.run(), "error: input 0 (X) has rank 2, expected 3 (f32[S,2])");
  OpTester type("LSTM", 14);
  type.input("f32[S,N,2]").input("f16[1,12,2]").input("f32[1,12,3]");
  EXPECT_EQ(type.run(), "error: input 1 is f16[1,12,2], expected element type f32 like X");
  OpTester lens("GRU", 14);
  lens.input("f32[S,N,2]").input("f32[1,9,2]").input("f32[1,9,3]").absent().input("i64[N]");
  EXPECT_EQ(lens.run(), "error: sequence_lens (input 4) must be i32, got i64[N]");
  OpTester layout("GRU", 14);
  layout.input("f32[S,N,2]").input("f32[1,9,2]").input("f32[1,9,3]").attr("layout", 2);
  EXPECT_EQ(layout.run(), "error: layout must be 0 or 1, got 2");
  OpTester h("GRU", 14);
  h.input("f32[S,N,2]").input("f32[1,9,2]").input("f32[1,9,3]").attr("hidden_size", 0);
  EXPECT_EQ(h.run(), "error: hidden_size must be positive, got 0");
}

TEST(RnnRule, BatchLearnedEverywhere) {
  // initial_h says the batch N is 2: every tensor with N now knows it.
  OpTester t("RNN", 14);
  t.input("f32[S,N,2]").input("f32[1,4,2]").input("f32[1,4,4]").absent().absent();
  t.input("f32[1,2,4]").outputs(2);
  EXPECT_EQ(t.run(), "f32[S,1,2,4]; f32[1,2,4]");
  EXPECT_EQ(toString(t.g.fact(t.g.inputs[0])), "f32[S,2,2]");
}

class RnnOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(RnnOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

// ONNX's backend node tests (/usr/share/libonnx-testdata/data/node/test_*): inputs at their
// actual shapes, outputs as computed by the reference; an output the test does not name (Y in
// the *_defaults cases) is checked against the spec's formula.
const std::vector<NodeCase> kRnnNodeCases = {
    {"gru_batchwise", "GRU", 14, {P("f32[3,1,2]"), P("f32[1,18,2]"), P("f32[1,18,6]")}, {{"hidden_size", int64_t(6)}, {"layout", int64_t(1)}}, 2, "f32[3,1,1,6]; f32[3,1,6]"},
    {"gru_defaults", "GRU", 14, {P("f32[1,3,2]"), P("f32[1,15,2]"), P("f32[1,15,5]")}, {{"hidden_size", int64_t(5)}}, 2, "f32[1,1,3,5]; f32[1,3,5]"},
    {"gru_seq_length", "GRU", 14, {P("f32[2,3,3]"), P("f32[1,15,3]"), P("f32[1,15,5]"), P("f32[1,30]")}, {{"hidden_size", int64_t(5)}}, 2, "f32[2,1,3,5]; f32[1,3,5]"},
    {"gru_with_initial_bias", "GRU", 14, {P("f32[1,3,3]"), P("f32[1,9,3]"), P("f32[1,9,3]"), P("f32[1,18]")}, {{"hidden_size", int64_t(3)}}, 2, "f32[1,1,3,3]; f32[1,3,3]"},
    {"lstm_batchwise", "LSTM", 14, {P("f32[3,1,2]"), P("f32[1,28,2]"), P("f32[1,28,7]")}, {{"hidden_size", int64_t(7)}, {"layout", int64_t(1)}}, 2, "f32[3,1,1,7]; f32[3,1,7]"},
    {"lstm_defaults", "LSTM", 14, {P("f32[1,3,2]"), P("f32[1,12,2]"), P("f32[1,12,3]")}, {{"hidden_size", int64_t(3)}}, 2, "f32[1,1,3,3]; f32[1,3,3]"},
    {"lstm_with_initial_bias", "LSTM", 14, {P("f32[1,3,3]"), P("f32[1,16,3]"), P("f32[1,16,4]"), P("f32[1,32]")}, {{"hidden_size", int64_t(4)}}, 2, "f32[1,1,3,4]; f32[1,3,4]"},
    {"lstm_with_peepholes", "LSTM", 14, {P("f32[1,2,4]"), P("f32[1,12,4]"), P("f32[1,12,3]"), P("f32[1,24]"), I({2}, {1, 1}, ElementType::I32), P("f32[1,2,3]"), P("f32[1,2,3]"), P("f32[1,9]")}, {{"hidden_size", int64_t(3)}}, 2, "f32[1,1,2,3]; f32[1,2,3]"},
    {"rnn_seq_length", "RNN", 14, {P("f32[2,3,3]"), P("f32[1,5,3]"), P("f32[1,5,5]"), P("f32[1,10]")}, {{"hidden_size", int64_t(5)}}, 2, "f32[2,1,3,5]; f32[1,3,5]"},
    {"simple_rnn_batchwise", "RNN", 14, {P("f32[3,1,2]"), P("f32[1,4,2]"), P("f32[1,4,4]")}, {{"hidden_size", int64_t(4)}, {"layout", int64_t(1)}}, 2, "f32[3,1,1,4]; f32[3,1,4]"},
    {"simple_rnn_defaults", "RNN", 14, {P("f32[1,3,2]"), P("f32[1,4,2]"), P("f32[1,4,4]")}, {{"hidden_size", int64_t(4)}}, 2, "f32[1,1,3,4]; f32[1,3,4]"},
    {"simple_rnn_with_initial_bias", "RNN", 14, {P("f32[1,3,3]"), P("f32[1,5,3]"), P("f32[1,5,5]"), P("f32[1,10]")}, {{"hidden_size", int64_t(5)}}, 2, "f32[1,1,3,5]; f32[1,3,5]"},
};
INSTANTIATE_TEST_SUITE_P(RnnBackend, RnnOnnxNode, ::testing::ValuesIn(kRnnNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
