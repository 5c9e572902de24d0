// A model's memory in parts (src/report/memory_report.cpp): KV cache pairs found from the graph
// (concatenated, written by a fused attention op, scattered in place, through layout ops; none
// in a model without a cache), weights as stored, rows completed with the sizes the contract
// and --tie give, bindings that break the contract refused, and the largest size within a
// budget checked against the rows themselves at random budgets.
#include "shapeflow/dim/parse.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/memory_report.h"

#include <gtest/gtest.h>

#include <random>

namespace sf {
namespace {

struct Model {
  Graph g;
  Diagnostics d;
  Contract c;
};

std::unique_ptr<Model> inferred(const std::string &text) {
  auto m = std::make_unique<Model>();
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  m->g = std::move(*g);
  ContractBasis basis = contractBasis(m->g);
  inferGraph(m->g, m->d);
  EXPECT_FALSE(m->d.hasErrors());
  m->c = makeContract(m->g, m->d, basis);
  return m;
}

/// `count` zeros, comma separated: a constant's elements.
std::string zeros(size_t count) {
  std::string s;
  for (size_t i = 0; i < count; ++i) s += i ? ", 0" : "0";
  return s;
}

// One decoder layer's cache: past [B,2,P,8] and the new keys concatenated along P, the present
// cache returned through a Transpose pair; a weight of 8x16 floats and a 4-bit table.
const std::string kDecoder = R"(graph main(x: f32[B,S,8], past: f32[B,2,P,8], mask: i64[B,T]) {
  w = Constant() {value = f32[8,16] [)" + zeros(128) + R"(]}
  t = Constant() {value = i4[4,8] [)" + zeros(32) + R"(]}
  kv = MatMul(x, w)
  shape = Constant() {value = i64[4] [0, 0, 2, 8]}
  r = Reshape(kv, shape)
  k = Transpose(r) {perm = [0, 2, 1, 3]}
  present = Concat(past, k) {axis = 2}
  swapped = Transpose(present) {perm = [0, 2, 1, 3]}
  out = Transpose(swapped) {perm = [0, 2, 1, 3]}
  return out, mask, t
})";

TEST(MemoryReport, AConcatenatedCacheIsFoundThroughLayoutOps) {
  auto m = inferred(kDecoder);
  ExprScope scope = m->g.enter();
  auto pairs = findCachePairs(m->g);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].input, "past");
  EXPECT_EQ(pairs[0].output, "out");
  EXPECT_EQ(pairs[0].axis, 2);
  EXPECT_TRUE(pairs[0].grows);
  EXPECT_EQ(toString(pairs[0].bytesIn), "64*B*P");
  EXPECT_EQ(toString(pairs[0].bytesOut), "64*B*S + 64*B*P");
}

TEST(MemoryReport, WeightsCountAsStored) {
  auto m = inferred(kDecoder);
  // 8x16 floats, 32 four-bit elements in 16 bytes, the Reshape target's 4 int64.
  EXPECT_EQ(weightBytes(m->g), 8 * 16 * 4 + 16 + 4 * 8);
}

TEST(MemoryReport, AFusedAttentionsPresentAndAScatteredCacheArePairs) {
  auto m = inferred(R"(opset 21
  opset com.microsoft 1
  graph main(q: f32[B,S,64], k: f32[B,S,32], v: f32[B,S,32], pk: f32[B,2,P,16], pv: f32[B,2,P,16], total: i32[], seqlens: i32[B], cache: f32[B,2,L,16], upd: f32[B,2,S,16], idx: i64[B]) {
    y, kk, vv = com.microsoft.GroupQueryAttention(q, k, v, pk, pv, seqlens, total) {num_heads = 4, kv_num_heads = 2}
    written = TensorScatter(cache, upd, idx) {axis = 2}
    return y, kk, vv, written
  })");
  ExprScope scope = m->g.enter();
  auto pairs = findCachePairs(m->g);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].input, "pk");
  EXPECT_EQ(pairs[0].output, "kk");
  EXPECT_EQ(pairs[1].input, "pv");
  EXPECT_EQ(pairs[1].output, "vv");
  EXPECT_EQ(pairs[2].input, "cache");
  EXPECT_EQ(pairs[2].output, "written");
  EXPECT_FALSE(pairs[2].grows);
}

TEST(MemoryReport, AModelWithoutACacheHasNone) {
  auto m = inferred(R"(graph main(x: f32[N,3,H,W]) {
    w = Constant() {value = f32[8,3,3,3] [)" + zeros(216) + R"(]}
    y = Conv(x, w) {pads = [1, 1, 1, 1]}
    z = Relu(y)
    return z
  })");
  ExprScope scope = m->g.enter();
  EXPECT_TRUE(findCachePairs(m->g).empty());
  MemoryOptions o;
  o.at = {{{"N", 2}, {"H", 4}, {"W", 5}}};
  auto r = memoryReport(m->g, m->c, "m", o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rows.size(), 1u);
  const MemoryRow &row = r->rows[0];
  EXPECT_EQ(row.weights, 216 * 4);
  EXPECT_EQ(row.kvCache, 0);
  EXPECT_EQ(row.io, 2 * 3 * 4 * 5 * 4 + 2 * 8 * 4 * 5 * 4);
  // y, between the two ops, 1280 bytes, aligned to 64.
  EXPECT_EQ(row.activations, 1280);
  EXPECT_EQ(row.total, row.weights + row.io + row.activations);
}

