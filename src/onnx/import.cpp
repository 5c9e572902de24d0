// The ONNX importer: ModelView (wire level) -> Graph (IR): graphs, their names and nodes,
// local functions, subgraphs (the importer's state in importer.h; types, tensors, attributes
// and Constant values in import_values.cpp); and the loaders of model files.
#include "shapeflow/onnx/import.h"

#include "importer.h"

#include "shapeflow/ir/text.h"
#include "shapeflow/onnx/sniff.h"

#include <algorithm>
#include <array>
#include <absl/container/flat_hash_set.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sf::onnx::import_detail {

std::string Importer::functionKey(std::string_view domain, std::string_view name,
                                  std::string_view overload) {
  return normDomain(domain) + '\0' + str(name) + '\0' + str(overload);
}

const FunctionView *Importer::functionFor(const NodeView &n) {
  if (model.functions.empty()) return nullptr;
  if (functionIndex.empty())
    for (const auto &f : model.functions)
      functionIndex.emplace(functionKey(f.domain, f.name, f.overload), &f);
  auto it = functionIndex.find(functionKey(n.domain, n.opType, n.overload));
  return it == functionIndex.end() ? nullptr : it->second;
}

Result<const std::vector<NodeView> *> Importer::expandCalls(const std::vector<NodeView> &nodes,
                                                           std::vector<NodeView> &storage) {
  if (model.functions.empty()) return &nodes;
  // Count first, so that a small file cannot make the importer build a huge graph.
  bool any = false;
  size_t total = 0;
  for (const auto &n : nodes) {
    any = any || functionFor(n);
    SF_ASSIGN(size_t c, expandedCount(n, 0));
    total = std::min(total + c, kMaxExpandedNodes + 1);
  }
  if (!any) return &nodes;
  if (total > kMaxExpandedNodes)
    return makeError("more than " + std::to_string(kMaxExpandedNodes) +
                     " nodes after expanding local functions");
  for (size_t i = 0; i < nodes.size(); ++i) SF_TRY(expandInto(nodes[i], i, storage, 0));
  return &storage;
}

Result<size_t> Importer::expandedCount(const NodeView &n, int level) {
  const FunctionView *f = functionFor(n);
  if (!f) return size_t(1);
  if (level >= 32)
    return makeError("node '" + str(n.name) + "' (" + str(n.opType) +
                     "): local functions call each other more than 32 deep");
  auto it = countMemo.find(f);
  if (it != countMemo.end()) return it->second;
  size_t total = 0;
  for (const NodeView &b : f->nodes) {
    SF_ASSIGN(size_t c, expandedCount(b, level + 1));
    total = std::min(total + c, kMaxExpandedNodes + 1);
  }
  countMemo[f] = total;
  return total;
}

Result<void> Importer::expandInto(const NodeView &n, size_t index, std::vector<NodeView> &out,
                                  int level) {
  const FunctionView *f = functionFor(n);
  if (!f) {
    if (++expandedNodes > kMaxExpandedNodes)
      return makeError("more than " + std::to_string(kMaxExpandedNodes) +
                       " nodes after expanding local functions");
    out.push_back(n);
    return success();
  }
  std::string callName = n.name.empty() ? str(n.opType) + "_" + std::to_string(index) : str(n.name);
  if (level >= 32)
    return makeError("node '" + callName + "' (" + str(n.opType) +
                     "): local functions call each other more than 32 deep");
  std::string prefix = callName + "/" + std::to_string(callCounter++) + "/";
  std::unordered_map<std::string_view, std::string_view> rename;
  for (size_t i = 0; i < f->inputs.size(); ++i)
    rename[f->inputs[i]] = i < n.inputs.size() ? n.inputs[i] : std::string_view();
  for (size_t i = 0; i < f->outputs.size(); ++i)
    rename[f->outputs[i]] = i < n.outputs.size() ? n.outputs[i] : own(prefix + str(f->outputs[i]));
  auto map = [&](std::string_view name) -> std::string_view {
    if (name.empty()) return name;
    auto it = rename.find(name);
    if (it != rename.end()) return it->second;
    std::string_view fresh = own(prefix + str(name));
    rename[name] = fresh;
    return fresh;
  };
  size_t bodyIndex = 0;
  for (const NodeView &b : f->nodes) {
    NodeView c = b;
    c.name = own(prefix + (b.name.empty() ? str(b.opType) + "_" + std::to_string(bodyIndex) : str(b.name)));
    ++bodyIndex;
    for (auto &i : c.inputs) i = map(i);
    for (auto &o : c.outputs) o = map(o);
    c.attributes.clear();
    for (const AttributeView &a : b.attributes) {
      if (a.refAttrName.empty()) {
        c.attributes.push_back(a);
        continue;
      }
      const AttributeView *bound = nullptr;
      for (const auto &ca : n.attributes)
        if (ca.name == a.refAttrName) bound = &ca;
      if (!bound)
        for (const auto &d : f->attributeDefaults)
          if (d.name == a.refAttrName) bound = &d;
      if (!bound) continue; // unset and without a default: the op's own default applies
      AttributeView v = *bound;
      v.name = a.name;
      v.refAttrName = {};
      c.attributes.push_back(std::move(v));
    }
    SF_TRY(expandInto(c, bodyIndex, out, level + 1));
  }
  return success();
}

