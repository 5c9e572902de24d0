// The static memory plan (lower/memory_plan.h) and its verifier (lower/plan_check.h): the
// verifier rejects plans broken in each way it checks; every plan made from a golden graph or a
// dev model (SF_DEV_MODELS, bounded by bench/plan/domains.json) passes it, in the model's order
// and in the memory-aware order, with the peak at least the live-bytes lower bound and the
// memory order's lower bound never above the model order's.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/lower/plan_check.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/plan_report.h"
#include "../golden/golden_cases.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

namespace fs = std::filesystem;

namespace sf::lower {
namespace {

/// A graph with its facts, its symbols bounded by `dims`.
std::unique_ptr<Graph> inferred(Result<Graph> g, const std::vector<DimBound> &dims) {
  if (!g.ok()) return nullptr;
  auto out = std::make_unique<Graph>(std::move(*g));
  InferOptions options;
  options.dims = dims;
  if (!applyInputs(*out, options).ok()) return nullptr;
  Diagnostics d;
  inferGraph(*out, d, options);
  return out;
}

nlohmann::json planJson(const Graph &g, const MemoryPlan &p) {
  PlanReport r;
  r.graph = &g;
  r.plan = &p;
  return nlohmann::json::parse(planJsonText(r));
}

std::string problemsText(const PlanCheck &c) {
  std::string out;
  for (const std::string &p : c.problems)
    out += "\n  " + p;
  return out;
}

const char *kSymbolic = R"(
symbol N 1..8
symbol T 1..64
graph main(x: f32[N,T,16], w: f32[16,16]) {
  a = MatMul(x, w)
  b = Tanh(a)
  c = MatMul(b, w)
  d = Add(c, a)
  e = Exp(d)
  return e
}
)";

/// The plan of kSymbolic as JSON, checked valid.
nlohmann::json validPlan() {
  auto g = inferred(parseGraph(kSymbolic), {});
  EXPECT_TRUE(g);
  auto p = planMemory(*g, {});
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  nlohmann::json j = planJson(*g, *p);
  auto c = checkPlanJson(j);
  EXPECT_TRUE(c.ok() && c->ok()) << (c.ok() ? problemsText(*c) : c.error().message);
  return j;
}

nlohmann::json &bufferOf(nlohmann::json &plan, const std::string &tensor) {
  for (auto &b : plan["buffers"])
    if (b["tensor"] == tensor) return b;
  ADD_FAILURE() << "no buffer " << tensor;
  return plan["buffers"][0];
}

bool mentions(const PlanCheck &c, const std::string &text) {
  for (const std::string &p : c.problems)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

TEST(PlanCheck, APlanAsMadeIsValidAndProvedApartForEveryBinding) {
  nlohmann::json j = validPlan();
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->ok());
  EXPECT_GT(c->pairs, 0u);
  EXPECT_EQ(c->bindings, 16u);
  EXPECT_TRUE(j["symbolic"].get<bool>());
}

TEST(PlanCheck, CatchesTwoLiveBuffersAtTheSameOffset) {
  nlohmann::json j = validPlan();
  // a lives from MatMul to Add; b (Tanh's) lives with it: put b where a is.
  bufferOf(j, "b")["offset"] = bufferOf(j, "a")["offset"];
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "overlap")) << problemsText(*c);
}

TEST(PlanCheck, CatchesAnOverlapAtSomeBindingsOnly) {
  nlohmann::json j = validPlan();
  // b right above a at N = T = 1 only: a's size is 64*N*T, so b at offset(a) + 64 overlaps a
  // at every larger binding.
  nlohmann::json &a = bufferOf(j, "a");
  std::string aOff = a["offset"].is_object() ? a["offset"]["expr"].get<std::string>()
                                              : std::to_string(a["offset"].get<int64_t>());
  bufferOf(j, "b")["offset"] = {{"expr", aOff + " + 64"}, {"min", 0}, {"max", nullptr}};
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "overlap")) << problemsText(*c);
}

TEST(PlanCheck, CatchesABufferSmallerThanItsTensor) {
  nlohmann::json j = validPlan();
  bufferOf(j, "a")["size"] = 64;
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "bytes in a buffer of")) << problemsText(*c);
}

TEST(PlanCheck, CatchesAMisalignedOffset) {
  nlohmann::json j = validPlan();
  bufferOf(j, "w")["offset"] = 8;
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "not a multiple of 64")) << problemsText(*c);
}

TEST(PlanCheck, CatchesAPeakBelowABuffersEnd) {
  nlohmann::json j = validPlan();
  j["peak"] = 64;
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "past the peak")) << problemsText(*c);
}

TEST(PlanCheck, CatchesALifetimeOutsideTheOrder) {
  nlohmann::json j = validPlan();
  bufferOf(j, "e")["last"] = 99;
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "not within the")) << problemsText(*c);
}

