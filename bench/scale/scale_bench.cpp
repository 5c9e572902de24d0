// Scale benchmark: fast on graphs of 100,000 nodes. Builds synthetic transformer
// graphs (per block: a hand-rolled LayerNorm, Q/K/V projections, a Shape -> Gather -> Unsqueeze
// -> Concat -> Reshape head split, attention with Softmax, merge, output projection, residual),
// with symbolic batch B and sequence S, writes each as .onnx, then times in one process:
//   onnx:      onnx::shape_inference::InferShapes with data propagation on (ModelProto in memory)
//   shapeflow: inferGraph on the imported graph (symbolic facts, value propagation)
// and reports the load time and the size of the symbolic results.
// Usage: scale_bench [--shapeflow-only | --infer-only] [--reps R] [--weights-mb M] [NODES...]
//   (default: 10000 100000)
//   --shapeflow-only skips ONNX (for profiling shapeflow alone); --infer-only also infers 20
//   copies of each loaded graph (a profile of inference alone); --reps sets repetitions (3);
//   --weights-mb M gives the blocks their own projection weights (raw_data, about M MB in all
//   where the graph has a block for each set, about 1,220 sets for 80 MB: 100k nodes do; sets
//   reused in turn past that), written as /tmp/sf_scale_<NODES>_w<M>.onnx.
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

