// The wire reader on models written byte by byte: every message kind, packed and unpacked
// repeated fields, unknown fields of every wire type, oneof semantics, limits, and the exact
// wording and location of errors.
#include "proto_writer.h"

#include "shapeflow/onnx/wire.h"

#include <gtest/gtest.h>

#include <deque>

using namespace sf::onnx;
using namespace sf::onnx::test;

namespace {

constexpr int32_t kFloat = 1, kInt64 = 7, kString = 8;

Proto simpleGraph() {
  Proto g;
  g.msg(1, node("Add", {"x", "w"}, {"y"}, "add0"));
  g.str(2, "main");
  g.msg(5, rawTensor("w", kFloat, {2, 2}, rawOf<float>({1, 2, 3, 4})));
  g.msg(11, valueInfo("x", tensorType(kFloat, {"N", 2})));
  g.msg(12, valueInfo("y", tensorType(kFloat, {"N", ""})));
  return g;
}

// A view points into its buffer: every buffer a test reads is kept until the binary exits.
std::string_view keep(const std::string &bytes) {
  static std::deque<std::string> kept;
  return kept.emplace_back(bytes);
}

ModelView readOk(const Proto &m, const ReadLimits &limits = {}) {
  auto r = readModelBuffer(keep(m.bytes), limits);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r).value() : ModelView{};
}

std::string readError(const Proto &m, const ReadLimits &limits = {}) {
  auto r = readModelBuffer(m.bytes, limits, "m.onnx");
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error().message;
}

bool inside(std::string_view view, std::string_view buffer) {
  return view.data() >= buffer.data() && view.data() + view.size() <= buffer.data() + buffer.size();
}

} // namespace

TEST(WireRead, MinimalModel) {
  Proto m = model(simpleGraph());
  m.str(4, "ai.test").varint(5, 3);
  m.msg(14, Proto().str(1, "author").str(2, "me"));
  ModelView v = readOk(m);
  EXPECT_EQ(8, v.irVersion);
  EXPECT_EQ("proto_writer", v.producerName);
  EXPECT_EQ("1.0", v.producerVersion);
  EXPECT_EQ("ai.test", v.domain);
  EXPECT_EQ(3, v.modelVersion);
  ASSERT_EQ(1u, v.metadata.size());
  EXPECT_EQ("author", v.metadata[0].key);
  EXPECT_EQ("me", v.metadata[0].value);
  ASSERT_EQ(1u, v.opsets.size());
  EXPECT_EQ("", v.opsets[0].domain);
  EXPECT_EQ(17, v.opsets[0].version);

  const GraphView &g = v.graph;
  EXPECT_EQ("main", g.name);
  ASSERT_EQ(1u, g.nodes.size());
  EXPECT_EQ("Add", g.nodes[0].opType);
  EXPECT_EQ("add0", g.nodes[0].name);
  EXPECT_EQ((std::vector<std::string_view>{"x", "w"}),
            std::vector<std::string_view>(g.nodes[0].inputs.begin(), g.nodes[0].inputs.end()));
  EXPECT_EQ((std::vector<std::string_view>{"y"}),
            std::vector<std::string_view>(g.nodes[0].outputs.begin(), g.nodes[0].outputs.end()));

  ASSERT_EQ(1u, g.initializers.size());
  const TensorView &w = g.initializers[0];
  EXPECT_EQ("w", w.name);
  EXPECT_EQ(kFloat, w.dataType);
  EXPECT_EQ((std::vector<int64_t>{2, 2}), w.dims);
  EXPECT_TRUE(w.hasRawData);
  EXPECT_EQ(16u, w.rawData.size());
  std::string_view buffer = keep(m.bytes);
  auto again = readModelBuffer(buffer);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(inside(again->graph.initializers[0].rawData, buffer)) << "a view, not a copy";
  EXPECT_TRUE(inside(again->graph.initializers[0].encoded, buffer));

  ASSERT_EQ(1u, g.inputs.size());
  const TypeView &x = g.inputs[0].type;
  EXPECT_EQ(TypeView::Tensor, x.kind);
  EXPECT_EQ(kFloat, x.elemType);
  EXPECT_TRUE(x.hasShape);
  ASSERT_EQ(2u, x.dims.size());
  EXPECT_FALSE(x.dims[0].hasValue);
  EXPECT_EQ("N", x.dims[0].param);
  EXPECT_TRUE(x.dims[1].hasValue);
  EXPECT_EQ(2, x.dims[1].value);
  const TypeView &y = g.outputs[0].type;
  EXPECT_FALSE(y.dims[1].hasValue); // neither value nor param: unknown
  EXPECT_TRUE(y.dims[1].param.empty());
}

