// The `shapeflow` command. Subcommands share how a model is loaded and its inputs are given
// (MODEL, --input NAME=DIMS, --dim SYM=LO..HI), then inference:
//   shapeflow infer MODEL [--json] [--out FILE.onnx]   the facts of every tensor
//   shapeflow stats MODEL [--json | --csv] [--svg FILE] [--device FILE] [--at SYM=V]
//                         [--sweep SYM]
//                                                      per-node and per-model cost statistics
//   shapeflow lower MODEL [--stage shapes|bounds|buffers] [--json]
//                                                      dynamic shapes lowered (seed 002)
//   shapeflow plan MODEL [--align N] [--order model|memory] [--json] [--svg FILE] [--at SYM=V]
//                        [--reference SYM=V] [--caller-owned-io] [--verify]
//                                                      the static memory plan
//   shapeflow check-plan PLAN.json                     the plan's verifier, from its JSON alone
// Exit status: 0 clean, 1 the model has errors (results are still printed), 2 usage or I/O
// error.
#include "shapeflow/cost/stats.h"
#include "shapeflow/infer/domain.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/export.h"
#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/eval/check.h"
#include "shapeflow/eval/arena.h"
#include "shapeflow/eval/eval.h"
#include "shapeflow/eval/npy.h"
#include "shapeflow/lower/plan_check.h"
#include "shapeflow/report/lower_report.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/contract.h"
#include "shapeflow/report/report.h"
#include "shapeflow/report/why.h"
#include "shapeflow/report/stats_report.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <cctype>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

namespace sf::cli {
namespace {

int fail(const std::string &message) {
  std::cerr << "shapeflow: " << message << "\n";
  return 2;
}

/// A later stage (lowering, planning) could not run on a model whose inference found errors:
/// the errors are what the user must see, the stage's own complaint only after them. Exit 1.
int failAfterErrors(const Diagnostics &diags, const std::string &stage, const std::string &message) {
  for (const Diagnostic &d : diags.list())
    if (d.severity == Severity::Error) std::cerr << "error: " << format(d) << "\n";
  std::cerr << "shapeflow: the model has errors (above), so no " << stage << " was made (" << message << ")\n";
  return 1;
}

/// What every subcommand is given about the model.
struct ModelArgs {
  std::string path;
  std::vector<std::string> inputs, dims, values;
  bool strict = false;
  std::string backward = "auto";

