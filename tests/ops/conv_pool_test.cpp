// Tests of the sliding-window rules (src/ops/conv_pool.cpp): Conv (the sliding-window formula, groups,
// dilations, strides, pads, auto_pad, symbolic and interval inputs, the window-fits requirement
// recorded on symbols), ConvInteger, QLinearConv, ConvTranspose, DeformConv, the pools with
// ceil_mode, the global pools, MaxRoiPool, RoiAlign, MaxUnpool; plus ONNX's backend node tests
// (node, pytorch-converted and pytorch-operator suites).
#include "op_test_util.h"

namespace sf::test {
namespace {

using Ints = std::vector<int64_t>;

std::string conv(const char *x, const char *w, Attributes attrs = {}, const char *b = nullptr) {
  OpTester t("Conv", 11);
  t.input(x).input(w);
  if (b) t.input(b);
  t.attrs(attrs);
  return t.run();
}

TEST(ConvPoolConv, StaticShapes) {
  EXPECT_EQ(conv("f32[1,3,224,224]", "f32[64,3,7,7]", {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}}),
            "f32[1,64,112,112]");
  EXPECT_EQ(conv("f32[2,4,10]", "f32[5,4,3]", {{"dilations", Ints{2}}}), "f32[2,5,6]");
  EXPECT_EQ(conv("f32[2,3,5,5,5]", "f32[4,3,2,2,2]", {{"strides", Ints{2, 2, 2}}}), "f32[2,4,2,2,2]");
  EXPECT_EQ(conv("f32[1,1,7,5]", "f32[1,1,3,3]", {{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 0}}}),
            "f32[1,1,4,2]");
  EXPECT_EQ(conv("f32[1,3,10,10]", "f32[8,3,3,3]", {{"auto_pad", "VALID"}, {"pads", Ints{1, 1, 1, 1}}}),
            "f32[1,8,8,8]");
  EXPECT_EQ(conv("f32[1,3,10,9]", "f32[8,3,3,3]", {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2, 2}}}),
            "f32[1,8,5,5]");
  EXPECT_EQ(conv("f32[1,3,10,9]", "f32[8,3,3,3]", {{"auto_pad", "SAME_LOWER"}, {"strides", Ints{3, 3}}}),
            "f32[1,8,4,3]");
  EXPECT_EQ(conv("f32[1,3,10,10]", "f32[8,3,3,3]", {{"kernel_shape", Ints{3, 3}}}, "f32[8]"),
            "f32[1,8,8,8]");
}

TEST(ConvPoolConv, SymbolicInputGivesSymbolicOutput) {
  OpTester t("Conv", 11);
  t.input("f32[N,3,H,W]").input("f32[C,3,3,3]").attr("strides", Ints{2, 2}).attr("pads", Ints{1, 1, 1, 1});
  EXPECT_EQ(t.run(), "f32[N,C,(H - 1)//2 + 1,(W - 1)//2 + 1]");
  // The window must fit: H + 2 >= 3.
  EXPECT_EQ(t.range("H"), "1..");
  EXPECT_EQ(conv("f32[N,3,H,W]", "f32[16,3,3,3]", {{"pads", Ints{1, 1, 1, 1}}}), "f32[N,16,H,W]");
  OpTester valid("Conv", 11);
  valid.input("f32[N,3,H,W]").input("f32[16,3,5,5]");
  EXPECT_EQ(valid.run(), "f32[N,16,H - 4,W - 4]");
  EXPECT_EQ(valid.range("H"), "5..");
  EXPECT_EQ(conv("f32[N,3,H,W]", "f32[16,3,3,3]", {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2, 2}}}),
            "f32[N,16,(H - 1)//2 + 1,(W - 1)//2 + 1]");
  EXPECT_EQ(conv("f32[N,3,H,W]", "f32[16,3,3,3]", {{"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}),
            "f32[N,16,H,W]");
}

TEST(ConvPoolConv, IntervalsAndUnknownDims) {
  EXPECT_EQ(conv("f32[?{1..8},3,?{3..8},?{224..256}]", "f32[16,3,3,3]"),
            "f32[?{1..8},16,?{1..6},?{222..254}]");
  // A window that fits only part of the range: the range narrows to where it fits.
  EXPECT_EQ(conv("f32[1,3,?{1..8},5]", "f32[16,3,3,3]"), "f32[1,16,?{1..6},3]");
  // An output exists only where the window fits: at least 1.
  EXPECT_EQ(conv("f32[?,3,?,?]", "f32[16,3,3,3]", {{"strides", Ints{2, 2}}}), "f32[?,16,?{1..},?{1..}]");
  // A kernel dim known only as a symbol.
  EXPECT_EQ(conv("f32[1,3,10,10]", "f32[16,3,K,K]", {{"pads", Ints{1, 1, 1, 1}}}),
            "f32[1,16,-K + 13,-K + 13]");
  EXPECT_EQ(conv("f32[1,3,10,10]", "f32[16,3,?,?]"), "f32[1,16,?{1..11},?{1..11}]");
}

TEST(ConvPoolConv, ChannelsAndGroups) {
  EXPECT_EQ(conv("f32[N,8,H,W]", "f32[16,4,3,3]", {{"group", 2}, {"pads", Ints{1, 1, 1, 1}}}),
            "f32[N,16,H,W]");
  EXPECT_EQ(conv("f32[2,4,6,6]", "f32[8,1,3,3]", {{"group", 4}}), "f32[2,8,4,4]");
  // C learned from the weight (and the bias learned from... the weight).
  OpTester learn("Conv", 11);
  learn.input("f32[N,C,5,5]").input("f32[M,3,3,3]").input("f32[16]");
  EXPECT_EQ(learn.run(), "f32[N,16,3,3]");
  EXPECT_EQ(learn.range("C"), "3..3");
  EXPECT_EQ(learn.range("M"), "16..16");
  OpTester perGroup("Conv", 11);
  perGroup.input("f32[N,12,5,5]").input("f32[6,G,1,1]").attr("group", 3);
  EXPECT_EQ(perGroup.run(), "f32[N,6,5,5]");
  EXPECT_EQ(perGroup.range("G"), "4..4");
}

TEST(ConvPoolConv, UnknownRankAndType) {
  EXPECT_EQ(conv("f32[...]", "f32[16,3,3,3]"), "f32[?,16,?,?]");
  EXPECT_EQ(conv("f32[...]", "f32[...]", {{"kernel_shape", Ints{3, 3, 3}}}), "f32[?,?,?,?,?]");
  EXPECT_EQ(conv("f32[...]", "f32[...]", {{"pads", Ints{0, 0, 0, 0}}}), "f32[?,?,?,?]");
  EXPECT_EQ(conv("f32[...]", "f32[...]"), "f32[...]");
  EXPECT_EQ(conv("f32[N,3,H,W]", "f32[...]", {{"kernel_shape", Ints{3, 3}}}), "f32[N,?,H - 2,W - 2]");
  EXPECT_EQ(conv("?[1,3,5,5]", "?[2,3,3,3]"), "?[1,2,3,3]");
  EXPECT_EQ(conv("?[1,3,5,5]", "f16[2,3,3,3]"), "f16[1,2,3,3]");
}

TEST(ConvPoolConv, Errors) {
  EXPECT_EQ(conv("f32[N,8,H,W]", "f32[16,3,3,3]", {{"group", 2}}),
            "error: channels differ: input 0 (X) has 8, input 1 (W) has 3 per group times group 2 "
            "(f32[N,8,H,W] vs f32[16,3,3,3])");
  EXPECT_EQ(conv("f32[N,8,H,W]", "f32[15,4,3,3]", {{"group", 2}}),
            "error: input 1 (W) has 15 output channels, not divisible by group 2 (f32[15,4,3,3])");
  EXPECT_EQ(conv("f32[N,3,H,W]", "f32[16,3,3,3]", {}, "f32[8]"),
            "error: input 2 (B) has 8 elements, expected M = 16 (f32[8] vs f32[16,3,3,3])");
  EXPECT_EQ(conv("f32[N,3,H,W]", "f32[16,3,3,3]", {}, "f32[1,16]"),
            "error: input 2 (B) has rank 2, expected 1 (f32[1,16])");
  EXPECT_EQ(conv("f32[N,3,H,W]", "f32[16,3,3]"),
            "error: input 1 (W) has rank 3, expected 4 like input 0 (f32[16,3,3] vs f32[N,3,H,W])");
  EXPECT_EQ(conv("f32[3,4]", "f32[16,3,3]"), "error: input 0 (X) has rank 2, expected at least 3 (f32[3,4])");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f32[16,3,3,3]", {{"kernel_shape", Ints{5, 5}}}),
            "error: attribute 'kernel_shape' [5,5] disagrees with the weight's spatial dims [3,3]");
  EXPECT_EQ(conv("f32[1,3,2,5]", "f32[16,3,3,3]"),
            "error: spatial axis 0: window of 3 (padded by 0) does not fit input dimension 2");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f32[16,3,3,3]", {{"dilations", Ints{3, 3}}}),
            "error: spatial axis 0: window of 7 (padded by 0) does not fit input dimension 5");
  EXPECT_EQ(conv("f32[1,3,?{1..2},5]", "f32[16,3,3,3]"),
            "error: spatial axis 0: a window of 3 (padded by 0) does not fit input dimension ?{1..2}");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f32[16,3,3,3]", {{"strides", Ints{1}}}),
            "error: attribute 'strides' has 1 values, expected 2");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f32[16,3,3,3]", {{"strides", Ints{1, 0}}}),
            "error: attribute 'strides' has value 0, expected > 0");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f32[16,3,3,3]", {{"pads", Ints{1, 1}}}),
            "error: attribute 'pads' has 2 values, expected 4");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f32[16,3,3,3]", {{"auto_pad", "SAME"}}),
            "error: attribute 'auto_pad' is 'SAME', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f32[16,3,3,3]", {{"group", 0}}),
            "error: attribute 'group' is 0, expected > 0");
  EXPECT_EQ(conv("f32[1,3,5,5]", "f16[16,3,3,3]"),
            "error: input types differ: f32[1,3,5,5] vs f16[16,3,3,3]");
}