TEST(WireRead, ReadModelFileKeepsMappingAndDirectory) {
  // readModelFile on a real file: directory is absolute, views stay valid after the call.
  std::string path = ::testing::TempDir() + "/wire_read_minimal.onnx";
  Proto m = model(simpleGraph());
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_TRUE(f);
  std::fwrite(m.bytes.data(), 1, m.bytes.size(), f);
  std::fclose(f);
  auto v = readModelFile(path);
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_TRUE(v->storage);
  EXPECT_EQ('/', v->directory.front());
  ModelView copy = *v;
  v = sf::makeError("drop the original");
  EXPECT_EQ("Add", copy.graph.nodes[0].opType); // the storage is shared by copies
  EXPECT_EQ(16u, copy.graph.initializers[0].rawData.size());
}

TEST(WireRead, MissingFileAndDirectory) {
  auto v = readModelFile("/nonexistent/dir/model.onnx");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(std::string::npos, v.error().message.find("/nonexistent/dir/model.onnx: cannot open"));
  auto d = readModelFile(::testing::TempDir());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(std::string::npos, d.error().message.find("not a regular file"));
}

TEST(WireRead, PackedAndUnpackedRepeatedFieldsAgree) {
  auto withAttrs = [](bool packed) {
    Proto floats;
    floats.str(1, "scales").varint(20, 6);
    if (packed)
      floats.packedFloats(7, {0.5f, 2.0f});
    else
      floats.f32(7, 0.5f).f32(7, 2.0f);
    Proto t = Proto().varint(2, kInt64).str(8, "shape");
    if (packed)
      t.packed(1, {2}).packed(7, {-1, 4});
    else
      t.sint(1, 2).sint(7, -1).sint(7, 4);
    Proto g;
    g.msg(1, node("Resize", {"x"}, {"y"}, "r",
                  {attrInts("pads", {1, -2, 300000}, packed), floats, attrTensor("t", t)}));
    g.str(2, "g");
    return model(g);
  };
  for (bool packed : {false, true}) {
    SCOPED_TRACE(packed ? "packed" : "unpacked");
    ModelView v = readOk(withAttrs(packed));
    const auto &attrs = v.graph.nodes[0].attributes;
    ASSERT_EQ(3u, attrs.size());
    EXPECT_EQ((std::vector<int64_t>{1, -2, 300000}), attrs[0].ints);
    EXPECT_EQ(static_cast<int32_t>(AttributeType::Ints), attrs[0].type);
    EXPECT_EQ((std::vector<float>{0.5f, 2.0f}), attrs[1].extra().floats);
    ASSERT_TRUE(attrs[2].extra().t);
    EXPECT_EQ((std::vector<int64_t>{2}), attrs[2].extra().t->dims);
    EXPECT_EQ(2, attrs[2].extra().t->int64Count);
    EXPECT_EQ(!packed, attrs[2].extra().t->scattered);
    auto values = decodeInts(*attrs[2].extra().t, v, 16);
    ASSERT_TRUE(values.ok()) << values.error().message;
    EXPECT_EQ((std::vector<int64_t>{-1, 4}), *values);
  }
}

