// End-to-end benchmark (graphs of 100,000 nodes): each phase of `shapeflow infer` on a model file,
// timed in one process beside ONNX's own protobuf parse + InferShapes of the same file:
//
//   walk     map the file and walk every protobuf field of the graph (nodes, attributes, value
//            infos, types; tensor payloads skipped), building nothing: the floor of any loader
//   read     sf::onnx::readModelFile: the wire reader's views of the file (the main graph's
//            nodes left encoded, as loadModelFile and the CLI read them)
//   import   sf::onnx::importModel: the graph IR (decoding each node as it builds it)
//   infer    sf::inferGraph
//   text     the text listing (printText) into a sink
//   json     the JSON report (writeJson, streamed) into a sink
//   annotate the annotated model's bytes (annotatedModelBuffer: `infer --out`)
//   onnx     onnx::ModelProto::ParseFromArray + onnx::shape_inference::InferShapes (data
//            propagation on) on the same bytes, in memory
//
// usage: e2e_bench [--reps R] [--load-only] MODEL...   (median of R repetitions per phase;
// default 5; --load-only stops each repetition after the import, for profiling)
// Prints one line of JSON per model: {"model":..., "nodes":..., "bytes":..., "<phase>_ms":...}.
// Linked with the system allocator; bench/e2e/e2e.py runs it again with tcmalloc preloaded.
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/export.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/wire.h"
#include "shapeflow/report/report.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <sys/resource.h>
#include <map>
#include <new>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

