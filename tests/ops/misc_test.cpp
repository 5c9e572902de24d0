// Tests of the miscellaneous rules (src/ops/misc.cpp): random generators, linear quantization,
// DFT/STFT/MelWeightMatrix and window functions, with sizes read from input values (static,
// symbolic, intervals, unknown); plus ONNX's backend node tests for these ops.
#include "op_test_util.h"

namespace sf::test {
namespace {

TEST(MiscRandom, FromShapeAttribute) {
  OpTester n("RandomNormal", 1);
  n.attr("shape", std::vector<int64_t>{2, 3});
  EXPECT_EQ(n.run(), "f32[2,3]");
  OpTester u("RandomUniform", 1);
  u.attr("shape", std::vector<int64_t>{4}).attr("dtype", 11);
  EXPECT_EQ(u.run(), "f64[4]");
  OpTester scalar("RandomUniform", 1);
  scalar.attr("shape", std::vector<int64_t>{});
  EXPECT_EQ(scalar.run(), "f32[]");
}

TEST(MiscRandom, FromShapeErrors) {
  OpTester missing("RandomNormal", 1);
  EXPECT_EQ(missing.run(), "error: attribute 'shape' is missing");
  OpTester neg("RandomNormal", 1);
  neg.attr("shape", std::vector<int64_t>{2, -1});
  EXPECT_EQ(neg.run(), "error: attribute 'shape' has a negative dimension -1");
  OpTester type("RandomUniform", 1);
  type.attr("shape", std::vector<int64_t>{2}).attr("dtype", 7);
  EXPECT_EQ(type.run(), "error: attribute 'dtype' must name a float type, got i64");
  OpTester unknown("RandomUniform", 1);
  unknown.attr("shape", std::vector<int64_t>{2}).attr("dtype", 99);
  EXPECT_EQ(unknown.run(), "error: attribute 'dtype' = 99 is not a known element type");
}

TEST(MiscRandom, LikeOps) {
  OpTester n("RandomNormalLike", 1);
  n.input("f16[N,?{1..8},3]");
  EXPECT_EQ(n.run(), "f16[N,?{1..8},3]");
  OpTester u("RandomUniformLike", 1);
  u.input("i64[N,2]").attr("dtype", 1);
  EXPECT_EQ(u.run(), "f32[N,2]");
  OpTester unknown("RandomNormalLike", 1);
  unknown.input("?[...]");
  EXPECT_EQ(unknown.run(), "?[...]");
  OpTester b("Bernoulli", 15);
  b.input("f32[N,4]").attr("dtype", 9);
  EXPECT_EQ(b.run(), "bool[N,4]");
  OpTester bad("Bernoulli", 15);
  bad.input("i32[N,4]");
  EXPECT_EQ(bad.run(), "error: input 0 (probabilities) must be a float tensor, got i32[N,4]");
}

TEST(MiscRandom, Multinomial) {
  OpTester t("Multinomial", 7);
  t.input("f32[N,10]").attr("sample_size", 5);
  EXPECT_EQ(t.run(), "i32[N,5]");
  OpTester i64("Multinomial", 7);
  i64.input("f32[?{1..4},10]").attr("dtype", 7);
  EXPECT_EQ(i64.run(), "i64[?{1..4},1]");
  OpTester unknown("Multinomial", 7);
  unknown.input("f32[...]").attr("sample_size", 3);
  EXPECT_EQ(unknown.run(), "i32[?,3]");
  OpTester rank("Multinomial", 7);
  rank.input("f32[10]");
  EXPECT_EQ(rank.run(), "error: input 0 (input) has rank 1, expected 2 (f32[10])");
  OpTester type("Multinomial", 7);
  type.input("f32[2,10]").attr("dtype", 1);
  EXPECT_EQ(type.run(), "error: attribute 'dtype' must be i32 or i64, got f32");
  OpTester n("Multinomial", 7);
  n.input("f32[2,10]").attr("sample_size", 0);
  EXPECT_EQ(n.run(), "error: sample_size must be positive, got 0");
}

TEST(MiscQuantize, PerTensor) {
  OpTester t("QuantizeLinear", 13);
  t.input("f32[N,C,H,W]").input("f32[]").input("i8[]");
  EXPECT_EQ(t.run(), "i8[N,C,H,W]");
  // No zero point: u8.
  OpTester u8("QuantizeLinear", 10);
  u8.input("f32[?{1..8},3]").input("f32[]");
  EXPECT_EQ(u8.run(), "u8[?{1..8},3]");
  // A one-element 1-D scale is per-tensor too.
  OpTester one("QuantizeLinear", 13);
  one.input("f32[N,64]").input("f32[1]").input("u8[1]");
  EXPECT_EQ(one.run(), "u8[N,64]");
}

TEST(MiscQuantize, PerAxisLearnsTheChannelCount) {
  OpTester t("QuantizeLinear", 13);
  t.input("f32[N,C,H,W]").input("f32[16]").input("u8[16]");
  EXPECT_EQ(t.run(), "u8[N,16,H,W]");
  OpTester neg("DequantizeLinear", 13);
  neg.input("i8[K,O]").input("f32[O]").input("i8[O]").attr("axis", -1);
  EXPECT_EQ(neg.run(), "f32[K,O]");
}

TEST(MiscQuantize, Errors) {
  OpTester axis("QuantizeLinear", 13);
  axis.input("f32[2,3,4]").input("f32[4]").input("u8[4]");
  EXPECT_EQ(axis.run(),
            "error: the scale (input 1) has 4 elements but x has 3 along axis 1 (f32[4] vs "
            "f32[2,3,4])");
  OpTester range("QuantizeLinear", 13);
  range.input("f32[2,3]").input("f32[3]").attr("axis", 2);
  EXPECT_EQ(range.run(), "error: axis 2 is out of range for rank 2 (f32[2,3])");
  OpTester zp("DequantizeLinear", 13);
  zp.input("u8[2,3]").input("f32[3]").input("u8[2]");
  EXPECT_EQ(zp.run(),
            "error: the zero point (input 2) must be shaped like the scale (input 1): u8[2] vs f32[3]");
  OpTester zt("DequantizeLinear", 13);
  zt.input("u8[2,3]").input("f32[]").input("i8[]");
  EXPECT_EQ(zt.run(), "error: the zero point (input 2) must have x's type: i8[] vs u8[2,3]");
  OpTester old("QuantizeLinear", 10);
  old.input("f32[2,3]").input("f32[3]");
  EXPECT_EQ(old.run(), "error: the scale (input 1) must be a scalar, got f32[3]");
  OpTester two("QuantizeLinear", 13);
  two.input("f32[2,3]").input("f32[2,3]");
  EXPECT_EQ(two.run(), "error: the scale (input 1) must be a scalar or 1-D, got f32[2,3]");
}

TEST(MiscQuantize, Opset21BlockedAndOutputDtype) {
  OpTester t("QuantizeLinear", 21);
  t.input("f32[N,64]").input("f32[N,2]").attr("axis", 1).attr("block_size", 32);
  t.attr("output_dtype", 3);
  EXPECT_EQ(t.run(), "i8[N,64]");
  OpTester rank("QuantizeLinear", 21);
  rank.input("f32[N,64]").input("f32[2]").attr("block_size", 32);
  EXPECT_EQ(rank.run(),
            "error: with block_size, the scale (input 1) must have the rank of x: f32[2] vs f32[N,64]");
  OpTester clash("QuantizeLinear", 21);
  clash.input("f32[N,64]").input("f32[]").input("u8[]").attr("output_dtype", 3);
  EXPECT_EQ(clash.run(), "error: output_dtype is i8 but the zero point (input 2) is u8[]");
}

TEST(MiscQuantize, DequantizeOutputType) {
  OpTester f16("DequantizeLinear", 19);
  f16.input("i8[N,4]").input("f16[]");
  EXPECT_EQ(f16.run(), "f16[N,4]");
  OpTester old("DequantizeLinear", 13);
  old.input("i32[N,4]").input("f32[]");
  EXPECT_EQ(old.run(), "f32[N,4]");
  OpTester unknown("DequantizeLinear", 13);
  unknown.input("?[...]").input("?[...]");
  EXPECT_EQ(unknown.run(), "f32[...]");
}

TEST(MiscQuantize, Dynamic) {
  OpTester t("DynamicQuantizeLinear", 11);
  t.input("f32[N,?{1..8}]").outputs(3);
  EXPECT_EQ(t.run(), "u8[N,?{1..8}]; f32[]; u8[]");
  OpTester bad("DynamicQuantizeLinear", 11);
  bad.input("i32[N]").outputs(3);
  EXPECT_EQ(bad.run(), "error: x (input 0) must be a float tensor, got i32[N]");
}

TEST(MiscSignal, DftLengthsAndOnesided) {
  OpTester t("DFT", 17);
  t.input("f32[B,N,1]");
  EXPECT_EQ(t.run(), "f32[B,N,2]");
  OpTester len("DFT", 17);
  len.input("f32[B,N,2]").constInts({}, {64});
  EXPECT_EQ(len.run(), "f32[B,64,2]");
  OpTester one("DFT", 17);
  one.input("f32[B,N,1]").attr("onesided", 1);
  EXPECT_EQ(one.run(), "f32[B,N//2 + 1,2]");
  OpTester sym("DFT", 17);
  sym.input("f32[B,T,F,1]").input("i64[] = [L]").attr("axis", 2).attr("onesided", 1);
  EXPECT_EQ(sym.run(), "f32[B,T,L//2 + 1,2]");
  OpTester interval("DFT", 17);
  interval.input("f32[B,?{10..20},1]").attr("onesided", 1);
  EXPECT_EQ(interval.run(), "f32[B,?{6..11},2]");
  OpTester unknownLen("DFT", 17);
  unknownLen.input("f32[B,16,1]").input("i64[]");
  EXPECT_EQ(unknownLen.run(), "f32[B,?,2]");
  OpTester rank("DFT", 17);
  rank.input("f32[...]");
  EXPECT_EQ(rank.run(), "f32[...]");
}

TEST(MiscSignal, DftAxisInputAtOpset20) {
  OpTester def("DFT", 20);
  def.input("f32[B,T,F,2]");
  EXPECT_EQ(def.run(), "f32[B,T,F,2]");
  OpTester t("DFT", 20);
  t.input("f32[B,T,F,1]").absent().constInts({}, {1}).attr("onesided", 1);
  EXPECT_EQ(t.run(), "f32[B,T//2 + 1,F,2]");
  OpTester neg("DFT", 20);
  neg.input("f32[B,T,F,1]").constInts({}, {10}).constInts({}, {-2});
  EXPECT_EQ(neg.run(), "f32[B,T,10,2]");
  OpTester unknown("DFT", 20);
  unknown.input("f32[B,T,F,1]").absent().input("i64[]");
  EXPECT_EQ(unknown.run(), "f32[B,?,?,2]");
}

TEST(MiscSignal, DftErrors) {
  OpTester last("DFT", 17);
  last.input("f32[B,N,1]").attr("axis", 2);
  EXPECT_EQ(last.run(), "error: axis 2 is the real/complex axis of f32[B,N,1], not a signal axis");
  OpTester complex("DFT", 17);
  complex.input("f32[B,N,3]");
  EXPECT_EQ(complex.run(),
            "error: the last axis of input 0 holds real or complex parts and must be 1 or 2 "
            "(f32[B,N,3])");
  OpTester both("DFT", 17);
  both.input("f32[B,N,1]").attr("onesided", 1).attr("inverse", 1);
  EXPECT_EQ(both.run(), "error: onesided and inverse cannot both be set");
  OpTester range("DFT", 17);
  range.input("f32[B,N,1]").attr("axis", 3);
  EXPECT_EQ(range.run(), "error: axis 3 is out of range for rank 3");
  OpTester neg("DFT", 17);
  neg.input("f32[B,N,1]").constInts({}, {-4});
  EXPECT_EQ(neg.run(), "error: dft_length (input 1) is -4, must not be negative");
}

TEST(MiscSignal, Stft) {
  OpTester t("STFT", 17);
  t.input("f32[B,L,1]").constInts({}, {160}).input("f32[400]");
  // (L - 400)//160 + 1 in canonical form.
  EXPECT_EQ(t.run(), "f32[B,(L - 80)//160 - 1,201,2]");
  OpTester both("STFT", 17);
  both.input("f32[2,16000,1]").constInts({}, {160}).input("f32[W]").constInts({}, {400});
  both.attr("onesided", 0);
  EXPECT_EQ(both.run(), "f32[2,98,400,2]");
  // The window's length is learned from frame_length.
  ASSERT_EQ(both.g.inputs.size(), 2u); // x and window: the constants are not graph inputs
  EXPECT_EQ(toString(both.g.fact(both.g.inputs[1])), "f32[400]");
  OpTester sym("STFT", 17);
  sym.input("f32[B,L,2]").input("i64[] = [S]").absent().input("i64[] = [F]");
  EXPECT_EQ(sym.run(), "f32[B,?{1..},F//2 + 1,2]");
  OpTester unknown("STFT", 17);
  unknown.input("f32[...]").constInts({}, {4});
  EXPECT_EQ(unknown.run(), "f32[?,?,?,2]");
}

TEST(MiscSignal, StftErrors) {
  OpTester rank("STFT", 17);
  rank.input("f32[B,L]").constInts({}, {4});
  EXPECT_EQ(rank.run(), "error: input 0 (signal) has rank 2, expected 3 (f32[B,L])");
  OpTester fit("STFT", 17);
  fit.input("f32[1,100,1]").constInts({}, {4}).absent().constInts({}, {128});
  EXPECT_EQ(fit.run(), "error: frames of 128 do not fit a signal of 100 (f32[1,100,1])");
  OpTester clash("STFT", 17);
  clash.input("f32[1,1000,1]").constInts({}, {4}).input("f32[100]").constInts({}, {128});
  EXPECT_EQ(clash.run(),
            "error: frame_length (input 3) is 128 but the window has 100 elements (f32[100])");
  OpTester step("STFT", 17);
  step.input("f32[1,1000,1]").constInts({}, {0}).input("f32[100]");
  EXPECT_EQ(step.run(), "error: frame_step must be positive, got 0");
  OpTester type("STFT", 17);
  type.input("f32[1,1000,1]").input("f32[]");
  EXPECT_EQ(type.run(), "error: frame_step (input 1) must be an integer, got f32[]");
}

TEST(MiscSignal, MelWeightMatrix) {
  OpTester t("MelWeightMatrix", 17);
  t.constInts({}, {80}).input("i64[] = [N]").constInts({}, {16000}).input("f32[]").input("f32[]");
  EXPECT_EQ(t.run(), "f32[N//2 + 1,80]");
  OpTester f16("MelWeightMatrix", 17);
  f16.input("i32[]").constInts({}, {512}, ElementType::I32).input("i32[]").input("f32[]");
  f16.input("f32[]").attr("output_datatype", 10);
  EXPECT_EQ(f16.run(), "f16[257,?]");
}

TEST(MiscWindow, SizeFromValue) {
  for (const char *op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    OpTester t(op, 17);
    t.constInts({}, {400}, ElementType::I32);
    EXPECT_EQ(t.run(), "f32[400]") << op;
  }
  OpTester sym("HannWindow", 17);
  sym.input("i64[] = [W]").attr("periodic", 0);
  EXPECT_EQ(sym.run(), "f32[W]");
  OpTester interval("HannWindow", 17);
  interval.input("i64[1] = [?{4..8}]").attr("output_datatype", 11);
  EXPECT_EQ(interval.run(), "f64[?{4..8}]");
  OpTester unknown("BlackmanWindow", 17);
  unknown.input("i32[]");
  EXPECT_EQ(unknown.run(), "f32[?]");
  OpTester neg("HammingWindow", 17);
  neg.constInts({}, {-3});
  EXPECT_EQ(neg.run(), "error: size (input 0) is -3, must not be negative");
  OpTester type("HammingWindow", 17);
  type.input("f32[]");
  EXPECT_EQ(type.run(), "error: size (input 0) must be an integer, got f32[]");
  OpTester rank("HammingWindow", 17);
  rank.input("i64[2,2]");
  EXPECT_EQ(rank.run(), "error: size (input 0) must hold one element, got i64[2,2]");
}

class MiscOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(MiscOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

// ONNX's backend node tests (/usr/share/libonnx-testdata/data/node/test_*): inputs at their
// actual shapes (small integer operands as constants), outputs as computed by the reference.
const std::vector<NodeCase> kMiscNodeCases = {
    {"bernoulli", "Bernoulli", 15, {P("f64[10]")}, {}, 1, "f64[10]"},
    {"bernoulli_double", "Bernoulli", 15, {P("f32[10]")}, {{"dtype", int64_t(11)}}, 1, "f64[10]"},
    {"bernoulli_seed", "Bernoulli", 15, {P("f32[10]")}, {{"seed", 0.0}}, 1, "f32[10]"},
    {"blackmanwindow", "BlackmanWindow", 17, {I({}, {10}, ElementType::I32)}, {}, 1, "f32[10]"},
    {"blackmanwindow_symmetric", "BlackmanWindow", 17, {I({}, {10}, ElementType::I32)}, {{"periodic", int64_t(0)}}, 1, "f32[10]"},
    {"dequantizelinear", "DequantizeLinear", 13, {I({4}, {0, 3, 128, 255}, ElementType::U8), P("f32[]"), I({}, {128}, ElementType::U8)}, {}, 1, "f32[4]"},
    {"dequantizelinear_axis", "DequantizeLinear", 13, {P("u8[1,3,3,2]"), P("f32[3]"), I({3}, {84, 24, 196}, ElementType::U8)}, {}, 1, "f32[1,3,3,2]"},
    {"dft", "DFT", 17, {P("f32[1,10,10,1]")}, {{"axis", int64_t(1)}}, 1, "f32[1,10,10,2]"},
    {"dft_axis", "DFT", 17, {P("f32[1,10,10,1]")}, {{"axis", int64_t(2)}}, 1, "f32[1,10,10,2]"},
    {"dft_inverse", "DFT", 17, {P("f32[1,10,10,2]")}, {{"axis", int64_t(1)}, {"inverse", int64_t(1)}}, 1, "f32[1,10,10,2]"},
    {"dynamicquantizelinear", "DynamicQuantizeLinear", 11, {P("f32[6]")}, {}, 3, "u8[6]; f32[]; u8[]"},
    {"dynamicquantizelinear_max_adjusted", "DynamicQuantizeLinear", 11, {P("f32[6]")}, {}, 3, "u8[6]; f32[]; u8[]"},
    {"dynamicquantizelinear_min_adjusted", "DynamicQuantizeLinear", 11, {P("f32[3,4]")}, {}, 3, "u8[3,4]; f32[]; u8[]"},
    {"hammingwindow", "HammingWindow", 17, {I({}, {10}, ElementType::I32)}, {}, 1, "f32[10]"},
    {"hammingwindow_symmetric", "HammingWindow", 17, {I({}, {10}, ElementType::I32)}, {{"periodic", int64_t(0)}}, 1, "f32[10]"},
    {"hannwindow", "HannWindow", 17, {I({}, {10}, ElementType::I32)}, {}, 1, "f32[10]"},
    {"hannwindow_symmetric", "HannWindow", 17, {I({}, {10}, ElementType::I32)}, {{"periodic", int64_t(0)}}, 1, "f32[10]"},
    {"melweightmatrix", "MelWeightMatrix", 17, {I({}, {8}, ElementType::I32), I({}, {16}, ElementType::I32), I({}, {8192}, ElementType::I32), P("f32[]"), P("f32[]")}, {}, 1, "f32[9,8]"},
    {"quantizelinear", "QuantizeLinear", 13, {P("f32[6]"), P("f32[]"), I({}, {128}, ElementType::U8)}, {}, 1, "u8[6]"},
    {"quantizelinear_axis", "QuantizeLinear", 13, {P("f32[1,3,3,2]"), P("f32[3]"), I({3}, {84, 24, 196}, ElementType::U8)}, {}, 1, "u8[1,3,3,2]"},
    {"stft", "STFT", 17, {P("f32[1,128,1]"), I({}, {8}), A(), I({}, {16})}, {}, 1, "f32[1,15,9,2]"},
    {"stft_with_window", "STFT", 17, {P("f32[1,128,1]"), I({}, {8}), P("f32[16]")}, {}, 1, "f32[1,15,9,2]"},
};
INSTANTIATE_TEST_SUITE_P(MiscBackend, MiscOnnxNode, ::testing::ValuesIn(kMiscNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