TEST(WireRead, RepeatedFieldSplitOverPackedAndUnpackedRuns) {
  // A writer may split one repeated field over several packed runs and single values.
  Proto a;
  a.str(1, "ints").varint(20, 7).packed(8, {1, 2}).sint(8, 3).packed(8, {4});
  Proto t = Proto().sint(1, 5).varint(2, kFloat).str(8, "f");
  t.packedFloats(4, {1, 2}).f32(4, 3).packedFloats(4, {4, 5});
  Proto g;
  g.msg(1, node("Op", {}, {"y"}, "n", {a, attrTensor("value", t)})).str(2, "g");
  ModelView v = readOk(model(g));
  EXPECT_EQ((std::vector<int64_t>{1, 2, 3, 4}), v.graph.nodes[0].attributes[0].ints);
  const TensorView &f = *v.graph.nodes[0].attributes[1].extra().t;
  EXPECT_TRUE(f.scattered);
  EXPECT_EQ(5, f.floatCount);
  EXPECT_TRUE(f.floatData.empty());
  auto values = decodeFloats(f, v, 16);
  ASSERT_TRUE(values.ok()) << values.error().message;
  EXPECT_EQ((std::vector<double>{1, 2, 3, 4, 5}), *values);
  EXPECT_FALSE(tensorBytes(f, v).ok()); // scattered floats are not one raw run
}

TEST(WireRead, UnknownFieldsOfEveryWireTypeAreSkipped) {
  Proto junk;
  junk.varint(1000, 1234567).fixed64(1001, 42).fixed32(1002, 7).str(1003, "skip me");
  junk.tag(1004, 3).varint(1, 5).tag(1005, 3).str(2, "nested").tag(1005, 4).tag(1004, 4);
  junk.varint(536870911, 1); // the largest field number

  Proto dim = Proto().sint(1, 3).append(junk);
  Proto shape = Proto().msg(1, dim).append(junk);
  Proto tt = Proto().varint(1, kFloat).msg(2, shape).append(junk);
  Proto type = Proto().msg(1, tt).append(junk);
  Proto attr = attrInt("axis", -1).append(junk);
  Proto n = node("Softmax", {"x"}, {"y"}, "sm", {attr}).append(junk);
  Proto init = rawTensor("w", kFloat, {1}, rawOf<float>({1})).append(junk);
  Proto opset = Proto().str(1, "").sint(2, 13).append(junk);
  Proto g;
  g.append(junk).msg(1, n).str(2, "g").msg(5, init).msg(
      11, Proto().str(1, "x").msg(2, type).append(junk));
  g.append(junk);
  Proto m;
  m.append(junk).varint(1, 8).msg(8, opset).msg(7, g).append(junk);

  ModelView v = readOk(m);
  EXPECT_EQ(8, v.irVersion);
  EXPECT_EQ(13, v.opsets[0].version);
  ASSERT_EQ(1u, v.graph.nodes.size());
  EXPECT_EQ("Softmax", v.graph.nodes[0].opType);
  EXPECT_EQ(-1, v.graph.nodes[0].attributes[0].i);
  EXPECT_EQ(1u, v.graph.initializers.size());
  EXPECT_EQ(3, v.graph.inputs[0].type.dims[0].value);
}

TEST(WireRead, KnownButUnusedFieldsAreSkipped) {
  // doc_string, metadata_props, quantization_annotation, training_info, denotation...
  Proto n = node("Relu", {"x"}, {"y"}, "r").str(6, "doc").msg(9, Proto().str(1, "k"));
  Proto g;
  g.msg(1, n).str(2, "g").str(10, "graph doc").msg(14, Proto().str(1, "x")).msg(16, Proto());
  Proto m = model(g);
  m.str(6, "model doc").msg(20, Proto().msg(1, g));
  ModelView v = readOk(m);
  EXPECT_EQ(1u, v.graph.nodes.size());
}

