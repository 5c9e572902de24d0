// The op interface: each op is a set of pure functions of its input facts and attributes
// (DESIGN.md "An op"), registered explicitly per family from registerAllOps().
//
// A forward rule reads its inputs through InferContext and returns one Fact per output; it
// says what is wrong in an Error (naming inputs and shapes in the printed syntax), and the
// driver adds the node and op. A rule that cannot decide leaves facts loose; it never guesses.
#pragma once

#include "shapeflow/dim/broadcast.h"
#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/ir/attribute.h"
#include "shapeflow/ir/fact.h"
#include "shapeflow/support/result.h"

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sf {

class Graph;

/// What a rule sees: input facts (already resolved through the symbol table), attributes, the
/// op's opset version, and the symbol table where it records what it learns.
class InferContext {
public:
  virtual ~InferContext() = default;

  virtual size_t numInputs() const = 0;
  /// False for an absent optional input (ONNX's empty name) or an index past the end.
  virtual bool hasInput(size_t i) const = 0;
  /// The fact of input i; an unknown fact when absent.
  virtual const Fact &input(size_t i) const = 0;
  virtual size_t numOutputs() const = 0;
  virtual const Attributes &attrs() const = 0;
  /// The opset version of the op's domain that the model imports (0 when unknown).
  virtual int64_t opset() const = 0;
  virtual const std::string &opType() const = 0;
  virtual const std::string &nodeName() const = 0;
  virtual SymbolTable &symbols() = 0;
  /// Infers a subgraph (If/Loop/Scan body) from the facts of its formal inputs; returns the facts
  /// of its outputs. Captured outer values are the owning node's extra inputs.
  virtual Result<std::vector<Fact>> inferSubgraph(const Graph &body,
                                                  const std::vector<Fact> &formalInputs) = 0;
  /// Adds a warning attributed to this node (e.g. "bounds only: k is not known").
  virtual void warn(std::string message) = 0;

  /// Largest tensor whose elements a rule may decode or fold (elements).
  size_t valueBudget() const { return 1 << 16; }

  // ---- helpers that record learned equalities ----
  Result<Dimension> mergeDims(const Dimension &a, const Dimension &b);
  Result<PartialShape> mergeShapes(const PartialShape &a, const PartialShape &b);
  Result<PartialShape> broadcast(const PartialShape &a, const PartialShape &b,
                                 BroadcastSpec spec = {});
  /// A fresh data-dependent symbol named after the node: `nonzero_0`.
  Dimension freshDim(std::string_view stem, Interval range);
};

using InferFn = std::function<Result<std::vector<Fact>>(InferContext &)>;

struct OpDef {
  std::string name;
  std::string domain; // "" is the default ONNX domain
  InferFn infer;
};

class OpRegistry {
public:
  void add(OpDef def);
  /// Registers the same rule under several names (elementwise families).
  void addAll(std::initializer_list<std::string_view> names, const InferFn &infer);
  const OpDef *find(std::string_view domain, std::string_view name) const;
  size_t size() const { return ops_.size(); }
  std::vector<std::string> names() const;

private:
  std::unordered_map<std::string, OpDef> ops_; // key: domain + "::" + name
};

/// Every op family, registered explicitly.
void registerAllOps(OpRegistry &r);
/// A process-wide registry with every op (built once).
const OpRegistry &defaultRegistry();

} // namespace sf
