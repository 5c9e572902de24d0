// Writing the IR as an ONNX model (writer.h). Small messages are built in memory; a constant's
// elements are never copied: the graph is a list of chunks, bytes built here or views of the
// tensors' own storage, whose sizes are known before anything is written (protobuf prefixes every
// message with its length).
#include "shapeflow/onnx/writer.h"

#include "wire_reader.h"


#include <algorithm>
#include <functional>
#include <cstring>
#include <map>
#include <ostream>
#include <set>
#include <span>
#include <variant>

namespace sf::onnx {
namespace {

// ---- protobuf encoding ----

using detail::kFixed32;
using detail::kLen;
using detail::kVarint;
using Wire = detail::WireType;

void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(uint8_t(v) | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}
void putTag(std::string &out, int field, Wire w) { putVarint(out, (uint64_t(field) << 3) | w); }
void putInt(std::string &out, int field, int64_t v) {
  putTag(out, field, kVarint);
  putVarint(out, uint64_t(v));
}
void putBytes(std::string &out, int field, std::string_view bytes) {
  putTag(out, field, kLen);
  putVarint(out, bytes.size());
  out.append(bytes);
}
void putFloat(std::string &out, int field, float f) {
  putTag(out, field, kFixed32);
  char b[4];
  std::memcpy(b, &f, 4);
  out.append(b, 4);
}

/// Bytes to write: built here, or a view of a tensor's storage (written as it is).
using Chunk = std::variant<std::string, std::span<const std::byte>>;
size_t sizeOf(const Chunk &c) {
  return std::holds_alternative<std::string>(c) ? std::get<std::string>(c).size()
                                                : std::get<std::span<const std::byte>>(c).size();
}
void writeChunk(std::ostream &os, const Chunk &c) {
  if (const auto *s = std::get_if<std::string>(&c)) os.write(s->data(), std::streamsize(s->size()));
  else {
    auto v = std::get<std::span<const std::byte>>(c);
    os.write(reinterpret_cast<const char *>(v.data()), std::streamsize(v.size()));
  }
}
/// Everything of a list of chunks in one string (subgraphs, which nest in node messages).
std::string flatten(const std::vector<Chunk> &chunks) {
  std::string out;
  for (const Chunk &c : chunks) {
    if (const auto *s = std::get_if<std::string>(&c)) out += *s;
    else {
      auto v = std::get<std::span<const std::byte>>(c);
      out.append(reinterpret_cast<const char *>(v.data()), v.size());
    }
  }
  return out;
}

// ---- what is written ----

/// Where outlets are written and by which names: a body's captured Parameters by the name of
/// the enclosing value they stand for.
struct Scope {
  const Graph &g;
  const Scope *parent = nullptr;
  uint32_t owner = kNoNode; // the node of `parent` whose body this is
  std::string nameOf(OutletId o) const {
    const Node &n = g.nodes[o.node];
    if (n.isCaptured() && parent) {
      auto k = n.attrs.getInt("captured");
      if (k.ok() && size_t(*k) < parent->g.nodes[owner].inputs.size())
        return parent->nameOf(parent->g.nodes[owner].inputs[size_t(*k)]);
    }
    return n.outputs[o.slot].name;
  }
};

struct Writer {
  const WriteOptions &options;
  WriteStats stats;

  std::string dimText(const Dimension &d) const {
    if (!d.expr()) return {};
    std::string t = options.names ? toString(d.expr(), *options.names) : toString(d.expr());
    return t.find('?') == std::string::npos ? t : std::string();
  }

