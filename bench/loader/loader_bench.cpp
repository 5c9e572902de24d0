// Loader benchmark: for each model path, times (a) libonnx's generated classes,
// onnx::ModelProto::ParseFromIstream, and (b) shapeflow's wire reader, sf::onnx::readModelFile,
// side by side, and prints the time ratio and each one's peak RSS. Every phase runs in its own
// forked process so that the peak RSS of one is not the other's.
//
//   sf_loader_bench [--min-time SECONDS] [--max-reps N] [--phase NAME] model.onnx...
//
// Missing files are reported and skipped. The file is read once beforehand so that both phases
// find it in the page cache; "first" is the first parse in a fresh process (for the mmap reader
// that includes faulting the touched pages in), "median" is over the repetitions that follow.
// Phases are a table (kPhases): `infer` is the whole of `shapeflow infer` before printing.
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/onnx/wire.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

struct Options {
  double minTime = 1.0; // seconds of repetitions per phase (after the first parse)
  int maxReps = 1000;
  std::string onlyPhase;
};

/// What a phase reports from its process. Plain data: it crosses a pipe.
struct Report {
  bool ok = false;
  int reps = 0;
  double firstMs = 0, medianMs = 0;
  long peakRssKb = 0;
  long nodes = 0;
  char error[512] = {};
};

/// One parse of `path`; returns the node count of the main graph, or an error message.
using ParseFn = std::function<bool(const std::string &path, long &nodes, std::string &error)>;

bool parseLibOnnx(const std::string &path, long &nodes, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) {
    error = "ParseFromIstream failed";
    return false;
  }
  nodes = model.graph().node_size();
  return true;
}

bool parseWire(const std::string &path, long &nodes, std::string &error) {
  auto model = sf::onnx::readModelFile(path);
  if (!model.ok()) {
    error = model.error().message;
    return false;
  }
  nodes = static_cast<long>(model->graph.nodes.size());
  return true;
}

/// What `shapeflow infer` does before printing: wire read, import, and inference.
bool loadAndInfer(const std::string &path, long &nodes, std::string &error) {
  auto model = sf::onnx::readModelFile(path);
  if (!model.ok()) {
    error = model.error().message;
    return false;
  }
  sf::Diagnostics diags;
  auto g = sf::onnx::importModel(*model, diags);
  if (!g.ok()) {
    error = g.error().message;
    return false;
  }
  sf::inferGraph(*g, diags);
  nodes = static_cast<long>(model->graph.nodes.size());
  return true;
}

bool parseNothing(const std::string &, long &nodes, std::string &) {
  nodes = 0;
  return true;
}

struct Phase {
  const char *name;
  const char *label;
  ParseFn parse;
};

const Phase kPhases[] = {
    {"baseline", "process baseline (no parse)", parseNothing},
    {"libonnx", "onnx::ModelProto::ParseFromIstream", parseLibOnnx},
    {"wire", "sf::onnx::readModelFile", parseWire},
    {"infer", "wire read + import + inference", loadAndInfer},
};

double nowMs() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

Report runPhase(const Phase &phase, const std::string &path, const Options &options) {
  Report r;
  std::string error;
  double t0 = nowMs();
  if (!phase.parse(path, r.nodes, error)) {
    std::snprintf(r.error, sizeof r.error, "%s", error.c_str());
    return r;
  }
  r.firstMs = nowMs() - t0;
  std::vector<double> times;
  double spent = 0;
  while (spent < options.minTime * 1000 && static_cast<int>(times.size()) < options.maxReps) {
    double t = nowMs();
    long nodes;
    phase.parse(path, nodes, error);
    times.push_back(nowMs() - t);
    spent += times.back();
  }
  if (times.empty()) times.push_back(r.firstMs);
  std::sort(times.begin(), times.end());
  r.medianMs = times[times.size() / 2];
  r.reps = static_cast<int>(times.size());
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  r.peakRssKb = usage.ru_maxrss;
  r.ok = true;
  return r;
}

