// OpenVINO's "Propagating shapes for nGraph Function" examples: every example about dimensions and
// shapes, verbatim, with the source's expected result. Each test quotes the source line it checks.
// The op-level parts (Softmax axis validation, Concat as an op) belong to tests/ops; here the Concat
// examples are restated as the dimension arithmetic they rest on.
#include "test_util.h"

#include <limits>

namespace sf {
namespace {

// =============================================================================================
// "Here are some examples of shape creation"
// =============================================================================================

// "1. Shape with undefined rank:  ngraph::PartialShape::dynamic();"
TEST(PartialShapeExamples, UndefinedRank) {
  PartialShape p = PartialShape::dynamic();
  EXPECT_FALSE(p.rankIsStatic());
  EXPECT_TRUE(p.rank().isDynamic());
  EXPECT_EQ(p.rank(), Rank::dynamic());
  EXPECT_TRUE(p.isDynamic());
  EXPECT_FALSE(p.isStatic());
  EXPECT_EQ(p.toString(), "[...]");
  EXPECT_FALSE(p.toShape().ok());
  EXPECT_EQ(p, PartialShape::dynamic());
  EXPECT_NE(p, PartialShape{});           // unknown rank is not a scalar
  EXPECT_NE(p, PartialShape::dynamic(0)); // nor rank 0
}

// "ngraph::PartialShape({1, 3, Dimension::dynamic(), Dimension::dynamic()});  // rank == 4, two
//  static dimensions and two fully dynamic dimension"
TEST(PartialShapeExamples, RankFourTwoStaticTwoDynamic) {
  PartialShape p({1, 3, Dimension::dynamic(), Dimension::dynamic()});
  ASSERT_TRUE(p.rankIsStatic());
  EXPECT_EQ(p.rank(), Rank(4));
  EXPECT_TRUE(p[0].isStatic());
  EXPECT_EQ(p[0].length(), 1);
  EXPECT_TRUE(p[1].isStatic());
  EXPECT_EQ(p[1].length(), 3);
  EXPECT_TRUE(p[2].isDynamic());
  EXPECT_TRUE(p[3].isDynamic());
  EXPECT_EQ(p[2], Dimension::dynamic());
  EXPECT_EQ(p[3], Dimension::dynamic());
  EXPECT_TRUE(p.isDynamic());
  EXPECT_EQ(p.toString(), "[1,3,?,?]");
}

// "ngraph::PartialShape({Dimension::dynamic(), Dimension::dynamic()});  // rank == 2, all
//  dimensions are fully dynamic"
TEST(PartialShapeExamples, RankTwoAllDynamic) {
  PartialShape p({Dimension::dynamic(), Dimension::dynamic()});
  EXPECT_EQ(p.rank(), Rank(2));
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_TRUE(p[i].isDynamic());
    EXPECT_EQ(p[i].minLength(), 0);
    EXPECT_EQ(p[i].maxLength(), kInf);
  }
  EXPECT_EQ(p.toString(), "[?,?]");
}

// "ngraph::PartialShape::dynamic(5); // rank == 5, all the dimensions are fully dynamic"
TEST(PartialShapeExamples, DynamicOfRankFive) {
  PartialShape p = PartialShape::dynamic(5);
  ASSERT_TRUE(p.rankIsStatic());
  EXPECT_EQ(p.rank(), Rank(5));
  EXPECT_EQ(p.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(p[i], Dimension::dynamic()) << i;
  EXPECT_EQ(p.toString(), "[?,?,?,?,?]");
  EXPECT_EQ(p, PartialShape({Dimension::dynamic(), Dimension::dynamic(), Dimension::dynamic(),
                             Dimension::dynamic(), Dimension::dynamic()}));
}

// "ngraph::PartialShape({{1, 8}, 3, 400, 400}); // rank == 4, first dimension is dynamic and can be
//  any number from 1 to 8 inclusive, all the other dimensions are static"
TEST(PartialShapeExamples, IntervalOneToEight) {
  PartialShape p({{1, 8}, 3, 400, 400});
  EXPECT_EQ(p.rank(), Rank(4));
  EXPECT_TRUE(p[0].isDynamic());
  EXPECT_EQ(p[0].minLength(), 1);
  EXPECT_EQ(p[0].maxLength(), 8);
  EXPECT_TRUE(p[0].hasUpperBound());
  EXPECT_EQ(p[0].interval(), (Interval{1, 8}));
  for (size_t i = 1; i < 4; ++i) EXPECT_TRUE(p[i].isStatic()) << i;
  EXPECT_EQ(p[1].length(), 3);
  EXPECT_EQ(p[2].length(), 400);
  EXPECT_EQ(p[3].length(), 400);
  EXPECT_EQ(p.toString(), "[?{1..8},3,400,400]");
}

// "ngraph::PartialShape({{2, -1}, 3, 400, 400}); // rank == 4, first dimension is dynamic and can
//  be any number larger or equal 2, all the other dimensions are static"
TEST(PartialShapeExamples, IntervalAtLeastTwo) {
  PartialShape p({{2, -1}, 3, 400, 400});
  EXPECT_TRUE(p[0].isDynamic());
  EXPECT_EQ(p[0].minLength(), 2);
  EXPECT_EQ(p[0].maxLength(), kInf);
  EXPECT_FALSE(p[0].hasUpperBound());
  EXPECT_TRUE(p[0].interval().contains(2));
  EXPECT_TRUE(p[0].interval().contains(int64_t(1) << 40));
  EXPECT_FALSE(p[0].interval().contains(1));
  EXPECT_EQ(p[0].toString(), "?{2..}");
  EXPECT_EQ(p.toString(), "[?{2..},3,400,400]");
}

// "ngraph::PartialShape({{-1, 8}, 3, 400, 400}); // rank == 4, first dimension is dynamic and will
//  not be larger than 8, all the other dimensions are static"
TEST(PartialShapeExamples, IntervalAtMostEight) {
  PartialShape p({{-1, 8}, 3, 400, 400});
  EXPECT_TRUE(p[0].isDynamic());
  EXPECT_EQ(p[0].minLength(), 0);
  EXPECT_EQ(p[0].maxLength(), 8);
  EXPECT_TRUE(p[0].hasUpperBound());
  EXPECT_FALSE(p[0].interval().contains(9));
  EXPECT_EQ(p[0].toString(), "?{0..8}");
}

// "4. Shape with defined rank and fully defined dimensions:
//    ngraph::PartialShape({1, 3, 400, 400});  // rank == 4
//    ngraph::Shape({1, 3, 400, 400});  // rank == 4"
TEST(PartialShapeExamples, FullyStatic) {
  PartialShape p({1, 3, 400, 400});
  EXPECT_EQ(p.rank(), Rank(4));
  EXPECT_TRUE(p.isStatic());
  EXPECT_EQ(GET(p.toShape()), (Shape{1, 3, 400, 400}));
  Shape s({1, 3, 400, 400});
  EXPECT_EQ(s.size(), 4u);
  EXPECT_EQ(PartialShape(s), p);
  EXPECT_EQ(toString(s), "[1,3,400,400]");
  EXPECT_EQ(p.toString(), "[1,3,400,400]");
  EXPECT_EQ(GET(elementCount(s)), 480000);
  EXPECT_EQ(GET(p.elementCount()), Dimension(480000));
}

// "ngraph::PartialShape({5});  // rank == 1, one-dimensional tensor with five values in it"
TEST(PartialShapeExamples, OneDimensionalFive) {
  PartialShape p({5});
  EXPECT_EQ(p.rank(), Rank(1));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], Dimension(5));
  EXPECT_TRUE(p.isStatic());
  EXPECT_EQ(GET(p.toShape()), (Shape{5}));
  EXPECT_EQ(GET(p.elementCount()), Dimension(5));
  EXPECT_EQ(p.toString(), "[5]");
}

