// Memory plans per range of the sizes (report/range_plans.h).
#include "shapeflow/report/range_plans.h"

#include "shapeflow/infer/domain.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/stats_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace sf {

std::vector<std::map<std::string, int64_t>> domainBindings(const SizeDomain &domain) {
  std::vector<std::map<std::string, int64_t>> out(3);
  for (const auto &[name, r] : domain) {
    out[0][name] = r.lo;
    out[1][name] = r.lo + (r.hi - r.lo) / 2;
    out[2][name] = r.hi;
  }
  return out;
}

std::optional<std::pair<Interval, Interval>> splitRange(Interval r) {
  if (r.lo >= r.hi || r.hi == kInf) return std::nullopt;
  // The geometric middle of [max(lo, 1), hi]: 1..1024 splits at 32, 0..896 at 29.
  double lo = double(std::max<int64_t>(r.lo, 1));
  int64_t m = int64_t(std::floor(std::sqrt(lo * double(r.hi))));
  m = std::clamp(m, r.lo, r.hi - 1);
  return std::pair{Interval{r.lo, m}, Interval{m + 1, r.hi}};
}

namespace {

/// `options` with each size of `domain` ranged to it.
InferOptions narrowed(InferOptions options, const SizeDomain &domain) {
  for (const auto &entry : domain) {
    const std::string &name = entry.first; // a lambda may not capture a structured binding (C++20 before clang 16)
    auto it = std::find_if(options.dims.begin(), options.dims.end(),
                           [&](const DimBound &d) { return d.symbol == name; });
    if (it != options.dims.end()) it->range = entry.second;
    else options.dims.push_back(DimBound{name, entry.second});
  }
  return options;
}

/// Boxes of at most this many sizes are judged at every corner too.
inline constexpr size_t kCornerSizes = 4;

/// The sizes a plan is judged at: the domain's lower, middle and upper sizes, and the other
/// corners of its box (one size low, another high: the extreme aspect ratios, where a plan's
/// order of slots decided with every size at one end may cost most) for a box of at most
/// kCornerSizes sizes, where the model admits them together; and, with `draws`, sizes drawn
/// from what it admits (a model whose mask length must be the cache's plus the tokens admits
/// few corners of a box), added to `out`.
void addJudged(std::vector<Binding> &out, const Graph &g, const SizeDomain &domain, size_t draws) {
  InputDomain admitted = inputDomain(g);
  auto add = [&](const Binding &b) {
    if (b.size() == domain.size() && !admitted.breaks(b) && std::find(out.begin(), out.end(), b) == out.end())
      out.push_back(b);
  };
  for (const Binding &b : domainBindings(domain)) add(b);
  if (domain.size() <= kCornerSizes)
    for (uint32_t mask = 1; mask + 1 < (1u << domain.size()); ++mask) {
      Binding b;
      size_t k = 0;
      for (const auto &[name, r] : domain) b[name] = (mask >> k++) & 1 ? r.hi : r.lo;
      add(b);
    }
  if (draws == 0) return;
  for (const Binding &drawn : admitted.draw(draws, 0x5eed).bindings) {
    Binding b;
    for (const auto &[name, v] : drawn)
      if (auto it = domain.find(name); it != domain.end() && it->second.contains(v)) b[name] = v;
    add(b);
  }
}

/// The bindings inside `domain`.
std::vector<Binding> inside(const std::vector<Binding> &bindings, const SizeDomain &domain) {
  std::vector<Binding> out;
  for (const Binding &b : bindings) {
    bool in = true;
    for (const auto &[name, r] : domain)
      if (auto it = b.find(name); it == b.end() || !r.contains(it->second)) in = false;
    if (in) out.push_back(b);
  }
  return out;
}

/// The largest peak / lower bound at `bindings`; a size where the plan does not evaluate counts
/// as missing the goal (infinity), never as meeting it.
double worstAt(const lower::MemoryPlan &plan, const std::vector<Binding> &bindings) {
  double worst = 1;
  for (const auto &b : bindings) {
    auto r = lower::peakOverLowerBound(plan, b);
    worst = std::max(worst, r ? *r : INFINITY);
  }
  return worst;
}

/// The model inferred with `domain` and planned, judged at the whole domain's `tests` inside it,
/// at its own lower, middle and upper sizes and corners where the model admits them and at three
/// sizes drawn from what it admits in the range; with an empty domain, the sizes the plan depends
/// on, judged at their ends, corners and six drawn sizes, which become the tests.
Result<RangePlan> planOn(const InferModel &infer, const InferOptions &options,
                         const lower::PlanOptions &planOptions, const SizeDomain &domain,
                         const std::vector<Binding> &tests) {
  SF_ASSIGN(InferredModel m, infer(narrowed(options, domain), {}));
  if (m.diags.hasErrors())
    for (const Diagnostic &d : m.diags.list())
      if (d.severity == Severity::Error) return errorf("the model does not infer with these sizes: {}", format(d));
  RangePlan r;
  r.model = std::make_shared<InferredModel>(std::move(m));
  const Graph &g = r.model->graph;
  ExprScope scope = g.enter();
  r.domain = domain;
  r.judged = inside(tests, domain);
  if (domain.empty()) { // the whole domain: the sizes its plan depends on
    SF_ASSIGN(lower::MemoryPlan first, lower::planMemory(g, planOptions));
    r.domain = lower::namedSymbols(first);
    addJudged(r.judged, g, r.domain, 6);
  } else {
    addJudged(r.judged, g, r.domain, 3); // a box's corners often break the contract: draws too
  }
  lower::PlanOptions o = planOptions;
  o.judgeAt = r.judged;
  SF_ASSIGN(r.plan, lower::planMemory(g, o));
  r.worst = worstAt(r.plan, r.judged);
  return r;
}

/// The best split of `piece`: along each size in turn, both halves planned; the one whose worse
/// half is least, then whose better half is. A split counts when neither half is worse than the
/// piece and one is better (the worse half may need a split along another size next). None when
/// no split plans both halves or none counts.
std::optional<std::pair<RangePlan, RangePlan>> bestSplit(const InferModel &infer, const InferOptions &options,
                                                         const lower::PlanOptions &planOptions,
                                                         const RangePlan &piece) {
  std::optional<std::pair<RangePlan, RangePlan>> best;
  std::pair<double, double> bestKey{piece.worst, piece.worst};
  for (const auto &[name, r] : piece.domain) {
    auto halves = splitRange(r);
    if (!halves) continue;
    SizeDomain a = piece.domain, b = piece.domain;
    a[name] = halves->first;
    b[name] = halves->second;
    auto pa = planOn(infer, options, planOptions, a, piece.judged);
    auto pb = planOn(infer, options, planOptions, b, piece.judged);
    if (!pa.ok() || !pb.ok()) continue;
    std::pair<double, double> key{std::max(pa->worst, pb->worst), std::min(pa->worst, pb->worst)};
    if (key.first <= piece.worst && key < bestKey) {
      bestKey = key;
      best.emplace(std::move(*pa), std::move(*pb));
    }
  }
  return best;
}

} // namespace

