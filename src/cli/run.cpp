// `shapeflow run`: the model run by the executor on given or random data, each kernel's outputs
// checked against its op's shape rule; the run prepared once (eval/session.h), timed, profiled.
#include "common.h"

#include "shapeflow/eval/npy.h"
#include "shapeflow/eval/session.h"
#include "shapeflow/report/run_report.h"
#include "shapeflow/support/format.h"

#include <chrono>
#include <filesystem>
#include <iostream>

namespace sf::cli {
namespace {

struct RunArgs {
  ModelArgs model;
  std::vector<std::string> feeds, inputs; // --feed, and --input (its old spelling)
  std::string outDir;
  bool json = false, profile = false, noArena = false, noFuse = false;
  uint64_t seed = 1;
  int64_t maxMemory = 0;
  int repeat = 0, threads = 1;
};

/// `NAME=FILE.npy` or `NAME=random:D0,D1,...` (empty after the colon: a scalar).
Result<std::pair<std::string, Tensor>> parseFeed(const std::string &spec, const Graph &g, uint64_t seed) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return errorf("--feed expects NAME=FILE.npy or NAME=random:SHAPE, got '{}'", spec);
  std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
  const Fact *fact = nullptr;
  for (OutletId o : g.inputs)
    if (g.outlet(o).name == name) fact = &g.fact(o);
  if (!fact) return errorf("--feed {}: the model has no input '{}'", spec, name);
  if (value.rfind("random:", 0) != 0) {
    SF_ASSIGN(Tensor t, eval::readNpy(value));
    return std::pair{name, std::move(t)};
  }
  Shape shape;
  std::string dims = value.substr(7);
  for (size_t at = 0; at < dims.size();) {
    size_t comma = dims.find(',', at);
    std::string d = dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char *end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end || v < 0) return errorf("--feed {}: '{}' is not a size", spec, d);
    shape.push_back(v);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (fact->type == ElementType::Undefined)
    return errorf("--feed {}: the input's element type is unknown; give a .npy file", spec);
  SF_ASSIGN(Tensor t, eval::randomTensor(fact->type, shape, seed));
  return std::pair{name, std::move(t)};
}

/// The feeds given, and random data for every other input whose shape is static.
Result<std::map<std::string, Value>> feedsOf(const RunArgs &a, const Graph &g) {
  std::map<std::string, Value> feeds;
  uint64_t seed = a.seed;
  std::vector<std::string> specs = a.feeds;
  specs.insert(specs.end(), a.inputs.begin(), a.inputs.end());
  for (const auto &spec : specs) {
    SF_ASSIGN(auto in, parseFeed(spec, g, seed++));
    feeds[in.first] = Value(std::make_shared<const Tensor>(std::move(in.second)));
  }
  for (OutletId o : g.inputs) {
    const Outlet &out = g.outlet(o);
    if (feeds.count(out.name) || (out.fact.constant && out.fact.constant->hasData())) continue;
    const Fact &f = out.fact;
    std::optional<Shape> shape;
    if (f.shape.rankIsStatic())
      if (auto s = f.shape.toShape(); s.ok()) shape = *s;
    if (!shape || f.type == ElementType::Undefined)
      return errorf("input '{}' is {}: give it (--feed {}=FILE.npy or {}=random:SHAPE)", out.name, f, out.name,
                    out.name);
    SF_ASSIGN(Tensor t, eval::randomTensor(f.type, *shape, seed++));
    feeds[out.name] = Value(std::make_shared<const Tensor>(std::move(t)));
  }
  return feeds;
}

/// Sizes of 0 in the data (an empty KV cache) for named sizes the model takes to be at least 1:
/// the model inferred again with those sizes from 0, as `--dim SYM=0..` would (a note says so).
Result<void> inferAgainWithEmptySizes(const RunArgs &a, const std::map<std::string, Value> &feeds,
                                      std::unique_ptr<Inferred> &m) {
  std::map<std::string, Shape> shapes;
  bool empty = false;
  for (OutletId o : m->graph.inputs) {
    const Outlet &in = m->graph.outlet(o);
    auto it = feeds.find(in.name);
    if (it == feeds.end() || !it->second.isTensor()) continue;
    const Shape &shape = shapes[in.name] = it->second.tensor()->shape();
    if (in.fact.shape.rankIsStatic() && in.fact.shape.size() == shape.size())
      for (size_t i = 0; i < shape.size(); ++i) empty |= shape[i] == 0 && in.fact.shape[i].minLength() >= 1;
  }
  if (!empty) return success();
  std::vector<std::string> widened;
  SF_ASSIGN(auto again, loadAndInfer(a.model, onnx::ImportOptions{.decodeLarge = true},
                                     [&](Graph &g) { widened = admitEmptySizes(g, shapes); }));
  if (widened.empty()) return success();
  if (!a.json)
    std::cerr << fmt::format("note: {} is 0 in the data: the model is inferred with {} from 0 (empty tensors)\n",
                             fmt::join(widened, ", "), widened.size() == 1 ? "it" : "them");
  m = std::move(again);
  return success();
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int runRun(const RunArgs &a) {
  if (!a.inputs.empty())
    std::cerr << "shapeflow: note: run --input NAME=DATA is now spelt --feed NAME=DATA (--input gives a "
                 "shape everywhere else); the old spelling goes in the next release\n";
  auto m = loadAndInfer(a.model, onnx::ImportOptions{.decodeLarge = true});
  if (!m.ok()) return fail(m.error().message);
  auto feeds = feedsOf(a, (*m)->graph);
  if (!feeds.ok()) return fail(feeds.error().message);
  if (auto widened = inferAgainWithEmptySizes(a, *feeds, *m); !widened.ok()) return fail(widened.error().message);
  ExprScope scope = (*m)->graph.enter();
  auto session = eval::prepareSession(std::move((*m)->graph), *feeds, {.fuse = !a.noFuse, .arena = !a.noArena});
  if (!session.ok()) return fail(session.error().message);
  const eval::ExecPlan &plan = *(*session)->plan;
  eval::RunOptions ro;
  ro.maxMemory = a.maxMemory;
  ro.threads = a.threads;
  auto t0 = std::chrono::steady_clock::now();
  auto result = eval::run(plan, *feeds, ro);
  double ms = msSince(t0);
  if (!result.ok()) {
    std::cerr << "error: " << result.error().message << "\n";
    return 1;
  }
  // --profile: time per op over the repeated runs (a second run when there are none).
  std::map<std::string, eval::OpTime> profile;
  if (a.profile) {
    ro.profile = &profile;
    if (a.repeat == 0)
      if (auto again = eval::run(plan, *feeds, ro); !again.ok()) return fail(again.error().message);
  }
  // --repeat R: R more runs, timed one by one; their median. They take the first run's inputs,
  // whose every output the first run checked against the shape rules: the same outputs again,
  // not checked again (timed as a user runs).
  ro.checkRules = false;
  std::vector<double> times;
  for (int r = 0; r < a.repeat; ++r) {
    auto t1 = std::chrono::steady_clock::now();
    auto again = eval::run(plan, *feeds, ro);
    times.push_back(msSince(t1));
    if (!again.ok()) {
      std::cerr << "error: " << again.error().message << "\n";
      return 1;
    }
  }
  RunReport report{a.model.path, session->get(), &*result, ms, std::nullopt, a.repeat, a.threads,
                   a.profile ? &profile : nullptr, double(std::max(1, a.repeat)), a.outDir};
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    size_t h = times.size() / 2;
    report.medianMs = times.size() % 2 ? times[h] : (times[h - 1] + times[h]) / 2;
  }
  if (!a.outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.outDir, ec);
    if (ec) return fail(a.outDir + ": " + ec.message());
  }
  auto j = runJson(report);
  if (!j.ok()) return fail(j.error().message);
  if (a.json) std::cout << j->dump(1) << "\n";
  else printRun(*j, std::cout);
  return 0;
}

} // namespace

