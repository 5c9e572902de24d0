// The input contract (src/report/contract.cpp): each kind of requirement, from a graph where one
// op rule imposes it, with the node named; the declared dims; check() at sizes that meet and
// break it; a graph that fails at every size; the JSON keys.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/contract.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace sf {
namespace {

struct Inferred {
  Graph g;
  Diagnostics d;
  Contract c;
};

std::unique_ptr<Inferred> contractOf(const char *text) {
  auto m = std::make_unique<Inferred>();
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  m->g = std::move(*g);
  ContractBasis basis = contractBasis(m->g);
  inferGraph(m->g, m->d);
  m->c = makeContract(m->g, m->d, basis);
  return m;
}

bool has(const std::vector<std::string> &lines, const std::string &line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const auto &l : lines) s += l + "; ";
  return s;
}

TEST(Contract, AWindowThatMustFitIsAMinimumSize) {
  auto m = contractOf(R"(graph main(x: f32[N,3,H,W]) {
    y = MaxPool(x) {kernel_shape = [3, 5]}
    return y
  })");
  auto lines = m->c.summary();
  EXPECT_TRUE(has(lines, "x[1] == 3 (declared)")) << joined(lines);
  EXPECT_TRUE(has(lines, "H >= 3")) << joined(lines);
  EXPECT_TRUE(has(lines, "W >= 5")) << joined(lines);
  ASSERT_EQ(m->c.requirements.size(), 2u);
  EXPECT_EQ(m->c.requirements[0].text, "H >= 3");
  EXPECT_EQ(m->c.requirements[0].node, "y");
  EXPECT_EQ(m->c.requirements[0].op, "MaxPool");
  EXPECT_TRUE(m->c.errors.empty());
  // Sizes that meet it, and sizes that break it (the first requirement broken is named).
  EXPECT_EQ(m->c.check({{"N", 1}, {"H", 3}, {"W", 9}}), std::nullopt);
  EXPECT_EQ(m->c.check({{"N", 1}, {"H", 2}, {"W", 9}}), "H >= 3, given H = 2");
  EXPECT_EQ(m->c.check({{"x[1]", 4}}), "x[1] == 3 (declared), given 4");
}

TEST(Contract, SharedDimsOfTwoInputsAreAnEquality) {
  auto m = contractOf(R"(graph main(a: f32[M,K], b: f32[L,N]) {
    y = MatMul(a, b)
    return y
  })");
  auto lines = m->c.summary();
  bool linked = has(lines, "L == K") || has(lines, "K == L");
  EXPECT_TRUE(linked) << joined(lines);
  ASSERT_EQ(m->c.requirements.size(), 1u);
  EXPECT_EQ(m->c.requirements[0].node, "y");
  EXPECT_EQ(m->c.requirements[0].op, "MatMul");
  // A solved symbol is checked against its solution.
  EXPECT_EQ(m->c.check({{"K", 5}, {"L", 5}}), std::nullopt);
  auto broken = m->c.check({{"K", 5}, {"L", 7}});
  ASSERT_TRUE(broken.has_value());
  EXPECT_NE(broken->find("given"), std::string::npos) << *broken;
}

TEST(Contract, AWeightFixesAnInputDim) {
  auto m = contractOf(R"(graph main(x: f32[N,K]) {
    w = Constant() {value = f32[4,2] [1, 2, 3, 4, 5, 6, 7, 8]}
    y = MatMul(x, w)
    return y
  })");
  auto lines = m->c.summary();
  EXPECT_TRUE(has(lines, "K == 4")) << joined(lines);
  EXPECT_EQ(m->c.check({{"K", 4}}), std::nullopt);
}

TEST(Contract, AGraphThatFailsAtEverySizeHasErrors) {
  auto m = contractOf(R"(graph main(x: f32[N,3,2,2]) {
    y = MaxPool(x) {kernel_shape = [5, 5]}
    return y
  })");
  ASSERT_FALSE(m->c.errors.empty());
  EXPECT_EQ(m->c.errors[0].node, "y");
  std::ostringstream os;
  printContract(m->c, "m", os);
  EXPECT_NE(os.str().find("no input sizes are accepted"), std::string::npos) << os.str();
}

TEST(Contract, ConditionsAreCheckedAtGivenSizes) {
  // Broadcasting against a fixed size: S is 16 or 1.
  auto m = contractOf(R"(graph main(x: f32[B,S,8], pos: f32[1,16,8]) {
    y = Add(x, pos)
    return y
  })");
  ASSERT_EQ(m->c.requirements.size(), 1u) << joined(m->c.summary());
  EXPECT_EQ(m->c.requirements[0].kind, Condition::Broadcast);
  EXPECT_EQ(m->c.requirements[0].text, "S == 16 or S == 1");
  EXPECT_EQ(m->c.check({{"B", 2}, {"S", 16}}), std::nullopt);
  EXPECT_EQ(m->c.check({{"B", 2}, {"S", 1}}), std::nullopt);
  EXPECT_EQ(m->c.check({{"B", 2}, {"S", 15}}),
            "S == 16 or S == 1 (15 and 16 given), node 'y' (Add)");
  // Not every symbol given: the condition is not decided.
  EXPECT_EQ(m->c.check({{"B", 2}}), std::nullopt);

  // An element count no symbol can be solved from, and a divisibility.
  auto r = contractOf(R"(opset 13
  graph main(x: f32[N,C], t: i64[2] = [4,6]) {
    y = Reshape(x, t)
    a, b = Split(x) {axis = 1}
    return y, a, b
  })");
  auto lines = r->c.summary();
  EXPECT_TRUE(has(lines, "N*C == 24")) << joined(lines);
  EXPECT_TRUE(has(lines, "C % 2 == 0")) << joined(lines);
  EXPECT_EQ(r->c.check({{"N", 4}, {"C", 6}}), std::nullopt);
  EXPECT_NE(r->c.check({{"N", 3}, {"C", 6}}), std::nullopt);
  // 24 elements, but C is odd.
  EXPECT_EQ(r->c.check({{"N", 8}, {"C", 3}}), "C % 2 == 0 (3 and 2 given), node 'a' (Split)");
}

