// Lowering: the verifiers (lower/verify.h) catch what they are for, and on every golden graph
// and dev model the three stages succeed and pass them; bounds are at least every size the facts
// allow at the corners of the symbols' ranges.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/lower/bounds.h"
#include "shapeflow/lower/buffers.h"
#include "shapeflow/lower/shape_values.h"
#include "shapeflow/lower/verify.h"
#include "shapeflow/onnx/import.h"
#include "../golden/golden_cases.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;

namespace sf::lower {
namespace {

struct Lowered {
  std::unique_ptr<Graph> graph;
  Diagnostics diags;
  ShapeProgram program;
  BufferPlan plan;
};

std::unique_ptr<Lowered> lowered(Result<Graph> g, const std::vector<DimBound> &dims = {}) {
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  if (!g.ok()) return nullptr;
  auto l = std::make_unique<Lowered>();
  l->graph = std::make_unique<Graph>(std::move(*g));
  InferOptions options;
  options.dims = dims;
  EXPECT_TRUE(applyInputs(*l->graph, options).ok());
  inferGraph(*l->graph, l->diags, options);
  auto p = lowerShapes(*l->graph);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  if (!p.ok()) return nullptr;
  l->program = std::move(*p);
  auto plan = planBuffers(l->program);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().message);
  if (!plan.ok()) return nullptr;
  l->plan = std::move(*plan);
  return l;
}

const char *kChain = R"(
graph main(x: f32[N,8]) {
  y = Exp(x)
  r = Relu(y)
  t = Tanh(r)
  return t
}
)";

TEST(LowerVerify, APlanAsMadeIsValid) {
  auto l = lowered(parseGraph(kChain));
  ASSERT_TRUE(l);
  EXPECT_TRUE(verifyShapes(l->program).ok());
  auto v = verifyBuffers(l->plan);
  EXPECT_TRUE(v.ok()) << v.error().message;
  // Relu writes over y in place; t is the caller's.
  bool inPlace = false;
  for (const Buffer &b : l->plan.buffers)
    inPlace |= b.name == "%r" && b.reuse == Reuse::InPlace;
  EXPECT_TRUE(inPlace);
}

size_t bufferNamed(const BufferPlan &plan, const std::string &name) {
  for (size_t b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].name == name) return b;
  ADD_FAILURE() << "no buffer " << name;
  return 0;
}

TEST(LowerVerify, CatchesAFreeBeforeTheLastRead) {
  auto l = lowered(parseGraph(kChain));
  ASSERT_TRUE(l);
  BufferPlan plan = l->plan;
  size_t y = bufferNamed(plan, "%y");
  // Move y's free to the step that allocates it: Relu then reads freed memory.
  for (Step &s : plan.steps)
    std::erase(s.frees, y);
  plan.steps[plan.buffers[y].alloc].frees.push_back(y);
  auto v = verifyBuffers(plan);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("outside its lifetime"), std::string::npos) << v.error().message;
}

TEST(LowerVerify, CatchesADoubleAllocationAndAMissingFree) {
  auto l = lowered(parseGraph(kChain));
  ASSERT_TRUE(l);
  BufferPlan plan = l->plan;
  size_t y = bufferNamed(plan, "%y");
  plan.steps.back().allocs.push_back(y);
  for (Step &s : plan.steps)
    std::erase(s.frees, y);
  auto v = verifyBuffers(plan);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("allocated 2 times and freed 0 times"), std::string::npos)
      << v.error().message;
}

TEST(LowerVerify, CatchesAnInPlaceWriteOverMemoryReadLater) {
  auto l = lowered(parseGraph(R"(
graph main(x: f32[N,8]) {
  y = Exp(x)
  r = Relu(y)
  a = Add(r, y)
  return a
}
)"));
  ASSERT_TRUE(l);
  ASSERT_TRUE(verifyBuffers(l->plan).ok());
  BufferPlan plan = l->plan;
  size_t y = bufferNamed(plan, "%y"), r = bufferNamed(plan, "%r");
  // Make Relu write over y although Add reads y afterwards.
  ASSERT_FALSE(plan.buffers[r].aliasOf);
  plan.buffers[r].aliasOf = y;
  plan.buffers[r].reuse = Reuse::InPlace;
  for (Step &s : plan.steps) {
    std::erase(s.allocs, r);
    std::erase(s.frees, r);
  }
  auto v = verifyBuffers(plan);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("written in place"), std::string::npos) << v.error().message;
}

