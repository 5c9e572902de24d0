// Helpers shared by the op rule tests: build a one-node graph from printed facts and constants,
// run inference, and read back the printed output facts or the error.
//
//   OpTester t("TopK", 11);
//   t.input("f32[N,10]").constInts({1}, {3}).attr("axis", 1).outputs(2);
//   EXPECT_EQ(t.run(), "f32[N,3]; i64[N,3]");
#pragma once

#include "shapeflow/dim/parse.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/support/diagnostic.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace sf::test {

/// One input of a table case: a graph input from its printed fact, a constant, or absent.
struct In {
  enum Kind { Param, Ints, Floats, Absent } kind = Absent;
  std::string fact;
  Shape shape;
  std::vector<double> values;
  ElementType type = ElementType::Undefined;
};
inline In P(std::string fact) { return In{In::Param, std::move(fact), {}, {}, {}}; }
inline In I(Shape shape, std::vector<int64_t> v, ElementType t = ElementType::I64) {
  return In{In::Ints, "", std::move(shape), std::vector<double>(v.begin(), v.end()), t};
}
inline In F(Shape shape, std::vector<double> v, ElementType t = ElementType::F32) {
  return In{In::Floats, "", std::move(shape), std::move(v), t};
}
inline In A() { return In{}; }

class OpTester {
public:
  explicit OpTester(std::string op, int opset = 0) : op_(std::move(op)), opset_(opset) {}

  /// Gives a symbol a range before it is first used: `bound("N", 1, 8)`.
  OpTester &bound(const std::string &name, int64_t lo, int64_t hi = kInf) {
    auto r = g.symbols.bound(name, Interval{lo, hi});
    if (!r.ok()) ADD_FAILURE() << r.error().message;
    return *this;
  }
  /// A graph input from its printed fact: `f32[N,3,?{1..8}]`, `?[...]`, `i64[2] = [N,-1]`.
  OpTester &input(std::string_view text) {
    Fact f = parseFact(text);
    auto o = g.addParameter("in" + std::to_string(inputs_.size()), f);
    if (!o.ok()) ADD_FAILURE() << o.error().message;
    inputs_.push_back(o.ok() ? *o : OutletId::invalid());
    return *this;
  }
  /// An absent optional input.
  OpTester &absent() {
    inputs_.push_back(OutletId::invalid());
    return *this;
  }
  /// A constant input of integer (or bool) type.
  OpTester &constInts(Shape shape, std::vector<int64_t> values, ElementType t = ElementType::I64) {
    auto tensor = Tensor::fromInt64s(std::move(shape), values, t);
    if (!tensor.ok()) ADD_FAILURE() << tensor.error().message;
    return addConstant(tensor.ok() ? *tensor : Tensor());
  }
  /// A constant input of float (or any numeric) type.
  OpTester &constFloats(Shape shape, std::vector<double> values, ElementType t = ElementType::F32) {
    auto tensor = Tensor::fromDoubles(t, std::move(shape), values);
    if (!tensor.ok()) ADD_FAILURE() << tensor.error().message;
    return addConstant(tensor.ok() ? *tensor : Tensor());
  }
  OpTester &add(const In &in) {
    switch (in.kind) {
    case In::Param:
      return input(in.fact);
    case In::Ints:
      return constInts(in.shape, std::vector<int64_t>(in.values.begin(), in.values.end()), in.type);
    case In::Floats:
      return constFloats(in.shape, in.values, in.type);
    case In::Absent:
      return absent();
    }
    return *this;
  }
  OpTester &attrs(const Attributes &a) {
    for (const auto &[k, v] : a)
      attrs_.set(k, v);
    return *this;
  }
  OpTester &attr(std::string name, Attribute value) {
    attrs_.set(std::move(name), std::move(value));
    return *this;
  }
  OpTester &outputs(size_t n) {
    nOutputs_ = n;
    return *this;
  }