  /// TypeProto.tensor_type of a fact (the element type; the shape when the rank is known).
  std::string tensorType(const Fact &f) const {
    std::string tensor;
    if (f.type != ElementType::Undefined) putInt(tensor, 1, int64_t(f.type));
    if (f.shape.rankIsStatic()) {
      std::string shape;
      for (const Dimension &d : f.shape.dims()) {
        std::string dim;
        if (d.isStatic()) putInt(dim, 1, d.length());
        else if (std::string t = dimText(d); !t.empty()) putBytes(dim, 2, t);
        putBytes(shape, 1, dim);
      }
      putBytes(tensor, 2, shape);
    }
    std::string type;
    putBytes(type, 1, tensor);
    return type;
  }
  /// A ValueInfoProto: the name, and the tensor type when the element type is known (ONNX
  /// has no tensor type without one) and the value is a tensor.
  std::string valueInfo(const std::string &name, const Fact &f, bool tensor = true) const {
    std::string vi;
    putBytes(vi, 1, name);
    if (tensor && f.type != ElementType::Undefined) putBytes(vi, 2, tensorType(f));
    return vi;
  }
  bool holdsTensor(const Graph &g, OutletId o) const { return !options.holdsTensor || options.holdsTensor(g, o); }

  /// ONNX packs 4-bit elements two to a byte, the first in the low nibble; in memory they take
  /// a byte each.
  static bool packed4(ElementType t) { return t == ElementType::I4 || t == ElementType::U4 || t == ElementType::F4E2M1; }

  /// A TensorProto: its fields, then its elements (a view of the tensor's storage, or written
  /// to the external data stream).
  std::vector<Chunk> tensorProto(const Tensor &t, const std::string &name) {
    std::string head;
    for (int64_t d : t.shape()) putInt(head, 1, d);
    putInt(head, 2, int64_t(t.type()));
    if (!name.empty()) putBytes(head, 8, name);
    if (t.isString()) {
      for (const std::string &s : t.strings()) putBytes(head, 6, s);
      return {std::move(head)};
    }
    std::span<const std::byte> bytes = t.bytes();
    std::string packed;
    if (packed4(t.type())) {
      packed.assign((bytes.size() + 1) / 2, '\0');
      for (size_t i = 0; i < bytes.size(); ++i)
        packed[i / 2] = char(uint8_t(packed[i / 2]) | ((uint8_t(bytes[i]) & 0x0f) << (4 * (i % 2))));
      bytes = std::as_bytes(std::span<const char>(packed.data(), packed.size()));
    }
    stats.weightBytes += int64_t(bytes.size());
    if (options.externalData && bytes.size() >= options.externalThreshold) {
      int64_t offset = int64_t(options.externalData->tellp());
      options.externalData->write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
      stats.externalBytes += int64_t(bytes.size());
      auto entry = [&](std::string_view k, const std::string &v) {
        std::string e;
        putBytes(e, 1, k);
        putBytes(e, 2, v);
        putBytes(head, 13, e);
      };
      entry("location", options.externalLocation);
      entry("offset", std::to_string(offset));
      entry("length", std::to_string(bytes.size()));
      putInt(head, 14, 1); // data_location = EXTERNAL
      return {std::move(head)};
    }
    putTag(head, 9, kLen);
    putVarint(head, bytes.size());
    if (!packed.empty()) return {head + packed};
    return {std::move(head), bytes};
  }

