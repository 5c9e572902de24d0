// Field-by-field comparison of the wire reader's views with libonnx's generated classes.
#include "crosscheck.h"

#include "test_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sf::onnx::test {

namespace pb = ::onnx;

namespace {

template <class Repeated> std::vector<std::string> strings(const Repeated &r) {
  return std::vector<std::string>(r.begin(), r.end());
}
std::vector<std::string> strings(const std::vector<std::string_view> &v) {
  return std::vector<std::string>(v.begin(), v.end());
}

// Reference decoding from the generated fields, written independently of the reader's decoders.
bool referenceValues(const pb::TensorProto &t, std::vector<double> &out) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  if (n > int64_t(kCrossCheckDecodeLimit)) return false;
  auto fromRaw = [&](auto zero) {
    using T = decltype(zero);
    const std::string &raw = t.raw_data();
    if (raw.size() != size_t(n) * sizeof(T)) return false;
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
      out.push_back(static_cast<double>(v));
    }
    return true;
  };
  bool raw = t.has_raw_data();
  switch (t.data_type()) {
  case pb::TensorProto::FLOAT:
    if (raw) return fromRaw(float());
    for (float v : t.float_data())
      out.push_back(v);
    return true;
  case pb::TensorProto::DOUBLE:
    if (raw) return fromRaw(double());
    for (double v : t.double_data())
      out.push_back(v);
    return true;
  case pb::TensorProto::INT64:
    if (raw) return fromRaw(int64_t());
    for (int64_t v : t.int64_data())
      out.push_back(static_cast<double>(v));
    return true;
  case pb::TensorProto::INT32:
    if (raw) return fromRaw(int32_t());
    for (int32_t v : t.int32_data())
      out.push_back(v);
    return true;
  case pb::TensorProto::INT8:
    if (raw) return fromRaw(int8_t());
    for (int32_t v : t.int32_data())
      out.push_back(static_cast<int8_t>(v));
    return true;
  case pb::TensorProto::UINT8:
    if (raw) return fromRaw(uint8_t());
    for (int32_t v : t.int32_data())
      out.push_back(static_cast<uint8_t>(v));
    return true;
  case pb::TensorProto::INT16:
    if (raw) return fromRaw(int16_t());
    for (int32_t v : t.int32_data())
      out.push_back(static_cast<int16_t>(v));
    return true;
  case pb::TensorProto::UINT16:
    if (raw) return fromRaw(uint16_t());
    for (int32_t v : t.int32_data())
      out.push_back(static_cast<uint16_t>(v));
    return true;
  case pb::TensorProto::BOOL:
    if (raw) {
      for (char c : t.raw_data())
        out.push_back(c != 0);
      return true;
    }
    for (int32_t v : t.int32_data())
      out.push_back(v != 0);
    return true;
  case pb::TensorProto::UINT32:
    if (raw) return fromRaw(uint32_t());
    for (uint64_t v : t.uint64_data())
      out.push_back(static_cast<uint32_t>(v));
    return true;
  case pb::TensorProto::UINT64:
    if (raw) return fromRaw(uint64_t());
    for (uint64_t v : t.uint64_data())
      out.push_back(static_cast<double>(v));
    return true;
  default:
    return false;
  }
}

bool sameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void compareGraph(const pb::GraphProto &e, const GraphView &a, const ModelView &model,
                  CrossCheckStats &stats);

void compareValueInfo(const pb::ValueInfoProto &e, const ValueInfoView &a, CrossCheckStats &stats) {
  EXPECT_EQ(e.name(), a.name);
  EXPECT_EQ(e.has_type(), a.hasType) << e.name();
  if (e.has_type()) compareType(e.type(), a.type);
  ++stats.valueInfos;
}

void compareSparse(const pb::SparseTensorProto &e, const SparseTensorView &a,
                   const ModelView &model, CrossCheckStats &stats) {
  compareTensor(e.values(), a.values, model, stats);
  compareTensor(e.indices(), a.indices, model, stats);
  EXPECT_EQ(std::vector<int64_t>(e.dims().begin(), e.dims().end()), a.dims);
}