Result<GraphPtr> Importer::importSubgraph(const GraphView &gv, Scope &outer) {
  if (++depth > 64) return makeError("subgraphs nested deeper than 64");
  auto g = std::make_shared<Graph>();
  Scope inner;
  inner.graph = g.get();
  inner.parent = &outer;
  auto r = importInto(gv, *g, inner);
  --depth;
  if (!r.ok()) return r.takeError();
  // The owning node will read these outer names: make sure the outer scope has them (it may
  // itself capture them from further out).
  for (const auto &name : inner.captured) outer.resolve(name);
  lastCaptured.assign(inner.captured.begin(), inner.captured.end());
  return g;
}

void Importer::patchCaptures(Attributes &attrs, const std::vector<std::string> &captured,
                             size_t declared) {
  auto patch = [&](Graph &body) {
    for (const OutletId &in : body.inputs) {
      Node &p = body.nodes[in.node];
      if (!p.isCaptured()) continue;
      auto it = std::find(captured.begin(), captured.end(), p.outputs[0].name);
      if (it != captured.end())
        p.attrs.set("captured", Attribute(int64_t(declared + (it - captured.begin()))));
    }
  };
  for (auto &item : attrs) {
    Attribute &a = item.second;
    if (auto *g = a.get<GraphPtr>()) patch(**g);
    if (auto *gs = a.get<std::vector<GraphPtr>>())
      for (auto &g : *gs) patch(*g);
  }
}

Result<bool> Importer::connectLocal(Graph &g, uint32_t id, std::span<const std::string_view> inputs,
                                    const Scope &scope) {
  SmallVec<OutletId, 4> sources;
  for (std::string_view name : inputs) {
    if (name.empty()) {
      sources.push_back(OutletId::invalid());
      continue;
    }
    auto it = scope.names.find(name);
    if (it == scope.names.end()) return false;
    sources.push_back(it->second);
  }
  Node &node = g.nodes[id];
  if (node.isConstant() && node.inputs.empty() && inputs.empty()) return true;
  node.inputs.reserve(inputs.size());
  for (OutletId src : sources) SF_TRY(g.addInput(id, src));
  return true;
}

namespace {

/// One graph's import (Importer::importInto): its nodes as read, the types declared for their
/// outputs, and the nodes still to connect after the first pass.
struct GraphImport {
  Importer &imp;
  const GraphView &gv;
  Graph &g;
  Scope &scope;

  std::vector<NodeView> decoded, expanded;
  const std::vector<NodeView> *nodes = &gv.nodes;
  bool streaming = false;
  std::optional<NodeDecoder> decoder;
  size_t count = 0;