TEST(WireRead, AllTypeKinds) {
  Proto seq = Proto().msg(4, Proto().msg(1, tensorType(kFloat, {"N", 3})));
  Proto opt = Proto().msg(9, Proto().msg(1, seq));
  Proto map = Proto().msg(5, Proto().varint(1, kInt64).msg(2, tensorType(kFloat, {2})));
  Proto sparse =
      Proto().msg(8, Proto().varint(1, kFloat).msg(2, Proto().msg(1, Proto().sint(1, 10))));
  Proto opaque = Proto().msg(7, Proto().str(1, "dom").str(2, "name"));
  Proto noShape = tensorType(kFloat, {}, false);
  Proto scalar = tensorType(kInt64, {});
  Proto empty; // a TypeProto with nothing set
  Proto g;
  g.msg(1, node("Identity", {"a"}, {"b"})).str(2, "g");
  int i = 0;
  for (const Proto *t : {&seq, &opt, &map, &sparse, &opaque, &noShape, &scalar, &empty})
    g.msg(11, valueInfo("in" + std::to_string(i++), *t));
  g.msg(11, Proto().str(1, "untyped"));
  ModelView v = readOk(model(g));
  const auto &in = v.graph.inputs;
  ASSERT_EQ(9u, in.size());
  EXPECT_EQ(TypeView::Sequence, in[0].type.kind);
  ASSERT_TRUE(in[0].type.inner);
  EXPECT_EQ(TypeView::Tensor, in[0].type.inner->kind);
  EXPECT_EQ("N", in[0].type.inner->dims[0].param);
  EXPECT_EQ(TypeView::Optional, in[1].type.kind);
  EXPECT_EQ(TypeView::Sequence, in[1].type.inner->kind);
  EXPECT_EQ(TypeView::Tensor, in[1].type.inner->inner->kind);
  EXPECT_EQ(TypeView::Map, in[2].type.kind);
  EXPECT_EQ(kInt64, in[2].type.keyType);
  EXPECT_EQ(kFloat, in[2].type.inner->elemType);
  EXPECT_EQ(TypeView::SparseTensor, in[3].type.kind);
  EXPECT_EQ(10, in[3].type.dims[0].value);
  EXPECT_EQ(TypeView::Opaque, in[4].type.kind);
  EXPECT_EQ(TypeView::Tensor, in[5].type.kind);
  EXPECT_FALSE(in[5].type.hasShape);
  EXPECT_TRUE(in[6].type.hasShape);
  EXPECT_TRUE(in[6].type.dims.empty());
  EXPECT_EQ(TypeView::Unknown, in[7].type.kind);
  EXPECT_TRUE(in[7].hasType);
  EXPECT_FALSE(in[8].hasType);
}

TEST(WireRead, DimOneofLastMemberWins) {
  Proto shape;
  shape.msg(1, Proto().sint(1, 4).str(2, "S")); // param after value: a param
  shape.msg(1, Proto().str(2, "S").sint(1, 4)); // value after param: a value
  shape.msg(1, Proto().sint(1, -1));            // negative dim_value is kept as is
  Proto type = Proto().msg(1, Proto().varint(1, kFloat).msg(2, shape));
  Proto g;
  g.msg(1, node("Identity", {"x"}, {"y"})).str(2, "g").msg(11, valueInfo("x", type));
  ModelView v = readOk(model(g));
  const auto &dims = v.graph.inputs[0].type.dims;
  EXPECT_FALSE(dims[0].hasValue);
  EXPECT_EQ("S", dims[0].param);
  EXPECT_TRUE(dims[1].hasValue);
  EXPECT_EQ(4, dims[1].value);
  EXPECT_TRUE(dims[1].param.empty());
  EXPECT_EQ(-1, dims[2].value);
}