// "ngraph::PartialShape({});  // rank == 0, scalar -- zero-dimensional tensor with single value"
TEST(PartialShapeExamples, Scalar) {
  PartialShape p({});
  ASSERT_TRUE(p.rankIsStatic());
  EXPECT_EQ(p.rank(), Rank(0));
  EXPECT_EQ(p.size(), 0u);
  EXPECT_TRUE(p.isStatic());
  EXPECT_EQ(GET(p.toShape()), Shape{});
  EXPECT_EQ(GET(p.elementCount()), Dimension(1)); // "with single value in it"
  EXPECT_EQ(GET(elementCount(Shape{})), 1);
  EXPECT_EQ(p.toString(), "[]");
  EXPECT_EQ(p, PartialShape());
  EXPECT_EQ(p, PartialShape::dynamic(0));
}

// "ngraph::PartialShape({1});  // rank == 1, one-dimensional tensor with single value in it"
TEST(PartialShapeExamples, OneDimensionalOne) {
  PartialShape p({1});
  EXPECT_EQ(p.rank(), Rank(1));
  EXPECT_EQ(p[0], Dimension(1));
  EXPECT_EQ(GET(p.elementCount()), Dimension(1));
  EXPECT_NE(p, PartialShape({})); // same element count, different rank
}

// "ngraph::PartialShape({1, 3, 0, 0});  // rank == 4, four-dimensional tensor with no value in it
//  empty tensor"
TEST(PartialShapeExamples, EmptyTensor) {
  PartialShape p({1, 3, 0, 0});
  EXPECT_EQ(p.rank(), Rank(4));
  EXPECT_TRUE(p.isStatic());
  EXPECT_EQ(GET(p.toShape()), (Shape{1, 3, 0, 0}));
  EXPECT_EQ(GET(p.elementCount()), Dimension(0));
  EXPECT_EQ(GET(elementCount(Shape{1, 3, 0, 0})), 0);
  EXPECT_TRUE(p[2].isStatic()); // 0 is a static length, not "unknown"
  EXPECT_EQ(p.toString(), "[1,3,0,0]");
}