TEST(MemoryReport, RowsTakeTiesAndRefuseBindingsThatBreakTheContract) {
  auto m = inferred(kDecoder);
  ExprScope scope = m->g.enter();
  MemoryOptions o;
  o.at = {{{"B", 1}, {"S", 1}, {"P", 0}}, {{"B", 2}, {"S", 4}, {"P", 10}}};
  // T is free in this graph: without a tie it takes the rule of every report (nothing bounds
  // it, so its smallest size), and the row says so.
  auto missing = memoryReport(m->g, m->c, "m", o);
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  const Contract::Symbol *t = nullptr;
  for (const Contract::Symbol &s : m->c.symbols)
    if (s.name == "T") t = &s;
  ASSERT_TRUE(t);
  EXPECT_EQ(missing->rows[0].at.at("T"), t->range.lo);
  EXPECT_NE(missing->rows[0].note.find("T at the smallest size admitted"), std::string::npos) << missing->rows[0].note;
  auto total = parseDimension("P + S", m->g.symbols);
  ASSERT_TRUE(total.ok());
  o.ties = {{"T", total->expr()}};
  auto r = memoryReport(m->g, m->c, "m", o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows[1].at.at("T"), 14);
  EXPECT_EQ(r->rows[1].kvCache, 64 * 2 * 10 + 64 * 2 * 14);
  // x and mask in; mask (returned as it came) and the 4-bit table (a byte per element in
  // memory) out.
  EXPECT_EQ(r->rows[1].io, 2 * 4 * 8 * 4 + 2 * 14 * 8 + 2 * 14 * 8 + 32);
  // A size below what the model admits is refused, naming the requirement.
  MemoryOptions bad = o;
  bad.at = {{{"B", -1}, {"S", 1}, {"P", 0}}};
  auto refused = memoryReport(m->g, m->c, "m", bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("break the model's contract"), std::string::npos) << refused.error().message;
}

TEST(MemoryReport, TheFitIsTheLargestSizeWithinTheBudget) {
  auto m = inferred(kDecoder);
  ExprScope scope = m->g.enter();
  auto total = parseDimension("P + S", m->g.symbols);
  ASSERT_TRUE(total.ok());
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int k = 0; k < 40; ++k) {
    MemoryOptions o;
    o.ties = {{"T", total->expr()}};
    o.at = {{{"B", 2}, {"S", 1}, {"P", 0}}};
    o.fitSymbol = "P";
    o.budget = int64_t(2000 + rng() % 2000000);
    auto r = memoryReport(m->g, m->c, "m", o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(r->fit.has_value());
    const MemoryFit &f = *r->fit;
    auto totalAt = [&](int64_t p) {
      MemoryOptions row = o;
      row.fitSymbol.reset();
      row.at = {{{"B", 2}, {"S", 1}, {"P", p}}};
      auto x = memoryReport(m->g, m->c, "m", row);
      EXPECT_TRUE(x.ok());
      return x.ok() ? x->rows[0].total : -1;
    };
    if (!f.max) {
      EXPECT_GT(totalAt(0), o.budget) << f.why;
      continue;
    }
    EXPECT_LE(totalAt(*f.max), o.budget) << f.why;
    EXPECT_GT(totalAt(*f.max + 1), o.budget) << f.why;
    ++checked;
  }
  EXPECT_GT(checked, 30);
}

// The size searched may be in the --at row, and a size the graph ties to it (a mask length
// equal to P + S) follows each value tried rather than the row's.
TEST(MemoryReport, TheFitMovesTheSizesTiedToTheOneItSearches) {
  auto m = inferred(R"(opset 17
graph main(x: f32[B,S,8], past: f32[B,P,8], mask: f32[B,T]) {
  present = Concat(past, x) {axis = 1}
  axes = Constant() {value = i64[1] [2]}
  m3 = Unsqueeze(mask, axes)
  y = Add(present, m3)
  return y, present
})");
  ExprScope scope = m->g.enter();
  MemoryOptions o;
  o.at = {{{"B", 1}, {"S", 4}, {"P", 0}}};
  o.fitSymbol = "P";
  o.budget = 100000;
  auto r = memoryReport(m->g, m->c, "m", o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].at.at("T"), 4);
  ASSERT_TRUE(r->fit && r->fit->max) << (r->fit ? r->fit->why : "");
  EXPECT_GT(*r->fit->max, 100) << r->fit->why;
}

TEST(MemoryReport, BytesReadAndPrintWithTheirUnits) {
  EXPECT_EQ(*parseBytes("8GiB"), int64_t(8) << 30);
  EXPECT_EQ(*parseBytes("512 MiB"), int64_t(512) << 20);
  EXPECT_EQ(*parseBytes("1.5GB"), 1500000000);
  EXPECT_EQ(*parseBytes("1000"), 1000);
  EXPECT_FALSE(parseBytes("8 apples").ok());
  EXPECT_FALSE(parseBytes("GiB").ok());
  EXPECT_FALSE(parseBytes("99999999999TiB").ok());
  EXPECT_EQ(bytesIEC(960), "960 B");
  EXPECT_EQ(bytesIEC(1536), "1.50 KiB");
  EXPECT_EQ(bytesIEC(int64_t(3) << 30), "3.00 GiB");
  EXPECT_EQ(bytesIEC(int64_t(200) << 20), "200 MiB");
}

} // namespace
} // namespace sf
