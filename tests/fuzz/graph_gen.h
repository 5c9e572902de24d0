// The graph generator the libFuzzer harnesses share (fuzz_graph: inference on it; fuzz_eval:
// the executor on it): the fuzzer's bytes choose well-formed graphs whose nodes are ops drawn
// from the registry with inputs of random ranks, dims (numbers, named symbols, intervals,
// unknowns), types, small constant shape inputs, common attributes with random values, and
// nested If/Loop/Scan bodies.
#pragma once

#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/graph.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <vector>

namespace sf::fuzz {

inline const std::vector<std::string> &opNames() {
  static const std::vector<std::string> names = defaultRegistry().names();
  return names;
}

struct Gen {
  FuzzedDataProvider &p;
  SymbolTable &symbols;
  int depth = 0;
  size_t nodeCount = 0;

  int64_t between(int64_t lo, int64_t hi) { return p.ConsumeIntegralInRange<int64_t>(lo, hi); }
  bool chance(int percent) { return between(0, 99) < percent; }
  template <class T> const T &pick(const std::vector<T> &v) {
    return v[size_t(between(0, int64_t(v.size()) - 1))];
  }

  ElementType type() {
    static const std::vector<ElementType> kTypes = {
        ElementType::F32, ElementType::F32,   ElementType::I64, ElementType::I64,
        ElementType::I32, ElementType::Bool,  ElementType::F16, ElementType::F64,
        ElementType::U8,  ElementType::String, ElementType::F8E4M3FN, ElementType::I4};
    return pick(kTypes);
  }

  Dimension dim() {
    switch (between(0, 5)) {
    case 0:
      return Dimension(between(0, 7));
    case 1:
      return Dimension(1);
    case 2:
      return Dimension::symbol(symbols.named(pick(std::vector<std::string>{"N", "H", "W", "S"})));
    case 3: {
      int64_t lo = between(0, 6);
      return Dimension(lo, between(lo, 9));
    }
    case 4:
      return Dimension(between(8, 300));
    default:
      return Dimension::dynamic();
    }
  }

  Fact fact() {
    Fact f;
    f.type = chance(8) ? ElementType::Undefined : type();
    if (chance(8)) return f; // unknown rank
    std::vector<Dimension> dims;
    for (int64_t r = between(0, 5); r > 0; --r)
      dims.push_back(dim());
    f.shape = PartialShape(std::move(dims));
    return f;
  }

  TensorPtr smallInts() {
    std::vector<int64_t> v;
    for (int64_t n = between(0, 6); n > 0; --n)
      v.push_back(between(-4, 9));
    bool scalar = v.size() == 1 && chance(50);
    Shape s = scalar ? Shape{} : Shape{int64_t(v.size())};
    ElementType t = chance(20) ? ElementType::I32 : ElementType::I64;
    auto tensor = Tensor::fromInt64s(s, v, t);
    return tensor.ok() ? std::make_shared<const Tensor>(std::move(*tensor)) : nullptr;
  }

  TensorPtr smallFloats() {
    std::vector<double> v;
    for (int64_t n = between(0, 4); n > 0; --n)
      v.push_back(double(between(-8, 8)) / 2);
    auto tensor = Tensor::fromDoubles(ElementType::F32, Shape{int64_t(v.size())}, v);
    return tensor.ok() ? std::make_shared<const Tensor>(std::move(*tensor)) : nullptr;
  }

  std::vector<int64_t> ints(int64_t lo, int64_t hi) {
    std::vector<int64_t> v;
    for (int64_t n = between(0, 5); n > 0; --n)
      v.push_back(between(lo, hi));
    return v;
  }

