// Golden tests (MLIR lit style, tests/golden/README.md): every tests/golden/**/*.txt holds cases
// split by `// -----`; a case is a text-form graph plus `// CHECK: ...` lines with the facts of
// every node output and the diagnostics that `shapeflow infer` prints (under stats/: the
// statistics of every node and the totals; under lower/<stage>/: the listing of that lowering
// stage; then the diagnostics). Each case is one gtest.
//
//   golden_tests                     run every case
//   golden_tests --update            rewrite the CHECK lines from the actual output
//   SF_UPDATE_GOLDEN=1 ctest -R golden   the same through ctest
//
// A case marked `// KNOWN-BUG: why` keeps its (correct) expectation: it fails while the
// implementation disagrees, and --update leaves it alone.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/contract.h"
#include "shapeflow/report/report.h"
#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/lower/plan_check.h"
#include "shapeflow/report/lower_report.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/stats_report.h"
#include "shapeflow/eval/eval.h"
#include "shapeflow/rewrite/rewrite.h"
#include "shapeflow/eval/evaluator.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace sf::golden {
namespace {

constexpr std::string_view kSeparator = "// -----";
constexpr std::string_view kCheck = "// CHECK:";
constexpr std::string_view kKnownBug = "// KNOWN-BUG:";

bool gUpdate = false;

std::string_view trim(std::string_view t) {
  while (!t.empty() && std::isspace(uint8_t(t.front())))
    t.remove_prefix(1);
  while (!t.empty() && std::isspace(uint8_t(t.back())))
    t.remove_suffix(1);
  return t;
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

fs::path goldenDir() {
  if (const char *src = std::getenv("SF_SOURCE_DIR"); src && *src)
    return fs::path(src) / "tests" / "golden";
#ifdef SF_GOLDEN_DIR
  return fs::path(SF_GOLDEN_DIR);
#else
  return fs::current_path();
#endif
}

/// One case of a golden file: lines [begin, end) of the file (separators excluded).
struct Case {
  std::string file; // relative to goldenDir(), '/'-separated
  size_t index = 0;
  size_t begin = 0, end = 0;
  std::string name; // gtest parameter name
};

/// The cases of a file's lines: split at `// -----` lines.
std::vector<std::pair<size_t, size_t>> caseRanges(const std::vector<std::string> &lines) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t begin = 0;
  for (size_t i = 0; i <= lines.size(); ++i) {
    if (i == lines.size() || trim(lines[i]) == kSeparator) {
      out.emplace_back(begin, i);
      begin = i + 1;
    }
  }
  return out;
}

bool readFile(const fs::path &p, std::string &out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

std::string sanitize(std::string s) {
  for (char &c : s)
    if (!std::isalnum(uint8_t(c))) c = '_';
  return s;
}

std::vector<Case> discoverCases() {
  std::vector<Case> cases;
  fs::path dir = goldenDir();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return cases;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".txt" &&
        it->path().filename() != "CMakeLists.txt")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const fs::path &p : files) {
    std::string text;
    if (!readFile(p, text)) continue;
    std::string rel = fs::relative(p, dir).generic_string();
    std::string stem = rel.substr(0, rel.size() - 4);
    auto lines = splitLines(text);
    auto ranges = caseRanges(lines);
    for (size_t i = 0; i < ranges.size(); ++i) {
      bool empty = true; // a file may end with a separator: nothing but comments after it
      for (size_t l = ranges[i].first; l < ranges[i].second && empty; ++l)
        empty = trim(lines[l]).empty() || startsWith(trim(lines[l]), "//");
      if (empty) continue;
      Case c;
      c.file = rel;
      c.index = i;
      c.begin = ranges[i].first;
      c.end = ranges[i].second;
      c.name = sanitize(stem) + "_" + std::to_string(i);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

/// What the case says: its graph (comment lines blanked, so that parse errors carry the file's
/// line numbers), its CHECK lines, and its KNOWN-BUG notes.
struct ParsedCase {
  std::string graphText;
  std::vector<std::string> checks;
  std::vector<std::string> knownBugs;
  bool hasGraph = false;
};

ParsedCase parseCase(const std::vector<std::string> &lines, size_t begin, size_t end) {
  ParsedCase pc;
  pc.graphText.assign(begin, '\n');
  bool inKnownBug = false; // plain comment lines right after a KNOWN-BUG line continue it
  for (size_t i = begin; i < end; ++i) {
    std::string_view l = trim(lines[i]);
    if (startsWith(l, "//")) {
      if (startsWith(l, kCheck)) {
        std::string_view rest = l.substr(kCheck.size());
        if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        pc.checks.emplace_back(rest);
        inKnownBug = false;
      } else if (startsWith(l, kKnownBug)) {
        pc.knownBugs.emplace_back(trim(l.substr(kKnownBug.size())));
        inKnownBug = true;
      } else if (inKnownBug && trim(l.substr(2)).size() > 0) {
        pc.knownBugs.back() += " " + std::string(trim(l.substr(2)));
      } else {
        inKnownBug = false;
      }
      pc.graphText += '\n';
      continue;
    }
    inKnownBug = false;
    if (!l.empty()) pc.hasGraph = true;
    pc.graphText += lines[i];
    pc.graphText += '\n';
  }
  return pc;
}

/// What `shapeflow infer` prints for them (the report library's lines): the facts of every named
/// node output in node order, then the errors and warnings in the order reported.
/// What a file checks, by its folder: the facts (the default), the statistics (stats/: per
/// node, per op type, total), or a lowering stage (lower/shapes/, lower/bounds/,
/// lower/buffers/: the listings of `shapeflow lower --stage ...`), or the memory plan
/// (lower/plan/: the listing of `shapeflow plan`, then the verifier's verdict on its JSON), or
/// a rewrite (rewrite/: the graph in the text form after the passes the file's name gives:
/// rewrite/execution.txt the executor's, rewrite/<pass>.txt one pass).
enum class Checks { Facts, Backward, Contract, Stats, Shapes, Bounds, Buffers, Plan, Rewrite };

Checks checksOf(const std::string &file) {
  if (startsWith(file, "rewrite/")) return Checks::Rewrite;
  if (startsWith(file, "backward/")) return Checks::Backward;
  if (startsWith(file, "contract/")) return Checks::Contract;
  if (startsWith(file, "stats/")) return Checks::Stats;
  if (startsWith(file, "lower/shapes/")) return Checks::Shapes;
  if (startsWith(file, "lower/bounds/")) return Checks::Bounds;
  if (startsWith(file, "lower/buffers/")) return Checks::Buffers;
  if (startsWith(file, "lower/plan/")) return Checks::Plan;
  return Checks::Facts;
}

std::vector<std::string> planCheckLines(const Graph &g) {
  auto plan = lower::planMemory(g, {});
  if (!plan.ok()) return {"plan error: " + plan.error().message};
  PlanReport r;
  r.graph = &g;
  r.plan = &*plan;
  std::vector<std::string> out = planLines(r);
  auto json = nlohmann::json::parse(planJsonText(r), nullptr, false);
  auto check = lower::checkPlanJson(json);
  if (!check.ok()) {
    out.push_back("verifier error: " + check.error().message);
  } else {
    out.push_back(check->ok() ? "verifier: valid" : "verifier: INVALID");
    for (const std::string &p : check->problems)
      out.push_back("  " + p);
  }
  return out;
}

std::vector<std::string> lowerLines(const Graph &g, Checks checks) {
  if (checks == Checks::Plan) return planCheckLines(g);
  auto program = lower::lowerShapes(g);
  if (!program.ok()) return {"lower error: " + program.error().message};
  LowerReport r{"", &g, &*program, nullptr, nullptr};
  if (checks == Checks::Shapes) return shapeLines(r);
  if (checks == Checks::Bounds) {
    auto bounds = lower::computeBounds(g);
    if (!bounds.ok()) return {"bounds error: " + bounds.error().message};
    r.bounds = &*bounds;
    return boundLines(r);
  }
  auto plan = lower::planBuffers(*program);
  if (!plan.ok()) return {"buffers error: " + plan.error().message};
  r.plan = &*plan;
  return bufferLines(r);
}

/// `shapeflow contract` without its first line (the model's path).
std::vector<std::string> contractLines(Graph &g) {
  ContractBasis basis = contractBasis(g);
  Diagnostics diags;
  inferGraph(g, diags);
  std::ostringstream os;
  printContract(makeContract(g, diags, basis), "", os);
  auto lines = splitLines(os.str());
  if (!lines.empty()) lines.erase(lines.begin());
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

/// The graph after the passes `file` names, printed; then what each pass rewrote.
std::vector<std::string> rewriteLines(Graph &g, const std::string &file) {
  std::string stem = fs::path(file).stem().string();
  std::vector<rewrite::Pass> passes;
  for (rewrite::Pass &p : rewrite::executionPasses())
    if (stem == "execution" || p.name == stem) passes.push_back(std::move(p));
  for (rewrite::Pass &p : rewrite::simplifyPasses())
    if (stem == "simplify" || p.name == stem) passes.push_back(std::move(p));
  if (passes.empty()) return {"no pass is named '" + stem + "'"};
  eval::KernelEvaluator evaluator;
  rewrite::PassContext ctx{g, eval::evalRegistry(), &evaluator};
  auto counts = rewrite::runPasses(ctx, passes);
  if (!counts.ok()) return {"rewrite error: " + counts.error().message};
  std::vector<std::string> out = splitLines(printGraph(g));
  for (const rewrite::PassCount &c : *counts) out.push_back(c.name + ": " + std::to_string(c.rewrites));
  return out;
}

std::vector<std::string> actualLines(Graph &g, const Diagnostics &diags, Checks checks, const std::string &file) {
  std::vector<std::string> out;
  if (checks == Checks::Rewrite) {
    out = rewriteLines(g, file);
  } else if (checks == Checks::Facts) {
    out = tensorLines(g);
  } else if (checks == Checks::Backward) {
    // What backward inference is for: the inputs' facts, then every tensor's.
    for (OutletId o : g.inputs) out.push_back("input " + g.outlet(o).name + ": " + toString(g.fact(o)));
    for (std::string &line : tensorLines(g)) out.push_back(std::move(line));
  } else if (checks != Checks::Stats) {
    out = lowerLines(g, checks);
  } else if (auto s = computeStats(g); s.ok()) {
    out = statsLines(*s);
  } else {
    out.push_back("stats error: " + s.error().message);
  }
  for (std::string &line : diagnosticLines(diags))
    out.push_back(std::move(line));
  return out;
}

/// Unified-style line diff (LCS): ` ` common, `-` expected only, `+` actual only.
std::string lineDiff(const std::vector<std::string> &a, const std::vector<std::string> &b) {
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> lcs(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out = "--- expected\n+++ actual\n";
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out += "  " + a[i++] + "\n";
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out += "- " + a[i++] + "\n";
    } else {
      out += "+ " + b[j++] + "\n";
    }
  }
  return out;
}

/// Rewrites the CHECK lines of case `index` of `path` (under an exclusive lock, since ctest may
/// run cases of one file in parallel). The new lines go where the first CHECK line was, or after
/// the case's last non-blank line.
bool rewriteChecks(const fs::path &path, size_t index, const std::vector<std::string> &actual,
                   std::string &err) {
  int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) {
    err = "cannot open " + path.string();
    return false;
  }
  ::flock(fd, LOCK_EX);
  std::string text;
  bool ok = readFile(path, text);
  if (ok) {
    auto lines = splitLines(text);
    auto ranges = caseRanges(lines);
    if (index >= ranges.size()) {
      err = "the file no longer has case " + std::to_string(index);
      ok = false;
    } else {
      auto [begin, end] = ranges[index];
      std::vector<std::string> out(lines.begin(), lines.begin() + long(begin));
      size_t insertAt = std::string::npos, lastContent = begin;
      for (size_t i = begin; i < end; ++i) {
        if (startsWith(trim(lines[i]), kCheck)) {
          if (insertAt == std::string::npos) insertAt = out.size();
          continue;
        }
        out.push_back(lines[i]);
        if (!trim(lines[i]).empty()) lastContent = out.size();
      }
      if (insertAt == std::string::npos) insertAt = lastContent;
      std::vector<std::string> checks;
      for (const auto &l : actual)
        checks.push_back(std::string(kCheck) + " " + l);
      out.insert(out.begin() + long(insertAt), checks.begin(), checks.end());
      out.insert(out.end(), lines.begin() + long(end), lines.end());
      std::string newText;
      for (const auto &l : out)
        newText += l + "\n";
      std::ofstream o(path, std::ios::binary | std::ios::trunc);
      o << newText;
      ok = bool(o);
      if (!ok) err = "cannot write " + path.string();
    }
  } else {
    err = "cannot read " + path.string();
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return ok;
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.file << " case " << c.index; }

class GoldenTest : public ::testing::TestWithParam<Case> {};

TEST_P(GoldenTest, Check) {
  const Case &c = GetParam();
  fs::path path = goldenDir() / c.file;
  std::string shown = "tests/golden/" + c.file; // as a path from the source root
  std::string text;
  ASSERT_TRUE(readFile(path, text)) << "cannot read " << path;
  auto lines = splitLines(text);
  auto ranges = caseRanges(lines);
  ASSERT_LT(c.index, ranges.size()) << shown << ": the file changed; rebuild to rediscover cases";
  auto [begin, end] = ranges[c.index];
  ParsedCase pc = parseCase(lines, begin, end);
  // Failures point at the case's first line, so that editors and CI annotations jump there.
  int line = int(begin + 1);
  std::string where = shown + ":" + std::to_string(line) + ": case " + std::to_string(c.index);
  if (!pc.hasGraph) {
    ADD_FAILURE_AT(path.c_str(), line) << where << " has no graph (the file changed?)";
    return;
  }

  auto g = parseGraph(pc.graphText);
  if (!g.ok()) {
    // Comment lines were blanked, not removed: the error's line:column is the file's.
    ADD_FAILURE_AT(path.c_str(), line)
        << where << " does not parse:\n  " << shown << ":" << g.error().message;
    return;
  }
  const Checks checks = checksOf(c.file);
  std::vector<std::string> actual;
  Diagnostics diags;
  if (checks == Checks::Contract) {
    actual = contractLines(*g);
  } else {
    // Forward rules alone, except in the backward cases.
    InferOptions opts;
    opts.backward = checks == Checks::Backward ? Backward::Always : Backward::Off;
    inferGraph(*g, diags, opts);
    actual = actualLines(*g, diags, checks, c.file);
  }

  bool update = gUpdate;
  if (const char *e = std::getenv("SF_UPDATE_GOLDEN"); e && *e && std::string(e) != "0")
    update = true;

  if (actual == pc.checks) {
    if (!pc.knownBugs.empty())
      std::cout << "[ NOTE ] " << where << ": a KNOWN-BUG case now gives the expected output; "
                << "remove its KNOWN-BUG marker\n";
    return;
  }
  std::string diff = lineDiff(pc.checks, actual);
  if (!pc.knownBugs.empty()) {
    std::string why;
    for (const auto &b : pc.knownBugs)
      why += "\n  KNOWN-BUG: " + b;
    ADD_FAILURE_AT(path.c_str(), line) << where << " is a known bug (expectation kept"
                                       << (update ? ", not updated" : "") << ")" << why << "\n"
                                       << diff;
    return;
  }
  if (update) {
    std::string err;
    if (!rewriteChecks(path, c.index, actual, err)) {
      ADD_FAILURE_AT(path.c_str(), line) << where << ": " << err;
      return;
    }
    std::cout << "[ UPDATED ] " << where << "\n" << diff;
    return;
  }
  ADD_FAILURE_AT(path.c_str(), line)
      << where << " differs (rerun with --update or SF_UPDATE_GOLDEN=1 to accept the actual "
      << "output)\n"
      << diff;
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(golden, GoldenTest, ::testing::ValuesIn(discoverCases()), caseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenTest);

} // namespace
} // namespace sf::golden

int main(int argc, char **argv) {
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--update")
      sf::golden::gUpdate = true;
    else
      args.push_back(argv[i]);
  }
  int n = int(args.size());
  args.push_back(nullptr);
  ::testing::InitGoogleTest(&n, args.data());
  return RUN_ALL_TESTS();
}
