// `conformance`: shapeflow's shape inference against ONNX's backend test suite (Debian's
// libonnx-testdata), with ONNX's own C++ shape inference as the reference to beat. Every test runs
// in a forked worker so that a crash or a hang in one rule costs one test, not the run. See
// README.md for the verdicts, the exclusion rules and the exit status.
#include "runner.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SF_CONFORMANCE_DIR
#define SF_CONFORMANCE_DIR "."
#endif

namespace fs = std::filesystem;
using namespace sf::conformance;

namespace {

const char *const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple", "contrib"};

struct Options {
  std::string dataDir = "/usr/share/libonnx-testdata/data";
  std::vector<std::string> suites;
  std::string filter;
  bool verbose = false;
  std::string exclusions = SF_CONFORMANCE_DIR "/exclusions.txt";
  bool reference = true;
  bool isolate = true;
  int jobs = 2;
  double timeoutSeconds = 60;
  std::string jsonOut;
  long maxImprecise = -1; // a ratchet: more imprecise tests than this fail the run (-1: any)
};

struct Test {
  std::string suite;
  fs::path dir;
};

std::vector<Test> collect(const Options &o) {
  std::vector<Test> tests;
  for (const auto &suite : o.suites) {
    std::vector<fs::path> dirs;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(fs::path(o.dataDir) / suite, ec))
      if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto &d : dirs) {
      std::string name = d.filename().string();
      if (!o.filter.empty() && (suite + "/" + name).find(o.filter) == std::string::npos) continue;
      tests.push_back({suite, d});
    }
  }
  return tests;
}

TestResult crashed(const Test &t, const std::string &what) {
  TestResult r;
  r.suite = t.suite;
  r.name = t.dir.filename().string();
  r.verdict = Verdict::Fail;
  r.reason = what;
  r.ops.insert("(crash)");
  return r;
}

TestResult runGuarded(const Test &t, const Exclusions &ex, const RunOptions &ro) {
  try {
    return runTest(t.dir, t.suite, ex, ro);
  } catch (const std::exception &e) {
    return crashed(t, std::string("exception: ") + e.what());
  }
}

/// A forked worker: it reads test indices (one per line) from `cmd` and writes one JSON result
/// per line to `res`, until `cmd` closes. The parent knows which test each worker is running, so
/// a crash or a hang costs that test only: the worker is replaced and the run goes on.
struct Worker {
  pid_t pid = -1;
  int cmd = -1, res = -1;
  std::string buffer;
  long inFlight = -1;
  std::chrono::steady_clock::time_point started;
  bool killed = false;
};

[[noreturn]] void workerLoop(int cmd, int res, const std::vector<Test> &tests, const Exclusions &ex,
                             const RunOptions &ro) {
  std::string pending;
  char buf[256];
  for (;;) {
    auto nl = pending.find('\n');
    if (nl == std::string::npos) {
      ssize_t n = read(cmd, buf, sizeof buf);
      if (n <= 0) _exit(0);
      pending.append(buf, size_t(n));
      continue;
    }
    size_t index = std::stoul(pending.substr(0, nl));
    pending.erase(0, nl + 1);
    std::string line = runGuarded(tests.at(index), ex, ro).toJson().dump() + "\n";
    for (size_t off = 0; off < line.size();) {
      ssize_t n = write(res, line.data() + off, line.size() - off);
      if (n <= 0) _exit(1);
      off += size_t(n);
    }
  }
}

bool spawn(Worker &w, std::vector<Worker> &all, const std::vector<Test> &tests,
           const Exclusions &ex, const RunOptions &ro) {
  int cmd[2], res[2];
  if (pipe(cmd) != 0) return false;
  if (pipe(res) != 0) {
    close(cmd[0]);
    close(cmd[1]);
    return false;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    for (const Worker &o : all) {
      if (o.cmd >= 0) close(o.cmd);
      if (o.res >= 0) close(o.res);
    }
    close(cmd[1]);
    close(res[0]);
    signal(SIGPIPE, SIG_DFL);
    workerLoop(cmd[0], res[1], tests, ex, ro);
  }
  close(cmd[0]);
  close(res[1]);
  if (pid < 0) {
    close(cmd[1]);
    close(res[0]);
    return false;
  }
  w = Worker{};
  w.pid = pid;
  w.cmd = cmd[1];
  w.res = res[0];
  return true;
}

