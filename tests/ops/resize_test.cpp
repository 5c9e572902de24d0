// Tests of the resampling rules (src/ops/resize.cpp): Resize in its opset 10, 11-12, 13 and 18
// forms (scales folded from float constants, sizes from propagated values, empty scales meaning
// "use sizes", axes and keep_aspect_ratio_policy), Upsample, GridSample, AffineGrid,
// CenterCropPad, Col2Im; plus ONNX's backend node tests for these ops.
#include "op_test_util.h"

namespace sf::test {
namespace {

TEST(ResizeScales, Opset10) {
  OpTester t("Resize", 10);
  t.input("f32[N,C,H,W]").constFloats({4}, {1, 1, 2, 2});
  EXPECT_EQ(t.run(), "f32[N,C,2*H,2*W]");
}

TEST(ResizeScales, IntegerAndDyadicScalesStaySymbolic) {
  OpTester t("Resize", 13);
  t.input("f32[N,C,H,W]").absent().constFloats({4}, {1, 1, 0.5, 1.5});
  EXPECT_EQ(t.run(), "f32[N,C,H//2,(3*W)//2]");
  OpTester three("Resize", 13);
  three.input("f32[N,C,H,W]").absent().constFloats({4}, {1, 1, 3, 4});
  EXPECT_EQ(three.run(), "f32[N,C,3*H,4*W]");
}

// Other scales give floor(dim * scale) computed in f32 (exact for a named dim, the scaled ends
// of the range for an interval).
TEST(ResizeScales, OtherScalesAreFloatExpressions) {
  OpTester t("Resize", 13);
  t.input("f32[N,3,?{10..20},W]").absent().constFloats({4}, {1, 1, 0.6, 0.3});
  EXPECT_EQ(t.run(), "f32[N,3,?{6..12},floor(W * 0.3)]");
  // Scales computed from sizes (upsampling to another tensor's size, in float).
  OpTester c("Resize", 13);
  c.input("f32[N,3,H,W]").absent().input("f32[4] = [1,1,H2 / H,W2 / W]");
  EXPECT_EQ(c.run(), "f32[N,3,floor(H * (H2 / H)),floor(W * (W2 / W))]");
  // Static dims are computed in float as onnxruntime does: 4 * 0.6f = 2.4 -> 2.
  OpTester s("Resize", 13);
  s.input("f32[1,1,2,4]").absent().constFloats({4}, {1, 1, 0.6, 0.6});
  EXPECT_EQ(s.run(), "f32[1,1,1,2]");
  OpTester interval("Resize", 13);
  interval.input("f32[1,1,?{2..8},4]").absent().constFloats({4}, {1, 1, 2, 1});
  EXPECT_EQ(interval.run(), "f32[1,1,?{4..16},4]");
}

TEST(ResizeSizes, FromPropagatedValues) {
  // torch's F.interpolate(x, size=y.shape[2:]) exports sizes = Concat(Shape(x)[:2], Shape(y)[2:]).
  OpTester t("Resize", 13);
  t.input("f32[N,C,H,W]").absent().absent().input("i64[4] = [N,C,H2,W2]");
  EXPECT_EQ(t.run(), "f32[N,C,H2,W2]");
  OpTester exprs("Resize", 13);
  exprs.input("f32[N,C,H,W]").absent().absent().input("i64[4] = [N,C,2*H,2*W]");
  EXPECT_EQ(exprs.run(), "f32[N,C,2*H,2*W]");
  OpTester constant("Resize", 13);
  constant.input("f32[N,3,H,W]").absent().absent().constInts({4}, {1, 3, 64, 64});
  EXPECT_EQ(constant.run(), "f32[1,3,64,64]");
  OpTester unknown("Resize", 13);
  unknown.input("f32[N,3,H,W]").absent().absent().input("i64[4]");
  EXPECT_EQ(unknown.run(), "f32[?,?,?,?]");
}

TEST(ResizeSizes, Opset11EmptyScales) {
  // Opset 11-12 require the scales input: exporters pass an empty name or an empty tensor.
  OpTester emptyTensor("Resize", 11);
  emptyTensor.input("f32[N,C,H,W]")
      .constFloats({0}, {})
      .constFloats({0}, {})
      .input("i64[4] = [N,C,32,32]");
  EXPECT_EQ(emptyTensor.run(), "f32[N,C,32,32]");
  OpTester emptyName("Resize", 12);
  emptyName.input("f32[N,C,H,W]").absent().absent().constInts({4}, {1, 2, 3, 4});
  EXPECT_EQ(emptyName.run(), "f32[1,2,3,4]");
  OpTester emptyInput("Resize", 11);
  emptyInput.input("f32[N,C,H,W]").input("f32[0]").input("f32[0]").constInts({4}, {1, 2, 3, 4});
  EXPECT_EQ(emptyInput.run(), "f32[1,2,3,4]");
  // Scales of unknown length next to sizes: sizes win.
  OpTester unknownLength("Resize", 11);
  unknownLength.input("f32[N,C,H,W]").input("f32[?]").input("f32[?]").constInts({4}, {1, 2, 3, 4});
  EXPECT_EQ(unknownLength.run(), "f32[1,2,3,4]");
  // Both of unknown length: nothing to tell.
  OpTester both("Resize", 11);
  both.input("f32[N,C,H,W]").input("f32[?]").input("f32[?]").input("i64[?]");
  EXPECT_EQ(both.run(), "f32[?,?,?,?]");
}

TEST(ResizeSizes, UnknownRankInput) {
  OpTester t("Resize", 13);
  t.input("f32[...]").absent().absent().input("i64[4] = [N,C,64,W]");
  EXPECT_EQ(t.run(), "f32[N,C,64,W]");
  OpTester scales("Resize", 13);
  scales.input("f32[...]").absent().constFloats({3}, {1, 2, 2});
  EXPECT_EQ(scales.run(), "f32[?,?,?]");
  // A length no model has is not taken as a rank (nothing is allocated for it).
  OpTester huge("Resize", 13);
  huge.input("f32[...]").absent().absent().input("i64[1000000000000]");
  EXPECT_EQ(huge.run(), "f32[...]");
  OpTester hugeCol2Im("Col2Im", 18);
  hugeCol2Im.input("f32[...]").input("i64[1000000000000]").input("i64[1000000000000]");
  EXPECT_EQ(hugeCol2Im.run(), "f32[...]");
  OpTester hugeUpsample("Upsample", 9);
  hugeUpsample.input("f32[...]").input("f32[1000000000000]");
  EXPECT_EQ(hugeUpsample.run(), "f32[...]");
  OpTester nothing("Resize", 13);
  nothing.input("f32[...]").absent().input("f32[?]");
  EXPECT_EQ(nothing.run(), "f32[...]");
}

TEST(ResizeOpset18, Axes) {
  OpTester t("Resize", 18);
  t.input("f32[N,C,H,W]")
      .absent()
      .absent()
      .constInts({2}, {64, 32})
      .attr("axes", std::vector<int64_t>{2, -1});
  EXPECT_EQ(t.run(), "f32[N,C,64,32]");
  OpTester scales("Resize", 18);
  scales.input("f32[N,C,H,W]")
      .absent()
      .constFloats({2}, {2, 2})
      .attr("axes", std::vector<int64_t>{2, 3});
  EXPECT_EQ(scales.run(), "f32[N,C,2*H,2*W]");
  OpTester length("Resize", 18);
  length.input("f32[N,C,H,W]")
      .absent()
      .constFloats({4}, {1, 1, 2, 2})
      .attr("axes", std::vector<int64_t>{2, 3});
  EXPECT_EQ(length.run(), "error: 'scales' has 4 elements, expected 2 (f32[N,C,H,W])");
}

TEST(ResizeOpset18, KeepAspectRatio) {
  OpTester larger("Resize", 18);
  larger.input("f32[1,3,100,200]")
      .absent()
      .absent()
      .constInts({2}, {50, 50})
      .attr("axes", std::vector<int64_t>{2, 3});
  larger.attr("keep_aspect_ratio_policy", "not_larger");
  EXPECT_EQ(larger.run(), "f32[1,3,25,50]");
  OpTester smaller("Resize", 18);
  smaller.input("f32[1,3,100,200]")
      .absent()
      .absent()
      .constInts({2}, {50, 50})
      .attr("axes", std::vector<int64_t>{2, 3});
  smaller.attr("keep_aspect_ratio_policy", "not_smaller");
  EXPECT_EQ(smaller.run(), "f32[1,3,50,100]");
  OpTester sym("Resize", 18);
  sym.input("f32[N,3,H,W]").absent().absent().constInts({4}, {1, 3, 64, 64});
  sym.attr("keep_aspect_ratio_policy", "not_larger");
  EXPECT_EQ(sym.run(), "f32[?{0..1},?{0..3},?{0..64},?{0..64}]");
  OpTester bad("Resize", 18);
  bad.input("f32[N,3,H,W]").absent().absent().constInts({4}, {1, 3, 64, 64});
  bad.attr("keep_aspect_ratio_policy", "fit");
  EXPECT_EQ(bad.run(), "error: unknown keep_aspect_ratio_policy 'fit'");
}

TEST(ResizeErrors, ScalesAndSizes) {
  OpTester both("Resize", 13);
  both.input("f32[N,C,H,W]").absent().constFloats({4}, {1, 1, 2, 2}).constInts({4}, {1, 1, 2, 2});
  EXPECT_EQ(both.run(), "error: only one of 'scales' and 'sizes' may be given");
  OpTester neither("Resize", 13);
  neither.input("f32[N,C,H,W]").absent().absent().absent();
  EXPECT_EQ(neither.run(), "error: one of 'scales' and 'sizes' is required");
  OpTester length("Resize", 13);
  length.input("f32[N,C,H,W]").absent().absent().constInts({3}, {1, 2, 2});
  EXPECT_EQ(length.run(), "error: 'sizes' has 3 elements, expected 4 (f32[N,C,H,W])");
  OpTester negative("Resize", 13);
  negative.input("f32[N,C,H,W]").absent().constFloats({4}, {1, 1, -2, 2});
  EXPECT_EQ(negative.run(), "error: axis 2: scale -2 must be positive and finite (f32[N,C,H,W])");
  OpTester negativeSize("Resize", 13);
  negativeSize.input("f32[N,C,H,W]").absent().absent().constInts({4}, {1, 1, -2, 2});
  EXPECT_EQ(negativeSize.run(), "error: 'sizes' has a negative element -2");
}

TEST(ResizeUpsample, Shapes) {
  OpTester v9("Upsample", 9);
  v9.input("f32[N,C,H,W]").constFloats({4}, {1, 1, 2, 2});
  EXPECT_EQ(v9.run(), "f32[N,C,2*H,2*W]");
  OpTester v7("Upsample", 7);
  v7.input("f32[N,C,?{2..4}]").attr("scales", std::vector<double>{1, 1, 2.5});
  EXPECT_EQ(v7.run(), "f32[N,C,?{5..10}]");
  OpTester v1("Upsample", 1);
  v1.input("f32[N,C,H,W]").attr("height_scale", 2.0).attr("width_scale", 3.0);
  EXPECT_EQ(v1.run(), "f32[N,C,2*H,3*W]");
  OpTester unknown("Upsample", 9);
  unknown.input("f32[N,C,H,W]").input("f32[4]");
  EXPECT_EQ(unknown.run(), "f32[?,?,?,?]");
  OpTester rank("Upsample", 9);
  rank.input("f32[...]").input("f32[4]");
  EXPECT_EQ(rank.run(), "f32[?,?,?,?]");
}

TEST(ResizeUpsample, Errors) {
  OpTester down("Upsample", 9);
  down.input("f32[N,C,H,W]").constFloats({4}, {1, 1, 0.5, 2});
  EXPECT_EQ(down.run(), "error: scale 0.5 is less than 1");
  OpTester length("Upsample", 9);
  length.input("f32[N,C,H,W]").constFloats({2}, {2, 2});
  EXPECT_EQ(length.run(), "error: 'scales' has 2 elements, expected 4 (f32[N,C,H,W])");
  OpTester missing("Upsample", 7);
  missing.input("f32[N,C,H,W]");
  EXPECT_EQ(missing.run(), "error: attribute 'scales' is required");
}

TEST(ResizeGridSample, Shapes) {
  OpTester t("GridSample", 16);
  t.input("f32[N,C,H,W]").input("f32[N,Ho,Wo,2]");
  EXPECT_EQ(t.run(), "f32[N,C,Ho,Wo]");
  OpTester learn("GridSample", 16);
  learn.input("f32[2,C,H,W]").input("f32[B,Ho,Wo,2]");
  EXPECT_EQ(learn.run(), "f32[2,C,Ho,Wo]");
  OpTester volume("GridSample", 20);
  volume.input("f16[N,C,D,H,W]").input("f16[N,4,5,6,3]");
  EXPECT_EQ(volume.run(), "f16[N,C,4,5,6]");
  OpTester rank("GridSample", 16);
  rank.input("f32[...]").input("f32[N,Ho,Wo,2]");
  EXPECT_EQ(rank.run(), "f32[N,?,Ho,Wo]");
  OpTester both("GridSample", 16);
  both.input("f32[...]").input("f32[...]");
  EXPECT_EQ(both.run(), "f32[...]");
}

TEST(ResizeGridSample, Errors) {
  OpTester coords("GridSample", 16);
  coords.input("f32[N,C,H,W]").input("f32[N,Ho,Wo,3]");
  EXPECT_EQ(coords.run(), "error: grid's last dimension is 3, expected 2 (f32[N,Ho,Wo,3])");
  OpTester rank("GridSample", 16);
  rank.input("f32[N,C,H,W]").input("f32[N,Ho,2]");
  EXPECT_EQ(rank.run(), "error: grid has rank 3, expected 4 (f32[N,C,H,W] vs f32[N,Ho,2])");
  OpTester batch("GridSample", 16);
  batch.input("f32[2,C,H,W]").input("f32[3,Ho,Wo,2]");
  EXPECT_EQ(batch.run(), "error: batch sizes differ (f32[2,C,H,W] vs f32[3,Ho,Wo,2])");
  OpTester type("GridSample", 16);
  type.input("f32[N,C,H,W]").input("i64[N,Ho,Wo,2]");
  EXPECT_EQ(type.run(), "error: grid must be floating point, got i64[N,Ho,Wo,2]");
}

TEST(ResizeAffineGrid, Shapes) {
  OpTester t("AffineGrid", 20);
  t.input("f32[N,2,3]").input("i64[4] = [N,C,H,W]");
  EXPECT_EQ(t.run(), "f32[N,H,W,2]");
  OpTester volume("AffineGrid", 20);
  volume.input("f32[2,3,4]").constInts({5}, {2, 1, 4, 5, 6});
  EXPECT_EQ(volume.run(), "f32[2,4,5,6,3]");
  OpTester unknown("AffineGrid", 20);
  unknown.input("f32[N,2,3]").input("i64[4]");
  EXPECT_EQ(unknown.run(), "f32[N,?,?,2]");
  OpTester fromTheta("AffineGrid", 20);
  fromTheta.input("f32[N,3,4]").input("i64[?]");
  EXPECT_EQ(fromTheta.run(), "f32[N,?,?,?,3]");
  OpTester batch("AffineGrid", 20);
  batch.input("f32[2,2,3]").constInts({4}, {3, 1, 4, 4});
  EXPECT_EQ(batch.run(), "error: batch sizes differ (f32[2,2,3] vs size 3)");
  OpTester theta("AffineGrid", 20);
  theta.input("f32[N,2,3]").constInts({5}, {1, 1, 4, 4, 4});
  EXPECT_EQ(theta.run(), "error: theta must be [N, 3, 4] for a 3-D grid, got f32[N,2,3]");
  OpTester size("AffineGrid", 20);
  size.input("f32[N,2,3]").constInts({3}, {1, 4, 4});
  EXPECT_EQ(size.run(),
            "error: 'size' must have 4 or 5 elements (N, C, [D,] H, W), got i64[3] = [1,4,4]");
}

TEST(ResizeCenterCropPad, Shapes) {
  OpTester t("CenterCropPad", 18);
  t.input("f32[H,W,C]").constInts({2}, {10, 12}).attr("axes", std::vector<int64_t>{0, 1});
  EXPECT_EQ(t.run(), "f32[10,12,C]");
  OpTester all("CenterCropPad", 18);
  all.input("f32[H,W]").input("i64[2] = [S,8]");
  EXPECT_EQ(all.run(), "f32[S,8]");
  OpTester unknown("CenterCropPad", 18);
  unknown.input("f32[H,W,3]").input("i64[2]").attr("axes", std::vector<int64_t>{0, 1});
  EXPECT_EQ(unknown.run(), "f32[?,?,3]");
  OpTester length("CenterCropPad", 18);
  length.input("f32[H,W,3]").constInts({2}, {4, 4});
  EXPECT_EQ(length.run(), "error: 'shape' has 2 elements, expected 3 (f32[H,W,3])");
}

TEST(ResizeCol2Im, Shapes) {
  OpTester t("Col2Im", 18);
  t.input("f32[1,5,5]").constInts({2}, {5, 5}).constInts({2}, {1, 5});
  EXPECT_EQ(t.run(), "f32[1,1,5,5]");
  OpTester strided("Col2Im", 18);
  strided.input("f32[N,18,4]")
      .constInts({2}, {5, 5})
      .constInts({2}, {3, 3})
      .attr("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(strided.run(), "f32[N,2,5,5]");
  OpTester sym("Col2Im", 18);
  sym.input("f32[N,K,L]").input("i64[2] = [H,W]").constInts({2}, {2, 2});
  EXPECT_EQ(sym.run(), "f32[N,K//4,H,W]");
  OpTester blocks("Col2Im", 18);
  blocks.input("f32[1,5,6]").constInts({2}, {5, 5}).constInts({2}, {1, 5});
  EXPECT_EQ(blocks.run(), "error: input has 6 blocks, expected 5 (f32[1,5,6])");
  OpTester channels("Col2Im", 18);
  channels.input("f32[1,6,5]").constInts({2}, {5, 5}).constInts({2}, {1, 5});
  EXPECT_EQ(channels.run(),
            "error: input channels 6 are not divisible by the block size 5 (f32[1,6,5])");
}

// ---- ONNX backend node tests (generated from /usr/share/libonnx-testdata/data/node) ----
class ResizeOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(ResizeOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

const std::vector<NodeCase> kResizeNodeCases = {
    {"gridsample",
     "GridSample",
     16,
     {P("f32[1,1,4,4]"), P("f32[1,6,6,2]")},
     {{"align_corners", int64_t(0)}, {"mode", "bilinear"}, {"padding_mode", "zeros"}},
     1,
     "f32[1,1,6,6]"},
    {"gridsample_aligncorners_true",
     "GridSample",
     16,
     {P("f32[1,1,3,2]"),
      F({1, 2, 4, 2}, {-1.0, -1.0, -0.5, -0.5, -0.20000000298023224, -0.20000000298023224, 0.0, 0.0,
                       0.0, 0.0, -0.20000000298023224, -0.20000000298023224, 0.5, 0.5, 1.0, 1.0})},
     {{"align_corners", int64_t(1)}, {"mode", "bilinear"}},
     1,
     "f32[1,1,2,4]"},
    {"gridsample_bicubic",
     "GridSample",
     16,
     {P("f32[1,1,3,2]"),
      F({1, 2, 4, 2}, {-1.0, -1.0, -0.5, -0.5, -0.20000000298023224, -0.20000000298023224, 0.0, 0.0,
                       0.0, 0.0, -0.20000000298023224, -0.20000000298023224, 0.5, 0.5, 1.0, 1.0})},
     {{"mode", "bicubic"}},
     1,
     "f32[1,1,2,4]"},
    {"gridsample_bilinear",
     "GridSample",
     16,
     {P("f32[1,1,3,2]"),
      F({1, 2, 4, 2}, {-1.0, -1.0, -0.5, -0.5, -0.20000000298023224, -0.20000000298023224, 0.0, 0.0,
                       0.0, 0.0, -0.20000000298023224, -0.20000000298023224, 0.5, 0.5, 1.0, 1.0})},
     {{"mode", "bilinear"}},
     1,
     "f32[1,1,2,4]"},
    {"gridsample_border_padding",
     "GridSample",
     16,
     {P("f32[1,1,3,2]"),
      F({1, 2, 4, 2},
        {-10.0, -10.0, -5.0, -5.0, -0.20000000298023224, -0.20000000298023224, 10.0, 10.0, 10.0,
         10.0, -0.20000000298023224, -0.20000000298023224, 5.0, 5.0, 10.0, 10.0})},
     {{"padding_mode", "border"}},
     1,
     "f32[1,1,2,4]"},
    {"gridsample_nearest",
     "GridSample",
     16,
     {P("f32[1,1,3,2]"),
      F({1, 2, 4, 2}, {-1.0, -1.0, -0.5, -0.5, -0.20000000298023224, -0.20000000298023224, 0.0, 0.0,
                       0.0, 0.0, -0.20000000298023224, -0.20000000298023224, 0.5, 0.5, 1.0, 1.0})},
     {{"mode", "nearest"}},
     1,
     "f32[1,1,2,4]"},
    {"gridsample_reflection_padding",
     "GridSample",
     16,
     {P("f32[1,1,3,2]"),
      F({1, 2, 4, 2},
        {-10.0, -10.0, -5.0, -5.0, -0.20000000298023224, -0.20000000298023224, 10.0, 10.0, 10.0,
         10.0, -0.20000000298023224, -0.20000000298023224, 5.0, 5.0, 10.0, 10.0})},
     {{"padding_mode", "reflection"}},
     1,
     "f32[1,1,2,4]"},
    {"gridsample_zeros_padding",
     "GridSample",
     16,
     {P("f32[1,1,3,2]"),
      F({1, 2, 4, 2},
        {-10.0, -10.0, -5.0, -5.0, -0.20000000298023224, -0.20000000298023224, 10.0, 10.0, 10.0,
         10.0, -0.20000000298023224, -0.20000000298023224, 5.0, 5.0, 10.0, 10.0})},
     {{"padding_mode", "zeros"}},
     1,
     "f32[1,1,2,4]"},
    {"resize_downsample_scales_cubic",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), F({4}, {1.0, 1.0, 0.800000011920929, 0.800000011920929})},
     {{"mode", "cubic"}},
     1,
     "f32[1,1,3,3]"},
    {"resize_downsample_scales_cubic_A_n0p5_exclude_outside",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), F({4}, {1.0, 1.0, 0.800000011920929, 0.800000011920929})},
     {{"cubic_coeff_a", -0.5}, {"exclude_outside", int64_t(1)}, {"mode", "cubic"}},
     1,
     "f32[1,1,3,3]"},
    {"resize_downsample_scales_cubic_align_corners",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), F({4}, {1.0, 1.0, 0.800000011920929, 0.800000011920929})},
     {{"coordinate_transformation_mode", "align_corners"}, {"mode", "cubic"}},
     1,
     "f32[1,1,3,3]"},
    {"resize_downsample_scales_linear",
     "Resize",
     13,
     {P("f32[1,1,2,4]"), A(), F({4}, {1.0, 1.0, 0.6000000238418579, 0.6000000238418579})},
     {{"mode", "linear"}},
     1,
     "f32[1,1,1,2]"},
    {"resize_downsample_scales_linear_align_corners",
     "Resize",
     13,
     {P("f32[1,1,2,4]"), A(), F({4}, {1.0, 1.0, 0.6000000238418579, 0.6000000238418579})},
     {{"coordinate_transformation_mode", "align_corners"}, {"mode", "linear"}},
     1,
     "f32[1,1,1,2]"},
    {"resize_downsample_scales_nearest",
     "Resize",
     13,
     {P("f32[1,1,2,4]"), A(), F({4}, {1.0, 1.0, 0.6000000238418579, 0.6000000238418579})},
     {{"mode", "nearest"}},
     1,
     "f32[1,1,1,2]"},
    {"resize_downsample_sizes_cubic",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), A(), I({4}, {1, 1, 3, 3})},
     {{"mode", "cubic"}},
     1,
     "f32[1,1,3,3]"},
    {"resize_downsample_sizes_linear_pytorch_half_pixel",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), A(), I({4}, {1, 1, 3, 1})},
     {{"coordinate_transformation_mode", "pytorch_half_pixel"}, {"mode", "linear"}},
     1,
     "f32[1,1,3,1]"},
    {"resize_downsample_sizes_nearest",
     "Resize",
     13,
     {P("f32[1,1,2,4]"), A(), A(), I({4}, {1, 1, 1, 3})},
     {{"mode", "nearest"}},
     1,
     "f32[1,1,1,3]"},
    {"resize_tf_crop_and_resize",
     "Resize",
     13,
     {P("f32[1,1,4,4]"),
      F({8}, {0.0, 0.0, 0.4000000059604645, 0.6000000238418579, 1.0, 1.0, 1.2000000476837158,
              1.7000000476837158}),
      A(), I({4}, {1, 1, 3, 3})},
     {{"coordinate_transformation_mode", "tf_crop_and_resize"},
      {"extrapolation_value", 10.0},
      {"mode", "linear"}},
     1,
     "f32[1,1,3,3]"},
    {"resize_upsample_scales_cubic",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), F({4}, {1.0, 1.0, 2.0, 2.0})},
     {{"mode", "cubic"}},
     1,
     "f32[1,1,8,8]"},
    {"resize_upsample_scales_cubic_A_n0p5_exclude_outside",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), F({4}, {1.0, 1.0, 2.0, 2.0})},
     {{"cubic_coeff_a", -0.5}, {"exclude_outside", int64_t(1)}, {"mode", "cubic"}},
     1,
     "f32[1,1,8,8]"},
    {"resize_upsample_scales_cubic_align_corners",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), F({4}, {1.0, 1.0, 2.0, 2.0})},
     {{"coordinate_transformation_mode", "align_corners"}, {"mode", "cubic"}},
     1,
     "f32[1,1,8,8]"},
    {"resize_upsample_scales_cubic_asymmetric",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), F({4}, {1.0, 1.0, 2.0, 2.0})},
     {{"coordinate_transformation_mode", "asymmetric"}, {"mode", "cubic"}},
     1,
     "f32[1,1,8,8]"},
    {"resize_upsample_scales_linear",
     "Resize",
     13,
     {P("f32[1,1,2,2]"), A(), F({4}, {1.0, 1.0, 2.0, 2.0})},
     {{"mode", "linear"}},
     1,
     "f32[1,1,4,4]"},
    {"resize_upsample_scales_linear_align_corners",
     "Resize",
     13,
     {P("f32[1,1,2,2]"), A(), F({4}, {1.0, 1.0, 2.0, 2.0})},
     {{"coordinate_transformation_mode", "align_corners"}, {"mode", "linear"}},
     1,
     "f32[1,1,4,4]"},
    {"resize_upsample_scales_nearest",
     "Resize",
     13,
     {P("f32[1,1,2,2]"), A(), F({4}, {1.0, 1.0, 2.0, 3.0})},
     {{"mode", "nearest"}},
     1,
     "f32[1,1,4,6]"},
    {"resize_upsample_sizes_cubic",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), A(), I({4}, {1, 1, 9, 10})},
     {{"mode", "cubic"}},
     1,
     "f32[1,1,9,10]"},
    {"resize_upsample_sizes_nearest",
     "Resize",
     13,
     {P("f32[1,1,2,2]"), A(), A(), I({4}, {1, 1, 7, 8})},
     {{"mode", "nearest"}},
     1,
     "f32[1,1,7,8]"},
    {"resize_upsample_sizes_nearest_ceil_half_pixel",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), A(), I({4}, {1, 1, 8, 8})},
     {{"coordinate_transformation_mode", "half_pixel"},
      {"mode", "nearest"},
      {"nearest_mode", "ceil"}},
     1,
     "f32[1,1,8,8]"},
    {"resize_upsample_sizes_nearest_floor_align_corners",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), A(), I({4}, {1, 1, 8, 8})},
     {{"coordinate_transformation_mode", "align_corners"},
      {"mode", "nearest"},
      {"nearest_mode", "floor"}},
     1,
     "f32[1,1,8,8]"},
    {"resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric",
     "Resize",
     13,
     {P("f32[1,1,4,4]"), A(), A(), I({4}, {1, 1, 8, 8})},
     {{"coordinate_transformation_mode", "asymmetric"},
      {"mode", "nearest"},
      {"nearest_mode", "round_prefer_ceil"}},
     1,
     "f32[1,1,8,8]"},
    {"upsample_nearest",
     "Upsample",
     9,
     {P("f32[1,1,2,2]"), F({4}, {1.0, 1.0, 2.0, 3.0})},
     {{"mode", "nearest"}},
     1,
     "f32[1,1,4,6]"},
};

INSTANTIATE_TEST_SUITE_P(ResizeBackend, ResizeOnnxNode, ::testing::ValuesIn(kResizeNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