  struct Pending {
    uint32_t id;
    const NodeView *view;
  };
  std::vector<Pending> pending;
  std::unordered_map<uint32_t, std::vector<std::string>> capturedInputs;
  absl::flat_hash_map<std::string_view, const ValueInfoView *> declared;
  size_t connected = 0; // pending[0, connected) are connected already
  // The name tables outgrow the cache on large graphs: the slots a few nodes ahead are
  // prefetched (their names are read in order from the file) while this node is built.
  static constexpr size_t kAhead = 4;
  std::array<NodeView, kAhead + 1> ring; // streaming: node i is in ring[i % (kAhead + 1)]
  std::deque<NodeView> kept;             // streaming: copies of the nodes left for pass two

  GraphImport(Importer &imp, const GraphView &gv, Graph &g, Scope &scope)
      : imp(imp), gv(gv), g(g), scope(scope) {}

  /// The whole import, in order: nodes read, inputs and initializers, nodes, connections, outputs.
  Result<void> run() {
    g.name = str(gv.name);
    SF_TRY(readNodes());
    SF_TRY(addInputs());
    // Reading the initializers' names touched a page of every weight, and the kernel maps the
    // cached pages around each: drop them from the process before the nodes grow the heap (what
    // is read later comes back from the kernel's cache).
    if (imp.depth == 0) releaseFilePages(imp.model);
    // Nodes: create them all, then connect by name (files are not always in topological order).
    declared.reserve(gv.valueInfo.size() + gv.outputs.size());
    for (const auto &vi : gv.valueInfo) declared[vi.name] = &vi;
    for (const auto &vi : gv.outputs) declared[vi.name] = &vi;
    pending.reserve(count);
    SF_TRY(addNodes());
    SF_TRY(connectRest());
    for (const auto &out : gv.outputs) {
      auto o = scope.resolve(out.name);
      if (!o)
        return makeError("graph '" + g.name + "': output '" + str(out.name) + "' is not produced by any node");
      g.outputs.push_back(*o);
    }
    return success();
  }

  /// The nodes to build (decoded, calls expanded) and room for them in the graph and the scope.
  Result<void> readNodes() {
    // Calls of local functions expanded first, so that the node count is known: room for every
    // node up front (growing the vector moves every node each time it doubles).
    //
    // Nodes the reader left encoded (ReadOptions::deferNodes: the main graph, from
    // loadModelFile) are decoded one at a time, a few ahead of the one being built, into a ring
    // of reused views: the graph's views never exist all at once. With local functions to
    // expand, all of them are decoded first instead.
    streaming = !gv.encodedNodes.empty() && imp.model.functions.empty();
    if (!gv.encodedNodes.empty()) {
      decoder.emplace(imp.model);
      if (!streaming) {
        SF_ASSIGN(decoded, decoder->decodeAll());
        nodes = &decoded;
      }
    }
    if (!streaming) {
      SF_ASSIGN(nodes, imp.expandCalls(*nodes, expanded));
    }
    count = streaming ? gv.encodedNodes.size() : nodes->size();
    g.reserve(g.nodes.size() + gv.inputs.size() + gv.initializers.size() + count);
    scope.names.reserve(scope.names.size() + gv.inputs.size() + gv.initializers.size() +
                        2 * count);
    return success();
  }

  /// The graph inputs as Parameters and the initializers as Constants, named in the scope.
  Result<void> addInputs() {
    absl::flat_hash_set<std::string_view> initNames;
    initNames.reserve(gv.initializers.size());
    for (const auto &t : gv.initializers) initNames.insert(t.name);
    // Graph inputs (those that are not also initializers: old exporters list weights as inputs).
    for (const auto &in : gv.inputs) {
      if (initNames.count(in.name)) continue;
      std::string name = str(in.name);
      if (scope.names.count(in.name))
        return makeError("graph '" + g.name + "': input '" + name + "' is declared twice");
      SF_ASSIGN(OutletId o,
                g.addParameter(name, imp.factFromType(in.type, true, fmt::format("input '{}'", name),
                                                      imp.depth == 0 ? std::string_view(name) : std::string_view())));
      scope.names[in.name] = o;
    }
    for (const auto &t : gv.initializers) {
      auto tensor = imp.tensorFrom(t);
      if (!tensor.ok())
        return makeError("graph '" + g.name + "': initializer '" + str(t.name) + "': " + tensor.error().message);
      if (scope.names.count(t.name))
        return makeError("graph '" + g.name + "': initializer '" + str(t.name) + "': name '" +
                         str(t.name) + "' is already used by an initializer");
      SF_ASSIGN(OutletId o, g.appendConstant(str(t.name), *tensor));
      g.nodes[o.node].attrs.set("initializer", Attribute(int64_t(1)));
      // Keyed by a copy: the nodes' lookups must not read the file's pages among the weights.
      scope.names[imp.own(str(t.name))] = o;
    }
    return success();
  }