  /// A few attributes from the ones op rules read, with values of the right kind mostly.
  Attributes attrs() {
    Attributes a;
    static const std::vector<std::string> kIntAttrs = {"axis",
                                                       "keepdims",
                                                       "group",
                                                       "to",
                                                       "transA",
                                                       "transB",
                                                       "ceil_mode",
                                                       "blocksize",
                                                       "num_outputs",
                                                       "k",
                                                       "largest",
                                                       "noop_with_empty_axes",
                                                       "hidden_size",
                                                       "allowzero",
                                                       "new_axis",
                                                       "fmod",
                                                       "exclusive",
                                                       "reverse",
                                                       "upper",
                                                       "count_include_pad",
                                                       "layout",
                                                       "storage_order",
                                                       "select_last_index",
                                                       "batch_dims",
                                                       "num_scan_inputs",
                                                       "onesided",
                                                       "keep_aspect_ratio_policy",
                                                       "start",
                                                       "end",
                                                       "dtype",
                                                       "sample_size"};
    static const std::vector<std::string> kIntsAttrs = {
        "axes",      "perm",  "kernel_shape",    "strides",          "pads",
        "dilations", "split", "shape",           "output_padding",   "output_shape",
        "starts",    "ends",  "scan_input_axes", "scan_output_axes", "pooled_shape",
        "sizes"};
    static const std::vector<std::string> kStringAttrs = {
        "mode",         "auto_pad",  "direction",  "equation", "coordinate_transformation_mode",
        "nearest_mode", "reduction", "activations"};
    static const std::vector<std::string> kStrings = {
        "constant",   "reflect",       "edge",       "nearest",     "linear",   "DCR",
        "CRD",        "SAME_UPPER",    "SAME_LOWER", "VALID",       "NOTSET",   "forward",
        "reverse",    "bidirectional", "ij,jk->ik",  "...ij,...jk", "bij->bji", "ii->i",
        "half_pixel", "asymmetric",    "floor",      "sum",         ""};
    for (int64_t n = between(0, 4); n > 0; --n) {
      switch (between(0, 5)) {
      case 0:
      case 1:
        a.set(pick(kIntAttrs), Attribute(between(-4, 17)));
        break;
      case 2:
      case 3:
        a.set(pick(kIntsAttrs), Attribute(ints(-3, 6)));
        break;
      case 4:
        a.set(pick(kStringAttrs), Attribute(pick(kStrings)));
        break;
      default:
        if (chance(50))
          a.set("value", Attribute(chance(50) ? smallInts() : smallFloats()));
        else
          a.set(chance(50) ? "alpha" : "epsilon", Attribute(double(between(-4, 4)) / 4));
      }
    }
    return a;
  }

  /// A body with `formals` formal inputs (an If branch has none, a Loop body two or more).
  GraphPtr body(size_t formals, size_t outputs) {
    auto b = std::make_shared<Graph>();
    b->name = "body" + std::to_string(depth);
    std::vector<OutletId> values;
    for (size_t i = 0; i < formals; ++i) {
      auto o = b->addParameter(b->name + "_in" + std::to_string(i), fact());
      if (o.ok()) values.push_back(*o);
    }
    ++depth;
    fill(*b, values, size_t(between(0, 4)));
    --depth;
    if (values.empty()) {
      auto c = b->addConstant(b->name + "_c", smallInts());
      if (c.ok()) values.push_back(*c);
    }
    for (size_t i = 0; i < outputs && !values.empty(); ++i)
      b->outputs.push_back(pick(values));
    return b;
  }

  void addSubgraphs(const std::string &op, Attributes &a) {
    if (depth >= 2) return;
    if (op == "If") {
      size_t outs = size_t(between(1, 2));
      a.set("then_branch", Attribute(body(0, outs)));
      a.set("else_branch", Attribute(body(0, outs)));
    } else if (op == "Loop") {
      size_t carried = size_t(between(0, 2));
      a.set("body", Attribute(body(2 + carried, 1 + carried + size_t(between(0, 1)))));
    } else if (op == "Scan") {
      size_t states = size_t(between(0, 1)), scans = size_t(between(1, 2));
      a.set("num_scan_inputs", Attribute(int64_t(scans)));
      a.set("body", Attribute(body(states + scans, states + size_t(between(0, 2)))));
    } else if (op == "SequenceMap") {
      a.set("body", Attribute(body(size_t(between(1, 2)), 1)));
    }
  }

  void fill(Graph &g, std::vector<OutletId> &values, size_t nodes) {
    for (size_t k = 0; k < nodes && p.remaining_bytes() > 0 && nodeCount < 64; ++k, ++nodeCount) {
      if (chance(25)) {
        auto c = g.addConstant("c" + std::to_string(nodeCount),
                               chance(80) ? smallInts() : smallFloats());
        if (c.ok()) values.push_back(*c);
        continue;
      }
      std::string full = pick(opNames());
      std::string domain, op = full;
      if (auto sep = full.find("::"); sep != std::string::npos) {
        domain = full.substr(0, sep);
        op = full.substr(sep + 2);
      }
      std::vector<OutletId> ins;
      for (int64_t n = between(0, 5); n > 0; --n)
        ins.push_back(values.empty() || chance(8) ? OutletId::invalid() : pick(values));
      Attributes a = attrs();
      addSubgraphs(op, a);
      size_t outs = size_t(between(1, 3));
      auto id = g.addNode(op, "n" + std::to_string(nodeCount), ins, outs, std::move(a));
      if (!id.ok()) continue;
      Node &n = g.nodes[*id];
      n.domain = domain;
      static const std::vector<int> kOpsets = {0, 1, 7, 9, 10, 11, 13, 17, 18, 21};
      n.opsetVersion = pick(kOpsets);
      for (uint32_t s = 0; s < outs; ++s)
        values.push_back(OutletId{*id, s});
    }
  }
};

} // namespace sf::fuzz