  /// Runs inference; the printed output facts joined by "; ", or "error: <message>" (the rule's
  /// message, without the driver's node prefix and input summary).
  std::string run() {
    auto id = g.addNode(op_, "node", inputs_, nOutputs_, attrs_);
    if (!id.ok()) return "build error: " + id.error().message;
    g.nodes[*id].opsetVersion = opset_;
    // The forward rule alone: backward rules have tests of their own (tests/ops/refine_test.cpp).
    InferOptions opts;
    opts.backward = Backward::Off;
    inferGraph(g, diags, opts);
    for (const auto &d : diags.list()) {
      if (d.severity != Severity::Error) continue;
      std::string m = d.message;
      auto cut = m.rfind(" (inputs: ");
      if (cut != std::string::npos) m = m.substr(0, cut);
      return "error: " + m;
    }
    std::string out;
    for (const auto &o : g.nodes[*id].outputs) {
      if (!out.empty()) out += "; ";
      out += toString(o.fact);
    }
    return out;
  }
  /// The range of a named symbol after the run: `0..6`, `1..` (open).
  std::string range(const std::string &name) const {
    for (const auto &[n, r] : g.symbols.namedSymbols())
      if (n == name) return toString(r);
    return "no symbol " + name;
  }
  std::optional<Interval> symbolRange(const std::string &name) const {
    for (const auto &[n, r] : g.symbols.namedSymbols())
      if (n == name) return r;
    return std::nullopt;
  }
  /// Every warning, joined by "; ".
  std::string warnings() const {
    std::string out;
    for (const auto &d : diags.list())
      if (d.severity == Severity::Warning) out += (out.empty() ? "" : "; ") + d.message;
    return out;
  }

  Graph g;
  Diagnostics diags;

private:
  OpTester &addConstant(Tensor t) {
    auto o = g.addConstant("c" + std::to_string(inputs_.size()), std::move(t));
    if (!o.ok()) ADD_FAILURE() << o.error().message;
    inputs_.push_back(o.ok() ? *o : OutletId::invalid());
    return *this;
  }

  Fact parseFact(std::string_view text) {
    Fact f;
    size_t lb = text.find('[');
    if (lb == std::string_view::npos) {
      ADD_FAILURE() << "bad fact text " << text;
      return f;
    }
    std::string_view typeText = text.substr(0, lb);
    auto t = parseElementType(typeText);
    if (!t)
      ADD_FAILURE() << "bad element type in " << text;
    else
      f.type = *t;
    size_t eq = text.find(" = ");
    std::string_view shapeText =
        text.substr(lb, eq == std::string_view::npos ? text.npos : eq - lb);
    auto s = parsePartialShape(shapeText, g.symbols);
    if (!s.ok())
      ADD_FAILURE() << s.error().message << " in " << text;
    else
      f.shape = *s;
    if (eq != std::string_view::npos) {
      // Value elements: integers (negatives kept exact) or printed dims.
      std::string_view v = text.substr(eq + 3);
      if (v.size() < 2 || v.front() != '[' || v.back() != ']') {
        ADD_FAILURE() << "bad value in " << text;
        return f;
      }
      v = v.substr(1, v.size() - 2);
      std::vector<Dimension> dims;
      while (!v.empty()) {
        size_t comma = 0; // the next comma outside parentheses
        for (int depth = 0; comma < v.size(); ++comma) {
          if (v[comma] == '(')
            ++depth;
          else if (v[comma] == ')')
            --depth;
          else if (v[comma] == ',' && depth == 0)
            break;
        }
        if (comma == v.size()) comma = std::string_view::npos;
        std::string item(v.substr(0, comma));
        v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
        char *end = nullptr;
        long long n = std::strtoll(item.c_str(), &end, 10);
        if (!item.empty() && end && *end == '\0') {
          dims.push_back(Dimension::constantValue(n));
          continue;
        }
        auto d = parseDimension(item, g.symbols);
        if (!d.ok())
          ADD_FAILURE() << d.error().message << " in " << text;
        else
          dims.push_back(*d);
      }
      f.value = std::move(dims);
    }
    return f;
  }

  std::string op_;
  int opset_;
  std::vector<OutletId> inputs_;
  Attributes attrs_;
  size_t nOutputs_ = 1;
};

