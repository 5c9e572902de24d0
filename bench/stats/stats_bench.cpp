// `stats_bench [--reps R] MODEL...`: for every model, R times (median shown): load it, then time
//   infer  = inferGraph + the infer report as JSON text (what `shapeflow infer --json` does
//            after loading), and
//   stats  = inferGraph + computeStats + the statistics as JSON text (`shapeflow stats --json`),
// on fresh loads each time; prints both (and the statistics' two parts: counting, and the JSON),
// the load time, and stats / infer with and without the load. The goal: stats at most
// twice infer.
#include "shapeflow/cost/stats.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/report.h"
#include "shapeflow/report/stats_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int reps = 5;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else
      models.push_back(argv[i]);
  }
  if (models.empty()) {
    std::fprintf(stderr, "usage: stats_bench [--reps R] MODEL...\n");
    return 2;
  }
  std::printf("%-24s %6s %8s %9s %9s %9s %9s %7s %9s\n", "model", "nodes", "load_ms", "infer_ms",
              "stats_ms", "(count", "json)", "ratio", "with_load");
  size_t sink = 0;
  for (const auto &m : models) {
    std::vector<double> load, infer, stats, count, json;
    size_t nodes = 0;
    for (int r = 0; r < reps; ++r) {
      for (int which = 0; which < 2; ++which) {
        sf::Diagnostics diags;
        auto t0 = Clock::now();
        auto g = sf::onnx::loadGraphFile(m, diags);
        auto t1 = Clock::now();
        if (!g.ok()) {
          std::fprintf(stderr, "%s\n", g.error().message.c_str());
          return 2;
        }
        nodes = g->nodes.size();
        if (which == 0) {
          load.push_back(ms(t0, t1));
          sf::Report report{m, &*g, &diags, sf::inferGraph(*g, diags)};
          sink += sf::jsonText(sf::toJson(report), 1).size();
          infer.push_back(ms(t1, Clock::now()));
        } else {
          sf::inferGraph(*g, diags);
          auto t2 = Clock::now();
          auto s = sf::computeStats(*g);
          if (!s.ok()) {
            std::fprintf(stderr, "%s: %s\n", m.c_str(), s.error().message.c_str());
            return 2;
          }
          auto t3 = Clock::now();
          sf::StatsReport report{m, &*g, &*s, std::nullopt, {}};
          sink += sf::statsJsonText(report, 1).size();
          auto t4 = Clock::now();
          stats.push_back(ms(t1, t4));
          count.push_back(ms(t2, t3));
          json.push_back(ms(t3, t4));
        }
      }
    }
    double l = median(load), i = median(infer), s = median(stats);
    std::string name = m.substr(m.find_last_of('/') + 1);
    std::printf("%-24s %6zu %8.2f %9.2f %9.2f %9.2f %9.2f %6.2fx %8.2fx\n", name.c_str(), nodes, l,
                i, s, median(count), median(json), s / i, (l + s) / (l + i));
  }
  std::fprintf(stderr, "(%zu bytes of JSON)\n", sink);
  return 0;
}
