// Expressions and symbols live as long as the model they belong to (dim/expr.h "Lifetime"): a
// program that analyses models one after another holds no more after the hundredth than after
// the first. Every golden graph is parsed, inferred and printed in rounds; what the contexts hold
// once the graphs are gone must come back to the same count every round.
#include "shapeflow/dim/expr.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace sf {
namespace {

/// Every case of every golden file, comment lines blanked (as the golden runner does).
std::vector<std::string> goldenCases() {
  std::vector<std::string> out;
  for (const auto &e : fs::recursive_directory_iterator(SF_GOLDEN_DIR)) {
    if (e.path().extension() != ".txt" || e.path().filename() == "CMakeLists.txt") continue;
    std::ifstream in(e.path());
    std::string line, cur;
    while (std::getline(in, line)) {
      if (line.rfind("// -----", 0) == 0) {
        out.push_back(cur);
        cur.clear();
        continue;
      }
      cur += (line.rfind("//", 0) == 0 ? "" : line) + "\n";
    }
    out.push_back(cur);
  }
  return out;
}

/// Parses, infers and prints every case; returns how many parsed.
size_t analyseAll(const std::vector<std::string> &cases) {
  size_t parsed = 0;
  for (const std::string &text : cases) {
    auto g = parseGraph(text);
    if (!g.ok()) continue;
    ++parsed;
    Diagnostics diags;
    inferGraph(*g, diags);
    Report report{"case", &*g, &diags, {}};
    std::ostringstream os;
    printText(report, os);
    (void)jsonText(toJson(report));
  }
  return parsed;
}

TEST(Lifetime, RepeatedAnalysisHoldsNoMoreExpressions) {
  auto cases = goldenCases();
  ASSERT_GT(cases.size(), 100u);
  size_t parsed = analyseAll(cases);
  EXPECT_GT(parsed, 100u);
  const size_t nodes = liveExprNodes(), contexts = liveExprContexts();
  for (int round = 1; round < 50; ++round) {
    analyseAll(cases);
    ASSERT_EQ(liveExprNodes(), nodes) << "round " << round;
    ASSERT_EQ(liveExprContexts(), contexts) << "round " << round;
  }
}

TEST(Lifetime, AModelsContextDiesWithIt) {
  (void)constant(1); // the default context (the small constants) exists from here on
  size_t before = liveExprContexts(), nodesBefore = liveExprNodes();
  {
    auto g = parseGraph("graph main(x: f32[N,77777]) {\n  y = Flatten(x)\n  return y\n}\n");
    ASSERT_TRUE(g.ok());
    Diagnostics d;
    inferGraph(*g, d);
    EXPECT_EQ(liveExprContexts(), before + 1);
    EXPECT_GT(liveExprNodes(), nodesBefore); // N, 77777 and N*77777 at least
  }
  EXPECT_EQ(liveExprContexts(), before);
  EXPECT_EQ(liveExprNodes(), nodesBefore);
}

} // namespace
} // namespace sf