// =============================================================================================
// "ngraph::Dimension is represented by an interval which is a pair of values -- maximum and
//  minimum value for the dimension ... They are equal for static dimensions"
// =============================================================================================

// "1. dynamic ngraph::Dimension:
//    ngraph::Dimension::dynamic();
//    ngraph::Dimension(-1);  // special value for Dimension
//    ngraph::Dimension{0, MAX_INT};"
// MAX_INT is the open upper end of the interval: kInf (int64 max) here.
TEST(DimensionExamples, ThreeWaysToSayDynamic) {
  Dimension a = Dimension::dynamic();
  Dimension b = Dimension(-1);
  Dimension c = Dimension{0, kInf};
  EXPECT_EQ(a, b);
  EXPECT_EQ(b, c);
  EXPECT_EQ(a, c);
  for (const Dimension &d : {a, b, c}) {
    EXPECT_TRUE(d.isDynamic());
    EXPECT_FALSE(d.isStatic());
    EXPECT_EQ(d.minLength(), 0);
    EXPECT_EQ(d.maxLength(), kInf);
    EXPECT_FALSE(d.hasUpperBound());
    EXPECT_EQ(d.toString(), "?");
  }
  EXPECT_EQ(Dimension(), a); // default-constructed is dynamic too
}

// "2. interval ngraph::Dimension:
//    ngraph::Dimension{1, 10};
//    ngraph::Dimension{10, 1}; // range values would be flipped, such a dimension is equal to
//                              // previous example
//    ngraph::Dimension{0, MAX_INT};"
TEST(DimensionExamples, IntervalAndFlippedInterval) {
  Dimension a{1, 10};
  Dimension b{10, 1};
  EXPECT_EQ(a, b);
  EXPECT_EQ(b.minLength(), 1);
  EXPECT_EQ(b.maxLength(), 10);
  EXPECT_TRUE(a.isDynamic());
  EXPECT_EQ(a.toString(), "?{1..10}");
  EXPECT_EQ(b.toString(), "?{1..10}");
  Dimension c{0, kInf};
  EXPECT_EQ(c, Dimension::dynamic());
}

