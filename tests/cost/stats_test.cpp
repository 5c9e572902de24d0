// The statistics layer apart from the op rules (those are in tests/golden/stats): checked sums,
// bytes of facts, parameters, the roofline, and the report's forms (JSON contract, CSV, text,
// SVG, human units, device files).
#include "shapeflow/cost/device.h"
#include "shapeflow/cost/stats.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/stats_report.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

namespace sf {
namespace {

Dimension GET_OR(const Result<Dimension> &r) {
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : Dimension::dynamic();
}

struct Model {
  Graph g;
  ModelStats stats;
};

Model statsOf(const std::string &text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  Model m{std::move(*g), {}};
  Diagnostics d;
  inferGraph(m.g, d);
  EXPECT_FALSE(d.hasErrors());
  auto s = computeStats(m.g);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  m.stats = std::move(*s);
  return m;
}

const char *kMlp = R"(
graph main(x: f32[N,64]) {
  w1 = Constant() {value = f32[64,128] <8192 elements>, initializer = 1}
  b1 = Constant() {value = f32[128] <128 elements>, initializer = 1}
  w2 = Constant() {value = f32[128,10] <1280 elements>, initializer = 1}
  h = Gemm(x, w1, b1)
  r = Relu(h)
  y = MatMul(r, w2)
  return y
}
)";

TEST(Counts, AddIsCheckedAndScales) {
  Counts a, b;
  b.macs = Dimension(3);
  b.readBytes = Dimension(10);
  ASSERT_TRUE(a.add(b, Dimension(4)).ok());
  EXPECT_EQ(a.macs, Dimension(12));
  EXPECT_EQ(a.readBytes, Dimension(40));
  Counts big;
  big.macs = Dimension(std::numeric_limits<int64_t>::max() / 2 + 1);
  Counts sum;
  ASSERT_TRUE(sum.add(big).ok());
  EXPECT_FALSE(sum.add(big).ok()) << "an overflowing count is an error, never a wrap";
}

TEST(Counts, BytesOfFacts) {
  auto g = parseGraph("graph main(x: f32[2,3], y: f16[N], z: ?[4], u: f32[...]) { return x }");
  ASSERT_TRUE(g.ok());
  ExprScope scope = g->enter();
  EXPECT_EQ(bytesOf(g->fact(g->inputs[0])), Dimension(24));
  EXPECT_EQ(bytesOf(g->fact(g->inputs[1])).toString(), "2*N");
  EXPECT_FALSE(bytesOf(g->fact(g->inputs[2])).isStatic()) << "unknown type: unknown bytes";
  EXPECT_FALSE(bytesOf(g->fact(g->inputs[3])).isStatic()) << "unknown rank: unknown bytes";
}

TEST(Stats, ModelTotalsParamsAndOpTypes) {
  Model m = statsOf(kMlp);
  ExprScope scope = m.g.enter();
  const ModelStats &s = m.stats;
  // Gemm: N*128*64 MACs + a bias add per output; MatMul: N*10*128.
  EXPECT_EQ(s.total.macs.toString(), "9472*N");
  EXPECT_EQ(s.params, 8192 + 128 + 1280);
  EXPECT_EQ(s.paramBytes, 4 * (8192 + 128 + 1280));
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].paramElems, 8192 + 128);
  EXPECT_EQ(s.byOpType.at("Gemm").count, 1u);
  EXPECT_EQ(s.byOpType.at("Relu").counts.flopsByKind[size_t(FlopKind::Compare)].toString(),
            "128*N");
  EXPECT_TRUE(s.notes.empty());
}

TEST(Stats, AnOpWithoutCostModelIsUnknownAndNoted) {
  Model m = statsOf("graph main(x: f32[4]) {\n y = NoSuchOp(x)\n z = Relu(x)\n return y, z\n}");
  ASSERT_EQ(m.stats.nodes.size(), 2u);
  EXPECT_FALSE(m.stats.nodes[0].modeled);
  EXPECT_TRUE(m.stats.nodes[1].modeled);
  EXPECT_FALSE(m.stats.total.flops.isStatic());
  // What is known of the total: Relu's 4 compares, NoSuchOp's counts at their lower bound (0).
  EXPECT_EQ(m.stats.totalKnown.flops, Dimension(4));
  ASSERT_EQ(m.stats.notes.size(), 2u);
  EXPECT_NE(m.stats.notes[0].find("no cost model for NoSuchOp"), std::string::npos);
  EXPECT_NE(m.stats.notes[1].find("1 node has counts that are not expressions"),
            std::string::npos)
      << m.stats.notes[1];
}

