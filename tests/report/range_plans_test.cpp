// Memory plans per range of the sizes (src/report/range_plans.cpp): ranges split at their
// geometric middle, the domain's lower, middle and upper sizes; on a model where one plan for the
// whole domain misses the goal, ranges that tile the domain, each plan judged at sizes inside its
// range, within the goal there, and valid by the verifier on its whole range.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/lower/plan_check.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/range_plans.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

namespace sf {
namespace {

// Slots sized by S and T whose one arrangement for every size is 7% above the lower bound at one
// of the sizes it is judged at (tests/cli/data/slot_lifetimes.txt, with the outputs the caller's).
std::string slotLifetimes() {
  std::ifstream in(std::string(SF_SOURCE_DIR_DEFAULT) + "/tests/cli/data/slot_lifetimes.txt");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

InferModel textModel(const std::string &text) {
  return [text](const InferOptions &options, const std::function<void(Graph &)> &before) -> Result<InferredModel> {
    InferredModel m;
    SF_ASSIGN(m.graph, parseGraph(text));
    SF_TRY(applyInputs(m.graph, options));
    if (before) before(m.graph);
    m.stats = inferGraph(m.graph, m.diags, options);
    return m;
  };
}

int64_t volume(const SizeDomain &d) {
  int64_t v = 1;
  for (const auto &[name, r] : d) v *= r.hi - r.lo + 1;
  return v;
}

bool disjoint(const SizeDomain &a, const SizeDomain &b) {
  for (const auto &[name, r] : a) {
    const Interval &o = b.at(name);
    if (r.hi < o.lo || o.hi < r.lo) return true;
  }
  return false;
}

} // namespace

TEST(RangePlans, RangesSplitAtTheirGeometricMiddle) {
  EXPECT_EQ((std::pair{Interval{1, 32}, Interval{33, 1024}}), *splitRange({1, 1024}));
  EXPECT_EQ((std::pair{Interval{0, 29}, Interval{30, 896}}), *splitRange({0, 896}));
  EXPECT_EQ((std::pair{Interval{1, 1}, Interval{2, 2}}), *splitRange({1, 2}));
  EXPECT_EQ((std::pair{Interval{500, 707}, Interval{708, 1000}}), *splitRange({500, 1000}));
  EXPECT_FALSE(splitRange({4, 4}));
  EXPECT_FALSE(splitRange({1, kInf}));
}

TEST(RangePlans, TheDomainsLowerMiddleAndUpperSizes) {
  auto b = domainBindings({{"N", {1, 8}}, {"S", {0, 512}}});
  ASSERT_EQ(3u, b.size());
  EXPECT_EQ((std::map<std::string, int64_t>{{"N", 1}, {"S", 0}}), b[0]);
  EXPECT_EQ((std::map<std::string, int64_t>{{"N", 4}, {"S", 256}}), b[1]);
  EXPECT_EQ((std::map<std::string, int64_t>{{"N", 8}, {"S", 512}}), b[2]);
}

TEST(RangePlans, RangesTileTheDomainAndEachPlanMeetsTheGoalWhereOnePlanDoesNot) {
  InferOptions options;
  options.dims = {{"S", {1, 8}}, {"T", {1, 8}}};
  lower::PlanOptions callerIO;
  callerIO.callerOwnedIO = true;
  const std::string text = slotLifetimes();
  ASSERT_FALSE(text.empty());
  auto plans = planByRanges(textModel(text), options, callerIO, {1.05, 8});
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  EXPECT_GT(plans->wholeWorst, 1.05) << "the case no longer needs ranges: pick another";
  ASSERT_GT(plans->ranges.size(), 1u);
  ASSERT_LE(plans->ranges.size(), 8u);
  // The ranges cover the whole domain once.
  const SizeDomain whole{{"S", {1, 8}}, {"T", {1, 8}}};
  int64_t covered = 0;
  for (size_t i = 0; i < plans->ranges.size(); ++i) {
    covered += volume(plans->ranges[i].domain);
    for (size_t j = 0; j < i; ++j)
      EXPECT_TRUE(disjoint(plans->ranges[i].domain, plans->ranges[j].domain)) << "ranges " << i << " and " << j;
  }
  EXPECT_EQ(volume(whole), covered);
  for (const RangePlan &r : plans->ranges) {
    ASSERT_FALSE(r.judged.empty());
    EXPECT_LE(r.worst, 1.05);
    ASSERT_EQ(whole.size(), r.domain.size());
    for (const auto &[name, range] : r.domain) EXPECT_TRUE(whole.at(name).contains(range)) << name;
    // Judged at its own lower and upper sizes too (the model admits every corner here).
    EXPECT_NE(std::find(r.judged.begin(), r.judged.end(), domainBindings(r.domain)[0]), r.judged.end());
    EXPECT_NE(std::find(r.judged.begin(), r.judged.end(), domainBindings(r.domain)[2]), r.judged.end());
    // And at the other corners: one size at its lower end, the other at its upper.
    const Interval rs = r.domain.at("S"), rt = r.domain.at("T");
    for (const Binding &corner : {Binding{{"S", rs.lo}, {"T", rt.hi}}, Binding{{"S", rs.hi}, {"T", rt.lo}}})
      EXPECT_NE(std::find(r.judged.begin(), r.judged.end(), corner), r.judged.end())
          << "S=" << corner.at("S") << " T=" << corner.at("T");
    ExprScope scope = r.model->graph.enter();
    for (const auto &b : r.judged) {
      for (const auto &[name, v] : b) EXPECT_TRUE(r.domain.at(name).contains(v)) << name << "=" << v;
      auto ratio = lower::peakOverLowerBound(r.plan, b);
      ASSERT_TRUE(ratio);
      EXPECT_LE(*ratio, r.worst + 1e-12);
    }
    // Valid on the whole range: the verifier on the plan's JSON.
    PlanReport report{"slots", &r.model->graph, &r.plan, {}};
    auto check = lower::checkPlanJson(nlohmann::json::parse(planJsonText(report)));
    ASSERT_TRUE(check.ok()) << check.error().message;
    EXPECT_TRUE(check->ok());
  }
}

TEST(RangePlans, OnePlanWhereItMeetsTheGoal) {
  InferOptions options;
  options.dims = {{"N", {1, 8}}};
  auto plans = planByRanges(textModel("graph main(x: f32[N,64]) {\n  a = Exp(x)\n  b = Tanh(a)\n  return b\n}\n"),
                            options, {}, {1.05, 8});
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  ASSERT_EQ(1u, plans->ranges.size());
  EXPECT_LE(plans->ranges[0].worst, 1.05);
  EXPECT_FALSE(plans->ranges[0].judged.empty());
  EXPECT_EQ((Interval{1, 8}), plans->ranges[0].domain.at("N"));
}

} // namespace sf
