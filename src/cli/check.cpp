// `shapeflow check`: the inference checks itself against runs of the executor at sample sizes.
#include "common.h"

#include "shapeflow/eval/check.h"
#include "shapeflow/report/run_report.h"

#include <iostream>
#include <set>

namespace sf::cli {
namespace {

struct CheckArgs {
  ModelArgs model;
  std::vector<std::string> at;
  size_t samples = 4;
  bool json = false;
  int64_t maxMemory = 0;
};

int runCheck(const CheckArgs &a) {
  eval::CheckOptions co;
  co.samples = a.samples;
  co.maxMemory = a.maxMemory;
  for (const auto &spec : a.at) {
    auto b = parseBinding(spec);
    if (!b.ok()) return fail(b.error().message);
    co.bindings.push_back(*b);
  }
  auto m = loadAndInfer(withEmptySizes(a.model, co.bindings), onnx::ImportOptions{.decodeLarge = true});
  if (!m.ok()) return fail(m.error().message);
  auto r = eval::checkInference((*m)->graph, co);
  if (!r.ok()) return fail(r.error().message);
  if (a.json) std::cout << checkJson(a.model.path, *r).dump(1) << "\n";
  else printCheck(*r, std::cout);
  return r->passed() ? 0 : 1;
}

} // namespace

Command addCheck(CLI::App &app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App *cmd = app.add_subcommand(
      "check", "the inference checks itself: run the model at sample sizes and compare every tensor, bodies "
               "included, with its inferred type and shape");
  // --input and --value as for infer: a declared value (total_sequence_length=past+seq) is what
  // the samples feed that input.
  args->model.add(cmd);
  cmd->add_option("--samples", args->samples,
                  "samples drawn from what the model admits (its ranges, equalities and conditions; 4)");
  cmd->add_option("--at", args->at, "one sample: SYM=V[,SYM=V...] (repeatable; replaces --samples)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--max-memory", args->maxMemory, "bytes of tensors alive at once");
  return {cmd, [args] { return runCheck(*args); }};
}

} // namespace sf::cli