TEST(WireRead, SubgraphsInAttributes) {
  Proto thenG = Proto().msg(1, node("Identity", {"x"}, {"t"}, "inner")).str(2, "then");
  Proto elseG = Proto().msg(1, node("Neg", {"x"}, {"e"})).str(2, "else");
  Proto graphs = Proto().str(1, "branches").varint(20, 10).msg(11, thenG).msg(11, elseG);
  Proto g;
  g.msg(1, node("If", {"c"}, {"y"}, "if0",
                {attrGraph("then_branch", thenG), attrGraph("else_branch", elseG), graphs}));
  g.str(2, "main");
  ModelView v = readOk(model(g));
  const auto &attrs = v.graph.nodes[0].attributes;
  ASSERT_TRUE(attrs[0].extra().g);
  EXPECT_EQ("then", attrs[0].extra().g->name);
  EXPECT_EQ("inner", attrs[0].extra().g->nodes[0].name);
  EXPECT_EQ("Neg", attrs[1].extra().g->nodes[0].opType);
  ASSERT_EQ(2u, attrs[2].extra().graphs.size());
  EXPECT_EQ("else", attrs[2].extra().graphs[1]->name);
}

TEST(WireRead, AttributeKinds) {
  Proto sparse = Proto()
                     .msg(1, rawTensor("v", kFloat, {2}, rawOf<float>({1, 2})))
                     .msg(2, rawTensor("i", kInt64, {2}, rawOf<int64_t>({0, 3})))
                     .packed(3, {2, 2});
  Proto n = node(
      "Op", {}, {"y"}, "n",
      {attrFloat("alpha", 0.25f), attrInt("axis", -3), attrString("mode", "linear"),
       Proto().str(1, "names").varint(20, 8).str(9, "a").str(9, "").str(9, "c"),
       Proto().str(1, "ts").varint(20, 9).msg(10, rawTensor("t0", kInt64, {}, rawOf<int64_t>({5}))),
       Proto().str(1, "sp").varint(20, 11).msg(22, sparse),
       Proto().str(1, "sps").varint(20, 12).msg(23, sparse).msg(23, sparse),
       Proto().str(1, "tp").varint(20, 13).msg(14, tensorType(kFloat, {1})),
       Proto().str(1, "tps").varint(20, 14).msg(15, tensorType(kInt64, {})),
       Proto().str(1, "ref").varint(20, 2).str(21, "outer_axis")});
  Proto g = Proto().msg(1, n).str(2, "g");
  ModelView v = readOk(model(g));
  const auto &a = v.graph.nodes[0].attributes;
  ASSERT_EQ(10u, a.size());
  EXPECT_EQ(0.25f, a[0].f);
  EXPECT_EQ(-3, a[1].i);
  EXPECT_EQ("linear", a[2].s);
  EXPECT_EQ((std::vector<std::string_view>{"a", "", "c"}), a[3].extra().strings);
  ASSERT_EQ(1u, a[4].extra().tensors.size());
  EXPECT_EQ("t0", a[4].extra().tensors[0].name);
  ASSERT_TRUE(a[5].extra().sparseTensor);
  EXPECT_EQ((std::vector<int64_t>{2, 2}), a[5].extra().sparseTensor->dims);
  EXPECT_EQ("i", a[5].extra().sparseTensor->indices.name);
  EXPECT_EQ(2u, a[6].extra().sparseTensors.size());
  ASSERT_TRUE(a[7].extra().tp);
  EXPECT_EQ(kFloat, a[7].extra().tp->elemType);
  ASSERT_EQ(1u, a[8].extra().typeProtos.size());
  EXPECT_EQ(kInt64, a[8].extra().typeProtos[0].elemType);
  EXPECT_EQ("outer_axis", a[9].refAttrName);
}

TEST(WireRead, AttributeTypeInferredWhenMissing) {
  Proto n = node("Op", {}, {"y"}, "n",
                 {Proto().str(1, "i").sint(3, 4), Proto().str(1, "fs").packedFloats(7, {1}),
                  Proto().str(1, "g").msg(6, Proto().str(2, "sub")),
                  Proto().str(1, "both").sint(3, 1).f32(2, 1), Proto().str(1, "none")});
  ModelView v = readOk(model(Proto().msg(1, n).str(2, "g")));
  const auto &a = v.graph.nodes[0].attributes;
  EXPECT_EQ(static_cast<int32_t>(AttributeType::Int), a[0].type);
  EXPECT_EQ(static_cast<int32_t>(AttributeType::Floats), a[1].type);
  EXPECT_EQ(static_cast<int32_t>(AttributeType::Graph), a[2].type);
  EXPECT_EQ(0, a[3].type); // ambiguous: left to the importer
  EXPECT_EQ(0, a[4].type);
}

