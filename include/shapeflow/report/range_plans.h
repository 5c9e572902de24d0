// Memory plans per range of the sizes: where one arrangement valid for every size is more than a
// ratio above the live-bytes lower bound somewhere in the domain (sizes that grow with different
// symbols: an arrangement best at one end is not at the other), the domain is split into ranges,
// each planned on its own (the model inferred again with the range), until every range's plan is
// within the ratio at its lower, middle and upper sizes. A deployment keeps the plans and picks,
// at run time, the first range that holds the sizes.
#pragma once

#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/report/model_queries.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sf {

/// Named sizes and their ranges.
using SizeDomain = std::map<std::string, Interval>;

/// The sizes a plan is measured at on a domain: every size at its lower end, at its middle, at
/// its upper end.
std::vector<std::map<std::string, int64_t>> domainBindings(const SizeDomain &domain);

/// The two halves a range is split into: at the geometric middle (sizes are compared by ratio),
/// each half non-empty. None for a single value.
std::optional<std::pair<Interval, Interval>> splitRange(Interval r);

struct RangePlan {
  SizeDomain domain;
  std::shared_ptr<InferredModel> model; // the inference the plan's expressions belong to
  lower::MemoryPlan plan;
  /// The sizes it was judged at: of the whole domain's lower, middle and upper sizes the model
  /// admits together and sizes drawn from what it admits, those inside this range, and the
  /// range's own lower, middle and upper sizes the model admits and three sizes drawn in it.
  /// Empty only where the model admits no size tried in the range.
  std::vector<std::map<std::string, int64_t>> judged;
  /// The plan's largest peak / lower bound at `judged` (a size where it does not evaluate counts
  /// as infinity); 1 when `judged` is empty.
  double worst = 1;
};

struct RangePlans {
  /// The worst ratio of the one plan for the whole domain (the first range before any split).
  double wholeWorst = 1;
  std::vector<RangePlan> ranges;
};

struct RangePlanOptions {
  double maxRatio = 1.05;
  size_t maxRanges = 8;
};

/// Plans the model (inferred by `infer` with `options`, its sizes' ranges narrowed per range)
/// over the named sizes of its plan, each plan judged (and its reference chosen) at the sizes the
/// model admits in its range: one range where the whole domain's plan is within `maxRatio`; else the range whose plan is worst is split in two along the size whose split
/// gives the best worse half, until each is within the ratio, `maxRanges` are made or no range
/// can be split. Ranges in order of their sizes; every plan valid on its whole range.
Result<RangePlans> planByRanges(const InferModel &infer, const InferOptions &options,
                                            const lower::PlanOptions &planOptions,
                                            const RangePlanOptions &rangeOptions = {});

/// What `plan --max-ratio --json` prints: {"model", "max_ratio", "whole_domain_worst", "ranges":
/// [{"dims": {size: [lo, hi]}, "worst_ratio", "judged_at": [{"sizes", "ratio"}], "peak_at_upper",
/// "plan": the range's plan as `plan --json` prints it}]}.
nlohmann::json rangePlansJson(const RangePlans &plans, const std::string &model, double maxRatio);
/// Its text: a heading, then a row per range (its sizes, the peak at its upper end, the worst
/// ratio, how many sizes it was judged at).
std::vector<std::string> rangePlansLines(const RangePlans &plans, double maxRatio, size_t maxRanges);

} // namespace sf
