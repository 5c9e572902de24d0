// The importer expands calls of model-local functions (FunctionProto) into the calling graph.
// Models are built with libonnx's generated classes, serialized, and read back by the wire reader.
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/onnx/wire.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <google/protobuf/unknown_field_set.h>

#include <map>
#include <variant>

namespace {

using namespace sf;

void setInput(::onnx::ValueInfoProto *v, const std::string &name,
              std::vector<std::variant<int64_t, std::string>> dims) {
  v->set_name(name);
  auto *t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(::onnx::TensorProto::FLOAT);
  auto *s = t->mutable_shape();
  for (const auto &d : dims) {
    auto *dim = s->add_dim();
    if (std::holds_alternative<int64_t>(d)) dim->set_dim_value(std::get<int64_t>(d));
    else dim->set_dim_param(std::get<std::string>(d));
  }
}

::onnx::NodeProto *addNode(google::protobuf::RepeatedPtrField<::onnx::NodeProto> *nodes,
                           const std::string &op, std::vector<std::string> in,
                           std::vector<std::string> out, const std::string &domain = "") {
  auto *n = nodes->Add();
  n->set_op_type(op);
  n->set_domain(domain);
  for (auto &i : in) n->add_input(i);
  for (auto &o : out) n->add_output(o);
  return n;
}

/// A model over input x: f32[N,3,5], opset 17, plus the custom domain "local".
::onnx::ModelProto baseModel() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto *o = m.add_opset_import();
  o->set_version(17);
  auto *l = m.add_opset_import();
  l->set_domain("local");
  l->set_version(1);
  setInput(m.mutable_graph()->add_input(), "x", {std::string("N"), int64_t(3), int64_t(5)});
  m.mutable_graph()->set_name("main");
  return m;
}

/// local.PermuteThenRelu(X) -> Y with attribute perm referenced by the body's Transpose;
/// `withDefault` gives perm a default of [0, 2, 1].
::onnx::FunctionProto *addPermuteThenRelu(::onnx::ModelProto &m, bool withDefault) {
  auto *f = m.add_functions();
  f->set_name("PermuteThenRelu");
  f->set_domain("local");
  f->add_input("X");
  f->add_output("Y");
  auto *op = f->add_opset_import();
  op->set_version(17);
  auto *t = addNode(f->mutable_node(), "Transpose", {"X"}, {"T"});
  auto *a = t->add_attribute();
  a->set_name("perm");
  a->set_type(::onnx::AttributeProto::INTS);
  a->set_ref_attr_name("perm");
  addNode(f->mutable_node(), "Relu", {"T"}, {"Y"});
  if (withDefault) {
    // FunctionProto.attribute_proto (field 11) is newer than Debian's libonnx classes: written
    // as an unknown field, which the generated serializer keeps.
    ::onnx::AttributeProto d;
    d.set_name("perm");
    d.set_type(::onnx::AttributeProto::INTS);
    for (int64_t v : {0, 2, 1}) d.add_ints(v);
    f->GetReflection()->MutableUnknownFields(f)->AddLengthDelimited(11, d.SerializeAsString());
  } else {
    f->add_attribute("perm");
  }
  return f;
}

struct Inferred {
  std::string error;
  std::map<std::string, std::string> facts;
  size_t errors = 0;
};

Inferred importAndInfer(const ::onnx::ModelProto &m) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  Inferred r;
  auto view = sf::onnx::readModelBuffer(bytes);
  if (!view.ok()) {
    r.error = view.error().message;
    return r;
  }
  Diagnostics diags;
  auto g = sf::onnx::importModel(*view, diags);
  if (!g.ok()) {
    r.error = g.error().message;
    return r;
  }
  inferGraph(*g, diags);
  r.errors = diags.errorCount();
  for (const auto &n : g->nodes)
    for (const auto &o : n.outputs)
      if (!o.name.empty()) r.facts[o.name] = toString(o.fact);
  return r;
}

