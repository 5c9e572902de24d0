// Runs in one arena laid out from the static memory plan (eval/arena.h): the same outputs, bit
// for bit, as on the heap; tensors at their planned offsets and elementwise ops written in place;
// a layout that puts every tensor at offset 0 (a wrong plan) still gives the right outputs, its
// places refused where live tensors hold the bytes; symbolic sizes laid out at the inputs' sizes.
#include "run_text.h"

#include "shapeflow/eval/arena.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace sf::eval {
namespace {

/// Bitwise equality of two runs' outputs (NaN included).
void expectSameOutputs(const RunResult &a, const RunResult &b) {
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    ASSERT_TRUE(a.outputs[i].isTensor() && b.outputs[i].isTensor());
    const Tensor &x = *a.outputs[i], &y = *b.outputs[i];
    ASSERT_EQ(x.type(), y.type());
    ASSERT_EQ(x.shape(), y.shape());
    ASSERT_EQ(x.bytes().size(), y.bytes().size());
    if (!x.bytes().empty())
      EXPECT_EQ(std::memcmp(x.bytes().data(), y.bytes().data(), x.bytes().size()), 0) << "output " << i;
  }
}

std::map<std::string, Value> asValues(const std::map<std::string, Tensor> &inputs) {
  std::map<std::string, Value> out;
  for (const auto &[k, t] : inputs) out.emplace(k, Value(std::make_shared<const Tensor>(t)));
  return out;
}

/// The graph run on the heap and in its planned arena; returns the arena run's use.
ArenaUse runBothWays(const char *text, const std::map<std::string, Tensor> &inputs,
                     ArenaLayout *override = nullptr) {
  Ran heap = runText(text, inputs);
  EXPECT_TRUE(heap.result.ok()) << heap.result.error().message;
  auto layout = planArena(*heap.graph, asValues(inputs));
  EXPECT_TRUE(layout.ok()) << (layout.ok() ? "" : layout.error().message);
  if (!layout.ok() || !heap.result.ok()) return {};
  if (override) *layout = *override; // made from the same text: the same node ids
  RunOptions o;
  o.arena = &*layout;
  auto arena = run(*heap.graph, inputs, o);
  EXPECT_TRUE(arena.ok()) << (arena.ok() ? "" : arena.error().message);
  if (!arena.ok()) return {};
  EXPECT_TRUE(arena->arena.has_value());
  expectSameOutputs(*heap.result, *arena);
  // Outputs are the caller's: never left in the arena (the next run reuses it).
  auto again = run(*heap.graph, inputs, o);
  EXPECT_TRUE(again.ok());
  if (again.ok()) expectSameOutputs(*arena, *again);
  return arena->arena.value_or(ArenaUse{});
}

const char *kChain = R"(
graph main(x: f32[2,8], c: f32[8]) {
  a = Add(x, c)
  r = Relu(a)
  s = Sigmoid(r)
  m = Mul(s, x)
  t = Transpose(m) {perm = [1, 0]}
  k = Constant() {value = i64[1] [16]}
  f = Reshape(t, k)
  g = Concat(f, f) {axis = 0}
  e = Exp(g)
  n = Neg(e)
  return n, m
}
)";

TEST(Arena, SameOutputsAsTheHeapWithTensorsAtTheirOffsetsAndInPlaceWrites) {
  std::vector<double> xs, cs;
  for (int i = 0; i < 16; ++i) xs.push_back(0.25 * i - 2);
  for (int i = 0; i < 8; ++i) cs.push_back(0.5 - 0.125 * i);
  ArenaUse u = runBothWays(kChain, {{"x", f32({2, 8}, xs)}, {"c", f32({8}, cs)}});
  EXPECT_GT(u.bytes, 0);
  EXPECT_GE(u.placed, 5u);
  EXPECT_GE(u.inPlace, 2u) << "Relu over Add, Sigmoid over Relu, Neg over Exp";
  EXPECT_EQ(u.conflicts, 0u);
  EXPECT_EQ(u.elsewhere, 0u);
}