  void add(CLI::App *cmd) {
    cmd->add_option("MODEL", path, "an .onnx model or a text-form graph")->required();
    cmd->add_option("--input", inputs,
                    "override an input's shape: x=1,3,224,224 | x=N,3,H,W | x=[1..8,3,?,?] | s=[]");
    cmd->add_option("--dim", dims, "bound a symbol: N=1..64");
    cmd->add_option("--value", values, "the elements of an integer input: k=3 | shape=1,N,64");
    cmd->add_flag("--strict", strict,
                  "every assumption inference makes (a named dim is at least 1, a computed Reshape "
                  "entry is not 0, an If's unknown branch) is an error: exit 1");
    cmd->add_option("--backward", backward,
                    "backward inference (facts from the ops reading an input back to it): auto "
                    "(where an input's rank or element type is unknown), always, off")
        ->check(CLI::IsMember({"auto", "always", "off"}));
  }
};

/// A loaded and inferred model.
struct Inferred {
  Graph graph;
  Diagnostics diags;
  InferStats stats;
};

/// Loads, applies the inputs and infers; an error message (exit status 2) when that fails.
Result<std::unique_ptr<Inferred>> loadAndInfer(const ModelArgs &a,
                                               const std::function<void(const Graph &)> &beforeInference = {}) {
  auto m = std::make_unique<Inferred>();
  SF_ASSIGN(m->graph, onnx::loadGraphFile(a.path, m->diags));
  InferOptions options;
  for (const auto &d : a.dims) {
    SF_ASSIGN(DimBound b, parseDimBound(d));
    options.dims.push_back(b);
  }
  for (const auto &in : a.inputs) {
    SF_ASSIGN(InputShape s, parseInputShape(in));
    options.inputs.push_back(s);
  }
  for (const auto &v : a.values) {
    SF_ASSIGN(InputValue s, parseInputValue(v));
    options.values.push_back(s);
  }
  options.backward = a.backward == "always" ? Backward::Always
                     : a.backward == "off"  ? Backward::Off
                                            : Backward::Auto;
  SF_TRY(applyInputs(m->graph, options, &m->diags));
  if (beforeInference) beforeInference(m->graph);
  m->stats = inferGraph(m->graph, m->diags, options);
  if (a.strict) m->diags.promoteAssumptions();
  return m;
}

int runInfer(const ModelArgs &a, bool json, const std::string &outPath, bool noNames) {
  auto m = loadAndInfer(a);
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = **m;
  Report report{a.path, &r.graph, &r.diags, r.stats, !noNames};
  if (json) {
    writeJson(report, std::cout, 1);
    std::cout << "\n";
  }
  else printText(report, std::cout);
  if (!outPath.empty()) {
    // The model's bytes through a mapping (no parse, no copy in memory), then the annotation,
    // into a temporary file renamed over `outPath` at the end: `--out` may name the model itself.
    auto file = onnx::MappedFile::open(a.path);
    if (!file.ok()) return fail("cannot write " + outPath + ": " + file.error().message);
    std::string tmp = outPath + ".shapeflow-tmp";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fail("cannot write " + outPath + ": cannot open " + tmp);
    auto written = onnx::writeAnnotatedModel((*file)->bytes(), r.graph, out, a.path);
    out.close();
    std::error_code ec;
    if (written.ok() && out) std::filesystem::rename(tmp, outPath, ec);
    if (!written.ok() || !out || ec) {
      std::filesystem::remove(tmp, ec);
      return fail("cannot write " + outPath + ": " +
                  (!written.ok() ? written.error().message : std::string("I/O error")));
    }
  }
  return r.diags.hasErrors() ? 1 : 0;
}

/// `shapeflow contract`: the input sizes the model accepts and the nodes that say so. Exit 1 when
/// no sizes are accepted (inference fails at the sizes given or declared).
int runContract(const ModelArgs &a, bool json) {
  ContractBasis basis;
  // --strict does not apply: the contract is about sizes, and an assumption promoted to an
  // error would read as "no size is accepted". Its assumptions are listed with it instead.
  ModelArgs lenient = a;
  lenient.strict = false;
  auto m = loadAndInfer(lenient, [&](const Graph &g) { basis = contractBasis(g); });
  if (!m.ok()) return fail(m.error().message);
  Contract c = makeContract((*m)->graph, (*m)->diags, basis);
  if (json) std::cout << contractJson(c, a.path).dump(1) << "\n";
  else printContract(c, a.path, std::cout);
  return c.errors.empty() ? 0 : 1;
}

/// `shapeflow why`: how a dim was derived. Exit 2 for a tensor or axis that does not exist.
int runWhy(const ModelArgs &a, const std::string &spec) {
  auto m = loadAndInfer(a);
  if (!m.ok()) return fail(m.error().message);
  auto r = explainDim((*m)->graph, (*m)->diags, spec, std::cout);
  if (!r.ok()) return fail(r.error().message);
  return 0;
}

struct StatsArgs {
  bool json = false, csv = false;
  std::string svgPath, devicePath;
  std::vector<std::string> at;
  std::string sweep;
};

int runStats(const ModelArgs &a, const StatsArgs &s) {
  auto m = loadAndInfer(a);
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = **m;
  std::optional<Device> device;
  if (!s.devicePath.empty()) {
    std::ifstream in(s.devicePath);
    if (!in) return fail(s.devicePath + ": cannot open");
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) return fail(s.devicePath + ": not JSON");
    auto d = parseDevice(j);
    if (!d.ok()) return fail(s.devicePath + ": " + d.error().message);
    device = *d;
  }
  StatsOptions options;
  options.device = device ? &*device : nullptr;
  auto stats = computeStats(r.graph, options);
  if (!stats.ok()) return fail(stats.error().message);
  StatsReport report{a.path, &r.graph, &*stats, device, {}, {}};
  ExprScope scope = r.graph.enter();
  for (const auto &spec : s.at) {
    auto b = parseDimBound(spec);
    if (!b.ok() || b->range.lo != b->range.hi)
      return fail("--at expects SYM=VALUE, got '" + spec + "'");
    report.at[b->symbol] = b->range.lo;
  }
  if (auto known = checkNamesSymbols(r.graph, report.at); !known.ok()) return fail("--at: " + known.error().message);
  if (!s.sweep.empty() && !r.graph.symbols.find(s.sweep))
    return fail("--sweep: the model has no symbol '" + s.sweep + "'");
  report.sweep = s.sweep;
  if (s.json)
    std::cout << statsJsonText(report, 1) << "\n";
  else if (s.csv)
    printStatsCsv(report, std::cout);
  else
    printStatsText(report, std::cout);
  if (!s.svgPath.empty()) {
    std::ofstream out(s.svgPath);
    if (!(out << statsSvg(report))) return fail("cannot write " + s.svgPath);
  }
  for (const Diagnostic &d : r.diags.list())
    if (d.severity == Severity::Error) std::cerr << "error: " << format(d) << "\n";
  return r.diags.hasErrors() ? 1 : 0;
}

int runLower(const ModelArgs &a, const std::string &stage, bool json) {
  auto m = loadAndInfer(a);
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = **m;
  auto program = lower::lowerShapes(r.graph);
  if (!program.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "lowering", program.error().message);
  if (!program.ok()) return fail(program.error().message);
  LowerReport report{a.path, &r.graph, &*program, nullptr, nullptr};
  std::vector<std::string> lines;
  std::string text;
  if (stage == "shapes") {
    if (json)
      text = shapesJsonText(report, 1);
    else
      lines = shapeLines(report);
  } else if (stage == "bounds") {
    auto bounds = lower::computeBounds(r.graph);
    if (!bounds.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "bounds", bounds.error().message);
    if (!bounds.ok()) return fail(bounds.error().message);
    report.bounds = &*bounds;
    if (json)
      text = boundsJsonText(report, 1);
    else
      lines = boundLines(report);
  } else {
    auto plan = lower::planBuffers(*program);
    if (!plan.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "buffer plan", plan.error().message);
    if (!plan.ok()) return fail(plan.error().message);
    report.plan = &*plan;
    if (json)
      text = buffersJsonText(report, 1);
    else
      lines = bufferLines(report);
  }
  if (json) {
    std::cout << text << "\n";
  } else {
    for (const std::string &l : lines)
      std::cout << l << "\n";
  }
  for (const Diagnostic &d : r.diags.list())
    if (d.severity == Severity::Error) std::cerr << "error: " << format(d) << "\n";
  return r.diags.hasErrors() ? 1 : 0;
}

struct PlanArgs {
  int64_t align = 64;
  std::string order = "model";
  bool json = false, callerOwnedIO = false, verify = false;
  std::string svgPath;
  std::vector<std::string> at, reference;
};

/// `SYM=V` options into a map; false with a message on a malformed one.
bool bindingsOf(const std::vector<std::string> &specs, const char *option,
                std::map<std::string, int64_t> &out, std::string &err) {
  for (const auto &spec : specs) {
    auto b = parseDimBound(spec);
    if (!b.ok() || b->range.lo != b->range.hi) {
      err = std::string(option) + " expects SYM=VALUE, got '" + spec + "'";
      return false;
    }
    out[b->symbol] = b->range.lo;
  }
  return true;
}

/// Prints the verifier's verdict on a plan's JSON; 0 when it holds, 1 when not, 2 when the JSON
/// is not a plan.
int reportCheck(const nlohmann::json &j, std::ostream &os) {
  auto check = lower::checkPlanJson(j);
  if (!check.ok()) return fail(check.error().message);
  os << "plan check: " << check->buffers << " buffers, " << check->pairs
     << " pairs live together checked";
  if (check->proved) os << " (" << check->proved << " proved apart for every binding)";
  os << ", at " << check->bindings << " binding" << (check->bindings == 1 ? "" : "s") << ": "
     << (check->ok() ? "valid" : "INVALID") << "\n";
  for (const std::string &p : check->problems)
    os << "  " << p << "\n";
  return check->ok() ? 0 : 1;
}

int runPlan(const ModelArgs &a, const PlanArgs &s) {
  auto m = loadAndInfer(a);
  if (!m.ok()) return fail(m.error().message);
  Inferred &r = **m;
  lower::PlanOptions options;
  options.align = s.align;
  options.callerOwnedIO = s.callerOwnedIO;
  options.order = s.order == "memory" ? lower::OrderPolicy::Memory : lower::OrderPolicy::Model;
  std::string err;
  PlanReport report{a.path, &r.graph, nullptr, {}};
  if (!bindingsOf(s.reference, "--reference", options.reference, err) ||
      !bindingsOf(s.at, "--at", report.at, err))
    return fail(err);
  if (auto known = checkNamesSymbols(r.graph, options.reference); !known.ok())
    return fail("--reference: " + known.error().message);
  if (auto known = checkNamesSymbols(r.graph, report.at); !known.ok()) return fail("--at: " + known.error().message);
  auto plan = lower::planMemory(r.graph, options);
  if (!plan.ok() && r.diags.hasErrors()) return failAfterErrors(r.diags, "memory plan", plan.error().message);
  if (!plan.ok()) return fail(plan.error().message);
  report.plan = &*plan;
  std::string json = planJsonText(report, 1);
  if (s.json) {
    std::cout << json << "\n";
  } else {
    for (const std::string &l : planLines(report))
      std::cout << l << "\n";
  }
  if (!s.svgPath.empty()) {
    std::ofstream out(s.svgPath);
    if (!(out << planSvg(report))) return fail("cannot write " + s.svgPath);
  }
  int verdict = 0;
  if (s.verify) verdict = reportCheck(nlohmann::json::parse(json), std::cerr);
  for (const Diagnostic &d : r.diags.list())
    if (d.severity == Severity::Error) std::cerr << "error: " << format(d) << "\n";
  if (verdict) return verdict;
  return r.diags.hasErrors() ? 1 : 0;
}

/// Loads for running: every constant's elements decoded.
Result<Graph> loadForRun(const std::string &path, Diagnostics &diags) {
  return onnx::loadGraphFile(path, diags, onnx::ImportOptions{.decodeLarge = true});
}

struct RunArgs {
  std::string path;
  std::vector<std::string> inputs, dims;
  std::string outDir;
  bool json = false;
  uint64_t seed = 1;
  int64_t maxMemory = 0;
  int repeat = 0;
  int threads = 1;
  bool profile = false;
  bool noArena = false;
};

/// `NAME=FILE.npy` or `NAME=random:D0,D1,...` (empty after the colon: a scalar).
Result<std::pair<std::string, Tensor>> parseRunInput(const std::string &spec, const Graph &g,
                                                     uint64_t seed) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return errorf("--input expects NAME=FILE.npy or NAME=random:SHAPE, got '{}'", spec);
  std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
  const Fact *fact = nullptr;
  for (OutletId o : g.inputs)
    if (g.outlet(o).name == name) fact = &g.fact(o);
  if (!fact) return errorf("--input {}: the model has no input '{}'", spec, name);
  if (value.rfind("random:", 0) == 0) {
    Shape shape;
    std::string dims = value.substr(7);
    size_t at = 0;
    while (at < dims.size()) {
      size_t comma = dims.find(',', at);
      std::string d = dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      char *end = nullptr;
      long long v = std::strtoll(d.c_str(), &end, 10);
      if (d.empty() || *end || v < 0) return errorf("--input {}: '{}' is not a size", spec, d);
      shape.push_back(v);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (fact->type == ElementType::Undefined)
      return errorf("--input {}: the input's element type is unknown; give a .npy file", spec);
    SF_ASSIGN(Tensor t, eval::randomTensor(fact->type, shape, seed));
    return std::pair{name, std::move(t)};
  }
  SF_ASSIGN(Tensor t, eval::readNpy(value));
  return std::pair{name, std::move(t)};
}

/// Loads for running and infers with the symbol bounds given (`--dim`).
Result<Graph> loadAndInferForRun(const std::string &path, const std::vector<std::string> &dims, Diagnostics &diags) {
  SF_ASSIGN(Graph g, loadForRun(path, diags));
  InferOptions options;
  for (const auto &d : dims) {
    SF_ASSIGN(DimBound b, parseDimBound(d));
    options.dims.push_back(b);
  }
  SF_TRY(applyInputs(g, options));
  inferGraph(g, diags, options);
  return g;
}

std::string outputFileName(const std::string &name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return (s.empty() ? "output" : s) + ".npy";
}

int runRun(const RunArgs &a) {
  Diagnostics diags;
  auto loaded = loadAndInferForRun(a.path, a.dims, diags);
  if (!loaded.ok()) return fail(loaded.error().message);
  Graph &g = *loaded;
  ExprScope scope = g.enter();
  std::map<std::string, Tensor> inputs;
  uint64_t seed = a.seed;
  for (const auto &spec : a.inputs) {
    auto in = parseRunInput(spec, g, seed++);
    if (!in.ok()) return fail(in.error().message);
    inputs[in->first] = std::move(in->second);
  }
  // Inputs not given: random data when their shape is static.
  for (OutletId o : g.inputs) {
    const Outlet &out = g.outlet(o);
    if (inputs.count(out.name) || (out.fact.constant && out.fact.constant->hasData())) continue;
    const Fact &f = out.fact;
    std::optional<Shape> shape;
    if (f.shape.rankIsStatic())
      if (auto s = f.shape.toShape(); s.ok()) shape = *s;
    if (!shape || f.type == ElementType::Undefined)
      return fail(fmt::format("input '{}' is {}: give it (--input {}=FILE.npy or {}=random:SHAPE)",
                              out.name, f, out.name, out.name));
    auto t = eval::randomTensor(f.type, *shape, seed++);
    if (!t.ok()) return fail(t.error().message);
    inputs[out.name] = std::move(*t);
  }
  eval::RunOptions ro;
  ro.maxMemory = a.maxMemory;
  ro.threads = a.threads;
  // The static memory plan at these inputs' sizes, laid out once for every run.
  std::optional<eval::ArenaLayout> layout;
  std::string noArena = a.noArena ? "--no-arena" : "";
  double planMs = 0;
  if (!a.noArena) {
    auto p0 = std::chrono::steady_clock::now();
    std::map<std::string, Value> values;
    for (const auto &[name, t] : inputs) values.emplace(name, Value(std::make_shared<const Tensor>(t)));
    auto l = eval::planArena(g, values);
    planMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();
    if (l.ok()) layout = std::move(*l), ro.arena = &*layout;
    else noArena = l.error().message;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto result = eval::run(g, inputs, ro);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!result.ok()) {
    std::cerr << "error: " << result.error().message << "\n";
    return 1;
  }
  // --repeat R: R more runs after the first, timed one by one; their median.
  std::vector<double> times;
  // --profile: time per op over the repeated runs (the first run when there are none).
  std::map<std::string, eval::OpTime> profile;
  if (a.profile && a.repeat == 0) {
    ro.profile = &profile;
    auto again = eval::run(g, inputs, ro);
    if (!again.ok()) return fail(again.error().message);
  }
  if (a.profile) ro.profile = &profile;
  // The repeated runs take the first run's inputs, whose every output the first run checked
  // against the shape rules: the same outputs again, not checked again (timed as a user runs).
  ro.checkRules = false;
  for (int r = 0; r < a.repeat; ++r) {
    auto t1 = std::chrono::steady_clock::now();
    auto again = eval::run(g, inputs, ro);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
    if (!again.ok()) {
      std::cerr << "error: " << again.error().message << "\n";
      return 1;
    }
  }
  std::optional<double> median;
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    size_t h = times.size() / 2;
    median = times.size() % 2 ? times[h] : (times[h - 1] + times[h]) / 2;
  }
  if (!a.outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.outDir, ec);
    if (ec) return fail(a.outDir + ": " + ec.message());
  }
  nlohmann::json j;
  j["model"] = a.path;
  j["nodes_run"] = result->nodesRun;
  j["peak_bytes"] = result->peakBytes;
  j["ms"] = ms;
  if (median) j["median_ms"] = *median, j["repeat"] = a.repeat;
  j["threads"] = a.threads;
  j["blocked_tensors"] = result->blockedTensors;
  if (result->arena) {
    const eval::ArenaUse &u = *result->arena;
    j["arena"] = {{"bytes", u.bytes}, {"placed", u.placed}, {"in_place", u.inPlace},
                  {"elsewhere", u.elsewhere}, {"conflicts", u.conflicts}, {"refused", u.refused},
                  {"plan_ms", planMs}};
  } else {
    if (layout) noArena = fmt::format("an arena of {} bytes does not fit the memory budget", layout->bytes);
    j["arena"] = {{"none", noArena}};
  }
  // Per op, slowest first: ms per run in its kernels and in the checks against the shape rules.
  std::vector<std::pair<std::string, eval::OpTime>> byTime(profile.begin(), profile.end());
  std::sort(byTime.begin(), byTime.end(), [](const auto &x, const auto &y) {
    return x.second.kernelMs + x.second.checkMs > y.second.kernelMs + y.second.checkMs;
  });
  const double runs = std::max(1, a.repeat);
  if (a.profile) {
    j["profile"] = nlohmann::json::array();
    for (const auto &[op, t] : byTime)
      j["profile"].push_back({{"op", op}, {"calls", double(t.calls) / runs},
                              {"kernel_ms", t.kernelMs / runs}, {"check_ms", t.checkMs / runs}});
  }
  j["outputs"] = nlohmann::json::array();
  // One summary per tensor (and its .npy under --out); a sequence lists its elements.
  auto summarize = [&](const Tensor &t, const std::string &stem) -> Result<nlohmann::json> {
    nlohmann::json o;
    o["dtype"] = shortName(t.type());
    o["shape"] = t.shape();
    if ((isFloat(t.type()) || isInteger(t.type()) || t.type() == ElementType::Bool) && !isComplex(t.type())) {
      auto v = t.toDoubles(size_t(t.elementCount()));
      if (v.ok() && !v->empty()) {
        double lo = (*v)[0], hi = (*v)[0], sum = 0;
        for (double x : *v) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
        o["min"] = lo, o["max"] = hi, o["mean"] = sum / double(v->size());
      }
    }
    if (!a.outDir.empty()) {
      std::string file = a.outDir + "/" + outputFileName(stem);
      SF_TRY(eval::writeNpy(file, t));
      o["file"] = file;
    }
    return o;
  };
  for (size_t i = 0; i < result->outputs.size(); ++i) {
    const Value &v = result->outputs[i];
    const std::string &name = result->outputNames[i];
    nlohmann::json o;
    if (v.isTensor()) {
      auto s = summarize(*v, name);
      if (!s.ok()) return fail(s.error().message);
      o = *s;
    } else if (v.isSequence()) {
      o["kind"] = "sequence";
      o["dtype"] = shortName(v.elementType());
      o["elements"] = nlohmann::json::array();
      for (size_t k = 0; k < v.elements().size(); ++k) {
        auto s = summarize(*v.elements()[k], name + "_" + std::to_string(k));
        if (!s.ok()) return fail(s.error().message);
        o["elements"].push_back(*s);
      }
    } else {
      o["kind"] = v.isNone() ? "none" : "absent";
    }
    o["name"] = name;
    j["outputs"].push_back(o);
  }
  if (a.json) {
    std::cout << j.dump(1) << "\n";
    return 0;
  }
  std::cout << fmt::format("ran {} nodes in {:.1f} ms, peak {} of tensors", result->nodesRun, ms,
                           humanCount(double(result->peakBytes), "B"));
  if (median) std::cout << fmt::format("; median of {} more runs {:.1f} ms", a.repeat, *median);
  std::cout << "\n";
  if (result->arena) {
    const eval::ArenaUse &u = *result->arena;
    std::cout << fmt::format("arena {} (the memory plan at these sizes): {} tensors at their offsets, {} of "
                             "them in place; {} elsewhere, {} refused\n",
                             humanCount(double(u.bytes), "B"), u.placed, u.inPlace, u.elsewhere, u.conflicts);
  } else {
    std::cout << fmt::format("no arena: {}\n", noArena);
  }
  if (a.profile) {
    std::cout << fmt::format("time per op, ms per run ({}):\n", a.repeat ? "mean of the repeated runs" : "one run");
    for (const auto &[op, t] : byTime)
      std::cout << fmt::format("  {:<24} {:>7.0f} calls {:>9.2f} kernel {:>8.2f} check\n", op,
                               double(t.calls) / runs, t.kernelMs / runs, t.checkMs / runs);
  }
  auto line = [](const std::string &name, const nlohmann::json &o) {
    std::string text = fmt::format("  {}  {}{}", name, o["dtype"].get<std::string>(), o["shape"].dump());
    if (o.contains("min"))
      text += fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}", o["min"].get<double>(),
                          o["max"].get<double>(), o["mean"].get<double>());
    if (o.contains("file")) text += "  -> " + o["file"].get<std::string>();
    return text;
  };
  for (const auto &o : j["outputs"]) {
    std::string name = o["name"].get<std::string>();
    if (!o.contains("kind")) {
      std::cout << line(name, o) << "\n";
    } else if (o["kind"] == "sequence") {
      std::cout << fmt::format("  {}  sequence of {} {}\n", name, o["elements"].size(), o["dtype"].get<std::string>());
      for (size_t k = 0; k < o["elements"].size(); ++k)
        std::cout << "  " << line(fmt::format("[{}]", k), o["elements"][k]) << "\n";
    } else {
      std::cout << fmt::format("  {}  {}\n", name, o["kind"].get<std::string>());
    }
  }
  return 0;
}

