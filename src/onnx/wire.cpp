// The ONNX ModelProto reader: one function per message of onnx.proto, walking the wire format
// with WireReader and filling the views of wire.h. Field numbers are those of onnx.proto (IR
// version 10 and earlier; newer fields the importer does not need are skipped like unknown ones,
// but their wire types are still checked).
#include "shapeflow/onnx/wire.h"

#include "wire_internal.h"
#include "wire_reader.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>

namespace sf::onnx {

namespace detail {
namespace {

constexpr uint32_t bit(uint32_t n) { return 1u << n; }

bool parseDecimal(std::string_view s, int64_t &out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= 0;
}

class Parser {
public:
  Parser(std::string_view bytes, std::string_view label, const ReadLimits &limits,
         bool deferNodes = false)
      : r_(bytes, label, limits), deferNodes_(deferNodes) {}

  WireReader &reader() { return r_; }
  size_t nodeCount() const { return nodeCount_; }

  /// A node the reader left encoded (ReadOptions::deferNodes) in the main graph `g`, read now
  /// as node() would have read it then. `counted` nodes were counted before it.
  bool deferredNode(const GraphView &g, size_t index, size_t counted, NodeView &n) {
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

  bool model(ModelView &m) {
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

  bool graph(const Field &f, const char *name, int64_t index, GraphView &g) {
    if (++graphDepth_ > r_.limits().maxGraphDepth)
      return r_.fail("subgraphs nested deeper than " + std::to_string(r_.limits().maxGraphDepth) +
                     " levels");
    bool ok = r_.item(f, name, Scope::Graph, index, [&] { return graphBody(g); });
    --graphDepth_;
    return ok;
  }

  bool graphBody(GraphView &g) {
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
  bool checkInitializerNames(const GraphView &g) {
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

  bool node(const Field &f, std::vector<NodeView> &nodes) {
    if (++nodeCount_ > r_.limits().maxNodes)
      return r_.fail("more than " + std::to_string(r_.limits().maxNodes) + " nodes");
    grow(nodes, f);
    return r_.item(f, "node", Scope::Node, static_cast<int64_t>(nodes.size()),
                   [&] { return nodeBody(nodes.emplace_back()); });
  }

  bool encodedNode(const Field &f, std::vector<EncodedNode> &nodes) {
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

  bool nodeBody(NodeView &n) {
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

  bool attribute(const Field &f, std::vector<AttributeView> &attributes) {
    grow(attributes, f);
    return r_.item(f, "attribute", Scope::Attribute, static_cast<int64_t>(attributes.size()),
                   [&] { return attributeBody(attributes.emplace_back()); });
  }

  bool attributeBody(AttributeView &a) {
    uint32_t seen = 0; // value fields present, by field number, to infer a missing type
    size_t limit = r_.limits().maxListElements;
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1: ok = r_.bytes(f, "name", a.name); break;
      case 2: ok = r_.float32(f, "f", a.f); break;
      case 3: ok = r_.int64(f, "i", a.i); break;
      case 4: ok = r_.bytes(f, "s", a.s); break;
      case 5: {
        auto &t = a.editExtra().t = std::make_shared<TensorView>();
        ok = r_.item(f, "t", Scope::Tensor, -1, [&] { return tensor(*t); });
        break;
      }
      case 6: ok = graph(f, "g", -1, *(a.editExtra().g = std::make_shared<GraphView>())); break;
      case 7: ok = r_.appendFloats(f, "floats", a.editExtra().floats, limit); break;
      case 8: ok = r_.appendInts(f, "ints", a.ints, limit); break;
      case 9: {
        auto &strings = a.editExtra().strings;
        ok = r_.bytes(f, "strings", grow(strings, f).emplace_back());
        if (ok && strings.size() > limit) ok = r_.failList("strings", limit);
        break;
      }
      case 10: {
        auto &tensors = grow(a.editExtra().tensors, f);
        ok = r_.item(f, "tensors", Scope::Tensor, static_cast<int64_t>(tensors.size()),
                     [&] { return tensor(tensors.emplace_back()); });
        break;
      }
      case 11: {
        auto &graphs = grow(a.editExtra().graphs, f);
        graphs.push_back(std::make_shared<GraphView>());
        ok = graph(f, "graphs", static_cast<int64_t>(graphs.size() - 1), *graphs.back());
        break;
      }
      case 13: ok = r_.ignore(f, "doc_string", kLen); break;
      case 14: {
        auto &tp = a.editExtra().tp = std::make_shared<TypeView>();
        ok = r_.message(f, "tp", [&] { return type(*tp); });
        break;
      }
      case 15: {
        auto &typeProtos = grow(a.editExtra().typeProtos, f);
        ok = r_.message(f, "type_protos", [&] { return type(typeProtos.emplace_back()); });
        break;
      }
      case 20: ok = r_.int32(f, "type", a.type); break;
      case 21: ok = r_.bytes(f, "ref_attr_name", a.refAttrName); break;
      case 22: {
        auto &sparse = a.editExtra().sparseTensor = std::make_shared<SparseTensorView>();
        ok = r_.message(f, "sparse_tensor", [&] { return sparseTensor(*sparse); });
        break;
      }
      case 23: {
        auto &sparseTensors = grow(a.editExtra().sparseTensors, f);
        ok = r_.message(f, "sparse_tensors",
                        [&] { return sparseTensor(sparseTensors.emplace_back()); });
        break;
      }
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
      if (f.number < 32) seen |= bit(f.number);
    }
    if (r_.failed()) return false;
    if (a.type < 0 || a.type > static_cast<int32_t>(AttributeType::TypeProtos))
      return r_.failAt(r_.itemBegin(), "unknown attribute type " + std::to_string(a.type));
    if (a.type == 0) a.type = inferAttributeType(seen);
    return true;
  }

  // IR version 1 files have no `type`: take the one value field present (ambiguous: keep 0).
  static int32_t inferAttributeType(uint32_t seen) {
    static constexpr std::pair<uint32_t, AttributeType> kFields[] = {
        {2, AttributeType::Float},         {3, AttributeType::Int},
        {4, AttributeType::String},        {5, AttributeType::Tensor},
        {6, AttributeType::Graph},         {7, AttributeType::Floats},
        {8, AttributeType::Ints},          {9, AttributeType::Strings},
        {10, AttributeType::Tensors},      {11, AttributeType::Graphs},
        {14, AttributeType::TypeProto},    {15, AttributeType::TypeProtos},
        {22, AttributeType::SparseTensor}, {23, AttributeType::SparseTensors},
    };
    int32_t found = 0;
    for (auto [field, type] : kFields) {
      if (!(seen & bit(field))) continue;
      if (found != 0) return 0;
      found = static_cast<int32_t>(type);
    }
    return found;
  }

  bool valueInfo(const Field &f, const char *name, Scope scope, std::vector<ValueInfoView> &list) {
    grow(list, f);
    return r_.item(f, name, scope, static_cast<int64_t>(list.size()),
                   [&] { return valueInfoBody(list.emplace_back()); });
  }

  bool valueInfoBody(ValueInfoView &v) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1: ok = r_.bytes(f, "name", v.name); break;
      case 2:
        v.hasType = true;
        ok = r_.message(f, "type", [&] { return type(v.type); });
        break;
      case 3: ok = r_.ignore(f, "doc_string", kLen); break;
      case 4: ok = r_.ignore(f, "metadata_props", kLen); break;
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  }

  // TypeProto: a oneof; a later member replaces an earlier one, as protobuf merges.
  bool type(TypeView &t) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1:
        t.kind = TypeView::Tensor;
        ok = r_.message(f, "tensor_type", [&] { return tensorType(t); });
        break;
      case 4:
        t.kind = TypeView::Sequence;
        t.inner = std::make_shared<TypeView>();
        ok = r_.message(f, "sequence_type", [&] { return elementType(*t.inner); });
        break;
      case 5:
        t.kind = TypeView::Map;
        ok = r_.message(f, "map_type", [&] { return mapType(t); });
        break;
      case 6: ok = r_.ignore(f, "denotation", kLen); break;
      case 7:
        t.kind = TypeView::Opaque;
        ok = r_.ignore(f, "opaque_type", kLen);
        break;
      case 8:
        t.kind = TypeView::SparseTensor;
        ok = r_.message(f, "sparse_tensor_type", [&] { return tensorType(t); });
        break;
      case 9:
        t.kind = TypeView::Optional;
        t.inner = std::make_shared<TypeView>();
        ok = r_.message(f, "optional_type", [&] { return elementType(*t.inner); });
        break;
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  }

  bool checkElemType(int32_t elemType) {
    if (elemType == 0 || isKnownDataType(elemType)) return true;
    return r_.fail("unknown elem_type " + std::to_string(elemType));
  }

  bool tensorType(TypeView &t) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1: ok = r_.int32(f, "elem_type", t.elemType) && checkElemType(t.elemType); break;
      case 2:
        t.hasShape = true;
        ok = r_.message(f, "shape", [&] { return shape(t); });
        break;
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  }

  // Sequence and Optional: one field, elem_type (a TypeProto).
  bool elementType(TypeView &inner) {
    Field f;
    while (r_.next(f)) {
      bool ok =
          f.number == 1 ? r_.message(f, "elem_type", [&] { return type(inner); }) : r_.skip(f);
      if (!ok) return false;
    }
    return !r_.failed();
  }

  bool mapType(TypeView &t) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1: ok = r_.int32(f, "key_type", t.keyType) && checkElemType(t.keyType); break;
      case 2:
        t.inner = std::make_shared<TypeView>();
        ok = r_.message(f, "value_type", [&] { return type(*t.inner); });
        break;
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  }

  bool shape(TypeView &t) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      if (f.number == 1) {
        if (t.dims.size() >= r_.limits().maxListElements)
          return r_.failList("dim", r_.limits().maxListElements);
        grow(t.dims, f);
        ok = r_.message(f, "dim", [&] { return dim(t.dims.emplace_back()); });
      } else {
        ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  }

  bool dim(DimView &d) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1:
        ok = r_.int64(f, "dim_value", d.value);
        d.hasValue = true;
        d.param = {};
        break;
      case 2:
        ok = r_.bytes(f, "dim_param", d.param);
        d.hasValue = false;
        d.value = 0;
        break;
      case 3: ok = r_.ignore(f, "denotation", kLen); break;
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  }