  /// An AttributeProto.
  std::string attribute(const std::string &name, const Attribute &a, const Scope &scope, uint32_t owner) {
    std::string out;
    putBytes(out, 1, name);
    const auto &v = a.value();
    auto type = [&](int t) { putInt(out, 20, t); };
    if (const auto *i = std::get_if<int64_t>(&v)) putInt(out, 3, *i), type(2);
    else if (const auto *f = std::get_if<double>(&v)) putFloat(out, 2, float(*f)), type(1);
    else if (const auto *s = std::get_if<std::string>(&v)) putBytes(out, 4, *s), type(3);
    else if (const auto *is = std::get_if<std::vector<int64_t>>(&v)) {
      for (int64_t x : *is) putInt(out, 8, x);
      type(7);
    } else if (const auto *fs = std::get_if<std::vector<double>>(&v)) {
      for (double x : *fs) putFloat(out, 7, float(x));
      type(6);
    } else if (const auto *ss = std::get_if<std::vector<std::string>>(&v)) {
      for (const auto &x : *ss) putBytes(out, 9, x);
      type(8);
    } else if (const auto *t = std::get_if<TensorPtr>(&v)) {
      putBytes(out, 5, flatten(tensorProto(**t, "")));
      type(4);
    } else if (const auto *ts = std::get_if<std::vector<TensorPtr>>(&v)) {
      for (const auto &x : *ts) putBytes(out, 10, flatten(tensorProto(*x, "")));
      type(9);
    } else if (const auto *g = std::get_if<GraphPtr>(&v)) {
      putBytes(out, 6, flatten(graph(**g, &scope, name, owner)));
      type(5);
    } else if (const auto *gs = std::get_if<std::vector<GraphPtr>>(&v)) {
      for (const auto &x : *gs) putBytes(out, 11, flatten(graph(*x, &scope, name, owner)));
      type(10);
    } else if (const auto *tp = std::get_if<TypePtr>(&v)) {
      putBytes(out, 14, tensorType(**tp));
      type(13);
    } else if (const auto *tps = std::get_if<std::vector<Fact>>(&v)) {
      for (const Fact &x : *tps) putBytes(out, 15, tensorType(x));
      type(14);
    }
    return out;
  }

  /// How many of an op's inputs are its own (the captured values a body reads come after).
  static size_t formalInputs(const Node &n) {
    size_t formal = n.inputs.size();
    for (const auto &[name, a] : n.attrs) {
      std::vector<GraphPtr> bodies;
      if (const auto *one = a.get<GraphPtr>()) bodies.push_back(*one);
      if (const auto *many = a.get<std::vector<GraphPtr>>()) bodies = *many;
      for (const GraphPtr &b : bodies)
        for (OutletId in : b ? b->inputs : std::vector<OutletId>{})
          if (auto k = b->nodes[in.node].attrs.getInt("captured"); k.ok()) formal = std::min(formal, size_t(*k));
    }
    return formal;
  }

  std::string node(const Node &n, const Scope &scope) {
    std::string out;
    size_t formal = formalInputs(n);
    for (size_t i = 0; i < formal; ++i)
      putBytes(out, 1, n.inputs[i].valid() ? scope.nameOf(n.inputs[i]) : std::string());
    for (const Outlet &o : n.outputs) putBytes(out, 2, o.name);
    if (!n.name.empty()) putBytes(out, 3, n.name);
    putBytes(out, 4, n.opType);
    for (const auto &[name, a] : n.attrs) putBytes(out, 5, attribute(name, a, scope, n.id));
    if (!n.domain.empty()) putBytes(out, 7, n.domain);
    return out;
  }

