// Tests of the indexing and data-dependent rules (src/ops/index.cpp): gathers and scatters,
// OneHot, TopK, NonZero, Unique, Compress, NonMaxSuppression (fresh symbols with the tightest
// bounds), Trilu, ReverseSequence, EyeLike, DepthToSpace/SpaceToDepth, Det; plus ONNX's backend
// node tests for these ops.
#include "op_test_util.h"

namespace sf::test {
namespace {

TEST(IndexGatherElements, Shapes) {
  OpTester t("GatherElements", 13);
  t.input("f32[3,4]").input("i64[3,2]").attr("axis", 1);
  EXPECT_EQ(t.run(), "f32[3,2]");
  OpTester sym("GatherElements", 13);
  sym.input("f16[N,C]").input("i32[N,?{1..8}]");
  EXPECT_EQ(sym.run(), "f16[N,?{1..8}]");
  OpTester rank("GatherElements", 13);
  rank.input("f32[...]").input("i64[N,K]");
  EXPECT_EQ(rank.run(), "f32[N,K]");
  OpTester idxRank("GatherElements", 13);
  idxRank.input("f32[3,4]").input("i64[...]");
  EXPECT_EQ(idxRank.run(), "f32[?,?]");
}

TEST(IndexGatherElements, ValuesAndErrors) {
  OpTester v("GatherElements", 13);
  v.input("i64[3] = [N,C,H]").constInts({2}, {2, 0});
  EXPECT_EQ(v.run(), "i64[2] = [H,N]");
  OpTester rank("GatherElements", 13);
  rank.input("f32[3,4]").input("i64[3]");
  EXPECT_EQ(rank.run(), "error: input 1 (indices) has rank 1, expected 2 (i64[3])");
  OpTester axis("GatherElements", 13);
  axis.input("f32[3,4]").input("i64[3,4]").attr("axis", -3);
  EXPECT_EQ(axis.run(), "error: axis -3 is out of range for rank 2");
  OpTester scalar("GatherElements", 13);
  scalar.input("f32[]").input("i64[]");
  EXPECT_EQ(scalar.run(), "error: cannot gather from a scalar (f32[])");
  OpTester range("GatherElements", 13);
  range.input("i64[2] = [N,C]").constInts({1}, {2});
  EXPECT_EQ(range.run(), "error: index 2 is out of range for i64[2] = [N,C]");
}

TEST(IndexGatherND, Shapes) {
  OpTester whole("GatherND", 13);
  whole.input("f32[2,2]").input("i64[2,2]");
  EXPECT_EQ(whole.run(), "f32[2]");
  OpTester rows("GatherND", 13);
  rows.input("f32[N,H,W]").input("i64[K,1]");
  EXPECT_EQ(rows.run(), "f32[K,H,W]");
  OpTester batch("GatherND", 13);
  batch.input("f32[N,H,W,C]").input("i64[N,K,2]").attr("batch_dims", 1);
  EXPECT_EQ(batch.run(), "f32[N,K,C]");
  OpTester unknownK("GatherND", 13);
  unknownK.input("f32[N,H,W]").input("i64[K,?]");
  EXPECT_EQ(unknownK.run(), "f32[...]");
}

TEST(IndexGatherND, BatchDimsAreMerged) {
  OpTester t("GatherND", 13);
  t.input("f32[4,5,6]").input("i64[B,1]").attr("batch_dims", 1);
  EXPECT_EQ(t.run(), "f32[4,6]");
  OpTester clash("GatherND", 13);
  clash.input("f32[4,5,6]").input("i64[3,1]").attr("batch_dims", 1);
  EXPECT_EQ(clash.run(), "error: batch dimension 0 differs: 4 vs 3 (f32[4,5,6], i64[3,1])");
}

TEST(IndexGatherND, Errors) {
  OpTester k("GatherND", 13);
  k.input("f32[4,5]").input("i64[2,3]");
  EXPECT_EQ(k.run(),
            "error: the last dimension of indices (3) must be in 1..2 (f32[4,5], i64[2,3])");
  OpTester b("GatherND", 13);
  b.input("f32[4,5]").input("i64[4]").attr("batch_dims", 1);
  EXPECT_EQ(b.run(), "error: batch_dims 1 must be less than both ranks (f32[4,5], i64[4])");
  OpTester type("GatherND", 13);
  type.input("f32[4,5]").input("f32[2,1]");
  EXPECT_EQ(type.run(), "error: indices must be integers, got f32[2,1]");
}

TEST(IndexScatterND, Shapes) {
  OpTester t("ScatterND", 16);
  t.input("f32[4,4,4]").input("i64[2,1]").input("f32[2,4,4]");
  EXPECT_EQ(t.run(), "f32[4,4,4]");
  // The updates' leading dims equal the indices'; learned as equalities.
  OpTester sym("ScatterND", 16);
  sym.input("f32[N,D]").input("i64[K,1]").input("f32[M,E]");
  EXPECT_EQ(sym.run(), "f32[N,D]");
  OpTester rank("ScatterND", 16);
  rank.input("f32[...]").input("i64[2,1]").input("f32[2]");
  EXPECT_EQ(rank.run(), "f32[...]");
}

TEST(IndexScatterND, UpdatesShapeIsChecked) {
  OpTester t("ScatterND", 16);
  t.input("f32[4,4,4]").input("i64[2,1]").input("f32[2,4,3]");
  EXPECT_EQ(t.run(), "error: updates f32[2,4,3] do not match the expected shape [2,4,4] (shapes "
                     "[2,4,3] and [2,4,4] differ at axis 2)");
  OpTester k("ScatterND", 16);
  k.input("f32[4]").input("i64[2,2]").input("f32[2]");
  EXPECT_EQ(k.run(), "error: the last dimension of indices (2) exceeds the data rank 1 (f32[4], "
                     "i64[2,2])");
  OpTester type("ScatterND", 16);
  type.input("f32[4]").input("i64[2,1]").input("f16[2]");
  EXPECT_EQ(type.run(), "error: updates type differs from data: f16[2] vs f32[4]");
}

TEST(IndexScatterND, Values) {
  OpTester t("ScatterND", 16);
  t.input("i64[3] = [N,C,H]").constInts({1, 1}, {1}).input("i64[1] = [7]");
  EXPECT_EQ(t.run(), "i64[3] = [N,7,H]");
  OpTester reduce("ScatterND", 16);
  reduce.input("i64[3] = [N,C,H]")
      .constInts({1, 1}, {1})
      .input("i64[1] = [7]")
      .attr("reduction", "add");
  EXPECT_EQ(reduce.run(), "i64[3]");
}

TEST(IndexScatterElements, Shapes) {
  for (const char *op : {"ScatterElements", "Scatter"}) {
    OpTester t(op, op == std::string("Scatter") ? 9 : 16);
    t.input("f32[N,5]").input("i64[K,2]").input("f32[K,2]").attr("axis", 1);
    EXPECT_EQ(t.run(), "f32[N,5]") << op;
  }
  OpTester rank("ScatterElements", 16);
  rank.input("f32[...]").input("i64[K,2]").input("f32[...]");
  EXPECT_EQ(rank.run(), "f32[?,?]");
  OpTester v("ScatterElements", 16);
  v.input("i64[4] = [N,C,H,W]").constInts({2}, {-1, 0}).input("i64[2] = [-1,1]");
  EXPECT_EQ(v.run(), "i64[4] = [1,C,H,-1]");
}

TEST(IndexScatterElements, Errors) {
  OpTester mismatch("ScatterElements", 16);
  mismatch.input("f32[3,5]").input("i64[1,2]").input("f32[1,3]");
  EXPECT_EQ(mismatch.run(),
            "error: indices and updates must have the same shape (i64[1,2] vs f32[1,3])");
  OpTester rank("ScatterElements", 16);
  rank.input("f32[3,5]").input("i64[2]").input("f32[2]");
  EXPECT_EQ(rank.run(), "error: input 1 (indices) has rank 1, expected 2 (i64[2])");
  OpTester axis("Scatter", 9);
  axis.input("f32[3,5]").input("i64[1,2]").input("f32[1,2]").attr("axis", 2);
  EXPECT_EQ(axis.run(), "error: axis 2 is out of range for rank 2");
}

TEST(IndexOneHot, Shapes) {
  OpTester t("OneHot", 11);
  t.input("i64[N,T]").constFloats({}, {10}).constFloats({2}, {0, 1});
  EXPECT_EQ(t.run(), "f32[N,T,10]");
  OpTester axis("OneHot", 11);
  axis.input("i64[N,T]")
      .constInts({1}, {5})
      .constInts({2}, {0, 1}, ElementType::I32)
      .attr("axis", 0);
  EXPECT_EQ(axis.run(), "i32[5,N,T]");
  // Depth from a shape computation stays symbolic.
  OpTester sym("OneHot", 11);
  sym.input("i64[N]").input("i64[] = [V]").input("f16[2]").attr("axis", -2);
  EXPECT_EQ(sym.run(), "f16[V,N]");
  OpTester unknown("OneHot", 11);
  unknown.input("i64[N]").input("i64[]").input("f32[2]");
  EXPECT_EQ(unknown.run(), "f32[N,?]");
  OpTester rank("OneHot", 11);
  rank.input("i64[...]").constInts({}, {3}).input("f32[2]");
  EXPECT_EQ(rank.run(), "f32[...]");
}

TEST(IndexOneHot, Errors) {
  OpTester depth("OneHot", 11);
  depth.input("i64[N]").constInts({}, {0}).input("f32[2]");
  EXPECT_EQ(depth.run(), "error: 'depth' must be positive, got 0");
  OpTester two("OneHot", 11);
  two.input("i64[N]").constInts({2}, {3, 4}).input("f32[2]");
  EXPECT_EQ(two.run(), "error: 'depth' must hold one element, got i64[2] = [3,4]");
  OpTester matrix("OneHot", 11);
  matrix.input("i64[N]").input("i64[1,1]").input("f32[2]");
  EXPECT_EQ(matrix.run(), "error: 'depth' must have rank 0 to 1, got i64[1,1]");
  OpTester values("OneHot", 11);
  values.input("i64[N]").constInts({}, {3}).input("f32[3]");
  EXPECT_EQ(values.run(), "error: 'values' must have shape [2], got f32[3]");
  OpTester axis("OneHot", 11);
  axis.input("i64[N]").constInts({}, {3}).input("f32[2]").attr("axis", 2);
  EXPECT_EQ(axis.run(), "error: axis 2 is out of range for output rank 2");
}

TEST(IndexTopK, StaticK) {
  OpTester t("TopK", 11);
  t.input("f32[N,10]").constInts({1}, {3}).outputs(2);
  EXPECT_EQ(t.run(), "f32[N,3]; i64[N,3]");
  OpTester axis("TopK", 11);
  axis.input("f32[N,?{4..9},2]").constInts({1}, {4}).attr("axis", 1).outputs(2);
  EXPECT_EQ(axis.run(), "f32[N,4,2]; i64[N,4,2]");
  OpTester v1("TopK", 1);
  v1.input("f32[3,4]").attr("k", 2).outputs(2);
  EXPECT_EQ(v1.run(), "f32[3,2]; i64[3,2]");
}

TEST(IndexTopK, SymbolicK) {
  OpTester t("TopK", 11);
  t.input("f32[N,S]").input("i64[1] = [K]").outputs(2);
  EXPECT_EQ(t.run(), "f32[N,K]; i64[N,K]");
  OpTester minK("TopK", 11);
  minK.input("f32[B,S]").input("i64[1] = [min(S, 100)]").outputs(2);
  EXPECT_EQ(minK.run(), "f32[B,min(S, 100)]; i64[B,min(S, 100)]");
}

TEST(IndexTopK, UnknownKIsAFreshBoundedSymbol) {
  OpTester t("TopK", 11);
  t.input("f32[N,10]").input("i64[1]").outputs(2);
  EXPECT_EQ(t.run(), "f32[N,topk_k_0]; i64[N,topk_k_0]");
  EXPECT_EQ(t.range("topk_k_0"), "0..10");
  OpTester interval("TopK", 11);
  interval.input("f32[N,?{1..6}]").input("i64[1] = [?{2..9}]").outputs(2);
  EXPECT_EQ(interval.run(), "f32[N,topk_k_0]; i64[N,topk_k_0]");
  EXPECT_EQ(interval.range("topk_k_0"), "2..6");
  OpTester open("TopK", 11);
  open.input("f32[S]").input("i64[1]").outputs(2);
  EXPECT_EQ(open.run(), "f32[topk_k_0]; i64[topk_k_0]");
  EXPECT_EQ(open.range("topk_k_0"), "0..");
}

TEST(IndexTopK, UnknownRankAndErrors) {
  OpTester rank("TopK", 11);
  rank.input("f32[...]").constInts({1}, {3}).outputs(2);
  EXPECT_EQ(rank.run(), "f32[...]; i64[...]");
  OpTester big("TopK", 11);
  big.input("f32[3,4]").constInts({1}, {5}).outputs(2);
  EXPECT_EQ(big.run(), "error: k = 5 is larger than axis 1 of f32[3,4]");
  OpTester neg("TopK", 11);
  neg.input("f32[3,4]").constInts({1}, {-1}).outputs(2);
  EXPECT_EQ(neg.run(), "error: k must be non-negative, got -1");
  OpTester two("TopK", 11);
  two.input("f32[3,4]").constInts({2}, {1, 2}).outputs(2);
  EXPECT_EQ(two.run(), "error: 'K' must hold one element, got i64[2] = [1,2]");
  // "A 1-D tensor": onnxruntime refuses a scalar K ("k tensor should be a 1D tensor of size 1").
  OpTester scalarK("TopK", 11);
  scalarK.input("f32[3,4]").input("i64[]").outputs(2);
  EXPECT_EQ(scalarK.run(), "error: 'K' must be a tensor of rank 1 of one element, got i64[]");
  OpTester axis("TopK", 11);
  axis.input("f32[3,4]").constInts({1}, {1}).attr("axis", 2).outputs(2);
  EXPECT_EQ(axis.run(), "error: axis 2 is out of range for rank 2");
  OpTester v1("TopK", 1);
  v1.input("f32[3,4]").outputs(2);
  EXPECT_EQ(v1.run(), "error: attribute 'k' is required");
  OpTester fit("TopK", 11);
  fit.input("f32[3,4]").input("i64[1] = [?{5..9}]").outputs(2);
  EXPECT_EQ(fit.run(), "error: k = ?{5..9} cannot fit axis 1 of f32[3,4]");
}

TEST(IndexNonZero, FreshCountBoundedByElementCount) {
  OpTester open("NonZero", 13);
  open.input("f32[N,3]");
  EXPECT_EQ(open.run(), "i64[2,nonzero_0]");
  EXPECT_EQ(open.range("nonzero_0"), "0..");
  OpTester bounded("NonZero", 13);
  bounded.input("f32[?{1..4},3]");
  EXPECT_EQ(bounded.run(), "i64[2,nonzero_0]");
  EXPECT_EQ(bounded.range("nonzero_0"), "0..12");
  OpTester sym("NonZero", 13);
  sym.bound("N", 1, 5).input("bool[N,N]");
  EXPECT_EQ(sym.run(), "i64[2,nonzero_0]");
  EXPECT_EQ(sym.range("nonzero_0"), "0..25");
  OpTester empty("NonZero", 13);
  empty.input("f32[N,0]");
  EXPECT_EQ(empty.run(), "i64[2,0]");
  OpTester rank("NonZero", 13);
  rank.input("f32[...]");
  EXPECT_EQ(rank.run(), "i64[?,nonzero_0]");
  OpTester scalar("NonZero", 13);
  scalar.input("f32[]");
  EXPECT_EQ(scalar.run(), "i64[1,nonzero_0]");
  EXPECT_EQ(scalar.range("nonzero_0"), "0..1");
}

TEST(IndexNonZero, CountedFromKnownElements) {
  OpTester c("NonZero", 13);
  c.constFloats({2, 3}, {0, 1, 2, 0, 0, 3});
  EXPECT_EQ(c.run(), "i64[2,3]");
  OpTester v("NonZero", 13);
  v.bound("N", 1).input("i64[3] = [N,0,2]");
  EXPECT_EQ(v.run(), "i64[1,2]");
  OpTester maybe("NonZero", 13);
  maybe.input("i64[3] = [N,0,2]");
  EXPECT_EQ(maybe.run(), "i64[1,nonzero_0]");
  EXPECT_EQ(maybe.range("nonzero_0"), "1..2");
}

TEST(IndexUnique, Flattened) {
  OpTester t("Unique", 11);
  t.input("f32[N,3]").outputs(4);
  EXPECT_EQ(t.run(), "f32[unique_0]; i64[unique_0]; i64[3*N]; i64[unique_0]");
  EXPECT_EQ(t.range("unique_0"), "0..");
  OpTester bounded("Unique", 11);
  bounded.input("i32[?{1..4},3]").outputs(4);
  EXPECT_EQ(bounded.run(), "i32[unique_0]; i64[unique_0]; i64[?{3..12}]; i64[unique_0]");
  EXPECT_EQ(bounded.range("unique_0"), "1..12");
  OpTester c("Unique", 11);
  c.constFloats({2, 3}, {1, 2, 1, 3, 2, 1}).outputs(4);
  EXPECT_EQ(c.run(), "f32[3]; i64[3]; i64[6]; i64[3]");
  OpTester rank("Unique", 11);
  rank.input("f32[...]").outputs(4);
  EXPECT_EQ(rank.run(), "f32[unique_0]; i64[unique_0]; i64[?]; i64[unique_0]");
}

TEST(IndexUnique, AlongAxis) {
  OpTester t("Unique", 11);
  t.input("f32[3,N]").attr("axis", 0).outputs(4);
  EXPECT_EQ(t.run(), "f32[unique_0,N]; i64[unique_0]; i64[3]; i64[unique_0]");
  EXPECT_EQ(t.range("unique_0"), "1..3");
  OpTester neg("Unique", 11);
  neg.input("f32[3,N]").attr("axis", -1).outputs(4);
  EXPECT_EQ(neg.run(), "f32[3,unique_0]; i64[unique_0]; i64[N]; i64[unique_0]");
  EXPECT_EQ(neg.range("unique_0"), "0..");
  OpTester rank("Unique", 11);
  rank.input("f32[...]").attr("axis", 0).outputs(4);
  EXPECT_EQ(rank.run(), "f32[...]; i64[unique_0]; i64[?]; i64[unique_0]");
  OpTester axis("Unique", 11);
  axis.input("f32[3,N]").attr("axis", 2).outputs(4);
  EXPECT_EQ(axis.run(), "error: axis 2 is out of range for rank 2");
}

TEST(IndexCompress, Shapes) {
  OpTester flat("Compress", 11);
  flat.input("f32[3,2]").input("bool[5]");
  EXPECT_EQ(flat.run(), "f32[compress_0]");
  EXPECT_EQ(flat.range("compress_0"), "0..5");
  OpTester axis("Compress", 11);
  axis.input("f32[N,4]").input("bool[?]").attr("axis", 1);
  EXPECT_EQ(axis.run(), "f32[N,compress_0]");
  EXPECT_EQ(axis.range("compress_0"), "0..4");
  OpTester counted("Compress", 11);
  counted.input("f32[N,4]").constInts({4}, {1, 0, 1, 1}, ElementType::Bool).attr("axis", 1);
  EXPECT_EQ(counted.run(), "f32[N,3]");
  // A condition longer than a symbolic axis: trues past the axis's lower bound may be dropped.
  OpTester longer("Compress", 11);
  longer.input("f32[?{2..4}]").constInts({4}, {1, 0, 1, 1}, ElementType::Bool).attr("axis", 0);
  EXPECT_EQ(longer.run(), "f32[compress_0]");
  EXPECT_EQ(longer.range("compress_0"), "1..3");
  OpTester rank("Compress", 11);
  rank.input("f32[...]").input("bool[3]").attr("axis", 0);
  EXPECT_EQ(rank.run(), "f32[...]");
}

TEST(IndexCompress, Errors) {
  OpTester type("Compress", 11);
  type.input("f32[3]").input("i64[3]");
  EXPECT_EQ(type.run(), "error: condition must be bool, got i64[3]");
  OpTester rank("Compress", 11);
  rank.input("f32[3]").input("bool[3,1]");
  EXPECT_EQ(rank.run(), "error: input 1 (condition) has rank 2, expected 1 (bool[3,1])");
  OpTester axis("Compress", 11);
  axis.input("f32[3]").input("bool[3]").attr("axis", 1);
  EXPECT_EQ(axis.run(), "error: axis 1 is out of range for rank 1");
}

TEST(IndexNonMaxSuppression, Bounds) {
  OpTester t("NonMaxSuppression", 11);
  t.input("f32[1,100,4]").input("f32[1,80,100]").constInts({1}, {10});
  EXPECT_EQ(t.run(), "i64[nms_0,3]");
  EXPECT_EQ(t.range("nms_0"), "0..800");
  OpTester fewBoxes("NonMaxSuppression", 11);
  fewBoxes.input("f32[2,5,4]").input("f32[2,3,5]").constInts({1}, {10});
  EXPECT_EQ(fewBoxes.run(), "i64[nms_0,3]");
  EXPECT_EQ(fewBoxes.range("nms_0"), "0..30");
  OpTester unknownMax("NonMaxSuppression", 11);
  unknownMax.input("f32[2,5,4]").input("f32[2,3,5]").input("i64[1]");
  EXPECT_EQ(unknownMax.run(), "i64[nms_0,3]");
  EXPECT_EQ(unknownMax.range("nms_0"), "0..30");
  OpTester open("NonMaxSuppression", 11);
  open.input("f32[B,N,4]").input("f32[B,80,N]").constInts({1}, {100});
  EXPECT_EQ(open.run(), "i64[nms_0,3]");
  EXPECT_EQ(open.range("nms_0"), "0..");
  OpTester bounded("NonMaxSuppression", 11);
  bounded.bound("B", 1, 4).input("f32[B,N,4]").input("f32[B,80,N]").constInts({1}, {100});
  EXPECT_EQ(bounded.run(), "i64[nms_0,3]");
  EXPECT_EQ(bounded.range("nms_0"), "0..32000");
}

TEST(IndexNonMaxSuppression, AbsentMaxSelectsNothing) {
  OpTester t("NonMaxSuppression", 11);
  t.input("f32[1,6,4]").input("f32[1,1,6]");
  EXPECT_EQ(t.run(), "i64[0,3]");
  OpTester zero("NonMaxSuppression", 11);
  zero.input("f32[1,6,4]").input("f32[1,1,6]").constInts({1}, {0});
  EXPECT_EQ(zero.run(), "i64[0,3]");
}

TEST(IndexNonMaxSuppression, Errors) {
  OpTester coords("NonMaxSuppression", 11);
  coords.input("f32[1,6,5]").input("f32[1,1,6]").constInts({1}, {3});
  EXPECT_EQ(coords.run(),
            "error: boxes must have 4 coordinates in the last dimension, got f32[1,6,5]");
  OpTester boxes("NonMaxSuppression", 11);
  boxes.input("f32[1,6,4]").input("f32[1,1,7]").constInts({1}, {3});
  EXPECT_EQ(boxes.run(),
            "error: boxes and scores disagree on batches or boxes (f32[1,6,4] vs f32[1,1,7])");
  OpTester rank("NonMaxSuppression", 11);
  rank.input("f32[6,4]").input("f32[1,1,6]");
  EXPECT_EQ(rank.run(), "error: input 0 (boxes) has rank 2, expected 3 (f32[6,4])");
}

TEST(IndexTrilu, Shapes) {
  OpTester t("Trilu", 14);
  t.input("f32[B,N,?{1..4}]").constInts({}, {1}).attr("upper", 0);
  EXPECT_EQ(t.run(), "f32[B,N,?{1..4}]");
  OpTester noK("Trilu", 14);
  noK.input("i64[...]");
  EXPECT_EQ(noK.run(), "i64[...]");
  OpTester rank("Trilu", 14);
  rank.input("f32[4]");
  EXPECT_EQ(rank.run(), "error: input must have rank >= 2, got f32[4]");
  OpTester k("Trilu", 14);
  k.input("f32[4,4]").constInts({2}, {1, 2});
  EXPECT_EQ(k.run(), "error: 'k' must hold one element, got i64[2] = [1,2]");
  // onnxruntime runs a one-element vector (a warning: the spec says 0-D), not a [1,1].
  OpTester kVector("Trilu", 14);
  kVector.input("f32[4,4]").constInts({1}, {1});
  EXPECT_EQ(kVector.run(), "f32[4,4]");
  OpTester kMatrix("Trilu", 14);
  kMatrix.input("f32[4,4]").input("i64[1,1]");
  EXPECT_EQ(kMatrix.run(), "error: 'k' must have rank 0 to 1, got i64[1,1]");
}

TEST(IndexReverseSequence, Shapes) {
  OpTester t("ReverseSequence", 10);
  t.input("f32[T,B,C]").input("i64[4]");
  EXPECT_EQ(t.run(), "f32[T,4,C]");
  OpTester batchFirst("ReverseSequence", 10);
  batchFirst.input("f32[B,T]").input("i64[B]").attr("batch_axis", 0).attr("time_axis", 1);
  EXPECT_EQ(batchFirst.run(), "f32[B,T]");
  OpTester clash("ReverseSequence", 10);
  clash.input("f32[4,3]").input("i64[4]");
  EXPECT_EQ(clash.run(), "error: sequence_lens has 4 elements but the batch axis has 3 (f32[4,3], "
                         "i64[4])");
  OpTester axes("ReverseSequence", 10);
  axes.input("f32[4,3]").input("i64[3]").attr("batch_axis", 0);
  EXPECT_EQ(axes.run(), "error: batch_axis (0) and time_axis (0) must be 0 and 1 in some order");
  OpTester rank("ReverseSequence", 10);
  rank.input("f32[4]").input("i64[4]");
  EXPECT_EQ(rank.run(), "error: input must have rank >= 2, got f32[4]");
}

TEST(IndexEyeLike, Shapes) {
  OpTester t("EyeLike", 9);
  t.input("f32[N,M]").attr("k", 1);
  EXPECT_EQ(t.run(), "f32[N,M]");
  OpTester dtype("EyeLike", 9);
  dtype.input("f32[3,4]").attr("dtype", 7);
  EXPECT_EQ(dtype.run(), "i64[3,4]");
  OpTester rank("EyeLike", 9);
  rank.input("f32[...]");
  EXPECT_EQ(rank.run(), "f32[?,?]");
  OpTester bad("EyeLike", 9);
  bad.input("f32[2,3,4]");
  EXPECT_EQ(bad.run(), "error: input 0 (input) has rank 3, expected 2 (f32[2,3,4])");
  OpTester type("EyeLike", 9);
  type.input("f32[2,3]").attr("dtype", 99);
  EXPECT_EQ(type.run(), "error: attribute 'dtype' (99) is not a known element type");
}

TEST(IndexDepthToSpace, Shapes) {
  OpTester t("DepthToSpace", 13);
  t.input("f32[1,8,2,3]").attr("blocksize", 2);
  EXPECT_EQ(t.run(), "f32[1,2,4,6]");
  OpTester sym("DepthToSpace", 13);
  sym.input("f32[N,C,H,W]").attr("blocksize", 2).attr("mode", "CRD");
  EXPECT_EQ(sym.run(), "f32[N,C//4,2*H,2*W]");
  OpTester exact("DepthToSpace", 13);
  exact.input("f32[N,?{8..16},H,?{1..3}]").attr("blocksize", 2);
  EXPECT_EQ(exact.run(), "f32[N,?{2..4},2*H,?{2..6}]");
  OpTester divides("DepthToSpace", 13);
  divides.input("f32[N,4*C,H,W]").attr("blocksize", 2);
  EXPECT_EQ(divides.run(), "f32[N,C,2*H,2*W]");
  OpTester rank("DepthToSpace", 13);
  rank.input("f32[...]").attr("blocksize", 2);
  EXPECT_EQ(rank.run(), "f32[?,?,?,?]");
}

TEST(IndexDepthToSpace, Errors) {
  OpTester div("DepthToSpace", 13);
  div.input("f32[1,6,2,3]").attr("blocksize", 2);
  EXPECT_EQ(div.run(), "error: channels (6) is not divisible by 4 (f32[1,6,2,3], blocksize 2)");
  OpTester block("DepthToSpace", 13);
  block.input("f32[1,8,2,3]").attr("blocksize", 0);
  EXPECT_EQ(block.run(), "error: blocksize must be positive, got 0");
  OpTester missing("DepthToSpace", 13);
  missing.input("f32[1,8,2,3]");
  EXPECT_EQ(missing.run(), "error: attribute 'blocksize' is missing");
  OpTester mode("DepthToSpace", 13);
  mode.input("f32[1,8,2,3]").attr("blocksize", 2).attr("mode", "XYZ");
  EXPECT_EQ(mode.run(), "error: unknown mode 'XYZ'");
  OpTester rank("SpaceToDepth", 13);
  rank.input("f32[8,2,3]").attr("blocksize", 2);
  EXPECT_EQ(rank.run(), "error: input 0 (input) has rank 3, expected 4 (f32[8,2,3])");
}

TEST(IndexSpaceToDepth, Shapes) {
  OpTester t("SpaceToDepth", 13);
  t.input("f32[1,2,4,6]").attr("blocksize", 2);
  EXPECT_EQ(t.run(), "f32[1,8,2,3]");
  OpTester sym("SpaceToDepth", 13);
  sym.input("f32[N,C,H,W]").attr("blocksize", 4);
  EXPECT_EQ(sym.run(), "f32[N,16*C,H//4,W//4]");
  OpTester divides("SpaceToDepth", 13);
  divides.input("f32[N,C,2*H,6*W]").attr("blocksize", 2);
  EXPECT_EQ(divides.run(), "f32[N,4*C,H,3*W]");
  OpTester div("SpaceToDepth", 13);
  div.input("f32[1,2,5,6]").attr("blocksize", 2);
  EXPECT_EQ(div.run(), "error: height (5) is not divisible by 2 (f32[1,2,5,6], blocksize 2)");
}

TEST(IndexDet, Shapes) {
  OpTester batch("Det", 11);
  batch.input("f32[N,3,3]");
  EXPECT_EQ(batch.run(), "f32[N]");
  OpTester single("Det", 11);
  single.input("f64[M,M]");
  EXPECT_EQ(single.run(), "f64[]");
  OpTester learn("Det", 11);
  learn.input("f32[B,K,3]");
  EXPECT_EQ(learn.run(), "f32[B]");
  OpTester rank("Det", 11);
  rank.input("f32[...]");
  EXPECT_EQ(rank.run(), "f32[...]");
  OpTester square("Det", 11);
  square.input("f32[2,3]");
  EXPECT_EQ(square.run(), "error: matrices must be square, got f32[2,3]");
  OpTester vector("Det", 11);
  vector.input("f32[3]");
  EXPECT_EQ(vector.run(), "error: input must have rank >= 2, got f32[3]");
}

// ---- ONNX backend node tests (generated from /usr/share/libonnx-testdata/data/node) ----
class IndexOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(IndexOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

const std::vector<NodeCase> kIndexNodeCases = {
    {"compress_0",
     "Compress",
     11,
     {F({3, 2}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), I({3}, {0, 1, 1}, ElementType::Bool)},
     {{"axis", int64_t(0)}},
     1,
     "f32[2,2]"},
    {"compress_1",
     "Compress",
     11,
     {F({3, 2}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), I({2}, {0, 1}, ElementType::Bool)},
     {{"axis", int64_t(1)}},
     1,
     "f32[3,1]"},
    {"compress_default_axis",
     "Compress",
     11,
     {F({3, 2}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), I({5}, {0, 1, 0, 0, 1}, ElementType::Bool)},
     {},
     1,
     "f32[2]"},
    {"compress_negative_axis",
     "Compress",
     11,
     {F({3, 2}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), I({2}, {0, 1}, ElementType::Bool)},
     {{"axis", int64_t(-1)}},
     1,
     "f32[3,1]"},
    {"depthtospace_crd_mode",
     "DepthToSpace",
     11,
     {P("f32[2,8,3,3]")},
     {{"blocksize", int64_t(2)}, {"mode", "CRD"}},
     1,
     "f32[2,2,6,6]"},
    {"depthtospace_crd_mode_example",
     "DepthToSpace",
     13,
     {P("f32[1,8,2,3]")},
     {{"blocksize", int64_t(2)}, {"mode", "CRD"}},
     1,
     "f32[1,2,4,6]"},
    {"depthtospace_dcr_mode",
     "DepthToSpace",
     11,
     {P("f32[2,8,3,3]")},
     {{"blocksize", int64_t(2)}, {"mode", "DCR"}},
     1,
     "f32[2,2,6,6]"},
    {"depthtospace_example",
     "DepthToSpace",
     13,
     {P("f32[1,8,2,3]")},
     {{"blocksize", int64_t(2)}, {"mode", "DCR"}},
     1,
     "f32[1,2,4,6]"},
    {"det_2d", "Det", 11, {P("f32[2,2]")}, {}, 1, "f32[]"},
    {"det_nd", "Det", 11, {P("f32[3,2,2]")}, {}, 1, "f32[3]"},
    {"eyelike_populate_off_main_diagonal",
     "EyeLike",
     9,
     {P("i32[4,5]")},
     {{"dtype", int64_t(1)}, {"k", int64_t(1)}},
     1,
     "f32[4,5]"},
    {"eyelike_with_dtype", "EyeLike", 9, {P("i32[3,4]")}, {{"dtype", int64_t(11)}}, 1, "f64[3,4]"},
    {"eyelike_without_dtype", "EyeLike", 9, {P("i32[4,4]")}, {}, 1, "i32[4,4]"},
    {"gather_elements_0",
     "GatherElements",
     13,
     {P("f32[2,2]"), I({2, 2}, {0, 0, 1, 0})},
     {{"axis", int64_t(1)}},
     1,
     "f32[2,2]"},
    {"gather_elements_1",
     "GatherElements",
     13,
     {P("f32[3,3]"), I({2, 3}, {1, 2, 0, 2, 0, 0})},
     {{"axis", int64_t(0)}},
     1,
     "f32[2,3]"},
    {"gather_elements_negative_indices",
     "GatherElements",
     13,
     {P("f32[3,3]"), I({2, 3}, {-1, -2, 0, -2, 0, 0})},
     {{"axis", int64_t(0)}},
     1,
     "f32[2,3]"},
    {"gathernd_example_float32",
     "GatherND",
     13,
     {P("f32[2,2,2]"), I({2, 1, 2}, {0, 1, 1, 0})},
     {},
     1,
     "f32[2,1,2]"},
    {"gathernd_example_int32",
     "GatherND",
     13,
     {P("i32[2,2]"), I({2, 2}, {0, 0, 1, 1})},
     {},
     1,
     "i32[2]"},
    {"gathernd_example_int32_batch_dim1",
     "GatherND",
     13,
     {P("i32[2,2,2]"), I({2, 1}, {1, 0})},
     {{"batch_dims", int64_t(1)}},
     1,
     "i32[2,2]"},
    {"nonmaxsuppression_center_point_box_format",
     "NonMaxSuppression",
     11,
     {P("f32[1,6,4]"), P("f32[1,1,6]"), I({1}, {3}), F({1}, {0.5}), F({1}, {0.0})},
     {{"center_point_box", int64_t(1)}},
     1,
     "i64[nms_0,3]",
     3},
    {"nonmaxsuppression_flipped_coordinates",
     "NonMaxSuppression",
     11,
     {P("f32[1,6,4]"), P("f32[1,1,6]"), I({1}, {3}), F({1}, {0.5}), F({1}, {0.0})},
     {},
     1,
     "i64[nms_0,3]",
     3},
    {"nonmaxsuppression_identical_boxes",
     "NonMaxSuppression",
     11,
     {P("f32[1,10,4]"), P("f32[1,1,10]"), I({1}, {3}), F({1}, {0.5}), F({1}, {0.0})},
     {},
     1,
     "i64[nms_0,3]",
     1},
    {"nonmaxsuppression_limit_output_size",
     "NonMaxSuppression",
     11,
     {P("f32[1,6,4]"), P("f32[1,1,6]"), I({1}, {2}), F({1}, {0.5}), F({1}, {0.0})},
     {},
     1,
     "i64[nms_0,3]",
     2},
    {"nonmaxsuppression_single_box",
     "NonMaxSuppression",
     11,
     {P("f32[1,1,4]"), P("f32[1,1,1]"), I({1}, {3}), F({1}, {0.5}), F({1}, {0.0})},
     {},
     1,
     "i64[nms_0,3]",
     1},
    {"nonmaxsuppression_suppress_by_IOU",
     "NonMaxSuppression",
     11,
     {P("f32[1,6,4]"), P("f32[1,1,6]"), I({1}, {3}), F({1}, {0.5}), F({1}, {0.0})},
     {},
     1,
     "i64[nms_0,3]",
     3},
    {"nonmaxsuppression_suppress_by_IOU_and_scores",
     "NonMaxSuppression",
     11,
     {P("f32[1,6,4]"), P("f32[1,1,6]"), I({1}, {3}), F({1}, {0.5}), F({1}, {0.4000000059604645})},
     {},
     1,
     "i64[nms_0,3]",
     2},
    {"nonmaxsuppression_two_batches",
     "NonMaxSuppression",
     11,
     {P("f32[2,6,4]"), P("f32[2,1,6]"), I({1}, {2}), F({1}, {0.5}), F({1}, {0.0})},
     {},
     1,
     "i64[nms_0,3]",
     4},
    {"nonmaxsuppression_two_classes",
     "NonMaxSuppression",
     11,
     {P("f32[1,6,4]"), P("f32[1,2,6]"), I({1}, {2}), F({1}, {0.5}), F({1}, {0.0})},
     {},
     1,
     "i64[nms_0,3]",
     4},
    {"nonzero_example",
     "NonZero",
     13,
     {I({2, 2}, {1, 0, 1, 1}, ElementType::Bool)},
     {},
     1,
     "i64[2,3]"},
    {"onehot_negative_indices",
     "OneHot",
     11,
     {P("i64[3]"), F({}, {10.0}), F({2}, {1.0, 3.0})},
     {{"axis", int64_t(1)}},
     1,
     "f32[3,10]"},
    {"onehot_with_axis",
     "OneHot",
     11,
     {P("f32[2,2]"), F({}, {10.0}), F({2}, {1.0, 3.0})},
     {{"axis", int64_t(1)}},
     1,
     "f32[2,10,2]"},
    {"onehot_with_negative_axis",
     "OneHot",
     11,
     {P("f32[2,2]"), F({}, {10.0}), F({2}, {1.0, 3.0})},
     {{"axis", int64_t(-2)}},
     1,
     "f32[2,10,2]"},
    {"onehot_without_axis",
     "OneHot",
     11,
     {P("i64[3]"), F({}, {12.0}), I({2}, {2, 5}, ElementType::I32)},
     {},
     1,
     "i32[3,12]"},
    {"reversesequence_batch",
     "ReverseSequence",
     10,
     {P("f32[4,4]"), I({4}, {1, 2, 3, 4})},
     {{"batch_axis", int64_t(0)}, {"time_axis", int64_t(1)}},
     1,
     "f32[4,4]"},
    {"reversesequence_time",
     "ReverseSequence",
     10,
     {P("f32[4,4]"), I({4}, {4, 3, 2, 1})},
     {{"batch_axis", int64_t(1)}, {"time_axis", int64_t(0)}},
     1,
     "f32[4,4]"},
    {"scatter_elements_with_axis",
     "ScatterElements",
     16,
     {P("f32[1,5]"), I({1, 2}, {1, 3}), F({1, 2}, {1.100000023841858, 2.0999999046325684})},
     {{"axis", int64_t(1)}},
     1,
     "f32[1,5]"},
    {"scatter_elements_with_duplicate_indices",
     "ScatterElements",
     16,
     {P("f32[1,5]"), I({1, 2}, {1, 1}), F({1, 2}, {1.100000023841858, 2.0999999046325684})},
     {{"axis", int64_t(1)}, {"reduction", "add"}},
     1,
     "f32[1,5]"},
    {"scatter_elements_with_negative_indices",
     "ScatterElements",
     16,
     {P("f32[1,5]"), I({1, 2}, {1, -3}), F({1, 2}, {1.100000023841858, 2.0999999046325684})},
     {{"axis", int64_t(1)}},
     1,
     "f32[1,5]"},
    {"scatter_elements_without_axis",
     "ScatterElements",
     16,
     {P("f32[3,3]"), I({2, 3}, {1, 0, 2, 0, 2, 1}),
      F({2, 3},
        {1.0, 1.100000023841858, 1.2000000476837158, 2.0, 2.0999999046325684, 2.200000047683716})},
     {},
     1,
     "f32[3,3]"},
    {"scatter_with_axis",
     "Scatter",
     10,
     {P("f32[1,5]"), I({1, 2}, {1, 3}), F({1, 2}, {1.100000023841858, 2.0999999046325684})},
     {{"axis", int64_t(1)}},
     1,
     "f32[1,5]"},
    {"scatter_without_axis",
     "Scatter",
     10,
     {P("f32[3,3]"), I({2, 3}, {1, 0, 2, 0, 2, 1}),
      F({2, 3},
        {1.0, 1.100000023841858, 1.2000000476837158, 2.0, 2.0999999046325684, 2.200000047683716})},
     {},
     1,
     "f32[3,3]"},
    {"scatternd",
     "ScatterND",
     16,
     {P("f32[4,4,4]"), I({2, 1}, {0, 2}),
      F({2, 4, 4},
        {5.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 8.0,
         1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0})},
     {},
     1,
     "f32[4,4,4]"},
    {"scatternd_add",
     "ScatterND",
     16,
     {P("f32[4,4,4]"), I({2, 1}, {0, 0}),
      F({2, 4, 4},
        {5.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 8.0,
         1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0})},
     {{"reduction", "add"}},
     1,
     "f32[4,4,4]"},
    {"scatternd_multiply",
     "ScatterND",
     16,
     {P("f32[4,4,4]"), I({2, 1}, {0, 0}),
      F({2, 4, 4},
        {5.0, 5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 8.0,
         1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0})},
     {{"reduction", "mul"}},
     1,
     "f32[4,4,4]"},
    {"spacetodepth",
     "SpaceToDepth",
     13,
     {P("f32[2,2,6,6]")},
     {{"blocksize", int64_t(2)}},
     1,
     "f32[2,8,3,3]"},
    {"spacetodepth_example",
     "SpaceToDepth",
     13,
     {P("f32[1,1,4,6]")},
     {{"blocksize", int64_t(2)}},
     1,
     "f32[1,4,2,3]"},
    {"top_k",
     "TopK",
     11,
     {P("f32[3,4]"), I({1}, {3})},
     {{"axis", int64_t(1)}},
     2,
     "f32[3,3]; i64[3,3]"},
    {"top_k_negative_axis",
     "TopK",
     11,
     {P("f32[3,4]"), I({1}, {3})},
     {{"axis", int64_t(-1)}},
     2,
     "f32[3,3]; i64[3,3]"},
    {"top_k_smallest",
     "TopK",
     11,
     {P("f32[3,4]"), I({1}, {3})},
     {{"axis", int64_t(1)}, {"largest", int64_t(0)}, {"sorted", int64_t(1)}},
     2,
     "f32[3,3]; i64[3,3]"},
    {"tril", "Trilu", 14, {P("i64[4,5]")}, {{"upper", int64_t(0)}}, 1, "i64[4,5]"},
    {"tril_neg", "Trilu", 14, {P("i64[4,5]"), I({}, {-1})}, {{"upper", int64_t(0)}}, 1, "i64[4,5]"},
    {"tril_one_row_neg", "Trilu", 14, {P("i64[3,1,5]")}, {{"upper", int64_t(0)}}, 1, "i64[3,1,5]"},
    {"tril_out_neg",
     "Trilu",
     14,
     {P("i64[4,5]"), I({}, {-7})},
     {{"upper", int64_t(0)}},
     1,
     "i64[4,5]"},
    {"tril_out_pos",
     "Trilu",
     14,
     {P("i64[4,5]"), I({}, {6})},
     {{"upper", int64_t(0)}},
     1,
     "i64[4,5]"},
    {"tril_pos", "Trilu", 14, {P("i64[4,5]"), I({}, {2})}, {{"upper", int64_t(0)}}, 1, "i64[4,5]"},
    {"tril_square", "Trilu", 14, {P("i64[2,3,3]")}, {{"upper", int64_t(0)}}, 1, "i64[2,3,3]"},
    {"tril_square_neg",
     "Trilu",
     14,
     {P("i64[2,3,3]"), I({}, {-1})},
     {{"upper", int64_t(0)}},
     1,
     "i64[2,3,3]"},
    {"tril_zero",
     "Trilu",
     14,
     {P("i64[3,0,5]"), I({}, {6})},
     {{"upper", int64_t(0)}},
     1,
     "i64[3,0,5]"},
    {"triu", "Trilu", 14, {P("i64[4,5]")}, {}, 1, "i64[4,5]"},
    {"triu_neg", "Trilu", 14, {P("i64[4,5]"), I({}, {-1})}, {}, 1, "i64[4,5]"},
    {"triu_one_row", "Trilu", 14, {P("i64[3,1,5]"), I({}, {1})}, {}, 1, "i64[3,1,5]"},
    {"triu_out_neg_out", "Trilu", 14, {P("i64[4,5]"), I({}, {-7})}, {}, 1, "i64[4,5]"},
    {"triu_out_pos", "Trilu", 14, {P("i64[4,5]"), I({}, {6})}, {}, 1, "i64[4,5]"},
    {"triu_pos", "Trilu", 14, {P("i64[4,5]"), I({}, {2})}, {}, 1, "i64[4,5]"},
    {"triu_square", "Trilu", 14, {P("i64[2,3,3]")}, {}, 1, "i64[2,3,3]"},
    {"triu_square_neg", "Trilu", 14, {P("i64[2,3,3]"), I({}, {-1})}, {}, 1, "i64[2,3,3]"},
    {"triu_zero", "Trilu", 14, {P("i64[0,5]"), I({}, {6})}, {}, 1, "i64[0,5]"},
    {"unique_not_sorted_without_axis",
     "Unique",
     11,
     {F({6}, {2.0, 1.0, 1.0, 3.0, 4.0, 3.0})},
     {{"sorted", int64_t(0)}},
     4,
     "f32[4]; i64[4]; i64[6]; i64[4]"},
    {"unique_sorted_with_axis",
     "Unique",
     11,
     {F({3, 3}, {1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 3.0, 4.0})},
     {{"axis", int64_t(0)}, {"sorted", int64_t(1)}},
     4,
     "f32[2,3]; i64[2]; i64[3]; i64[2]"},
    {"unique_sorted_with_axis_3d",
     "Unique",
     11,
     {F({2, 4, 2},
        {1.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.0})},
     {{"axis", int64_t(1)}, {"sorted", int64_t(1)}},
     4,
     "f32[2,3,2]; i64[3]; i64[4]; i64[3]"},
    {"unique_sorted_with_negative_axis",
     "Unique",
     11,
     {F({3, 3}, {1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 3.0, 3.0})},
     {{"axis", int64_t(-1)}, {"sorted", int64_t(1)}},
     4,
     "f32[3,2]; i64[2]; i64[3]; i64[2]"},
    {"unique_sorted_without_axis",
     "Unique",
     11,
     {F({6}, {2.0, 1.0, 1.0, 3.0, 4.0, 3.0})},
     {},
     4,
     "f32[4]; i64[4]; i64[6]; i64[4]"},
};

INSTANTIATE_TEST_SUITE_P(IndexBackend, IndexOnnxNode, ::testing::ValuesIn(kIndexNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
