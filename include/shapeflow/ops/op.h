// The op record: everything shapeflow knows how to do with one op, in one place (docs/ARCHITECTURE.md "An
// op"). Each family file registers its ops explicitly from registerAllOps(), filling each op's
// record where it is registered, so that reading the registration of `Reshape` tells everything
// that runs for it:
//
//   r.add({.name = "Reshape", .infer = inferReshape, .values = movedValues(Move::Flat),
//          .traits = {.view = true}, .cost = costNone});
//
// Slots:
//  - `infer`: the forward rule. It reads its inputs through InferContext and returns one Fact per
//    output; it says what is wrong in an Error (naming inputs and shapes in the printed syntax),
//    and the driver adds the node and op. A rule that cannot decide leaves facts loose; it never
//    guesses. Per-op behaviour of a rule shared by several ops is a parameter given at
//    registration, never a comparison of op-type strings.
//  - `values`: value propagation, run after the forward rule succeeds: what is known of the
//    outputs' contents (shape-tensor elements, folded float shape math, moved small integers).
//  - `traits`: what later stages (lowering, memory planning) need to know without running it.
//  - `refine`: the backward rule (tract's InferenceOp), `cost`: per-op statistics ,
//    `kernel`: the reference implementation (tract's EvalOp). Empty where not provided.
#pragma once

#include "shapeflow/dim/broadcast.h"
#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/ir/attribute.h"
#include "shapeflow/ir/fact.h"
#include "shapeflow/support/format.h"
#include "shapeflow/support/result.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sf {

class Graph;
struct OutletId;

/// A rule's outputs.
using Facts = std::vector<Fact>;

/// What a rule sees: input facts (already resolved through the symbol table), attributes, the
/// op's opset version, the symbol table where it records what it learns, and the run's subgraph
/// inference (for If, Loop, Scan and SequenceMap).
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
  virtual const std::string &nodeName() const = 0;
  virtual SymbolTable &symbols() = 0;
  /// Adds a warning attributed to this node (e.g. "bounds only: k is not known").
  virtual void warn(std::string message) = 0;
  /// Records an assumption this node's rule made (see Severity::Assumption).
  virtual void assume(std::string message) { warn(std::move(message)); }

  /// Infers a subgraph (If branch, Loop/Scan/SequenceMap body) from the facts of its formal
  /// inputs and returns the facts of its outputs; the outer values it captures are this node's
  /// extra inputs. Memoized by the run per body and per distinct input facts, so that nested
  /// loops cost one body inference per distinct facts, not one per enclosing round. Checks that
  /// the body has `expectOutputs` outputs (unless SIZE_MAX).
  virtual Result<Facts> inferBody(const Graph &body, const Facts &formals,
                                  size_t expectOutputs = SIZE_MAX) = 0;
  /// `compute()` once per distinct input facts of this node (`body` identifies the node): a rule
  /// re-run by an enclosing fixed point returns the same facts, fresh symbols included.
  virtual Result<Facts> memoized(const Graph &body,
                                 const std::function<Result<Facts>()> &compute) = 0;
  /// The facts a body holds in every run (a loop's covering facts after its fixed point): the
  /// driver infers the body in place with them, so that the tensors inside bodies have facts too
  /// (for statistics, lowering and the self-check). A no-op while the node itself is inferred
  /// on a copy (a fixed point's intermediate rounds). Fresh symbols the body's rules mint take
  /// the names they had in the body's first inference with the same facts.
  virtual void settle(const Graph &body, const Facts &formals) = 0;
  /// inferBody for a body inferred once with its final facts (If's branches): in place when the
  /// node's own graph is (settle), so its tensors keep their facts; else on a copy.
  virtual Result<Facts> inferBodyFinal(const Graph &body, const Facts &formals,
                                       size_t expectOutputs = SIZE_MAX) = 0;

  // ---- helpers that record learned equalities ----
  Result<Dimension> mergeDims(const Dimension &a, const Dimension &b);
  Result<PartialShape> mergeShapes(const PartialShape &a, const PartialShape &b);
  Result<PartialShape> broadcast(const PartialShape &a, const PartialShape &b,
                                 BroadcastSpec spec = {});
  /// A fresh data-dependent symbol named after the node: `nonzero_0`.
  virtual Dimension freshDim(std::string_view stem, Interval range);
};

