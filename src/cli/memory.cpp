// `shapeflow memory`: a model's memory in parts (weights, KV cache, activations, inputs and
// outputs) at bindings of its sizes, and the largest size that fits a budget.
#include "common.h"

#include "shapeflow/report/memory_report.h"


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
  MemoryRequest request;
  request.align = a.align;
  request.ties = a.ties;
  for (const std::string &spec : a.at) {
    auto b = parseBinding(spec);
    if (!b.ok()) return fail(b.error().message);
    request.at.push_back(*b);
  }
  if (a.budget.empty() != a.forSymbol.empty()) return fail("--fit BYTES and --for SYM go together");
  if (!a.budget.empty()) {
    auto bytes = parseBytes(a.budget);
    if (!bytes.ok()) return fail("--fit " + bytes.error().message);
    request.budget = *bytes;
    request.fitSymbol = a.forSymbol;
    auto part = memoryPartNamed(a.part);
    if (!part) return fail("--fit-part: one of weights, kv_cache, activations, io, total, not '" + a.part + "'");
    request.fitPart = *part;
  }
  auto options = a.model.options();
  if (!options.ok()) return fail(options.error().message);
  auto report = modelMemory(fileModel(a.model.path), *options, request, a.model.path);
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