TEST(ConvPoolConvInteger, Shapes) {
  OpTester t("ConvInteger", 10);
  t.input("u8[N,3,H,W]").input("i8[16,3,3,3]").input("u8[]").input("i8[16]").attr("pads", Ints{1, 1, 1, 1});
  EXPECT_EQ(t.run(), "i32[N,16,H,W]");
  OpTester bad("ConvInteger", 10);
  bad.input("u8[N,4,H,W]").input("i8[16,3,3,3]");
  EXPECT_EQ(bad.run(), "error: channels differ: input 0 (X) has 4, input 1 (W) has 3 per group times "
                       "group 1 (u8[N,4,H,W] vs i8[16,3,3,3])");
}

TEST(ConvPoolQLinearConv, Shapes) {
  OpTester t("QLinearConv", 10);
  t.input("u8[N,3,H,W]").input("f32[]").input("u8[]").input("i8[16,3,3,3]").input("f32[16]")
      .input("i8[16]").input("f32[]").input("u8[]").input("i32[16]").attr("strides", Ints{2, 2});
  EXPECT_EQ(t.run(), "u8[N,16,(H - 1)//2,(W - 1)//2]");
  OpTester bias("QLinearConv", 10);
  bias.input("u8[1,3,5,5]").input("f32[]").input("u8[]").input("u8[16,3,3,3]").input("f32[]")
      .input("u8[]").input("f32[]").input("u8[]").input("i32[8]");
  EXPECT_EQ(bias.run(), "error: input 8 (B) has 8 elements, expected M = 16 (i32[8] vs u8[16,3,3,3])");
  OpTester zp("QLinearConv", 10);
  zp.input("u8[1,3,5,5]").input("f32[]").input("i8[]").input("u8[16,3,3,3]").input("f32[]")
      .input("u8[]").input("f32[]").input("u8[]");
  EXPECT_EQ(zp.run(), "error: input 2 (zero point) has type i8, expected u8 (i8[] vs u8[1,3,5,5])");
}

std::string convT(const char *x, const char *w, Attributes attrs = {}, const char *b = nullptr) {
  OpTester t("ConvTranspose", 11);
  t.input(x).input(w);
  if (b) t.input(b);
  t.attrs(attrs);
  return t.run();
}

TEST(ConvPoolConvTranspose, Shapes) {
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]"), "f32[1,2,5,5]");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}}),
            "f32[1,2,10,8]");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}}),
            "f32[1,2,7,3]");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,1,2,2]", {{"dilations", Ints{2, 2}}}), "f32[1,1,5,5]");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {{"output_shape", Ints{10, 8}}, {"strides", Ints{3, 2}}}),
            "f32[1,2,10,8]");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {{"output_shape", Ints{1, 2, 10, 8}}}), "f32[1,2,10,8]");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2, 2}}}),
            "f32[1,2,6,6]");
  EXPECT_EQ(convT("f32[1,8,3,3]", "f32[8,4,3,3]", {{"group", 2}}, "f32[8]"), "f32[1,8,5,5]");
}