TEST(Roofline, BoundByTheLongerOfComputeAndMemory) {
  Device d{"test", 1e12, 1e11, 0}; // 1 TFLOP/s, 100 GB/s
  Counts compute;
  compute.macs = Dimension(1000000); // 2e6 operations: 2000 ns
  compute.readBytes = Dimension(1000); // 10 ns
  auto r = roofline(compute, d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->computeNs, Dimension(2000));
  EXPECT_EQ(r->memoryNs, Dimension(10));
  EXPECT_EQ(r->timeNs, Dimension(2000));
  EXPECT_EQ(r->bound, Bound::Compute);
  Counts memory;
  memory.flops = Dimension(1000);
  memory.readBytes = Dimension(1000000);
  memory.writeBytes = Dimension(1000000);
  r = roofline(memory, d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->timeNs, Dimension(20000));
  EXPECT_EQ(r->bound, Bound::Memory);
  EXPECT_DOUBLE_EQ(r->intensity, 1000.0 / 2000000.0);
}

TEST(Roofline, KindsAtTheirOwnRates) {
  Device d{"test", 1e12, 1e11, 0};
  d.macRate = 4e12;                                 // a matrix unit: 4 TMAC/s
  d.kindRate[size_t(FlopKind::Special)] = 1e10;     // slow transcendental functions
  Counts c;
  c.macs = Dimension(4000000);                      // 1000 ns
  c.flopsByKind[size_t(FlopKind::Special)] = Dimension(10000); // 1000 ns
  c.flopsByKind[size_t(FlopKind::Add)] = Dimension(500000);    // 500 ns at the peak
  c.flops = Dimension(510000);
  auto r = roofline(c, d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->computeNs, Dimension(2500));
}

TEST(Roofline, SymbolicCountsGiveSymbolicTimes) {
  Model m = statsOf(kMlp);
  ExprScope scope = m.g.enter();
  Device d{"test", 1e12, 1e11, 0};
  auto r = roofline(m.stats.total, d);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timeNs.isStatic());
  EXPECT_NE(r->timeNs.toString().find("N"), std::string::npos) << r->timeNs.toString();
}

TEST(Report, JsonKeepsTheContract) {
  Model m = statsOf(kMlp);
  StatsReport r{"mlp", &m.g, &m.stats, Device{"dev", 1e12, 1e11, 1e6}, {{"N", 8}}};
  auto j = statsJson(r);
  EXPECT_EQ(j["model"], "mlp");
  EXPECT_TRUE(j["symbols"].contains("N"));
  for (const char *key : {"macs", "flops", "params", "param_bytes", "read_bytes", "write_bytes"})
    EXPECT_TRUE(j["total"].contains(key)) << key;
  EXPECT_EQ(j["total"]["params"], 9600);
  EXPECT_EQ(j["total"]["macs"]["expr"], "9472*N");
  EXPECT_EQ(j["total"]["macs"]["min"], 0);
  EXPECT_TRUE(j["by_op_type"].contains("Gemm"));
  EXPECT_EQ(j["by_op_type"]["Gemm"]["count"], 1);
  ASSERT_EQ(j["nodes"].size(), 3u);
  for (const char *key : {"name", "op", "macs", "flops", "in_elems", "out_elems", "in_bytes",
                          "out_bytes", "param_elems", "param_bytes", "read_bytes", "write_bytes"})
    EXPECT_TRUE(j["nodes"][0].contains(key)) << key;
  EXPECT_EQ(j["nodes"][2]["op"], "MatMul");
  EXPECT_EQ(j["nodes"][2]["out_elems"]["expr"], "10*N");
  EXPECT_TRUE(j["total"].contains("time_ns"));
  EXPECT_TRUE(j["nodes"][0].contains("bound"));
  // At N = 8 the Gemm moves 8*1280... bytes: 8*256 + 33280 read, 8*512 written, in 1 MB.
  EXPECT_EQ(j["nodes"][0]["fits_cache"], true);
  EXPECT_EQ(j["device"]["name"], "dev");
}

TEST(Report, CsvHasAHeaderAndARowPerNode) {
  Model m = statsOf(kMlp);
  StatsReport r{"mlp", &m.g, &m.stats, std::nullopt, {}};
  std::ostringstream os;
  printStatsCsv(r, os);
  std::string csv = os.str();
  size_t lines = 0;
  for (char c : csv)
    lines += c == '\n';
  EXPECT_EQ(lines, 1u + 3u) << csv;
  EXPECT_EQ(csv.rfind("name,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\"8192*N ["), std::string::npos) << "a symbolic cell quotes its expression";
}

