// Tests of the normalisation rules (src/ops/norm.cpp): BatchNormalization (training
// outputs, legacy opsets), InstanceNormalization, LayerNormalization (Mean/InvStdDev shapes),
// GroupNormalization (opset 18 and 21 scale shapes), LRN, MeanVarianceNormalization,
// LpNormalization and the softmax family (the axis validation); plus ONNX's backend node
// tests for these ops.
#include "op_test_util.h"

namespace sf::test {
namespace {

using Ints = std::vector<int64_t>;

OpTester &batchNorm(OpTester &t, const char *x, const char *c) {
  return t.input(x).input(c).input(c).input(c).input(c);
}

TEST(NormBatchNorm, StatisticsOfShapeC) {
  OpTester t("BatchNormalization", 15);
  batchNorm(t, "f32[N,64,H,W]", "f32[64]");
  EXPECT_EQ(t.run(), "f32[N,64,H,W]");
  OpTester d5("BatchNormalization", 15);
  batchNorm(d5, "f16[2,3,4,5,6]", "f16[3]");
  EXPECT_EQ(d5.run(), "f16[2,3,4,5,6]");
  // A 1-D input is (N) with C = 1.
  OpTester d1("BatchNormalization", 15);
  batchNorm(d1, "f32[N]", "f32[1]");
  EXPECT_EQ(d1.run(), "f32[N]");
}

TEST(NormBatchNorm, ChannelsAreMerged) {
  // C of X is learned from the statistics.
  OpTester t("BatchNormalization", 15);
  t.input("f32[N,C,H,W]").input("f32[?]").input("f32[32]").input("f32[?]").input("f32[?]").outputs(3)
      .attr("training_mode", 1);
  EXPECT_EQ(t.run(), "f32[N,32,H,W]; f32[32]; f32[32]");
  EXPECT_EQ(t.range("C"), "32..32");
  OpTester interval("BatchNormalization", 15);
  batchNorm(interval, "f32[?{1..8},?{16..64},7,7]", "f32[?{32..128}]");
  EXPECT_EQ(interval.run(), "f32[?{1..8},?{32..64},7,7]");
  OpTester symbolic("BatchNormalization", 15);
  symbolic.input("f32[N,C,L]").input("f32[D]").input("f32[D]").input("f32[D]").input("f32[D]").outputs(3);
  EXPECT_EQ(symbolic.run(), "f32[N,C,L]; f32[C]; f32[C]");
}

TEST(NormBatchNorm, OutputsByOpset) {
  // Opset 15: running mean and var in the statistics' type (T2).
  OpTester v15("BatchNormalization", 15);
  v15.input("f16[N,8,H,W]").input("f16[8]").input("f16[8]").input("f32[8]").input("f32[8]").outputs(3);
  EXPECT_EQ(v15.run(), "f16[N,8,H,W]; f32[8]; f32[8]");
  // Opset 9: mean, var, saved_mean, saved_var.
  OpTester v9("BatchNormalization", 9);
  batchNorm(v9, "f32[N,8,H,W]", "f32[8]").outputs(5);
  EXPECT_EQ(v9.run(), "f32[N,8,H,W]; f32[8]; f32[8]; f32[8]; f32[8]");
  // Opset 7 with spatial = 0: statistics per activation, shape X[1:].
  OpTester perActivation("BatchNormalization", 7);
  batchNorm(perActivation, "f32[N,8,H,W]", "f32[8,5,?]").attr("spatial", 0).outputs(2);
  EXPECT_EQ(perActivation.run(), "f32[N,8,5,W]; f32[8,5,W]");
  OpTester badActivation("BatchNormalization", 7);
  batchNorm(badActivation, "f32[N,8,H,W]", "f32[8]").attr("spatial", 0);
  EXPECT_EQ(badActivation.run(),
            "error: input 1 (scale) must have shape [8,H,W] with spatial = 0 (f32[8] vs f32[N,8,H,W])");
}

TEST(NormBatchNorm, UnknownRankAndType) {
  OpTester rank("BatchNormalization", 15);
  batchNorm(rank, "f32[...]", "f32[16]").outputs(3);
  EXPECT_EQ(rank.run(), "f32[...]; f32[16]; f32[16]");
  OpTester all("BatchNormalization", 15);
  batchNorm(all, "?[...]", "?[...]").outputs(3);
  EXPECT_EQ(all.run(), "?[...]; ?[?]; ?[?]");
}

TEST(NormBatchNorm, Errors) {
  OpTester c("BatchNormalization", 15);
  c.input("f32[N,3,H,W]").input("f32[3]").input("f32[4]").input("f32[3]").input("f32[3]");
  EXPECT_EQ(c.run(), "error: input 2 (B) has 4 elements, expected C = 3 (f32[4] vs f32[N,3,H,W])");
  OpTester rank("BatchNormalization", 15);
  rank.input("f32[N,3,H,W]").input("f32[1,3]").input("f32[3]").input("f32[3]").input("f32[3]");
  EXPECT_EQ(rank.run(), "error: input 1 (scale) has rank 2, expected 1 (f32[1,3])");
  OpTester scalar("BatchNormalization", 15);
  batchNorm(scalar, "f32[]", "f32[1]");
  EXPECT_EQ(scalar.run(), "error: input 0 (X) is a scalar, expected (N, C, ...) (f32[])");
  OpTester d1("BatchNormalization", 15);
  batchNorm(d1, "f32[N]", "f32[4]");
  EXPECT_EQ(d1.run(), "error: input 1 (scale) has 4 elements, expected C = 1 (f32[4] vs f32[N])");
  OpTester types("BatchNormalization", 15);
  types.input("f32[N,3]").input("f32[3]").input("f32[3]").input("f32[3]").input("f16[3]");
  EXPECT_EQ(types.run(), "error: input types differ: f32[3] vs f16[3]");
}

TEST(NormInstanceNorm, Shapes) {
  OpTester t("InstanceNormalization", 6);
  t.input("f32[N,C,H,W]").input("f32[64]").input("f32[?]");
  EXPECT_EQ(t.run(), "f32[N,64,H,W]");
  OpTester interval("InstanceNormalization", 6);
  interval.input("f32[N,?{1..8},L]").input("f32[?{4..16}]").input("f32[?]");
  EXPECT_EQ(interval.run(), "f32[N,?{4..8},L]");
  OpTester rank("InstanceNormalization", 6);
  rank.input("f32[...]").input("f32[8]").input("f32[8]");
  EXPECT_EQ(rank.run(), "f32[...]");
  OpTester bad("InstanceNormalization", 6);
  bad.input("f32[N,3,H,W]").input("f32[3]").input("f32[6]");
  EXPECT_EQ(bad.run(), "error: input 2 (B) has 6 elements, expected C = 3 (f32[6] vs f32[N,3,H,W])");
  OpTester low("InstanceNormalization", 6);
  low.input("f32[5]").input("f32[5]").input("f32[5]");
  EXPECT_EQ(low.run(), "error: input 0 (input) has rank 1, expected at least 2 (f32[5])");
}

TEST(NormLayerNorm, Shapes) {
  OpTester t("LayerNormalization", 17);
  t.input("f32[B,S,768]").input("f32[768]").input("f32[768]").outputs(3);
  EXPECT_EQ(t.run(), "f32[B,S,768]; f32[B,S,1]; f32[B,S,1]");
  OpTester axis1("LayerNormalization", 17);
  axis1.input("f16[B,S,D]").input("f16[S,D]").attr("axis", 1).outputs(3);
  EXPECT_EQ(axis1.run(), "f16[B,S,D]; f32[B,1,1]; f32[B,1,1]");
  OpTester stash("LayerNormalization", 17);
  stash.input("f16[B,S,D]").input("f16[D]").attr("stash_type", 10).outputs(2);
  EXPECT_EQ(stash.run(), "f16[B,S,D]; f16[B,S,1]");
  // Scale names the normalised dim: D of X is learned.
  OpTester learn("LayerNormalization", 17);
  learn.input("f32[B,S,D]").input("f32[512]").absent();
  EXPECT_EQ(learn.run(), "f32[B,S,512]");
  OpTester learnS("LayerNormalization", 17);
  learnS.input("f32[B,S,768]").input("f32[768]").input("f32[2,768]").attr("axis", 1);
  EXPECT_EQ(learnS.run(), "f32[B,2,768]");
  EXPECT_EQ(learnS.range("S"), "2..2");
  OpTester interval("LayerNormalization", 17);
  interval.input("f32[?{1..4},?{2..8}]").input("f32[?{5..10}]").outputs(3);
  EXPECT_EQ(interval.run(), "f32[?{1..4},?{5..8}]; f32[?{1..4},1]; f32[?{1..4},1]");
  OpTester rank("LayerNormalization", 17);
  rank.input("f32[...]").input("f32[64]").outputs(3);
  EXPECT_EQ(rank.run(), "f32[...]; f32[...]; f32[...]");
}

TEST(NormLayerNorm, Errors) {
  OpTester axis("LayerNormalization", 17);
  axis.input("f32[B,S,D]").input("f32[D]").attr("axis", 3);
  EXPECT_EQ(axis.run(), "error: axis 3 is out of range for rank 3");
  OpTester scale("LayerNormalization", 17);
  scale.input("f32[B,S,768]").input("f32[512]");
  EXPECT_EQ(scale.run(), "error: input 1 (Scale) f32[512] does not broadcast to [B,S,768]");
  OpTester bias("LayerNormalization", 17);
  bias.input("f32[B,4,768]").input("f32[768]").input("f32[2,768]");
  EXPECT_EQ(bias.run(), "error: input 2 (B) f32[2,768] does not broadcast to [B,4,768]");
  OpTester rank("LayerNormalization", 17);
  rank.input("f32[4]").input("f32[1,4]");
  EXPECT_EQ(rank.run(), "error: input 1 (Scale) f32[1,4] does not broadcast to [4]");
  OpTester stash("LayerNormalization", 17);
  stash.input("f32[4]").input("f32[4]").attr("stash_type", 7);
  EXPECT_EQ(stash.run(), "error: attribute 'stash_type' is 7, not a float type");
  OpTester type("LayerNormalization", 17);
  type.input("f32[4]").input("f16[4]");
  EXPECT_EQ(type.run(), "error: input types differ: f32[4] vs f16[4]");
}

TEST(NormGroupNorm, Shapes) {
  OpTester v18("GroupNormalization", 18);
  v18.input("f32[N,32,H,W]").input("f32[8]").input("f32[8]").attr("num_groups", 8);
  EXPECT_EQ(v18.run(), "f32[N,32,H,W]");
  OpTester v21("GroupNormalization", 21);
  v21.input("f32[N,C,H,W]").input("f32[32]").input("f32[32]").attr("num_groups", 8);
  EXPECT_EQ(v21.run(), "f32[N,32,H,W]");
  OpTester anyOpset("GroupNormalization", 0);
  anyOpset.input("f32[N,32,H,W]").input("f32[8]").input("f32[32]").attr("num_groups", 8);
  EXPECT_EQ(anyOpset.run(), "f32[N,32,H,W]");
  OpTester rank("GroupNormalization", 21);
  rank.input("f32[...]").input("f32[...]").input("f32[...]").attr("num_groups", 4);
  EXPECT_EQ(rank.run(), "f32[...]");
}

TEST(NormGroupNorm, Errors) {
  OpTester div("GroupNormalization", 21);
  div.input("f32[N,30,H,W]").input("f32[30]").input("f32[30]").attr("num_groups", 8);
  EXPECT_EQ(div.run(), "error: input 0 (X) has 30 channels, not divisible by 8 groups (f32[N,30,H,W])");
  OpTester v18("GroupNormalization", 18);
  v18.input("f32[N,32,H,W]").input("f32[32]").input("f32[8]").attr("num_groups", 8);
  EXPECT_EQ(v18.run(), "error: input 1 (scale) has 32 elements, expected num_groups = 8 (f32[32] vs f32[N,32,H,W])");
  OpTester v21("GroupNormalization", 21);
  v21.input("f32[N,32,H,W]").input("f32[8]").input("f32[32]").attr("num_groups", 8);
  EXPECT_EQ(v21.run(), "error: input 1 (scale) has 8 elements, expected C = 32 (f32[8] vs f32[N,32,H,W])");
  OpTester missing("GroupNormalization", 21);
  missing.input("f32[N,32,H,W]").input("f32[32]").input("f32[32]");
  EXPECT_EQ(missing.run(), "error: attribute 'num_groups' is missing");
}

TEST(NormLrnMvnLp, Shapes) {
  OpTester lrn("LRN", 13);
  lrn.input("f32[N,C,?{1..8},W]").attr("size", 5);
  EXPECT_EQ(lrn.run(), "f32[N,C,?{1..8},W]");
  OpTester lrnSize("LRN", 13);
  lrnSize.input("f32[N,C,H,W]");
  EXPECT_EQ(lrnSize.run(), "error: attribute 'size' is missing");
  OpTester lrnRank("LRN", 13);
  lrnRank.input("f32[8]").attr("size", 3);
  EXPECT_EQ(lrnRank.run(), "error: input 0 (X) has rank 1, expected at least 2 (f32[8])");

  OpTester mvn("MeanVarianceNormalization", 13);
  mvn.input("f32[N,C,H,W]");
  EXPECT_EQ(mvn.run(), "f32[N,C,H,W]");
  OpTester mvnAxes("MeanVarianceNormalization", 13);
  mvnAxes.input("f32[N,C,L]").attr("axes", Ints{0, 2});
  EXPECT_EQ(mvnAxes.run(), "f32[N,C,L]");
  OpTester mvnBad("MeanVarianceNormalization", 13);
  mvnBad.input("f32[N,C,L]");
  EXPECT_EQ(mvnBad.run(), "error: axis 3 is out of range for rank 3");
  OpTester mvnRank("MeanVarianceNormalization", 13);
  mvnRank.input("f32[...]").attr("axes", Ints{7});
  EXPECT_EQ(mvnRank.run(), "f32[...]");

  OpTester lp("LpNormalization", 1);
  lp.input("f32[N,D]").attr("p", 1);
  EXPECT_EQ(lp.run(), "f32[N,D]");
  OpTester lpAxis("LpNormalization", 1);
  lpAxis.input("f32[N,D]").attr("axis", 2);
  EXPECT_EQ(lpAxis.run(), "error: axis 2 is out of range for rank 2");
  OpTester lpP("LpNormalization", 1);
  lpP.input("f32[N,D]").attr("p", 3);
  EXPECT_EQ(lpP.run(), "error: attribute 'p' is 3, expected 1 or 2");
}

std::string softmax(const char *op, int opset, const char *x, std::optional<int64_t> axis = {}) {
  OpTester t(op, opset);
  t.input(x);
  if (axis) t.attr("axis", *axis);
  return t.run();
}

TEST(NormSoftmax, AxisExamples) {
  // Static input shape.
  EXPECT_EQ(softmax("Softmax", 13, "f32[1,1000]", 1), "f32[1,1000]");
  // Static input shape, wrong axis.
  EXPECT_EQ(softmax("Softmax", 13, "f32[1,1000]", 3), "error: axis 3 is out of range for rank 2");
  // Dynamic input shape, static input rank.
  EXPECT_EQ(softmax("Softmax", 13, "f32[?{1..8},?,?,?]", 1), "f32[?{1..8},?,?,?]");
  // Dynamic input shape, static input rank, wrong axis.
  EXPECT_EQ(softmax("Softmax", 13, "f32[?,?,?,?]", 7), "error: axis 7 is out of range for rank 4");
  // Dynamic rank: passes, as it cannot be validated yet.
  EXPECT_EQ(softmax("Softmax", 13, "f32[...]", 10), "f32[...]");
}

TEST(NormSoftmax, Family) {
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    EXPECT_EQ(softmax(op, 13, "f16[B,H,S,S]"), "f16[B,H,S,S]") << op;
    EXPECT_EQ(softmax(op, 13, "f16[B,H,S,S]", -4), "f16[B,H,S,S]") << op;
    EXPECT_EQ(softmax(op, 13, "f16[B,H,S,S]", -5), "error: axis -5 is out of range for rank 4") << op;
    EXPECT_EQ(softmax(op, 13, "?[...]"), "?[...]") << op;
  }
}

TEST(NormSoftmax, LegacyOpsets) {
  // Before opset 13 the default axis is 1 and the input is coerced to 2-D: same output shape.
  EXPECT_EQ(softmax("Softmax", 11, "f32[N,C,H,W]"), "f32[N,C,H,W]");
  EXPECT_EQ(softmax("Softmax", 11, "f32[5]"), "error: axis 1 is out of range for rank 1");
  EXPECT_EQ(softmax("Softmax", 11, "f32[5]", 0), "f32[5]");
  // Opset 1 (as ONNX): an axis equal to the rank coerces to [all, 1]; past it is an error.
  EXPECT_EQ(softmax("LogSoftmax", 1, "f32[5]"), "f32[5]");
  EXPECT_EQ(softmax("Hardmax", 1, "f32[3,4]", 2), "f32[3,4]");
  EXPECT_EQ(softmax("Hardmax", 1, "f32[3,4]", -2), "f32[3,4]");
  EXPECT_EQ(softmax("Hardmax", 1, "f32[3,4]", 3), "error: axis 3 is out of range for rank 2");
  EXPECT_EQ(softmax("Softmax", 13, "f32[]"), "error: axis -1 is out of range for rank 0");
}

// ---- ONNX backend node tests (generated from /usr/share/libonnx-testdata/data) ----
class NormOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(NormOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

const std::vector<NodeCase> kNormNodeCases = {
    {"batchnorm_epsilon", "BatchNormalization", 15, {P("f32[2,3,4,5]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {{"epsilon", double(0.009999999776482582)}}, 1, "f32[2,3,4,5]"},
    {"batchnorm_epsilon_training_mode", "BatchNormalization", 15, {P("f32[2,3,4,5]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {{"epsilon", double(0.009999999776482582)}, {"training_mode", int64_t(1)}}, 3, "f32[2,3,4,5]; f32[3]; f32[3]"},
    {"batchnorm_example", "BatchNormalization", 15, {P("f32[2,3,4,5]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {}, 1, "f32[2,3,4,5]"},
    {"batchnorm_example_training_mode", "BatchNormalization", 15, {P("f32[2,3,4,5]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {{"training_mode", int64_t(1)}}, 3, "f32[2,3,4,5]; f32[3]; f32[3]"},
    {"hardmax_axis_0", "Hardmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(0)}}, 1, "f32[3,4,5]"},
    {"hardmax_axis_1", "Hardmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(1)}}, 1, "f32[3,4,5]"},
    {"hardmax_axis_2", "Hardmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(2)}}, 1, "f32[3,4,5]"},
    {"hardmax_default_axis", "Hardmax", 13, {P("f32[3,4,5]")}, {}, 1, "f32[3,4,5]"},
    {"hardmax_example", "Hardmax", 13, {P("f32[4,4]")}, {}, 1, "f32[4,4]"},
    {"hardmax_negative_axis", "Hardmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(-1)}}, 1, "f32[3,4,5]"},
    {"hardmax_one_hot", "Hardmax", 13, {P("f32[1,4]")}, {}, 1, "f32[1,4]"},
    {"instancenorm_epsilon", "InstanceNormalization", 6, {P("f32[2,3,4,5]"), P("f32[3]"), P("f32[3]")}, {{"epsilon", double(0.009999999776482582)}}, 1, "f32[2,3,4,5]"},
    {"instancenorm_example", "InstanceNormalization", 6, {P("f32[1,2,1,3]"), P("f32[2]"), P("f32[2]")}, {}, 1, "f32[1,2,1,3]"},
    {"layer_normalization_2d_axis0", "LayerNormalization", 17, {P("f32[3,4]"), P("f32[3,4]"), P("f32[3,4]")}, {{"axis", int64_t(0)}}, 3, "f32[3,4]; f32[1,1]; f32[1,1]"},
    {"layer_normalization_2d_axis1", "LayerNormalization", 17, {P("f32[3,4]"), P("f32[4]"), P("f32[4]")}, {{"axis", int64_t(1)}}, 3, "f32[3,4]; f32[3,1]; f32[3,1]"},
    {"layer_normalization_2d_axis_negative_1", "LayerNormalization", 17, {P("f32[3,4]"), P("f32[4]"), P("f32[4]")}, {{"axis", int64_t(-1)}}, 3, "f32[3,4]; f32[3,1]; f32[3,1]"},
    {"layer_normalization_2d_axis_negative_2", "LayerNormalization", 17, {P("f32[3,4]"), P("f32[3,4]"), P("f32[3,4]")}, {{"axis", int64_t(-2)}}, 3, "f32[3,4]; f32[1,1]; f32[1,1]"},
    {"layer_normalization_3d_axis0_epsilon", "LayerNormalization", 17, {P("f32[2,3,5]"), P("f32[2,3,5]"), P("f32[2,3,5]")}, {{"axis", int64_t(0)}, {"epsilon", double(0.10000000149011612)}}, 3, "f32[2,3,5]; f32[1,1,1]; f32[1,1,1]"},
    {"layer_normalization_3d_axis1_epsilon", "LayerNormalization", 17, {P("f32[2,3,5]"), P("f32[3,5]"), P("f32[3,5]")}, {{"axis", int64_t(1)}, {"epsilon", double(0.10000000149011612)}}, 3, "f32[2,3,5]; f32[2,1,1]; f32[2,1,1]"},
    {"layer_normalization_3d_axis2_epsilon", "LayerNormalization", 17, {P("f32[2,3,5]"), P("f32[5]"), P("f32[5]")}, {{"axis", int64_t(2)}, {"epsilon", double(0.10000000149011612)}}, 3, "f32[2,3,5]; f32[2,3,1]; f32[2,3,1]"},
    {"layer_normalization_3d_axis_negative_1_epsilon", "LayerNormalization", 17, {P("f32[2,3,5]"), P("f32[5]"), P("f32[5]")}, {{"axis", int64_t(-1)}, {"epsilon", double(0.10000000149011612)}}, 3, "f32[2,3,5]; f32[2,3,1]; f32[2,3,1]"},
    {"layer_normalization_3d_axis_negative_2_epsilon", "LayerNormalization", 17, {P("f32[2,3,5]"), P("f32[3,5]"), P("f32[3,5]")}, {{"axis", int64_t(-2)}, {"epsilon", double(0.10000000149011612)}}, 3, "f32[2,3,5]; f32[2,1,1]; f32[2,1,1]"},
    {"layer_normalization_3d_axis_negative_3_epsilon", "LayerNormalization", 17, {P("f32[2,3,5]"), P("f32[2,3,5]"), P("f32[2,3,5]")}, {{"axis", int64_t(-3)}, {"epsilon", double(0.10000000149011612)}}, 3, "f32[2,3,5]; f32[1,1,1]; f32[1,1,1]"},
    {"layer_normalization_4d_axis0", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[2,3,4,5]"), P("f32[2,3,4,5]")}, {{"axis", int64_t(0)}}, 3, "f32[2,3,4,5]; f32[1,1,1,1]; f32[1,1,1,1]"},
    {"layer_normalization_4d_axis1", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[3,4,5]"), P("f32[3,4,5]")}, {{"axis", int64_t(1)}}, 3, "f32[2,3,4,5]; f32[2,1,1,1]; f32[2,1,1,1]"},
    {"layer_normalization_4d_axis2", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[4,5]"), P("f32[4,5]")}, {{"axis", int64_t(2)}}, 3, "f32[2,3,4,5]; f32[2,3,1,1]; f32[2,3,1,1]"},
    {"layer_normalization_4d_axis3", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[5]"), P("f32[5]")}, {{"axis", int64_t(3)}}, 3, "f32[2,3,4,5]; f32[2,3,4,1]; f32[2,3,4,1]"},
    {"layer_normalization_4d_axis_negative_1", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[5]"), P("f32[5]")}, {{"axis", int64_t(-1)}}, 3, "f32[2,3,4,5]; f32[2,3,4,1]; f32[2,3,4,1]"},
    {"layer_normalization_4d_axis_negative_2", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[4,5]"), P("f32[4,5]")}, {{"axis", int64_t(-2)}}, 3, "f32[2,3,4,5]; f32[2,3,1,1]; f32[2,3,1,1]"},
    {"layer_normalization_4d_axis_negative_3", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[3,4,5]"), P("f32[3,4,5]")}, {{"axis", int64_t(-3)}}, 3, "f32[2,3,4,5]; f32[2,1,1,1]; f32[2,1,1,1]"},
    {"layer_normalization_4d_axis_negative_4", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[2,3,4,5]"), P("f32[2,3,4,5]")}, {{"axis", int64_t(-4)}}, 3, "f32[2,3,4,5]; f32[1,1,1,1]; f32[1,1,1,1]"},
    {"layer_normalization_default_axis", "LayerNormalization", 17, {P("f32[2,3,4,5]"), P("f32[5]"), P("f32[5]")}, {}, 3, "f32[2,3,4,5]; f32[2,3,4,1]; f32[2,3,4,1]"},
    {"logsoftmax_axis_0", "LogSoftmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(0)}}, 1, "f32[3,4,5]"},
    {"logsoftmax_axis_1", "LogSoftmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(1)}}, 1, "f32[3,4,5]"},
    {"logsoftmax_axis_2", "LogSoftmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(2)}}, 1, "f32[3,4,5]"},
    {"logsoftmax_default_axis", "LogSoftmax", 13, {P("f32[3,4,5]")}, {}, 1, "f32[3,4,5]"},
    {"logsoftmax_example_1", "LogSoftmax", 13, {P("f32[1,3]")}, {}, 1, "f32[1,3]"},
    {"logsoftmax_large_number", "LogSoftmax", 13, {P("f32[2,4]")}, {}, 1, "f32[2,4]"},
    {"logsoftmax_negative_axis", "LogSoftmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(-1)}}, 1, "f32[3,4,5]"},
    {"lrn", "LRN", 13, {P("f32[5,5,5,5]")}, {{"alpha", double(0.00019999999494757503)}, {"beta", double(0.5)}, {"bias", double(2.0)}, {"size", int64_t(3)}}, 1, "f32[5,5,5,5]"},
    {"lrn_default", "LRN", 13, {P("f32[5,5,5,5]")}, {{"size", int64_t(3)}}, 1, "f32[5,5,5,5]"},
    {"mvn", "MeanVarianceNormalization", 13, {P("f32[3,3,3,1]")}, {}, 1, "f32[3,3,3,1]"},
    {"softmax_axis_0", "Softmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(0)}}, 1, "f32[3,4,5]"},
    {"softmax_axis_1", "Softmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(1)}}, 1, "f32[3,4,5]"},
    {"softmax_axis_2", "Softmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(2)}}, 1, "f32[3,4,5]"},
    {"softmax_default_axis", "Softmax", 13, {P("f32[3,4,5]")}, {}, 1, "f32[3,4,5]"},
    {"softmax_example", "Softmax", 13, {P("f32[1,3]")}, {}, 1, "f32[1,3]"},
    {"softmax_large_number", "Softmax", 13, {P("f32[2,4]")}, {}, 1, "f32[2,4]"},
    {"softmax_negative_axis", "Softmax", 13, {P("f32[3,4,5]")}, {{"axis", int64_t(-1)}}, 1, "f32[3,4,5]"},
    {"pt_BatchNorm1d_3d_input_eval", "BatchNormalization", 6, {P("f32[4,5,3]"), P("f32[5]"), P("f32[5]"), P("f32[5]"), P("f32[5]")}, {{"epsilon", double(9.999999747378752e-06)}, {"is_test", int64_t(1)}, {"momentum", double(0.8999999761581421)}}, 1, "f32[4,5,3]"},
    {"pt_BatchNorm2d_eval", "BatchNormalization", 6, {P("f32[2,3,6,6]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {{"epsilon", double(9.999999747378752e-06)}, {"is_test", int64_t(1)}, {"momentum", double(0.8999999761581421)}}, 1, "f32[2,3,6,6]"},
    {"pt_BatchNorm2d_momentum_eval", "BatchNormalization", 6, {P("f32[2,3,6,6]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {{"epsilon", double(0.0010000000474974513)}, {"is_test", int64_t(1)}, {"momentum", double(0.20000000298023224)}}, 1, "f32[2,3,6,6]"},
    {"pt_BatchNorm3d_eval", "BatchNormalization", 6, {P("f32[2,3,4,4,4]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {{"epsilon", double(9.999999747378752e-06)}, {"is_test", int64_t(1)}, {"momentum", double(0.8999999761581421)}}, 1, "f32[2,3,4,4,4]"},
    {"pt_BatchNorm3d_momentum_eval", "BatchNormalization", 6, {P("f32[2,3,4,4,4]"), P("f32[3]"), P("f32[3]"), P("f32[3]"), P("f32[3]")}, {{"epsilon", double(0.0010000000474974513)}, {"is_test", int64_t(1)}, {"momentum", double(0.30000001192092896)}}, 1, "f32[2,3,4,4,4]"},
    {"pt_LogSoftmax", "LogSoftmax", 6, {P("f32[10,20]")}, {{"axis", int64_t(1)}}, 1, "f32[10,20]"},
    {"pt_Softmax", "Softmax", 6, {P("f32[10,20]")}, {{"axis", int64_t(1)}}, 1, "f32[10,20]"},
    {"pt_log_softmax_dim3", "LogSoftmax", 6, {P("f32[2,3,4,5]")}, {{"axis", int64_t(3)}}, 1, "f32[2,3,4,5]"},
    {"pt_log_softmax_lastdim", "LogSoftmax", 6, {P("f32[2,128]")}, {{"axis", int64_t(-1)}}, 1, "f32[2,128]"},
    {"pt_softmax_functional_dim3", "Softmax", 6, {P("f32[2,3,4,5]")}, {{"axis", int64_t(3)}}, 1, "f32[2,3,4,5]"},
    {"pt_softmax_lastdim", "Softmax", 6, {P("f32[2,128]")}, {{"axis", int64_t(1)}}, 1, "f32[2,128]"},
    {"pto_operator_symbolic_override", "InstanceNormalization", 6, {P("f32[2,10,32,32]"), P("f32[10]"), P("f32[10]")}, {{"epsilon", double(9.999999717180685e-10)}}, 1, "f32[2,10,32,32]"},
};
INSTANTIATE_TEST_SUITE_P(NormBackend, NormOnnxNode, ::testing::ValuesIn(kNormNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
