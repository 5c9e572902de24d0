// The run's arena over the golden corpus: every golden graph whose inputs' dims are numbers or
// symbols, its symbols bound to a small size, run on random data on the heap and in the arena
// laid out from its memory plan. Where the heap run succeeds, the arena run must too, with the
// same output bytes, and the executor must have refused no place the plan gave (a refusal is
// the plan and the run disagreeing about a tensor's lifetime).
#include "shapeflow/eval/arena.h"
#include "same_bytes.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "../golden/golden_cases.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace sf::eval {
namespace {

fs::path sourceDir() {
  if (const char *src = std::getenv("SF_SOURCE_DIR"); src && *src) return src;
  return SF_SOURCE_DIR_DEFAULT;
}

/// Random inputs with every symbol of the inputs' dims at `size` (within its range); none when
/// a dim is neither a number nor a symbol, or an input has no type.
std::optional<std::map<std::string, Value>> inputsAt(const Graph &g, int64_t size) {
  std::map<std::string, Value> out;
  uint64_t seed = 11;
  for (OutletId o : g.inputs) {
    const Outlet &in = g.outlet(o);
    const Fact &f = in.fact;
    if (f.constant && f.constant->hasData()) continue;
    if (!f.shape.rankIsStatic() || f.type == ElementType::Undefined || f.type == ElementType::String)
      return std::nullopt;
    Shape shape;
    for (const Dimension &d : f.shape.dims()) {
      if (d.isStatic()) shape.push_back(d.length());
      else if (d.expr() && d.expr()->kind == ExprKind::Sym) {
        Interval r = symbolInfo(d.expr()->sym).range;
        shape.push_back(std::clamp<int64_t>(size, r.lo, r.hi == kInf ? size : r.hi));
      } else return std::nullopt;
    }
    int64_t count = 1;
    for (int64_t d : shape) count = d > (int64_t(1) << 20) / std::max<int64_t>(count, 1) ? int64_t(1) << 21 : count * d;
    if (count > (int64_t(1) << 20)) return std::nullopt; // a file's claim, not data to make
    auto t = randomTensor(f.type, shape, seed++);
    if (!t.ok()) return std::nullopt;
    out.emplace(in.name, Value(std::make_shared<const Tensor>(std::move(*t))));
  }
  return out;
}


TEST(ArenaProperty, EveryGoldenGraphRunsTheSameInItsArena) {
  size_t graphs = 0, ran = 0, laidOut = 0, placed = 0, inPlace = 0;
  std::string problems;
  for (const auto &entry : fs::recursive_directory_iterator(sourceDir() / "tests" / "golden")) {
    if (entry.path().extension() != ".txt") continue;
    std::vector<std::string> parts = golden::goldenCases(entry.path());
    for (size_t i = 0; i < parts.size(); ++i) {
      auto parsed = parseGraph(parts[i]);
      if (!parsed.ok()) continue;
      Graph g = std::move(*parsed);
      ExprScope scope = g.enter();
      Diagnostics d;
      inferGraph(g, d);
      std::string where = entry.path().filename().string() + " case " + std::to_string(i);
      for (int64_t size : {2, 5}) {
        auto started = std::chrono::steady_clock::now();
        struct Slow {
          std::chrono::steady_clock::time_point t;
          std::string w;
          ~Slow() {
            double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
            if (s > 0.5 && std::getenv("SF_TRACE")) std::fprintf(stderr, "%s: %.1f s\n", w.c_str(), s);
          }
        } slow{started, where};
        auto inputs = inputsAt(g, size);
        if (!inputs) break;
        ++graphs;
        RunOptions options;
        options.maxMemory = int64_t(256) << 20;
        auto heap = run(g, *inputs, options);
        if (!heap.ok()) continue;
        ++ran;
        auto layout = planArena(g, *inputs);
        if (!layout.ok()) continue;
        ++laidOut;
        options.arena = &*layout;
        auto inArena = run(g, *inputs, options);
        if (!inArena.ok()) {
          problems += where + ": the arena run fails: " + inArena.error().message + "\n";
          continue;
        }
        if (!inArena->arena) {
          problems += where + ": no arena used\n";
          continue;
        }
        placed += inArena->arena->placed;
        inPlace += inArena->arena->inPlace;
        for (const auto &r : inArena->arena->refused) problems += where + ": refused " + r + "\n";
        for (size_t k = 0; k < heap->outputs.size(); ++k)
          if (!sameBytes(heap->outputs[k], inArena->outputs[k]))
            problems += where + ": output " + std::to_string(k) + " differs\n";
      }
    }
  }
  EXPECT_TRUE(problems.empty()) << problems;
  EXPECT_GT(laidOut, 150u);
  EXPECT_GT(placed, 250u);
  EXPECT_GT(inPlace, 20u);
  std::printf("golden graphs with inputs: %zu, ran: %zu, in an arena: %zu, tensors placed: %zu (%zu in place)\n",
              graphs, ran, laidOut, placed, inPlace);
}

} // namespace
} // namespace sf::eval
