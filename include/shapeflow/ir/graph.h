// The graph IR : nodes with numbered outputs (outlets); a wire is an OutletId
// (producing node, output slot) read by any number of inlets (consuming node, input slot).
// Every outlet carries its Fact and, redundantly, its successors (the inlets that read it),
// which the editing API keeps consistent with the nodes' inputs.
//
// Conventions:
//  - Graph inputs are nodes of kind Parameter (opType "Parameter", no inputs, one output whose
//    fact is the declared fact). Every Parameter is listed in `inputs` exactly once.
//  - Constants are nodes of kind Constant (opType "Constant", no inputs, one output) whose
//    attribute "value" holds the tensor; their output fact comes from the tensor
//    (Fact::fromTensor).
//    The kind, not the op type, says what a node is: only addParameter and the constant makers
//    set it, so an op a model file names "Parameter" or "Constant" is an op like any other.
//  - An absent optional input (ONNX's empty input name) is OutletId::invalid().
//  - Subgraphs (If branches, Loop and Scan bodies) are graph-valued attributes. A body sees only
//    its own nodes; a value it reads from an enclosing graph is *captured* explicitly:
//      * the owning node gets the outer outlet as an extra input, after its declared inputs;
//      * the body has a Parameter for it with the int attribute "captured" = the index of that
//        extra input in the owning node's `inputs`;
//      * the body's `inputs` list its formal inputs first (the ones the op defines), then its
//        captured Parameters.
//    Several bodies of one node (If's two branches) may capture the same extra input. A body
//    nested in a body reads an outermost value through its owner, which captures it first.
//    A subgraph's dims use the symbols of its root graph (its own `symbols` stay empty).
//  - Removing a node leaves a tombstone (`removed`, no inputs, no outputs) so that ids stay
//    stable; compact() renumbers the live nodes and returns the old -> new map.
//  - Outlet names (tensor names) are unique within a graph when not empty. findOutlet() looks
//    them up through an index that the editing API maintains; after changing names or nodes
//    directly, call reindex().
#pragma once

#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/ir/attribute.h"
#include "shapeflow/ir/fact.h"
#include "shapeflow/support/result.h"
#include "shapeflow/support/small_vec.h"
#include "shapeflow/support/stable_vec.h"