struct CheckArgs {
  std::string path;
  std::vector<std::string> dims, at;
  size_t samples = 4;
  bool json = false;
  int64_t maxMemory = 0;
};

int runCheck(const CheckArgs &a) {
  Diagnostics diags;
  auto loaded = loadAndInferForRun(a.path, a.dims, diags);
  if (!loaded.ok()) return fail(loaded.error().message);
  Graph &g = *loaded;
  eval::CheckOptions co;
  co.samples = a.samples;
  co.maxMemory = a.maxMemory;
  for (const auto &spec : a.at) { // SYM=V,SYM=V: one sample
    std::map<std::string, int64_t> b;
    size_t at = 0;
    while (at <= spec.size()) {
      size_t comma = spec.find(',', at);
      std::string item = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      auto d = parseDimBound(item);
      if (!d.ok() || d->range.lo != d->range.hi) return fail("--at expects SYM=V[,SYM=V...], got '" + spec + "'");
      b[d->symbol] = d->range.lo;
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    co.bindings.push_back(b);
  }
  auto r = eval::checkInference(g, co);
  if (!r.ok()) return fail(r.error().message);
  const size_t ran = r->ran();
  if (a.json) {
    nlohmann::json j;
    j["model"] = a.path;
    j["requested"] = r->requested;
    j["ran"] = ran;
    j["passed"] = r->passed();
    if (!r->drawFailure.empty()) j["draw_failure"] = r->drawFailure;
    j["mismatches"] = r->mismatches();
    j["samples"] = nlohmann::json::array();
    for (const auto &s : r->samples) {
      nlohmann::json x;
      x["binding"] = s.binding;
      x["ran"] = s.ran;
      if (!s.error.empty()) x["error"] = s.error;
      x["tensors"] = s.tensors;
      x["mismatches"] = s.mismatches;
      j["samples"].push_back(x);
    }
    std::cout << j.dump(1) << "\n";
  } else {
    for (const auto &s : r->samples) {
      std::string binding;
      for (const auto &[k, v] : s.binding) binding += fmt::format("{}{}={}", binding.empty() ? "" : ", ", k, v);
      std::cout << fmt::format("sample {}: {} tensors checked, {} mismatches{}\n",
                               binding.empty() ? "(static)" : binding, s.tensors, s.mismatches.size(),
                               s.ran ? "" : " (stopped: " + s.error + ")");
      for (const auto &m : s.mismatches) std::cout << "  MISMATCH " << m << "\n";
    }
    if (!r->drawFailure.empty())
      std::cout << fmt::format("only {} admissible sizes were found for {} samples; the draws broke: {}\n",
                               r->samples.size(), r->requested, r->drawFailure);
    std::cout << fmt::format("{} of {} samples ran; {} mismatches{}\n", ran, r->requested, r->mismatches(),
                             r->passed() ? "" : ": FAILED (every sample asked for must run and agree)");
  }
  return r->passed() ? 0 : 1;
}

int runCheckPlan(const std::string &path) {
  std::ifstream in(path);
  if (!in) return fail(path + ": cannot open");
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return fail(path + ": not JSON");
  return reportCheck(j, std::cout);
}

} // namespace
} // namespace sf::cli

