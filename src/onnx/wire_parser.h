// Internal: the ModelProto reader's parser, one method per message of onnx.proto over a
// WireReader, filling the views of wire.h. Its methods are split by what they read: the model,
// graphs, nodes and functions in wire.cpp; attributes, types, tensors and sparse tensors in
// wire_values.cpp.
#pragma once

#include "shapeflow/onnx/wire.h"

#include "wire_internal.h"
#include "wire_reader.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sf::onnx::detail {

constexpr uint32_t bit(uint32_t n) { return 1u << n; }

class Parser {
public:
  Parser(std::string_view bytes, std::string_view label, const ReadLimits &limits,
         bool deferNodes = false)
      : r_(bytes, label, limits), deferNodes_(deferNodes) {}

  WireReader &reader() { return r_; }
  size_t nodeCount() const { return nodeCount_; }

  /// A node the reader left encoded (ReadOptions::deferNodes) in the main graph `g`, read now
  /// as node() would have read it then. `counted` nodes were counted before it.
  bool deferredNode(const GraphView &g, size_t index, size_t counted, NodeView &n);
  bool model(ModelView &m);

  bool tensor(TensorView &t);

private:
  // Makes room before appending an element of repeated field f: for the rest of its run (the
  // elements that follow with the same tag, counted without reading them), and at least
  // doubling, so that a list costs one allocation in the usual file and never goes quadratic.
  // Called before entering the element's message (r_.item, r_.message): inside it the run would
  // be counted within the element, always one.
  //
  // Only a run of length-delimited fields is counted (a field of another wire type is refused by
  // the reader at once), and at most 32 MB of elements are reserved ahead of the ones read: a run
  // of two-byte empty messages cannot make the reader reserve a hundred times the file's size.
  template <class List> List &grow(List &list, const Field &f) {
    if (list.size() == list.capacity()) {
      using T = typename List::value_type;
      constexpr size_t kAhead = std::max<size_t>((size_t(32) << 20) / sizeof(T), 16);
      size_t run = f.wireType == kLen ? std::min(r_.runLength(f), kAhead) : 1;
      list.reserve(std::max(list.size() + run, 2 * list.size()));
    }
    return list;
  }

  // The model, graphs, nodes, functions (wire.cpp).
  bool graph(const Field &f, const char *name, int64_t index, GraphView &g);
  bool graphBody(GraphView &g);
  bool checkInitializerNames(const GraphView &g);
  bool node(const Field &f, std::vector<NodeView> &nodes);
  bool encodedNode(const Field &f, std::vector<EncodedNode> &nodes);
  bool nodeBody(NodeView &n);
  bool opsetImport(const Field &f, std::vector<OpsetImport> &opsets);
  bool stringPair(StringPairView &p);
  bool function(FunctionView &fn);

  // Attributes, value infos and types, tensors (wire_values.cpp).
  bool attribute(const Field &f, std::vector<AttributeView> &attributes);
  bool attributeBody(AttributeView &a);
  static int32_t inferAttributeType(uint32_t seen);
  bool valueInfo(const Field &f, const char *name, Scope scope, std::vector<ValueInfoView> &list);
  bool valueInfoBody(ValueInfoView &v);
  bool type(TypeView &t);
  bool checkElemType(int32_t elemType);
  bool tensorType(TypeView &t);
  bool elementType(TypeView &inner);
  bool mapType(TypeView &t);
  bool shape(TypeView &t);
  bool dim(DimView &d);
  bool sparseTensor(SparseTensorView &s);
  bool fixedData(const Field &f, const char *name, uint32_t width, bool first,
                 std::string_view &run, int64_t &count, TensorView &t);
  bool varintData(const Field &f, const char *name, bool first, std::string_view &run,
                  int64_t &count, TensorView &t);
  static void keepRun(bool first, std::string_view payload, std::string_view &run, TensorView &t);
  bool externalEntry(TensorView &t, const StringPairView &kv);
  bool segment(TensorView &t);
  bool validateTensor(TensorView &t, uint32_t present, int32_t location);

  WireReader r_;
  bool deferNodes_ = false;
  size_t nodeCount_ = 0;
  int graphDepth_ = 0;
};

} // namespace sf::onnx::detail