void compareAttribute(const pb::AttributeProto &e, const AttributeView &a, const ModelView &model,
                      CrossCheckStats &stats) {
  SCOPED_TRACE("attribute '" + e.name() + "'");
  ++stats.attributes;
  EXPECT_EQ(e.name(), a.name);
  if (e.type() != 0) { EXPECT_EQ(int(e.type()), a.type); }
  EXPECT_EQ(e.ref_attr_name(), a.refAttrName);
  if (e.has_f()) { EXPECT_EQ(e.f(), a.f); }
  EXPECT_EQ(e.i(), a.i);
  EXPECT_EQ(e.s(), a.s);
  EXPECT_EQ(std::vector<float>(e.floats().begin(), e.floats().end()), a.extra().floats);
  EXPECT_EQ(std::vector<int64_t>(e.ints().begin(), e.ints().end()), a.ints);
  EXPECT_EQ(strings(e.strings()), strings(a.extra().strings));
  EXPECT_EQ(e.has_t(), a.extra().t != nullptr);
  if (e.has_t() && a.extra().t) compareTensor(e.t(), *a.extra().t, model, stats);
  EXPECT_EQ(e.has_g(), a.extra().g != nullptr);
  if (e.has_g() && a.extra().g) compareGraph(e.g(), *a.extra().g, model, stats);
  EXPECT_EQ(e.has_sparse_tensor(), a.extra().sparseTensor != nullptr);
  if (e.has_sparse_tensor() && a.extra().sparseTensor)
    compareSparse(e.sparse_tensor(), *a.extra().sparseTensor, model, stats);
  EXPECT_EQ(e.has_tp(), a.extra().tp != nullptr);
  if (e.has_tp() && a.extra().tp) compareType(e.tp(), *a.extra().tp);
  ASSERT_EQ(size_t(e.tensors_size()), a.extra().tensors.size());
  for (int i = 0; i < e.tensors_size(); ++i)
    compareTensor(e.tensors(i), a.extra().tensors[i], model, stats);
  ASSERT_EQ(size_t(e.graphs_size()), a.extra().graphs.size());
  for (int i = 0; i < e.graphs_size(); ++i)
    compareGraph(e.graphs(i), *a.extra().graphs[i], model, stats);
  ASSERT_EQ(size_t(e.sparse_tensors_size()), a.extra().sparseTensors.size());
  for (int i = 0; i < e.sparse_tensors_size(); ++i)
    compareSparse(e.sparse_tensors(i), a.extra().sparseTensors[i], model, stats);
  ASSERT_EQ(size_t(e.type_protos_size()), a.extra().typeProtos.size());
  for (int i = 0; i < e.type_protos_size(); ++i)
    compareType(e.type_protos(i), a.extra().typeProtos[i]);
}

void compareNode(const pb::NodeProto &e, const NodeView &a, const ModelView &model,
                 CrossCheckStats &stats) {
  SCOPED_TRACE("node '" + e.name() + "' (" + e.op_type() + ")");
  ++stats.nodes;
  EXPECT_EQ(e.name(), a.name);
  EXPECT_EQ(e.op_type(), a.opType);
  EXPECT_EQ(e.domain(), a.domain);
  EXPECT_EQ(strings(e.input()), strings(a.inputs));
  EXPECT_EQ(strings(e.output()), strings(a.outputs));
  ASSERT_EQ(size_t(e.attribute_size()), a.attributes.size());
  for (int i = 0; i < e.attribute_size(); ++i)
    compareAttribute(e.attribute(i), a.attributes[i], model, stats);
}

void compareGraph(const pb::GraphProto &e, const GraphView &a, const ModelView &model,
                  CrossCheckStats &stats) {
  SCOPED_TRACE("graph '" + e.name() + "'");
  ++stats.graphs;
  EXPECT_EQ(e.name(), a.name);
  ASSERT_EQ(size_t(e.node_size()), a.nodes.size());
  for (int i = 0; i < e.node_size(); ++i)
    compareNode(e.node(i), a.nodes[i], model, stats);
  ASSERT_EQ(size_t(e.initializer_size()), a.initializers.size());
  for (int i = 0; i < e.initializer_size(); ++i)
    compareTensor(e.initializer(i), a.initializers[i], model, stats);
  ASSERT_EQ(size_t(e.sparse_initializer_size()), a.sparseInitializers.size());
  for (int i = 0; i < e.sparse_initializer_size(); ++i)
    compareSparse(e.sparse_initializer(i), a.sparseInitializers[i], model, stats);
  ASSERT_EQ(size_t(e.input_size()), a.inputs.size());
  for (int i = 0; i < e.input_size(); ++i)
    compareValueInfo(e.input(i), a.inputs[i], stats);
  ASSERT_EQ(size_t(e.output_size()), a.outputs.size());
  for (int i = 0; i < e.output_size(); ++i)
    compareValueInfo(e.output(i), a.outputs[i], stats);
  ASSERT_EQ(size_t(e.value_info_size()), a.valueInfo.size());
  for (int i = 0; i < e.value_info_size(); ++i)
    compareValueInfo(e.value_info(i), a.valueInfo[i], stats);
}

} // namespace

