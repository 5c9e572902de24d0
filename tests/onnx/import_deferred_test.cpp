// loadModelFile reads the main graph's nodes left encoded and decodes each one as the importer
// builds it (ReadOptions::deferNodes). Property: on every model of ONNX's test suites (Debian's
// libonnx-testdata), the repository's models and the developer's dev_models, it gives the same
// graph as the eager read followed by importModel, and the same diagnostics, or the same error.
#include "shapeflow/ir/text.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/onnx/wire.h"

#include "proto_writer.h"
#include "test_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace sf;

namespace {

std::vector<fs::path> onnxFilesUnder(const fs::path &dir, size_t maxBytes) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec))
    if (it->path().extension() == ".onnx" && it->is_regular_file(ec) && it->file_size(ec) <= maxBytes)
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

struct Outcome {
  std::string text;        // the printed graph, or the error
  std::string diagnostics; // what the import warned about
};

std::string messages(const Diagnostics &diags) {
  std::string out;
  for (const Diagnostic &d : diags.list()) out += format(d) + "\n";
  return out;
}

Outcome eager(const std::string &path) {
  auto m = onnx::readModelFile(path);
  if (!m.ok()) return {"error: " + m.error().message, ""};
  Diagnostics diags;
  auto g = onnx::importModel(*m, diags);
  if (!g.ok()) return {"error: " + path + ": " + g.error().message, ""};
  return {printGraph(*g, {.facts = true}), messages(diags)};
}

Outcome deferred(const std::string &path) {
  Diagnostics diags;
  auto g = onnx::loadModelFile(path, diags);
  if (!g.ok()) return {"error: " + g.error().message, ""};
  return {printGraph(*g, {.facts = true}), messages(diags)};
}

size_t compareAll(const std::vector<fs::path> &files) {
  size_t compared = 0;
  for (const auto &f : files) {
    SCOPED_TRACE(f.string());
    Outcome a = eager(f.string()), b = deferred(f.string());
    EXPECT_EQ(a.text, b.text);
    EXPECT_EQ(a.diagnostics, b.diagnostics);
    ++compared;
  }
  return compared;
}

} // namespace

TEST(ImportDeferred, SameGraphAsTheEagerReadOnOnnxTestSuites) {
  auto files = onnxFilesUnder("/usr/share/libonnx-testdata/data", size_t(16) << 20);
  if (files.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  EXPECT_GE(compareAll(files), 1000u);
}

TEST(ImportDeferred, SameGraphAsTheEagerReadOnTheRepositorysModels) {
  // The repository's own models (examples, test data with local functions, subgraphs, external
  // data) and the malformed corpus (the same error either way).
  size_t n = compareAll(onnxFilesUnder(SF_ONNX_TEST_DIR "/../../examples", size_t(64) << 20));
  n += compareAll(onnxFilesUnder(SF_ONNX_TEST_DIR "/data", size_t(64) << 20));
  n += compareAll(onnxFilesUnder(SF_ONNX_TEST_DIR "/malformed", size_t(64) << 20));
  EXPECT_GE(n, 40u);
}

TEST(ImportDeferred, SameGraphAsTheEagerReadOnDevModels) {
  const char *source = std::getenv("SF_SOURCE_DIR");
  fs::path dir = fs::path(source ? source : SF_ONNX_TEST_DIR "/../..") / "dev_models";
  auto files = onnxFilesUnder(dir, onnx::test::kDevModelMaxBytes);
  if (files.empty()) GTEST_SKIP() << "no dev_models (shared/tools/make_dev_models.py makes them)";
  compareAll(files);
}

TEST(ImportDeferred, NodesOutOfOrderAndCapturedValues) {
  // Consumers written before their producers (the second pass connects them, from copies of
  // the decoded views), an If whose branches read outer values (captured), a name used before
  // and after the first out-of-order node, and more nodes than the decoder's look-ahead.
  using namespace sf::onnx::test;
  const int32_t kFloat = 1;
  Proto thenG = Proto().msg(1, node("Add", {"a", "b"}, {"t"})).str(2, "then");
  thenG.msg(12, valueInfo("t", tensorType(kFloat, {"N"})));
  Proto elseG = Proto().msg(1, node("Neg", {"a"}, {"e"})).str(2, "else");
  elseG.msg(12, valueInfo("e", tensorType(kFloat, {"N"})));
  Proto g;
  g.msg(1, node("Relu", {"x"}, {"a"}, "first"));
  g.msg(1, node("Sigmoid", {"c"}, {"d"}, "reads_later")); // c is produced further down
  g.msg(1, node("Relu", {"a"}, {"b"}));
  g.msg(1, node("Tanh", {"b"}, {"c"}));
  for (int i = 0; i < 8; ++i)
    g.msg(1, node("Abs", {i == 0 ? "d" : "abs" + std::to_string(i - 1)}, {"abs" + std::to_string(i)}));
  g.msg(1, node("ReduceSum", {"abs7"}, {"s"}, "sum", {attrInt("keepdims", 0)}));
  g.msg(1, node("Less", {"s", "zero"}, {"cond"}));
  g.msg(1, node("If", {"cond"}, {"y"}, "if0",
                {attrGraph("then_branch", thenG), attrGraph("else_branch", elseG)}));
  g.str(2, "main");
  g.msg(5, rawTensor("zero", kFloat, {}, rawOf<float>({0})));
  g.msg(11, valueInfo("x", tensorType(kFloat, {"N"})));
  g.msg(12, valueInfo("y", tensorType(kFloat, {"N"})));
  fs::path path = fs::temp_directory_path() / "sf_import_deferred_order.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << model(g).bytes;
  }
  Outcome a = eager(path.string()), b = deferred(path.string());
  EXPECT_EQ(std::string::npos, a.text.find("error")) << a.text;
  EXPECT_NE(std::string::npos, a.text.find("reads_later"));
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.diagnostics, b.diagnostics);
  fs::remove(path);
}