Command addRun(CLI::App &app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App *cmd = app.add_subcommand(
      "run", "run the model with the reference executor, checking every kernel's output shape against its "
             "op's shape rule");
  args->model.add(cmd, false);
  cmd->add_option("--feed", args->feeds,
                  "an input's elements: NAME=FILE.npy | NAME=random:D0,D1,... (inputs not given with a "
                  "static shape get random data)");
  cmd->add_option("--input", args->inputs, "the old spelling of --feed (for one release; a note says so)");
  cmd->add_option("--out", args->outDir, "write each graph output as DIR/NAME.npy");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--seed", args->seed, "seed of the random inputs (1)");
  cmd->add_flag("--profile", args->profile,
                "time each op (its kernels, and the checks against the shape rules: with --repeat the repeated "
                "runs are timed, and they are not checked)");
  cmd->add_flag("--no-arena", args->noArena, "tensors on the heap, not at the memory plan's offsets in one arena");
  cmd->add_flag("--no-fuse", args->noFuse,
                "run the graph as it is, without the executor's rewrites (what the inputs' sizes fix folded "
                "into constants, a convolution and its activation in one op, GELU's five ops in one)");
  cmd->add_option("--repeat", args->repeat,
                  "run R more times after the first and report the median time of one run (the same inputs: "
                  "their outputs are checked against the shape rules on the first run only)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--threads", args->threads, "threads of the matrix products (1)")->check(CLI::Range(1, 1024));
  cmd->add_option("--max-memory", args->maxMemory, "bytes of tensors alive at once (default: half the machine's memory)");
  return {cmd, [args] { return runRun(*args); }};
}

} // namespace sf::cli