// "3. static ngraph::Dimension
//    ngraph::Dimension{3};
//    ngraph::Dimension{3, 3};"
TEST(DimensionExamples, StaticTwoWays) {
  Dimension a{3};
  Dimension b{3, 3};
  EXPECT_EQ(a, b);
  for (const Dimension &d : {a, b}) {
    EXPECT_TRUE(d.isStatic());
    EXPECT_EQ(d.length(), 3);
    EXPECT_EQ(GET(d.getLength()), 3);
    EXPECT_EQ(d.interval(), Interval::point(3));
    EXPECT_EQ(d.toString(), "3");
  }
}

// "> NOTE: Dimension(-1) is equal to Dimension::Dynamic(). There is no way to create static
//  Dimension with value -1"
// The source allows other negative dims "due to historical reasons, but there is no point in it";
// shapeflow's Dimension(int64_t) reads any negative value as dynamic (dimension.h).
TEST(DimensionExamples, NoStaticMinusOne) {
  EXPECT_FALSE(Dimension(-1).isStatic());
  EXPECT_EQ(Dimension(-1), Dimension::dynamic());
  EXPECT_FALSE(Dimension(int64_t(-1)).isStatic());
  EXPECT_FALSE((Dimension{-1, -1}).isStatic());
  EXPECT_EQ((Dimension{-1, -1}), Dimension::dynamic());
  for (int64_t v : {int64_t(-2), int64_t(-100), std::numeric_limits<int64_t>::min()}) {
    EXPECT_FALSE(Dimension(v).isStatic()) << v;
    EXPECT_EQ(Dimension(v), Dimension::dynamic()) << v;
  }
  // Not through a shape either.
  EXPECT_FALSE(PartialShape({-1})[0].isStatic());
  EXPECT_EQ(PartialShape({-1})[0], Dimension::dynamic());
  EXPECT_FALSE(PartialShape(Shape{2, -1}).isStatic());
  // An exact -1 exists only as a shape-tensor *value* (a Reshape target), made on purpose with
  // constantValue; it is not the dynamic dimension.
  EXPECT_TRUE(Dimension::constantValue(-1).isStatic());
  EXPECT_EQ(Dimension::constantValue(-1).length(), -1);
  EXPECT_NE(Dimension::constantValue(-1), Dimension(-1));
}

// =============================================================================================
// Concat examples (source "Concat example"), as the dimension arithmetic they rest on: the output
// axis dim is the sum of the inputs' axis dims (Dimension::operator+), every other output dim is
// the merge -- intersection -- of the inputs' dims (Dimension::merge). The op rule itself is tested
// with the ops.
// =============================================================================================

/// The source's Concat shape rule written with the dim API only (the op's own rule lives in ops).
Result<PartialShape> concatShape(const std::vector<PartialShape> &inputs, int64_t axis) {
  PartialShape out = PartialShape::dynamic();
  Dimension axisDim(0);
  for (const PartialShape &in : inputs) {
    if (!in.rankIsStatic()) {
      SF_ASSIGN(axisDim, axisDim + Dimension::dynamic());
      continue;
    }
    int64_t r = int64_t(in.size());
    int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r) return makeError("axis out of range for " + in.toString());
    SF_ASSIGN(axisDim, axisDim + in[size_t(a)]);
    std::vector<Dimension> rest = in.dims();
    rest[size_t(a)] = Dimension::dynamic();
    if (!PartialShape::mergeInto(out, PartialShape(std::move(rest))))
      return makeError("incompatible inputs " + out.toString() + " and " + in.toString());
  }
  if (!out.rankIsStatic()) return out;
  int64_t a = axis < 0 ? axis + int64_t(out.size()) : axis;
  out[size_t(a)] = axisDim;
  return out;
}

