// Value decoding: element counts and sizes, every integer and float type from raw_data and from
// the typed fields, budgets, and external data resolved (and refused) against the model folder.
#include "proto_writer.h"

#include "shapeflow/onnx/wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;
using namespace sf::onnx;
using namespace sf::onnx::test;

namespace {

int32_t dt(DataType t) { return static_cast<int32_t>(t); }

TensorView tensorOf(const Proto &t) {
  auto r = readTensorBuffer(t.bytes);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : TensorView{};
}

// readTensorBuffer keeps views into the Proto: keep it alive alongside.
struct Held {
  Proto bytes;
  TensorView t;
  explicit Held(Proto p) : bytes(std::move(p)) { t = tensorOf(bytes); }
};

std::vector<int64_t> ints(const Proto &p, size_t budget = 1000) {
  Held h(p);
  auto r = decodeInts(h.t, ModelView{}, budget);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : std::vector<int64_t>{};
}

std::vector<double> floats(const Proto &p, size_t budget = 1000) {
  Held h(p);
  auto r = decodeFloats(h.t, ModelView{}, budget);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : std::vector<double>{};
}

std::string intsError(const Proto &p, size_t budget = 1000) {
  Held h(p);
  auto r = decodeInts(h.t, ModelView{}, budget);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error().message;
}

} // namespace

TEST(WireDecode, DataTypeTable) {
  EXPECT_EQ("FLOAT", dataTypeName(1));
  EXPECT_EQ("BFLOAT16", dataTypeName(16));
  EXPECT_EQ("FLOAT8E8M0", dataTypeName(24));
  EXPECT_EQ("INT2", dataTypeName(26));
  EXPECT_EQ("<unknown 27>", dataTypeName(27));
  EXPECT_EQ("<unknown -1>", dataTypeName(-1));
  EXPECT_FALSE(isKnownDataType(0));
  EXPECT_TRUE(isKnownDataType(26));
  EXPECT_EQ(32, dataTypeBits(dt(DataType::Float)));
  EXPECT_EQ(128, dataTypeBits(dt(DataType::Complex128)));
  EXPECT_EQ(4, dataTypeBits(dt(DataType::Int4)));
  EXPECT_EQ(2, dataTypeBits(dt(DataType::UInt2)));
  EXPECT_EQ(0, dataTypeBits(dt(DataType::String)));
}

TEST(WireDecode, ElementCountAndByteSize) {
  TensorView t;
  t.name = "t";
  t.dataType = dt(DataType::Float);
  EXPECT_EQ(1, *elementCount(t)); // a scalar
  t.dims = {2, 0, 5};
  EXPECT_EQ(0, *elementCount(t));
  t.dims = {3, 5};
  EXPECT_EQ(15, *elementCount(t));
  EXPECT_EQ(60, *rawByteSize(t));
  t.dataType = dt(DataType::Int4);
  EXPECT_EQ(8, *rawByteSize(t)); // 15 nibbles round up
  t.dataType = dt(DataType::Int2);
  EXPECT_EQ(4, *rawByteSize(t));
  EXPECT_EQ("INT2[3,5]", describeTensorType(t));

  t.dims = {int64_t(1) << 40, int64_t(1) << 30};
  auto overflow = elementCount(t);
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ("tensor 't': dims [1099511627776,1073741824] overflow int64", overflow.error().message);
  t.dims = {int64_t(1) << 61};
  t.dataType = dt(DataType::Double);
  EXPECT_FALSE(rawByteSize(t).ok());
  t.dims = {2, -1};
  EXPECT_EQ("tensor 't': negative dim -1 in dims [2,-1]", elementCount(t).error().message);
  t.dims = {1};
  t.dataType = dt(DataType::String);
  EXPECT_FALSE(rawByteSize(t).ok());
}