  /// Node `i` of the graph (streaming: from the ring, decoded kAhead nodes before it is built).
  const NodeView &nodeAt(size_t i) const { return streaming ? ring[i % ring.size()] : (*nodes)[i]; }

  /// Pass one: every node built and its outputs named, connected at once where its inputs are
  /// produced before it.
  Result<void> addNodes() {
    if (streaming)
      for (size_t i = 0; i < std::min(kAhead, count); ++i) SF_TRY(decoder->decode(i, ring[i]));
    for (size_t index = 0; index < count; ++index) {
      if (index + kAhead < count) {
        if (streaming) SF_TRY(decoder->decode(index + kAhead, ring[(index + kAhead) % ring.size()]));
        for (std::string_view o : nodeAt(index + kAhead).outputs) scope.names.prefetch(o);
      }
      const NodeView &n = nodeAt(index);
      std::string nodeName = n.name.empty() ? str(n.opType) + "_" + std::to_string(index) : str(n.name);
      uint32_t id;
      if (n.opType == "Constant" && normDomain(n.domain).empty()) {
        SF_ASSIGN(id, addConstant(n, nodeName));
      } else {
        SF_ASSIGN(id, addOp(n, nodeName));
      }
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        std::string_view out = n.outputs[i];
        if (out.empty()) continue;
        auto [it, fresh] = scope.names.try_emplace(out, OutletId{id, uint32_t(i)});
        if (!fresh)
          return makeError("graph '" + g.name + "': tensor '" + str(out) +
                           "' is produced twice (node '" + nodeName + "')");
      }
      pending.push_back({id, &n});
      // A node whose inputs are all produced earlier in this graph (the common, topologically
      // sorted file) is connected now, while its producers are still in the cache; from the first
      // node that reads a later name or captures an outer one, the rest wait for the second pass,
      // which connects them in file order (so readers are listed in the same order either way).
      if (connected + 1 == pending.size() && !capturedInputs.count(id)) {
        SF_ASSIGN(bool done, Importer::connectLocal(g, id, n.inputs, scope));
        if (done) ++connected;
      }
      // Its ring slot is reused for a node further on: pass two reads a copy.
      if (streaming && connected < pending.size()) pending.back().view = &kept.emplace_back(n);
    }
    return success();
  }

  /// A Constant node (its value from its attributes); its id.
  Result<uint32_t> addConstant(const NodeView &n, const std::string &nodeName) {
    auto v = imp.constantValue(n);
    if (!v.ok())
      return makeError("node '" + nodeName + "' (Constant): " + v.error().message);
    if (n.outputs.size() != 1)
      return makeError("node '" + nodeName + "' (Constant): expected one output");
    auto o = g.appendConstant(str(n.outputs[0]), *v);
    if (!o.ok()) return makeError("node '" + nodeName + "' (Constant): " + o.error().message);
    g.nodes[o->node].name = nodeName;
    return o->node;
  }

