// `shapeflow why` (src/report/why.cpp): a symbolic dim followed back to the input that carries
// its symbol, a number back to the weight that holds it, a conflict shown with both inputs'
// derivations, the requirements recorded on the symbols, and errors for a bad tensor or axis.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/why.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sf {
namespace {

struct Explained {
  Graph g;
  Diagnostics d;
};

std::string why(const char *text, const std::string &spec) {
  Explained m;
  auto g = parseGraph(text);
  EXPECT_TRUE(g.ok()) << g.error().message;
  m.g = std::move(*g);
  inferGraph(m.g, m.d);
  std::ostringstream os;
  auto r = explainDim(m.g, m.d, spec, os);
  return r.ok() ? os.str() : "error: " + r.error().message;
}

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

constexpr const char *kCnn = R"(graph main(x: f32[N,3,H,W], w: f32[8,3,3,3], fc: f32[10,8]) {
  c = Conv(x, w) {strides = [2, 2], pads = [1, 1, 1, 1]}
  p = MaxPool(c) {kernel_shape = [3, 3]}
  g = GlobalAveragePool(p)
  f = Flatten(g)
  y = Gemm(f, fc) {transB = 1}
  return y
})";

TEST(Why, ASymbolicDimIsFollowedToTheInput) {
  std::string out = why(kCnn, "p[2]");
  EXPECT_TRUE(has(out, "p[2] = ")) << out;
  EXPECT_TRUE(has(out, "# node 'p' (MaxPool)")) << out;
  EXPECT_TRUE(has(out, "# node 'c' (Conv)")) << out;
  EXPECT_TRUE(has(out, "'x' is a graph input: f32[N,3,H,W]")) << out;
  // The pool's window must fit the convolution's output: recorded on H, with its node.
  EXPECT_TRUE(has(out, "requirements on its symbols:")) << out;
  EXPECT_TRUE(has(out, "# node 'p' (MaxPool)\n")) << out;
}

TEST(Why, ANumberIsFollowedToTheWeightThatHoldsIt) {
  std::string out = why(kCnn, "y[-1]");
  EXPECT_TRUE(has(out, "y[1] = 10")) << out;
  EXPECT_TRUE(has(out, "'fc' is a graph input: f32[10,8]")) << out;
}

TEST(Why, AConflictShowsBothDerivations) {
  std::string out = why(R"(graph main(a: f32[N,4], b: f32[N,5]) {
    ra = Relu(a)
    s = Add(ra, b)
    return s
  })", "s");
  EXPECT_TRUE(has(out, "error:")) << out;
  EXPECT_TRUE(has(out, "derivation of input 0:")) << out;
  EXPECT_TRUE(has(out, "derivation of input 1:")) << out;
  EXPECT_TRUE(has(out, "'a' is a graph input: f32[N,4]")) << out;
  EXPECT_TRUE(has(out, "'b' is a graph input: f32[N,5]")) << out;
}

TEST(Why, BadTensorOrAxisIsAnError) {
  EXPECT_EQ(why(kCnn, "nope[0]"), "error: no tensor named 'nope'");
  EXPECT_TRUE(has(why(kCnn, "p[7]"), "error: 'p' has rank 4")) << why(kCnn, "p[7]");
  EXPECT_TRUE(has(why(kCnn, "p[x]"), "is not a number")) << why(kCnn, "p[x]");
}

} // namespace
} // namespace sf
