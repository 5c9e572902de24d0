// `plan_bench [--domains FILE] MODEL...`: for each model, bounded by the domains file
// (bench/plan/domains.json), the symbolic memory plan made once for the whole domain (as
// `shapeflow plan` makes it), compared at three bindings (every symbol at its lower end, at the
// middle, at its upper end) with:
//   lb     the live-bytes lower bound of the order at that binding (what any plan needs),
//   base   the baseline: one plan decided at the upper bounds, whose arena every run reserves,
//   none   no reuse: every buffer its own memory (at the upper end).
// Prints peak / lb of the symbolic plan and of the baseline at each binding, the lower bounds of
// the model's order and of the order `--order memory` keeps at the upper end, the no-reuse
// total, the verifier's verdict on the plan's JSON (lower/plan_check.h) and the planning time.
// `--max-ratio R` adds a second table: the worst ratio of one plan for the whole domain at the
// sizes the model admits, and of plans per range of the sizes (at most 8), each judged at those
// inside its range (`shapeflow plan --max-ratio`), with the number of ranges and the time.
// `--caller-owned-io`: the graph's inputs and outputs outside the arena in every plan (`shapeflow
// plan --caller-owned-io`: a decoder's runtime holding its caches).
#include "shapeflow/infer/infer.h"
#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/lower/plan_check.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/range_plans.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace sf;
using namespace sf::lower;

namespace {

using Values = std::map<std::string, int64_t>;

/// `d` at a binding of the named symbols (derived symbols through their definitions, each
/// evaluated once per binding: an offset's definition names the offsets below it).
std::optional<int64_t> at(const MemoryPlan &p, const Dimension &d, const Values &v,
                          std::map<std::string, std::optional<int64_t>> &memo) {
  if (d.isStatic()) return d.length();
  if (!d.expr()) return std::nullopt;
  std::function<std::optional<int64_t>(SymbolId)> lookup = [&](SymbolId s) -> std::optional<int64_t> {
    const SymbolInfo &info = symbolInfo(s);
    if (auto m = memo.find(info.name); m != memo.end()) return m->second;
    for (const auto &[name, def] : p.derived)
      if (name == info.name && def.expr()) {
        auto r = evaluate(def.expr(), lookup);
        return memo[name] = r.ok() ? std::optional<int64_t>(*r) : std::nullopt;
      }
    auto it = v.find(info.name);
    if (it != v.end()) return it->second;
    // Sizes that depend on the data: at their upper bound (the worst case a run can meet).
    if (info.range.hi != kInf) return info.range.hi;
    return std::nullopt;
  };
  auto r = evaluate(d.expr(), lookup);
  if (!r.ok()) return std::nullopt;
  return *r;
}

struct AtBinding {
  int64_t peak = 0, lb = 0, none = 0;
};

AtBinding measure(const MemoryPlan &p, const Values &v) {
  AtBinding m;
  std::map<std::string, std::optional<int64_t>> memo;
  std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> slots;
  for (const Slot &s : p.slots) {
    if (s.sharesWith) continue;
    int64_t size = at(p, s.size, v, memo).value_or(0);
    slots.push_back({size, {s.first, s.last}});
    m.none += size;
  }
  m.lb = liveLowerBound(slots, p.order.size());
  m.peak = at(p, p.peak, v, memo).value_or(-1);
  return m;
}

struct Model {
  std::unique_ptr<Graph> graph;
};

Result<std::unique_ptr<Graph>> load(const std::string &path, const std::vector<DimBound> &dims) {
  Diagnostics d;
  SF_ASSIGN(Graph g, onnx::loadModelFile(path, d));
  auto out = std::make_unique<Graph>(std::move(g));
  InferOptions o;
  o.dims = dims;
  SF_TRY(applyInputs(*out, o));
  inferGraph(*out, d, o);
  return out;
}

} // namespace

/// The model of `path` inferred afresh for each range (what `plan --max-ratio` does).
InferModel fileModel(const std::string &path) {
  return [path](const InferOptions &options, const std::function<void(Graph &)> &before) -> Result<InferredModel> {
    InferredModel m;
    SF_ASSIGN(m.graph, onnx::loadModelFile(path, m.diags));
    SF_TRY(applyInputs(m.graph, options));
    if (before) before(m.graph);
    m.stats = inferGraph(m.graph, m.diags, options);
    return m;
  };
}

