// The self-check over the golden corpus (the soundness property): on every golden graph
// the executor can run, at three samples of its symbols, every tensor has the type and shape
// the inference predicted. Slow (about a minute): labelled `slow`, left out of the sanitizer run.
#include "shapeflow/eval/check.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "../golden/golden_cases.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace sf::eval {
namespace {

std::unique_ptr<Graph> inferred(const std::string &text) {
  auto g = parseGraph(text);
  if (!g.ok()) return nullptr;
  auto out = std::make_unique<Graph>(std::move(*g));
  Diagnostics d;
  inferGraph(*out, d);
  return out;
}

fs::path sourceDir() {
  if (const char *src = std::getenv("SF_SOURCE_DIR"); src && *src) return src;
  return SF_SOURCE_DIR_DEFAULT;
}

TEST(CheckProperty, EveryGoldenGraphThatRunsAgreesWithItsFacts) {
  size_t cases = 0, ran = 0, tensors = 0;
  std::string problems;
  for (const auto &entry : fs::recursive_directory_iterator(sourceDir() / "tests" / "golden")) {
    if (entry.path().extension() != ".txt") continue;
    std::vector<std::string> parts = golden::goldenCases(entry.path());
    for (size_t i = 0; i < parts.size(); ++i) {
      auto g = inferred(parts[i]);
      if (!g) continue;
      ++cases;
      CheckOptions o;
      o.samples = 3;
      o.maxMemory = int64_t(256) << 20;
      if (std::getenv("SF_TRACE")) std::fprintf(stderr, "%s case %zu\n", entry.path().filename().c_str(), i);
      auto r = checkInference(*g, o);
      if (!r.ok()) continue;
      for (const auto &s : r->samples) {
        ran += s.ran;
        tensors += s.tensors;
        for (const auto &m : s.mismatches)
          problems += entry.path().filename().string() + " case " + std::to_string(i) + ": " + m + "\n";
      }
    }
  }
  EXPECT_TRUE(problems.empty()) << problems;
  EXPECT_GT(cases, 250u);
  EXPECT_GT(ran, 100u) << "samples that ran to the end";
  std::printf("golden graphs: %zu, samples that ran: %zu, tensors checked: %zu\n", cases, ran, tensors);
}

} // namespace
} // namespace sf::eval
