// libFuzzer harness: the executor on generated graphs (graph_gen.h: registry ops with random
// inputs, attributes and bodies) whose inputs are small static tensors of random data. A run
// must not crash, hang or allocate past its budget; it may fail with an error. Where it
// succeeds, the same graph run in the arena laid out from its memory plan (eval/arena.h) must
// succeed too with the same output bytes, and the executor must not have refused a place the
// plan gave (the plan and the run disagreeing about a tensor's lifetime). And the simplifier's
// graph (rewrite/: simplifyPasses) computes the same outputs, on the heap and in its own arena,
// and simplifying it again changes nothing. Build and run: scripts/fuzz.sh 60 eval.
#include "shapeflow/eval/arena.h"
#include "shapeflow/eval/evaluator.h"
#include "shapeflow/rewrite/rewrite.h"
#include "../eval/same_bytes.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "graph_gen.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sf {
namespace {

/// A bound on the bodies a run may execute (a Loop of 2^24 trips is a valid model, and too slow
/// for one input of a fuzzer under ASan).
constexpr int64_t kMaxBodyRuns = 1 << 14;

[[noreturn]] void fail(const std::string &what, const Graph &g) {
  std::fprintf(stderr, "property violated: %s\n%s\n", what.c_str(), printGraph(g).c_str());
  std::abort();
}

/// The simplified graph computes what `g` computed (`heap`), on the heap and in its arena, and a
/// second simplification rewrites nothing.
void checkSimplified(const Graph &g, const std::map<std::string, Tensor> &inputs,
                     const std::map<std::string, Value> &given, const eval::RunResult &heap) {
  Graph s = g.clone();
  eval::KernelEvaluator evaluator(int64_t(64) << 20);
  rewrite::PassContext ctx{s, eval::evalRegistry(), &evaluator};
  const auto passes = rewrite::simplifyPasses();
  auto counts = rewrite::runPasses(ctx, passes, 16);
  if (!counts.ok()) fail("simplify: " + counts.error().message, g);
  if (auto v = s.verify(); !v.ok()) fail("the simplified graph does not verify: " + v.error().message, g);
  eval::RunOptions options;
  options.maxMemory = int64_t(64) << 20;
  options.maxBodyRuns = kMaxBodyRuns;
  auto run = eval::run(s, inputs, options);
  if (!run.ok()) fail("the graph runs, its simplified graph fails: " + run.error().message + "\n" + printGraph(s), g);
  auto layout = eval::planArena(s, given);
  if (!layout.ok()) fail("the simplified graph has no arena: " + layout.error().message, g);
  options.arena = &*layout;
  auto inArena = eval::run(s, inputs, options);
  if (!inArena.ok()) fail("the simplified graph fails in its arena: " + inArena.error().message, g);
  for (size_t k = 0; k < heap.outputs.size(); ++k)
    if (!eval::sameValues(heap.outputs[k], run->outputs[k]) || !eval::sameValues(heap.outputs[k], inArena->outputs[k]))
      fail("output " + std::to_string(k) + " differs after simplification\n" + printGraph(s), g);
  auto again = rewrite::runPasses(ctx, passes, 16);
  if (!again.ok()) fail("simplify again: " + again.error().message, g);
  for (const auto &c : *again)
    if (c.rewrites) fail("simplifying twice rewrites again (" + c.name + ")\n" + printGraph(s), g);
}

} // namespace
} // namespace sf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sf;
  FuzzedDataProvider provider(data, size);
  Graph g;
  g.context = makeExprContext();
  ExprScope scope(g.context);
  g.symbols.setDefaultRange({1, kInf});
  fuzz::Gen gen{provider, g.symbols};
  std::vector<OutletId> values;
  std::map<std::string, Tensor> inputs;
  static const std::vector<ElementType> kTypes = {ElementType::F32, ElementType::F32, ElementType::I64,
                                                  ElementType::I32, ElementType::Bool, ElementType::F64,
                                                  ElementType::F8E4M3FN, ElementType::I4};
  for (int64_t n = gen.between(1, 3); n > 0; --n) {
    Shape shape;
    for (int64_t r = gen.between(0, 4); r > 0; --r) shape.push_back(gen.between(0, 6));
    ElementType t = gen.pick(kTypes);
    std::string name = "x" + std::to_string(n);
    auto o = g.addParameter(name, Fact::known(t, PartialShape(shape)));
    if (!o.ok()) continue;
    auto x = eval::randomTensor(t, shape, uint64_t(n) * 7919 + size);
    if (!x.ok()) return 0;
    inputs.emplace(name, std::move(*x));
    values.push_back(*o);
  }
  gen.fill(g, values, size_t(gen.between(1, 16)));
  for (int64_t n = gen.between(1, 2); n > 0 && !values.empty(); --n) g.outputs.push_back(gen.pick(values));
  if (!g.verify().ok()) return 0;
  // Loops and scans run as many times as their inputs say: bounded by not running them (the
  // simplifier folds what it can without a bound), and those in bodies by maxBodyRuns.
  for (const Node &n : g.nodes)
    if (n.opType == "Loop" || n.opType == "Scan" || n.opType == "SequenceMap") return 0;
  Diagnostics diags;
  inferGraph(g, diags);
  // SF_FUZZ_PRINT=1 while replaying an input: the graph it makes, before it runs (a timeout
  // says nothing of the graph).
  if (const char *print = std::getenv("SF_FUZZ_PRINT"); print && *print) std::fprintf(stderr, "%s\n", printGraph(g).c_str());
  eval::RunOptions options;
  options.maxMemory = int64_t(64) << 20;
  options.maxBodyRuns = kMaxBodyRuns;
  auto heap = eval::run(g, inputs, options);
  if (!heap.ok()) return 0;
  std::map<std::string, Value> given;
  for (const auto &[k, t] : inputs) given.emplace(k, Value(std::make_shared<const Tensor>(t)));
  auto layout = eval::planArena(g, given);
  if (!layout.ok()) return 0;
  options.arena = &*layout;
  auto inArena = eval::run(g, inputs, options);
  if (!inArena.ok()) fail("the heap run succeeds, the arena run fails: " + inArena.error().message, g);
  if (inArena->arena && !inArena->arena->refused.empty())
    fail("the executor refused a place the plan gave: " + inArena->arena->refused[0], g);
  for (size_t k = 0; k < heap->outputs.size(); ++k)
    if (!eval::sameBytes(heap->outputs[k], inArena->outputs[k]))
      fail("output " + std::to_string(k) + " differs between the heap and the arena", g);
  checkSimplified(g, inputs, given, *heap);
  return 0;
}
