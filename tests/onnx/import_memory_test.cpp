// What loading a model keeps in memory: weights in raw layout stay views of the file's bytes
// whatever their size (never a second copy on the heap), small booleans are decoded so that every
// byte reads as 0 or 1, values in typed fields are decoded; a mapping's pages can be dropped from
// the process and read again; the annotated model written from a mapping in pieces is the one
// written from its bytes.
#include "shapeflow/onnx/export.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/wire.h"

#include "proto_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <sstream>

using namespace sf;
using namespace sf::onnx::test;

namespace {

constexpr int32_t kFloat = 1, kBool = 9, kUint64 = 13;

std::string_view keep(const std::string &bytes) {
  static std::deque<std::string> kept;
  return kept.emplace_back(bytes);
}

bool inside(std::span<const std::byte> part, std::string_view whole) {
  auto *p = reinterpret_cast<const char *>(part.data());
  return !part.empty() && p >= whole.data() && p + part.size() <= whole.data() + whole.size();
}

/// y = w + b (+ a typed-field weight t) with the initializers given.
Proto graphWith(std::initializer_list<Proto> initializers) {
  Proto g;
  g.msg(1, node("Add", {"w", "b"}, {"y"}, "add0"));
  g.str(2, "main");
  for (const Proto &t : initializers) g.msg(5, t);
  g.msg(12, valueInfo("y", tensorType(kFloat, {2})));
  return g;
}

TensorPtr constant(const Graph &g, std::string_view name) {
  auto o = g.findOutlet(name);
  if (!o) return nullptr;
  auto t = g.nodes[o->node].attrs.getTensor("value");
  return t.ok() ? *t : nullptr;
}

std::string writeFile(const std::string &name, const std::string &bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  FILE *f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

} // namespace

TEST(ImportMemory, SmallRawWeightsAreViewsOfTheFileNotCopies) {
  Proto m = model(graphWith({rawTensor("w", kFloat, {2}, rawOf<float>({1.5f, -2})),
                             rawTensor("b", kFloat, {2}, rawOf<float>({0.25f, 4}))}));
  std::string_view bytes = keep(m.bytes);
  auto view = onnx::readModelBuffer(bytes);
  ASSERT_TRUE(view.ok()) << view.error().message;
  Diagnostics diags;
  auto g = onnx::importModel(*view, diags);
  ASSERT_TRUE(g.ok()) << g.error().message;
  TensorPtr w = constant(*g, "w");
  ASSERT_TRUE(w && w->hasData());
  EXPECT_TRUE(inside(w->bytes(), bytes)) << "a 2-element raw weight is a view of the model's bytes";
  EXPECT_EQ((std::vector<double>{1.5, -2}), *w->toDoubles(8));
}

TEST(ImportMemory, SmallRawBooleansAreDecodedToZeroAndOne) {
  Proto m = model(graphWith({rawTensor("w", kBool, {3}, std::string("\x00\x02\x01", 3)),
                             rawTensor("b", kFloat, {2}, rawOf<float>({0, 0}))}));
  std::string_view bytes = keep(m.bytes);
  auto view = onnx::readModelBuffer(bytes);
  ASSERT_TRUE(view.ok()) << view.error().message;
  Diagnostics diags;
  auto g = onnx::importModel(*view, diags);
  ASSERT_TRUE(g.ok()) << g.error().message;
  TensorPtr w = constant(*g, "w");
  ASSERT_TRUE(w && w->hasData());
  EXPECT_FALSE(inside(w->bytes(), bytes));
  EXPECT_EQ((std::vector<int64_t>{0, 1, 1}), *w->toInt64s(8));
}

TEST(ImportMemory, SmallRawUint64AboveTheInt64RangeImports) {
  // A valid uint64 weight (2^63 + 1): a view of its bytes; reading it as int64 says it does not fit.
  Proto m = model(graphWith({rawTensor("w", kUint64, {1}, rawOf<uint64_t>({(uint64_t(1) << 63) + 1})),
                             rawTensor("b", kFloat, {2}, rawOf<float>({1, 1}))}));
  auto view = onnx::readModelBuffer(keep(m.bytes));
  ASSERT_TRUE(view.ok()) << view.error().message;
  Diagnostics diags;
  auto g = onnx::importModel(*view, diags);
  ASSERT_TRUE(g.ok()) << g.error().message;
  TensorPtr w = constant(*g, "w");
  ASSERT_TRUE(w && w->hasData());
  uint64_t v = 0;
  std::memcpy(&v, w->bytes().data(), 8);
  EXPECT_EQ((uint64_t(1) << 63) + 1, v);
  EXPECT_FALSE(w->toInt64s(8).ok());
}

TEST(ImportMemory, TypedFieldWeightsAreDecoded) {
  Proto typed = tensorHeader("w", kFloat, {2});
  typed.str(4, rawOf<float>({3, 5})); // float_data, packed
  Proto m = model(graphWith({typed, rawTensor("b", kFloat, {2}, rawOf<float>({1, 1}))}));
  auto view = onnx::readModelBuffer(keep(m.bytes));
  ASSERT_TRUE(view.ok()) << view.error().message;
  Diagnostics diags;
  auto g = onnx::importModel(*view, diags);
  ASSERT_TRUE(g.ok()) << g.error().message;
  TensorPtr w = constant(*g, "w");
  ASSERT_TRUE(w && w->hasData());
  EXPECT_EQ((std::vector<double>{3, 5}), *w->toDoubles(8));
}

TEST(ImportMemory, ReleasedPagesReadBackTheSameBytes) {
  std::string content(3 * 4096 + 123, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = char(i * 7 + 1);
  auto file = onnx::MappedFile::open(writeFile("release.bin", content));
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(content, std::string((*file)->bytes()));
  (*file)->release(0, (*file)->size());
  EXPECT_EQ(content, std::string((*file)->bytes()));
  (*file)->release(100, 5000); // not page-aligned: only the whole pages inside are dropped
  (*file)->release(content.size() - 10, 1000); // past the end: clipped
  (*file)->release(content.size() + 1, 10);    // outside: nothing
  EXPECT_EQ(content, std::string((*file)->bytes()));
}

TEST(ImportMemory, LoadedModelsReadTheirWeightsAfterTheFilesPagesAreDropped) {
  // loadModelFile drops the file's pages after the initializers are read; the weights read later
  // must come back intact.
  Proto m = model(graphWith({rawTensor("w", kFloat, {2}, rawOf<float>({1.5f, -2})),
                             rawTensor("b", kFloat, {2}, rawOf<float>({0.25f, 4}))}));
  std::string path = writeFile("release_model.onnx", m.bytes);
  Diagnostics diags;
  auto g = onnx::loadModelFile(path, diags);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ((std::vector<double>{0.25, 4}), *constant(*g, "b")->toDoubles(8));
}

TEST(ImportMemory, AnnotatedModelFromAMappingEqualsTheOneFromItsBytes) {
  // A weight of 20 MB: the model is copied in three 8 MB pieces.
  std::string big(size_t(5'000'000) * sizeof(float), '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = char(i * 13 + 5);
  Proto m = model(graphWith({rawTensor("w", kFloat, {5'000'000}, big), rawTensor("b", kFloat, {1}, rawOf<float>({4}))}));
  std::string path = writeFile("annotate_from_mapping.onnx", m.bytes);
  Diagnostics diags;
  auto g = onnx::loadModelFile(path, diags);
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto file = onnx::MappedFile::open(path);
  ASSERT_TRUE(file.ok());
  std::ostringstream fromMapping, fromBytes;
  ASSERT_TRUE(onnx::writeAnnotatedModel(**file, *g, fromMapping).ok());
  ASSERT_TRUE(onnx::writeAnnotatedModel(m.bytes, *g, fromBytes).ok());
  EXPECT_EQ(fromBytes.str(), fromMapping.str());
  EXPECT_GT(fromMapping.str().size(), m.bytes.size());

  auto notModel = onnx::MappedFile::open(writeFile("not_a_model.onnx", "hello"));
  ASSERT_TRUE(notModel.ok());
  std::ostringstream out;
  auto r = onnx::writeAnnotatedModel(**notModel, *g, out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("not_a_model.onnx: not an ONNX model"));
}