TEST(Arena, InPlaceActivationsKeepNanAndLargeArguments) {
  // Sigmoid, Tanh and Exp on oneDNN recompute NaN and |x| > 80 with the loops; written in place,
  // those elements must be found before they are overwritten.
  const char *text = R"(
graph main(x: f32[6], z: f32[6]) {
  a = Add(x, z)
  s = Sigmoid(a)
  b = Add(x, z)
  t = Tanh(b)
  c = Add(x, z)
  e = Exp(c)
  s1 = Neg(s)
  t1 = Neg(t)
  e1 = Neg(e)
  return s1, t1, e1
}
)";
  std::vector<double> xs = {NAN, 100, -100, 89, -89, 0.5};
  ArenaUse u = runBothWays(text, {{"x", f32({6}, xs)}, {"z", f32({6}, {0, 0, 0, 0, 0, 0})}});
  EXPECT_EQ(u.inPlace, 3u);
  EXPECT_EQ(u.conflicts, 0u);
  Ran r = runText(text, std::map<std::string, Tensor>{{"x", f32({6}, xs)}, {"z", f32({6}, {0, 0, 0, 0, 0, 0})}});
  ASSERT_TRUE(r.result.ok());
  auto s = values(r.result->outputs[0]), e = values(r.result->outputs[2]);
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_TRUE(std::isinf(e[1]) && e[1] < 0);
}

TEST(Arena, AWrongLayoutCostsHeapMemoryNotWrongOutputs) {
  // Every tensor at offset 0 of a large enough arena: each place taken while an earlier tensor
  // is alive there is refused and the tensor goes to the heap.
  std::vector<double> xs, cs;
  for (int i = 0; i < 16; ++i) xs.push_back(0.5 * i - 3);
  for (int i = 0; i < 8; ++i) cs.push_back(0.25 * i);
  std::map<std::string, Tensor> inputs{{"x", f32({2, 8}, xs)}, {"c", f32({8}, cs)}};
  Ran heap = runText(kChain, inputs);
  ASSERT_TRUE(heap.result.ok());
  auto layout = planArena(*heap.graph, asValues(inputs));
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  ArenaLayout wrong = *layout;
  wrong.bytes = 4096;
  for (auto &node : wrong.places)
    for (auto &p : node)
      if (p) p->offset = 0, p->inPlace = false;
  ArenaUse u = runBothWays(kChain, inputs, &wrong);
  EXPECT_GT(u.conflicts, 0u);
  EXPECT_GT(u.placed, 0u);
}

TEST(Arena, EachOutputOfANodeWithSeveralLandsAtItsOwnPlace) {
  // The first output of each node is the caller's (no place in the plan), the others are read
  // later: an output without a place must not take another's (that one's bytes would then be
  // alive past the plan's lifetime and a later place refused).
  const char *text = R"(
graph main(x: f32[6,4]) {
  a, b, c = Split(x) {axis = 0}
  v, i = TopK(x, k) {axis = 1}
  k = Constant() {value = i64[1] [2]}
  y, m, r = LayerNormalization(x, s, z) {axis = 1}
  s = Constant() {value = f32[4] [1, 2, 3, 4]}
  z = Constant() {value = f32[4] [0, 1, 0, 1]}
  nb = Neg(b)
  nc = Neg(c)
  t = Add(nb, nc)
  fi = Cast(i) {to = 1}
  u = Mul(m, r)
  w = Neg(t)
  return a, v, y, w, fi, u
}
)";
  std::vector<double> xs;
  for (int i = 0; i < 24; ++i) xs.push_back(0.5 * ((i * 7) % 11) - 2);
  ArenaUse u = runBothWays(text, {{"x", f32({6, 4}, xs)}});
  EXPECT_EQ(u.conflicts, 0u);
  EXPECT_EQ(u.elsewhere, 0u);
  EXPECT_GE(u.placed, 5u) << "b, c, i, m, r at their places";
}

