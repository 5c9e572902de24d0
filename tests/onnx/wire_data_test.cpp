// The models of tests/onnx/data/, written by python3-onnx (make_data.py): the values written
// there, and a cross-check of every one of them against libonnx's generated classes.
#include "crosscheck.h"

#include "shapeflow/onnx/wire.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace sf::onnx;
using namespace sf::onnx::test;

namespace {

std::string dataPath(const char *name) { return std::string(SF_ONNX_TEST_DIR "/data/") + name; }

ModelView load(const char *name) {
  auto m = readModelFile(dataPath(name));
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? *m : ModelView{};
}

const TensorView *find(const ModelView &m, std::string_view name) {
  for (const TensorView &t : m.graph.initializers)
    if (t.name == name) return &t;
  ADD_FAILURE() << "no initializer " << name;
  return nullptr;
}

std::vector<double> floatsOf(const ModelView &m, std::string_view name) {
  const TensorView *t = find(m, name);
  if (!t) return {};
  auto r = decodeFloats(*t, m, 100);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : std::vector<double>{};
}

std::vector<int64_t> intsOf(const ModelView &m, std::string_view name) {
  const TensorView *t = find(m, name);
  if (!t) return {};
  auto r = decodeInts(*t, m, 100);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : std::vector<int64_t>{};
}

} // namespace

TEST(WireData, CrossCheckAllWithLibOnnx) {
  CrossCheckStats stats;
  for (const auto &entry : fs::directory_iterator(SF_ONNX_TEST_DIR "/data"))
    if (entry.path().extension() == ".onnx") {
      EXPECT_TRUE(crossCheckFile(entry.path().string(), stats));
    }
  EXPECT_EQ(5u, stats.models);
  EXPECT_EQ(1u, stats.functions);
}

TEST(WireData, ValuesOfEveryType) {
  ModelView m = load("values.onnx");
  EXPECT_EQ((std::vector<double>{1.5, -2, 3, 4.25}), floatsOf(m, "f32_raw"));
  EXPECT_EQ((std::vector<double>{0.5, -1, 7}), floatsOf(m, "f32_typed"));
  EXPECT_EQ((std::vector<double>{1e300, -2.5}), floatsOf(m, "f64_raw"));
  EXPECT_EQ((std::vector<double>{1e-300, 3}), floatsOf(m, "f64_typed"));
  EXPECT_EQ((std::vector<int64_t>{1, -2, 3}), intsOf(m, "i64_raw"));
  EXPECT_EQ((std::vector<int64_t>{-(int64_t(1) << 62), 0, 5, int64_t(1) << 40}),
            intsOf(m, "i64_typed"));
  EXPECT_EQ((std::vector<int64_t>{-128, 127}), intsOf(m, "i8_raw"));
  EXPECT_EQ((std::vector<int64_t>{-128, 127}), intsOf(m, "i8_typed"));
  EXPECT_EQ((std::vector<int64_t>{0, 255}), intsOf(m, "u8_typed"));
  EXPECT_EQ((std::vector<int64_t>{-30000, 30000}), intsOf(m, "i16_raw"));
  EXPECT_EQ((std::vector<int64_t>{65535}), intsOf(m, "u16_typed"));
  EXPECT_EQ((std::vector<int64_t>{-7, 0, 2147483647}), intsOf(m, "i32_typed"));
  EXPECT_EQ((std::vector<int64_t>{0, 4294967295}), intsOf(m, "u32_typed"));
  EXPECT_EQ((std::vector<int64_t>{7, INT64_MAX}), intsOf(m, "u64_typed"));
  EXPECT_EQ((std::vector<int64_t>{1, 0, 1}), intsOf(m, "bool_raw"));
  EXPECT_EQ((std::vector<int64_t>{0, 1}), intsOf(m, "bool_typed"));
  EXPECT_EQ((std::vector<double>{1, -2, 0.5}), floatsOf(m, "f16_raw"));
  EXPECT_EQ((std::vector<double>{1, -0.25}), floatsOf(m, "f16_typed"));
  EXPECT_EQ((std::vector<double>{1, -3}), floatsOf(m, "bf16_typed"));
  EXPECT_EQ((std::vector<int64_t>{42}), intsOf(m, "scalar"));
  EXPECT_TRUE(floatsOf(m, "empty_raw").empty());
  const TensorView *s = find(m, "str_typed");
  ASSERT_TRUE(s);
  EXPECT_EQ((std::vector<std::string_view>{"hello", ""}), s->stringData);
}

TEST(WireData, LocalFunctionsAndSubgraphs) {
  ModelView m = load("functions.onnx");
  ASSERT_EQ(1u, m.functions.size());
  EXPECT_EQ("AddScaled", m.functions[0].name);
  EXPECT_EQ("custom", m.functions[0].domain);
  EXPECT_EQ(3u, m.functions[0].nodes.size());
  EXPECT_EQ((std::vector<std::string_view>{"alpha"}), m.functions[0].attributes);
  ASSERT_EQ(2u, m.graph.nodes.size());
  EXPECT_EQ("custom", m.graph.nodes[0].domain);
  const NodeView &branch = m.graph.nodes[1];
  ASSERT_EQ(2u, branch.attributes.size());
  for (const AttributeView &a : branch.attributes) {
    ASSERT_TRUE(a.extra().g);
    EXPECT_EQ(a.name == "then_branch" ? "AddScaled" : "Identity", a.extra().g->nodes[0].opType);
  }
}

TEST(WireData, SparseInitializerAndAttribute) {
  ModelView m = load("sparse.onnx");
  ASSERT_EQ(1u, m.graph.sparseInitializers.size());
  const SparseTensorView &sp = m.graph.sparseInitializers[0];
  EXPECT_EQ((std::vector<int64_t>{2, 3}), sp.dims);
  EXPECT_EQ((std::vector<double>{1, 2, 3}), *decodeFloats(sp.values, m, 10));
  EXPECT_EQ((std::vector<int64_t>{0, 4, 5}), *decodeInts(sp.indices, m, 10));
  ASSERT_TRUE(m.graph.nodes[0].attributes[0].extra().sparseTensor);
}

TEST(WireData, TypeKinds) {
  ModelView m = load("types.onnx");
  const auto &in = m.graph.inputs;
  ASSERT_EQ(7u, in.size());
  EXPECT_EQ(TypeView::Sequence, in[0].type.kind);
  EXPECT_EQ(TypeView::Optional, in[1].type.kind);
  EXPECT_EQ(TypeView::Sequence, in[2].type.inner->kind);
  EXPECT_EQ(TypeView::Map, in[3].type.kind);
  EXPECT_EQ(TypeView::SparseTensor, in[4].type.kind);
  EXPECT_FALSE(in[5].type.hasShape);
  ASSERT_EQ(3u, in[6].type.dims.size());
  EXPECT_FALSE(in[6].type.dims[0].hasValue);
  EXPECT_TRUE(in[6].type.dims[0].param.empty());
  EXPECT_EQ(5, in[6].type.dims[1].value);
  EXPECT_EQ("S", in[6].type.dims[2].param);
}

TEST(WireData, ExternalDataWrittenByOnnx) {
  ModelView m = load("external.onnx");
  const TensorView *w = find(m, "w");
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->isExternal);
  EXPECT_EQ("external.weights", w->external.location);
  std::vector<double> expected;
  for (int i = 0; i < 12; ++i)
    expected.push_back(i);
  EXPECT_EQ(expected, floatsOf(m, "w"));
  EXPECT_EQ((std::vector<int64_t>{10, 20, 30, 40}), intsOf(m, "b"));
}
