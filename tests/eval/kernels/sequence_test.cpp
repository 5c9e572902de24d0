// Tests of the sequence and optional kernels (src/eval/kernels/sequence.cpp), and of text.
// Text: StringNormalizer (training.cpp) and Cast to and from strings (elementwise_unary.cpp).
// Values computed by hand, the errors a sequence op must give, and sequences carried through
// Identity and Loop.
#include "../run_text.h"

namespace sf::eval {
namespace {

Tensor str(Shape s, std::vector<std::string> v) { return *Tensor::fromStrings(std::move(s), std::move(v)); }

TEST(Sequences, ConstructInsertAtEraseLengthAndConcat) {
  Ran r = runText(R"(
opset 17
graph main(a: f32[1,2], b: f32[2,2], p: i64[]) {
  s = SequenceConstruct(a, b)
  t = SequenceInsert(s, a, p)
  u = SequenceErase(t)
  n = SequenceLength(u)
  y = SequenceAt(u, p)
  c = ConcatFromSequence(u) {axis = 0}
  return n, y, c
}
)",
                  {{"a", f32({1, 2}, {1, 2})}, {"b", f32({2, 2}, {3, 4, 5, 6})}, {"p", i64({}, {0})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  const auto &out = r.result->outputs;
  // t = [a, a, b]; erasing the last leaves [a, a].
  EXPECT_EQ(values(out[0]), (std::vector<double>{2}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 2}));
  EXPECT_EQ(out[2]->shape(), (Shape{2, 2}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{1, 2, 1, 2}));
}

TEST(Sequences, SplitToSequenceWithoutSplitDropsTheAxisAndStackRestoresIt) {
  Ran r = runText(R"(
opset 17
graph main(x: f32[3,2]) {
  s = SplitToSequence(x) {axis = 0, keepdims = 0}
  last = Constant() {value = i64[] [-1]}
  e = SequenceAt(s, last)
  y = ConcatFromSequence(s) {axis = 1, new_axis = 1}
  return s, e, y
}
)",
                  {{"x", f32({3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  const auto &out = r.result->outputs;
  ASSERT_TRUE(out[0].isSequence());
  ASSERT_EQ(out[0].elements().size(), 3u);
  EXPECT_EQ(out[0].elements()[1]->shape(), (Shape{2}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{5, 6}));
  // Stacked along a new axis 1: [2,3], the transpose of x.
  EXPECT_EQ(out[2]->shape(), (Shape{2, 3}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{1, 3, 5, 2, 4, 6}));
}

TEST(Sequences, SplitToSequenceWithAScalarSplitLeavesTheLastChunkShort) {
  Ran r = runText(R"(
opset 17
graph main(x: f32[5], k: i64[]) {
  s = SplitToSequence(x, k)
  return s
}
)",
                  {{"x", f32({5}, {1, 2, 3, 4, 5})}, {"k", i64({}, {2})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  const auto &s = r.result->outputs[0];
  ASSERT_EQ(s.elements().size(), 3u);
  EXPECT_EQ(s.elements()[2]->shape(), (Shape{1}));
  EXPECT_EQ(values(Value(s.elements()[2])), (std::vector<double>{5}));
}

TEST(Sequences, APositionOutOfRangeIsAnErrorNamingTheNode) {
  Ran r = runText(R"(
opset 17
graph main(a: f32[2], p: i64[]) {
  s = SequenceConstruct(a, a)
  y = SequenceAt(s, p)
  return y
}
)",
                  {{"a", f32({2}, {1, 2})}, {"p", i64({}, {2})}});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("node 'y' (SequenceAt): position 2 is outside [-2, 1]"), std::string::npos)
      << r.result.error().message;
}

TEST(Sequences, ATensorOpGivenASequenceIsAnErrorNotACrash) {
  Ran r = runText(R"(
opset 17
graph main(a: f32[2]) {
  s = SequenceConstruct(a, a)
  y = Relu(s)
  return y
}
)",
                  {{"a", f32({2}, {1, 2})}});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("input 0 is seq(f32)[2 elements], and Relu takes tensors"), std::string::npos)
      << r.result.error().message;
}

TEST(Sequences, SequenceInputsAreCheckedElementByElement) {
  Ran ok = runText<Value>(R"(
opset 17
graph main(s: f32[?,2]) {
  n = SequenceLength(s)
  return n
}
)",
                          {{"s", Value::sequence(ElementType::F32, {std::make_shared<const Tensor>(f32({1, 2}, {1, 2})),
                                                                    std::make_shared<const Tensor>(f32({3, 2}, {1, 2, 3, 4, 5, 6}))})}});
  ASSERT_TRUE(ok.result.ok()) << ok.result.error().message;
  EXPECT_EQ(values(ok.result->outputs[0]), (std::vector<double>{2}));
  Ran bad = runText<Value>(R"(
opset 17
graph main(s: f32[?,2]) {
  n = SequenceLength(s)
  return n
}
)",
                           {{"s", Value::sequence(ElementType::F32, {std::make_shared<const Tensor>(f32({2, 3}, {1, 2, 3, 4, 5, 6}))})}});
  ASSERT_FALSE(bad.result.ok());
  EXPECT_NE(bad.result.error().message.find("input 's' has shape [2,3]"), std::string::npos) << bad.result.error().message;
}

TEST(Optionals, EmptyAndFullOptionals) {
  Ran r = runText<Value>(R"(
opset 18
graph main(o: f32[2], x: f32[2]) {
  h = OptionalHasElement(o)
  w = Optional(x)
  k = OptionalHasElement(w)
  g = OptionalGetElement(w)
  return h, k, g
}
)",
                         {{"o", Value::none(ElementType::F32)}, {"x", Value(std::make_shared<const Tensor>(f32({2}, {7, 8})))}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(values(r.result->outputs[0]), (std::vector<double>{0}));
  EXPECT_EQ(values(r.result->outputs[1]), (std::vector<double>{1}));
  EXPECT_EQ(values(r.result->outputs[2]), (std::vector<double>{7, 8}));
}

TEST(Optionals, GettingFromAnEmptyOptionalIsAnError) {
  Ran r = runText<Value>(R"(
opset 18
graph main(o: f32[2]) {
  g = OptionalGetElement(o)
  return g
}
)",
                         {{"o", Value::none(ElementType::F32)}});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("the optional is empty"), std::string::npos) << r.result.error().message;
}

TEST(Strings, CastToAndFromText) {
  Ran r = runText(R"(
opset 13
graph main(x: f32[4], s: str[3]) {
  t = Cast(x) {to = 8}
  f = Cast(s) {to = 1}
  return t, f
}
)",
                  {{"x", f32({4}, {0.5, 0.039187793, 1e-05, -3})}, {"s", str({3}, {"2.5", "-INF", "nan"})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(r.result->outputs[0]->strings(), (std::vector<std::string>{"0.5", "0.039187793", "1e-05", "-3"}));
  auto f = values(r.result->outputs[1]);
  EXPECT_EQ(f[0], 2.5);
  EXPECT_TRUE(std::isinf(f[1]) && f[1] < 0);
  EXPECT_TRUE(std::isnan(f[2]));
}

TEST(Strings, TextThatIsNotANumberIsAnError) {
  Ran r = runText(R"(
opset 13
graph main(s: str[1]) {
  f = Cast(s) {to = 1}
  return f
}
)",
                  {{"s", str({1}, {"hello"})}});
  ASSERT_FALSE(r.result.ok());
  EXPECT_NE(r.result.error().message.find("'hello' is not a number"), std::string::npos) << r.result.error().message;
}

TEST(Strings, StringNormalizerDropsStopWordsAndChangesCase) {
  Ran r = runText(R"(
opset 10
graph main(x: str[1,4]) {
  y = StringNormalizer(x) {case_change_action = "UPPER", stopwords = ["monday"]}
  z = StringNormalizer(x) {is_case_sensitive = 1, stopwords = ["monday", "Tuesday", "x", "y"]}
  return y, z
}
)",
                  {{"x", str({1, 4}, {"Monday", "tuesday", "monday", "wednesday"})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(r.result->outputs[0]->shape(), (Shape{1, 2}));
  EXPECT_EQ(r.result->outputs[0]->strings(), (std::vector<std::string>{"TUESDAY", "WEDNESDAY"}));
  EXPECT_EQ(r.result->outputs[1]->strings(), (std::vector<std::string>{"Monday", "tuesday", "wednesday"}));
}

TEST(Strings, EverythingDroppedLeavesOneEmptyString) {
  Ran r = runText(R"(
opset 10
graph main(x: str[2]) {
  y = StringNormalizer(x) {stopwords = ["a"]}
  return y
}
)",
                  {{"x", str({2}, {"a", "A"})}});
  ASSERT_TRUE(r.result.ok()) << r.result.error().message;
  EXPECT_EQ(r.result->outputs[0]->shape(), (Shape{1}));
  EXPECT_EQ(r.result->outputs[0]->strings(), (std::vector<std::string>{""}));
}

} // namespace
} // namespace sf::eval