/// Whether the graph of `text` infers without an error with `name` pinned to 0 (what the CLI's
/// probe does with the model file).
bool infersAtZero(const char *text, const std::string &name) {
  auto g = parseGraph(text);
  if (!g.ok()) return false;
  ExprScope scope = g->enter();
  if (!g->symbols.setRange(name, Interval{0, 0}).ok()) return false;
  Diagnostics d;
  inferGraph(*g, d);
  return !d.hasErrors();
}

Interval rangeOf(const Contract &c, const std::string &name) {
  for (const auto &s : c.symbols)
    if (s.name == name) return s.range;
  ADD_FAILURE() << "no symbol " << name;
  return {};
}

/// The importer's assumption on a text graph (whose named sizes start at 0): `names` at least 1,
/// as a model file's dim_params are.
void assumeAtLeastOne(Contract &c, const std::vector<std::string> &names) {
  c.assumedMinimum = names;
  for (auto &s : c.symbols)
    if (std::find(names.begin(), names.end(), s.name) != names.end()) s.range.lo = 1;
}

TEST(Contract, AnEmptyCacheIsAdmittedWhereTheModelInfersAtZero) {
  const char *text = R"(graph main(past: f32[B,4,P,16], k: f32[B,4,S,16]) {
    present = Concat(past, k) {axis = 2}
    return present
  })";
  auto m = contractOf(text);
  assumeAtLeastOne(m->c, {"B", "P", "S"});
  EXPECT_NE(m->c.check({{"B", 1}, {"P", 0}, {"S", 3}}), std::nullopt);
  auto lowered = admitZeroSizes(m->c, [&](const std::string &n) { return infersAtZero(text, n); });
  EXPECT_EQ(lowered, (std::vector<std::string>{"B", "P", "S"}));
  EXPECT_EQ(rangeOf(m->c, "P").lo, 0);
  EXPECT_EQ(m->c.check({{"B", 1}, {"P", 0}, {"S", 3}}), std::nullopt);
  EXPECT_TRUE(has(m->c.summary(), "P >= 0")) << joined(m->c.summary());
}

TEST(Contract, AFailingProbeKeepsTheMinimum) {
  const char *text = R"(graph main(x: f32[N,3,H,W]) {
    y = MaxPool(x) {kernel_shape = [3, 5]}
    return y
  })";
  auto m = contractOf(text);
  assumeAtLeastOne(m->c, {"N"});
  std::vector<std::string> asked;
  auto lowered = admitZeroSizes(m->c, [&](const std::string &n) {
    asked.push_back(n);
    return false;
  });
  EXPECT_EQ(asked, (std::vector<std::string>{"N"}));
  EXPECT_TRUE(lowered.empty());
  EXPECT_EQ(rangeOf(m->c, "N").lo, 1);
  EXPECT_EQ(rangeOf(m->c, "H").lo, 3);
  // At 0 the window does not fit: inference itself says so.
  EXPECT_FALSE(infersAtZero(text, "H"));
  EXPECT_TRUE(infersAtZero(text, "N"));
}

TEST(Contract, ARequirementThatFailsAtZeroKeepsTheMinimum) {
  // Broadcasting against 16: S == 16 or S == 1, false at 0, whatever inference at 0 says.
  const char *text = R"(graph main(x: f32[B,S,8], pos: f32[1,16,8]) {
    y = Add(x, pos)
    return y
  })";
  auto m = contractOf(text);
  assumeAtLeastOne(m->c, {"B", "S"});
  auto lowered = admitZeroSizes(m->c, [](const std::string &) { return true; });
  EXPECT_EQ(lowered, (std::vector<std::string>{"B"}));
  EXPECT_EQ(rangeOf(m->c, "S").lo, 1);
}

TEST(Contract, NothingIsLoweredWhenTheModelFailsEverywhere) {
  auto m = contractOf(R"(graph main(x: f32[N,3,2,2]) {
    y = MaxPool(x) {kernel_shape = [5, 5]}
    return y
  })");
  assumeAtLeastOne(m->c, {"N"});
  EXPECT_TRUE(admitZeroSizes(m->c, [](const std::string &) { return true; }).empty());
}

TEST(Contract, JsonKeepsItsKeys) {
  auto m = contractOf(R"(graph main(x: f32[N,3,H,W]) {
    y = MaxPool(x) {kernel_shape = [3, 3]}
    return y
  })");
  auto j = contractJson(m->c, "m");
  for (const char *key : {"model", "declared", "symbols", "requirements", "errors", "summary"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["declared"][0]["input"], "x");
  EXPECT_EQ(j["declared"][0]["axis"], 1);
  EXPECT_EQ(j["declared"][0]["value"], 3);
  bool sawH = false;
  for (const auto &s : j["symbols"])
    if (s["name"] == "H") {
      sawH = true;
      EXPECT_EQ(s["min"], 3);
      EXPECT_TRUE(s["max"].is_null());
      EXPECT_TRUE(s["equals"].is_null());
    }
  EXPECT_TRUE(sawH);
  EXPECT_EQ(j["requirements"][0]["node"], "y");
}

} // namespace
} // namespace sf