TEST(PlanCheck, ADeclaredInPlacePairMayShareAndAnUndeclaredOneMayNot) {
  nlohmann::json j = validPlan();
  nlohmann::json &e = bufferOf(j, "d");
  // Add writes over c (in place) as planned: sharing declared.
  ASSERT_TRUE(e.contains("in_place_of")) << e.dump();
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->ok()) << problemsText(*c);
  e.erase("in_place_of");
  // Now d and c live together at Add's step at one offset, undeclared.
  c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "overlap")) << problemsText(*c);
}

TEST(PlanCheck, CatchesASymbolWithNoUpperBound) {
  nlohmann::json j = validPlan();
  j["symbols"]["T"]["max"] = nullptr;
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(mentions(*c, "no upper bound")) << problemsText(*c);
}

TEST(PlanCheck, CatchesADerivedSymbolOutsideItsRange) {
  // Two offsets as derived symbols, defined in terms of each other's order (the verifier
  // resolves them in any order), one of them with a range its definition leaves.
  nlohmann::json j = {{"align", 64},
                      {"order", {"a", "b"}},
                      {"symbols", {{"N", {{"min", 1}, {"max", 4}}}}},
                      {"derived",
                       {{"_o10", {{"expr", "_o2 + 64*N"}, {"min", 64}, {"max", 100}}},
                        {"_o2", {{"expr", "64*N"}, {"min", 64}, {"max", 256}}}}},
                      {"peak", {{"expr", "_o10 + 64*N"}, {"min", 0}, {"max", nullptr}}},
                      {"buffers",
                       {{{"tensor", "x"}, {"size", {{"expr", "64*N"}}}, {"offset", 0}, {"first", 0}, {"last", 1}},
                        {{"tensor", "y"}, {"size", {{"expr", "64*N"}}}, {"offset", {{"expr", "_o2"}}}, {"first", 0}, {"last", 1}},
                        {{"tensor", "z"}, {"size", {{"expr", "64*N"}}}, {"offset", {{"expr", "_o10"}}}, {"first", 1}, {"last", 1}}}}};
  auto c = checkPlanJson(j);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(mentions(*c, "derived symbol _o10")) << problemsText(*c);
  EXPECT_FALSE(mentions(*c, "overlap")) << problemsText(*c);
  j["derived"]["_o10"]["max"] = 512;
  c = checkPlanJson(j);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->ok()) << problemsText(*c);
}