/// Runs the tests in `jobs` forked workers.
std::vector<TestResult> runIsolated(const std::vector<Test> &tests, const Exclusions &ex,
                                    const RunOptions &ro, const Options &o) {
  std::vector<TestResult> results(tests.size());
  std::vector<bool> done(tests.size());
  size_t next = 0, finished = 0;
  signal(SIGPIPE, SIG_IGN);
  std::vector<Worker> workers(size_t(std::max(1, o.jobs)));
  for (auto &w : workers)
    if (!spawn(w, workers, tests, ex, ro)) w.pid = -1;
  if (std::none_of(workers.begin(), workers.end(), [](const Worker &w) { return w.pid > 0; })) {
    for (const auto &t : tests) results.push_back(runGuarded(t, ex, ro));
    return results;
  }
  auto finish = [&](size_t index, TestResult r) {
    if (done[index]) return;
    done[index] = true;
    results[index] = std::move(r);
    ++finished;
  };
  while (finished < tests.size()) {
    // Give idle workers a test.
    for (auto &w : workers) {
      if (w.pid <= 0 || w.inFlight >= 0 || next >= tests.size()) continue;
      std::string line = std::to_string(next) + "\n";
      if (write(w.cmd, line.data(), line.size()) != ssize_t(line.size())) continue;
      w.inFlight = long(next++);
      w.started = std::chrono::steady_clock::now();
    }
    std::vector<pollfd> pfds;
    for (const auto &w : workers) pfds.push_back({w.pid > 0 ? w.res : -1, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 500);
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker &w = workers[i];
      if (w.pid <= 0) continue;
      bool dead = false;
      if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[1 << 16];
        ssize_t n = read(w.res, buf, sizeof buf);
        if (n > 0) w.buffer.append(buf, size_t(n));
        else dead = true;
      }
      for (auto nl = w.buffer.find('\n'); nl != std::string::npos; nl = w.buffer.find('\n')) {
        std::string line = w.buffer.substr(0, nl);
        w.buffer.erase(0, nl + 1);
        if (w.inFlight < 0) continue;
        size_t index = size_t(w.inFlight);
        w.inFlight = -1;
        try {
          finish(index, TestResult::fromJson(nlohmann::json::parse(line)));
        } catch (const std::exception &e) {
          finish(index, crashed(tests[index], std::string("unreadable result: ") + e.what()));
        }
      }
      if (!dead && w.inFlight >= 0 && !w.killed &&
          std::chrono::duration<double>(now - w.started).count() > o.timeoutSeconds) {
        kill(w.pid, SIGKILL);
        w.killed = true;
      }
      if (!dead) continue;
      // The worker is gone: its test (if any) crashed or timed out; replace it.
      close(w.cmd);
      close(w.res);
      int status = 0;
      waitpid(w.pid, &status, 0);
      if (w.inFlight >= 0) {
        size_t index = size_t(w.inFlight);
        std::string what = w.killed ? "timeout after " + std::to_string(int(o.timeoutSeconds)) + " s"
                           : WIFSIGNALED(status) ? std::string("crashed: ") + strsignal(WTERMSIG(status))
                                                 : "worker exited with status " + std::to_string(WEXITSTATUS(status));
        finish(index, crashed(tests[index], what));
      }
      w.pid = -1;
      w.cmd = w.res = -1;
      if (next < tests.size() && !spawn(w, workers, tests, ex, ro)) w.pid = -1;
    }
    if (std::none_of(workers.begin(), workers.end(), [](const Worker &w) { return w.pid > 0; }))
      for (; next < tests.size(); ++next) finish(next, runGuarded(tests[next], ex, ro));
  }
  for (auto &w : workers) {
    if (w.pid <= 0) continue;
    close(w.cmd);
    close(w.res);
    int status = 0;
    waitpid(w.pid, &status, 0);
  }
  return results;
}

const char *verdictLabel(Verdict v) {
  switch (v) {
  case Verdict::Pass: return "PASS";
  case Verdict::Fail: return "FAIL";
  case Verdict::Imprecise: return "IMPRECISE";
  case Verdict::Excluded: return "EXCLUDED";
  }
  return "?";
}

std::string opsText(const TestResult &r) {
  std::string s;
  for (const auto &op : r.ops) s += (s.empty() ? "" : ",") + op;
  return s;
}