/// The newest opset of the default domain whose rules shapeflow implements; a model importing a
/// newer one is inferred with these (the driver says so).
inline constexpr int64_t kNewestOpset = 24;

/// The forward rule.
using InferFn = std::function<Result<Facts>(InferContext &)>;
/// Value propagation over the forward rule's outputs.
using ValueFn = std::function<void(InferContext &, Facts &)>;

// Capabilities of later layers; their contexts are defined there.
class RefineContext;
class CostContext;
struct OpCost;
class EvalContext;
using RefineFn = std::function<Result<void>(RefineContext &)>;
using CostFn = std::function<Result<OpCost>(const CostContext &)>;
using KernelFn = std::function<Result<void>(EvalContext &)>;

/// How often an op's bodies run per run of the op (statistics, lowering, the executor).
enum class BodyRuns : uint8_t {
  None,       // no bodies
  OneBranch,  // If: one of its branches
  TripCount,  // Loop: its trip count
  ScanLength, // Scan: once per element along the scan axis
  PerElement, // SequenceMap: once per element of the input sequence
};

/// The function an elementwise op computes, for rewrites that recognise patterns of ops (an
/// activation after a convolution, GELU written as five ops) from their records rather than
/// from op-type strings.
enum class Pointwise : uint8_t { None, Identity, Add, Sub, Mul, Div, Relu, Sigmoid, Erf, Clip, HardSwish };

/// What an op's outputs hold as ONNX types them: the IR's facts describe tensors, and a
/// sequence or an optional by its elements (ops/sequence.cpp), so a writer of ONNX types reads
/// this to know which outputs are tensors.
enum class OutputKind : uint8_t {
  Tensor,  // tensors (most ops)
  Other,   // sequences or optionals (SequenceConstruct, SplitToSequence, Optional, ...)
  AsInput, // what input 0 holds (Identity)
  Unknown, // what its bodies or its input's contents hold (If, Loop, OptionalGetElement)
};

/// How input 1 gives output 0's shape, for rewrites that write a computed one as a constant.
enum class ShapeInput : uint8_t {
  None,
  Reshape,   // Reshape's target: 0 copies input 0's dim at that index (unless allowzero), one -1
  Broadcast, // Expand's: broadcast with input 0's shape, a 1 keeps input 0's dim
};

/// What lowering, memory planning and rewrites need to know about an op without running it.
struct OpTraits {
  /// Output 0 has the shape of input 0 (elementwise unary ops, activations, normalisations):
  /// its shape value is input 0's.
  bool sameShape = false;
  /// Output 0 may be written over input 0 when that input dies at this op and has output 0's
  /// type and byte size (elementwise ops).
  bool inPlace = false;
  /// Output 0 is input 0's bytes seen with another shape (Reshape, Flatten, Squeeze,
  /// Unsqueeze, Identity): no copy, no buffer of its own.
  bool view = false;
  /// The size of some output depends on input data (NonZero, Unique, NonMaxSuppression, ...):
  /// the kernel computes it (mode 1).
  bool dataDependent = false;
  /// Reads only its inputs' shapes, never their elements (Shape, Size).
  bool metadataOnly = false;
  /// Output 0's elements are some of input 0's (Reshape, Unsqueeze, Transpose, Slice, Expand,
  /// Gather, ...): bounds known for input 0's elements hold for output 0's (Fact::elements).
  bool movesElements = false;
  /// ... and every one of them, when the output is not empty (Reshape, Transpose, Expand, ...;
  /// not Slice or Gather): bounds input 0's elements reach, output 0's reach too.
  bool keepsElements = false;
  BodyRuns bodies = BodyRuns::None;
  /// See Pointwise.
  Pointwise pointwise = Pointwise::None;
  /// An activation applied to output 0 may be fused into the op (rewrite/: Conv followed by a
  /// Relu becomes one FusedConv, ops/fused.h).
  bool takesActivation = false;
  /// See OutputKind.
  OutputKind outputKind = OutputKind::Tensor;
  /// See ShapeInput.
  ShapeInput shapeInput = ShapeInput::None;
  /// Two runs with the same inputs may differ (RandomNormal, Bernoulli, ...): never folded,
  /// merged or removed by a rewrite.
  bool nondeterministic = false;
};