TEST(Report, TextAndSvg) {
  Model m = statsOf(kMlp);
  Device dev{"dev", 1e12, 1e11, 0};
  StatsOptions options;
  options.device = &dev;
  auto withTimes = computeStats(m.g, options);
  ASSERT_TRUE(withTimes.ok());
  StatsReport r{"mlp", &m.g, &*withTimes, dev, {{"N", 1000}}};
  std::ostringstream os;
  printStatsText(r, os);
  EXPECT_NE(os.str().find("9.47 MMAC"), std::string::npos) << os.str(); // at N = 1000
  // Per node at N = 1000: Gemm max(16.51 us compute, 8.01 us memory), Relu max(0.13, 10.24),
  // MatMul max(2.56, 5.57): 32.32 us, the sum of the nodes' times.
  EXPECT_NE(os.str().find("time on dev: 32.3 us"), std::string::npos) << os.str();
  std::string svg = statsSvg(r);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("Gemm"), std::string::npos);
}

TEST(Roofline, TheTotalTimeIsTheSumOfTheNodesTimes) {
  Model m = statsOf(kMlp);
  ExprScope scope = m.g.enter();
  Device dev{"dev", 1e12, 1e11, 0};
  StatsOptions options;
  options.device = &dev;
  auto s = computeStats(m.g, options);
  ASSERT_TRUE(s.ok());
  Dimension sum(0);
  for (const NodeStats &n : s->nodes) {
    auto rf = roofline(n.counts, dev);
    ASSERT_TRUE(rf.ok());
    EXPECT_EQ(n.counts.timeNs, rf->timeNs) << n.name;
    sum = GET_OR(sum + n.counts.timeNs);
  }
  EXPECT_EQ(s->total.timeNs, sum);
  // Never less than the roofline of the summed counts (but for rounding each node's time down
  // to a whole nanosecond).
  auto whole = roofline(s->total, dev);
  ASSERT_TRUE(whole.ok());
  auto at = [](const Dimension &d, int64_t n) {
    return *evaluate(d.expr(), [n](SymbolId) { return std::optional<int64_t>(n); });
  };
  for (int64_t n : {1, 7, 1000})
    EXPECT_GE(at(s->total.timeNs, n) + int64_t(s->nodes.size()), at(whole->timeNs, n)) << n;
}

TEST(Report, HumanUnits) {
  EXPECT_EQ(humanCount(0, "MAC"), "0 MAC");
  EXPECT_EQ(humanCount(999, "B"), "999 B");
  EXPECT_EQ(humanCount(4110000000.0, "MAC"), "4.11 GMAC");
  EXPECT_EQ(humanCount(1500, "B"), "1.5 KB");
  EXPECT_EQ(humanCount(2e12, "FLOP"), "2 TFLOP");
  EXPECT_EQ(humanCount(42123456, "B"), "42.1 MB");
  EXPECT_EQ(humanTime(850), "850 ns");
  EXPECT_EQ(humanTime(12400), "12.4 us");
  EXPECT_EQ(humanTime(1.05e9), "1.05 s");
  EXPECT_EQ(humanTime(4e12), "4000 s");
}

TEST(Report, DeviceFiles) {
  auto ok = parseDevice(nlohmann::json::parse(
      R"({"name": "x", "peak_flops": 1e12, "memory_bandwidth": 5e10, "cache_bytes": 1048576})"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->name, "x");
  EXPECT_DOUBLE_EQ(ok->bandwidth, 5e10);
  EXPECT_FALSE(parseDevice(nlohmann::json::parse(R"({"peak_flops": 1e12})")).ok());
  auto kinds = parseDevice(nlohmann::json::parse(
      R"({"peak_flops": 1e12, "memory_bandwidth": 1e11, "mac_rate": 4e12,
          "peak_by_kind": {"special": 1e11}})"));
  ASSERT_TRUE(kinds.ok());
  EXPECT_DOUBLE_EQ(kinds->macRate, 4e12);
  EXPECT_DOUBLE_EQ(kinds->kindRate[size_t(FlopKind::Special)], 1e11);
  EXPECT_DOUBLE_EQ(kinds->kindRate[size_t(FlopKind::Add)], 0);
  EXPECT_FALSE(parseDevice(nlohmann::json::parse(
                   R"({"peak_flops": 1, "memory_bandwidth": 1, "peak_by_kind": {"exp": 1}})"))
                   .ok());
  EXPECT_FALSE(parseDevice(nlohmann::json::parse(R"({"peak_flops": -1, "memory_bandwidth": 1})"))
                   .ok());
  EXPECT_FALSE(parseDevice(nlohmann::json::parse(R"([1, 2])")).ok());
  EXPECT_FALSE(
      parseDevice(nlohmann::json::parse(R"({"peak_flops": "fast", "memory_bandwidth": 1})")).ok());
}

} // namespace
} // namespace sf