TEST(ConvPoolConvTranspose, SymbolsAndIntervals) {
  // The usual 2x upsampling: stride 2, kernel 4, pads 1.
  EXPECT_EQ(convT("f32[N,C,H,W]", "f32[C,8,4,4]", {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
            "f32[N,8,2*H,2*W]");
  EXPECT_EQ(convT("f32[N,16,H,W]", "f32[16,8,2,2]", {{"strides", Ints{2, 2}}}), "f32[N,8,2*H,2*W]");
  EXPECT_EQ(convT("f32[N,16,H,W]", "f32[16,8,3,3]"), "f32[N,8,H + 2,W + 2]");
  EXPECT_EQ(convT("f32[N,16,?{2..4},?]", "f32[16,8,3,3]", {{"auto_pad", "SAME_LOWER"}, {"strides", Ints{2, 2}}}),
            "f32[N,8,?{4..8},?]");
  EXPECT_EQ(convT("f32[N,16,?{2..4},5]", "f32[16,8,3,3]", {{"strides", Ints{2, 2}}}), "f32[N,8,?{5..9},11]");
  EXPECT_EQ(convT("f32[...]", "f32[16,8,3,3]", {{"group", 2}}), "f32[?,16,?{2..},?{2..}]");
  EXPECT_EQ(convT("f32[...]", "f32[...]", {{"output_shape", Ints{10, 8}}}), "f32[?,?,10,8]");
  EXPECT_EQ(convT("f32[...]", "f32[...]"), "f32[...]");
}

TEST(ConvPoolConvTranspose, Errors) {
  EXPECT_EQ(convT("f32[N,3,H,W]", "f32[4,8,3,3]"),
            "error: channels differ: input 0 (X) vs input 1 (W): 3 vs 4 (f32[N,3,H,W] vs f32[4,8,3,3])");
  EXPECT_EQ(convT("f32[1,1,1,1]", "f32[1,1,1,1]", {{"pads", Ints{1, 1, 1, 1}}}),
            "error: spatial axis 0: output size would be -1 (input 1, pads 2)");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {{"output_shape", Ints{10}}}),
            "error: attribute 'output_shape' has 1 values for 2 spatial axes");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {{"output_padding", Ints{1}}}),
            "error: attribute 'output_padding' has 1 values, expected 2");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3,3]", {}, "f32[3]"),
            "error: input 2 (B) has 3 elements, expected M = 2 (f32[3] vs f32[1,2,3,3])");
  EXPECT_EQ(convT("f32[1,1,3,3]", "f32[1,2,3]"),
            "error: input 1 (W) has rank 3, expected 4 like input 0 (f32[1,2,3] vs f32[1,1,3,3])");
}

TEST(ConvPoolDeformConv, Shapes) {
  OpTester t("DeformConv", 19);
  t.input("f32[N,3,H,W]").input("f32[8,3,3,3]").input("f32[N,18,H,W]").input("f32[8]")
      .input("f32[N,9,H,W]").attr("pads", Ints{1, 1, 1, 1});
  EXPECT_EQ(t.run(), "f32[N,8,H,W]");
  OpTester learn("DeformConv", 19);
  learn.input("f32[2,4,7,7]").input("f32[8,2,3,3]").input("f32[B,36,OH,OW]").attr("group", 2)
      .attr("offset_group", 2);
  EXPECT_EQ(learn.run(), "f32[2,8,5,5]");
  EXPECT_EQ(learn.range("OH"), "5..5");
  EXPECT_EQ(learn.range("B"), "2..2");
  // The output learns from the offsets where the input says little.
  OpTester fromOffset("DeformConv", 19);
  fromOffset.input("f32[?,3,?,?]").input("f32[8,3,3,3]").input("f32[2,18,6,7]");
  EXPECT_EQ(fromOffset.run(), "f32[2,8,6,7]");
  OpTester bad("DeformConv", 19);
  bad.input("f32[N,3,H,W]").input("f32[8,3,3,3]").input("f32[N,16,H,W]").attr("pads", Ints{1, 1, 1, 1});
  EXPECT_EQ(bad.run(), "error: input 2 (offset) has 16 channels, expected 18 (f32[N,16,H,W])");
  OpTester spatial("DeformConv", 19);
  spatial.input("f32[1,3,8,8]").input("f32[8,3,3,3]").input("f32[1,18,8,8]");
  EXPECT_EQ(spatial.run(), "error: input 2 (offset) has spatial shape [1,18,8,8], expected the output's "
                           "[1,8,6,6] (f32[1,18,8,8])");
  OpTester autoPad("DeformConv", 19);
  autoPad.input("f32[1,3,8,8]").input("f32[8,3,3,3]").input("f32[1,18,8,8]").attr("auto_pad", "SAME_UPPER");
  EXPECT_EQ(autoPad.run(), "error: attribute 'auto_pad' is not defined for this op");
}

std::string pool(const char *op, const char *x, Attributes attrs, size_t outputs = 1) {
  OpTester t(op, 12);
  t.input(x).attrs(attrs).outputs(outputs);
  return t.run();
}

TEST(ConvPoolPool, Shapes) {
  EXPECT_EQ(pool("MaxPool", "f32[1,64,112,112]", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
            "f32[1,64,56,56]");
  EXPECT_EQ(pool("MaxPool", "f32[1,64,112,112]", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}, 2),
            "f32[1,64,55,55]; i64[1,64,55,55]");
  EXPECT_EQ(pool("AveragePool", "f32[1,3,32]", {{"kernel_shape", Ints{2}}, {"count_include_pad", 1}}),
            "f32[1,3,31]");
  EXPECT_EQ(pool("LpPool", "f32[1,3,32,32]", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"p", 3}}),
            "f32[1,3,16,16]");
  EXPECT_EQ(pool("MaxPool", "u8[1,1,4,4]", {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}}), "u8[1,1,2,2]");
  EXPECT_EQ(pool("AveragePool", "f32[1,3,32,32]", {{"kernel_shape", Ints{2, 2}}, {"auto_pad", "SAME_LOWER"}}),
            "f32[1,3,32,32]");
  EXPECT_EQ(pool("MaxPool", "f32[1,1,5,5]", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"auto_pad", "SAME_UPPER"}, {"ceil_mode", 1}}),
            "f32[1,1,3,3]");
}

TEST(ConvPoolPool, SymbolicIntervalUnknown) {
  OpTester t("MaxPool", 12);
  t.input("f32[N,64,H,W]").attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}).outputs(2);
  EXPECT_EQ(t.run(), "f32[N,64,(H - 1)//2 + 1,(W - 1)//2 + 1]; i64[N,64,(H - 1)//2 + 1,(W - 1)//2 + 1]");
  // At H = 1 the 2-window overhangs by less than its stride and gives one output (onnxruntime):
  // the formula sees max(H, 2), exact for every H >= 1.
  EXPECT_EQ(pool("AveragePool", "f32[N,C,H,W]", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}),
            "f32[N,C,max(H, 2)//2,max(W, 2)//2]");
  EXPECT_EQ(pool("MaxPool", "f32[N,C,?{4..9},?]", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}),
            "f32[N,C,?{2..4},?{1..}]");
  EXPECT_EQ(pool("MaxPool", "f32[...]", {{"kernel_shape", Ints{2, 2}}}, 2), "f32[?,?,?,?]; i64[?,?,?,?]");
  EXPECT_EQ(pool("MaxPool", "?[...]", {{"kernel_shape", Ints{2}}}), "?[?,?,?]");
}

TEST(ConvPoolPool, CeilMode) {
  // ONNX's maxpool_2d_ceil: ceil((4 - 3)/2) + 1 = 2.
  EXPECT_EQ(pool("MaxPool", "f32[1,1,4,4]", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1}}),
            "f32[1,1,2,2]");
  // A window may not start in the right padding: ceil((2 - 1)/2) + 1 = 2 drops to 1 (ONNX's
  // maxpool_2d_ceil_output_size_reduce_by_one, PyTorch's rule).
  EXPECT_EQ(pool("MaxPool", "f32[1,1,2,2]", {{"kernel_shape", Ints{1, 1}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1}}),
            "f32[1,1,1,1]");
  EXPECT_EQ(pool("AveragePool", "f32[1,1,5,6]", {{"kernel_shape", Ints{2, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"ceil_mode", 1}}),
            "f32[1,1,3,4]");
  EXPECT_EQ(pool("MaxPool", "f32[N,C,H,W]", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1}}),
            "f32[N,C,H//2,W//2]");
  EXPECT_EQ(pool("MaxPool", "f32[N,C,H,W]", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"ceil_mode", 1}}),
            "f32[N,C,H//2 + 1,W//2 + 1]");
  EXPECT_EQ(pool("MaxPool", "f32[1,1,?{3..6},7]", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1}}),
            "f32[1,1,?{1..3},3]");
}