  /// A GraphProto as chunks (the main graph's constants as views of their storage).
  std::vector<Chunk> graph(const Graph &g, const Scope *parent, const std::string &name, uint32_t owner = kNoNode) {
    Scope scope{g, parent, owner};
    std::vector<Chunk> out;
    std::string head;
    auto order = g.topologicalOrder();
    std::vector<uint32_t> ids = order.ok() ? *order : std::vector<uint32_t>();
    std::set<OutletId> outputs(g.outputs.begin(), g.outputs.end());
    for (uint32_t id : ids) {
      const Node &n = g.nodes[id];
      if (n.kind != NodeKind::Op) continue;
      putBytes(head, 1, node(n, scope));
      if (!parent) ++stats.nodes;
    }
    putBytes(head, 2, g.name.empty() ? name : g.name);
    out.push_back(std::move(head));
    for (uint32_t id : ids) {
      const Node &n = g.nodes[id];
      if (!n.isConstant() || (n.outputs[0].successors.empty() && !outputs.count(OutletId{id, 0}))) continue;
      const Attribute *value = n.attrs.find("value");
      const TensorPtr *t = value ? value->get<TensorPtr>() : nullptr;
      if (!t || !*t) continue;
      auto tensor = tensorProto(**t, n.outputs[0].name);
      size_t size = 0;
      for (const Chunk &c : tensor) size += sizeOf(c);
      std::string tag;
      putTag(tag, 5, kLen);
      putVarint(tag, size);
      out.push_back(std::move(tag));
      for (Chunk &c : tensor) out.push_back(std::move(c));
      if (!parent) ++stats.initializers;
    }
    std::string tail;
    for (OutletId in : g.inputs) {
      const Node &p = g.nodes[in.node];
      if (p.isCaptured()) continue;
      const Outlet &o = p.outputs[0];
      putBytes(tail, 11, parent && o.declared ? valueInfo(o.name, *o.declared) : valueInfo(o.name, o.fact));
    }
    for (OutletId o : g.outputs) putBytes(tail, 12, valueInfo(scope.nameOf(o), g.fact(o), holdsTensor(g, o)));
    for (uint32_t id : ids) {
      const Node &n = g.nodes[id];
      if (n.kind != NodeKind::Op) continue;
      for (uint32_t k = 0; k < n.outputs.size(); ++k) {
        const Outlet &o = n.outputs[k];
        if (o.name.empty() || outputs.count(OutletId{id, k}) || o.fact.type == ElementType::Undefined ||
            !holdsTensor(g, OutletId{id, k}))
          continue;
        putBytes(tail, 13, valueInfo(o.name, o.fact));
      }
    }
    out.push_back(std::move(tail));
    return out;
  }
};

/// The top-level fields of `original` other than the graph, as they are.
Result<std::string> modelFieldsOf(std::string_view original) {
  std::string out;
  if (!detail::forEachTopLevelField(original, [&](uint32_t field, std::string_view whole) {
        if (field != 7) out.append(whole);
      }))
    return errorf("not an ONNX model (protobuf)");
  return out;
}

/// A model's fields for a graph given without a file (the text form): the opsets its nodes import.
std::string modelFieldsFor(const Graph &g) {
  std::string out;
  putInt(out, 1, 10); // ir_version 10 (ONNX 1.16+)
  putBytes(out, 2, "shapeflow");
  std::map<std::string, int> opsets{{"", 0}};
  std::function<void(const Graph &)> visit = [&](const Graph &graph) {
    for (const Node &n : graph.nodes) {
      if (n.kind != NodeKind::Op) continue;
      opsets[n.domain] = std::max(opsets[n.domain], n.opsetVersion);
      for (const auto &[name, a] : n.attrs) {
        if (const auto *one = a.get<GraphPtr>(); one && *one) visit(**one);
        if (const auto *many = a.get<std::vector<GraphPtr>>())
          for (const auto &b : *many)
            if (b) visit(*b);
      }
    }
  };
  visit(g);
  for (const auto &[domain, version] : opsets) {
    std::string o;
    if (!domain.empty()) putBytes(o, 1, domain);
    putInt(o, 2, version > 0 ? version : 1);
    putBytes(out, 8, o);
  }
  return out;
}

} // namespace

Result<WriteStats> writeModel(const Graph &g, std::string_view original, std::ostream &os,
                              const WriteOptions &options) {
  ExprScope scope = g.enter();
  std::string fields;
  if (original.empty()) fields = modelFieldsFor(g);
  else {
    SF_ASSIGN(fields, modelFieldsOf(original));
  }
  Writer w{options, {}};
  std::vector<Chunk> graph = w.graph(g, nullptr, g.name.empty() ? "main" : g.name);
  size_t size = 0;
  for (const Chunk &c : graph) size += sizeOf(c);
  std::string tag;
  putTag(tag, 7, kLen);
  putVarint(tag, size);
  os.write(fields.data(), std::streamsize(fields.size()));
  os.write(tag.data(), std::streamsize(tag.size()));
  for (const Chunk &c : graph) writeChunk(os, c);
  if (!os) return errorf("writing the model failed");
  return w.stats;
}

} // namespace sf::onnx