TEST(LowerVerify, CatchesAComputationReadingASymbolNothingHolds) {
  auto l = lowered(parseGraph(R"(
graph main(x: f32[N,3,H,W], w: f32[16,3,3,3]) {
  y = Conv(x, w) {strides = [2, 2]}
  return y
}
)"));
  ASSERT_TRUE(l);
  ASSERT_TRUE(verifyShapes(l->program).ok());
  ShapeProgram p = l->program;
  // Forget where the input's symbols are held.
  p.values[0].defines.clear();
  auto v = verifyShapes(p);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("does not define it first"), std::string::npos)
      << v.error().message;
}

// ---------------------------------------------------------------- properties

/// Every stage succeeds and passes its verifier; every tensor of a graph has a buffer; with the
/// symbols bounded, every upper bound is at least the dims evaluated at the corners of the
/// symbols' ranges.
void checkAll(const std::function<Result<Graph>()> &load, const std::string &where) {
  auto l = lowered(load());
  ASSERT_TRUE(l) << where;
  auto vs = verifyShapes(l->program);
  EXPECT_TRUE(vs.ok()) << where << ": " << vs.error().message;
  auto vb = verifyBuffers(l->plan);
  EXPECT_TRUE(vb.ok()) << where << ": " << vb.error().message;
  size_t tensors = 0;
  for (const Node &n : l->graph->nodes)
    if (!n.removed) tensors += n.outputs.size();
  EXPECT_EQ(l->plan.buffers.size(), tensors + l->program.values.size() -
                                        [&] {
                                          // shape values made in bodies are in the bodies' plans
                                          size_t inBodies = 0;
                                          for (const ShapeValue &v : l->program.values)
                                            inBodies += !v.path.empty();
                                          return inBodies;
                                        }())
      << where;
  auto bounds = computeBounds(*l->graph);
  ASSERT_TRUE(bounds.ok()) << where;
  ExprScope scope = l->graph->enter();
  for (const TensorBound &t : bounds->tensors) {
    if (!t.upper) continue;
    for (size_t i = 0; i < t.upper->size(); ++i) {
      const auto &u = (*t.upper)[i];
      const Dimension &d = t.fact->shape[i];
      if (!u || !d.expr() || d.expr()->hasAnonymous) continue;
      for (bool high : {false, true}) {
        auto v = evaluate(d.expr(), [&](SymbolId s) -> std::optional<int64_t> {
          const Interval &r = symbolInfo(s).range;
          if (high && r.hi != kInf) return r.hi;
          return std::max<int64_t>(r.lo, 0);
        });
        if (v.ok())
          EXPECT_LE(*v, *u) << where << ": " << t.name << " dim " << i << " " << d.toString();
      }
    }
  }
}

fs::path sourceDir() {
  if (const char *src = std::getenv("SF_SOURCE_DIR"); src && *src) return src;
  return SF_SOURCE_DIR_DEFAULT;
}

TEST(LowerProperty, EveryGoldenGraph) {
  size_t cases = 0;
  for (const auto &entry : fs::recursive_directory_iterator(sourceDir() / "tests" / "golden")) {
    if (entry.path().extension() != ".txt" || entry.path().filename() == "CMakeLists.txt") continue;
    std::vector<std::string> parts = golden::goldenCases(entry.path());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parseGraph(parts[i]).ok()) continue;
      ++cases;
      checkAll([&] { return parseGraph(parts[i]); },
               entry.path().filename().string() + " case " + std::to_string(i));
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(cases, 250u);
}

TEST(LowerProperty, EveryDevModel) {
  const char *dir = std::getenv("SF_DEV_MODELS");
  if (!dir || !*dir) GTEST_SKIP() << "SF_DEV_MODELS is not set (the dev corpus folder)";
  size_t models = 0;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    std::string path = entry.path().string();
    checkAll(
        [&] {
          Diagnostics d;
          return onnx::loadModelFile(path, d);
        },
        entry.path().filename().string());
    ++models;
  }
  EXPECT_GT(models, 0u);
}

} // namespace
} // namespace sf::lower