// A pooling window may overhang a small input: onnxruntime divides (in + pads - window) by the
// stride truncating toward zero, so an overhang of less than a stride gives one output from the
// valid part and one of up to two strides gives an empty axis. Each row was run in onnxruntime
// 1.30 (1-D MaxPool and AveragePool, both ceil modes); a convolution's window must still fit.
TEST(ConvPoolPool, PartialWindowsAtTheEdges) {
  struct Row {
    const char *x;
    Ints kernel, strides, pads;
    int64_t ceil;
    const char *expected;
  } rows[] = {
      {"f32[1,1,1]", {2}, {2}, {0, 0}, 0, "f32[1,1,1]"},  // a 2-window on a 1-long axis
      {"f32[1,1,1]", {2}, {2}, {0, 0}, 1, "f32[1,1,1]"},
      {"f32[1,1,2]", {3}, {2}, {0, 0}, 1, "f32[1,1,1]"},  // 3-window, ceil_mode, on 2
      {"f32[1,1,2]", {3}, {3}, {0, 0}, 0, "f32[1,1,1]"},
      {"f32[1,1,1]", {3}, {3}, {0, 0}, 0, "f32[1,1,1]"},  // overhang 2 < stride 3
      {"f32[1,1,1]", {2}, {1}, {0, 0}, 0, "f32[1,1,0]"},  // overhang of one stride: empty
      {"f32[1,1,1]", {3}, {2}, {0, 0}, 1, "f32[1,1,0]"},
      {"f32[1,1,1]", {4}, {2}, {0, 0}, 0, "f32[1,1,0]"},  // overhang 3 < two strides
      {"f32[1,1,1]", {4}, {2}, {1, 1}, 0, "f32[1,1,1]"},
      {"f32[1,1,3]", {4}, {1}, {0, 0}, 1, "f32[1,1,0]"},
      {"f32[1,1,1]", {3}, {1}, {0, 0}, 0, "error: spatial axis 0: a window of 3 (padded by 0) does not fit input dimension 1"},
      {"f32[1,1,?{1..2}]", {3}, {2}, {0, 0}, 1, "f32[1,1,?{0..1}]"},
  };
  for (const Row &r : rows)
    for (const char *op : {"MaxPool", "AveragePool"})
      EXPECT_EQ(pool(op, r.x, {{"kernel_shape", r.kernel}, {"strides", r.strides}, {"pads", r.pads}, {"ceil_mode", r.ceil}}),
                r.expected)
          << op << " " << r.x << " k" << r.kernel[0] << " s" << r.strides[0] << " ceil " << r.ceil;
  EXPECT_EQ(conv("f32[1,3,1,5]", "f32[16,3,2,3]", {{"strides", Ints{2, 1}}}),
            "error: spatial axis 0: window of 2 (padded by 0) does not fit input dimension 1");
}

TEST(ConvPoolPool, Errors) {
  EXPECT_EQ(pool("MaxPool", "f32[1,3,5,5]", {}), "error: attribute 'kernel_shape' is missing");
  EXPECT_EQ(pool("AveragePool", "f32[1,3,5,5]", {{"kernel_shape", Ints{3}}}),
            "error: attribute 'kernel_shape' has 1 values for 2 spatial axes");
  EXPECT_EQ(pool("LpPool", "f32[3,5]", {{"kernel_shape", Ints{3}}}),
            "error: input 0 (X) has rank 2, expected at least 3 (f32[3,5])");
  EXPECT_EQ(pool("MaxPool", "f32[1,3,1,5]", {{"kernel_shape", Ints{3, 3}}}),
            "error: spatial axis 0: a window of 3 (padded by 0) does not fit input dimension 1");
  EXPECT_EQ(pool("MaxPool", "f32[1,3,?{1..2},5]", {{"kernel_shape", Ints{4, 3}}}),
            "error: spatial axis 0: a window of 4 (padded by 0) does not fit input dimension ?{1..2}");
  EXPECT_EQ(pool("MaxPool", "f32[1,3,5,5]", {{"kernel_shape", Ints{3, 0}}}),
            "error: attribute 'kernel_shape' has value 0, expected > 0");
  EXPECT_EQ(pool("MaxPool", "f32[1,3,5,5]", {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, -1, 1}}}),
            "error: attribute 'pads' has value -1, expected >= 0");
}

TEST(ConvPoolGlobalPool, Shapes) {
  for (const char *op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    OpTester t(op, 2);
    t.input("f32[N,C,H,W]");
    EXPECT_EQ(t.run(), "f32[N,C,1,1]") << op;
  }
  EXPECT_EQ(pool("GlobalAveragePool", "f32[?{1..4},3,?,7,8]", {}), "f32[?{1..4},3,1,1,1]");
  EXPECT_EQ(pool("GlobalMaxPool", "f32[N,C]", {}), "f32[N,C]");
  EXPECT_EQ(pool("GlobalMaxPool", "f16[...]", {}), "f16[...]");
  EXPECT_EQ(pool("GlobalMaxPool", "f32[5]", {}), "error: input 0 (X) has rank 1, expected at least 2 (f32[5])");
}

TEST(ConvPoolRoi, MaxRoiPool) {
  OpTester t("MaxRoiPool", 1);
  t.input("f32[N,256,H,W]").input("f32[R,5]").attr("pooled_shape", Ints{7, 7});
  EXPECT_EQ(t.run(), "f32[R,256,7,7]");
  OpTester learn("MaxRoiPool", 1);
  learn.input("f32[1,8,H,W]").input("f32[R,K]").attr("pooled_shape", Ints{2, 3}).attr("spatial_scale", 0.5);
  EXPECT_EQ(learn.run(), "f32[R,8,2,3]");
  EXPECT_EQ(learn.range("K"), "5..5");
  OpTester bad("MaxRoiPool", 1);
  bad.input("f32[N,256,H,W]").input("f32[R,4]").attr("pooled_shape", Ints{7, 7});
  EXPECT_EQ(bad.run(), "error: input 1 (rois) must have 5 values per RoI (batch index, x1, y1, x2, y2), got f32[R,4]");
  OpTester noAttr("MaxRoiPool", 1);
  noAttr.input("f32[N,256,H,W]").input("f32[R,5]");
  EXPECT_EQ(noAttr.run(), "error: attribute 'pooled_shape' is missing");
  OpTester rank("MaxRoiPool", 1);
  rank.input("f32[256,H,W]").input("f32[R,5]").attr("pooled_shape", Ints{7, 7});
  EXPECT_EQ(rank.run(), "error: input 0 (X) has rank 3, expected 4 (f32[256,H,W])");
}

