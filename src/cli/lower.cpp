// `shapeflow lower`: dynamic shapes lowered to explicit shape values, upper bounds, buffers.
#include "common.h"

#include "shapeflow/lower/bounds.h"
#include "shapeflow/lower/buffers.h"
#include "shapeflow/report/lower_report.h"

#include <iostream>

namespace sf::cli {
namespace {

struct LowerArgs {
  ModelArgs model;
  std::string stage = "shapes";
  bool json = false;
};

int runLower(const LowerArgs &a) {
  auto m = loadAndInfer(a.model);
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = **m;
  auto program = lower::lowerShapes(r.graph);
  if (!program.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "lowering", program.error().message);
  if (!program.ok()) return fail(program.error().message);
  LowerReport report{a.model.path, &r.graph, &*program, nullptr, nullptr};
  std::vector<std::string> lines;
  std::string text;
  std::optional<lower::BoundsReport> bounds;
  std::optional<lower::BufferPlan> buffers;
  if (a.stage == "shapes") {
    if (a.json) text = shapesJsonText(report, 1);
    else lines = shapeLines(report);
  } else if (a.stage == "bounds") {
    auto b = lower::computeBounds(r.graph);
    if (!b.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "bounds", b.error().message);
    if (!b.ok()) return fail(b.error().message);
    bounds = std::move(*b);
    report.bounds = &*bounds;
    if (a.json) text = boundsJsonText(report, 1);
    else lines = boundLines(report);
  } else {
    auto p = lower::planBuffers(*program);
    if (!p.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "buffer plan", p.error().message);
    if (!p.ok()) return fail(p.error().message);
    buffers = std::move(*p);
    report.plan = &*buffers;
    if (a.json) text = buffersJsonText(report, 1);
    else lines = bufferLines(report);
  }
  if (a.json) std::cout << text << "\n";
  else
    for (const std::string &l : lines) std::cout << l << "\n";
  printErrors(r.diags);
  return r.diags.hasErrors() ? 1 : 0;
}

} // namespace

Command addLower(CLI::App &app) {
  auto args = std::make_shared<LowerArgs>();
  CLI::App *cmd = app.add_subcommand(
      "lower", "dynamic shapes lowered: shapes as explicit values, upper bounds and what is missing for "
               "them, buffers and lifetimes");
  args->model.add(cmd);
  cmd->add_option("--stage", args->stage, "shapes | bounds | buffers")
      ->check(CLI::IsMember({"shapes", "bounds", "buffers"}));
  cmd->add_flag("--json", args->json, "print one JSON object");
  return {cmd, [args] { return runLower(*args); }};
}

} // namespace sf::cli
