// Names for a readable report (src/report/names.cpp): a long size repeated across tensors is
// defined once and the dims use its name; a dim still too long gets its longest part named, or
// is named whole; anonymous input dims are named after input and axis; the choice is
// deterministic; and every definition expands back to the facts (the JSON stays evaluable).
#include "shapeflow/dim/parse.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/names.h"
#include "shapeflow/report/report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sf {
namespace {

struct Inferred {
  Graph g;
  Diagnostics d;
  InferStats stats;
};

std::unique_ptr<Inferred> infer(const char *text) {
  auto m = std::make_unique<Inferred>();
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  m->g = std::move(*g);
  m->stats = inferGraph(m->g, m->d);
  return m;
}

std::string listing(const Inferred &m, bool names = true) {
  std::ostringstream os;
  printText(Report{"m", &m.g, &m.d, m.stats, names}, os);
  return os.str();
}

// A detection model's resize: floor(H * min(800 / min(H, W), 1333 / max(H, W))), then strided
// convolutions of the resized image.
const char *kResize = R"(opset 17
graph main(x: f32[1,3,H,W], w1: f32[8,3,3,3], w2: f32[8,8,3,3]) {
  s = Shape(x)
  two = Constant() {value = i64[1] [2]}
  four = Constant() {value = i64[1] [4]}
  hw = Slice(s, two, four)
  f = Cast(hw) {to = 1}
  lo = ReduceMin(f) {keepdims = 0}
  hi = ReduceMax(f) {keepdims = 0}
  c800 = Constant() {value = f32[] [800]}
  c1333 = Constant() {value = f32[] [1333]}
  a = Div(c800, lo)
  b = Div(c1333, hi)
  k = Min(a, b)
  r = Mul(f, k)
  fl = Floor(r)
  sz = Cast(fl) {to = 7}
  nc = Constant() {value = i64[2] [1, 3]}
  full = Concat(nc, sz) {axis = 0}
  z = Resize(x, , , full) {mode = "nearest"}
  c1 = Conv(z, w1) {strides = [2, 2], pads = [1, 1, 1, 1]}
  c2 = Conv(c1, w2) {strides = [2, 2], pads = [1, 1, 1, 1]}
  return c2
}
)";

TEST(ReportNames, ARepeatedLongSizeIsDefinedOnceAndTheDimsUseIt) {
  auto m = infer(kResize);
  std::string text = listing(*m);
  EXPECT_NE(text.find("sizes:\n  R1 = floor(H * min(800 / min(H, W), 1333 / max(H, W)))\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("f32[1,8,(R1 - 1)//2 + 1,(R2 - 1)//2 + 1]    # Conv"), std::string::npos) << text;
  EXPECT_NE(text.find("i64[4] = [1,3,R1,R2]"), std::string::npos) << text;
  // --no-names: the expanded form, no sizes block.
  std::string plain = listing(*m, false);
  EXPECT_EQ(plain.find("sizes:"), std::string::npos);
  EXPECT_NE(plain.find("f32[1,8,(floor(H * min("), std::string::npos) << plain;
}

TEST(ReportNames, EveryDefinitionExpandsBackToTheFact) {
  auto m = infer(kResize);
  ExprScope scope = m->g.enter();
  ReportNames names = nameDerivedSizes(m->g);
  ASSERT_FALSE(names.definitions.empty());
  // Expanding each name (in definition order) gives the expression it stands for.
  std::map<std::string, std::string> expanded;
  PrintNames none;
  for (const auto &d : names.definitions) {
    EXPECT_EQ(names.print.exprs.at(d.expr), d.name);
    std::string text = d.text;
    for (const auto &[n, e] : expanded) {
      for (size_t at = 0; (at = text.find(n, at)) != std::string::npos;) {
        bool word = (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]))) &&
                    (at + n.size() == text.size() || !std::isalnum(static_cast<unsigned char>(text[at + n.size()])));
        if (!word) {
          at += n.size();
          continue;
        }
        text.replace(at, n.size(), "(" + e + ")");
        at += e.size() + 2;
      }
    }
    expanded[d.name] = text;
    auto reparsed = parseDimension(text, m->g.symbols);
    ASSERT_TRUE(reparsed.ok()) << text << ": " << reparsed.error().message;
    EXPECT_EQ(reparsed->expr(), d.expr) << d.name << " = " << d.text << " expands to " << text;
  }
}

TEST(ReportNames, TheChoiceIsDeterministic) {
  auto a = infer(kResize), b = infer(kResize);
  EXPECT_EQ(listing(*a), listing(*b));
}

TEST(ReportNames, AnonymousInputDimsAreNamedAfterInputAndAxis) {
  auto m = infer(R"(opset 17
graph main(x: f32[?,3,?{1..64}], y: f32[x_d0]) {
  r = Relu(x)
  return r
}
)");
  std::string text = listing(*m);
  // x_d0 is a user's symbol (y's dim) already: the anonymous axis 0 takes the next free name.
  EXPECT_NE(text.find("x_d0_2"), std::string::npos) << text;
  EXPECT_NE(text.find("r  f32[x_d0_2,3,x_d2]"), std::string::npos) << text;
  EXPECT_NE(text.find("x_d2{1..64}"), std::string::npos) << text;
  EXPECT_NE(listing(*m, false).find("r  f32[?,3,?{1..64}]"), std::string::npos) << listing(*m, false);
}

TEST(ReportNames, ShortSizesAreLeftAlone) {
  auto m = infer(R"(opset 17
graph main(x: f32[N,3,H,W], w1: f32[8,3,3,3], w2: f32[8,8,3,3]) {
  c = Conv(x, w1) {strides = [2, 2], pads = [1, 1, 1, 1]}
  d = Conv(c, w2) {strides = [2, 2], pads = [1, 1, 1, 1]}
  return d
}
)");
  EXPECT_EQ(listing(*m).find("sizes:"), std::string::npos) << listing(*m);
}

} // namespace
} // namespace sf

namespace sf {
namespace {

// The streamed JSON (what the CLI prints) and the document toJson() builds are the same object.
TEST(ReportJson, TheStreamedTextParsesToTheDocument) {
  for (const char *text : {kResize, R"(opset 17
graph main(a: f32[2,?], b: f32[4,5], c: f32[N,?{1..8}]) {
  y = Add(a, b)
  z = Relu(c)
  return y, z
}
)",
                           // found by fuzz_text: a message quoting bytes that are not UTF-8
                           "graph main(a: f32[3,4], b: f32[5,6]) {\n  y = Einsum(a, b) {equation = \"ij,jk\\xd3\\xc5ik\"}\n  return y\n}\n"}) {
    auto m = infer(text);
    for (bool names : {true, false}) {
      Report r{"m", &m->g, &m->d, m->stats, names};
      std::ostringstream os;
      writeJson(r, os, 1);
      auto parsed = nlohmann::json::parse(os.str(), nullptr, false);
      ASSERT_FALSE(parsed.is_discarded()) << os.str();
      // The document as printed: bytes that are not UTF-8 (an attribute in a message) replaced.
      auto printed = nlohmann::json::parse(jsonText(toJson(r)), nullptr, false);
      EXPECT_EQ(parsed, printed) << os.str();
      EXPECT_EQ(parsed.dump(1), printed.dump(1)); // the same text once members are sorted
    }
  }
}

} // namespace
} // namespace sf