TEST(LocalFunctions, CallIsExpandedWithTheCallersAttribute) {
  auto m = baseModel();
  addPermuteThenRelu(m, false);
  auto *call = addNode(m.mutable_graph()->mutable_node(), "PermuteThenRelu", {"x"}, {"y"}, "local");
  call->set_name("block");
  auto *a = call->add_attribute();
  a->set_name("perm");
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : {2, 0, 1}) a->add_ints(v);
  setInput(m.mutable_graph()->add_output(), "y", {});
  auto r = importAndInfer(m);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.errors, 0u);
  EXPECT_EQ(r.facts["y"], "f32[5,N,3]");
  // The body's own tensor is renamed after the call.
  EXPECT_EQ(r.facts["block/0/T"], "f32[5,N,3]");
}

TEST(LocalFunctions, DefaultAttributeAndTwoCalls) {
  auto m = baseModel();
  addPermuteThenRelu(m, true);
  addNode(m.mutable_graph()->mutable_node(), "PermuteThenRelu", {"x"}, {"y1"}, "local");
  addNode(m.mutable_graph()->mutable_node(), "PermuteThenRelu", {"y1"}, {"y2"}, "local");
  auto r = importAndInfer(m);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.errors, 0u);
  EXPECT_EQ(r.facts["y1"], "f32[N,5,3]");
  EXPECT_EQ(r.facts["y2"], "f32[N,3,5]");
}

TEST(LocalFunctions, NestedCalls) {
  auto m = baseModel();
  addPermuteThenRelu(m, true);
  // local.Twice(X) -> Y: PermuteThenRelu twice, the second with perm [1, 0, 2].
  auto *f = m.add_functions();
  f->set_name("Twice");
  f->set_domain("local");
  f->add_input("X");
  f->add_output("Y");
  addNode(f->mutable_node(), "PermuteThenRelu", {"X"}, {"A"}, "local");
  auto *second = addNode(f->mutable_node(), "PermuteThenRelu", {"A"}, {"Y"}, "local");
  auto *a = second->add_attribute();
  a->set_name("perm");
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : {1, 0, 2}) a->add_ints(v);
  addNode(m.mutable_graph()->mutable_node(), "Twice", {"x"}, {"y"}, "local");
  auto r = importAndInfer(m);
  ASSERT_EQ(r.error, "");
  // [N,3,5] -> [N,5,3] -> [5,N,3]
  EXPECT_EQ(r.facts["y"], "f32[5,N,3]");
}

TEST(LocalFunctions, RecursionIsAnError) {
  auto m = baseModel();
  auto *f = m.add_functions();
  f->set_name("Loop");
  f->set_domain("local");
  f->add_input("X");
  f->add_output("Y");
  addNode(f->mutable_node(), "Loop", {"X"}, {"Y"}, "local");
  auto *call = addNode(m.mutable_graph()->mutable_node(), "Loop", {"x"}, {"y"}, "local");
  call->set_name("forever");
  auto r = importAndInfer(m);
  EXPECT_NE(r.error.find("local functions call each other more than 32 deep"), std::string::npos)
      << r.error;
}

} // namespace

namespace {

TEST(LocalFunctions, ExponentialExpansionIsBounded) {
  // F0 calls the op twice; F(k) calls F(k-1) twice: F30 would be 2^31 nodes.
  auto m = baseModel();
  for (int k = 0; k <= 30; ++k) {
    auto *f = m.add_functions();
    f->set_name("F" + std::to_string(k));
    f->set_domain("local");
    f->add_input("X");
    f->add_output("Y");
    std::string callee = k == 0 ? "Relu" : "F" + std::to_string(k - 1);
    std::string domain = k == 0 ? "" : "local";
    addNode(f->mutable_node(), callee, {"X"}, {"A"}, domain);
    addNode(f->mutable_node(), callee, {"A"}, {"Y"}, domain);
  }
  addNode(m.mutable_graph()->mutable_node(), "F30", {"x"}, {"y"}, "local");
  auto r = importAndInfer(m);
  EXPECT_NE(r.error.find("nodes after expanding local functions"), std::string::npos) << r.error;
}

} // namespace
