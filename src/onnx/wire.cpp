// The ONNX ModelProto reader: one function per message of onnx.proto, walking the wire format
// with WireReader and filling the views of wire.h. Field numbers are those of onnx.proto (IR
// version 10 and earlier; newer fields the importer does not need are skipped like unknown ones,
// but their wire types are still checked).
// This file: the model, graphs, nodes and functions, and the entry points; attributes, types
// and tensors in wire_values.cpp (the parser's class in wire_parser.h).
#include "shapeflow/onnx/wire.h"

#include "wire_parser.h"

#include <algorithm>
#include <climits>
#include <filesystem>

namespace sf::onnx {

namespace detail {

bool Parser::deferredNode(const GraphView &g, size_t index, size_t counted, NodeView &n) {
  const EncodedNode &e = g.encodedNodes[index];
  const WireReader::ItemFrame path[] = {{Scope::Graph, -1, g.wireBegin, g.wireEnd},
                                        {Scope::Node, static_cast<int64_t>(index), e.begin, e.end}};
  r_.resume(path, 2); // inside the model's graph (1) and the node (2)
  graphDepth_ = 1;
  nodeCount_ = counted;
  n.name = n.opType = n.domain = n.overload = {};
  n.inputs.clear();
  n.outputs.clear();
  n.attributes.clear();
  if (!nodeBody(n) || r_.failed()) return false;
  if (r_.position() != e.end) return r_.fail("internal error: message not read to its end");
  return true;
}

bool Parser::model(ModelView &m) {
  bool hasGraph = false;
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.int64(f, "ir_version", m.irVersion); break;
    case 2: ok = r_.bytes(f, "producer_name", m.producerName); break;
    case 3: ok = r_.bytes(f, "producer_version", m.producerVersion); break;
    case 4: ok = r_.bytes(f, "domain", m.domain); break;
    case 5: ok = r_.int64(f, "model_version", m.modelVersion); break;
    case 6: ok = r_.ignore(f, "doc_string", kLen); break;
    case 7:
      hasGraph = true;
      ok = graph(f, "graph", -1, m.graph);
      break;
    case 8: ok = opsetImport(f, m.opsets); break;
    case 14:
      grow(m.metadata, f);
      ok = r_.message(f, "metadata_props",
                      [&] { return stringPair(m.metadata.emplace_back()); });
      break;
    case 20: ok = r_.ignore(f, "training_info", kLen); break;
    case 25:
      grow(m.functions, f);
      ok = r_.item(f, "functions", Scope::Function, static_cast<int64_t>(m.functions.size()),
                   [&] { return function(m.functions.emplace_back()); });
      break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  if (r_.failed()) return false;
  if (!hasGraph) return r_.fail("model has no graph (field 7)");
  return true;
}

bool Parser::graph(const Field &f, const char *name, int64_t index, GraphView &g) {
  if (++graphDepth_ > r_.limits().maxGraphDepth)
    return r_.fail("subgraphs nested deeper than " + std::to_string(r_.limits().maxGraphDepth) +
                   " levels");
  bool ok = r_.item(f, name, Scope::Graph, index, [&] { return graphBody(g); });
  --graphDepth_;
  return ok;
}

bool Parser::graphBody(GraphView &g) {
  // The main graph's nodes may be left encoded (deferNodes); a subgraph's are read with the
  // node that holds it.
  bool defer = deferNodes_ && graphDepth_ == 1;
  if (defer) {
    g.wireBegin = r_.itemBegin();
    g.wireEnd = r_.itemEnd();
  }
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = defer ? encodedNode(f, g.encodedNodes) : node(f, g.nodes); break;
    case 2: ok = r_.bytes(f, "name", g.name); break;
    case 5:
      grow(g.initializers, f);
      ok = r_.item(f, "initializer", Scope::Initializer,
                   static_cast<int64_t>(g.initializers.size()),
                   [&] { return tensor(g.initializers.emplace_back()); });
      break;
    case 10: ok = r_.ignore(f, "doc_string", kLen); break;
    case 11: ok = valueInfo(f, "input", Scope::Input, g.inputs); break;
    case 12: ok = valueInfo(f, "output", Scope::Output, g.outputs); break;
    case 13: ok = valueInfo(f, "value_info", Scope::ValueInfo, g.valueInfo); break;
    case 14: ok = r_.ignore(f, "quantization_annotation", kLen); break;
    case 15:
      grow(g.sparseInitializers, f);
      ok = r_.item(f, "sparse_initializer", Scope::SparseInitializer,
                   static_cast<int64_t>(g.sparseInitializers.size()),
                   [&] { return sparseTensor(g.sparseInitializers.emplace_back()); });
      break;
    case 16: ok = r_.ignore(f, "metadata_props", kLen); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed() && checkInitializerNames(g);
}

// Initializers and sparse initializers share one namespace; sort the names once instead of
// hashing each.
bool Parser::checkInitializerNames(const GraphView &g) {
  size_t n = g.initializers.size() + g.sparseInitializers.size();
  if (n == 0) return true;
  struct Entry {
    std::string_view name;
    size_t index;
    bool sparse;
  };
  std::vector<Entry> names;
  names.reserve(n);
  auto describe = [](const Entry &e) {
    return std::string(e.sparse ? "sparse_initializer " : "initializer ") +
           std::to_string(e.index);
  };
  for (size_t i = 0; i < g.initializers.size(); ++i)
    names.push_back({g.initializers[i].name, i, false});
  for (size_t i = 0; i < g.sparseInitializers.size(); ++i)
    names.push_back({g.sparseInitializers[i].values.name, i, true});
  for (const Entry &e : names)
    if (e.name.empty()) return r_.failAt(r_.itemBegin(), describe(e) + " has no name");
  std::sort(names.begin(), names.end(), [](const Entry &a, const Entry &b) {
    if (a.name != b.name) return a.name < b.name;
    return a.sparse != b.sparse ? !a.sparse : a.index < b.index;
  });
  for (size_t i = 1; i < names.size(); ++i)
    if (names[i].name == names[i - 1].name)
      return r_.failAt(r_.itemBegin(),
                       "duplicate initializer name '" + std::string(names[i].name) + "' (" +
                           describe(names[i - 1]) + " and " + describe(names[i]) + ")");
  return true;
}

bool Parser::node(const Field &f, std::vector<NodeView> &nodes) {
  if (++nodeCount_ > r_.limits().maxNodes)
    return r_.fail("more than " + std::to_string(r_.limits().maxNodes) + " nodes");
  grow(nodes, f);
  return r_.item(f, "node", Scope::Node, static_cast<int64_t>(nodes.size()),
                 [&] { return nodeBody(nodes.emplace_back()); });
}

bool Parser::encodedNode(const Field &f, std::vector<EncodedNode> &nodes) {
  if (++nodeCount_ > r_.limits().maxNodes)
    return r_.fail("more than " + std::to_string(r_.limits().maxNodes) + " nodes");
  // Plain doubling: counting the run first (grow) would walk every node's header once more,
  // a pass over the whole graph's bytes; these entries are 8 bytes.
  std::string_view payload;
  if (!r_.messageBytes(f, "node", payload)) return false;
  int begin = r_.position() - static_cast<int>(payload.size());
  nodes.push_back({begin, r_.position()});
  return true;
}

bool Parser::nodeBody(NodeView &n) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.bytes(f, "input", grow(n.inputs, f).emplace_back()); break;
    case 2: ok = r_.bytes(f, "output", grow(n.outputs, f).emplace_back()); break;
    case 3: ok = r_.bytes(f, "name", n.name); break;
    case 4: ok = r_.bytes(f, "op_type", n.opType); break;
    case 5: ok = attribute(f, n.attributes); break;
    case 6: ok = r_.ignore(f, "doc_string", kLen); break;
    case 7: ok = r_.bytes(f, "domain", n.domain); break;
    case 8: ok = r_.bytes(f, "overload", n.overload); break;
    case 9: ok = r_.ignore(f, "metadata_props", kLen); break;
    case 10: ok = r_.ignore(f, "device_configurations", kLen); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::opsetImport(const Field &f, std::vector<OpsetImport> &opsets) {
  grow(opsets, f);
  return r_.item(f, "opset_import", Scope::OpsetImport, static_cast<int64_t>(opsets.size()), [&] {
    OpsetImport &o = opsets.emplace_back();
    Field g;
    while (r_.next(g)) {
      bool ok;
      switch (g.number) {
      case 1: ok = r_.bytes(g, "domain", o.domain); break;
      case 2: ok = r_.int64(g, "version", o.version); break;
      default: ok = r_.skip(g);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  });
}

bool Parser::stringPair(StringPairView &p) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.bytes(f, "key", p.key); break;
    case 2: ok = r_.bytes(f, "value", p.value); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

bool Parser::function(FunctionView &fn) {
  Field f;
  while (r_.next(f)) {
    bool ok;
    switch (f.number) {
    case 1: ok = r_.bytes(f, "name", fn.name); break;
    case 4: ok = r_.bytes(f, "input", grow(fn.inputs, f).emplace_back()); break;
    case 5: ok = r_.bytes(f, "output", grow(fn.outputs, f).emplace_back()); break;
    case 6: ok = r_.bytes(f, "attribute", grow(fn.attributes, f).emplace_back()); break;
    case 7: ok = node(f, fn.nodes); break;
    case 8: ok = r_.ignore(f, "doc_string", kLen); break;
    case 9: ok = opsetImport(f, fn.opsets); break;
    case 10: ok = r_.bytes(f, "domain", fn.domain); break;
    case 11: ok = attribute(f, fn.attributeDefaults); break;
    case 12: ok = valueInfo(f, "value_info", Scope::ValueInfo, fn.valueInfo); break;
    case 13: ok = r_.bytes(f, "overload", fn.overload); break;
    case 14: ok = r_.ignore(f, "metadata_props", kLen); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
  }
  return !r_.failed();
}

namespace {

Result<void> checkSize(std::string_view bytes, std::string_view label) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return makeError(std::string(label) + ": " + std::to_string(bytes.size()) +
                     " bytes is more than the 2 GiB protobuf allows for one message "
                     "(keep the weights as external data)");
  return success();
}

} // namespace
} // namespace detail

Result<ModelView> readModelBuffer(std::string_view bytes, const ReadLimits &limits,
                                  std::string_view label, const ReadOptions &options) {
  SF_TRY(detail::checkSize(bytes, label));
  ModelView m;
  m.storage = std::make_shared<ModelStorage>();
  detail::Parser parser(bytes, label, limits, options.deferNodes);
  if (!parser.model(m)) return makeError(parser.reader().error());
  m.storage->bytes = bytes;
  m.storage->limits = limits;
  m.storage->nodesRead = parser.nodeCount();
  return m;
}

struct NodeDecoder::Impl {
  const ModelView &model;
  detail::Parser parser;
  size_t counted; // nodes counted against the limit so far: the reader's, then each decode's
  Impl(const ModelView &m)
      : model(m), parser(m.storage ? m.storage->bytes : std::string_view(), "",
                         m.storage ? m.storage->limits : ReadLimits{}),
        counted(m.storage ? m.storage->nodesRead : 0) {}
};

NodeDecoder::NodeDecoder(const ModelView &model) : impl_(std::make_unique<Impl>(model)) {}
NodeDecoder::~NodeDecoder() = default;

Result<void> NodeDecoder::decode(size_t index, NodeView &out) {
  const GraphView &g = impl_->model.graph;
  if (index >= g.encodedNodes.size() || !impl_->model.storage)
    return makeError("node " + std::to_string(index) + " was not left encoded by the reader");
  // The node itself was counted by the reader; what it holds (subgraphs' nodes) counts now.
  if (!impl_->parser.deferredNode(g, index, impl_->counted, out))
    return makeError(impl_->parser.reader().error());
  impl_->counted = impl_->parser.nodeCount();
  return success();
}

Result<std::vector<NodeView>> NodeDecoder::decodeAll() {
  std::vector<NodeView> nodes(impl_->model.graph.encodedNodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) SF_TRY(decode(i, nodes[i]));
  return nodes;
}

Result<ModelView> readModelFile(const std::string &path, const ReadLimits &limits,
                                const ReadOptions &options) {
  // Random while reading: no read-ahead into the weights around the metadata; then Normal, so
  // that whoever reads the weights later gets read-ahead again.
  SF_ASSIGN(auto file, MappedFile::open(path, MappedFile::Access::Random));
  SF_ASSIGN(ModelView m, readModelBuffer(file->bytes(), limits, path, options));
  file->advise(MappedFile::Access::Normal);
  m.storage->file = std::move(file);
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  auto absolute = std::filesystem::absolute(dir, ec);
  m.directory = ec ? dir.string() : absolute.lexically_normal().string();
  return m;
}

void releaseFilePages(const ModelView &model) {
  if (model.storage && model.storage->file) model.storage->file->release(0, model.storage->file->size());
}

Result<TensorView> readTensorBuffer(std::string_view bytes, std::string_view label) {
  SF_TRY(detail::checkSize(bytes, label));
  TensorView t;
  detail::Parser parser(bytes, label, ReadLimits{});
  parser.reader().pushTopFrame(detail::Scope::Tensor);
  if (!parser.tensor(t)) return makeError(parser.reader().error());
  return t;
}

} // namespace sf::onnx