TEST(WireRead, LocalFunctions) {
  Proto fn;
  fn.str(1, "AddScaled").str(10, "custom").str(13, "v2");
  fn.str(4, "a").str(4, "b").str(5, "c").str(6, "alpha");
  fn.msg(11, attrFloat("beta", 1.5f)); // attribute with a default (IR 9+)
  fn.msg(7, node("Add", {"a", "b"}, {"s"}));
  fn.msg(7,
         node("Mul", {"s", "s"}, {"c"}, "", {Proto().str(1, "k").varint(20, 1).str(21, "alpha")}));
  fn.msg(9, Proto().str(1, "").sint(2, 17));
  fn.msg(12, valueInfo("s", tensorType(kFloat, {"N"})));
  Proto g;
  g.msg(1, node("AddScaled", {"x", "y"}, {"z"}, "call").str(7, "custom").str(8, "v2"));
  g.str(2, "main");
  Proto m = model(g);
  m.msg(25, fn);
  ModelView v = readOk(m);
  ASSERT_EQ(1u, v.functions.size());
  const FunctionView &f = v.functions[0];
  EXPECT_EQ("AddScaled", f.name);
  EXPECT_EQ("custom", f.domain);
  EXPECT_EQ("v2", f.overload);
  EXPECT_EQ((std::vector<std::string_view>{"a", "b"}), f.inputs);
  EXPECT_EQ((std::vector<std::string_view>{"c"}), f.outputs);
  EXPECT_EQ((std::vector<std::string_view>{"alpha"}), f.attributes);
  ASSERT_EQ(1u, f.attributeDefaults.size());
  EXPECT_EQ(1.5f, f.attributeDefaults[0].f);
  ASSERT_EQ(2u, f.nodes.size());
  EXPECT_EQ("alpha", f.nodes[1].attributes[0].refAttrName);
  EXPECT_EQ(17, f.opsets[0].version);
  EXPECT_EQ("s", f.valueInfo[0].name);
  EXPECT_EQ("custom", v.graph.nodes[0].domain);
  EXPECT_EQ("v2", v.graph.nodes[0].overload);
}

TEST(WireRead, SparseInitializers) {
  Proto sparse = Proto()
                     .msg(1, rawTensor("sp", kFloat, {2}, rawOf<float>({1, 2})))
                     .msg(2, rawTensor("", kInt64, {2}, rawOf<int64_t>({0, 5})))
                     .sint(3, 2)
                     .sint(3, 3);
  Proto g = simpleGraph().msg(15, sparse);
  ModelView v = readOk(model(g));
  ASSERT_EQ(1u, v.graph.sparseInitializers.size());
  EXPECT_EQ("sp", v.graph.sparseInitializers[0].values.name);
  EXPECT_EQ((std::vector<int64_t>{2, 3}), v.graph.sparseInitializers[0].dims);

  // Sparse and dense initializers share one namespace.
  Proto dup = Proto()
                  .msg(1, rawTensor("w", kFloat, {1}, rawOf<float>({1})))
                  .msg(2, rawTensor("", kInt64, {1}, rawOf<int64_t>({0})))
                  .sint(3, 4);
  EXPECT_EQ("m.onnx: graph 'main': duplicate initializer name 'w' (initializer 0 and "
            "sparse_initializer 0) (at byte 30)",
            readError(model(simpleGraph().msg(15, dup))));
}