  /// Any other node: its attributes (subgraphs imported, their captures noted), its outputs'
  /// declared types; its id.
  Result<uint32_t> addOp(const NodeView &n, const std::string &nodeName) {
    Attributes attrs;
    std::vector<std::string> captured;
    for (const auto &a : n.attributes) {
      imp.lastCaptured.clear();
      auto attr = imp.attributeFrom(a, scope);
      if (!attr.ok())
        return makeError("node '" + nodeName + "' (" + str(n.opType) + "): " + attr.error().message);
      for (const auto &c : imp.lastCaptured)
        if (std::find(captured.begin(), captured.end(), c) == captured.end()) captured.push_back(c);
      attrs.set(str(a.name), std::move(*attr));
    }
    // The names are checked here (in the scope) rather than by the graph's index.
    for (size_t i = 0; i < n.outputs.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (!n.outputs[i].empty() && n.outputs[i] == n.outputs[j])
          return makeError("node '" + nodeName + "' (" + str(n.opType) + "): node '" +
                           nodeName + "' names two outputs '" + str(n.outputs[i]) + "'");
    Importer::patchCaptures(attrs, captured, n.inputs.size());
    auto added = g.appendNode(str(n.opType), nodeName, n.outputs, std::move(attrs));
    if (!added.ok())
      return makeError("node '" + nodeName + "' (" + str(n.opType) + "): " + added.error().message);
    uint32_t id = *added;
    Node &node = g.nodes[id];
    node.domain = normDomain(n.domain);
    node.opsetVersion = imp.opsetOf(n.domain);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      auto d = declared.find(n.outputs[i]);
      if (d == declared.end()) continue;
      // A value_info without a type still marks the name as declared (the annotated model
      // does not list it twice); its fact is unknown.
      static const auto kUntyped = std::make_shared<const Fact>();
      node.outputs[i].declared =
          d->second->hasType ? std::make_shared<const Fact>(imp.factFromType(
                                   d->second->type, false, fmt::format("the type of '{}'", d->first)))
                             : kUntyped;
    }
    // Captured outer values, as extra inputs (resolved below with the declared ones).
    if (!captured.empty()) capturedInputs[id] = std::move(captured);
    return id;
  }

  /// Pass two: the nodes pass one left unconnected, in file order, reading names of enclosing
  /// graphs (captured) or produced later.
  Result<void> connectRest() {
    for (size_t k = connected; k < pending.size(); ++k) {
      const Pending &p = pending[k];
      if (k + kAhead < pending.size())
        for (std::string_view in : pending[k + kAhead].view->inputs) scope.names.prefetch(in);
      // No reference into g.nodes across the loop: resolving a name this graph captures from an
      // enclosing one adds a Parameter to g.nodes, which may reallocate it.
      if (g.nodes[p.id].isConstant() && g.nodes[p.id].inputs.empty() && p.view->inputs.empty())
        continue;
      auto connect = [&](std::string_view name) -> Result<void> {
        OutletId src = OutletId::invalid();
        if (!name.empty()) {
          auto o = scope.resolve(name);
          if (!o)
            return makeError("node '" + g.nodes[p.id].name + "' (" + g.nodes[p.id].opType +
                             "): input '" + str(name) +
                             "' is not produced by any node, initializer or graph input");
          src = *o;
        }
        SF_TRY(g.addInput(p.id, src));
        return success();
      };
      g.nodes[p.id].inputs.reserve(p.view->inputs.size());
      for (std::string_view name : p.view->inputs) SF_TRY(connect(name));
      if (auto c = capturedInputs.find(p.id); c != capturedInputs.end())
        for (const auto &name : c->second) SF_TRY(connect(name));
    }
    return success();
  }
};

} // namespace

Result<void> Importer::importInto(const GraphView &gv, Graph &g, Scope &scope) {
  GraphImport work(*this, gv, g, scope);
  return work.run();
}

} // namespace sf::onnx::import_detail