TEST(ConvPoolRoi, RoiAlign) {
  OpTester t("RoiAlign", 16);
  t.input("f32[N,256,H,W]").input("f32[R,4]").input("i64[?]").attr("output_height", 7).attr("output_width", 7);
  EXPECT_EQ(t.run(), "f32[R,256,7,7]");
  OpTester dflt("RoiAlign", 10);
  dflt.input("f32[1,3,8,8]").input("f32[?{0..100},4]").input("i64[?{0..100}]");
  EXPECT_EQ(dflt.run(), "f32[?{0..100},3,1,1]");
  OpTester counts("RoiAlign", 16);
  counts.input("f32[1,1,10,10]").input("f32[3,4]").input("i64[4]");
  EXPECT_EQ(counts.run(), "error: RoI counts differ: input 1 (rois) vs input 2 (batch_indices): 3 vs 4 "
                          "(f32[3,4] vs i64[4])");
  OpTester four("RoiAlign", 16);
  four.input("f32[1,1,10,10]").input("f32[3,5]").input("i64[3]");
  EXPECT_EQ(four.run(), "error: input 1 (rois) must have 4 values per RoI (x1, y1, x2, y2), got f32[3,5]");
  OpTester unknown("RoiAlign", 16);
  unknown.input("?[...]").input("?[...]").input("?[...]");
  EXPECT_EQ(unknown.run(), "?[?,?,1,1]");
}

TEST(ConvPoolMaxUnpool, Shapes) {
  OpTester formula("MaxUnpool", 11);
  formula.input("f32[N,C,H,W]").input("i64[N,C,H,W]").attr("kernel_shape", Ints{2, 2}).attr("strides", Ints{2, 2});
  EXPECT_EQ(formula.run(), "f32[N,C,2*H,2*W]");
  OpTester pads("MaxUnpool", 11);
  pads.input("f32[1,1,2,2]").input("i64[1,1,2,2]").attr("kernel_shape", Ints{3, 3}).attr("strides", Ints{2, 2})
      .attr("pads", Ints{1, 1, 0, 0});
  EXPECT_EQ(pads.run(), "f32[1,1,4,4]");
  OpTester given("MaxUnpool", 11);
  given.input("f32[N,C,?,?]").input("i64[?,?,?,?]").input("i64[4] = [N,C,H,W]").attr("kernel_shape", Ints{2, 2});
  EXPECT_EQ(given.run(), "f32[N,C,H,W]");
  OpTester constant("MaxUnpool", 11);
  constant.input("f32[1,1,2,2]").input("i64[1,1,2,2]").constInts({4}, {1, 1, 5, 5}).attr("kernel_shape", Ints{2, 2});
  EXPECT_EQ(constant.run(), "f32[1,1,5,5]");
  OpTester unknownValue("MaxUnpool", 11);
  unknownValue.input("f32[N,C,2,2]").input("i64[N,C,2,2]").input("i64[4]").attr("kernel_shape", Ints{2, 2});
  EXPECT_EQ(unknownValue.run(), "f32[N,C,?,?]");
  OpTester rank("MaxUnpool", 11);
  rank.input("f32[...]").input("i64[...]").attr("kernel_shape", Ints{2});
  EXPECT_EQ(rank.run(), "f32[?,?,?{1..}]");
}

TEST(ConvPoolMaxUnpool, Errors) {
  OpTester idx("MaxUnpool", 11);
  idx.input("f32[1,1,2,2]").input("i64[1,1,2,3]").attr("kernel_shape", Ints{2, 2});
  EXPECT_EQ(idx.run(), "error: input 1 (I) must have the shape of input 0 (X): i64[1,1,2,3] vs f32[1,1,2,2]");
  OpTester len("MaxUnpool", 11);
  len.input("f32[1,1,2,2]").input("i64[1,1,2,2]").constInts({3}, {1, 5, 5}).attr("kernel_shape", Ints{2, 2});
  EXPECT_EQ(len.run(), "error: input 2 (output_shape) has 3 elements for input of rank 4 (i64[3] = [1,5,5] vs "
                       "f32[1,1,2,2])");
  OpTester chans("MaxUnpool", 11);
  chans.input("f32[1,1,2,2]").input("i64[1,1,2,2]").constInts({4}, {1, 2, 5, 5}).attr("kernel_shape", Ints{2, 2});
  EXPECT_EQ(chans.run(), "error: channels differ: output_shape vs X: 2 vs 1 (i64[4] = [1,2,5,5] vs f32[1,1,2,2])");
  OpTester type("MaxUnpool", 11);
  type.input("f32[1,1,2,2]").input("i32[1,1,2,2]").attr("kernel_shape", Ints{2, 2});
  EXPECT_EQ(type.run(), "error: input 1 (I) must be i64, got i32[1,1,2,2]");
  OpTester kernel("MaxUnpool", 11);
  kernel.input("f32[1,1,2,2]").input("i64[1,1,2,2]");
  EXPECT_EQ(kernel.run(), "error: attribute 'kernel_shape' is missing");
}

