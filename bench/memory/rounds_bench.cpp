// Memory across repeated analyses: `rounds_bench [--rounds R] MODEL...` loads, infers and
// reports (JSON, as `shapeflow infer --json` does) every model R times in one process, and prints
// after round 1 and every tenth round the resident set size and the expression nodes and contexts
// alive. Flat after the first round is the goal (dim/expr.h "Lifetime"). Exit 1 if the expressions
// alive after the last round differ from those after the first.
#include "shapeflow/dim/expr.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/report.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

long rssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

} // namespace

int main(int argc, char **argv) {
  int rounds = 50;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else
      models.push_back(argv[i]);
  }
  if (models.empty()) {
    std::fprintf(stderr, "usage: rounds_bench [--rounds R] MODEL...\n");
    return 2;
  }
  std::printf("%6s %10s %12s %9s\n", "round", "rss_kb", "expr_nodes", "contexts");
  size_t firstNodes = 0;
  for (int r = 1; r <= rounds; ++r) {
    size_t bytes = 0;
    for (const auto &m : models) {
      sf::Diagnostics diags;
      auto g = sf::onnx::loadGraphFile(m, diags);
      if (!g.ok()) {
        std::fprintf(stderr, "%s\n", g.error().message.c_str());
        return 2;
      }
      sf::Report report{m, &*g, &diags, sf::inferGraph(*g, diags)};
      bytes += sf::jsonText(sf::toJson(report)).size();
    }
    if (r == 1) firstNodes = sf::liveExprNodes();
    if (r == 1 || r % 10 == 0 || r == rounds)
      std::printf("%6d %10ld %12zu %9zu   (%zu bytes of JSON)\n", r, rssKb(), sf::liveExprNodes(),
                  sf::liveExprContexts(), bytes);
  }
  return sf::liveExprNodes() == firstNodes ? 0 : 1;
}