TEST(WireDecode, IntegersFromRawData) {
  EXPECT_EQ((std::vector<int64_t>{-128, 127, 0}),
            ints(rawTensor("a", dt(DataType::Int8), {3}, rawOf<int8_t>({-128, 127, 0}))));
  EXPECT_EQ((std::vector<int64_t>{255, 1}),
            ints(rawTensor("a", dt(DataType::UInt8), {2}, rawOf<uint8_t>({255, 1}))));
  EXPECT_EQ((std::vector<int64_t>{-32768, 7}),
            ints(rawTensor("a", dt(DataType::Int16), {2}, rawOf<int16_t>({-32768, 7}))));
  EXPECT_EQ((std::vector<int64_t>{65535}),
            ints(rawTensor("a", dt(DataType::UInt16), {1}, rawOf<uint16_t>({65535}))));
  EXPECT_EQ((std::vector<int64_t>{-5, 1 << 30}),
            ints(rawTensor("a", dt(DataType::Int32), {2}, rawOf<int32_t>({-5, 1 << 30}))));
  EXPECT_EQ((std::vector<int64_t>{4294967295}),
            ints(rawTensor("a", dt(DataType::UInt32), {1}, rawOf<uint32_t>({4294967295u}))));
  EXPECT_EQ(
      (std::vector<int64_t>{INT64_MIN, -1, INT64_MAX}),
      ints(rawTensor("a", dt(DataType::Int64), {3}, rawOf<int64_t>({INT64_MIN, -1, INT64_MAX}))));
  EXPECT_EQ(
      (std::vector<int64_t>{INT64_MAX}),
      ints(rawTensor("a", dt(DataType::UInt64), {1}, rawOf<uint64_t>({uint64_t(INT64_MAX)}))));
  EXPECT_EQ((std::vector<int64_t>{1, 0, 1}),
            ints(rawTensor("a", dt(DataType::Bool), {3}, rawOf<uint8_t>({2, 0, 1}))));
  // INT4: low nibble first, sign-extended; 3 values in 2 bytes.
  EXPECT_EQ((std::vector<int64_t>{-1, 7, -8}),
            ints(rawTensor("a", dt(DataType::Int4), {3}, rawOf<uint8_t>({0x7f, 0x08}))));
  EXPECT_EQ((std::vector<int64_t>{15, 7, 8}),
            ints(rawTensor("a", dt(DataType::UInt4), {3}, rawOf<uint8_t>({0x7f, 0x08}))));
  // INT2: four per byte, low bits first: 0b11'10'01'00.
  EXPECT_EQ((std::vector<int64_t>{0, 1, -2, -1, 1}),
            ints(rawTensor("a", dt(DataType::Int2), {5}, rawOf<uint8_t>({0xe4, 0x01}))));
  EXPECT_EQ((std::vector<int64_t>{0, 1, 2, 3}),
            ints(rawTensor("a", dt(DataType::UInt2), {4}, rawOf<uint8_t>({0xe4}))));

  EXPECT_EQ("tensor 'a': UINT64 value 18446744073709551615 does not fit in int64",
            intsError(rawTensor("a", dt(DataType::UInt64), {1}, rawOf<uint64_t>({UINT64_MAX}))));
}

TEST(WireDecode, IntegersFromTypedFields) {
  // int32_data holds the small types (negative int32 values are 10-byte varints).
  EXPECT_EQ((std::vector<int64_t>{-128, 5}),
            ints(tensorHeader("a", dt(DataType::Int8), {2}).packed(5, {-128, 5})));
  EXPECT_EQ((std::vector<int64_t>{-7, 2147483647}),
            ints(tensorHeader("a", dt(DataType::Int32), {2}).sint(5, -7).sint(5, 2147483647)));
  EXPECT_EQ((std::vector<int64_t>{0, 1}),
            ints(tensorHeader("a", dt(DataType::Bool), {2}).packed(5, {0, 1})));
  EXPECT_EQ((std::vector<int64_t>{65535}),
            ints(tensorHeader("a", dt(DataType::UInt16), {1}).packed(5, {65535})));
  // INT4 in int32_data: one packed byte per entry.
  EXPECT_EQ((std::vector<int64_t>{-1, 7, 3}),
            ints(tensorHeader("a", dt(DataType::Int4), {3}).packed(5, {0x7f, 0x03})));
  EXPECT_EQ((std::vector<int64_t>{INT64_MIN, 9}),
            ints(tensorHeader("a", dt(DataType::Int64), {2}).packed(7, {INT64_MIN, 9})));
  EXPECT_EQ((std::vector<int64_t>{4294967295, 3}),
            ints(tensorHeader("a", dt(DataType::UInt32), {2}).packed(11, {4294967295, 3})));
  EXPECT_EQ("tensor 'a': UINT64 value 9223372036854775808 does not fit in int64",
            intsError(tensorHeader("a", dt(DataType::UInt64), {1}).packed(11, {INT64_MIN})));
  // A scalar in unpacked form.
  EXPECT_EQ((std::vector<int64_t>{42}),
            ints(tensorHeader("s", dt(DataType::Int64), {}).sint(7, 42)));
}