// ---- ONNX backend node tests (generated from /usr/share/libonnx-testdata/data) ----
class ConvPoolOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(ConvPoolOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

const std::vector<NodeCase> kConvPoolNodeCases = {
    {"averagepool_1d_default", "AveragePool", 11, {P("f32[1,3,32]")}, {{"kernel_shape", std::vector<int64_t>{2}}}, 1, "f32[1,3,31]"},
    {"averagepool_2d_ceil", "AveragePool", 11, {P("f32[1,1,4,4]")}, {{"ceil_mode", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,2,2]"},
    {"averagepool_2d_default", "AveragePool", 11, {P("f32[1,3,32,32]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}}, 1, "f32[1,3,31,31]"},
    {"averagepool_2d_pads", "AveragePool", 11, {P("f32[1,3,28,28]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 1, "f32[1,3,30,30]"},
    {"averagepool_2d_pads_count_include_pad", "AveragePool", 11, {P("f32[1,3,28,28]")}, {{"count_include_pad", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 1, "f32[1,3,30,30]"},
    {"averagepool_2d_precomputed_pads", "AveragePool", 11, {P("f32[1,1,5,5]")}, {{"kernel_shape", std::vector<int64_t>{5, 5}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 1, "f32[1,1,5,5]"},
    {"averagepool_2d_precomputed_pads_count_include_pad", "AveragePool", 11, {P("f32[1,1,5,5]")}, {{"count_include_pad", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{5, 5}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 1, "f32[1,1,5,5]"},
    {"averagepool_2d_precomputed_same_upper", "AveragePool", 11, {P("f32[1,1,5,5]")}, {{"auto_pad", std::string("SAME_UPPER")}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,3,3]"},
    {"averagepool_2d_precomputed_strides", "AveragePool", 11, {P("f32[1,1,5,5]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,2,2]"},
    {"averagepool_2d_same_lower", "AveragePool", 11, {P("f32[1,3,32,32]")}, {{"auto_pad", std::string("SAME_LOWER")}, {"kernel_shape", std::vector<int64_t>{2, 2}}}, 1, "f32[1,3,32,32]"},
    {"averagepool_2d_same_upper", "AveragePool", 11, {P("f32[1,3,32,32]")}, {{"auto_pad", std::string("SAME_UPPER")}, {"kernel_shape", std::vector<int64_t>{2, 2}}}, 1, "f32[1,3,32,32]"},
    {"averagepool_2d_strides", "AveragePool", 11, {P("f32[1,3,32,32]")}, {{"kernel_shape", std::vector<int64_t>{5, 5}}, {"strides", std::vector<int64_t>{3, 3}}}, 1, "f32[1,3,10,10]"},
    {"averagepool_3d_default", "AveragePool", 11, {P("f32[1,3,32,32,32]")}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[1,3,31,31,31]"},
    {"basic_conv_with_padding", "Conv", 11, {P("f32[1,1,5,5]"), P("f32[1,1,3,3]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}, 1, "f32[1,1,5,5]"},
    {"basic_conv_without_padding", "Conv", 11, {P("f32[1,1,5,5]"), P("f32[1,1,3,3]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}}, 1, "f32[1,1,3,3]"},
    {"basic_convinteger", "ConvInteger", 10, {P("u8[1,1,3,3]"), P("u8[1,1,2,2]"), P("u8[]")}, {}, 1, "i32[1,1,2,2]"},
    {"conv_with_autopad_same", "Conv", 11, {P("f32[1,1,5,5]"), P("f32[1,1,3,3]")}, {{"auto_pad", std::string("SAME_LOWER")}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,3,3]"},
    {"conv_with_strides_and_asymmetric_padding", "Conv", 11, {P("f32[1,1,7,5]"), P("f32[1,1,3,3]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 0, 1, 0}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,4,2]"},
    {"conv_with_strides_no_padding", "Conv", 11, {P("f32[1,1,7,5]"), P("f32[1,1,3,3]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,3,2]"},
    {"conv_with_strides_padding", "Conv", 11, {P("f32[1,1,7,5]"), P("f32[1,1,3,3]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,4,3]"},
    {"convinteger_with_padding", "ConvInteger", 10, {P("u8[1,1,3,3]"), P("u8[1,1,2,2]"), P("u8[]")}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, 1, "i32[1,1,4,4]"},
    {"convinteger_without_padding", "ConvInteger", 10, {P("u8[1,1,3,3]"), P("u8[1,1,2,2]"), P("u8[]")}, {}, 1, "i32[1,1,2,2]"},
    {"convtranspose", "ConvTranspose", 11, {P("f32[1,1,3,3]"), P("f32[1,2,3,3]")}, {}, 1, "f32[1,2,5,5]"},
    {"convtranspose_1d", "ConvTranspose", 11, {P("f32[1,1,3]"), P("f32[1,2,3]")}, {}, 1, "f32[1,2,5]"},
    {"convtranspose_3d", "ConvTranspose", 11, {P("f32[1,1,3,4,5]"), P("f32[1,2,3,3,3]")}, {}, 1, "f32[1,2,5,6,7]"},
    {"convtranspose_autopad_same", "ConvTranspose", 11, {P("f32[1,1,3,3]"), P("f32[1,2,3,3]")}, {{"auto_pad", std::string("SAME_UPPER")}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,2,6,6]"},
    {"convtranspose_dilations", "ConvTranspose", 11, {P("f32[1,1,3,3]"), P("f32[1,1,2,2]")}, {{"dilations", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,5,5]"},
    {"convtranspose_kernel_shape", "ConvTranspose", 11, {P("f32[1,1,3,3]"), P("f32[1,2,3,3]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"output_padding", std::vector<int64_t>{1, 1}}, {"output_shape", std::vector<int64_t>{10, 8}}, {"strides", std::vector<int64_t>{3, 2}}}, 1, "f32[1,2,10,8]"},
    {"convtranspose_output_shape", "ConvTranspose", 11, {P("f32[1,1,3,3]"), P("f32[1,2,3,3]")}, {{"output_shape", std::vector<int64_t>{10, 8}}, {"strides", std::vector<int64_t>{3, 2}}}, 1, "f32[1,2,10,8]"},
    {"convtranspose_pad", "ConvTranspose", 11, {P("f32[1,1,3,3]"), P("f32[1,2,3,3]")}, {{"output_padding", std::vector<int64_t>{1, 1}}, {"strides", std::vector<int64_t>{3, 2}}}, 1, "f32[1,2,10,8]"},
    {"convtranspose_pads", "ConvTranspose", 11, {P("f32[1,1,3,3]"), P("f32[1,2,3,3]")}, {{"pads", std::vector<int64_t>{1, 2, 1, 2}}, {"strides", std::vector<int64_t>{3, 2}}}, 1, "f32[1,2,7,3]"},
    {"convtranspose_with_kernel", "ConvTranspose", 8, {P("f32[1,1,3,3]"), P("f32[1,2,3,3]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"output_padding", std::vector<int64_t>{1, 1}}, {"output_shape", std::vector<int64_t>{10, 8}}, {"strides", std::vector<int64_t>{3, 2}}}, 1, "f32[1,2,10,8]"},
    {"globalaveragepool", "GlobalAveragePool", 1, {P("f32[1,3,5,5]")}, {}, 1, "f32[1,3,1,1]"},
    {"globalaveragepool_precomputed", "GlobalAveragePool", 1, {P("f32[1,1,3,3]")}, {}, 1, "f32[1,1,1,1]"},
    {"globalmaxpool", "GlobalMaxPool", 1, {P("f32[1,3,5,5]")}, {}, 1, "f32[1,3,1,1]"},
    {"globalmaxpool_precomputed", "GlobalMaxPool", 1, {P("f32[1,1,3,3]")}, {}, 1, "f32[1,1,1,1]"},
    {"maxpool_1d_default", "MaxPool", 12, {P("f32[1,3,32]")}, {{"kernel_shape", std::vector<int64_t>{2}}}, 1, "f32[1,3,31]"},
    {"maxpool_2d_ceil", "MaxPool", 12, {P("f32[1,1,4,4]")}, {{"ceil_mode", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,2,2]"},
    {"maxpool_2d_default", "MaxPool", 12, {P("f32[1,3,32,32]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}}, 1, "f32[1,3,31,31]"},
    {"maxpool_2d_dilations", "MaxPool", 12, {P("f32[1,1,4,4]")}, {{"dilations", std::vector<int64_t>{2, 2}}, {"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[1,1,2,2]"},
    {"maxpool_2d_pads", "MaxPool", 12, {P("f32[1,3,28,28]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 1, "f32[1,3,30,30]"},
    {"maxpool_2d_precomputed_pads", "MaxPool", 12, {P("f32[1,1,5,5]")}, {{"kernel_shape", std::vector<int64_t>{5, 5}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 1, "f32[1,1,5,5]"},
    {"maxpool_2d_precomputed_same_upper", "MaxPool", 12, {P("f32[1,1,5,5]")}, {{"auto_pad", std::string("SAME_UPPER")}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,3,3]"},
    {"maxpool_2d_precomputed_strides", "MaxPool", 12, {P("f32[1,1,5,5]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,2,2]"},
    {"maxpool_2d_same_lower", "MaxPool", 12, {P("f32[1,3,32,32]")}, {{"auto_pad", std::string("SAME_LOWER")}, {"kernel_shape", std::vector<int64_t>{2, 2}}}, 1, "f32[1,3,32,32]"},
    {"maxpool_2d_same_upper", "MaxPool", 12, {P("f32[1,3,32,32]")}, {{"auto_pad", std::string("SAME_UPPER")}, {"kernel_shape", std::vector<int64_t>{2, 2}}}, 1, "f32[1,3,32,32]"},
    {"maxpool_2d_strides", "MaxPool", 12, {P("f32[1,3,32,32]")}, {{"kernel_shape", std::vector<int64_t>{5, 5}}, {"strides", std::vector<int64_t>{3, 3}}}, 1, "f32[1,3,10,10]"},
    {"maxpool_2d_uint8", "MaxPool", 12, {P("u8[1,1,5,5]")}, {{"kernel_shape", std::vector<int64_t>{5, 5}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 1, "u8[1,1,5,5]"},
    {"maxpool_3d_default", "MaxPool", 12, {P("f32[1,3,32,32,32]")}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[1,3,31,31,31]"},
    {"maxpool_with_argmax_2d_precomputed_pads", "MaxPool", 12, {P("f32[1,1,5,5]")}, {{"kernel_shape", std::vector<int64_t>{5, 5}}, {"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 2, "f32[1,1,5,5]; i64[1,1,5,5]"},
    {"maxpool_with_argmax_2d_precomputed_strides", "MaxPool", 12, {P("f32[1,1,5,5]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"storage_order", int64_t(1)}, {"strides", std::vector<int64_t>{2, 2}}}, 2, "f32[1,1,2,2]; i64[1,1,2,2]"},
    {"maxunpool_export_with_output_shape", "MaxUnpool", 11, {P("f32[1,1,2,2]"), P("i64[1,1,2,2]"), I({4}, {1, 1, 5, 5}, ElementType::I64)}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,5,5]"},
    {"maxunpool_export_without_output_shape", "MaxUnpool", 11, {P("f32[1,1,2,2]"), P("i64[1,1,2,2]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,1,4,4]"},
    {"qlinearconv", "QLinearConv", 10, {P("u8[1,1,7,7]"), P("f32[]"), P("u8[]"), P("u8[1,1,1,1]"), P("f32[1]"), P("u8[1]"), P("f32[]"), P("u8[]")}, {}, 1, "u8[1,1,7,7]"},
    {"roialign_aligned_false", "RoiAlign", 16, {P("f32[1,1,10,10]"), P("f32[3,4]"), P("i64[3]")}, {{"coordinate_transformation_mode", std::string("output_half_pixel")}, {"output_height", int64_t(5)}, {"output_width", int64_t(5)}, {"sampling_ratio", int64_t(2)}, {"spatial_scale", double(1.0)}}, 1, "f32[3,1,5,5]"},
    {"roialign_aligned_true", "RoiAlign", 16, {P("f32[1,1,10,10]"), P("f32[3,4]"), P("i64[3]")}, {{"coordinate_transformation_mode", std::string("half_pixel")}, {"output_height", int64_t(5)}, {"output_width", int64_t(5)}, {"sampling_ratio", int64_t(2)}, {"spatial_scale", double(1.0)}}, 1, "f32[3,1,5,5]"},
    {"pt_AvgPool2d", "AveragePool", 6, {P("f32[2,3,6,6]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[2,3,3,3]"},
    {"pt_AvgPool2d_stride", "AveragePool", 6, {P("f32[2,3,6,6]")}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[2,3,3,3]"},
    {"pt_AvgPool3d", "AveragePool", 6, {P("f32[2,3,4,4,4]")}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,3,2,2,2]"},
    {"pt_AvgPool3d_stride", "AveragePool", 6, {P("f32[2,3,5,5,5]")}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,3,2,2,2]"},
    {"pt_AvgPool3d_stride1_pad0_gpu_input", "AveragePool", 6, {P("f32[2,3,4,4,4]")}, {{"kernel_shape", std::vector<int64_t>{3, 3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1, 1}}}, 1, "f32[2,3,2,2,2]"},
    {"pt_Conv1d", "Conv", 6, {P("f32[2,4,10]"), P("f32[5,4,3]"), P("f32[5]")}, {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3}}, {"pads", std::vector<int64_t>{0, 0}}, {"strides", std::vector<int64_t>{1}}}, 1, "f32[2,5,8]"},
    {"pt_Conv1d_dilated", "Conv", 6, {P("f32[2,4,10]"), P("f32[5,4,3]"), P("f32[5]")}, {{"dilations", std::vector<int64_t>{2}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3}}, {"pads", std::vector<int64_t>{0, 0}}, {"strides", std::vector<int64_t>{1}}}, 1, "f32[2,5,6]"},
    {"pt_Conv1d_groups", "Conv", 6, {P("f32[2,4,6]"), P("f32[6,2,3]"), P("f32[6]")}, {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t(2)}, {"kernel_shape", std::vector<int64_t>{3}}, {"pads", std::vector<int64_t>{0, 0}}, {"strides", std::vector<int64_t>{1}}}, 1, "f32[2,6,4]"},
    {"pt_Conv1d_pad1", "Conv", 6, {P("f32[2,4,10]"), P("f32[5,4,3]"), P("f32[5]")}, {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3}}, {"pads", std::vector<int64_t>{1, 1}}, {"strides", std::vector<int64_t>{1}}}, 1, "f32[2,5,10]"},
    {"pt_Conv1d_pad1size1", "Conv", 6, {P("f32[1,4,1]"), P("f32[4,4,3]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3}}, {"pads", std::vector<int64_t>{1, 1}}, {"strides", std::vector<int64_t>{1}}}, 1, "f32[1,4,1]"},
    {"pt_Conv1d_pad2", "Conv", 6, {P("f32[2,4,10]"), P("f32[5,4,5]"), P("f32[5]")}, {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{5}}, {"pads", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{1}}}, 1, "f32[2,5,10]"},
    {"pt_Conv1d_pad2size1", "Conv", 6, {P("f32[1,4,1]"), P("f32[4,4,5]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{5}}, {"pads", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{1}}}, 1, "f32[1,4,1]"},
    {"pt_Conv1d_stride", "Conv", 6, {P("f32[2,4,10]"), P("f32[5,4,3]"), P("f32[5]")}, {{"dilations", std::vector<int64_t>{1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3}}, {"pads", std::vector<int64_t>{0, 0}}, {"strides", std::vector<int64_t>{2}}}, 1, "f32[2,5,4]"},
    {"pt_Conv2d", "Conv", 6, {P("f32[2,3,7,5]"), P("f32[4,3,3,2]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[2,4,5,4]"},
    {"pt_Conv2d_depthwise", "Conv", 6, {P("f32[2,4,6,6]"), P("f32[4,1,3,3]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(4)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[2,4,4,4]"},
    {"pt_Conv2d_depthwise_padded", "Conv", 6, {P("f32[2,4,6,6]"), P("f32[4,1,3,3]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(4)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[2,4,6,6]"},
    {"pt_Conv2d_depthwise_strided", "Conv", 6, {P("f32[2,4,6,6]"), P("f32[4,1,3,3]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(4)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[2,4,2,2]"},
    {"pt_Conv2d_depthwise_with_multiplier", "Conv", 6, {P("f32[2,4,6,6]"), P("f32[8,1,3,3]"), P("f32[8]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(4)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[2,8,4,4]"},
    {"pt_Conv2d_dilated", "Conv", 6, {P("f32[2,3,8,8]"), P("f32[2,3,3,3]"), P("f32[2]")}, {{"dilations", std::vector<int64_t>{2, 2}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[2,2,3,3]"},
    {"pt_Conv2d_groups", "Conv", 6, {P("f32[2,4,6,5]"), P("f32[6,2,3,2]"), P("f32[6]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(2)}, {"kernel_shape", std::vector<int64_t>{3, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[2,6,4,4]"},
    {"pt_Conv2d_groups_thnn", "Conv", 6, {P("f32[2,4,6,5]"), P("f32[6,2,3,2]"), P("f32[6]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(2)}, {"kernel_shape", std::vector<int64_t>{3, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[2,6,4,4]"},
    {"pt_Conv2d_no_bias", "Conv", 6, {P("f32[2,3,6,5]"), P("f32[4,3,3,2]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[2,4,4,4]"},
    {"pt_Conv2d_padding", "Conv", 6, {P("f32[2,3,6,6]"), P("f32[4,3,3,3]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[2,4,3,3]"},
    {"pt_Conv2d_strided", "Conv", 6, {P("f32[2,3,6,6]"), P("f32[4,3,3,3]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[2,4,2,2]"},
    {"pt_Conv3d", "Conv", 6, {P("f32[2,3,3,4,5]"), P("f32[4,3,2,3,4]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{2, 3, 4}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1, 1}}}, 1, "f32[2,4,2,2,2]"},
    {"pt_Conv3d_dilated", "Conv", 6, {P("f32[2,3,5,5,5]"), P("f32[4,3,2,2,2]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{2, 2, 2}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1, 1}}}, 1, "f32[2,4,3,3,3]"},
    {"pt_Conv3d_dilated_strided", "Conv", 6, {P("f32[2,3,5,5,5]"), P("f32[4,3,2,2,2]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{2, 2, 2}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,4,2,2,2]"},
    {"pt_Conv3d_groups", "Conv", 6, {P("f32[2,4,4,5,4]"), P("f32[6,2,3,3,3]"), P("f32[6]")}, {{"dilations", std::vector<int64_t>{1, 1, 1}}, {"group", int64_t(2)}, {"kernel_shape", std::vector<int64_t>{3, 3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1, 1}}}, 1, "f32[2,6,2,3,2]"},
    {"pt_Conv3d_no_bias", "Conv", 6, {P("f32[2,3,3,4,5]"), P("f32[4,3,2,3,4]")}, {{"dilations", std::vector<int64_t>{1, 1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{2, 3, 4}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1, 1}}}, 1, "f32[2,4,2,2,2]"},
    {"pt_Conv3d_stride", "Conv", 6, {P("f32[2,3,5,5,5]"), P("f32[4,3,2,2,2]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,4,2,2,2]"},
    {"pt_Conv3d_stride_padding", "Conv", 6, {P("f32[2,3,5,5,5]"), P("f32[4,3,2,2,2]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,4,3,3,3]"},
    {"pt_ConvTranspose2d", "ConvTranspose", 6, {P("f32[1,3,7,6]"), P("f32[3,4,3,3]"), P("f32[4]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"output_padding", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{3, 2}}}, 1, "f32[1,4,20,12]"},
    {"pt_ConvTranspose2d_no_bias", "ConvTranspose", 6, {P("f32[1,3,6,7]"), P("f32[3,4,3,3]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"output_padding", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 3}}}, 1, "f32[1,4,12,20]"},
    {"pt_MaxPool1d", "MaxPool", 6, {P("f32[2,10,4]")}, {{"kernel_shape", std::vector<int64_t>{4}}, {"pads", std::vector<int64_t>{0, 0}}, {"strides", std::vector<int64_t>{4}}}, 1, "f32[2,10,1]"},
    {"pt_MaxPool1d_stride", "MaxPool", 6, {P("f32[2,10,4]")}, {{"kernel_shape", std::vector<int64_t>{4}}, {"pads", std::vector<int64_t>{0, 0}}, {"strides", std::vector<int64_t>{4}}}, 1, "f32[2,10,1]"},
    {"pt_MaxPool1d_stride_padding_dilation", "MaxPool", 12, {P("f32[1,1,220000]")}, {{"dilations", std::vector<int64_t>{10}}, {"kernel_shape", std::vector<int64_t>{200}}, {"pads", std::vector<int64_t>{100, 100}}, {"strides", std::vector<int64_t>{10}}}, 1, "f32[1,1,21821]"},
    {"pt_MaxPool2d", "MaxPool", 6, {P("f32[1,3,7,7]")}, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}}, 1, "f32[1,3,4,4]"},
    {"pt_MaxPool2d_stride_padding_dilation", "MaxPool", 12, {P("f32[1,1,1000,1000]")}, {{"dilations", std::vector<int64_t>{10, 10}}, {"kernel_shape", std::vector<int64_t>{60, 80}}, {"pads", std::vector<int64_t>{10, 20, 10, 20}}, {"strides", std::vector<int64_t>{10, 10}}}, 1, "f32[1,1,43,25]"},
    {"pt_MaxPool3d", "MaxPool", 6, {P("f32[2,3,5,5,5]")}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,3,2,2,2]"},
    {"pt_MaxPool3d_stride", "MaxPool", 6, {P("f32[2,3,5,5,5]")}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,3,2,2,2]"},
    {"pt_MaxPool3d_stride_padding", "MaxPool", 6, {P("f32[2,3,5,5,5]")}, {{"kernel_shape", std::vector<int64_t>{2, 2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2, 2}}}, 1, "f32[2,3,3,3,3]"},
    {"pto_operator_conv", "Conv", 6, {P("f32[20,16,50,40]"), P("f32[13,16,3,3]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}, {"strides", std::vector<int64_t>{1, 1}}}, 1, "f32[20,13,48,38]"},
    {"pto_operator_convtranspose", "ConvTranspose", 6, {P("f32[2,3,4,5]"), P("f32[3,3,3,3]")}, {{"dilations", std::vector<int64_t>{1, 1}}, {"group", int64_t(1)}, {"kernel_shape", std::vector<int64_t>{3, 3}}, {"output_padding", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{3, 3}}}, 1, "f32[2,3,12,15]"},
    {"pto_operator_maxpool", "MaxPool", 6, {P("f32[20,16,50]")}, {{"kernel_shape", std::vector<int64_t>{3}}, {"pads", std::vector<int64_t>{0, 0}}, {"strides", std::vector<int64_t>{2}}}, 1, "f32[20,16,24]"},
};
INSTANTIATE_TEST_SUITE_P(ConvPoolBackend, ConvPoolOnnxNode, ::testing::ValuesIn(kConvPoolNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