  bool opsetImport(const Field &f, std::vector<OpsetImport> &opsets) {
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

  bool stringPair(StringPairView &p) {
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

  bool sparseTensor(SparseTensorView &s) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1: ok = r_.item(f, "values", Scope::Tensor, -1, [&] { return tensor(s.values); }); break;
      case 2:
        ok = r_.item(f, "indices", Scope::Tensor, -1, [&] { return tensor(s.indices); });
        break;
      case 3: ok = r_.appendInts(f, "dims", s.dims, r_.limits().maxListElements); break;
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    if (r_.failed()) return false;
    for (size_t i = 0; i < s.dims.size(); ++i)
      if (s.dims[i] < 0)
        return r_.failAt(r_.itemBegin(), "negative dim " + std::to_string(s.dims[i]) + " in dims " +
                                             formatDims(s.dims));
    return true;
  }

  bool function(FunctionView &fn) {
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

  // One occurrence of a fixed-width value field (float_data, double_data).
  bool fixedData(const Field &f, const char *name, uint32_t width, bool first,
                 std::string_view &run, int64_t &count, TensorView &t) {
    uint32_t unpacked = width == 4 ? kFixed32 : kFixed64;
    if (f.wireType == unpacked) {
      t.scattered = true;
      run = {};
      ++count;
      return r_.skip(f);
    }
    if (f.wireType != kLen) return r_.ignore(f, name, kLen); // reports the wire type
    std::string_view payload;
    if (!r_.packedFixedView(f, name, static_cast<int>(width), payload)) return false;
    count += static_cast<int64_t>(payload.size() / width);
    keepRun(first, payload, run, t);
    return true;
  }

  // One occurrence of a varint value field (int32_data, int64_data, uint64_data).
  bool varintData(const Field &f, const char *name, bool first, std::string_view &run,
                  int64_t &count, TensorView &t) {
    if (f.wireType == kVarint) {
      t.scattered = true;
      run = {};
      ++count;
      return r_.skip(f);
    }
    std::string_view payload;
    if (!r_.packedVarintView(f, name, payload, count)) return false;
    keepRun(first, payload, run, t);
    return true;
  }

  static void keepRun(bool first, std::string_view payload, std::string_view &run, TensorView &t) {
    if (first && !t.scattered) {
      run = payload;
    } else {
      t.scattered = true;
      run = {};
    }
  }

  bool externalEntry(TensorView &t, const StringPairView &kv) {
    if (kv.key == "location") {
      t.external.location = kv.value;
    } else if (kv.key == "offset" || kv.key == "length") {
      int64_t v;
      if (!parseDecimal(kv.value, v))
        return r_.fail("external_data '" + std::string(kv.key) + "' is '" +
                       std::string(kv.value.substr(0, 40)) + "', not a non-negative integer");
      (kv.key == "offset" ? t.external.offset : t.external.length) = v;
    }
    return true; // "checksum" and unknown keys: not needed to read the data
  }

  bool segment(TensorView &t) {
    Field f;
    while (r_.next(f)) {
      bool ok;
      switch (f.number) {
      case 1: ok = r_.int64(f, "begin", t.segmentBegin); break;
      case 2: ok = r_.int64(f, "end", t.segmentEnd); break;
      default: ok = r_.skip(f);
      }
      if (!ok) return false;
    }
    return !r_.failed();
  }

  bool validateTensor(TensorView &t, uint32_t present, int32_t location);

  WireReader r_;
  bool deferNodes_ = false;
  size_t nodeCount_ = 0;
  int graphDepth_ = 0;
};

bool Parser::tensor(TensorView &t) {
  int begin = r_.position();
  uint32_t present = 0; // value fields seen, by field number
  int32_t location = 0;
  size_t limit = r_.limits().maxListElements;
  Field f;
  while (r_.next(f)) {
    bool ok;
    bool first = f.number < 32 && !(present & bit(f.number));
    switch (f.number) {
    case 1: ok = r_.appendInts(f, "dims", t.dims, limit); break;
    case 2: ok = r_.int32(f, "data_type", t.dataType); break;
    case 3:
      t.hasSegment = true;
      ok = r_.message(f, "segment", [&] { return segment(t); });
      break;
    case kFloatData: ok = fixedData(f, "float_data", 4, first, t.floatData, t.floatCount, t); break;
    case kInt32Data: ok = varintData(f, "int32_data", first, t.int32Data, t.int32Count, t); break;
    case kStringData: ok = r_.bytes(f, "string_data", grow(t.stringData, f).emplace_back()); break;
    case kInt64Data: ok = varintData(f, "int64_data", first, t.int64Data, t.int64Count, t); break;
    case 8: ok = r_.bytes(f, "name", t.name); break;
    case kRawData:
      t.hasRawData = true;
      ok = r_.bytes(f, "raw_data", t.rawData);
      break;
    case kDoubleData:
      ok = fixedData(f, "double_data", 8, first, t.doubleData, t.doubleCount, t);
      break;
    case kUInt64Data:
      ok = varintData(f, "uint64_data", first, t.uint64Data, t.uint64Count, t);
      break;
    case 12: ok = r_.ignore(f, "doc_string", kLen); break;
    case 13: {
      StringPairView kv;
      ok = r_.message(f, "external_data", [&] { return stringPair(kv); }) && externalEntry(t, kv);
      break;
    }
    case 14: ok = r_.int32(f, "data_location", location); break;
    case 16: ok = r_.ignore(f, "metadata_props", kLen); break;
    default: ok = r_.skip(f);
    }
    if (!ok) return false;
    if (f.number < 32) present |= bit(f.number);
  }
  if (r_.failed()) return false;
  t.encoded = r_.bytesBetween(begin, r_.position());
  return validateTensor(t, present, location);
}

bool Parser::validateTensor(TensorView &t, uint32_t present, int32_t location) {
  auto failHere = [&](const std::string &message) { return r_.failAt(r_.itemBegin(), message); };
  if (!isKnownDataType(t.dataType))
    return failHere(t.dataType == 0 ? std::string("data_type is missing (UNDEFINED)")
                                    : "unknown data_type " + std::to_string(t.dataType));
  int64_t count = 1;
  for (int64_t d : t.dims) {
    if (d < 0)
      return failHere("negative dim " + std::to_string(d) + " in dims " + formatDims(t.dims));
    if (__builtin_mul_overflow(count, d, &count))
      return failHere("dims " + formatDims(t.dims) + " overflow int64 as an element count");
  }
  if (location != 0 && location != 1)
    return failHere("unknown data_location " + std::to_string(location));
  t.isExternal = location == 1;
  if (t.isExternal && t.external.location.empty())
    return failHere("data_location is EXTERNAL but external_data has no 'location'");

  static constexpr uint32_t kValueFields[] = {kRawData,   kFloatData,  kInt32Data, kStringData,
                                              kInt64Data, kDoubleData, kUInt64Data};
  std::string fields;
  int nFields = t.isExternal ? 1 : 0;
  if (t.isExternal) fields = "external data";
  for (uint32_t field : kValueFields) {
    if (!(present & bit(field))) continue;
    if (nFields++ > 0) fields += " and ";
    fields += tensorFieldName(field);
  }
  if (nFields > 1) return failHere("more than one value field: " + fields);
  if (t.hasSegment) return true; // the fields hold one segment: sizes are not those of dims

  if (t.hasRawData) {
    if (t.dataType == static_cast<int32_t>(DataType::String))
      return failHere("raw_data is not allowed for STRING tensors");
    auto expected = rawByteSize(t);
    if (!expected.ok()) return failHere(expected.error().message);
    if (static_cast<int64_t>(t.rawData.size()) != *expected)
      return failHere("raw_data has " + std::to_string(t.rawData.size()) + " bytes, expected " +
                      std::to_string(*expected) + " for " + describeTensorType(t));
    return true;
  }
  uint32_t wanted = typedFieldFor(t.dataType);
  for (uint32_t field : kValueFields) {
    if (field == kRawData || !(present & bit(field))) continue;
    if (field != wanted)
      return failHere(std::string(tensorFieldName(field)) + " cannot hold values of a " +
                      dataTypeName(t.dataType) + " tensor");
    int64_t have = field == kFloatData    ? t.floatCount
                   : field == kInt32Data  ? t.int32Count
                   : field == kInt64Data  ? t.int64Count
                   : field == kDoubleData ? t.doubleCount
                   : field == kUInt64Data ? t.uint64Count
                                          : static_cast<int64_t>(t.stringData.size());
    auto expected = typedEntries(t.dataType, count);
    if (!expected) return failHere("dims " + formatDims(t.dims) + " overflow int64");
    if (have != *expected)
      return failHere(std::string(tensorFieldName(field)) + " has " + std::to_string(have) +
                      " values, expected " + std::to_string(*expected) + " for " +
                      describeTensorType(t));
  }
  return true;
}

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

Result<TensorView> readTensorBuffer(std::string_view bytes, std::string_view label) {
  SF_TRY(detail::checkSize(bytes, label));
  TensorView t;
  detail::Parser parser(bytes, label, ReadLimits{});
  parser.reader().pushTopFrame(detail::Scope::Tensor);
  if (!parser.tensor(t)) return makeError(parser.reader().error());
  return t;
}

} // namespace sf::onnx