// "Static input shapes:
//     axis = 1
//     1st input shape: [1, 2, 3, 4]
//     2nd input shape: [1, 5, 3, 4]
//     output shape:    [1, 7, 3, 4]"
TEST(ConcatIntervalExamples, StaticInputShapes) {
  EXPECT_EQ(GET(Dimension(2) + Dimension(5)), Dimension(7));
  EXPECT_EQ(GET(concatShape({PartialShape{1, 2, 3, 4}, PartialShape{1, 5, 3, 4}}, 1)),
            (PartialShape{1, 7, 3, 4}));
}

// "Dynamic axis dimension of input shape:
//     axis = 1
//     1st input shape: [1,        2, 3, 4]
//     2nd input shape: [1, {10, 15}, 3, 4]
//     output shape:    [1, {12, 17}, 3, 4]"
TEST(ConcatIntervalExamples, DynamicAxisDimension) {
  Dimension sum = GET(Dimension(2) + Dimension(10, 15));
  EXPECT_EQ(sum.interval(), (Interval{12, 17}));
  EXPECT_EQ(sum, Dimension(12, 17));
  EXPECT_EQ(GET(concatShape({PartialShape{1, 2, 3, 4}, PartialShape{1, {10, 15}, 3, 4}}, 1)),
            (PartialShape{1, {12, 17}, 3, 4}));
}

// "Dynamic non axis dimension of input shape:
//     axis = 1
//     1st input shape: [1, 2, 3, {1, 5}]
//     2nd input shape: [1, 5, 3, 4]
//     output shape:    [1, 7, 3, 4]
//     Validation passes as 4th dimension range of 1st input shape intersects with 4th dimension
//     range of 2nd input shape."
// (The source repeats this example verbatim twice, and its last sentence is truncated: "4th
// dimension of output shape is set to the Output". From the expected output it is the
// intersection, 4.)
TEST(ConcatIntervalExamples, DynamicNonAxisDimension) {
  EXPECT_TRUE(Dimension(1, 5).compatible(Dimension(4)));
  EXPECT_EQ(Dimension::merge(Dimension(1, 5), Dimension(4)), Dimension(4));
  EXPECT_EQ(Dimension::merge(Dimension(4), Dimension(1, 5)), Dimension(4));
  EXPECT_EQ(GET(concatShape({PartialShape{1, 2, 3, {1, 5}}, PartialShape{1, 5, 3, 4}}, 1)),
            (PartialShape{1, 7, 3, 4}));
}

// "Dynamic input rank:
//     axis = -3
//     1st input shape: [1, 2, 3, {1, 5}]
//     2nd input shape: PartialShape::dynamic()
//     output shape:    [1, {2, MAX_INT}, 3, {1, 5}]
//     ... As `axis` dimension of 1st input is equal to 2, sum of input `axis` dimensions wouldn't
//     be less than 2. That is why we set minimum of `axis` dimension of output shape to 2.
//     Maximum of `axis` dimension of output shape is unknown so we set it to dynamic."
// (The source's text has a stray ".Ð¡" before "be less than 2"; axis -3 of a rank-4 input is 1.)
TEST(ConcatIntervalExamples, DynamicInputRank) {
  Dimension sum = GET(Dimension(2) + Dimension::dynamic());
  EXPECT_EQ(sum.minLength(), 2);
  EXPECT_EQ(sum.maxLength(), kInf);
  EXPECT_FALSE(sum.hasUpperBound());
  EXPECT_EQ(sum, Dimension(2, -1));
  EXPECT_EQ(sum.toString(), "?{2..}");
  EXPECT_EQ(GET(concatShape({PartialShape{1, 2, 3, {1, 5}}, PartialShape::dynamic()}, -3)),
            (PartialShape{1, {2, kInf}, 3, {1, 5}}));
}

// "Dynamic input shapes, static ranks:
//     axis = -3
//     1st input shape: [     1,      2,      3, {1, 5}]
//     2nd input shape: [{1, 5}, {1, 5}, {1, 5}]
//     Validation fail -- rank of both inputs are static and they are different."
TEST(ConcatIntervalExamples, StaticRanksDiffer) {
  PartialShape a{1, 2, 3, {1, 5}};
  PartialShape b{{1, 5}, {1, 5}, {1, 5}};
  EXPECT_FALSE(a.rank().compatible(b.rank()));
  EXPECT_FALSE(a.compatible(b));
  EXPECT_FALSE(PartialShape::merge(a, b).has_value());
  PartialShape dst = a;
  EXPECT_FALSE(PartialShape::mergeInto(dst, b));
  EXPECT_FALSE(concatShape({a, b}, -3).ok());
}