#include <absl/container/inlined_vector.h>

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sf {

inline constexpr uint32_t kNoNode = UINT32_MAX;

/// The IR writes ONNX's default domain as "" (files may say "ai.onnx").
inline std::string_view canonicalDomain(std::string_view d) {
  return d == "ai.onnx" ? std::string_view() : d;
}

/// An output of a node: the identity of a wire.
struct OutletId {
  uint32_t node = kNoNode;
  uint32_t slot = 0;
  /// The absent optional input.
  static constexpr OutletId invalid() { return OutletId{}; }
  bool valid() const { return node != kNoNode; }
  auto operator<=>(const OutletId &) const = default;
};

/// An input of a node.
struct InletId {
  uint32_t node = kNoNode;
  uint32_t slot = 0;
  auto operator<=>(const InletId &) const = default;
};

struct Outlet {
  std::string name;
  /// What inference found (or, for graph inputs and constants, what they are).
  Fact fact;
  /// The inlets reading this outlet; most outlets have one or two readers, kept inline.
  SmallVec<InletId, 2> successors;
  /// What the model file declared for it (ONNX value_info, a graph output's type, a type written
  /// in the text form), kept apart from `fact`: inference compares the two and warns when they
  /// contradict, and uses it only for ops without a rule. Null when nothing was declared.
  std::shared_ptr<const Fact> declared;
};

/// What a node is: an op, or one of the IR's own nodes (a graph input, a constant).
enum class NodeKind : uint8_t { Op, Parameter, Constant };

struct Node {
  uint32_t id = 0;
  NodeKind kind = NodeKind::Op;
  std::string name;
  std::string opType;
  std::string domain; // "" is the default ONNX domain
  int opsetVersion = 0;
  Attributes attrs;
  // Inline up to the usual count: a node costs one allocation fewer, and a large graph's edges
  // are read back in order instead of from scattered blocks.
  absl::InlinedVector<OutletId, 3> inputs;
  // The first output inline too (most nodes have one): a node is one block fewer, and its fact
  // is beside its inputs. Nodes do not move while the graph grows (StableVec), so a reference to
  // an outlet survives addNode; it does not survive adding an output to the same node.
  absl::InlinedVector<Outlet, 1> outputs;
  bool removed = false; // a tombstone left by Graph::removeNode

  bool isParameter() const { return kind == NodeKind::Parameter; }
  bool isConstant() const { return kind == NodeKind::Constant; }
  /// An op whose type reads like one of the IR's own nodes ("Parameter", "Constant" in the
  /// default domain): printed with its domain spelled out, so that it parses back as an op.
  bool opNamedLikeIrNode() const {
    return kind == NodeKind::Op && domain.empty() && (opType == "Parameter" || opType == "Constant");
  }
  /// A Parameter standing for a value captured from an enclosing graph.
  bool isCaptured() const { return isParameter() && attrs.has("captured"); }
};

/// What Graph::verify checks beyond the structure it always checks.
struct VerifyOptions {
  /// Outlet names unique within each graph. A loader that refused duplicates as it read them
  /// (the ONNX importer's name scope) turns this off rather than hash every name a second time.
  bool uniqueNames = true;
};

class Graph {
public:
  std::string name;
  /// Never moved as the graph grows: a Node& or Outlet& survives addNode (not compact()).
  StableVec<Node> nodes;
  std::vector<OutletId> inputs;
  std::vector<OutletId> outputs;
  SymbolTable symbols;
  /// Where this graph's expressions and symbols live (dim/expr.h "Lifetime"): made by the
  /// importer and the text parser for a root graph, shared by its subgraphs and copies; null for
  /// a graph built by hand (it uses the thread's current context).
  std::shared_ptr<ExprContext> context;

  /// Enters this graph's context for the scope (`auto s = g.enter();`): what every function
  /// that makes or reads the graph's expressions does first.
  ExprScope enter() const { return ExprScope(context); }

  // ---- access (the OutletId must refer to an existing outlet) ----
  const Outlet &outlet(OutletId o) const { return nodes[o.node].outputs[o.slot]; }
  Outlet &outlet(OutletId o) { return nodes[o.node].outputs[o.slot]; }
  const Fact &fact(OutletId o) const { return outlet(o).fact; }
  Fact &fact(OutletId o) { return outlet(o).fact; }
  /// The outlet exists: valid, in range, on a live node.
  bool contains(OutletId o) const;
  /// `'conv1' (Conv)` for messages; `#7 (Conv)` for an unnamed node.
  std::string nodeLabel(uint32_t id) const;
  size_t liveNodeCount() const;
  /// Graph inputs that are not captured Parameters (the formal inputs of a body).
  size_t formalInputCount() const;

  // ---- editing: every function keeps successors and the name index consistent ----
  /// A graph input: a Parameter node with one output of that name and fact.
  Result<OutletId> addParameter(std::string name, Fact fact);
  /// A Parameter for a captured outer value (see the header comment): `ownerInput` is the index
  /// of the owning node's input that feeds it.
  Result<OutletId> addCapturedParameter(std::string name, Fact fact, uint32_t ownerInput);
  /// A Constant node whose output (named `name`) has the tensor's fact.
  Result<OutletId> addConstant(std::string name, TensorPtr tensor);
  Result<OutletId> addConstant(std::string name, Tensor tensor);
  /// A node with `nOutputs` outputs named `name` (one output) or `name.0`, `name.1`, ... (or
  /// unnamed when `name` is empty); facts unknown.
  Result<uint32_t> addNode(std::string opType, std::string name, std::vector<OutletId> inputs,
                           size_t nOutputs, Attributes attrs = {});
  /// A node whose outputs have the given names ("" for an unnamed output).
  Result<uint32_t> addNode(std::string opType, std::string name, std::vector<OutletId> inputs,
                           std::vector<std::string> outputNames, Attributes attrs = {});
  /// For a loader that keeps names unique itself (it must): a node with the given output names
  /// and no inputs yet, added without looking its names up or indexing them; the name index is
  /// rebuilt on the next lookup. Saves a hash of every name while a large model loads.
  Result<uint32_t> appendNode(std::string opType, std::string name,
                              std::span<const std::string_view> outputNames, Attributes attrs = {});
  /// addConstant without the name check, for the same loaders.
  Result<OutletId> appendConstant(std::string name, TensorPtr tensor);
  /// Rewires one input (`from` may be invalid(): the input becomes absent).
  Result<void> setInput(InletId in, OutletId from);
  /// Appends an input to a node; returns its slot.
  Result<uint32_t> addInput(uint32_t node, OutletId from);
  /// Every reader of `from` (and every graph output equal to it) reads `to` instead. Readers on
  /// `to`'s own node are rewired too: when `to` depends on `from`, rewire with setInput instead.
  Result<void> replaceUses(OutletId from, OutletId to);
  /// Removes a node nobody reads (no successors, not a graph output, not a graph input),
  /// leaving a tombstone.
  Result<void> removeNode(uint32_t id);
  /// Renames an outlet; the name must be free ("" is always allowed).
  Result<void> renameOutlet(OutletId o, std::string newName);
  /// Drops tombstones, renumbering live nodes in order; returns old id -> new id (kNoNode for
  /// removed nodes).
  std::vector<uint32_t> compact();

  /// Room for `count` nodes in total (and their names in the index): a loader that knows the
  /// count avoids moving every node each time the vector doubles.
  void reserve(size_t count);

  /// The outlet of that name (not on a removed node).
  std::optional<OutletId> findOutlet(std::string_view name) const;
  /// Rebuilds the name index (after direct edits of names or nodes).
  void reindex() const;

  // ---- checks and orders ----
  /// Structural invariants: ids match positions; inputs in range (or invalid()) and not on
  /// tombstones; successors exactly mirror inputs; non-empty outlet names unique; graph inputs
  /// are Parameters (each Parameter listed once); outputs valid; captured Parameters only in
  /// subgraphs, naming an existing input of their owner; subgraphs recursively. The error lists
  /// the problems found (up to 20), one per line.
  Result<void> verify(VerifyOptions options = {}) const;
  /// Live node ids, each after the producers of its inputs; ids come out in increasing order
  /// when they already are a topological order. Iterative, O(nodes + edges). On a cycle the
  /// error names the nodes of one cycle: `cycle: a -> b -> c -> a`.
  Result<std::vector<uint32_t>> topologicalOrder() const;
  /// A deep copy: subgraphs are copied too (tensors are immutable and stay shared).
  Graph clone() const;

private:
  Result<void> checkNewName(const std::string &name) const;
  void indexName(const std::string &name, OutletId o) const;
  Result<void> checkSource(OutletId from) const;
  void unlink(OutletId from, InletId in);
  void ensureIndex() const;

  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  mutable std::unordered_map<std::string, OutletId, NameHash, std::equal_to<>> index_;
  mutable size_t indexedNodes_ = 0; // the first nodes.size() nodes' names are in index_
};

} // namespace sf