Result<RangePlans> planByRanges(const InferModel &infer, const InferOptions &options,
                                            const lower::PlanOptions &planOptions,
                                            const RangePlanOptions &rangeOptions) {
  if (!planOptions.reference.empty())
    return errorf("plans per range choose each range's reference themselves: no --reference with them");
  lower::PlanOptions po = planOptions;
  po.retryAbove = std::min(po.retryAbove, rangeOptions.maxRatio);
  std::vector<RangePlan> pieces;
  SF_ASSIGN(RangePlan whole, planOn(infer, options, po, {}, {}));
  const double wholeWorst = whole.worst;
  pieces.push_back(std::move(whole));
  std::vector<bool> final(1, false); // pieces that no split improves
  while (pieces.size() < std::max<size_t>(rangeOptions.maxRanges, 1)) {
    size_t k = pieces.size();
    for (size_t i = 0; i < pieces.size(); ++i)
      if (!final[i] && pieces[i].worst > rangeOptions.maxRatio && (k == pieces.size() || pieces[i].worst > pieces[k].worst))
        k = i;
    if (k == pieces.size()) break;
    auto split = bestSplit(infer, options, po, pieces[k]);
    if (!split) {
      final[k] = true;
      continue;
    }
    pieces[k] = std::move(split->first);
    final[k] = false;
    pieces.push_back(std::move(split->second));
    final.push_back(false);
  }
  std::sort(pieces.begin(), pieces.end(), [](const RangePlan &a, const RangePlan &b) {
    std::vector<std::pair<int64_t, int64_t>> x, y;
    for (const auto &[name, r] : a.domain) x.push_back({r.lo, r.hi});
    for (const auto &[name, r] : b.domain) y.push_back({r.lo, r.hi});
    return x < y;
  });
  return RangePlans{wholeWorst, std::move(pieces)};
}