void compareType(const pb::TypeProto &e, const TypeView &a) {
  auto compareShape = [&](int32_t elemType, bool hasShape, const pb::TensorShapeProto &shape) {
    EXPECT_EQ(elemType, a.elemType);
    EXPECT_EQ(hasShape, a.hasShape);
    ASSERT_EQ(size_t(shape.dim_size()), a.dims.size());
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto &d = shape.dim(i);
      EXPECT_EQ(d.has_dim_value(), a.dims[i].hasValue) << "dim " << i;
      if (d.has_dim_value()) { EXPECT_EQ(d.dim_value(), a.dims[i].value) << "dim " << i; }
      EXPECT_EQ(d.dim_param(), a.dims[i].param) << "dim " << i;
    }
  };
  switch (e.value_case()) {
  case pb::TypeProto::kTensorType:
    ASSERT_EQ(TypeView::Tensor, a.kind);
    compareShape(e.tensor_type().elem_type(), e.tensor_type().has_shape(), e.tensor_type().shape());
    break;
  case pb::TypeProto::kSparseTensorType:
    ASSERT_EQ(TypeView::SparseTensor, a.kind);
    compareShape(e.sparse_tensor_type().elem_type(), e.sparse_tensor_type().has_shape(),
                 e.sparse_tensor_type().shape());
    break;
  case pb::TypeProto::kSequenceType:
    ASSERT_EQ(TypeView::Sequence, a.kind);
    ASSERT_TRUE(a.inner);
    compareType(e.sequence_type().elem_type(), *a.inner);
    break;
  case pb::TypeProto::kOptionalType:
    ASSERT_EQ(TypeView::Optional, a.kind);
    ASSERT_TRUE(a.inner);
    compareType(e.optional_type().elem_type(), *a.inner);
    break;
  case pb::TypeProto::kMapType:
    ASSERT_EQ(TypeView::Map, a.kind);
    EXPECT_EQ(e.map_type().key_type(), a.keyType);
    ASSERT_EQ(e.map_type().has_value_type(), a.inner != nullptr);
    if (a.inner) compareType(e.map_type().value_type(), *a.inner);
    break;
  case pb::TypeProto::kOpaqueType:
    EXPECT_EQ(TypeView::Opaque, a.kind);
    break;
  case pb::TypeProto::VALUE_NOT_SET:
    EXPECT_EQ(TypeView::Unknown, a.kind);
    break;
  }
}

void compareTensor(const pb::TensorProto &e, const TensorView &a, const ModelView &model,
                   CrossCheckStats &stats) {
  SCOPED_TRACE("tensor '" + e.name() + "'");
  ++stats.tensors;
  EXPECT_EQ(e.name(), a.name);
  EXPECT_EQ(e.data_type(), a.dataType);
  EXPECT_EQ(std::vector<int64_t>(e.dims().begin(), e.dims().end()), a.dims);
  EXPECT_EQ(e.has_raw_data(), a.hasRawData);
  EXPECT_EQ(e.raw_data(), a.rawData);
  EXPECT_EQ(e.float_data_size(), a.floatCount);
  EXPECT_EQ(e.int32_data_size(), a.int32Count);
  EXPECT_EQ(e.int64_data_size(), a.int64Count);
  EXPECT_EQ(e.double_data_size(), a.doubleCount);
  EXPECT_EQ(e.uint64_data_size(), a.uint64Count);
  EXPECT_EQ(strings(e.string_data()), strings(a.stringData));
  bool external = e.data_location() == pb::TensorProto::EXTERNAL;
  EXPECT_EQ(external, a.isExternal);
  for (const auto &kv : e.external_data()) {
    if (kv.key() == "location") { EXPECT_EQ(kv.value(), a.external.location); }
    if (kv.key() == "offset") { EXPECT_EQ(std::stoll(kv.value()), a.external.offset); }
    if (kv.key() == "length") { EXPECT_EQ(std::stoll(kv.value()), a.external.length); }
  }
  if (external) return; // values of external tensors are checked by the tests that own the files
  std::vector<double> reference;
  if (!referenceValues(e, reference)) return;
  auto decoded = decodeFloats(a, model, kCrossCheckDecodeLimit);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  ASSERT_EQ(reference.size(), decoded->size());
  for (size_t i = 0; i < reference.size(); ++i)
    ASSERT_TRUE(sameValue(reference[i], (*decoded)[i]))
        << "value " << i << ": " << reference[i] << " vs " << (*decoded)[i];
  ++stats.valuesDecoded;
}

