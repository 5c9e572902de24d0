// Replays every input in tests/regress/ (.onnx models and .graph text-form graphs, each listed with
// its expected outcome in expected.txt) through load -> inference -> report (text and JSON), as
// `shapeflow infer` does. Under the sanitizer build in CI this is where a fixed memory-safety
// bug would show again.
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace {

struct Case {
  std::string file, outcome, text;
};

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<Case> manifest(const fs::path &dir) {
  std::vector<Case> out;
  std::ifstream in(dir / "expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    // file | outcome | text: split at the first two '|' (the text may be empty).
    size_t a = line.find('|'), b = a == std::string::npos ? a : line.find('|', a + 1);
    if (a == std::string::npos) continue;
    Case c{trim(line.substr(0, a)),
           trim(line.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1)),
           b == std::string::npos ? std::string() : trim(line.substr(b + 1))};
    out.push_back(c);
  }
  return out;
}

} // namespace

TEST(Regressions, EveryFileGivesItsOutcome) {
  fs::path dir = SF_REGRESS_DIR;
  auto cases = manifest(dir);
  ASSERT_FALSE(cases.empty());
  std::set<std::string> listed;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.file);
    listed.insert(c.file);
    sf::Diagnostics diags;
    auto g = sf::onnx::loadGraphFile((dir / c.file).string(), diags);
    std::string text;
    if (!g.ok()) {
      text = g.error().message;
      EXPECT_EQ("load-error", c.outcome) << text;
    } else {
      sf::Report report{c.file, &*g, &diags, sf::inferGraph(*g, diags)};
      std::ostringstream listing;
      sf::printText(report, listing);
      EXPECT_FALSE(sf::jsonText(sf::toJson(report)).empty());
      for (const auto &d : diags.list()) text += sf::format(d) + "\n";
      bool warned = false; // assumptions (a named dim is at least 1, ...) leave a file clean
      for (const auto &d : diags.list()) warned = warned || d.severity == sf::Severity::Warning;
      std::string got = diags.hasErrors() ? "errors" : warned ? "warnings" : "clean";
      EXPECT_EQ(c.outcome, got) << text;
    }
    EXPECT_NE(std::string::npos, text.find(c.text)) << text;
  }
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".onnx" || entry.path().extension() == ".graph") {
      EXPECT_TRUE(listed.count(entry.path().filename().string())) << entry.path();
    }
}