namespace {

std::string dimsText(const SizeDomain &domain) {
  std::string out;
  for (const auto &[name, r] : domain) out += fmt::format("{}{}={}..{}", out.empty() ? "" : ", ", name, r.lo, r.hi);
  return out.empty() ? "(no sizes)" : out;
}

/// The plan's peak at its range's upper end (none where it does not evaluate).
std::optional<int64_t> peakAtUpper(const RangePlan &r) {
  return lower::PlanValues(r.plan, domainBindings(r.domain)[2])(r.plan.peak);
}

} // namespace

nlohmann::json rangePlansJson(const RangePlans &plans, const std::string &model, double maxRatio) {
  nlohmann::json j = {{"model", model}, {"max_ratio", maxRatio}, {"whole_domain_worst", plans.wholeWorst},
                      {"ranges", nlohmann::json::array()}};
  for (const RangePlan &r : plans.ranges) {
    ExprScope scope = r.model->graph.enter();
    nlohmann::json dims = nlohmann::json::object(), judged = nlohmann::json::array();
    for (const auto &[name, range] : r.domain) dims[name] = {range.lo, range.hi};
    for (const auto &b : r.judged) {
      auto ratio = lower::peakOverLowerBound(r.plan, b);
      judged.push_back({{"sizes", b}, {"ratio", ratio ? nlohmann::json(*ratio) : nlohmann::json()}});
    }
    auto peak = peakAtUpper(r);
    PlanReport report{model, &r.model->graph, &r.plan, {}};
    j["ranges"].push_back({{"dims", dims}, {"worst_ratio", r.worst}, {"judged_at", judged},
                           {"peak_at_upper", peak ? nlohmann::json(*peak) : nlohmann::json()},
                           {"plan", nlohmann::json::parse(planJsonText(report))}});
  }
  return j;
}

std::vector<std::string> rangePlansLines(const RangePlans &plans, double maxRatio, size_t maxRanges) {
  size_t n = plans.ranges.size();
  std::vector<std::string> lines{
      fmt::format("{} plan{} by range of the sizes (at most {}), each judged at the sizes the model admits in its "
                  "range (the lower, middle and upper ends, the corners, and sizes drawn), the goal {:.4g}x of the lower bound; "
                  "one plan for the whole domain: {:.4f}",
                  n, n == 1 ? "" : "s", maxRanges, maxRatio, plans.wholeWorst),
      fmt::format("  {:<40} {:>12} {:>8} {}", "range", "peak (upper)", "worst", "judged at")};
  for (const RangePlan &r : plans.ranges) {
    ExprScope scope = r.model->graph.enter();
    auto peak = peakAtUpper(r);
    lines.push_back(fmt::format("  {:<40} {:>12} {:>8} {}", dimsText(r.domain),
                                peak ? humanCount(double(*peak), "B") : std::string("?"),
                                r.judged.empty() ? "-" : fmt::format("{:.4f}", r.worst),
                                r.judged.empty() ? "(no size tried here is admitted)"
                                                 : fmt::format("({} size{})", r.judged.size(), r.judged.size() == 1 ? "" : "s")));
  }
  return lines;
}

} // namespace sf
