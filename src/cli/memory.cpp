// `shapeflow memory`: a model's memory in parts (weights, KV cache, activations, inputs and
// outputs) at bindings of its sizes, and the largest size that fits a budget.
#include "common.h"

#include "shapeflow/report/memory_report.h"

#include "shapeflow/dim/parse.h"
#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/support/format.h"

#include <iostream>
#include <set>

namespace sf::cli {
namespace {

struct MemoryArgs {
  ModelArgs model;
  std::vector<std::string> at, ties;
  std::string budget, forSymbol, part = "total";
  int64_t align = 64;
  bool json = false;
};

int runMemory(const MemoryArgs &a) {
  MemoryOptions options;
  options.align = a.align;
  for (const std::string &spec : a.at) {
    auto b = parseBinding(spec);
    if (!b.ok()) return fail(b.error().message);
    options.at.push_back(*b);
  }
  if (a.budget.empty() != a.forSymbol.empty()) return fail("--fit BYTES and --for SYM go together");
  if (!a.budget.empty()) {
    auto bytes = parseBytes(a.budget);
    if (!bytes.ok()) return fail("--fit " + bytes.error().message);
    options.budget = *bytes;
    options.fitSymbol = a.forSymbol;
    auto part = memoryPartNamed(a.part);
    if (!part) return fail("--fit-part: one of weights, kv_cache, activations, io, total, not '" + a.part + "'");
    options.fitPart = *part;
  }
  // A size of 0 in a row (an empty cache) is inferred from 0, as `check` does.
  auto m = inferWithContract(withEmptySizes(a.model, options.at));
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = *m->model;
  for (const std::string &spec : a.ties) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) return fail("--tie expects SYM=EXPR, got '" + spec + "'");
    ExprScope scope = r.graph.enter();
    std::set<std::string> known;
    for (const Contract::Symbol &s : m->contract.symbols) known.insert(s.name);
    std::string name = spec.substr(0, eq);
    if (!known.count(name)) return fail("--tie " + spec + ": the model's inputs have no size named '" + name + "'");
    auto d = parseDimension(spec.substr(eq + 1), r.graph.symbols);
    if (!d.ok()) return fail("--tie " + spec + ": " + d.error().message);
    if (d->expr())
      for (SymbolId s : symbolsOf(d->expr()))
        if (!known.count(symbolInfo(s).name))
          return fail("--tie " + spec + ": '" + symbolInfo(s).name + "' is not a size of the model's inputs");
    options.ties.emplace_back(name, d->isStatic() ? constant(d->length()) : d->expr());
  }
  if (r.diags.hasErrors()) return failAfterErrors(r.diags, "memory", "the model has errors at these sizes");
  // A row the symbolic parts give no number for: the model inferred again at the row's sizes.
  options.inferAt = [&](const Binding &at) -> Result<Graph> {
    ModelArgs concrete = a.model;
    concrete.dims.clear();
    ExprScope scope = r.graph.enter();
    for (OutletId o : r.graph.inputs) {
      const Outlet &in = r.graph.outlet(o);
      if (r.graph.nodes[o.node].isCaptured() || (in.fact.constant && in.fact.constant->hasData()) ||
          !in.fact.shape.rankIsStatic())
        continue;
      std::vector<std::string> dims;
      for (const Dimension &d : in.fact.shape.dims()) {
        if (d.isStatic()) {
          dims.push_back(std::to_string(d.length()));
          continue;
        }
        auto v = d.expr() ? evaluate(d.expr(), [&](SymbolId s) -> std::optional<int64_t> {
          auto it = at.find(symbolInfo(s).name);
          if (it == at.end()) return std::nullopt;
          return it->second;
        }) : Result<int64_t>(makeError("no expression"));
        if (!v.ok()) return errorf("input '{}' ({}) has a size the row does not give", in.name, in.fact);
        dims.push_back(std::to_string(*v));
      }
      concrete.inputs.push_back(fmt::format("{}={}", in.name, fmt::join(dims, ",")));
    }
    SF_ASSIGN(auto c, loadAndInfer(concrete));
    if (c->diags.hasErrors()) return errorf("at the sizes {}: the model has errors", fmt::join(concrete.inputs, " "));
    return std::move(c->graph);
  };
  auto report = memoryReport(r.graph, m->contract, a.model.path, options);
  if (!report.ok()) return fail(report.error().message);
  if (a.json) std::cout << memoryJson(*report).dump(1) << "\n";
  else printMemory(*report, std::cout);
  return 0;
}

} // namespace

Command addMemory(CLI::App &app) {
  auto args = std::make_shared<MemoryArgs>();
  CLI::App *cmd = app.add_subcommand(
      "memory", "memory in parts (weights, KV cache, activations, inputs and outputs) at sizes of the inputs, "
                "and the largest size that fits a budget");
  args->model.add(cmd);
  cmd->add_option("--at", args->at, "a row at SYM=V[,SYM=V...] (repeatable; sizes the model ties follow)");
  cmd->add_option("--tie", args->ties,
                  "SYM=EXPR: a size given by others at every row (total_sequence_length=past_sequence_length+sequence_length)");
  cmd->add_option("--fit", args->budget, "a budget (8GiB, 512MiB, 1.5GB, bytes): the largest --for size within it");
  cmd->add_option("--for", args->forSymbol, "the size --fit searches, the others at the first --at");
  cmd->add_option("--fit-part", args->part, "what must fit: total (default), activations, kv_cache, io, weights");
  cmd->add_option("--align", args->align, "alignment of every buffer of the plan, in bytes (64)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  return {cmd, [args] { return runMemory(*args); }};
}

} // namespace sf::cli