// "Dynamic input shapes:
//     axis = 1
//     1st input shape: [{0, 1}, {2, 3}, {4, 7}]
//     2nd input shape: [{1, 2}, {3, 4}, {5, 10}]
//     output shape:    [     1, {5, 7}, {5, 7}]
//     Validation passes -- all the requirements satisfied.
//     To determine first dimension of output shape  Intersection of first dimensions of input  7"
// The explanation is truncated, but the expected output is right, and the two {5, 7} come from
// different rules: dim 0 is {0,1} merged with {1,2} = 1; dim 1 (the axis) is the SUM
// {2,3} + {3,4} = {5,7}; dim 2 is the INTERSECTION {4,7} merged with {5,10} = {5,7}. (Had dim 2
// been summed too it would be {9,17}; had the axis been intersected it would be 3.)
TEST(ConcatIntervalExamples, DynamicInputShapes) {
  EXPECT_EQ(Dimension::merge(Dimension(0, 1), Dimension(1, 2)), Dimension(1));
  EXPECT_EQ(GET(Dimension(2, 3) + Dimension(3, 4)), Dimension(5, 7));
  EXPECT_EQ(Dimension::merge(Dimension(4, 7), Dimension(5, 10)), Dimension(5, 7));
  EXPECT_EQ(GET(concatShape({PartialShape{{0, 1}, {2, 3}, {4, 7}},
                             PartialShape{{1, 2}, {3, 4}, {5, 10}}},
                            1)),
            (PartialShape{1, {5, 7}, {5, 7}}));
}

// The failing side of "Validation passes as 4th dimension range of 1st input shape intersects with
// 4th dimension range of 2nd input shape": ranges that do not intersect fail.
TEST(ConcatIntervalExamples, DisjointNonAxisDimsFail) {
  EXPECT_FALSE(Dimension(1, 5).compatible(Dimension(6, 8)));
  EXPECT_FALSE(Dimension::merge(Dimension(1, 5), Dimension(6, 8)).has_value());
  EXPECT_FALSE(Dimension::merge(Dimension(6, 8), Dimension(1, 5)).has_value());
  EXPECT_FALSE(concatShape({PartialShape{1, 2, 3, {1, 5}}, PartialShape{1, 5, 3, {6, 8}}}, 1).ok());
}

// Softmax examples ("leaves shape of incoming data unchanged", axis validation against the rank,
// "Validation passed as rank is unknown") are op-level and are tested with the ops. Their shapes
// print as the source writes them:
TEST(SoftmaxExamples, ShapesPrintAsQuoted) {
  EXPECT_EQ(PartialShape({1, 1000}).toString(), "[1,1000]");
  EXPECT_EQ(PartialShape({{1, 8}, -1, -1, -1}).toString(), "[?{1..8},?,?,?]");
  EXPECT_EQ(PartialShape::dynamic(4).toString(), "[?,?,?,?]");
}

TEST(IntervalExamples, AnOpenLowerEndHoldsTheInt64Minimum) {
  // Found by fuzz_expr: -8*B^6*C^24 at B = C = 4 is exactly -2^63, one below -kInf; its bounds
  // [-inf, -134217728] must hold it (tests/fuzz/regress/expr/).
  const Interval below{-kInf, -134217728};
  EXPECT_TRUE(below.contains(std::numeric_limits<int64_t>::min()));
  EXPECT_TRUE(below.contains(Interval{std::numeric_limits<int64_t>::min(), -134217728}));
  EXPECT_FALSE((Interval{-5, 5}).contains(std::numeric_limits<int64_t>::min()));
  EXPECT_FALSE(below.contains(int64_t(0)));
}

} // namespace
} // namespace sf