// Runs a phase in a child process and reads its report through a pipe.
Report runIsolated(const Phase &phase, const std::string &path, const Options &options) {
  int fds[2];
  Report r;
  if (pipe(fds) != 0) {
    std::snprintf(r.error, sizeof r.error, "pipe: %s", std::strerror(errno));
    return r;
  }
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Report child = runPhase(phase, path, options);
    ssize_t written = write(fds[1], &child, sizeof child);
    _exit(written == sizeof child ? 0 : 1);
  }
  close(fds[1]);
  ssize_t got = pid > 0 ? read(fds[0], &r, sizeof r) : -1;
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  if (got != sizeof r) {
    r = Report{};
    std::snprintf(r.error, sizeof r.error, "phase process failed (status %d)", status);
  }
  return r;
}

// Reads the file once through a small buffer so both phases start from a warm page cache.
void warmPageCache(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  std::vector<char> buffer(1 << 20);
  while (read(fd, buffer.data(), buffer.size()) > 0) {}
  close(fd);
}

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [--min-time SECONDS] [--max-reps N] [--phase baseline|libonnx|wire] "
               "model.onnx...\n",
               argv0);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--min-time" && i + 1 < argc)
      options.minTime = std::atof(argv[++i]);
    else if (arg == "--max-reps" && i + 1 < argc)
      options.maxReps = std::atoi(argv[++i]);
    else if (arg == "--phase" && i + 1 < argc)
      options.onlyPhase = argv[++i];
    else if (arg.rfind("--", 0) == 0)
      return usage(argv[0]);
    else
      paths.push_back(arg);
  }
  if (paths.empty()) return usage(argv[0]);

  int failures = 0;
  for (const std::string &path : paths) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      std::printf("skip %s: not found\n\n", path.c_str());
      continue;
    }
    warmPageCache(path);
    std::printf("%s (%.1f MB)\n", path.c_str(), st.st_size / 1e6);
    std::printf("  %-38s %10s %10s %6s %12s %8s\n", "phase", "first ms", "median ms", "reps",
                "peak RSS MB", "nodes");
    double libonnxMs = 0, wireMs = 0, inferMs = 0;
    long libonnxRss = 0, wireRss = 0, baseRss = 0, inferRss = 0;
    for (const Phase &phase : kPhases) {
      if (!options.onlyPhase.empty() && options.onlyPhase != phase.name &&
          std::strcmp(phase.name, "baseline") != 0)
        continue;
      Report r = runIsolated(phase, path, options);
      if (!r.ok) {
        std::printf("  %-38s error: %s\n", phase.label, r.error);
        ++failures;
        continue;
      }
      std::printf("  %-38s %10.3f %10.3f %6d %12.1f %8ld\n", phase.label, r.firstMs, r.medianMs,
                  r.reps, r.peakRssKb / 1024.0, r.nodes);
      if (std::strcmp(phase.name, "baseline") == 0) baseRss = r.peakRssKb;
      if (std::strcmp(phase.name, "libonnx") == 0) libonnxMs = r.medianMs, libonnxRss = r.peakRssKb;
      if (std::strcmp(phase.name, "wire") == 0) wireMs = r.medianMs, wireRss = r.peakRssKb;
      if (std::strcmp(phase.name, "infer") == 0) inferMs = r.medianMs, inferRss = r.peakRssKb;
    }
    if (libonnxMs > 0 && wireMs > 0) {
      std::printf("  time: wire reader is %.1fx faster than libonnx (median %.3f ms vs %.3f ms)\n",
                  libonnxMs / wireMs, wireMs, libonnxMs);
      std::printf("  peak RSS above baseline: libonnx %.1f MB, wire reader %.1f MB\n",
                  (libonnxRss - baseRss) / 1024.0, (wireRss - baseRss) / 1024.0);
    }
    if (libonnxMs > 0 && inferMs > 0)
      std::printf("  time: load + infer is %.1fx faster than libonnx's parse alone (median %.3f ms "
                  "vs %.3f ms); peak RSS above baseline %.1f MB\n",
                  libonnxMs / inferMs, inferMs, libonnxMs, (inferRss - baseRss) / 1024.0);
    std::printf("\n");
  }
  return failures == 0 ? 0 : 1;
}