TEST(WireRead, ScalarAndEmptyTensors) {
  Proto g = Proto().msg(1, node("Identity", {"s"}, {"y"})).str(2, "g");
  g.msg(5, rawTensor("s", kInt64, {}, rawOf<int64_t>({7})));
  g.msg(5, rawTensor("e", kFloat, {0, 3}, ""));
  g.msg(5, tensorHeader("nodata", kFloat, {0}));
  g.msg(5, tensorHeader("str", kString, {2}).str(6, "ab").str(6, ""));
  ModelView v = readOk(model(g));
  const auto &in = v.graph.initializers;
  EXPECT_TRUE(in[0].dims.empty());
  EXPECT_EQ(1, *elementCount(in[0]));
  EXPECT_TRUE(in[1].hasRawData);
  EXPECT_TRUE(in[1].rawData.empty());
  EXPECT_EQ(0, *elementCount(in[1]));
  EXPECT_FALSE(in[2].hasRawData);
  EXPECT_EQ((std::vector<std::string_view>{"ab", ""}), in[3].stringData);
}

TEST(WireRead, ReadTensorBuffer) {
  Proto t = rawTensor("x", kFloat, {3}, rawOf<float>({1, 2, 3}));
  auto r = readTensorBuffer(t.bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ("x", r->name);
  auto values = decodeFloats(*r, ModelView{}, 3);
  ASSERT_TRUE(values.ok());
  EXPECT_EQ((std::vector<double>{1, 2, 3}), *values);

  Proto bad = rawTensor("x", kFloat, {3}, rawOf<float>({1, 2}));
  auto e = readTensorBuffer(bad.bytes, "input_0.pb");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ("input_0.pb: tensor 'x': raw_data has 8 bytes, expected 12 for FLOAT[3] (at byte 0)",
            e.error().message);
}

// ---- Errors: exact wording and location ----

TEST(WireReadErrors, DefaultLabelAndPath) {
  Proto g = simpleGraph();
  g.msg(5, rawTensor("b", kFloat, {3}, rawOf<float>({1})));
  auto r = readModelBuffer(model(g).bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(0u, r.error().message.find("<memory>: graph 'main': initializer 'b': raw_data has 4 "
                                       "bytes, expected 12 for FLOAT[3]"))
      << r.error().message;
}

TEST(WireReadErrors, NodeIndexNameAndOpInPath) {
  Proto g;
  for (int i = 0; i < 12; ++i)
    g.msg(1, node("Relu", {"x"}, {"x"}, "r" + std::to_string(i)));
  g.msg(1, node("Conv", {"x"}, {"y"}, "conv1",
                {attrInts("pads", {1, 1}).raw(std::string("\x42\x01\x80", 3))}));
  g.str(2, "main");
  std::string e = readError(model(g));
  EXPECT_NE(
      std::string::npos,
      e.find("m.onnx: graph 'main': node 12 'conv1' (Conv): attribute 'pads': truncated packed "
             "field 'ints' (8)"))
      << e;
}

TEST(WireReadErrors, WrongWireTypesForKnownFields) {
  auto attrError = [](const Proto &attr) {
    Proto g = Proto().msg(1, node("Op", {}, {"y"}, "n", {attr})).str(2, "g");
    return readError(model(g));
  };
  EXPECT_NE(std::string::npos,
            attrError(Proto().str(1, "a").str(2, "xx"))
                .find("field 'f' (2) has wire type 2 (length-delimited), expected fixed32"));
  EXPECT_NE(std::string::npos,
            attrError(Proto().str(1, "a").fixed64(3, 1))
                .find("field 'i' (3) has wire type 1 (fixed64), expected varint"));
  EXPECT_NE(std::string::npos,
            attrError(Proto().str(1, "a").fixed32(8, 1))
                .find("field 'ints' (8) has wire type 5 (fixed32), expected varint or packed"));
  EXPECT_NE(
      std::string::npos,
      attrError(Proto().str(1, "a").varint(6, 1))
          .find("field 'g' (6) has wire type 0 (varint), expected length-delimited (a message)"));
  EXPECT_NE(std::string::npos,
            attrError(Proto().varint(1, 1)).find("field 'name' (1) has wire type 0"));
}

TEST(WireReadErrors, NegativeDimsAndBadTypesInTensors) {
  auto initError = [](const Proto &t) { return readError(model(simpleGraph().msg(5, t))); };
  EXPECT_NE(std::string::npos, initError(rawTensor("n", kFloat, {-1}, ""))
                                   .find("initializer 'n': negative dim -1 in dims [-1]"));
  EXPECT_NE(std::string::npos,
            initError(rawTensor("n", 27, {1}, "x")).find("unknown data_type 27"));
  EXPECT_NE(std::string::npos,
            initError(rawTensor("n", -5, {1}, "x")).find("unknown data_type -5"));
  EXPECT_NE(std::string::npos, initError(tensorHeader("n", kFloat, {2}).packed(5, {1, 2}))
                                   .find("int32_data cannot hold values of a FLOAT tensor"));
  EXPECT_NE(std::string::npos, initError(tensorHeader("n", kString, {2}).str(6, "a"))
                                   .find("string_data has 1 values, expected 2 for STRING[2]"));
  // The newest types are known: INT2 packs 4 values per byte.
  auto ok = readModelBuffer(model(simpleGraph().msg(5, rawTensor("q", 26, {5}, "ab"))).bytes);
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

TEST(WireReadErrors, LimitsOnNodesDepthAndLists) {
  Proto g;
  for (int i = 0; i < 5; ++i)
    g.msg(1, node("Relu", {"x"}, {"x"}));
  g.str(2, "main");
  ReadLimits few;
  few.maxNodes = 4;
  EXPECT_NE(std::string::npos, readError(model(g), few).find("graph 'main': more than 4 nodes"));

  // maxGraphDepth subgraph levels are fine, one more is not.
  auto nested = [](int depth) {
    Proto inner = Proto().msg(1, node("Identity", {"x"}, {"y"})).str(2, "leaf");
    for (int i = 0; i < depth; ++i)
      inner = Proto()
                  .msg(1, node("If", {"c"}, {"y"}, "", {attrGraph("then_branch", inner)}))
                  .str(2, "g");
    return model(inner);
  };
  ReadLimits shallow;
  shallow.maxGraphDepth = 4;
  readOk(nested(3), shallow); // main graph + 3 subgraph levels = 4 graphs
  EXPECT_NE(std::string::npos,
            readError(nested(4), shallow).find("subgraphs nested deeper than 4 levels"));
  readOk(nested(60)); // the default allows 64

  ReadLimits shortLists;
  shortLists.maxListElements = 3;
  Proto lg =
      Proto().msg(1, node("Op", {}, {"y"}, "", {attrInts("a", {1, 2, 3, 4}, true)})).str(2, "g");
  EXPECT_NE(std::string::npos,
            readError(model(lg), shortLists).find("more than 3 values in 'ints'"));
}

TEST(WireReadErrors, NothingAfterTheFirstError) {
  // Two defects: only the first (in file order) is reported.
  Proto g = simpleGraph();
  g.msg(5, rawTensor("a", kFloat, {2}, ""));
  g.msg(5, rawTensor("b", 99, {2}, ""));
  std::string e = readError(model(g));
  EXPECT_NE(std::string::npos, e.find("initializer 'a'"));
  EXPECT_EQ(std::string::npos, e.find("initializer 'b'"));
}

TEST(WireReadErrors, NamesInPathsAreSanitized) {
  Proto g =
      Proto()
          .msg(1, node("Relu", {"x"}, {"y"}, std::string("a\nb\0c", 5) + std::string(200, 'z'),
                       {Proto().str(1, "bad").varint(20, 77)}))
          .str(2, "g");
  std::string e = readError(model(g));
  EXPECT_NE(std::string::npos, e.find("node 0 'a?b?czzz")) << e;
  EXPECT_NE(std::string::npos, e.find("...' (Relu)")) << e;
  EXPECT_LT(e.size(), 300u);
}

TEST(WireReadErrors, HugeBufferIsRefusedBeforeParsing) {
  // Only the size is looked at: a view of 2^31 bytes over a small string is never read.
  std::string small = "x";
  std::string_view huge(small.data(), size_t(1) << 31);
  auto r = readModelBuffer(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string::npos, r.error().message.find("more than the 2 GiB"));
}