int report(const std::vector<TestResult> &results, const Options &o, const Exclusions &ex,
           double seconds) {
  bool refAvailable = false;
  for (const auto &r : results) refAvailable |= r.referenceRan;

  // Per test.
  std::printf("== tests that do not pass ==\n");
  size_t shown = 0;
  for (const auto &r : results) {
    if (r.verdict == Verdict::Pass && !o.verbose) continue;
    ++shown;
    std::printf("%-9s %s/%s [%s]%s\n", verdictLabel(r.verdict), r.suite.c_str(), r.name.c_str(),
                opsText(r).c_str(), r.reason.empty() ? "" : (": " + r.reason).c_str());
    if (o.verbose) {
      for (const auto &c : r.constantInputs) std::printf("    constant input: %s\n", c.c_str());
      for (const auto &d : r.details) std::printf("    %s\n", d.c_str());
      std::printf("    ONNX: %s; %.1f ms\n",
                  !r.referenceRan ? "not run" : r.referenceExact ? "exact" : r.referenceWrong ? "wrong" : "not exact",
                  r.ms);
    }
  }
  if (!shown) std::printf("(none)\n");

  // By op.
  std::map<std::string, std::map<Verdict, std::vector<std::string>>> byOp;
  for (const auto &r : results)
    if (r.verdict != Verdict::Pass)
      for (const auto &op : r.ops) byOp[op][r.verdict].push_back(r.suite + "/" + r.name);
  if (!byOp.empty()) {
    std::printf("\n== non-pass tests by op ==\n");
    for (const auto &[op, byVerdict] : byOp) {
      std::printf("%s:", op.c_str());
      for (const auto &[v, names] : byVerdict) {
        std::printf(" %s %zu (", toString(v), names.size());
        for (size_t i = 0; i < names.size(); ++i) std::printf("%s%s", i ? " " : "", names[i].c_str());
        std::printf(")");
      }
      std::printf("\n");
    }
  }

  // ONNX better than us: each is a failure.
  size_t refExact = 0, onnxBetter = 0, oursBetter = 0, refWrong = 0, refRan = 0;
  for (const auto &r : results) {
    if (!r.referenceRan) continue;
    ++refRan;
    refExact += r.referenceExact;
    refWrong += r.referenceWrong;
    onnxBetter += r.referenceExact && !r.oursExact;
    oursBetter += r.oursExact && !r.referenceExact;
  }
  if (onnxBetter) {
    std::printf("\n== ONNX's inference is exact, shapeflow's is not (failures) ==\n");
    for (const auto &r : results)
      if (r.referenceRan && r.referenceExact && !r.oursExact)
        std::printf("%s/%s [%s]: %s\n", r.suite.c_str(), r.name.c_str(), opsText(r).c_str(),
                    r.reason.c_str());
  }
  if (o.verbose && oursBetter) {
    std::printf("\n== shapeflow exact, ONNX not ==\n");
    for (const auto &r : results)
      if (r.referenceRan && r.oursExact && !r.referenceExact)
        std::printf("%s/%s: ONNX %s\n", r.suite.c_str(), r.name.c_str(), r.referenceNote.c_str());
  }
  if (o.verbose && refWrong) {
    std::printf("\n== ONNX's inference contradicts the test data ==\n");
    for (const auto &r : results)
      if (r.referenceWrong)
        std::printf("%s/%s: %s\n", r.suite.c_str(), r.name.c_str(), r.referenceNote.c_str());
  }

  // Unneeded exclusions (the test passes now): candidates for removal.
  std::vector<std::string> unneeded;
  for (const auto &r : results)
    if (r.verdict == Verdict::Pass && ex.lists(r.suite, r.name)) unneeded.push_back(r.suite + "/" + r.name);

  // The table.
  std::printf("\n== summary ==\n");
  std::printf("%-20s %6s %6s %10s %9s %6s\n", "suite", "pass", "fail", "imprecise", "excluded", "total");
  std::map<std::string, std::array<size_t, 4>> table;
  std::array<size_t, 4> total{};
  for (const auto &r : results) {
    table[r.suite][size_t(r.verdict)]++;
    total[size_t(r.verdict)]++;
  }
  auto row = [](const std::string &name, const std::array<size_t, 4> &c) {
    std::printf("%-20s %6zu %6zu %10zu %9zu %6zu\n", name.c_str(), c[0], c[1], c[2], c[3],
                c[0] + c[1] + c[2] + c[3]);
  };
  for (const auto &suite : o.suites)
    if (table.count(suite)) row(suite, table[suite]);
  row("total", total);
  {
    std::error_code ec;
    size_t folders = 0, models = 0;
    for (const auto &e : fs::directory_iterator(fs::path(o.dataDir) / "real", ec)) {
      ++folders;
      models += fs::exists(e.path() / "model.onnx");
    }
    if (folders)
      std::printf("real: not run (%zu folders, %zu with model.onnx: ONNX's runner downloads these "
                  "models, the package ships only their URLs)\n", folders, models);
  }
  size_t constTests = 0, constInputs = 0;
  for (const auto &r : results) {
    constTests += !r.constantInputs.empty();
    constInputs += r.constantInputs.size();
  }
  std::printf("constant inputs: %zu inputs of %zu tests given to inference as constants (rank <= 1, "
              "<= 64 elements; ONNX's reference gets them as initializers)\n", constInputs, constTests);
  if (refAvailable) {
    std::printf("ONNX reference (libonnx InferShapes, data propagation): exact on %zu of %zu tests; "
                "wrong on %zu\n", refExact, refRan, refWrong);
    std::printf("  ONNX exact, shapeflow not: %zu%s\n", onnxBetter, onnxBetter ? "  <- failures" : "");
    std::printf("  shapeflow exact, ONNX not: %zu\n", oursBetter);
  } else {
    std::printf("ONNX reference: not run%s\n", o.reference ? " (built without libonnx)" : "");
  }
  if (!unneeded.empty()) {
    std::printf("exclusions no longer needed (these pass):");
    for (const auto &n : unneeded) std::printf(" %s", n.c_str());
    std::printf("\n");
  }
  std::printf("time: %.1f s\n", seconds);

  if (!o.jsonOut.empty()) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto &r : results) all.push_back(r.toJson());
    std::ofstream(o.jsonOut) << all.dump(1) << "\n";
  }
  // A wrong fact, or a test ONNX infers exactly and shapeflow does not, always fails the run;
  // imprecise tests (ONNX imprecise too) fail it beyond the --max-imprecise ratchet.
  long imprecise = long(total[size_t(Verdict::Imprecise)]);
  bool tooImprecise = o.maxImprecise < 0 ? imprecise > 0 : imprecise > o.maxImprecise;
  if (tooImprecise)
    std::printf("FAILED: %ld imprecise tests, more than the %ld allowed (--max-imprecise)\n",
                imprecise, std::max(o.maxImprecise, 0L));
  else if (o.maxImprecise >= 0 && imprecise < o.maxImprecise)
    std::printf("note: %ld imprecise tests, fewer than --max-imprecise %ld: lower the ratchet\n",
                imprecise, o.maxImprecise);
  bool bad = total[size_t(Verdict::Fail)] || tooImprecise || onnxBetter;
  return bad ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"conformance: shapeflow's inferred output types and shapes against ONNX's backend "
               "test suite, with ONNX's C++ shape inference as the reference"};
  Options o;
  app.add_option("--data-dir", o.dataDir, "libonnx-testdata's data folder")->capture_default_str();
  app.add_option("--suite", o.suites, "node | pytorch-converted | pytorch-operator | simple | contrib (repeatable; default all)");
  app.add_option("--filter", o.filter, "only tests whose suite/name contains this");
  app.add_flag("--verbose,-v", o.verbose, "every test with details (diagnostics, notes, ONNX's facts)");
  app.add_option("--exclusions", o.exclusions, "value-dependent tests")->capture_default_str();
  app.add_flag("!--no-reference", o.reference, "do not run ONNX's shape inference");
  app.add_flag("!--no-isolate", o.isolate, "run tests in this process (for a debugger)");
  app.add_option("--jobs,-j", o.jobs, "tests run at once")->capture_default_str();
  app.add_option("--timeout", o.timeoutSeconds, "seconds per test")->capture_default_str();
  app.add_option("--json", o.jsonOut, "also write every result to this file");
  app.add_option("--max-imprecise", o.maxImprecise,
                 "fail only when more tests than this are imprecise (default: any fails)");
  CLI11_PARSE(app, argc, argv);

  // By default ONNX's suites; `contrib` (onnxruntime's com.microsoft ops) is in this repo's data.
  if (o.suites.empty()) o.suites.assign(std::begin(kSuites), std::end(kSuites) - 1);
  for (const auto &s : o.suites)
    if (std::find(std::begin(kSuites), std::end(kSuites), s) == std::end(kSuites)) {
      std::fprintf(stderr, "conformance: unknown suite '%s'\n", s.c_str());
      return 2;
    }
  if (!fs::is_directory(o.dataDir)) {
    std::fprintf(stderr, "conformance: %s not found (install libonnx-testdata): skipped\n", o.dataDir.c_str());
    return 77;
  }
  Exclusions ex;
  std::string error;
  if (!loadExclusions(o.exclusions, ex, error)) {
    std::fprintf(stderr, "conformance: %s\n", error.c_str());
    return 2;
  }
  RunOptions ro;
  ro.reference = o.reference;
  auto tests = collect(o);
  if (tests.empty()) {
    std::fprintf(stderr, "conformance: no tests match\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  warmUp(ro);
  std::vector<TestResult> results;
  if (o.isolate) {
    results = runIsolated(tests, ex, ro, o);
  } else {
    for (const auto &t : tests) results.push_back(runGuarded(t, ex, ro));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report(results, o, ex, seconds);
}