TEST(WireDecode, FloatsOfEveryKind) {
  EXPECT_EQ((std::vector<double>{1.5, -2}),
            floats(rawTensor("f", dt(DataType::Float), {2}, rawOf<float>({1.5f, -2}))));
  EXPECT_EQ((std::vector<double>{0.25, 8}),
            floats(tensorHeader("f", dt(DataType::Float), {2}).packedFloats(4, {0.25f, 8})));
  EXPECT_EQ((std::vector<double>{1e300}),
            floats(rawTensor("d", dt(DataType::Double), {1}, rawOf<double>({1e300}))));
  EXPECT_EQ((std::vector<double>{-1e-300, 2}),
            floats(tensorHeader("d", dt(DataType::Double), {2}).packedDoubles(10, {-1e-300, 2})));
  // FLOAT16 / BFLOAT16: raw bits, or bit patterns in int32_data.
  EXPECT_EQ((std::vector<double>{1, -2, 65504, 5.960464477539063e-08}),
            floats(rawTensor("h", dt(DataType::Float16), {4},
                             rawOf<uint16_t>({0x3c00, 0xc000, 0x7bff, 0x0001}))));
  auto inf = floats(tensorHeader("h", dt(DataType::Float16), {2}).packed(5, {0x7c00, 0x7e00}));
  EXPECT_TRUE(std::isinf(inf[0]));
  EXPECT_TRUE(std::isnan(inf[1]));
  EXPECT_EQ((std::vector<double>{1, -3}),
            floats(tensorHeader("b", dt(DataType::BFloat16), {2}).packed(5, {0x3f80, 0xc040})));
  // FLOAT8 kinds: 1.0 and the largest finite value of each, then NaN.
  EXPECT_EQ(
      (std::vector<double>{1, 448, -0.001953125}),
      floats(rawTensor("e", dt(DataType::Float8E4M3FN), {3}, rawOf<uint8_t>({0x38, 0x7e, 0x81}))));
  EXPECT_TRUE(std::isnan(floats(rawTensor("e", dt(DataType::Float8E4M3FN), {1}, "\x7f"))[0]));
  EXPECT_EQ((std::vector<double>{1, 240}), floats(rawTensor("e", dt(DataType::Float8E4M3FNUZ), {2},
                                                            rawOf<uint8_t>({0x40, 0x7f}))));
  EXPECT_TRUE(std::isnan(floats(rawTensor("e", dt(DataType::Float8E4M3FNUZ), {1}, "\x80"))[0]));
  EXPECT_EQ((std::vector<double>{1, 57344}),
            floats(rawTensor("e", dt(DataType::Float8E5M2), {2}, rawOf<uint8_t>({0x3c, 0x7b}))));
  EXPECT_TRUE(std::isinf(floats(rawTensor("e", dt(DataType::Float8E5M2), {1}, "\x7c"))[0]));
  EXPECT_EQ((std::vector<double>{1, 57344}),
            floats(tensorHeader("e", dt(DataType::Float8E5M2FNUZ), {2}).packed(5, {0x40, 0x7f})));
  EXPECT_EQ((std::vector<double>{1, 0.5}),
            floats(rawTensor("e", dt(DataType::Float8E8M0), {2}, rawOf<uint8_t>({127, 126}))));
  // FLOAT4E2M1: two per byte, low nibble first.
  EXPECT_EQ((std::vector<double>{1, 6, -0.5}),
            floats(rawTensor("q", dt(DataType::Float4E2M1), {3}, rawOf<uint8_t>({0x72, 0x09}))));
  // Integers are converted.
  EXPECT_EQ((std::vector<double>{-3, 4}),
            floats(rawTensor("i", dt(DataType::Int16), {2}, rawOf<int16_t>({-3, 4}))));

  Held complex(rawTensor("c", dt(DataType::Complex64), {1}, rawOf<float>({1, 2})));
  auto c = decodeFloats(complex.t, ModelView{}, 10);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ("tensor 'c': expected a real numeric tensor, not COMPLEX64", c.error().message);
  Held str(tensorHeader("s", dt(DataType::String), {1}).str(6, "x"));
  EXPECT_FALSE(decodeFloats(str.t, ModelView{}, 10).ok());
  EXPECT_FALSE(decodeInts(Held(rawTensor("f", 1, {1}, rawOf<float>({1}))).t, ModelView{}, 10).ok());
}