/// What an op's passThrough slot reads: the node's attributes, its inputs' facts (null for an
/// absent input; a constant input's elements in Fact::constant) and its outputs' facts.
struct PassThroughArgs {
  const Attributes &attrs;
  std::vector<const Fact *> inputs;
  std::vector<const Fact *> outputs;
  int64_t opset = 0;
};
/// The index of the input a node passes on unchanged as its output 0 (the simplifier removes
/// the node: Identity; Cast to the type it has; Reshape to the shape it has; Add of zeros), or
/// nullopt.
using PassThroughFn = std::function<std::optional<size_t>(const PassThroughArgs &)>;

/// One version of an op's ONNX schema: the tensor element types each formal input accepts (bit
/// k: the element type whose TensorProto number is k; all bits where the schema does not say).
struct SchemaInputTypes {
  int since = 0;
  bool variadicLast = false; // the last formal input takes every remaining input
  std::vector<uint32_t> masks;
};

/// The schemas' versions known (ONNX's default domain): opsets up to this one. At a later opset an
/// op may accept types its last known version does not, so nothing is checked there.
extern const int kSchemaTypesNewestOpset;

struct OpDef {
  std::string name = {};
  std::string domain = {}; // "" is the default ONNX domain
  InferFn infer = {};
  ValueFn values = {};
  OpTraits traits = {};
  RefineFn refine = {};
  CostFn cost = {};
  /// See PassThroughFn (empty: the op never passes an input on unchanged).
  PassThroughFn passThrough = {};
  KernelFn kernel = {};
  /// The kernel reads inputs that are sequences or optionals (the executor gives the others
  /// tensors only).
  bool kernelTakesSequences = false;
  /// The kernel (a 2-D convolution's) reads input 0 and writes output 0 in oneDNN's channel
  /// layout where the executor asks it to (EvalContext::setLayouts).
  bool kernelTakesBlocked = false;
  /// The schema's versions (ascending), default-domain ops only (registerAllOps).
  std::vector<SchemaInputTypes> inputTypes = {};
};

/// The element types input `i` of a node of `def` at `opset` accepts by its schema (a mask as
/// SchemaInputTypes'); none where unknown (no schema, a later opset than the table's, an input
/// the schema does not have).
std::optional<uint32_t> acceptedInputTypes(const OpDef &def, int opset, size_t i);

class OpRegistry {
public:
  void add(OpDef def);
  /// Registers one record under several names (elementwise families): `def.name` is ignored.
  void addAll(std::initializer_list<std::string_view> names, const OpDef &def);
  const OpDef *find(std::string_view domain, std::string_view name) const;
  /// For a later layer attaching its capability to an op registered here (kernels).
  OpDef *findMutable(std::string_view domain, std::string_view name);
  size_t size() const { return ops_.size(); }
  std::vector<std::string> names() const;
  /// Every record, in no particular order.
  std::vector<const OpDef *> all() const;

private:
  std::unordered_map<std::string, OpDef> ops_; // key: domain + "::" + name
};

/// Every op family, registered explicitly.
void registerAllOps(OpRegistry &r);
/// A process-wide registry with every op (built once).
const OpRegistry &defaultRegistry();

/// The outlet holds a tensor as ONNX types it (OutputKind through its producers; a graph input
/// or a constant does), not a sequence or an optional or what bodies decide.
bool holdsTensor(const Graph &g, OutletId o, const OpRegistry &registry);

} // namespace sf
