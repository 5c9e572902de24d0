// ONNX's C++ shape inference as the reference: see onnx_reference.h. Built without libonnx
// (SF_HAVE_ONNX_REF undefined) it reports itself unavailable.
#include "onnx_reference.h"

#ifdef SF_HAVE_ONNX_REF
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>
#include <sstream>
#include <unordered_set>
#endif

namespace sf::conformance {

#ifndef SF_HAVE_ONNX_REF

bool referenceAvailable() { return false; }
void warmUpReference() {}

ReferenceResult runReference(const std::string &, const std::vector<InputBinding> &) {
  ReferenceResult r;
  r.error = "built without libonnx";
  return r;
}

#else

namespace {

/// The IR fact of an ONNX type: sequences and optionals stand for their elements (as in
/// shapeflow's importer); dim_params and missing dims are dynamic.
std::optional<Fact> factOf(const ::onnx::TypeProto &t) {
  if (t.has_sequence_type()) {
    if (!t.sequence_type().has_elem_type()) return std::nullopt;
    return factOf(t.sequence_type().elem_type());
  }
  if (t.has_optional_type()) {
    if (!t.optional_type().has_elem_type()) return std::nullopt;
    return factOf(t.optional_type().elem_type());
  }
  if (!t.has_tensor_type()) return std::nullopt;
  Fact f;
  f.type = elementTypeOf(t.tensor_type().elem_type());
  if (t.tensor_type().has_shape()) {
    std::vector<Dimension> dims;
    for (const auto &d : t.tensor_type().shape().dim())
      dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? Dimension(d.dim_value())
                                                             : Dimension::dynamic());
    f.shape = PartialShape(std::move(dims));
  }
  return f;
}

/// Sets the shape of a tensor type to the actual dims.
void setShape(::onnx::TypeProto_Tensor &tt, const std::vector<int64_t> &dims) {
  auto *shape = tt.mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

/// The innermost tensor type of a (sequence / optional of) tensor type, or null.
::onnx::TypeProto_Tensor *tensorTypeOf(::onnx::TypeProto &t) {
  if (t.has_tensor_type()) return t.mutable_tensor_type();
  if (t.has_sequence_type()) return tensorTypeOf(*t.mutable_sequence_type()->mutable_elem_type());
  if (t.has_optional_type()) return tensorTypeOf(*t.mutable_optional_type()->mutable_elem_type());
  return nullptr;
}

void bindInput(::onnx::GraphProto &g, ::onnx::ValueInfoProto &in, const InputBinding &b) {
  const DataValue &v = *b.data;
  ::onnx::TypeProto_Tensor *tt = tensorTypeOf(*in.mutable_type());
  if (!tt || v.tensors.empty()) return;
  if (v.kind == DataValue::Kind::Tensor) {
    const DataTensor &t = v.tensors[0];
    if (!tt->elem_type()) tt->set_elem_type(t.dataType());
    setShape(*tt, t.dims());
    if (b.asConstant) {
      ::onnx::TensorProto *init = g.add_initializer();
      if (init->ParseFromString(*t.bytes)) {
        init->set_name(b.name);
        init->set_data_type(t.dataType()); // as read (BFLOAT16 stored as UINT16: see runner.cpp)
      } else {
        g.mutable_initializer()->RemoveLast();
      }
    }
    return;
  }
  // A sequence: the dims all elements agree on; the others unknown.
  Fact e = elementFact(v.tensors);
  if (!tt->elem_type() && e.type != ElementType::Undefined)
    tt->set_elem_type(v.tensors[0].dataType());
  if (!e.shape.rankIsStatic()) return;
  auto *shape = tt->mutable_shape();
  shape->clear_dim();
  for (const Dimension &d : e.shape.dims()) {
    auto *dim = shape->add_dim();
    if (d.isStatic()) dim->set_dim_value(d.length());
  }
}

} // namespace

bool referenceAvailable() { return true; }
void warmUpReference() { (void)::onnx::OpSchemaRegistry::Instance()->GetSchema("Add", 13, ""); }

ReferenceResult runReference(const std::string &modelPath, const std::vector<InputBinding> &inputs) {
  ReferenceResult r;
  ::onnx::ModelProto model;
  {
    std::ifstream in(modelPath, std::ios::binary);
    if (!in || !model.ParseFromIstream(&in)) {
      r.error = "libonnx cannot parse " + modelPath;
      return r;
    }
  }
  ::onnx::GraphProto &g = *model.mutable_graph();
  // What the file declares about outputs and intermediates is not inference: drop it.
  g.clear_value_info();
  for (auto &out : *g.mutable_output()) out.clear_type();
  std::unordered_set<std::string> initializers;
  for (const auto &t : g.initializer()) initializers.insert(t.name());
  for (const InputBinding &b : inputs) {
    if (!b.data) continue;
    for (auto &in : *g.mutable_input())
      if (in.name() == b.name && !initializers.count(b.name)) bindInput(g, in, b);
  }
  try {
    ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception &e) {
    r.error = std::string("InferShapes raised: ") + e.what();
  }
  r.ran = true;
  for (const auto &out : model.graph().output())
    r.outputs.push_back(out.has_type() ? factOf(out.type()) : std::nullopt);
  for (const auto &vi : model.graph().value_info())
    if (vi.has_type())
      if (auto f = factOf(vi.type())) r.valueInfo[vi.name()] = *f;
  return r;
}

#endif

} // namespace sf::conformance