/// A case taken from ONNX's backend node tests (/usr/share/libonnx-testdata/data/node): the
/// node, its inputs (data as graph inputs of the actual shapes, small operands as constants)
/// and the actual output shapes. `within`: a data-dependent count that the fresh symbol's
/// range (named `symbol`) must contain.
struct NodeCase {
  std::string name, op;
  int opset;
  std::vector<In> ins;
  Attributes attrs;
  size_t outputs;
  std::string expect;
  int64_t within = -1;
  std::string symbol = "nms_0";
};
inline void PrintTo(const NodeCase &c, std::ostream *os) { *os << c.name; }

inline void checkNodeCase(const NodeCase &c) {
  OpTester t(c.op, c.opset);
  for (const auto &in : c.ins)
    t.add(in);
  t.attrs(c.attrs).outputs(c.outputs);
  EXPECT_EQ(t.run(), c.expect) << c.name;
  if (c.within >= 0) {
    auto r = t.symbolRange(c.symbol);
    ASSERT_TRUE(r.has_value()) << c.name;
    EXPECT_TRUE(r->contains(c.within)) << c.name << ": " << toString(*r) << " misses " << c.within;
  }
}

/// A subgraph (an If branch, a Loop/Scan/SequenceMap body) built node by node, to be given to an
/// OpTester as a graph attribute. Formal inputs take their facts from the owning rule; a captured
/// input stands for the owning node's input `ownerInput` (an extra input after its declared ones).
///
///   BodyBuilder b("body");
///   auto x = b.input("x");
///   auto w = b.captured("w", 1);
///   b.output(b.node("Add", {x, w}));
///   t.input("f32[N]").input("f32[N]").attr("body", b.graph());
class BodyBuilder {
public:
  explicit BodyBuilder(std::string name = "body") : g_(std::make_shared<Graph>()) {
    g_->name = std::move(name);
  }
  OutletId input(const std::string &name, Fact f = {}) { return check(g_->addParameter(name, f)); }
  OutletId captured(const std::string &name, uint32_t ownerInput) {
    return check(g_->addCapturedParameter(name, Fact{}, ownerInput));
  }
  OutletId constInts(Shape shape, std::vector<int64_t> values, ElementType t = ElementType::I64) {
    auto tensor = Tensor::fromInt64s(std::move(shape), values, t);
    if (!tensor.ok()) ADD_FAILURE() << tensor.error().message;
    return check(g_->addConstant(fresh("k"), tensor.ok() ? *tensor : Tensor()));
  }
  OutletId constFloats(Shape shape, std::vector<double> values, ElementType t = ElementType::F32) {
    auto tensor = Tensor::fromDoubles(t, std::move(shape), values);
    if (!tensor.ok()) ADD_FAILURE() << tensor.error().message;
    return check(g_->addConstant(fresh("k"), tensor.ok() ? *tensor : Tensor()));
  }
  /// A node with one output (its first when it has more).
  OutletId node(const std::string &op, std::vector<OutletId> inputs, Attributes attrs = {},
                int opset = 17, size_t nOutputs = 1) {
    return nodeOutputs(op, std::move(inputs), nOutputs, std::move(attrs), opset)[0];
  }
  std::vector<OutletId> nodeOutputs(const std::string &op, std::vector<OutletId> inputs,
                                    size_t nOutputs, Attributes attrs = {}, int opset = 17) {
    auto id = g_->addNode(op, fresh("n"), std::move(inputs), nOutputs, std::move(attrs));
    std::vector<OutletId> out;
    if (!id.ok()) {
      ADD_FAILURE() << id.error().message;
      return std::vector<OutletId>(nOutputs, OutletId::invalid());
    }
    g_->nodes[*id].opsetVersion = opset;
    for (uint32_t i = 0; i < nOutputs; ++i) out.push_back(OutletId{*id, i});
    return out;
  }
  BodyBuilder &output(OutletId o) {
    g_->outputs.push_back(o);
    return *this;
  }
  GraphPtr graph() const { return g_; }

private:
  std::string fresh(const char *stem) { return g_->name + "_" + stem + std::to_string(counter_++); }
  OutletId check(Result<OutletId> r) {
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message;
      return OutletId::invalid();
    }
    return *r;
  }
  GraphPtr g_;
  int counter_ = 0;
};

} // namespace sf::test
