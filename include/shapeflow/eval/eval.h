// The reference executor (each op's kernel beside its rule; shapes known at run time): runs a graph on input
// tensors, calling each op's kernel (the `kernel` slot of its record, filled by this layer) in a
// topological order and keeping each tensor until its last reader has run. After each kernel the
// op's own shape rule is applied to the actual input shapes and values (mode 2) and the outputs
// must agree with it (mode 1 where the rule leaves a size to the data): a disagreement is an error
// naming the node, a bug in the kernel or the rule.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/ir/tensor.h"
#include "shapeflow/ops/op.h"
#include "shapeflow/support/result.h"

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sf {

/// A run-time value: a tensor, a sequence of tensors (ONNX's seq(tensor)), or an optional that
/// holds nothing (an optional that holds a value is that value). A default Value is absent (an
/// omitted optional input).
class Value {
public:
  Value() = default;
  /// A tensor (absent when null).
  Value(std::shared_ptr<const Tensor> t) : kind_(t ? Kind::Tensor : Kind::Absent), tensor_(std::move(t)) {}
  static Value sequence(ElementType elementType, std::vector<std::shared_ptr<const Tensor>> elements);
  /// An empty optional of a tensor or sequence whose elements are `elementType`.
  static Value none(ElementType elementType = ElementType::Undefined);

  explicit operator bool() const { return kind_ != Kind::Absent; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  bool isSequence() const { return kind_ == Kind::Sequence; }
  bool isNone() const { return kind_ == Kind::None; }
  /// The tensor (null unless isTensor()).
  const std::shared_ptr<const Tensor> &tensor() const { return tensor_; }
  const Tensor &operator*() const { return *tensor_; }
  const Tensor *operator->() const { return tensor_.get(); }
  /// The elements of a sequence (empty otherwise).
  const std::vector<std::shared_ptr<const Tensor>> &elements() const;
  /// The tensor's element type, or the declared element type of a sequence or empty optional.
  ElementType elementType() const;
  /// `f32[2,3]`, `seq(f32)[3 elements]`, `none`, `absent`.
  std::string describe() const;

private:
  enum class Kind { Absent, Tensor, Sequence, None };
  Kind kind_ = Kind::Absent;
  std::shared_ptr<const Tensor> tensor_;
  std::shared_ptr<const std::vector<std::shared_ptr<const Tensor>>> elements_;
  ElementType elementType_ = ElementType::Undefined;
};

/// Where the executor wants a node's outputs (the run's arena, eval/arena.h): memory of `bytes`
/// for an output the kernel makes (`output`: which one, where the kernel says; otherwise the
/// first free place it fits), or null for the heap. `inPlace`: the kernel writes each element
/// only after reading the same element of its inputs, so the output may sit on the bytes of an
/// input that dies at this node.
class Placer {
public:
  virtual ~Placer() = default;
  virtual std::shared_ptr<std::byte[]> place(int64_t bytes, bool inPlace, std::optional<size_t> output) = 0;
};

/// Bytes a kernel writes an output into (EvalContext::allocate): 64-byte aligned, in the run's
/// arena where the executor placed the output, on the heap otherwise.
class OutputBytes {
public:
  OutputBytes() = default;
  OutputBytes(std::shared_ptr<std::byte[]> p, size_t n) : p_(std::move(p)), n_(n) {}
  std::byte *data() const { return p_.get(); }
  size_t size() const { return n_; }
  std::byte *begin() const { return p_.get(); }
  std::byte *end() const { return p_.get() + n_; }
  /// The tensor these bytes hold (their size must be the type's and shape's).
  Result<Tensor> tensor(ElementType t, Shape shape) && {
    return Tensor::view(t, std::move(shape), std::span<const std::byte>(p_.get(), n_),
                        std::shared_ptr<const void>(p_, p_.get()));
  }

private:
  std::shared_ptr<std::byte[]> p_;
  size_t n_ = 0;
};

/// How the executor keeps a rank-4 f32 tensor [N, C, H, W] between the kernels that read it:
/// plain (row-major NCHW), in channel blocks of 16 or 8 (oneDNN's nChw16c / nChw8c:
/// [N, C/16, H, W, 16], for C a multiple of the block), or channels last (nhwc: [N, H, W, C], for
/// the other channel counts). The channel layouts spare the reorders oneDNN's convolutions make
/// from and to plain tensors; the block is the one oneDNN's kernels take on the machine (16 with
/// AVX-512, 8 with AVX2: a block they do not take costs a reorder or their reference kernel).
enum class Layout : uint8_t { Plain, Blocked16, ChannelsLast, Blocked8 };

/// The channels per block of a blocked layout (16 or 8); 0 for the others.
constexpr int64_t channelBlock(Layout l) {
  return l == Layout::Blocked16 ? 16 : l == Layout::Blocked8 ? 8 : 0;
}
/// The blocked layout of `block` channels (16, else 8).
constexpr Layout blockedLayout(int64_t block) { return block == 16 ? Layout::Blocked16 : Layout::Blocked8; }

/// What a kernel sees: its node's input values (absent optional inputs are absent), attributes,
/// opset; it sets every output. Only kernels registered as taking sequences and optionals see
/// inputs that are not tensors; the executor refuses them to the others.
class EvalContext {
public:
  EvalContext(const Node &node, std::vector<Value> inputs, int64_t opset, int64_t *liveBytes,
              int64_t maxBytes)
      : node_(node), inputs_(std::move(inputs)), opset_(opset), outputs_(node.outputs.size()),
        outputBounds_(node.outputs.size(), kUnbounded), liveBytes_(liveBytes), maxBytes_(maxBytes) {}

  /// A float tensor's bound: every element is finite and at most this in magnitude; kUnbounded
  /// where nothing is known. Kernels that can prove one for an output from their inputs' say so
  /// (a convolution, Add, Relu, Clip, pooling, the ops that move elements), and the executor
  /// carries them from node to node: a convolution applies its Relu or Clip in oneDNN's pass,
  /// which maps a NaN to the lower bound where ONNX keeps it, only where no NaN can occur.
  static constexpr float kUnbounded = std::numeric_limits<float>::infinity();
  float inputBound(size_t i) const { return i < inputBounds_.size() ? inputBounds_[i] : kUnbounded; }
  /// The inputs' bounds, in input order (the caller keeps them while the kernel runs).
  void setInputBounds(std::span<const float> b) { inputBounds_ = b; }
  float outputBound(size_t i) const { return i < outputBounds_.size() ? outputBounds_[i] : kUnbounded; }
  void setOutputBound(size_t i, float b) {
    if (i < outputBounds_.size()) outputBounds_[i] = b;
  }

  size_t numInputs() const { return inputs_.size(); }
  /// Input i is given and is a tensor.
  bool hasInput(size_t i) const { return i < inputs_.size() && inputs_[i].isTensor(); }
  /// Input i; requires hasInput(i).
  /// Input i; a kernel asking for one that is not there (an absent optional, an index past the
  /// node's inputs, a sequence) gets a MissingInput exception, which the executor turns into an
  /// error naming the node: a kernel need not check the inputs it requires before reading them.
  const Tensor &input(size_t i) const {
    if (!hasInput(i)) throw MissingInput{i};
    return *inputs_[i];
  }
  struct MissingInput : std::exception {
    explicit MissingInput(size_t i) : index(i) {}
    const char *what() const noexcept override { return "a kernel read an input that is not there"; }
    size_t index;
  };
  /// Thrown by a kernel's element access given a tensor it cannot read as asked (another element
  /// size, no data): the executor turns it into an error naming the node.
  struct UnreadableInput : std::exception {
    explicit UnreadableInput(std::string w) : why(std::move(w)) {}
    const char *what() const noexcept override { return why.c_str(); }
    std::string why;
  };
  /// Input i is a constant of the graph (an initializer or a Constant node): the same tensor on
  /// every run, so a kernel may keep work done on it (packed weights) keyed by its identity.
  bool inputIsConstant(size_t i) const {
    return graph_ && i < node_.inputs.size() && node_.inputs[i].valid() &&
           graph_->nodes[node_.inputs[i].node].isConstant();
  }
  /// The graph the node belongs to (for inputIsConstant).
  void setGraph(const Graph &g) { graph_ = &g; }
  /// The layout of input 0 and output 0 where the executor keeps a rank-4 f32 tensor's elements
  /// in a channel layout between the kernels that read them so (it decides which before the
  /// run: Layout). Plain elsewhere.
  void setLayouts(Layout input0, Layout output0) { layoutIn_ = input0, layoutOut_ = output0; }
  Layout inputLayout() const { return layoutIn_; }
  Layout outputLayout() const { return layoutOut_; }
  /// Input i as shared, for an output that views its bytes.
  const std::shared_ptr<const Tensor> &inputShared(size_t i) const {
    if (!hasInput(i)) throw MissingInput{i};
    return inputs_[i].tensor();
  }
  /// Input i whatever it is (absent past the last input).
  const Value &value(size_t i) const { return i < inputs_.size() ? inputs_[i] : absent_; }
  size_t numOutputs() const { return outputs_.size(); }
  const Attributes &attrs() const { return node_.attrs; }
  int64_t opset() const { return opset_; }
  const Node &node() const { return node_; }

  /// Zeroed bytes for an output of this type and shape, within the run's memory budget (an
  /// error naming the size otherwise).
  /// `output`: which of the node's outputs these bytes are for (a kernel with several outputs
  /// says so, that each lands at its own place in the executor's arena).
  Result<OutputBytes> allocate(ElementType t, const Shape &shape, std::optional<size_t> output = {});
  /// As allocate, not zeroed: for a kernel that writes every byte of the output (a copy, a
  /// transpose, a slice, a concatenation or split), which the zeroing would only touch first.
  Result<OutputBytes> allocateUnzeroed(ElementType t, const Shape &shape, std::optional<size_t> output = {});
  /// The same, uninitialised and 64-byte aligned, for a kernel that writes every element (no
  /// pass over the bytes to zero them first); where the executor placed the output (its arena)
  /// when it did, over a dying input's bytes only when `inPlace` (see Placer).
  Result<std::shared_ptr<std::byte[]>> allocateForOverwrite(ElementType t, const Shape &shape,
                                                            bool inPlace = false,
                                                            std::optional<size_t> output = {});
  /// Where allocateForOverwrite puts outputs (none: the heap).
  void setPlacer(Placer *p) { placer_ = p; }
  /// An error unless a tensor of this type and shape (and a double per element, for kernels that
  /// compute in double) fits the budget: for kernels that build their output another way, so that
  /// no size an input merely claims is allocated.
  Result<void> admit(ElementType t, const Shape &shape) const;
  Result<void> setOutput(size_t i, Tensor t);
  Result<void> setOutput(size_t i, Value v);
  std::vector<Value> &outputs() { return outputs_; }
  /// Bytes this kernel allocated (counted against the budget until the node's outputs die).
  int64_t allocated() const { return allocated_; }

  /// Runs one of the node's bodies (If branch, Loop or Scan body) with `formals` for its inputs;
  /// the values it captures from enclosing graphs are this node's inputs.
  using BodyRunner =
      std::function<Result<std::vector<Value>>(const Graph &, const std::vector<Value> &)>;
  void setBodyRunner(BodyRunner r) { bodyRunner_ = std::move(r); }
  Result<std::vector<Value>> runBody(const Graph &body, const std::vector<Value> &formals) const {
    if (!bodyRunner_) return makeError("bodies cannot be run here");
    return bodyRunner_(body, formals);
  }

private:
  /// The bytes of an output of this type and shape, counted against the budget.
  Result<int64_t> reserve(ElementType t, const Shape &shape);

  const Node &node_;
  std::vector<Value> inputs_;
  const Graph *graph_ = nullptr;
  Layout layoutIn_ = Layout::Plain, layoutOut_ = Layout::Plain;
  int64_t opset_;
  std::vector<Value> outputs_;
  std::span<const float> inputBounds_;
  std::vector<float> outputBounds_;
  Value absent_;
  int64_t *liveBytes_;
  int64_t maxBytes_;
  int64_t allocated_ = 0;
  Placer *placer_ = nullptr;
  BodyRunner bodyRunner_;
};

namespace eval {

/// Where a run's time went, per op (`run --profile`): kernel calls and their time, and the time
/// of the check of each kernel's outputs against the op's shape rule.
struct OpTime {
  int64_t calls = 0;
  double kernelMs = 0, checkMs = 0;
};

struct ArenaLayout;

struct RunOptions {
  /// Bytes of tensors alive at once (0: half the machine's memory).
  int64_t maxMemory = 0;
  /// Called for every tensor a node produces, with the node and the output index (for a
  /// sequence, once per element).
  std::function<void(const Node &, size_t, const Tensor &)> observe;
  /// The ops and their kernels (default: evalRegistry()).
  const OpRegistry *registry = nullptr;
  /// Threads the matrix products, convolutions and pools may use (OpenBLAS, oneDNN; the rest
  /// of the executor is one thread).
  int threads = 1;
  /// When set, each op's time is added here (by op name, with its domain when not ONNX's).
  std::map<std::string, OpTime> *profile = nullptr;
  /// Apply the op's shape rule to the actual inputs of every node (mode 2): before the kernel,
  /// inputs the rule rejects are an error and never reach the kernel; after it, the outputs must
  /// agree with what the rule expects. A caller running the same inputs again (a timing loop)
  /// may leave both to the first run: the executor is deterministic, so the same inputs give
  /// the same outputs and the same verdict. With it off, kernels still refuse inputs they cannot
  /// read (missing, another element size), but inputs only the rule would reject reach them.
  bool checkRules = true;
  /// Tensors at their places in one arena (eval/arena.h: planArena), for a layout made for this
  /// graph at these inputs' sizes; ignored while `observe` is set (an observer may keep tensors).
  const ArenaLayout *arena = nullptr;
  /// Runs of If, Loop and Scan bodies in all, nested ones included, past which the run is an
  /// error (0: no limit but each Loop's own 2^24 iterations): a caller that must bound a run's
  /// work (a fuzzer, a service) sets it.
  int64_t maxBodyRuns = 0;
  /// The channels per block of the blocked layout (Layout): 16 or 8, or 0 for the one oneDNN's
  /// convolutions take on this machine (16 with AVX-512, else 8).
  int channelBlock = 0;
};

/// How a run used its arena.
struct ArenaUse {
  int64_t bytes = 0;      // the arena
  size_t placed = 0;      // tensors written at their planned offsets
  size_t inPlace = 0;     // of which written over a dying input's bytes
  size_t elsewhere = 0;   // tensors the plan placed that a kernel made another way (on the heap)
  size_t conflicts = 0;   // places refused because a tensor still alive held those bytes
  std::vector<std::string> refused; // the first few, saying where
};

struct RunResult {
  std::vector<std::string> outputNames;
  std::vector<Value> outputs;
  size_t nodesRun = 0;
  int64_t peakBytes = 0; // of the tensors the run allocated, alive at once
  std::optional<ArenaUse> arena; // when the run had one
  /// Tensors kept in a channel layout between convolutions (no reorder between them): in
  /// channel blocks or channels last (Layout); `channelsLastTensors` of them the latter.
  size_t blockedTensors = 0;
  size_t channelsLastTensors = 0;
};

/// The registry of every op with its kernel where this layer has one.
const OpRegistry &evalRegistry();
/// Fills the kernel slot of the records in `r` this layer implements.
void registerKernels(OpRegistry &r);

/// Runs `g` on `inputs` (by graph input name; every input that is not a constant is required,
/// with the element type its fact says and a shape its fact admits).
Result<RunResult> run(const Graph &g, const std::map<std::string, Tensor> &inputs,
                      const RunOptions &options = {});
/// The same with sequences and optionals among the inputs (each element checked against the
/// input's fact, which describes the elements).
Result<RunResult> run(const Graph &g, const std::map<std::string, Value> &inputs,
                      const RunOptions &options = {});

/// A tensor of `type` and `shape` with pseudo-random elements from `seed`: floats uniform in
/// [-1, 1), integers in [0, 10), bools either.
Result<Tensor> randomTensor(ElementType type, const Shape &shape, uint64_t seed);

} // namespace eval
} // namespace sf
