// libFuzzer harness: a graph generator. The fuzzer's bytes choose well-formed graphs (the IR's
// verifier accepts them) whose nodes are ops drawn from the registry with inputs of random ranks,
// dims (numbers, named symbols, intervals, unknowns), types, small constant shape inputs, common
// attributes with random values, and nested If/Loop/Scan bodies, so that the op rules see inputs
// no exported model has. Inference must not crash, hang or report a tensor dim below 0; the report
// and the text form must print, and the printed graph must parse back. Build and run:
// scripts/fuzz.sh.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/report.h"
#include "graph_gen.h"

#include <sstream>

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sf {
namespace {

[[noreturn]] void fail(const std::string &what, const Graph &g, const std::string &before = "") {
  std::fprintf(stderr, "property violated: %s\n%s\n", what.c_str(), printGraph(g).c_str());
  if (!before.empty()) std::fprintf(stderr, "before inference:\n%s\n", before.c_str());
  std::abort();
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
  for (int64_t n = gen.between(1, 3); n > 0; --n) {
    auto o = g.addParameter("x" + std::to_string(n), gen.fact());
    if (o.ok()) values.push_back(*o);
  }
  gen.fill(g, values, size_t(gen.between(1, 24)));
  for (int64_t n = gen.between(1, 2); n > 0 && !values.empty(); --n)
    g.outputs.push_back(gen.pick(values));
  if (!g.verify().ok()) return 0;
  std::string before = printGraph(g);
  Diagnostics diags;
  InferStats stats = inferGraph(g, diags);
  for (const Node &n : g.nodes)
    for (const Outlet &o : n.outputs)
      if (o.fact.shape.rankIsStatic())
        for (const Dimension &d : o.fact.shape.dims())
          if (d.minLength() < 0) fail("a dim below 0 in " + toString(o.fact), g, before);
  for (bool names : {true, false}) {
    Report report{"fuzz", &g, &diags, stats, names};
    nlohmann::json doc = nlohmann::json::parse(jsonText(toJson(report)), nullptr, false);
    std::ostringstream os;
    writeJson(report, os, 0);
    if (nlohmann::json::parse(os.str(), nullptr, false) != doc) fail("the streamed JSON differs from the document", g, before);
    std::ostringstream text;
    printText(report, text);
  }
  auto back = parseGraph(before);
  if (!back.ok()) fail("the printed graph does not parse: " + back.error().message, g);
  return 0;
}