TEST(WireDecode, BudgetIsCheckedBeforeAnyAllocation) {
  // A tensor built by hand that claims 2^40 values with no data: refused by the budget.
  TensorView t;
  t.name = "huge";
  t.dataType = dt(DataType::Int64);
  t.dims = {int64_t(1) << 40};
  auto r = decodeInts(t, ModelView{}, 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ("tensor 'huge': 1099511627776 values, more than the budget of 1048576",
            r.error().message);
  // Within the budget but with too little data: a count mismatch, not an over-read.
  t.dims = {3};
  t.int64Count = 0;
  EXPECT_EQ("tensor 'huge': no values (expected 3 in int64_data for INT64[3])",
            decodeInts(t, ModelView{}, 10).error().message);
  Proto shortRaw = rawTensor("x", dt(DataType::Float), {2}, rawOf<float>({1, 2}));
  Held h(shortRaw);
  h.t.dims = {4}; // a view edited after reading: decoders re-check sizes
  EXPECT_EQ("tensor 'x': raw_data has 8 bytes, expected 16 for FLOAT[4]",
            decodeFloats(h.t, ModelView{}, 10).error().message);
  Held packed(tensorHeader("p", dt(DataType::Int64), {2}).packed(7, {1, 2}));
  packed.t.dims = {3};
  EXPECT_EQ("tensor 'p': int64_data has 2 values, expected 3 for INT64[3]",
            decodeInts(packed.t, ModelView{}, 10).error().message);
  packed.t.dims = {1};
  EXPECT_EQ("tensor 'p': int64_data has 2 values, expected 1 for INT64[1]",
            decodeInts(packed.t, ModelView{}, 10).error().message);
}

TEST(WireDecode, TensorBytes) {
  Held raw(rawTensor("r", dt(DataType::Float), {2}, rawOf<float>({1, 2})));
  auto b = tensorBytes(raw.t, ModelView{});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(raw.t.rawData.data(), b->data());
  Held packed(tensorHeader("p", dt(DataType::Float), {2}).packedFloats(4, {1, 2}));
  auto pb = tensorBytes(packed.t, ModelView{});
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(rawOf<float>({1, 2}), std::string(*pb));
  Held i64(tensorHeader("i", dt(DataType::Int64), {1}).packed(7, {5}));
  EXPECT_EQ("tensor 'i': values of INT64[1] are in int64_data, not raw bytes; decode them with "
            "decodeInts or decodeFloats",
            tensorBytes(i64.t, ModelView{}).error().message);
  Held empty(tensorHeader("e", dt(DataType::Int64), {0}));
  EXPECT_TRUE(tensorBytes(empty.t, ModelView{}).ok());
}

// ---- External data ----

class ExternalData : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::path(::testing::TempDir()) /
           ("sf_external_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "model" / "sub");
    writeFile(root / "model" / "weights.bin", rawOf<float>({1, 2, 3, 4, 5, 6}));
    writeFile(root / "model" / "sub" / "w.bin", rawOf<int64_t>({7, 8}));
    writeFile(root / "secret.bin", rawOf<float>({9, 9, 9, 9}));
  }
  void TearDown() override { fs::remove_all(root); }

  static void writeFile(const fs::path &path, const std::string &bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  }

  static Proto external(std::string_view name, int32_t type, std::initializer_list<int64_t> dims,
                        std::string_view location, int64_t offset = -1, int64_t length = -1) {
    Proto t = tensorHeader(name, type, dims);
    t.msg(13, Proto().str(1, "location").str(2, location));
    if (offset >= 0) t.msg(13, Proto().str(1, "offset").str(2, std::to_string(offset)));
    if (length >= 0) t.msg(13, Proto().str(1, "length").str(2, std::to_string(length)));
    return t.varint(14, 1);
  }

  // Writes a model with these initializers next to weights.bin and reads it.
  ModelView readWith(std::initializer_list<Proto> inits) {
    Proto g = Proto().msg(1, node("Identity", {"a"}, {"b"})).str(2, "g");
    for (const Proto &t : inits)
      g.msg(5, t);
    writeFile(root / "model" / "m.onnx", model(g).bytes);
    auto m = readModelFile((root / "model" / "m.onnx").string());
    EXPECT_TRUE(m.ok()) << m.error().message;
    return m.ok() ? *m : ModelView{};
  }

  std::string bytesError(const ModelView &m, size_t i) {
    auto r = tensorBytes(m.graph.initializers.at(i), m);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.error().message;
  }

  fs::path root;
};