// Heap allocations through operator new, counted per phase (a figure the machine's noise does not
// move). Plain malloc underneath, so that a preloaded allocator serves them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
static uint64_t gAllocations = 0;
void *operator new(size_t n) {
  ++gAllocations;
  if (void *p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace {

using Clock = std::chrono::steady_clock;

/// An ostream that counts and drops what it is given.
class CountingBuf : public std::streambuf {
public:
  uint64_t count = 0;

protected:
  std::streamsize xsputn(const char *, std::streamsize n) override {
    count += uint64_t(n);
    return n;
  }
  int overflow(int c) override {
    if (c != EOF) ++count;
    return c == EOF ? 0 : c;
  }
};

// ---- the floor: a protobuf walk over the fields a loader must see ----
enum class Msg { Model, Graph, Node, Attribute, ValueInfo, Type, TensorType, Shape, Dim };

struct Walker {
  uint64_t checksum = 0, fields = 0;
  bool ok = true;

  static bool varint(const uint8_t *&p, const uint8_t *end, uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
      uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }

  /// The message kind inside field `f` of a `m`, or nullopt when it is a string or skipped.
  static std::optional<Msg> child(Msg m, uint64_t f) {
    switch (m) {
    case Msg::Model: return f == 7 ? std::optional(Msg::Graph) : std::nullopt;
    case Msg::Graph:
      if (f == 1) return Msg::Node;
      if (f == 11 || f == 12 || f == 13) return Msg::ValueInfo;
      return std::nullopt; // initializers (5) and the rest: skipped
    case Msg::Node: return f == 5 ? std::optional(Msg::Attribute) : std::nullopt;
    case Msg::Attribute:
      if (f == 6) return Msg::Graph;
      if (f == 11) return Msg::Graph; // graphs
      return std::nullopt;
    case Msg::ValueInfo: return f == 2 ? std::optional(Msg::Type) : std::nullopt;
    case Msg::Type: return f == 1 ? std::optional(Msg::TensorType) : std::nullopt;
    case Msg::TensorType: return f == 2 ? std::optional(Msg::Shape) : std::nullopt;
    case Msg::Shape: return f == 1 ? std::optional(Msg::Dim) : std::nullopt;
    case Msg::Dim: return std::nullopt;
    }
    return std::nullopt;
  }

  void walk(const uint8_t *p, const uint8_t *end, Msg m, int depth) {
    if (depth > 64) {
      ok = false;
      return;
    }
    while (p < end && ok) {
      uint64_t tag, v;
      if (!varint(p, end, tag)) {
        ok = false;
        return;
      }
      ++fields;
      switch (tag & 7) {
      case 0:
        if (!varint(p, end, v)) ok = false;
        checksum += v;
        break;
      case 1: p += 8; break;
      case 5: p += 4; break;
      case 2: {
        if (!varint(p, end, v) || v > uint64_t(end - p)) {
          ok = false;
          return;
        }
        if (auto c = child(m, tag >> 3)) walk(p, p + v, *c, depth + 1);
        else if (v && !(m == Msg::Graph && (tag >> 3) == 5)) checksum += v + p[0]; // a string
        p += v;
        break;
      }
      default: ok = false; return;
      }
    }
  }
};

/// Minor page faults of the process so far (the kernel handing it pages: fresh heap, a mapping's
/// first touch).
uint64_t minorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return uint64_t(u.ru_minflt);
}

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// --load-only: reads and imports R times and stops (a profile of loading alone).
bool gLoadOnly = false;
/// --flush MB: before each repetition, write and read a buffer of MB megabytes (larger than the
/// caches), so that every size starts from the same cold cache state rather than a small model's
/// whole working set staying cached from the repetition before.
size_t gFlushMB = 0;

void flushCaches() {
  static std::vector<uint64_t> junk(gFlushMB << 17);
  static uint64_t sink = 0;
  for (size_t i = 0; i < junk.size(); i += 8) junk[i] += i;
  for (size_t i = 0; i < junk.size(); i += 8) sink += junk[i];
  if (sink == 1) std::fprintf(stderr, " ");
}

int benchModel(const std::string &path, int reps) {
  std::map<std::string, std::vector<double>> times;
  std::map<std::string, uint64_t> allocs;
  std::map<std::string, std::vector<double>> faults; // minor page faults per phase
  std::map<std::string, size_t> heap; // glibc's bytes in use after the phase (0 under tcmalloc)
  size_t nodes = 0;
  uint64_t bytes = 0, jsonBytes = 0, textBytes = 0, annotatedBytes = 0;
  for (int rep = 0; rep < reps; ++rep) {
    if (gFlushMB) flushCaches();
    // walk
    uint64_t f0 = minorFaults();
    auto t = Clock::now();
    auto file = sf::onnx::MappedFile::open(path, sf::onnx::MappedFile::Access::Random);
    if (!file.ok()) {
      std::fprintf(stderr, "%s\n", file.error().message.c_str());
      return 1;
    }
    std::string_view all = (*file)->bytes();
    bytes = all.size();
    Walker w;
    w.walk(reinterpret_cast<const uint8_t *>(all.data()),
           reinterpret_cast<const uint8_t *>(all.data() + all.size()), Msg::Model, 0);
    times["walk"].push_back(msSince(t));
    faults["walk"].push_back(double(minorFaults() - f0));
    f0 = minorFaults();
    if (!w.ok) std::fprintf(stderr, "%s: the walk stopped on malformed bytes\n", path.c_str());

    uint64_t a0 = gAllocations;
    f0 = minorFaults();
    t = Clock::now();
    // As loadModelFile (the CLI) reads: the main graph's nodes decoded during the import.
    auto model = sf::onnx::readModelFile(path, {}, sf::onnx::ReadOptions{.deferNodes = true});
    times["read"].push_back(msSince(t));
    faults["read"].push_back(double(minorFaults() - f0));
    f0 = minorFaults();
    allocs["read"] = gAllocations - a0;
    heap["read"] = mallinfo2().uordblks;
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.error().message.c_str());
      return 1;
    }
    sf::Diagnostics diags;
    a0 = gAllocations;
    f0 = minorFaults();
    t = Clock::now();
    auto g = sf::onnx::importModel(*model, diags);
    times["import"].push_back(msSince(t));
    faults["import"].push_back(double(minorFaults() - f0));
    f0 = minorFaults();
    allocs["import"] = gAllocations - a0;
    heap["import"] = mallinfo2().uordblks;
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", g.error().message.c_str());
      return 1;
    }
    nodes = g->nodes.size();
    if (gLoadOnly) continue;
    a0 = gAllocations;
    f0 = minorFaults();
    t = Clock::now();
    sf::InferStats stats = sf::inferGraph(*g, diags);
    times["infer"].push_back(msSince(t));
    faults["infer"].push_back(double(minorFaults() - f0));
    f0 = minorFaults();
    allocs["infer"] = gAllocations - a0;
    heap["infer"] = mallinfo2().uordblks;

    sf::Report report{path, &*g, &diags, stats, true};
    {
      CountingBuf buf;
      std::ostream os(&buf);
      t = Clock::now();
      sf::printText(report, os);
      times["text"].push_back(msSince(t));
      textBytes = buf.count;
    }
    {
      CountingBuf buf;
      std::ostream os(&buf);
      t = Clock::now();
      sf::writeJson(report, os, 1);
      times["json"].push_back(msSince(t));
      jsonBytes = buf.count;
    }
    t = Clock::now();
    auto annotated = sf::onnx::annotatedModelBuffer(all, *g);
    times["annotate"].push_back(msSince(t));
    annotatedBytes = annotated.ok() ? annotated->size() : 0;

    t = Clock::now();
    onnx::ModelProto proto;
    bool parsed = proto.ParseFromArray(all.data(), int(all.size()));
    onnx::ShapeInferenceOptions opts{false, 0, true};
    if (parsed) onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), opts);
    times["onnx"].push_back(msSince(t));
    if (!parsed) std::fprintf(stderr, "%s: ParseFromArray failed\n", path.c_str());
  }
  std::printf("{\"model\": \"%s\", \"nodes\": %zu, \"bytes\": %llu, \"text_bytes\": %llu, "
              "\"json_bytes\": %llu, \"annotated_bytes\": %llu",
              path.c_str(), nodes, (unsigned long long)bytes, (unsigned long long)textBytes,
              (unsigned long long)jsonBytes, (unsigned long long)annotatedBytes);
  for (const char *phase : {"walk", "read", "import", "infer", "text", "json", "annotate", "onnx"})
    std::printf(", \"%s_ms\": %.2f", phase, median(times[phase]));
  for (const char *phase : {"read", "import", "infer"})
    std::printf(", \"%s_allocs_per_node\": %.2f", phase, double(allocs[phase]) / double(nodes ? nodes : 1));
  for (const char *phase : {"walk", "read", "import", "infer"})
    std::printf(", \"%s_faults\": %.0f", phase, median(faults[phase]));
  for (const char *phase : {"read", "import", "infer"})
    std::printf(", \"heap_after_%s_mb\": %.1f", phase, double(heap[phase]) / 1048576.0);
  std::printf("}\n");
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int reps = 5;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--load-only") gLoadOnly = true;
    else if (a == "--flush" && i + 1 < argc) gFlushMB = size_t(std::max(0, std::atoi(argv[++i])));
    else paths.push_back(a);
  }
  if (paths.empty()) {
    std::fprintf(stderr, "usage: e2e_bench [--reps R] MODEL...\n");
    return 2;
  }
  int status = 0;
  for (const auto &p : paths) status |= benchModel(p, reps);
  return status;
}