/// `--max-ratio`: one plan for the whole domain against plans per range, each judged at the sizes
/// the model admits (report/range_plans.h).
void rangeRows(const std::vector<std::string> &models, const nlohmann::json &domains, double maxRatio,
               bool callerOwnedIO) {
  std::printf("\n%-20s | %9s | %6s %9s | %5s | %9s\n", "model", "one plan", "ranges", "worst", "sizes", "plan ms");
  for (const std::string &path : models) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    name = name.substr(0, name.size() - 5);
    InferOptions options;
    if (domains.contains(name))
      for (const auto &[sym, r] : domains[name].items())
        options.dims.push_back({sym, {r[0].get<int64_t>(), r[1].get<int64_t>()}});
    auto t0 = std::chrono::steady_clock::now();
    PlanOptions planOptions;
    planOptions.callerOwnedIO = callerOwnedIO;
    auto plans = planByRanges(fileModel(path), options, planOptions, {maxRatio, 8});
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!plans.ok()) {
      std::printf("%-20s | %s\n", name.c_str(), plans.error().message.c_str());
      continue;
    }
    double worst = 1;
    size_t sizes = 0;
    for (const RangePlan &r : plans->ranges) worst = std::max(worst, r.worst), sizes += r.judged.size();
    std::printf("%-20s | %9.3f | %6zu %9.3f | %5zu | %9.1f\n", name.c_str(), plans->wholeWorst,
                plans->ranges.size(), worst, sizes, ms);
  }
}

int main(int argc, char **argv) {
  std::string domainsPath = "bench/plan/domains.json";
  std::vector<std::string> models;
  double maxRatio = 0;
  bool callerOwnedIO = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--domains") && i + 1 < argc)
      domainsPath = argv[++i];
    else if (!std::strcmp(argv[i], "--max-ratio") && i + 1 < argc)
      maxRatio = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--caller-owned-io"))
      callerOwnedIO = true;
    else
      models.push_back(argv[i]);
  }
  std::ifstream in(domainsPath);
  nlohmann::json domains = nlohmann::json::parse(in, nullptr, false);
  if (domains.is_discarded()) {
    std::fprintf(stderr, "cannot read %s\n", domainsPath.c_str());
    return 2;
  }
  std::printf("%-20s %6s | %-23s | %-23s | %-23s | %9s %9s %9s | %6s %8s\n", "model", "bufs",
              "low: plan/lb base/lb", "mid: plan/lb base/lb", "high: plan/lb base/lb",
              "lb model", "lb memory", "no reuse", "check", "plan ms");
  for (const std::string &path : models) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    name = name.substr(0, name.size() - 5);
    std::vector<DimBound> dims;
    Values lo, mid, hi;
    if (domains.contains(name))
      for (const auto &[sym, r] : domains[name].items()) {
        int64_t a = r[0].get<int64_t>(), b = r[1].get<int64_t>();
        dims.push_back({sym, {a, b}});
        lo[sym] = a;
        hi[sym] = b;
        mid[sym] = a + (b - a) / 2;
      }
    auto g = load(path, dims);
    if (!g.ok()) {
      std::printf("%-20s load: %s\n", name.c_str(), g.error().message.c_str());
      continue;
    }
    ExprScope scope = (*g)->enter();
    auto t0 = std::chrono::steady_clock::now();
    PlanOptions options;
    options.callerOwnedIO = callerOwnedIO;
    auto plan = planMemory(**g, options);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!plan.ok()) {
      std::printf("%-20s plan: %s\n", name.c_str(), plan.error().message.c_str());
      continue;
    }
    PlanOptions memOptions;
    memOptions.order = OrderPolicy::Memory;
    memOptions.callerOwnedIO = callerOwnedIO;
    auto memPlan = planMemory(**g, memOptions);
    AtBinding a = measure(*plan, lo), b = measure(*plan, mid), c = measure(*plan, hi);
    // The baseline: a plan decided at the upper bounds, whose arena (its peak there) every run
    // reserves whatever its binding.
    int64_t base = c.peak;
    if (!hi.empty()) {
      PlanOptions atTop;
      atTop.reference = hi;
      atTop.callerOwnedIO = callerOwnedIO;
      if (auto top = planMemory(**g, atTop); top.ok()) base = measure(*top, hi).peak;
    }
    int64_t memLb = memPlan.ok() ? measure(*memPlan, hi).lb : -1;
    // The verifier, on the plan's JSON as the CLI writes it (through the report).
    PlanReport report;
    report.model = name;
    report.graph = g->get();
    report.plan = &*plan;
    auto check = checkPlanJson(nlohmann::json::parse(planJsonText(report)));
    std::string verdict = !check.ok() ? "error" : !check->ok() ? "FAIL" : "ok";
    if (check.ok() && !check->ok())
      for (const std::string &p : check->problems)
        std::fprintf(stderr, "%s: %s\n", name.c_str(), p.c_str());
    auto ratio = [](int64_t x, int64_t y) { return y > 0 ? double(x) / double(y) : 0.0; };
    size_t owners = 0;
    for (const Slot &s : plan->slots)
      owners += !s.sharesWith;
    std::printf("%-20s %6zu | %10.3f %10.3f  | %10.3f %10.3f  | %10.3f %10.3f  | %9.3g %9.3g %9.3g | %6s %8.1f\n",
                name.c_str(), owners, ratio(a.peak, a.lb), ratio(base, a.lb), ratio(b.peak, b.lb),
                ratio(base, b.lb), ratio(c.peak, c.lb), ratio(base, c.lb), double(c.lb),
                double(memLb), double(c.none), verdict.c_str(), ms);
  }
  if (maxRatio > 0) rangeRows(models, domains, maxRatio, callerOwnedIO);
  return 0;
}