TEST(Arena, AGraphOutputPassedThroughFromAnArenaTensorLeavesTheArena) {
  // b is a's tensor itself (OptionalGetElement passes it through) and a graph output; the plan
  // frees a's bytes after b's node and gives them to c: b must not stay there.
  const char *text = R"(
opset 18
graph main(x: f32[8]) {
  a = Neg(x)
  b = OptionalGetElement(a)
  c = Abs(b)
  d = Neg(c)
  return b, d
}
)";
  std::vector<double> xs;
  for (int i = 0; i < 8; ++i) xs.push_back(0.5 * i - 2);
  ArenaUse u = runBothWays(text, {{"x", f32({8}, xs)}});
  EXPECT_EQ(u.conflicts, 0u);
}

TEST(Arena, AnInPlaceOutputOffTheStartOfItsInputIsRefused) {
  // Each in-place output moved 64 bytes past its input's start: written there, element i would
  // land on an element of the input not read yet.
  std::vector<double> xs, cs;
  for (int i = 0; i < 16; ++i) xs.push_back(0.75 * i - 5);
  for (int i = 0; i < 8; ++i) cs.push_back(1 - 0.25 * i);
  std::map<std::string, Tensor> inputs{{"x", f32({2, 8}, xs)}, {"c", f32({8}, cs)}};
  Ran heap = runText(kChain, inputs);
  ASSERT_TRUE(heap.result.ok());
  auto layout = planArena(*heap.graph, asValues(inputs));
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  ArenaLayout shifted = *layout;
  shifted.bytes += 128;
  size_t moved = 0;
  for (auto &node : shifted.places)
    for (auto &p : node)
      if (p && p->inPlace) p->offset += 64, ++moved;
  ASSERT_GT(moved, 0u);
  ArenaUse u = runBothWays(kChain, inputs, &shifted); // the same outputs as the heap's
  EXPECT_GT(u.conflicts, 0u);
}

TEST(Arena, SymbolicSizesAreLaidOutAtTheInputsSizes) {
  const char *text = R"(
graph main(x: f32[N,4]) {
  a = Relu(x)
  b = Add(a, a)
  k = Constant() {value = i64[1] [1]}
  c = ReduceSum(b, k) {keepdims = 0}
  d = Sigmoid(c)
  return d
}
)";
  for (int64_t n : {1, 3, 7}) {
    std::vector<double> xs;
    for (int64_t i = 0; i < 4 * n; ++i) xs.push_back(double(i % 5) - 2);
    std::map<std::string, Tensor> inputs{{"x", f32({n, 4}, xs)}};
    Ran heap = runText(text, inputs);
    ASSERT_TRUE(heap.result.ok());
    auto binding = bindInputs(*heap.graph, asValues(inputs));
    ASSERT_TRUE(binding.ok());
    EXPECT_EQ(binding->at("N"), n);
    ArenaUse u = runBothWays(text, inputs);
    // a (4n floats) and b over it, then c (n floats): at most both at once, 64-byte aligned.
    EXPECT_LE(u.bytes, (4 * n * 4 + 63) / 64 * 64 + (n * 4 + 63) / 64 * 64);
    EXPECT_GE(u.placed, 3u);
    EXPECT_EQ(u.conflicts, 0u);
  }
}