int main(int argc, char **argv) {
  // std::cout buffers on its own instead of passing every write through stdio (the text
  // listing of a 100k-node graph made 40% of its time in putc/fwrite). Nothing here writes to
  // stdout through stdio.
  std::ios_base::sync_with_stdio(false);
  CLI::App app{"shapeflow: element types, shapes (numbers, symbolic expressions, intervals) and "
               "shape values of every tensor of a neural network, before it runs"};
  app.require_subcommand(1);
  sf::cli::ModelArgs model;

  CLI::App *infer = app.add_subcommand("infer", "infer and print the facts of every tensor");
  model.add(infer);
  bool json = false;
  std::string outPath;
  infer->add_flag("--json", json, "print one JSON object");
  infer->add_option("--out", outPath, "write the .onnx model annotated with value_info");
  bool noNames = false;
  infer->add_flag("--no-names", noNames,
                  "print every dim expanded (no R1 = ... for repeated sizes, ? for unnamed input dims)");

  CLI::App *contractCmd = app.add_subcommand(
      "contract", "the input sizes the model accepts (ranges, equalities, declared dims) and the "
                  "node behind each requirement");
  model.add(contractCmd);
  bool contractJsonFlag = false;
  contractCmd->add_flag("--json", contractJsonFlag, "print one JSON object");

  CLI::App *whyCmd = app.add_subcommand(
      "why", "how a tensor's dim was derived, op by op, back to the inputs (TENSOR or TENSOR[AXIS])");
  model.add(whyCmd);
  std::string whySpec;
  whyCmd->add_option("TENSOR", whySpec, "a tensor name, with [AXIS] for one dim")->required();

  CLI::App *stats = app.add_subcommand(
      "stats", "per-node and per-model MACs, FLOPs, bytes and parameters, as expressions of the "
               "input sizes");
  model.add(stats);
  sf::cli::StatsArgs statsArgs;
  auto *statsJson = stats->add_flag("--json", statsArgs.json, "print one JSON object");
  stats->add_flag("--csv", statsArgs.csv, "print one CSV row per node")->excludes(statsJson);
  stats->add_option("--svg", statsArgs.svgPath, "draw where the work goes into an SVG file");
  stats->add_option("--device", statsArgs.devicePath,
                    "a device JSON (peak_flops, memory_bandwidth): roofline times per node");
  stats->add_option("--at", statsArgs.at,
                    "where to evaluate symbolic counts for rankings and pictures: SYM=VALUE "
                    "(default: each symbol's lower bound)");
  stats->add_option("--sweep", statsArgs.sweep,
                    "the symbol the SVG's growth curve sweeps between its bounds (default: the "
                    "first one the total depends on that --at does not fix)");
  CLI::App *lowerCmd = app.add_subcommand(
      "lower", "dynamic shapes lowered (seed 002): shapes as explicit values, upper bounds and "
               "what is missing for them, buffers and lifetimes");
  model.add(lowerCmd);
  std::string stage = "shapes";
  bool lowerJson = false;
  lowerCmd->add_option("--stage", stage, "shapes | bounds | buffers")
      ->check(CLI::IsMember({"shapes", "bounds", "buffers"}));
  lowerCmd->add_flag("--json", lowerJson, "print one JSON object");
  CLI::App *planCmd = app.add_subcommand(
      "plan", "the static memory plan: offsets in one arena for every buffer, valid for every "
              "input size");
  model.add(planCmd);
  sf::cli::PlanArgs planArgs;
  planCmd->add_option("--align", planArgs.align, "alignment of every buffer, in bytes (64)");
  planCmd->add_option("--order", planArgs.order, "model | memory (an order with a lower peak)")
      ->check(CLI::IsMember({"model", "memory"}));
  planCmd->add_flag("--json", planArgs.json, "print one JSON object");
  planCmd->add_option("--svg", planArgs.svgPath, "draw the buffers in (step, address)");
  planCmd->add_option("--at", planArgs.at, "show a symbolic plan at SYM=VALUE");
  planCmd->add_option("--reference", planArgs.reference,
                      "decide a symbolic plan's placement at SYM=VALUE (default: upper bounds)");
  planCmd->add_flag("--caller-owned-io", planArgs.callerOwnedIO,
                    "graph inputs and outputs outside the arena");
  planCmd->add_flag("--verify", planArgs.verify, "check the plan with the verifier (stderr)");
  CLI::App *runCmd = app.add_subcommand(
      "run", "run the model with the reference executor, checking every kernel's output shape "
             "against its op's shape rule");
  sf::cli::RunArgs runArgs;
  runCmd->add_option("MODEL", runArgs.path, "an .onnx model or a text-form graph")->required();
  runCmd->add_option("--input", runArgs.inputs,
                     "an input's elements: NAME=FILE.npy | NAME=random:D0,D1,... (inputs not given "
                     "with a static shape get random data)");
  runCmd->add_option("--dim", runArgs.dims, "bound a symbol: N=1..64");
  runCmd->add_option("--out", runArgs.outDir, "write each graph output as DIR/NAME.npy");
  runCmd->add_flag("--json", runArgs.json, "print one JSON object");
  runCmd->add_option("--seed", runArgs.seed, "seed of the random inputs (1)");
  runCmd->add_flag("--profile", runArgs.profile,
                   "time each op (its kernels, and the checks against the shape rules: with --repeat the "
                   "repeated runs are timed, and they are not checked)");
  runCmd->add_flag("--no-arena", runArgs.noArena, "tensors on the heap, not at the memory plan's offsets in one arena");
  runCmd->add_option("--repeat", runArgs.repeat, "run R more times after the first and report the median time of one run (the same inputs: their outputs are checked against the shape rules on the first run only)")
      ->check(CLI::Range(0, 100000));
  runCmd->add_option("--threads", runArgs.threads, "threads of the matrix products (1)")->check(CLI::Range(1, 1024));
  runCmd->add_option("--max-memory", runArgs.maxMemory,
                     "bytes of tensors alive at once (default: half the machine's memory)");
  CLI::App *checkCmd = app.add_subcommand(
      "check", "the inference checks itself: run the model at sample sizes and compare every tensor, "
               "bodies included, with its inferred type and shape");
  sf::cli::CheckArgs checkArgs;
  checkCmd->add_option("MODEL", checkArgs.path, "an .onnx model or a text-form graph")->required();
  checkCmd->add_option("--dim", checkArgs.dims, "bound a symbol: N=1..64");
  checkCmd->add_option("--samples", checkArgs.samples, "samples made from the symbols' ranges (4)");
  checkCmd->add_option("--at", checkArgs.at, "one sample: SYM=V[,SYM=V...] (repeatable; replaces --samples)");
  checkCmd->add_flag("--json", checkArgs.json, "print one JSON object");
  checkCmd->add_option("--max-memory", checkArgs.maxMemory, "bytes of tensors alive at once");
  CLI::App *checkPlanCmd =
      app.add_subcommand("check-plan", "check a memory plan's JSON with the verifier alone");
  std::string planPath;
  checkPlanCmd->add_option("PLAN", planPath, "a plan written by shapeflow plan --json")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (*contractCmd) return sf::cli::runContract(model, contractJsonFlag);
    if (*whyCmd) return sf::cli::runWhy(model, whySpec);
    if (*stats) return sf::cli::runStats(model, statsArgs);
    if (*lowerCmd) return sf::cli::runLower(model, stage, lowerJson);
    if (*planCmd) return sf::cli::runPlan(model, planArgs);
    if (*checkPlanCmd) return sf::cli::runCheckPlan(planPath);
    if (*runCmd) return sf::cli::runRun(runArgs);
    if (*checkCmd) return sf::cli::runCheck(checkArgs);
    return sf::cli::runInfer(model, json, outPath, noNames);
  } catch (const std::exception &e) {
    std::cerr << "shapeflow: internal error: " << e.what() << "\n";
    return 2;
  }
}
