// Cross-check against libonnx's generated classes over every model of ONNX's own test suites
// (Debian's libonnx-testdata): node, pytorch-converted, pytorch-operator, simple and real, plus
// the input/output tensors of the node tests, whose values are decoded both ways.
#include "crosscheck.h"
#include "test_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace sf::onnx;
using namespace sf::onnx::test;

namespace {

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

std::vector<fs::path> modelsIn(const fs::path &suite) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(suite, ec))
    if (fs::exists(entry.path() / "model.onnx")) out.push_back(entry.path() / "model.onnx");
  std::sort(out.begin(), out.end());
  return out;
}

std::string slurp(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void crossCheckSuite(const char *suite, size_t atLeast) {
  auto models = modelsIn(kTestData / suite);
  if (models.empty()) GTEST_SKIP() << "no models in " << (kTestData / suite);
  CrossCheckStats stats;
  size_t failures = 0;
  for (const auto &path : models)
    failures += !crossCheckFile(path.string(), stats);
  EXPECT_EQ(0u, failures);
  EXPECT_GE(stats.models, atLeast);
  std::printf(
      "[ %s ] %zu models, %zu graphs, %zu nodes, %zu attributes, %zu tensors (%zu decoded), "
      "%zu value infos\n",
      suite, stats.models, stats.graphs, stats.nodes, stats.attributes, stats.tensors,
      stats.valuesDecoded, stats.valueInfos);
}

} // namespace

TEST(LibOnnxCrossCheck, AllNodeTestModels) { crossCheckSuite("node", 900); }
TEST(LibOnnxCrossCheck, PytorchConvertedModels) { crossCheckSuite("pytorch-converted", 50); }
TEST(LibOnnxCrossCheck, PytorchOperatorModels) { crossCheckSuite("pytorch-operator", 20); }
TEST(LibOnnxCrossCheck, SimpleModels) { crossCheckSuite("simple", 5); }

// Real exports (torch), when a developer has made them with shared/tools/make_dev_models.py
// into dev_models/ (not committed). Large ones are left to the loader benchmark.
TEST(LibOnnxCrossCheck, DevModels) {
  const char *source = std::getenv("SF_SOURCE_DIR");
  fs::path dir = fs::path(source ? source : SF_ONNX_TEST_DIR "/../..") / "dev_models";
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".onnx" && entry.file_size() < kDevModelMaxBytes)
      models.push_back(entry.path());
  if (models.empty()) GTEST_SKIP() << "no models in " << dir;
  std::sort(models.begin(), models.end());
  CrossCheckStats stats;
  for (const auto &path : models)
    EXPECT_TRUE(crossCheckFile(path.string(), stats));
  std::printf("[ dev_models ] %zu models, %zu nodes, %zu tensors\n", stats.models, stats.nodes,
              stats.tensors);
}

// Every test_data_set_*/input_k.pb (and output_k.pb) whose graph input (output) k is a tensor:
// readTensorBuffer and the decoders must agree with libonnx on header and values.
TEST(LibOnnxCrossCheck, NodeTestDataTensors) {
  auto models = modelsIn(kTestData / "node");
  if (models.empty()) GTEST_SKIP() << "no node test data";
  CrossCheckStats stats;
  size_t files = 0;
  ModelView noModel;
  for (const auto &modelPath : models) {
    auto model = readModelFile(modelPath.string());
    ASSERT_TRUE(model.ok()) << model.error().message;
    std::error_code ec;
    for (const auto &set : fs::directory_iterator(modelPath.parent_path(), ec)) {
      if (!set.is_directory()) continue;
      for (bool outputs : {false, true}) {
        const auto &infos = outputs ? model->graph.outputs : model->graph.inputs;
        for (size_t k = 0; k < infos.size(); ++k) {
          fs::path pbPath =
              set.path() / ((outputs ? "output_" : "input_") + std::to_string(k) + ".pb");
          if (!fs::exists(pbPath) || infos[k].type.kind != TypeView::Tensor) continue;
          SCOPED_TRACE(pbPath.string());
          std::string bytes = slurp(pbPath);
          ::onnx::TensorProto expected;
          ASSERT_TRUE(expected.ParseFromString(bytes));
          auto actual = readTensorBuffer(bytes, pbPath.string());
          ASSERT_TRUE(actual.ok()) << actual.error().message;
          compareTensor(expected, *actual, noModel, stats);
          ++files;
        }
      }
    }
  }
  EXPECT_GT(files, 1000u);
  EXPECT_GT(stats.valuesDecoded, 1000u);
  std::printf("[ tensors ] %zu files, %zu values decoded and compared\n", files,
              stats.valuesDecoded);
}
