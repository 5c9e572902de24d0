// Tests of the sequence and optional rules (src/ops/sequence.cpp). A sequence is represented by
// the fact of its elements (the hull of what every element can be), an optional by the fact of
// the value it may hold; see the top of sequence.cpp. Plus ONNX's backend node tests for these
// ops, with sequence inputs given as their element facts.
#include "op_test_util.h"

namespace sf::test {
namespace {

TEST(SequenceRule, ConstructJoinsElements) {
  OpTester same("SequenceConstruct", 11);
  same.input("f32[N,3]").input("f32[N,3]");
  EXPECT_EQ(same.run(), "f32[N,3]");
  OpTester hull("SequenceConstruct", 11);
  hull.input("f32[2,3]").input("f32[4,3]").input("f32[?{3..6},3]");
  EXPECT_EQ(hull.run(), "f32[?{2..6},3]");
  OpTester ranks("SequenceConstruct", 11);
  ranks.input("f32[2,3]").input("f32[4]");
  EXPECT_EQ(ranks.run(), "f32[...]");
  // Two symbols may differ: their hull, not their merge (nothing is learned about N and M).
  OpTester syms("SequenceConstruct", 11);
  syms.bound("N", 1, 8).bound("M", 4, 16).input("f32[N]").input("f32[M]");
  EXPECT_EQ(syms.run(), "f32[?{1..16}]");
  EXPECT_EQ(syms.range("N"), "1..8");
  OpTester one("SequenceConstruct", 11);
  one.input("i64[2] = [N,3]");
  EXPECT_EQ(one.run(), "i64[2] = [N,3]");
  OpTester values("SequenceConstruct", 11);
  values.input("i64[2] = [N,3]").input("i64[2] = [N,5]");
  EXPECT_EQ(values.run(), "i64[2] = [N,?{3..5}]");
}

TEST(SequenceRule, ConstructErrors) {
  OpTester type("SequenceConstruct", 11);
  type.input("f32[2]").input("i64[2]");
  EXPECT_EQ(type.run(), "error: input 1 is i64[2] but the sequence holds f32[2]");
  OpTester none("SequenceConstruct", 11);
  EXPECT_EQ(none.run(), "error: needs at least one input");
}

TEST(SequenceRule, Empty) {
  OpTester t("SequenceEmpty", 11);
  EXPECT_EQ(t.run(), "f32[...]");
  OpTester i64("SequenceEmpty", 11);
  i64.attr("dtype", 7);
  EXPECT_EQ(i64.run(), "i64[...]");
  OpTester bad("SequenceEmpty", 11);
  bad.attr("dtype", 99);
  EXPECT_EQ(bad.run(), "error: attribute 'dtype' = 99 is not a known element type");
}

TEST(SequenceRule, InsertAtErase) {
  OpTester insert("SequenceInsert", 11);
  insert.input("f32[N,?{1..4}]").input("f32[N,6]");
  EXPECT_EQ(insert.run(), "f32[N,?{1..6}]");
  OpTester pos("SequenceInsert", 11);
  pos.input("f32[N,3]").input("f32[N,3]").constInts({}, {0}, ElementType::I32);
  EXPECT_EQ(pos.run(), "f32[N,3]");
  OpTester at("SequenceAt", 11);
  at.input("f32[N,?{2..6},3]").constInts({}, {-1});
  EXPECT_EQ(at.run(), "f32[N,?{2..6},3]");
  OpTester erase("SequenceErase", 11);
  erase.input("f32[N,3]").absent();
  EXPECT_EQ(erase.run(), "f32[N,3]");
  OpTester unknown("SequenceAt", 11);
  unknown.input("?[...]").input("i64[]");
  EXPECT_EQ(unknown.run(), "?[...]");
}

TEST(SequenceRule, InsertAtEraseErrors) {
  OpTester type("SequenceInsert", 11);
  type.input("f32[N,3]").input("f16[N,3]");
  EXPECT_EQ(type.run(), "error: the tensor (input 1) is f16[N,3] but the sequence holds f32[N,3]");
  OpTester pos("SequenceInsert", 11);
  pos.input("f32[N,3]").input("f32[N,3]").input("f32[]");
  EXPECT_EQ(pos.run(), "error: position (input 2) must be i32 or i64, got f32[]");
  // onnxruntime reads the first element of whatever position it is given: a warning only.
  OpTester rank("SequenceAt", 11);
  rank.input("f32[N,3]").input("i64[2]");
  EXPECT_EQ(rank.run(), "f32[N,3]");
  OpTester missing("SequenceAt", 11);
  missing.input("f32[N,3]").absent();
  EXPECT_EQ(missing.run(), "error: the position (input 1) is missing");
}

TEST(SequenceRule, LengthIsAFreshSize) {
  OpTester t("SequenceLength", 11);
  t.input("f32[N,3]");
  EXPECT_EQ(t.run(), "i64[] = [seq_len_0]");
  EXPECT_EQ(t.range("seq_len_0"), "0..");
}

TEST(SequenceRule, SplitToSequenceWithoutSplit) {
  OpTester keep("SplitToSequence", 11);
  keep.input("f32[N,6]").attr("axis", 1);
  EXPECT_EQ(keep.run(), "f32[N,1]");
  OpTester drop("SplitToSequence", 11);
  drop.input("f32[N,6,?{1..3}]").attr("axis", -2).attr("keepdims", 0);
  EXPECT_EQ(drop.run(), "f32[N,?{1..3}]");
  OpTester unknown("SplitToSequence", 11);
  unknown.input("f32[...]");
  EXPECT_EQ(unknown.run(), "f32[...]");
}

TEST(SequenceRule, SplitToSequenceScalarSplit) {
  OpTester even("SplitToSequence", 11);
  even.input("f32[6,N]").constInts({}, {2});
  EXPECT_EQ(even.run(), "f32[2,N]");
  OpTester last("SplitToSequence", 11);
  last.input("f32[7,N]").constInts({}, {3});
  EXPECT_EQ(last.run(), "f32[?{1..3},N]");
  OpTester small("SplitToSequence", 11);
  small.input("f32[2,N]").constInts({}, {5});
  EXPECT_EQ(small.run(), "f32[2,N]");
  OpTester sym("SplitToSequence", 11);
  sym.input("f32[T,N]").constInts({}, {4});
  EXPECT_EQ(sym.run(), "f32[?{0..4},N]");
  OpTester interval("SplitToSequence", 11);
  interval.input("f32[?{1..3},N]").constInts({}, {4});
  EXPECT_EQ(interval.run(), "f32[?{0..3},N]");
  OpTester zero("SplitToSequence", 11);
  zero.input("f32[6,N]").constInts({}, {0});
  EXPECT_EQ(zero.run(), "error: split (input 1) must be positive, got 0");
}

TEST(SequenceRule, SplitToSequenceLengths) {
  OpTester t("SplitToSequence", 11);
  t.input("f32[N,5]").constInts({2}, {2, 3}).attr("axis", 1);
  EXPECT_EQ(t.run(), "f32[N,?{2..3}]");
  OpTester same("SplitToSequence", 11);
  same.input("f32[N,6]").constInts({3}, {2, 2, 2}).attr("axis", 1);
  EXPECT_EQ(same.run(), "f32[N,2]");
  OpTester unknown("SplitToSequence", 11);
  unknown.input("f32[N,?{1..9}]").input("i64[3]").attr("axis", 1);
  EXPECT_EQ(unknown.run(), "f32[N,?{0..9}]");
  OpTester sum("SplitToSequence", 11);
  sum.input("f32[N,6]").constInts({2}, {2, 3}).attr("axis", 1);
  EXPECT_EQ(sum.run(), "error: split lengths add up to 5 but the axis has 6 (f32[N,6])");
  OpTester axis("SplitToSequence", 11);
  axis.input("f32[N,6]").attr("axis", 2);
  EXPECT_EQ(axis.run(), "error: axis 2 is out of range for rank 2");
  OpTester type("SplitToSequence", 11);
  type.input("f32[N,6]").input("f32[2]");
  EXPECT_EQ(type.run(), "error: split (input 1) must be i32 or i64, got f32[2]");
  OpTester scalar("SplitToSequence", 11);
  scalar.input("f32[]");
  EXPECT_EQ(scalar.run(), "error: cannot split a scalar (f32[])");
}

TEST(SequenceRule, ConcatFromSequence) {
  OpTester t("ConcatFromSequence", 11);
  t.input("f32[?{2..4},N]").attr("axis", 0);
  EXPECT_EQ(t.run(), "f32[?,N]");
  OpTester stack("ConcatFromSequence", 11);
  stack.input("f32[?{2..4},N]").attr("axis", -1).attr("new_axis", 1);
  EXPECT_EQ(stack.run(), "f32[?{2..4},N,?]");
  OpTester front("ConcatFromSequence", 11);
  front.input("f32[3]").attr("axis", 0).attr("new_axis", 1);
  EXPECT_EQ(front.run(), "f32[?,3]");
  OpTester unknown("ConcatFromSequence", 11);
  unknown.input("?[...]").attr("axis", 0);
  EXPECT_EQ(unknown.run(), "?[...]");
  OpTester range("ConcatFromSequence", 11);
  range.input("f32[2,3]").attr("axis", 2);
  EXPECT_EQ(range.run(), "error: axis 2 is out of range for rank 2");
  OpTester scalars("ConcatFromSequence", 11);
  scalars.input("f32[]").attr("axis", 0);
  EXPECT_EQ(scalars.run(), "error: cannot concatenate scalars without new_axis (f32[])");
  OpTester missing("ConcatFromSequence", 11);
  missing.input("f32[2]");
  EXPECT_EQ(missing.run(), "error: attribute 'axis' is missing");
}

TEST(SequenceRule, MapAppliesTheBodyToElements) {
  BodyBuilder b("seq_map_body");
  auto x = b.input("x");
  b.output(b.node("Shape", {x}));
  OpTester t("SequenceMap", 17);
  t.input("f32[H,?{5..30},3]").attr("body", b.graph());
  EXPECT_EQ(t.run(), "i64[3] = [H,?{5..30},3]");
}

TEST(SequenceRule, MapWithATensorInput) {
  // The second input is a tensor: the body sees it as is, alongside each element.
  BodyBuilder b("seq_map_body");
  auto x = b.input("in0"), y = b.input("in1");
  b.output(b.node("Add", {x, y})).output(b.node("Identity", {y}));
  OpTester t("SequenceMap", 17);
  t.input("f32[N]").input("f32[N]").attr("body", b.graph()).outputs(2);
  EXPECT_EQ(t.run(), "f32[N]; f32[N]");
  OpTester bad("SequenceMap", 17);
  bad.input("f32[3]").input("f32[4]").attr("body", b.graph()).outputs(2);
  EXPECT_EQ(bad.run(), "error: in subgraph 'seq_map_body': node 'seq_map_body_n0' (Add): "
                       "dimensions 3 and 4 cannot be broadcast at output axis 0 ([3] vs [4])");
  OpTester count("SequenceMap", 17);
  count.input("f32[3]").input("f32[3]").attr("body", b.graph());
  EXPECT_EQ(count.run(), "error: the node has 1 outputs, the body 2");
  OpTester none("SequenceMap", 17);
  none.input("f32[3]");
  EXPECT_EQ(none.run(), "error: attribute 'body' is missing");
}

TEST(SequenceRule, Optional) {
  OpTester some("Optional", 15);
  some.input("f32[N,3]");
  EXPECT_EQ(some.run(), "f32[N,3]");
  OpTester empty("Optional", 15);
  empty.absent();
  EXPECT_EQ(empty.run(), "?[...]");
  OpTester has("OptionalHasElement", 15);
  has.input("f32[N,3]");
  EXPECT_EQ(has.run(), "bool[]");
  OpTester absent("OptionalHasElement", 18);
  absent.absent();
  EXPECT_EQ(absent.run(), "bool[] = [0]");
  OpTester get("OptionalGetElement", 15);
  get.input("i64[2] = [N,4]");
  EXPECT_EQ(get.run(), "i64[2] = [N,4]");
  OpTester missing("OptionalGetElement", 18);
  missing.absent();
  EXPECT_EQ(missing.run(), "error: the optional (input 0) is missing");
}

class SequenceOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(SequenceOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

// ONNX's backend node tests (/usr/share/libonnx-testdata/data/node/test_*): a sequence input is
// given as the hull of its actual elements, and the expected output is the hull of the actual
// output elements (test_sequence_insert_at_back: elements [4], [3], [2] inserted with [3]).
const std::vector<NodeCase> kSequenceNodeCases = {
    {"sequence_insert_at_back", "SequenceInsert", 11, {P("i64[?{2..4}]"), P("i64[3]")}, {}, 1,
     "i64[?{2..4}]"},
    {"sequence_insert_at_front", "SequenceInsert", 11,
     {P("i64[?{2..4}]"), P("i64[3]"), I({1}, {0})}, {}, 1, "i64[?{2..4}]"},
    {"optional_get_element", "OptionalGetElement", 15, {P("f32[4]")}, {}, 1, "f32[4]"},
    {"optional_get_element_sequence", "OptionalGetElement", 15, {P("i32[4]")}, {}, 1, "i32[4]"},
    {"optional_has_element", "OptionalHasElement", 15, {P("f32[4]")}, {}, 1, "bool[]"},
    {"optional_has_element_empty", "OptionalHasElement", 15, {P("i32[]")}, {}, 1, "bool[]"},
    {"identity_sequence", "Identity", 16, {P("f32[1,1,2,2]")}, {}, 1, "f32[1,1,2,2]"},
};
INSTANTIATE_TEST_SUITE_P(SequenceBackend, SequenceOnnxNode, ::testing::ValuesIn(kSequenceNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
