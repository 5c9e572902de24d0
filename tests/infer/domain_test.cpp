// The input sizes a model admits (src/infer/domain.cpp): symbols free or solved, conditions the
// rules recorded, bindings checked against them and drawn to meet them.
#include "shapeflow/infer/domain.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"

#include <gtest/gtest.h>

#include <memory>

namespace sf {
namespace {

std::unique_ptr<Graph> inferred(const std::string &text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  if (!g.ok()) return nullptr;
  auto out = std::make_unique<Graph>(std::move(*g));
  Diagnostics d;
  inferGraph(*out, d);
  return out;
}

/// A decoder's attention scores [B, H, S, P + S] plus a mask [B, 1, 1, L]: L must be P + S (or 1);
/// the cache may be empty (P = 0).
const char *kMaskModel = R"(symbol B 1..
symbol S 1..
symbol P 0..
symbol L 1..
graph main(q: f32[B,4,S,16], k: f32[B,4,P,16], kn: f32[B,4,S,16], m: f32[B,1,1,L]) {
  kk = Concat(k, kn) {axis = 2}
  kt = Transpose(kk) {perm = [0, 1, 3, 2]}
  s = MatMul(q, kt)
  y = Add(s, m)
  return y
}
)";

TEST(InputDomain, SymbolsAndConditions) {
  auto g = inferred(kMaskModel);
  ASSERT_TRUE(g);
  InputDomain d = inputDomain(*g);
  std::vector<std::string> keys;
  for (const auto &s : d.symbols) keys.push_back(s.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"B", "S", "P", "L"}));
  ASSERT_EQ(d.conditions.size(), 1u);
  EXPECT_EQ(d.conditions[0].kind, Condition::Broadcast);
  EXPECT_EQ(d.breaks({{"B", 1}, {"S", 3}, {"P", 5}, {"L", 8}}), std::nullopt);
  EXPECT_EQ(d.breaks({{"B", 1}, {"S", 3}, {"P", 5}, {"L", 1}}), std::nullopt);
  auto broken = d.breaks({{"B", 1}, {"S", 3}, {"P", 5}, {"L", 7}});
  ASSERT_TRUE(broken);
  EXPECT_NE(broken->find("node 'y' (Add)"), std::string::npos) << *broken;
  EXPECT_NE(broken->find("(8 and 7 at these sizes)"), std::string::npos) << *broken;
  EXPECT_EQ(d.breaks({{"B", 0}}), "B = 0 is outside 1..");
  EXPECT_TRUE(d.knows({{"B", 2}, {"L", 3}}).ok());
  auto unknown = d.knows({{"T", 2}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "a size is given for 'T' (= 2), but the model has no size named 'T' "
                                     "(its inputs' named sizes: B, S, P, L)");
}

/// A mask [B, 1, S, T] concatenated with scores over the cache and the new keys: inference solves T
/// as P + S, so no input reads T any more.
TEST(InputDomain, ASizeInferenceSolvedMayBeGivenAndMustAgree) {
  auto g = inferred(R"(symbol B 1..
symbol S 1..
symbol P 0..
symbol T 1..
graph main(q: f32[B,4,S,16], k: f32[B,4,P,16], kn: f32[B,4,S,16], m: f32[B,1,S,T]) {
  kk = Concat(k, kn) {axis = 2}
  kt = Transpose(kk) {perm = [0, 1, 3, 2]}
  s = MatMul(q, kt)
  y = Concat(s, m) {axis = 1}
  return y
}
)");
  ASSERT_TRUE(g);
  InputDomain d = inputDomain(*g);
  EXPECT_TRUE(d.knows({{"B", 1}, {"S", 3}, {"P", 0}, {"T", 3}}).ok());
  EXPECT_EQ(d.breaks({{"B", 1}, {"S", 3}, {"P", 0}, {"T", 3}}), std::nullopt);
  auto broken = d.breaks({{"B", 1}, {"S", 3}, {"P", 1}, {"T", 3}});
  ASSERT_TRUE(broken);
  EXPECT_NE(broken->find("given T = 3"), std::string::npos) << *broken;
  EXPECT_FALSE(d.knows({{"U", 2}}).ok());
}

TEST(InputDomain, DrawsMeetTheConditionsAndStartAtTheSmallestSizes) {
  auto g = inferred(kMaskModel);
  ASSERT_TRUE(g);
  InputDomain d = inputDomain(*g);
  auto drawn = d.draw(6, 1);
  ASSERT_EQ(drawn.bindings.size(), 6u) << drawn.why;
  EXPECT_EQ(drawn.why, "");
  EXPECT_EQ(drawn.bindings[0].at("B"), 1);
  EXPECT_EQ(drawn.bindings[0].at("S"), 1);
  EXPECT_EQ(drawn.bindings[0].at("P"), 0) << "an empty cache is the smallest size";
  size_t tied = 0;
  for (const Binding &b : drawn.bindings) {
    EXPECT_EQ(d.breaks(b), std::nullopt);
    tied += b.at("L") == b.at("S") + b.at("P");
  }
  EXPECT_GE(tied, 5u) << "L is set to meet the broadcast rather than drawn alone";
  // The same seed draws the same bindings.
  EXPECT_EQ(d.draw(6, 1).bindings, drawn.bindings);
}

TEST(InputDomain, RareSizesAreFoundByMeetingTheCondition) {
  // N*C == 24 (a Reshape to [2, 12]) holds at 8 of 4096 drawn pairs: each draw sets one symbol
  // so that the count comes out right.
  auto g = inferred("graph main(x: f32[N,C]) {\n  t = Constant() {value = i64[2] [2, 12]}\n"
                    "  y = Reshape(x, t)\n  return y\n}\n");
  ASSERT_TRUE(g);
  InputDomain d = inputDomain(*g);
  ASSERT_FALSE(d.conditions.empty());
  auto drawn = d.draw(4, 3);
  ASSERT_EQ(drawn.bindings.size(), 4u) << drawn.why;
  for (const Binding &b : drawn.bindings) EXPECT_EQ(b.at("N") * b.at("C"), 24);
}

TEST(InputDomain, ADomainWithNoAdmissibleDrawSaysWhy) {
  // N*C must be 24 and 25 at once: every draw breaks one of the two counts.
  auto g = inferred("graph main(x: f32[N,C], z: f32[N,C]) {\n  t = Constant() {value = i64[2] [2, 12]}\n"
                    "  u = Constant() {value = i64[2] [5, 5]}\n  y = Reshape(x, t)\n  w = Reshape(z, u)\n"
                    "  return y, w\n}\n");
  ASSERT_TRUE(g);
  InputDomain d = inputDomain(*g);
  auto drawn = d.draw(2, 1);
  EXPECT_TRUE(drawn.bindings.empty());
  EXPECT_FALSE(drawn.why.empty());
}

TEST(InputDomain, AFixedModelRepeatsItsOneBinding) {
  auto g = inferred("graph main(x: f32[2,3]) {\n  y = Relu(x)\n  return y\n}\n");
  ASSERT_TRUE(g);
  auto drawn = inputDomain(*g).draw(3, 1);
  ASSERT_EQ(drawn.bindings.size(), 3u);
  for (const Binding &b : drawn.bindings) EXPECT_TRUE(b.empty());
}

} // namespace
} // namespace sf