TEST_F(ExternalData, OffsetLengthAndSubfolders) {
  ModelView m = readWith({external("a", dt(DataType::Float), {2}, "weights.bin", 8, 8),
                          external("b", dt(DataType::Float), {6}, "weights.bin"),
                          external("c", dt(DataType::Int64), {2}, "sub/w.bin", 0),
                          external("d", dt(DataType::Float), {2}, "./weights.bin", 16)});
  ASSERT_EQ(4u, m.graph.initializers.size());
  EXPECT_TRUE(m.graph.initializers[0].isExternal);
  EXPECT_EQ("weights.bin", m.graph.initializers[0].external.location);
  EXPECT_EQ(8, m.graph.initializers[0].external.offset);
  EXPECT_EQ(8, m.graph.initializers[0].external.length);
  EXPECT_EQ((std::vector<double>{3, 4}), *decodeFloats(m.graph.initializers[0], m, 10));
  EXPECT_EQ((std::vector<double>{1, 2, 3, 4, 5, 6}), *decodeFloats(m.graph.initializers[1], m, 10));
  EXPECT_EQ((std::vector<int64_t>{7, 8}), *decodeInts(m.graph.initializers[2], m, 10));
  EXPECT_EQ((std::vector<double>{5, 6}), *decodeFloats(m.graph.initializers[3], m, 10));
  // One mapping per file, shared by the tensors that use it.
  auto a = tensorBytes(m.graph.initializers[0], m);
  auto b = tensorBytes(m.graph.initializers[1], m);
  EXPECT_EQ(b->data() + 8, a->data());
}

TEST_F(ExternalData, RefusedLocations) {
  fs::create_symlink(root / "secret.bin", root / "model" / "escape.bin");
  fs::create_symlink(root / "model" / "weights.bin", root / "model" / "alias.bin");
  fs::create_directory_symlink(root, root / "model" / "up");
  ModelView m = readWith(
      {external("abs", 1, {4}, (root / "secret.bin").string()),
       external("dots", 1, {4}, "../secret.bin"), external("dots2", 1, {4}, "sub/../../secret.bin"),
       external("link", 1, {4}, "escape.bin"), external("dirlink", 1, {4}, "up/secret.bin"),
       external("inside", 1, {6}, "alias.bin"), external("missing", 1, {4}, "nope.bin"),
       external("dir", 1, {4}, "sub"), external("past", 1, {4}, "weights.bin", 16, 16),
       external("offset", 1, {1}, "weights.bin", 25),
       external("size", 1, {4}, "weights.bin", 0, 12)});
  EXPECT_NE(std::string::npos, bytesError(m, 0).find("is absolute"));
  EXPECT_NE(std::string::npos,
            bytesError(m, 1).find("'../secret.bin' leaves the model's folder ('..')"));
  EXPECT_NE(std::string::npos, bytesError(m, 2).find("leaves the model's folder ('..')"));
  EXPECT_NE(std::string::npos, bytesError(m, 3).find("outside the model's folder"))
      << bytesError(m, 3);
  EXPECT_NE(std::string::npos, bytesError(m, 4).find("outside the model's folder"));
  EXPECT_TRUE(tensorBytes(m.graph.initializers[5], m).ok()); // a symlink that stays inside
  EXPECT_NE(std::string::npos, bytesError(m, 6).find("'nope.bin' cannot be opened"));
  EXPECT_NE(std::string::npos, bytesError(m, 7).find("not a regular file"));
  EXPECT_NE(
      std::string::npos,
      bytesError(m, 8).find("tensor 'past': external data offset 16 + length 16 is past the end"));
  EXPECT_NE(std::string::npos, bytesError(m, 9).find("external data offset 25 is past the end"));
  EXPECT_EQ("tensor 'size': external data has 12 bytes, expected 16 for FLOAT[4]",
            bytesError(m, 10));
}

TEST_F(ExternalData, ModelsReadFromMemoryNeedADirectory) {
  Proto g = Proto().msg(1, node("Identity", {"a"}, {"b"})).str(2, "g");
  g.msg(5, external("w", 1, {2}, "weights.bin", 0, 8));
  Proto m = model(g);
  auto v = readModelBuffer(m.bytes);
  ASSERT_TRUE(v.ok()) << v.error().message;
  auto e = tensorBytes(v->graph.initializers[0], *v);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(std::string::npos, e.error().message.find("the model was read from memory"));
  v->directory = (root / "model").string();
  auto ok = decodeFloats(v->graph.initializers[0], *v, 10);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ((std::vector<double>{1, 2}), *ok);
}