TEST(MemoryPlan, AConcreteChainReachesTheLowerBound) {
  auto g = inferred(parseGraph(R"(
graph main(x: f32[1,64]) {
  a = Exp(x)
  b = Tanh(a)
  c = Sigmoid(b)
  d = Add(c, a)
  return d
}
)"),
                    {});
  ASSERT_TRUE(g);
  auto p = planMemory(*g, {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->symbolic);
  ASSERT_TRUE(p->peak.isStatic() && p->lowerBound.isStatic());
  EXPECT_EQ(p->peak.length(), p->lowerBound.length());
  for (const Slot &s : p->slots)
    EXPECT_EQ(s.offset.length() % 64, 0) << s.tensor;
}

TEST(MemoryPlan, RefusesASizeWithNoUpperBoundNamingTheSymbol) {
  auto g = inferred(parseGraph("graph main(x: f32[N,8]) {\n  y = Exp(x)\n  return y\n}\n"), {});
  ASSERT_TRUE(g);
  auto p = planMemory(*g, {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("--dim N=LO..HI"), std::string::npos) << p.error().message;
}

TEST(MemoryPlan, RejectsAnAlignmentThatIsNotAPowerOfTwo) {
  auto g = inferred(parseGraph(kSymbolic), {});
  PlanOptions o;
  o.align = 48;
  EXPECT_FALSE(planMemory(*g, o).ok());
}

/// Plans `g` in both orders and checks what every plan must satisfy; false when the graph has a
/// size with no upper bound (no plan, which the caller counts).
bool checkPlans(const Graph &g, const std::string &what) {
  PlanOptions model, memory;
  memory.order = OrderPolicy::Memory;
  auto a = planMemory(g, model);
  if (!a.ok()) {
    EXPECT_NE(a.error().message.find("upper bound"), std::string::npos) << what << ": " << a.error().message;
    return false;
  }
  auto b = planMemory(g, memory);
  EXPECT_TRUE(b.ok()) << what << ": " << (b.ok() ? "" : b.error().message);
  if (!b.ok()) return false;
  for (const MemoryPlan *p : {&*a, &*b}) {
    nlohmann::json j = planJson(g, *p);
    auto c = checkPlanJson(j);
    EXPECT_TRUE(c.ok() && c->ok()) << what << (p == &*b ? " (memory order)" : "") << ": "
                                   << (c.ok() ? problemsText(*c) : c.error().message);
    if (p->peak.isStatic() && p->lowerBound.isStatic())
      EXPECT_GE(p->peak.length(), p->lowerBound.length()) << what;
  }
  // The memory order is kept only where its lower bound is lower (at the reference).
  if (a->lowerBound.isStatic() && b->lowerBound.isStatic())
    EXPECT_LE(b->lowerBound.length(), a->lowerBound.length()) << what;
  return true;
}

fs::path sourceDir() {
  if (const char *src = std::getenv("SF_SOURCE_DIR"); src && *src) return src;
  return SF_SOURCE_DIR_DEFAULT;
}

/// The names of the input symbols with no upper bound, bounded at 1..64.
std::vector<DimBound> boundInputs(const Graph &g) {
  std::set<std::string> names;
  for (OutletId o : g.inputs) {
    const Fact &f = g.fact(o);
    if (!f.shape.rankIsStatic()) continue;
    for (const Dimension &d : f.shape.dims())
      if (d.expr())
        for (SymbolId s : symbolsOf(d.expr())) {
          const SymbolInfo &info = symbolInfo(s);
          if (!info.name.empty() && info.range.hi == kInf) names.insert(info.name);
        }
  }
  std::vector<DimBound> out;
  for (const std::string &n : names)
    out.push_back({n, {1, 64}});
  return out;
}

TEST(MemoryPlanProperty, EveryGoldenGraph) {
  size_t planned = 0, cases = 0;
  for (const auto &entry : fs::recursive_directory_iterator(sourceDir() / "tests" / "golden")) {
    if (entry.path().extension() != ".txt" || entry.path().filename() == "CMakeLists.txt") continue;
    std::vector<std::string> parts = golden::goldenCases(entry.path());
    for (size_t i = 0; i < parts.size(); ++i) {
      auto first = parseGraph(parts[i]);
      if (!first.ok()) continue;
      ++cases;
      std::vector<DimBound> dims;
      {
        ExprScope scope = first->enter();
        dims = boundInputs(*first);
      }
      auto g = inferred(parseGraph(parts[i]), dims);
      if (!g) continue;
      ExprScope scope = g->enter();
      planned += checkPlans(*g, entry.path().filename().string() + " case " + std::to_string(i));
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(cases, 250u);
  EXPECT_GT(planned, cases / 2);
}

/// Calls f(name, graph) for every dev model (SF_DEV_MODELS), inferred within its domain from
/// bench/plan/domains.json; the number of models.
size_t forEachDevModel(const std::function<void(const std::string &, Graph &)> &f) {
  const char *dir = std::getenv("SF_DEV_MODELS");
  if (!dir || !*dir) return 0;
  std::ifstream in(sourceDir() / "bench" / "plan" / "domains.json");
  nlohmann::json domains = nlohmann::json::parse(in, nullptr, false);
  EXPECT_FALSE(domains.is_discarded());
  size_t models = 0;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    std::string name = entry.path().stem().string();
    std::vector<DimBound> dims;
    if (domains.contains(name))
      for (const auto &[sym, r] : domains[name].items())
        dims.push_back({sym, {r[0].get<int64_t>(), r[1].get<int64_t>()}});
    Diagnostics d;
    auto g = inferred(onnx::loadModelFile(entry.path().string(), d), dims);
    EXPECT_TRUE(g) << name;
    if (!g) continue;
    ExprScope scope = g->enter();
    f(name, *g);
    ++models;
  }
  return models;
}

TEST(MemoryPlanProperty, EveryDevModel) {
  if (!std::getenv("SF_DEV_MODELS")) GTEST_SKIP() << "SF_DEV_MODELS is not set (the dev corpus folder)";
  size_t planned = 0;
  size_t models = forEachDevModel([&](const std::string &name, Graph &g) { planned += checkPlans(g, name); });
  EXPECT_GT(models, 0u);
  EXPECT_GT(planned, 0u);
}

TEST(MemoryPlanProperty, TheSamePlanUnderLoad) {
  // The planner's search is bounded by work, not time: a plan made while every core is busy is
  // the plan made on an idle machine, byte for byte, in both orders.
  if (!std::getenv("SF_DEV_MODELS")) GTEST_SKIP() << "SF_DEV_MODELS is not set (the dev corpus folder)";
  size_t compared = 0;
  forEachDevModel([&](const std::string &name, Graph &g) {
    for (OrderPolicy order : {OrderPolicy::Model, OrderPolicy::Memory}) {
      PlanOptions o;
      o.order = order;
      auto idle = planMemory(g, o);
      if (!idle.ok()) continue;
      std::atomic<bool> stop{false};
      std::vector<std::thread> load;
      for (unsigned k = 0; k < std::max(2u, std::thread::hardware_concurrency()); ++k)
        load.emplace_back([&stop] {
          volatile uint64_t x = 1;
          while (!stop.load(std::memory_order_relaxed)) x = x * 6364136223846793005ull + 1;
        });
      auto busy = planMemory(g, o);
      stop = true;
      for (auto &t : load) t.join();
      ASSERT_TRUE(busy.ok()) << name;
      EXPECT_EQ(planJson(g, *idle).dump(), planJson(g, *busy).dump()) << name;
      ++compared;
    }
  });
  EXPECT_GT(compared, 0u);
}

} // namespace
} // namespace sf::lower
