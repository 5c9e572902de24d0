// Internal: the ONNX importer (import.cpp: graphs, their names and nodes, local functions,
// subgraphs; import_values.cpp: declared types, tensors, attributes, Constant values).
//
// Names resolve through a chain of scopes: a subgraph (If/Loop/Scan body) that reads a name of an
// enclosing graph gets a Parameter marked "captured" (its value: the outer name) and the node
// that owns the subgraph gets the outer value as an extra input after its declared ones, so the
// dependency is visible to topological ordering in the outer graph.
#pragma once

#include "shapeflow/onnx/import.h"

#include <absl/container/flat_hash_map.h>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace sf::onnx::import_detail {

using OpsetMap = std::map<std::string, int64_t, std::less<>>;

inline std::string str(std::string_view s) { return std::string(s); }

inline std::string normDomain(std::string_view d) { return str(canonicalDomain(d)); }

/// One graph being imported, with its name scope and a link to the enclosing one. Names are
/// views: of the model's bytes, of the importer's arena (expanded function calls), or of
/// `captured` (a deque: its strings do not move).
struct Scope {
  Graph *graph = nullptr;
  Scope *parent = nullptr;
  absl::flat_hash_map<std::string_view, OutletId> names;
  std::deque<std::string> captured; // outer names this graph reads, in order of first use

  /// The outlet for `name` in this graph, capturing it from an enclosing scope if needed.
  std::optional<OutletId> resolve(std::string_view name) {
    auto it = names.find(name);
    if (it != names.end()) return it->second;
    if (!parent || !parent->lookupOnly(name)) return std::nullopt;
    // Capture: a Parameter inside, the outer value an extra input of the owning node.
    Fact f = parent->factOf(name);
    // The owner's input index is patched once all of the owner's subgraphs are read
    // (Importer::patchCaptures).
    auto p = graph->addCapturedParameter(std::string(name), f, 0);
    if (!p.ok()) return std::nullopt;
    names[captured.emplace_back(name)] = *p;
    return *p;
  }
  bool lookupOnly(std::string_view name) const {
    if (names.count(name)) return true;
    return parent && parent->lookupOnly(name);
  }
  Fact factOf(std::string_view name) const {
    auto it = names.find(name);
    if (it != names.end()) {
      const Outlet &o = graph->outlet(it->second);
      return o.fact.isUnknown() && o.declared ? *o.declared : o.fact;
    }
    return parent ? parent->factOf(name) : Fact{};
  }
};

struct Importer {
  Importer(const ModelView &m, Diagnostics &d, const ImportOptions &o)
      : model(m), diags(d), options(o) {}
  const ModelView &model;
  Diagnostics &diags;
  const ImportOptions &options;
  OpsetMap opsets;
  SymbolTable *symbols = nullptr; // the main graph's table: one namespace for every subgraph
  int depth = 0;

  // ---- model-local functions (FunctionProto): calls are expanded into the calling graph ----
  std::deque<std::string> arena; // owns the names made for expanded nodes (views point here)
  size_t expandedNodes = 0;
  // Functions calling functions several times can multiply a small file into a huge graph.
  static constexpr size_t kMaxExpandedNodes = 2'000'000;
  uint64_t callCounter = 0;

  std::string_view own(std::string s) { return arena.emplace_back(std::move(s)); }

  /// Local functions by (domain, name, overload), built on first use.
  std::unordered_map<std::string, const FunctionView *> functionIndex;

  static std::string functionKey(std::string_view domain, std::string_view name,
                                 std::string_view overload);
  const FunctionView *functionFor(const NodeView &n);

  /// The graph's nodes with every call of a local function replaced by the function's body
  /// (recursively): formal inputs and outputs renamed to the call's, the body's own names
  /// prefixed with the call's name, attribute references (`ref_attr_name`) bound to the call's
  /// attributes or the function's defaults. A graph without calls comes back as is.
  Result<const std::vector<NodeView> *> expandCalls(const std::vector<NodeView> &nodes,
                                                   std::vector<NodeView> &storage);

  std::unordered_map<const FunctionView *, size_t> countMemo;

  /// How many nodes `n` becomes once expanded (saturating past the cap).
  Result<size_t> expandedCount(const NodeView &n, int level);

  Result<void> expandInto(const NodeView &n, size_t index, std::vector<NodeView> &out, int level);

  int64_t opsetOf(std::string_view domain) const {
    auto it = opsets.find(normDomain(domain));
    return it == opsets.end() ? 0 : it->second;
  }

  /// A declared type as a fact. Graph inputs mint named symbols for their dim_params; elsewhere
  /// (value_info, outputs) a dim_param names a symbol only if an input already did, since
  /// exporters fill value_info with names of their own (`Addonnx::Gather_522_dim_0`).
  /// `what` names the tensor in the warning a negative declared dim gets (`input 'x'`).
  /// `unnamedStem` (the main graph's inputs): a dynamic dim the type leaves unnamed becomes the
  /// size `<stem>_d<axis>` (a name --dim, --at and the contract take), not an anonymous one.
  Fact factFromType(const TypeView &t, bool mintNames = false, std::string_view what = {},
                    std::string_view unnamedStem = {});

  Result<std::shared_ptr<const Tensor>> tensorFrom(const TensorView &t);

  Result<Attribute> attributeFrom(const AttributeView &a, Scope &scope);

  Result<GraphPtr> importSubgraph(const GraphView &gv, Scope &outer);
  std::vector<std::string> lastCaptured;

  /// Each captured Parameter in the node's subgraphs names the owner's extra input it reads:
  /// declared inputs first, then `captured` in order.
  static void patchCaptures(Attributes &attrs, const std::vector<std::string> &captured,
                            size_t declared);

  /// A Constant node's value from whichever value_* attribute it has.
  Result<std::shared_ptr<const Tensor>> constantValue(const NodeView &n);

  /// Connects node `id` to `inputs` if every name is produced in this graph already (false, and
  /// nothing changed, otherwise). An unproduced name or one from an enclosing graph is left to
  /// the second pass, which reports or captures it.
  static Result<bool> connectLocal(Graph &g, uint32_t id, std::span<const std::string_view> inputs,
                                   const Scope &scope);

  /// Imports `gv` into `g`, its names resolved in `scope` (GraphImport, import.cpp).
  Result<void> importInto(const GraphView &gv, Graph &g, Scope &scope);
};

} // namespace sf::onnx::import_detail