void compareModel(const pb::ModelProto &e, const ModelView &a, CrossCheckStats &stats) {
  ++stats.models;
  EXPECT_EQ(e.ir_version(), a.irVersion);
  EXPECT_EQ(e.producer_name(), a.producerName);
  EXPECT_EQ(e.producer_version(), a.producerVersion);
  EXPECT_EQ(e.domain(), a.domain);
  EXPECT_EQ(e.model_version(), a.modelVersion);
  ASSERT_EQ(size_t(e.opset_import_size()), a.opsets.size());
  for (int i = 0; i < e.opset_import_size(); ++i) {
    EXPECT_EQ(e.opset_import(i).domain(), a.opsets[i].domain);
    EXPECT_EQ(e.opset_import(i).version(), a.opsets[i].version);
  }
  ASSERT_EQ(size_t(e.metadata_props_size()), a.metadata.size());
  for (int i = 0; i < e.metadata_props_size(); ++i) {
    EXPECT_EQ(e.metadata_props(i).key(), a.metadata[i].key);
    EXPECT_EQ(e.metadata_props(i).value(), a.metadata[i].value);
  }
  compareGraph(e.graph(), a.graph, a, stats);
  ASSERT_EQ(size_t(e.functions_size()), a.functions.size());
  for (int i = 0; i < e.functions_size(); ++i) {
    const auto &ef = e.functions(i);
    const FunctionView &af = a.functions[i];
    SCOPED_TRACE("function '" + ef.name() + "'");
    ++stats.functions;
    EXPECT_EQ(ef.name(), af.name);
    EXPECT_EQ(ef.domain(), af.domain);
    EXPECT_EQ(strings(ef.input()), strings(af.inputs));
    EXPECT_EQ(strings(ef.output()), strings(af.outputs));
    EXPECT_EQ(strings(ef.attribute()), strings(af.attributes));
    ASSERT_EQ(size_t(ef.opset_import_size()), af.opsets.size());
    ASSERT_EQ(size_t(ef.node_size()), af.nodes.size());
    for (int k = 0; k < ef.node_size(); ++k)
      compareNode(ef.node(k), af.nodes[k], a, stats);
  }
}

bool crossCheckFile(const std::string &path, CrossCheckStats &stats) {
  SCOPED_TRACE(path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  pb::ModelProto expected;
  if (!expected.ParseFromString(buffer.str())) {
    ADD_FAILURE() << "libonnx cannot parse " << path;
    return false;
  }
  auto actual = readModelFile(path);
  if (!actual.ok()) {
    ADD_FAILURE() << actual.error().message;
    return false;
  }
  compareModel(expected, *actual, stats);
  // Read again as loadModelFile reads: the main graph's nodes left encoded, then decoded one at
  // a time into reused views; each must equal libonnx's node.
  auto deferred = readModelFile(path, {}, ReadOptions{.deferNodes = true});
  if (!deferred.ok()) {
    ADD_FAILURE() << "deferred: " << deferred.error().message;
    return false;
  }
  const auto &nodes = expected.graph().node();
  EXPECT_TRUE(deferred->graph.nodes.empty());
  if (deferred->graph.encodedNodes.size() != size_t(nodes.size())) {
    ADD_FAILURE() << "deferred: " << deferred->graph.encodedNodes.size() << " encoded nodes, libonnx "
                  << nodes.size();
    return false;
  }
  NodeDecoder decoder(*deferred);
  NodeView reused; // one view for every node, as the importer reuses its ring
  CrossCheckStats ignored;
  for (int i = 0; i < nodes.size(); ++i) {
    auto r = decoder.decode(size_t(i), reused);
    if (!r.ok()) {
      ADD_FAILURE() << "deferred node " << i << ": " << r.error().message;
      return false;
    }
    compareNode(nodes[i], reused, *deferred, ignored);
  }
  return true;
}

} // namespace sf::onnx::test