TEST(Arena, ARunWhosePlanForEverySizeHasNoBoundIsPlannedAtItsOwnSizes) {
  // Each step appends L % 7 zeros to a vector of length L: the length's expression doubles at
  // every step, passes the algebra's size cap and becomes an anonymous symbol, unbounded like N.
  // The plan for every N then has a buffer whose end has no upper bound; the run's own sizes
  // (N = 10) still get an arena: the graph with N fixed to 10 is planned instead.
  std::string text = "graph main(x: f32[N]) {\n  c = Constant() {value = i64[1] [7]}\n";
  std::string prev = "x";
  for (int i = 0; i < 12; ++i) {
    std::string k = std::to_string(i);
    text += "  s" + k + " = Shape(" + prev + ")\n";
    text += "  m" + k + " = Mod(s" + k + ", c)\n";
    text += "  z" + k + " = ConstantOfShape(m" + k + ") {value = f32[1] [0.5]}\n";
    text += "  y" + k + " = Concat(" + prev + ", z" + k + ") {axis = 0}\n";
    prev = "y" + k;
  }
  text += "  r = Relu(" + prev + ")\n  return r\n}\n";
  std::vector<double> xs;
  for (int i = 0; i < 10; ++i) xs.push_back(i - 4.5);
  std::map<std::string, Tensor> inputs{{"x", f32({10}, xs)}};
  Ran heap = runText(text.c_str(), inputs);
  ASSERT_TRUE(heap.result.ok()) << heap.result.error().message;
  // The plan for every size fails, as the test means it to.
  auto binding = bindInputs(*heap.graph, asValues(inputs));
  ASSERT_TRUE(binding.ok());
  lower::PlanOptions options;
  options.callerOwnedIO = true;
  options.reference = *binding;
  auto everySize = lower::planMemory(*heap.graph, options);
  ASSERT_FALSE(everySize.ok()) << "the graph no longer needs the fallback";
  EXPECT_NE(everySize.error().message.find("no upper bound"), std::string::npos) << everySize.error().message;
  ArenaUse u = runBothWays(text.c_str(), inputs);
  EXPECT_GT(u.bytes, 0);
  EXPECT_GE(u.placed, 12u);
  EXPECT_EQ(u.conflicts, 0u);
}

TEST(Arena, AnInputTheSymbolGetsTwoSizesForIsAnError) {
  const char *text = R"(
graph main(x: f32[N], y: f32[N]) {
  a = Add(x, y)
  return a
}
)";
  Ran r = runText(text, std::map<std::string, Tensor>{{"x", f32({2}, {1, 2})}, {"y", f32({2}, {3, 4})}});
  ASSERT_TRUE(r.result.ok());
  auto b = bindInputs(*r.graph, asValues({{"x", f32({2}, {1, 2})}, {"y", f32({3}, {3, 4, 5})}}));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("N is 2 at 'x' dim 0 and 3 at 'y' dim 0"), std::string::npos)
      << b.error().message;
}

TEST(Arena, AnInPlaceOutputWhoseInputAShapeReadsLaterStillTakesItsBytes) {
  // The plan frees x's elements at the Relu (Shape reads only its shape): the executor agrees.
  const char *text = R"(
graph main(x: f32[4,8]) {
  a = Neg(x)
  r = Relu(a)
  s = Shape(a)
  c = Cast(s) {to = 1}
  y = Mul(r, r)
  return y, c
}
)";
  std::vector<double> xs;
  for (int i = 0; i < 32; ++i) xs.push_back(i % 7 - 3);
  ArenaUse u = runBothWays(text, {{"x", f32({4, 8}, xs)}});
  EXPECT_GE(u.inPlace, 1u);
  EXPECT_EQ(u.conflicts, 0u);
}

TEST(Arena, ALayoutOfAnotherGraphIsRefused) {
  Ran r = runText("graph main(x: f32[2]) {\n  a = Relu(x)\n  return a\n}\n",
                  std::map<std::string, Tensor>{{"x", f32({2}, {1, -1})}});
  ASSERT_TRUE(r.result.ok());
  ArenaLayout other;
  other.places.resize(r.graph->nodes.size());
  RunOptions o;
  o.arena = &other;
  auto x = run(*r.graph, std::map<std::string, Tensor>{{"x", f32({2}, {1, -1})}}, o);
  ASSERT_FALSE(x.ok());
  EXPECT_NE(x.error().message.find("not made for this graph"), std::string::npos) << x.error().message;
}

} // namespace
} // namespace sf::eval
