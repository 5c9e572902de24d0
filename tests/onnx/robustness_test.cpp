// Fuzz-style robustness, deterministic and fast: valid models cut at every byte offset, with
// random bytes flipped, and pure noise. Nothing may crash or read out of bounds (each input is
// copied into a heap block of its exact size, so ASan builds catch over-reads); when a damaged
// model still reads, decoding every tensor in it must be safe too.
#include "proto_writer.h"
#include "test_config.h"

#include "shapeflow/onnx/wire.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

using namespace sf::onnx;
using namespace sf::onnx::test;

namespace {

// A model using every message kind the reader knows.
std::string richModel() {
  Proto sparse = Proto()
                     .msg(1, rawTensor("sp", 1, {2}, rawOf<float>({1, 2})))
                     .msg(2, tensorHeader("", 7, {2}).packed(7, {0, 3}))
                     .packed(3, {2, 2});
  Proto sub = Proto()
                  .msg(1, node("Add", {"x", "k"}, {"t"}, "inner", {attrInt("axis", 1)}))
                  .str(2, "then")
                  .msg(5, tensorHeader("k", 7, {3}).packed(7, {1, -2, 3}))
                  .msg(12, valueInfo("t", tensorType(1, {"N", 3})));
  Proto seq = Proto().msg(4, Proto().msg(1, tensorType(1, {"N", 3})));
  Proto g;
  g.msg(1, node("If", {"c"}, {"y"}, "if0",
                {attrGraph("then_branch", sub), attrGraph("else_branch", sub)}));
  g.msg(1, node("Conv", {"x", "w"}, {"z"}, "conv",
                {attrInts("pads", {1, 1, 1, 1}, true), attrInts("strides", {2, 2}),
                 attrFloat("alpha", 0.5f), attrString("auto_pad", "NOTSET"),
                 attrTensor("value", tensorHeader("v", 1, {2}).packedFloats(4, {1, 2})),
                 Proto().str(1, "fs").varint(20, 6).f32(7, 1).f32(7, 2)}));
  g.str(2, "main");
  g.msg(5, rawTensor("w", 1, {2, 2}, rawOf<float>({1, 2, 3, 4})));
  g.msg(5, tensorHeader("i32", 6, {3}).sint(5, -1).sint(5, 2).sint(5, 3));
  g.msg(5, tensorHeader("h", 10, {2}).packed(5, {0x3c00, 0xc000}));
  g.msg(5, tensorHeader("s", 8, {2}).str(6, "ab").str(6, "c"));
  g.msg(5, tensorHeader("d", 11, {1}).packedDoubles(10, {2.5}));
  g.msg(5, tensorHeader("u", 13, {1}).packed(11, {9}));
  g.msg(15, sparse);
  g.msg(11, valueInfo("x", tensorType(1, {"N", 3, 224, ""})));
  g.msg(11, valueInfo("q", seq));
  g.msg(12, valueInfo("y", tensorType(1, {}, false)));
  Proto fn;
  fn.str(1, "F").str(10, "custom").str(4, "a").str(5, "b").msg(7, node("Neg", {"a"}, {"b"}));
  fn.msg(9, Proto().str(1, "").sint(2, 17)).msg(11, attrInt("k", 3));
  Proto m = model(g);
  m.msg(25, fn).msg(14, Proto().str(1, "k").str(2, "v"));
  return m.bytes;
}

void exerciseTensor(const TensorView &t, const ModelView &m) {
  (void)elementCount(t);
  (void)rawByteSize(t);
  (void)tensorBytes(t, m);
  (void)decodeInts(t, m, 4096);
  (void)decodeFloats(t, m, 4096);
}

void exerciseGraph(const GraphView &g, const ModelView &m, int depth = 0) {
  for (const TensorView &t : g.initializers)
    exerciseTensor(t, m);
  for (const SparseTensorView &s : g.sparseInitializers) {
    exerciseTensor(s.values, m);
    exerciseTensor(s.indices, m);
  }
  for (const NodeView &n : g.nodes)
    for (const AttributeView &a : n.attributes) {
      if (a.extra().t) exerciseTensor(*a.extra().t, m);
      for (const TensorView &t : a.extra().tensors)
        exerciseTensor(t, m);
      if (a.extra().g && depth < 8) exerciseGraph(*a.extra().g, m, depth + 1);
    }
}

// Reads a copy of `bytes` in a block of exactly its size; returns whether it read.
bool readAndExercise(std::string_view bytes) {
  std::unique_ptr<char[]> block(bytes.empty() ? nullptr : new char[bytes.size()]);
  if (!bytes.empty()) std::memcpy(block.get(), bytes.data(), bytes.size());
  auto m = readModelBuffer(std::string_view(block.get(), bytes.size()));
  if (!m.ok()) {
    EXPECT_FALSE(m.error().message.empty());
    return false;
  }
  exerciseGraph(m->graph, *m);
  return true;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> seedModels() {
  std::vector<std::string> seeds = {richModel()};
  for (const char *name : {"test_loop11", "test_if_seq", "test_scan9_sum",
                           "test_range_float_type_positive_delta_expanded", "test_constant",
                           "test_sequence_map_identity_1_sequence"}) {
    std::string bytes =
        slurp(std::string("/usr/share/libonnx-testdata/data/node/") + name + "/model.onnx");
    if (!bytes.empty()) seeds.push_back(bytes);
  }
  for (const char *name : {"functions.onnx", "values.onnx", "sparse.onnx", "types.onnx"})
    seeds.push_back(slurp(std::string(SF_ONNX_TEST_DIR "/data/") + name));
  return seeds;
}

} // namespace

TEST(Robustness, SeedsAreValid) {
  for (const std::string &seed : seedModels()) {
    auto m = readModelBuffer(seed);
    EXPECT_TRUE(m.ok()) << m.error().message;
  }
}

TEST(Robustness, TruncatedAtEveryOffset) {
  size_t reads = 0, total = 0;
  for (const std::string &seed : seedModels()) {
    for (size_t n = 0; n < seed.size(); ++n) {
      reads += readAndExercise(std::string_view(seed).substr(0, n));
      ++total;
    }
  }
  // A prefix can be a valid message (cut between top-level fields after the graph), so some
  // do read; most must not.
  EXPECT_LT(reads, total / 4);
  std::printf("[ truncation ] %zu prefixes, %zu still read\n", total, reads);
}

TEST(Robustness, RandomByteFlips) {
  std::mt19937_64 rng(20240613);
  size_t reads = 0, total = 0;
  for (const std::string &seed : seedModels()) {
    for (int iter = 0; iter < kFlipsPerSeed; ++iter) {
      std::string mutated = seed;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) {
        size_t at = rng() % mutated.size();
        switch (rng() % 4) {
        case 0:
          mutated[at] = static_cast<char>(rng());
          break; // any byte
        case 1:
          mutated[at] ^= static_cast<char>(1 << (rng() % 8));
          break; // one bit
        case 2:
          mutated[at] = static_cast<char>(0x80 | rng());
          break; // a continuation byte
        case 3:
          mutated[at] = static_cast<char>(rng() % 3 == 0 ? 0xff : 0x00);
          break;
        }
      }
      reads += readAndExercise(mutated);
      ++total;
    }
  }
  std::printf("[ flips ] %zu mutants, %zu still read\n", total, reads);
}

TEST(Robustness, Noise) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string noise(rng() % 64, '\0');
    for (char &c : noise)
      c = static_cast<char>(rng());
    readAndExercise(noise);
  }
}