// Heap allocations made through operator new (counted; reported per node for inference, a
// number that does not depend on the machine's noise).
// (g++ warns about free() on memory from this operator new when it inlines both.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
static std::atomic<uint64_t> gAllocations{0};
void *operator new(size_t n) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void *p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Builder {
  onnx::GraphProto *g;
  int counter = 0;
  std::string fresh(const std::string &stem) { return stem + "_" + std::to_string(counter++); }
  std::string node(const std::string &op, std::vector<std::string> in,
                   std::vector<std::pair<std::string, std::vector<int64_t>>> ints = {},
                   std::vector<std::pair<std::string, int64_t>> ints1 = {}) {
    auto *n = g->add_node();
    n->set_op_type(op);
    std::string out = fresh(op);
    n->set_name(out);
    for (auto &i : in) n->add_input(i);
    n->add_output(out);
    for (auto &[k, v] : ints) {
      auto *a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INTS);
      for (auto x : v) a->add_ints(x);
    }
    for (auto &[k, v] : ints1) {
      auto *a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(v);
    }
    return out;
  }
  void initInts(const std::string &name, std::vector<int64_t> v, bool scalar = false) {
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(int64_t(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  // A weight as raw_data (how exporters write them), values varying with the element.
  void initRaw(const std::string &name, int64_t rows, int64_t cols, uint32_t seed) {
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(rows);
    t->add_dims(cols);
    std::string bytes(size_t(rows * cols) * sizeof(float), '\0');
    uint32_t state = seed * 2654435761u + 1;
    for (int64_t i = 0; i < rows * cols; ++i) {
      state = state * 1664525u + 1013904223u;
      float v = (float(state >> 8) / float(1u << 24) - 0.5f) * 0.02f;
      std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof v);
    }
    t->set_raw_data(std::move(bytes));
  }
  void initFloats(const std::string &name, std::vector<int64_t> dims, float value) {
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (auto d : dims) t->add_dims(d), n *= d;
    for (int64_t i = 0; i < n; ++i) t->add_float_data(value);
  }
};

constexpr int64_t kD = 64, kHeads = 4, kHd = 16;

// The projection weights a block reads: the shared set, or with --weights-mb its own set (sets
// made on first use, `sets` of them, reused in turn).
std::string weight(Builder &b, int stem, int64_t block, int64_t sets) {
  static const char *const kStems[] = {"wq", "wk", "wv", "wo"};
  if (sets == 0) return kStems[stem];
  int64_t k = block % sets;
  std::string name = std::string(kStems[stem]) + "_" + std::to_string(k);
  if (block < sets) b.initRaw(name, kD, kD, uint32_t(k * 4 + stem)); // a seed per matrix
  return name;
}

std::string block(Builder &b, const std::string &x, int64_t index, int64_t sets) {
  // LayerNorm by hand.
  std::string mean = b.node("ReduceMean", {x}, {{"axes", {-1}}}, {{"keepdims", 1}});
  std::string d = b.node("Sub", {x, mean});
  std::string var = b.node("ReduceMean", {b.node("Mul", {d, d})}, {{"axes", {-1}}}, {{"keepdims", 1}});
  std::string sd = b.node("Sqrt", {b.node("Add", {var, "eps"})});
  std::string n = b.node("Add", {b.node("Mul", {b.node("Div", {d, sd}), "gamma"}), "beta"});
  // Head split through a shape subgraph.
  std::string s = b.node("Shape", {n});
  std::string bb = b.node("Unsqueeze", {b.node("Gather", {s, "i0"}, {}, {{"axis", 0}}), "ax0"});
  std::string ss = b.node("Unsqueeze", {b.node("Gather", {s, "i1"}, {}, {{"axis", 0}}), "ax0"});
  std::string split = b.node("Concat", {bb, ss, "heads", "hd"}, {}, {{"axis", 0}});
  std::string merge = b.node("Concat", {bb, ss, "dmodel"}, {}, {{"axis", 0}});
  auto heads = [&](const std::string &w, std::vector<int64_t> perm) {
    return b.node("Transpose", {b.node("Reshape", {b.node("MatMul", {n, w}), split})}, {{"perm", perm}});
  };
  std::string q = heads(weight(b, 0, index, sets), {0, 2, 1, 3});
  std::string k = heads(weight(b, 1, index, sets), {0, 2, 3, 1});
  std::string v = heads(weight(b, 2, index, sets), {0, 2, 1, 3});
  std::string att = b.node("Softmax", {b.node("Div", {b.node("MatMul", {q, k}), "scale"})}, {}, {{"axis", -1}});
  std::string o = b.node("Transpose", {b.node("MatMul", {att, v})}, {{"perm", {0, 2, 1, 3}}});
  std::string y = b.node("MatMul", {b.node("Reshape", {o, merge}), weight(b, 3, index, sets)});
  return b.node("Add", {x, y});
}

onnx::ModelProto makeModel(int64_t targetNodes, int64_t weightsMb) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  Builder b{m.mutable_graph()};
  b.g->set_name("scale");
  auto *in = b.g->add_input();
  in->set_name("x");
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("B");
  tt->mutable_shape()->add_dim()->set_dim_param("S");
  tt->mutable_shape()->add_dim()->set_dim_value(kD);
  // Four kD x kD float matrices per set: without --weights-mb one shared set.
  int64_t sets = weightsMb * 1000000 / (4 * kD * kD * int64_t(sizeof(float)));
  if (sets == 0)
    for (auto w : {"wq", "wk", "wv", "wo"}) b.initFloats(w, {kD, kD}, 0.01f);
  b.initFloats("gamma", {kD}, 1.f);
  b.initFloats("beta", {kD}, 0.f);
  b.initFloats("eps", {}, 1e-5f);
  b.initFloats("scale", {}, 4.f);
  b.initInts("i0", {0}, true);
  b.initInts("i1", {1}, true);
  b.initInts("ax0", {0});
  b.initInts("heads", {kHeads});
  b.initInts("hd", {kHd});
  b.initInts("dmodel", {kD});
  std::string x = "x";
  for (int64_t i = 0; b.g->node_size() < targetNodes; ++i) x = block(b, x, i, sets);
  auto *out = b.g->add_output();
  out->set_name(x);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes;
  bool onlySf = false, inferOnly = false;
  int reps = 3;
  int64_t weightsMb = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--shapeflow-only") onlySf = true;
    else if (a == "--infer-only") onlySf = inferOnly = true;
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else if (a == "--weights-mb" && i + 1 < argc) weightsMb = std::max(0LL, std::stoll(argv[++i]));
    else sizes.push_back(std::stoll(a));
  }
  if (sizes.empty()) sizes = {10000, 100000};
  std::printf("%10s %10s %12s %12s %12s %11s %8s %s\n", "nodes", "onnx ms", "shapeflow ms",
              "sf load ms", "ratio", "allocs/node", "errors", "last output");
  for (int64_t n : sizes) {
    onnx::ModelProto m = makeModel(n, weightsMb);
    std::string path = "/tmp/sf_scale_" + std::to_string(n) +
                       (weightsMb ? "_w" + std::to_string(weightsMb) : "") + ".onnx";
    {
      std::ofstream f(path, std::ios::binary);
      m.SerializeToOstream(&f);
    }
    // ONNX: best of 3 on fresh copies (InferShapes writes value_info into the model).
    double onnxMs = onlySf ? 0 : 1e300;
    for (int rep = 0; rep < (onlySf ? 0 : reps); ++rep) {
      onnx::ModelProto copy = m;
      onnx::ShapeInferenceOptions opts{false, 0, true};
      auto t = Clock::now();
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), opts);
      onnxMs = std::min(onnxMs, msSince(t));
    }
    double sfMs = 1e300, loadMs = 1e300, allocsPerNode = 0;
    std::string last;
    size_t errors = 0;
    for (int rep = 0; rep < reps; ++rep) {
      sf::Diagnostics diags;
      auto t0 = Clock::now();
      auto g = sf::onnx::loadModelFile(path, diags);
      loadMs = std::min(loadMs, msSince(t0));
      if (!g.ok()) {
        std::fprintf(stderr, "load failed: %s\n", g.error().message.c_str());
        return 1;
      }
      // --infer-only: infer fresh copies of one loaded graph (a profile of inference alone).
      for (int k = 0; k < (inferOnly ? 20 : 0); ++k) {
        sf::Graph copy = *g;
        auto t1 = Clock::now();
        sf::inferGraph(copy, diags);
        sfMs = std::min(sfMs, msSince(t1));
      }
      uint64_t a0 = gAllocations.load();
      auto t1 = Clock::now();
      sf::inferGraph(*g, diags);
      sfMs = std::min(sfMs, msSince(t1));
      allocsPerNode = double(gAllocations.load() - a0) / double(g->nodes.size());
      errors = diags.errorCount();
      last = toString(g->fact(g->outputs[0]));
    }
    std::printf("%10lld %10.1f %12.1f %12.1f %12.2f %11.1f %8zu %s\n", (long long)n, onnxMs, sfMs,
                loadMs, onlySf ? 0.0 : sfMs / onnxMs, allocsPerNode, errors, last.c_str());
  }
  return 0;
}