namespace sf::onnx {

using import_detail::Importer;
using import_detail::normDomain;
using import_detail::Scope;

Result<Graph> importModel(const ModelView &model, Diagnostics &diags, const ImportOptions &options) {
  Graph g;
  g.context = makeExprContext();
  ExprScope exprScope(g.context);
  Importer imp(model, diags, options);
  for (const auto &o : model.opsets) imp.opsets[normDomain(o.domain)] = o.version;
  if (!imp.opsets.count("")) imp.opsets[""] = 1;
  imp.symbols = &g.symbols;
  // A dimension the model names (dim_param) is taken to be at least 1 (README: assumptions);
  // `--dim N=0..` widens it again.
  g.symbols.setDefaultRange({1, kInf});
  Scope scope;
  scope.graph = &g;
  SF_TRY(imp.importInto(model.graph, g, scope));
#ifndef NDEBUG
  // The graph is built through the editing API, which keeps its invariants, and the scopes
  // refused duplicate names as they were read; checked again in debug builds (CI's sanitizer
  // build) and by the fuzz harnesses on every imported graph, not in a release load.
  SF_TRY(g.verify());
#endif
  return g;
}

Result<Graph> loadModelFile(const std::string &path, Diagnostics &diags, const ImportOptions &options) {
  SF_ASSIGN(ModelView model, readModelFile(path, {}, ReadOptions{.deferNodes = true}));
  auto g = importModel(model, diags, options);
  if (!g.ok()) return makeError(path + ": " + g.error().message);
  return g;
}

namespace {

/// A file's first bytes, or why it cannot be read as a model (a directory, a missing file).
Result<std::string> fileHead(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return errorf("{}: is a directory, not a model file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return errorf("{}: cannot open", path);
  std::string head(64, '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  return head;
}

std::string_view withoutPrefix(std::string_view message, std::string_view label) {
  if (message.substr(0, label.size()) == label && message.substr(label.size(), 2) == ": ")
    message.remove_prefix(label.size() + 2);
  return message;
}

/// What a front end does with bytes sniffModelBytes() calls Other: JSON, text, an image ... are
/// named for what they are; binary bytes of no known kind may still be a protobuf model that
/// starts with an unusual field, so the reader gets them, and its error is the detail.
template <class LoadOnnx, class ParseText>
Result<Graph> loadOther(std::string_view label, const Sniffed &s, bool text, LoadOnnx loadOnnx, ParseText parseText) {
  if (text) {
    auto g = parseText();
    if (g.ok()) return g;
    return makeError(notAModel(label, s, g.error().message));
  }
  if (s.looksLike.find("does not start like") == std::string::npos) return makeError(notAModel(label, s, ""));
  auto g = loadOnnx();
  if (g.ok()) return g;
  return makeError(notAModel(label, s, withoutPrefix(g.error().message, label)));
}

bool textOther(const Sniffed &s) {
  return s.looksLike == "JSON" || s.looksLike == "XML or HTML" || s.looksLike.rfind("text", 0) == 0;
}

} // namespace

Result<Graph> loadGraphBuffer(std::string_view bytes, Diagnostics &diags, std::string_view label,
                              const ImportOptions &options) {
  auto onnx = [&]() -> Result<Graph> {
    SF_ASSIGN(ModelView model, readModelBuffer(bytes, {}, label));
    auto g = importModel(model, diags, options);
    if (!g.ok()) return errorf("{}: {}", label, g.error().message);
    return g;
  };
  auto text = [&]() -> Result<Graph> {
    auto g = parseGraph(bytes);
    if (!g.ok()) return errorf("{}: {}", label, g.error().message);
    return g;
  };
  Sniffed s = sniffModelBytes(bytes.substr(0, 64));
  if (s.kind == FileKind::Onnx) return onnx();
  if (s.kind == FileKind::TextGraph) return text();
  return loadOther(label, s, textOther(s), onnx, [&] { return parseGraph(bytes); });
}

Result<Graph> loadGraphFile(const std::string &path, Diagnostics &diags, const ImportOptions &options) {
  SF_ASSIGN(std::string head, fileHead(path));
  Sniffed s = sniffModelBytes(head);
  auto onnx = [&] { return loadModelFile(path, diags, options); };
  auto parse = [&]() -> Result<Graph> {
    std::ifstream in(path, std::ios::binary);
    if (!in) return errorf("cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    return parseGraph(ss.str());
  };
  if (s.kind == FileKind::Onnx) return onnx();
  if (s.kind == FileKind::TextGraph) {
    auto g = parse();
    if (!g.ok()) return errorf("{}: {}", path, g.error().message);
    return g;
  }
  return loadOther(path, s, textOther(s), onnx, parse);
}

} // namespace sf::onnx
