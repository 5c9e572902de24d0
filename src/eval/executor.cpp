// The executor (eval/eval.h): topological walk, tensor lifetimes, the memory budget, and the
// check of every kernel's outputs against the op's shape rule at the actual inputs.
#include "shapeflow/eval/eval.h"

#include "shapeflow/eval/arena.h"

#include "blas.h"
#include "dnnl.h"
#include "kernel_util.h"

#include "shapeflow/support/checked.h"
#include "shapeflow/support/format.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>

namespace sf {

namespace {

/// The elements of an output of this shape (an error past 2^63).
Result<int64_t> outputElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    auto c = d < 0 ? std::nullopt : checkedMul(count, d);
    if (!c) return errorf("an output of shape [{}] has more than 2^63 elements", fmt::join(shape, ","));
    count = *c;
  }
  return count;
}

} // namespace

Result<int64_t> EvalContext::reserve(ElementType t, const Shape &shape) {
  SF_ASSIGN(int64_t count, outputElements(shape));
  auto bytes = checkedMul(count, int64_t(elementSize(t)));
  if (!bytes || *liveBytes_ + *bytes > maxBytes_)
    return errorf("an output of {}[{}] ({} bytes) does not fit the memory budget ({} of {} bytes "
                  "in use; --max-memory)",
                  shortName(t), fmt::join(shape, ","), bytes ? std::to_string(*bytes) : "> 2^63",
                  *liveBytes_, maxBytes_);
  *liveBytes_ += *bytes;
  allocated_ += *bytes;
  return *bytes;
}

Result<OutputBytes> EvalContext::allocate(ElementType t, const Shape &shape) {
  SF_ASSIGN(auto p, allocateForOverwrite(t, shape));
  size_t n = size_t(outputElements(shape).value()) * elementSize(t);
  std::memset(p.get(), 0, n);
  return OutputBytes(std::move(p), n);
}

Result<std::shared_ptr<std::byte[]>> EvalContext::allocateForOverwrite(ElementType t, const Shape &shape,
                                                                       bool inPlace) {
  SF_ASSIGN(int64_t bytes, reserve(t, shape));
  if (placer_ && bytes > 0)
    if (auto placed = placer_->place(bytes, inPlace)) return placed;
  constexpr size_t kAlign = 64;
  size_t rounded = (size_t(bytes) + kAlign - 1) / kAlign * kAlign; // within the budget's checks
  auto *p = static_cast<std::byte *>(std::aligned_alloc(kAlign, std::max(rounded, kAlign)));
  if (!p) return errorf("out of memory for an output of {} bytes", bytes);
  return std::shared_ptr<std::byte[]>(p, [](std::byte *q) { std::free(q); });
}

Result<void> EvalContext::admit(ElementType t, const Shape &shape) const {
  SF_ASSIGN(int64_t count, outputElements(shape));
  auto bytes = checkedMul(count, int64_t(std::max<size_t>(elementSize(t), 8)));
  if (!bytes || *liveBytes_ + *bytes > maxBytes_)
    return errorf("an output of {}[{}] does not fit the memory budget ({} of {} bytes in use; "
                  "--max-memory)",
                  shortName(t), fmt::join(shape, ","), *liveBytes_, maxBytes_);
  return success();
}

Result<void> EvalContext::setOutput(size_t i, Tensor t) {
  return setOutput(i, Value(std::make_shared<const Tensor>(std::move(t))));
}

Result<void> EvalContext::setOutput(size_t i, Value v) {
  if (i >= outputs_.size())
    return errorf("the kernel set output {} of an op with {} outputs", i, outputs_.size());
  outputs_[i] = std::move(v);
  return success();
}

Value Value::sequence(ElementType elementType, std::vector<std::shared_ptr<const Tensor>> elements) {
  Value v;
  v.kind_ = Kind::Sequence;
  v.elementType_ = elementType;
  v.elements_ = std::make_shared<const std::vector<std::shared_ptr<const Tensor>>>(std::move(elements));
  return v;
}

Value Value::none(ElementType elementType) {
  Value v;
  v.kind_ = Kind::None;
  v.elementType_ = elementType;
  return v;
}

const std::vector<std::shared_ptr<const Tensor>> &Value::elements() const {
  static const std::vector<std::shared_ptr<const Tensor>> empty;
  return elements_ ? *elements_ : empty;
}

ElementType Value::elementType() const { return tensor_ ? tensor_->type() : elementType_; }

std::string Value::describe() const {
  switch (kind_) {
  case Kind::Absent: return "absent";
  case Kind::None: return "none";
  case Kind::Tensor: return fmt::format("{}[{}]", shortName(tensor_->type()), fmt::join(tensor_->shape(), ","));
  case Kind::Sequence: break;
  }
  return fmt::format("seq({})[{} elements]", shortName(elementType_), elements().size());
}

namespace eval {
namespace {

/// What a Conv's kernel may fold into its output, and the nodes that then have nothing left to
/// do: `take` gets the Conv's output as its own, `skip` produces nothing.
struct Fold {
  EvalContext::Activation activation;
  uint32_t take = kNoNode, skip = kNoNode;
};

/// The activation after a Conv whose output nothing else reads or returns: a Relu, or
/// x * Sigmoid(x) (SiLU: the Sigmoid read only by the Mul, which reads the Conv's output too).
Fold foldAfter(const Graph &g, const Node &conv, const std::vector<std::vector<bool>> &isOutput) {
  using Kind = EvalContext::Activation::Kind;
  Fold none;
  if (conv.opType != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 || isOutput[conv.id][0])
    return none;
  const auto &readers = conv.outputs[0].successors;
  if (readers.size() == 2) {
    for (int k = 0; k < 2; ++k) {
      const Node &sig = g.nodes[readers[k].node], &mul = g.nodes[readers[1 - k].node];
      if (sig.opType != "Sigmoid" || !sig.domain.empty() || mul.opType != "Mul" || !mul.domain.empty())
        continue;
      if (isOutput[sig.id][0] || sig.outputs[0].successors.size() != 1 ||
          sig.outputs[0].successors[0].node != mul.id || mul.inputs.size() != 2)
        continue;
      OutletId convOut{conv.id, 0}, sigOut{sig.id, 0};
      bool pair = (mul.inputs[0] == convOut && mul.inputs[1] == sigOut) ||
                  (mul.inputs[1] == convOut && mul.inputs[0] == sigOut);
      if (pair) return {{Kind::Swish, 1.0f}, mul.id, sig.id};
    }
    return none;
  }
  if (readers.size() != 1) return none;
  InletId in = readers[0];
  const Node &act = g.nodes[in.node];
  if (!act.domain.empty() || in.slot != 0) return none;
  if (act.opType == "Relu") return {{Kind::Relu, 0.0f}, act.id, kNoNode};
  // Not Clip: oneDNN's clip turns a NaN into the lower bound where the Clip kernel keeps it (a
  // NaN stays NaN through Relu and x * Sigmoid(x) either way).
  return none;
}

bool sameExactShape(const PartialShape &a, const PartialShape &b);

/// The value of a one-element constant input.
std::optional<double> scalarConstant(const Graph &g, OutletId o) {
  if (!g.contains(o)) return std::nullopt;
  const Fact &f = g.fact(o);
  if (!f.constant || !f.constant->hasData() || f.constant->elementCount() != 1) return std::nullopt;
  auto v = f.constant->toDoubles(1);
  if (!v.ok()) return std::nullopt;
  return (*v)[0];
}

/// GELU as torch exports it, x (erf(x / sqrt 2) + 1) / 2, in f32: Div by sqrt 2 (or Mul by its
/// inverse), Erf, Add of 1, and two Muls nested either way ((x a) 0.5 or (x 0.5) a), every
/// intermediate read only by the next and not a graph output. Computed in one pass at the Mul
/// that reads x (`compute`, x its input `xSlot`), `take` gets the result, `skip` produce nothing.
struct Gelu {
  uint32_t compute = kNoNode, take = kNoNode;
  size_t xSlot = 0;
  std::array<uint32_t, 3> skip{};
};

std::vector<Gelu> findGelus(const Graph &g, const std::vector<std::vector<bool>> &isOutput) {
  auto is = [](const Node &n, const char *op) { return n.opType == op && n.domain.empty(); };
  auto near = [](std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-6 * want; };
  // The only reader of a node's output 0, or null.
  auto onlyReader = [&](const Node &n) -> const Node * {
    if (n.outputs.size() != 1 || isOutput[n.id][0] || n.outputs[0].successors.size() != 1) return nullptr;
    return &g.nodes[n.outputs[0].successors[0].node];
  };
  // The input of a two-input node that is not `o` (invalid when neither is or both are).
  auto other = [](const Node &n, OutletId o) -> OutletId {
    if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return OutletId{};
    if (n.inputs[0] == o) return n.inputs[1];
    if (n.inputs[1] == o) return n.inputs[0];
    return OutletId{};
  };
  std::vector<Gelu> out;
  for (const Node &erf : g.nodes) {
    if (erf.removed || !is(erf, "Erf") || erf.inputs.size() != 1 || !erf.inputs[0].valid()) continue;
    const Node &scale = g.nodes[erf.inputs[0].node];
    if (onlyReader(scale) != &erf || scale.inputs.size() != 2) continue;
    OutletId x;
    for (size_t k = 0; k < 2 && !x.valid(); ++k) {
      OutletId c = scale.inputs[1 - k];
      if ((is(scale, "Div") && k == 0 && near(scalarConstant(g, c), std::sqrt(2.0))) ||
          (is(scale, "Mul") && near(scalarConstant(g, c), std::sqrt(0.5))))
        x = scale.inputs[k];
    }
    if (!x.valid() || !g.contains(x) || g.fact(x).type != ElementType::F32) continue;
    const Node *add = onlyReader(erf);
    if (!add || !is(*add, "Add") || !near(scalarConstant(g, other(*add, {erf.id, 0})), 1.0)) continue;
    const Node *mul = onlyReader(*add);
    if (!mul || !is(*mul, "Mul")) continue;
    OutletId m = other(*mul, {add->id, 0});
    if (!m.valid()) continue;
    Gelu found;
    found.skip = {scale.id, erf.id, add->id};
    if (m == x) { // (x a) 0.5
      const Node *half = onlyReader(*mul);
      if (!half || !is(*half, "Mul") || !near(scalarConstant(g, other(*half, {mul->id, 0})), 0.5)) continue;
      found.compute = mul->id, found.take = half->id;
    } else { // (x 0.5) a
      const Node &h = g.nodes[m.node];
      if (!is(h, "Mul") || onlyReader(h) != mul || !near(scalarConstant(g, other(h, x)), 0.5)) continue;
      found.compute = h.id, found.take = mul->id;
    }
    // The constants must not broadcast x to more dims (a [1,1] one would): the fold gives x's shape.
    if (!sameExactShape(g.fact(x).shape, g.nodes[found.take].outputs[0].fact.shape)) continue;
    const Node &c = g.nodes[found.compute];
    found.xSlot = c.inputs[0] == x ? 0 : 1;
    out.push_back(found);
  }
  return out;
}

/// A 2-D convolution in f32 (oneDNN can keep its input and output in channel blocks).
bool isConv2d(const Graph &g, const Node &n) {
  if (n.opType != "Conv" || !n.domain.empty() || n.inputs.size() < 2 || n.outputs.size() != 1) return false;
  if (!g.contains(n.inputs[0]) || !g.contains(n.inputs[1])) return false;
  const Fact &x = g.fact(n.inputs[0]), &w = g.fact(n.inputs[1]);
  return x.type == ElementType::F32 && x.shape.rankIsStatic() && x.shape.size() == 4 &&
         w.shape.rankIsStatic() && w.shape.size() == 4;
}

/// Shapes equal at every binding: the same static sizes or the same expressions of symbols (an
/// interval without an expression says nothing about another one).
bool sameExactShape(const PartialShape &a, const PartialShape &b) {
  if (!a.rankIsStatic() || !b.rankIsStatic() || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].isStatic() && b[i].isStatic() && a[i].length() == b[i].length()) continue;
    if (a[i].isStatic() || b[i].isStatic() || !a[i].expr() || a[i].expr() != b[i].expr()) return false;
  }
  return true;
}

/// An elementwise op (unary or broadcasting, ops/elementwise.cpp's in-place trait) whose every
/// input has its output's exact shape or one element: it computes element i of the output from
/// element i of the inputs whatever order the elements are stored in.
bool isLayoutFree(const Graph &g, const Node &n, const OpDef *def) {
  if (!def || !def->traits.inPlace || !n.domain.empty() || n.outputs.size() != 1) return false;
  const PartialShape &out = n.outputs[0].fact.shape;
  bool full = false;
  for (OutletId in : n.inputs) {
    if (!in.valid()) continue;
    if (!g.contains(in)) return false;
    const PartialShape &s = g.fact(in).shape;
    if (sameExactShape(s, out)) {
      full = true;
      continue;
    }
    auto shape = s.rankIsStatic() ? s.toShape() : Result<Shape>(makeError("unknown rank"));
    auto count = shape.ok() ? outputElements(*shape) : Result<int64_t>(makeError("unknown shape"));
    if (!count.ok() || *count != 1) return false;
  }
  return full;
}

/// The tensors the executor keeps in oneDNN's nChw16c (channels in blocks of 16) from the Conv
/// that makes them (or the layout-free elementwise op, e.g. a Relu or a residual Add, whose
/// inputs are so kept) to the Convs and layout-free ops that read them: no reorder between
/// two convolutions. f32, rank 4, channels a static multiple of 16, not a graph output, every
/// reader a Conv (its input X) or a layout-free op whose output is kept so too.
std::vector<std::vector<bool>> blockedTensors(const Graph &g, const std::vector<const OpDef *> &defs,
                                              const std::vector<std::vector<bool>> &isOutput) {
  std::vector<std::vector<bool>> blocked(g.nodes.size());
  std::vector<int8_t> role(g.nodes.size(), 0); // 1 conv, 2 layout-free
  for (const Node &n : g.nodes) {
    blocked[n.id].assign(n.outputs.size(), false);
    if (n.removed) continue;
    role[n.id] = isConv2d(g, n) ? 1 : isLayoutFree(g, n, defs[n.id]) ? 2 : 0;
    if (!role[n.id]) continue;
    const Fact &f = n.outputs[0].fact;
    blocked[n.id][0] = !isOutput[n.id][0] && f.type == ElementType::F32 && f.shape.rankIsStatic() &&
                       f.shape.size() == 4 && f.shape[1].isStatic() && f.shape[1].length() % 16 == 0 &&
                       f.shape[1].length() > 0;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node &n : g.nodes) {
      if (n.removed || n.outputs.empty() || !blocked[n.id][0]) continue;
      bool ok = true;
      if (role[n.id] == 2)
        for (OutletId in : n.inputs)
          if (in.valid() && sameExactShape(g.fact(in).shape, n.outputs[0].fact.shape))
            ok = ok && blocked[in.node][in.slot];
      for (InletId r : n.outputs[0].successors) {
        const Node &reader = g.nodes[r.node];
        ok = ok && ((role[reader.id] == 1 && r.slot == 0) || (role[reader.id] == 2 && blocked[reader.id][0]));
      }
      if (!ok) blocked[n.id][0] = false, changed = true;
    }
  }
  return blocked;
}

/// A constant whose elements lie at an address their type cannot be read from (a view of a
/// model file's bytes at an odd offset) as an aligned copy, made once and kept per thread for as
/// long as the constant lives: otherwise every kernel reading it copies it on every run (a
/// transformer's weights, each MatMul). Aligned constants come back as they are.
std::shared_ptr<const Tensor> alignedConstant(const std::shared_ptr<const Tensor> &t) {
  if (!t || !t->hasData() || t->type() == ElementType::String) return t;
  size_t align = std::min<size_t>(elementSize(t->type()), alignof(std::max_align_t));
  if (align <= 1 || reinterpret_cast<uintptr_t>(t->bytes().data()) % align == 0) return t;
  struct Copy {
    std::weak_ptr<const Tensor> of;
    std::shared_ptr<const Tensor> aligned;
  };
  thread_local std::map<const Tensor *, Copy> copies;
  auto it = copies.find(t.get());
  if (it != copies.end() && !it->second.of.expired()) return it->second.aligned;
  std::erase_if(copies, [](const auto &e) { return e.second.of.expired(); });
  auto bytes = t->bytes();
  auto copy = Tensor::fromBytes(t->type(), t->shape(), std::vector<std::byte>(bytes.begin(), bytes.end()));
  if (!copy.ok()) return t;
  auto shared = std::make_shared<const Tensor>(std::move(*copy));
  copies[t.get()] = Copy{t, shared};
  return shared;
}


int64_t defaultBudget() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0) return int64_t(4) << 30;
  return int64_t(pages) * size / 2;
}

/// The op's shape rule applied to actual tensors: concrete facts in, facts out.
class ActualInferContext : public InferContext {
public:
  ActualInferContext(const Node &n, std::vector<Fact> inputs) : node_(n), inputs_(std::move(inputs)) {}
  size_t numInputs() const override { return inputs_.size(); }
  bool hasInput(size_t i) const override { return i < inputs_.size() && !absent(i); }
  const Fact &input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : unknown_; }
  size_t numOutputs() const override { return node_.outputs.size(); }
  const Attributes &attrs() const override { return node_.attrs; }
  int64_t opset() const override { return node_.opsetVersion; }
  const std::string &nodeName() const override { return node_.name; }
  SymbolTable &symbols() override { return symbols_; }
  void warn(std::string) override {}
  Result<Facts> inferBody(const Graph &, const Facts &, size_t) override {
    return errorf("bodies are not checked at run time");
  }
  Result<Facts> memoized(const Graph &, const std::function<Result<Facts>()> &compute) override {
    return compute();
  }
  void settle(const Graph &, const Facts &) override {}
  Result<Facts> inferBodyFinal(const Graph &, const Facts &, size_t) override {
    return errorf("bodies are not checked at run time");
  }

private:
  bool absent(size_t i) const { return !node_.inputs[i].valid(); }
  const Node &node_;
  std::vector<Fact> inputs_;
  SymbolTable symbols_;
  Fact unknown_;
};

std::string shapeText(const Shape &s) { return fmt::format("[{}]", fmt::join(s, ",")); }

/// The tensors a value holds: itself, or a sequence's elements.
std::vector<const Tensor *> tensorsOf(const Value &v) {
  std::vector<const Tensor *> out;
  if (v.isTensor()) out.push_back(v.tensor().get());
  for (const auto &e : v.elements()) out.push_back(e.get());
  return out;
}

/// A tensor agrees with a fact: the type where known, the rank where known, every static dim
/// exactly and every other one within its bounds. The error says what differs.
Result<void> agreesWith(const Fact &f, const Tensor &t) {
  if (f.type != ElementType::Undefined && f.type != t.type())
    return errorf("is {} but", shortName(t.type()));
  if (!f.shape.rankIsStatic()) return success();
  if (f.shape.size() != t.shape().size()) return errorf("has shape {} but", shapeText(t.shape()));
  for (size_t i = 0; i < t.shape().size(); ++i) {
    const Dimension &d = f.shape[i];
    int64_t v = t.shape()[i];
    if (d.isStatic() ? d.length() != v : (v < d.minLength() || (d.hasUpperBound() && v > d.maxLength())))
      return errorf("has shape {} but", shapeText(t.shape()));
  }
  return success();
}

/// The outputs agree with the rule's facts (a sequence's fact describes each of its elements).
Result<void> agree(const Facts &expected, const std::vector<Value> &actual) {
  for (size_t k = 0; k < actual.size() && k < expected.size(); ++k)
    for (const Tensor *t : tensorsOf(actual[k]))
      if (auto a = agreesWith(expected[k], *t); !a.ok())
        return errorf("output {} {} the rule says {}", k, a.error().message, expected[k]);
  return success();
}

/// The fact of an actual value: a tensor's own; the hull of a sequence's elements (the rules'
/// convention, ops/sequence.cpp); nothing known of an empty optional.
Fact actualFact(const Value &v) {
  if (v.isTensor()) return Fact::fromTensor(v.tensor());
  Fact f;
  if (!v.isSequence()) return f;
  f.type = v.elementType();
  bool first = true;
  for (const auto &e : v.elements()) {
    Fact ef = Fact::known(e->type(), PartialShape(e->shape()));
    if (first) f = ef, first = false;
    else if (auto h = hull(f, ef); h.ok()) f = *h;
  }
  return f;
}

} // namespace

namespace {

/// The run's arena (eval/arena.h) and which of its bytes hold tensors still alive: a place is
/// given only where no live tensor's bytes are, except an input dying at the node for a kernel
/// that writes in place. The account is the executor's own (values it still holds), not the
/// plan's: a plan that disagrees with the run costs heap memory, not a wrong result.
struct Arena {
  const ArenaLayout &layout;
  std::shared_ptr<std::byte[]> memory;
  struct Live {
    int64_t begin, end;
    OutletId of;
  };
  std::vector<Live> live;
  ArenaUse use;

  /// The bytes' offset in the arena (none: they are not in it).
  std::optional<int64_t> offsetOf(const std::byte *p) const {
    const std::byte *base = memory.get();
    if (!p || p < base || p >= base + layout.bytes) return std::nullopt;
    return int64_t(p - base);
  }
  void hold(OutletId o, const Value &v) {
    auto add = [&](const Tensor &t) {
      if (auto at = offsetOf(t.bytes().data()))
        live.push_back({*at, *at + int64_t(t.bytes().size()), o});
    };
    if (v.isTensor()) add(*v.tensor());
    for (const auto &e : v.elements()) add(*e);
  }
  void drop(OutletId o) {
    std::erase_if(live, [&](const Live &l) { return l.of == o; });
  }

  /// The arena of `bytes`: the last one this thread used when nothing holds it any more.
  static std::shared_ptr<std::byte[]> acquire(int64_t bytes) {
    thread_local std::shared_ptr<std::byte[]> kept;
    thread_local int64_t keptBytes = 0;
    if (kept && kept.use_count() == 1 && keptBytes >= bytes) return kept;
    kept.reset();
    constexpr size_t kAlign = 64;
    size_t rounded = (size_t(std::max<int64_t>(bytes, 1)) + kAlign - 1) / kAlign * kAlign;
    auto *p = static_cast<std::byte *>(std::aligned_alloc(kAlign, rounded));
    if (!p) return nullptr;
    kept = std::shared_ptr<std::byte[]>(p, [](std::byte *q) { std::free(q); });
    keptBytes = bytes;
    return kept;
  }
};

/// One node's places: its outputs' planned offsets, each given once.
class NodePlacer : public Placer {
public:
  NodePlacer(Arena &arena, const Graph &g, const Node &n, std::vector<OutletId> dying)
      : arena_(arena), g_(g), node_(n), places_(arena.layout.places[n.id]), given_(places_.size(), false),
        dying_(std::move(dying)) {}
  /// It gave these bytes to this node's kernel.
  bool gave(const std::byte *p) const { return std::find(gave_.begin(), gave_.end(), p) != gave_.end(); }

  std::shared_ptr<std::byte[]> place(int64_t bytes, bool inPlace) override {
    for (size_t k = 0; k < places_.size(); ++k) {
      const auto &p = places_[k];
      if (!p || given_[k] || p->bytes < bytes || (p->inPlace && !inPlace)) continue;
      int64_t begin = p->offset, end = p->offset + bytes;
      bool over = false; // a dying input's bytes
      for (const Arena::Live &l : arena_.live) {
        if (l.end <= begin || end <= l.begin) continue;
        // Over a dying input only from its first byte and within it: element i then lands on
        // the input's element i, which the kernel has read.
        bool overwritable = p->inPlace && l.begin == begin && end <= l.end &&
                            std::find(dying_.begin(), dying_.end(), l.of) != dying_.end();
        if (!overwritable) {
          if (arena_.use.refused.size() < 5)
            arena_.use.refused.push_back(fmt::format(
                "output {} of node '{}' ({}) over '{}', still alive", k, node_.name, node_.opType,
                g_.outlet(l.of).name));
          ++arena_.use.conflicts;
          return nullptr;
        }
        over = true;
      }
      given_[k] = true;
      gave_.push_back(arena_.memory.get() + begin);
      // Alive from now (the node's other allocations must not overlap it); the executor puts
      // what the kernel made in its place once it returns.
      arena_.live.push_back({begin, end, OutletId{node_.id, uint32_t(k)}});
      ++arena_.use.placed;
      if (over) ++arena_.use.inPlace;
      return std::shared_ptr<std::byte[]>(arena_.memory, arena_.memory.get() + begin);
    }
    return nullptr;
  }

private:
private:
  std::vector<const std::byte *> gave_;
  Arena &arena_;
  const Graph &g_;
  const Node &node_;
  const std::vector<std::optional<Placement>> &places_;
  std::vector<bool> given_;
  std::vector<OutletId> dying_;
};

/// One run: the registry, options, the bytes alive and the budget, shared by the bodies it runs.
struct Runner {
  const OpRegistry &registry;
  const RunOptions &options;
  int64_t live = 0, budget = 0, peak = 0;
  size_t nodesRun = 0;
  Arena *arena = nullptr; // the top graph's, when the run has one
  size_t blockedCount = 0; // tensors kept in channel blocks (bodies' included, once per body run)

  /// Runs `g` with `formals` for its non-captured inputs (in order; null: the input's default
  /// initializer) and `owner` the inputs of the node whose body it is (captured values).
  Result<std::vector<Value>> execute(const Graph &g, const std::vector<Value> &formals,
                                     const std::vector<Value> *owner, int depth);
};

Result<std::vector<Value>> Runner::execute(const Graph &g, const std::vector<Value> &formals,
                                           const std::vector<Value> *owner, int depth) {
  if (depth > 64) return errorf("bodies nested deeper than 64");
  Arena *arena = depth == 0 ? this->arena : nullptr;
  std::vector<uint32_t> order;
  if (arena) {
    order = arena->layout.order;
  } else {
    SF_ASSIGN(order, g.topologicalOrder());
  }
  std::vector<std::vector<Value>> values(g.nodes.size());
  std::vector<int64_t> nodeBytes(g.nodes.size(), 0);
  std::vector<size_t> aliveOutputs(g.nodes.size(), 0);
  // Nodes whose work a Conv's kernel did (Fold): the Conv they take their output from, or skipped.
  std::vector<uint32_t> foldedFrom(g.nodes.size(), kNoNode);
  std::vector<bool> skipped(g.nodes.size(), false);
  // Each node's record, looked up once.
  std::vector<const OpDef *> defs(g.nodes.size(), nullptr);
  for (const Node &n : g.nodes)
    if (!n.removed && !n.isParameter() && !n.isConstant()) defs[n.id] = registry.find(n.domain, n.opType);
  // Readers left per outlet; graph outputs are never released.
  std::vector<std::vector<size_t>> readers(g.nodes.size());
  std::vector<std::vector<bool>> isOutput(g.nodes.size());
  // Of those, the readers of the elements (not Shape or Size): once none is left the elements
  // go (where the memory plan frees them) and the readers of the shape see a tensor without data.
  auto readsShapeOnly = [&](const Node &n) { return defs[n.id] && defs[n.id]->traits.metadataOnly; };
  std::vector<std::vector<size_t>> dataReaders(g.nodes.size());
  for (const Node &n : g.nodes) {
    readers[n.id].resize(n.outputs.size());
    dataReaders[n.id].resize(n.outputs.size());
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      readers[n.id][k] = n.outputs[k].successors.size();
      for (InletId in : n.outputs[k].successors)
        dataReaders[n.id][k] += !readsShapeOnly(g.nodes[in.node]);
    }
    isOutput[n.id].assign(n.outputs.size(), false);
  }
  for (OutletId o : g.outputs)
    if (o.valid()) isOutput[o.node][o.slot] = true;
  // Tensors kept in channel blocks between convolutions (not while every tensor is observed
  // in the plain layout, nor with a caller's registry, nor without oneDNN).
  std::vector<std::vector<bool>> blocked;
  if (!options.observe && !options.registry && detail::dnnlAvailable()) {
    blocked = blockedTensors(g, defs, isOutput);
    for (const auto &node : blocked) blockedCount += size_t(std::count(node.begin(), node.end(), true));
  }
  // GELU's five ops in one pass (findGelus), on the same terms as the Conv folds.
  std::vector<size_t> geluX(g.nodes.size(), SIZE_MAX); // at a node computing it: x's input
  if (!options.observe && !options.registry)
    for (const Gelu &f : findGelus(g, isOutput)) {
      geluX[f.compute] = f.xSlot;
      foldedFrom[f.take] = f.compute;
      for (uint32_t k : f.skip) skipped[k] = true;
    }
  // Which formal each graph input takes.
  std::unordered_map<uint32_t, size_t> formalOf;
  {
    size_t k = 0;
    for (OutletId o : g.inputs)
      if (!g.nodes[o.node].isCaptured()) formalOf[o.node] = k++;
  }
  auto release = [&](OutletId o) {
    auto &v = values[o.node][o.slot];
    if (!v) return;
    v = Value();
    if (arena) arena->drop(o);
    if (--aliveOutputs[o.node] == 0) {
      live -= nodeBytes[o.node];
      nodeBytes[o.node] = 0;
    }
  };

  auto shed = [&](OutletId o) {
    auto &v = values[o.node][o.slot];
    if (!v.isTensor() || !v->hasData() || isOutput[o.node][o.slot] || readers[o.node][o.slot] == 0) return;
    if (auto t = Tensor::withoutData(v->type(), v->shape()); t.ok()) {
      v = Value(std::make_shared<const Tensor>(std::move(*t)));
      if (arena) arena->drop(o);
    }
  };

  // After a node ran: its inputs' tensors go once their last reader has run, their elements once
  // their last reader of elements has.
  auto releaseInputs = [&](const Node &n) {
    bool shapeOnly = readsShapeOnly(n);
    for (OutletId o : n.inputs) {
      if (!o.valid()) continue;
      if (--readers[o.node][o.slot] == 0 && !isOutput[o.node][o.slot]) release(o);
      else if (!shapeOnly && dataReaders[o.node][o.slot] > 0 && --dataReaders[o.node][o.slot] == 0) shed(o);
    }
  };

  for (uint32_t id : order) {
    const Node &n = g.nodes[id];
    if (n.removed) continue;
    values[id].resize(n.outputs.size());
    if (n.isParameter()) {
      const std::string &name = n.outputs[0].name;
      if (n.isCaptured()) {
        SF_ASSIGN(int64_t at, n.attrs.getInt("captured"));
        if (!owner || at < 0 || size_t(at) >= owner->size() || !(*owner)[size_t(at)])
          return errorf("'{}' is captured from an enclosing graph that does not give it", name);
        values[id][0] = (*owner)[size_t(at)];
      } else {
        auto f = formalOf.find(id);
        Value t = f != formalOf.end() && f->second < formals.size() ? formals[f->second] : Value();
        const Fact &fact = n.outputs[0].fact;
        if (!t) {
          if (!(fact.constant && fact.constant->hasData())) return errorf("input '{}' ({}) is not given", name, fact);
          t = Value(alignedConstant(fact.constant));
        }
        values[id][0] = t;
      }
      aliveOutputs[id] = 1;
      continue;
    }
    if (n.isConstant()) {
      const Fact &fact = n.outputs[0].fact;
      if (!fact.constant || !fact.constant->hasData())
        return errorf("node '{}': the constant '{}' ({}) has no data to run with", n.name,
                      n.outputs[0].name, fact);
      values[id][0] = Value(alignedConstant(fact.constant));
      aliveOutputs[id] = 1;
      continue;
    }
    // An activation its Conv already applied: the node taking the result gets the Conv's output
    // (and its bytes); a skipped one (SiLU's Sigmoid) produces nothing.
    if (foldedFrom[id] != kNoNode || skipped[id]) {
      if (!skipped[id]) {
        uint32_t src = foldedFrom[id];
        if (isOutput[id][0] || readers[id][0] > 0) {
          values[id][0] = values[src][0];
          aliveOutputs[id] = 1;
          nodeBytes[id] = nodeBytes[src];
          if (arena) arena->hold({id, 0}, values[id][0]);
        } else {
          live -= nodeBytes[src]; // nothing reads the result: its bytes go now
        }
        nodeBytes[src] = 0;
      }
      if (options.profile) ++(*options.profile)[n.opType + " (folded)"].calls;
      ++nodesRun;
      releaseInputs(n);
      continue;
    }
    const OpDef *def = defs[id];
    std::string op = n.domain.empty() ? n.opType : n.domain + "." + n.opType;
    if (!def || !def->kernel)
      return errorf("node '{}' ({}): no kernel for op '{}'", n.name, op, op);
    std::vector<Value> ins;
    for (OutletId o : n.inputs) {
      ins.push_back(o.valid() ? values[o.node][o.slot] : Value());
      if (ins.back() && !ins.back().isTensor() && !def->kernelTakesSequences)
        return errorf("node '{}' ({}): input {} is {}, and {} takes tensors", n.name, op,
                      ins.size() - 1, ins.back().describe(), op);
    }
    // A graph that does not say which opset it imports (the text form without `opset`) gets the
    // newest one's semantics, as the rules do.
    EvalContext ctx(n, ins, n.opsetVersion ? n.opsetVersion : kNewestOpset, &live, budget);
    ctx.setGraph(g);
    // Conv then Relu or SiLU: offered to the Conv's kernel, not when every tensor is observed
    // (the Conv's own output would not be seen) nor with a caller's registry (it may run the
    // activation its own way).
    Fold fold = options.observe || options.registry ? Fold{} : foldAfter(g, n, isOutput);
    ctx.offerActivation(fold.activation);
    if (!blocked.empty() && isConv2d(g, n) && n.inputs[0].valid())
      ctx.setBlocked(blocked[n.inputs[0].node][n.inputs[0].slot], blocked[id][0]);
    // A layout-free op on blocked inputs: their shapes must be its output's (as the facts say),
    // or the elements would be paired wrongly.
    if (!blocked.empty() && !n.outputs.empty() && blocked[id][0] && !isConv2d(g, n)) {
      const Shape *full = nullptr;
      for (size_t i = 0; i < ins.size(); ++i) {
        if (!ins[i].isTensor() || ins[i]->elementCount() == 1) continue;
        if (!full) full = &ins[i]->shape();
        else if (ins[i]->shape() != *full)
          return errorf("node '{}' ({}): inputs of shapes {} and {} kept in channel blocks (the facts "
                        "said they are equal)", n.name, op, shapeText(*full), shapeText(ins[i]->shape()));
      }
    }
    // Its outputs at their places in the arena; an input whose last reader this is may be
    // written over by a kernel that works in place.
    std::optional<NodePlacer> placer;
    if (arena) {
      std::vector<OutletId> dying;
      // Dying: this node is the last to read its elements (a Shape after it sees no data).
      if (!readsShapeOnly(n))
        for (OutletId o : n.inputs)
          if (o.valid() && !isOutput[o.node][o.slot] &&
              size_t(std::count(n.inputs.begin(), n.inputs.end(), o)) == dataReaders[o.node][o.slot])
            dying.push_back(o);
      placer.emplace(*arena, g, n, std::move(dying));
      ctx.setPlacer(&*placer);
    }
    if (def->traits.bodies != BodyRuns::None || def->kernelTakesSequences)
      ctx.setBodyRunner([this, &ins, depth](const Graph &body, const std::vector<Value> &f) {
        return execute(body, f, &ins, depth + 1);
      });
    auto msSince = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    };
    auto inputsText = [&] {
      std::string facts;
      for (size_t i = 0; i < ins.size(); ++i)
        facts += fmt::format("{}{}", i ? ", " : "", ins[i] ? ins[i].describe() : std::string("none"));
      return facts;
    };
    const bool gelu = geluX[id] != SIZE_MAX;
    // Mode 2: the op's rule at the actual inputs, before the kernel: inputs it rejects never
    // reach the kernel (an error naming them, as inference words it), and the kernel's outputs
    // must agree with what it expects (below). Not for a GELU computed at one of its Muls (the
    // Mul's other input was never made).
    auto checkStarted = std::chrono::steady_clock::now();
    std::optional<Result<Facts>> expected;
    if (options.checkRules && def->infer && def->traits.bodies == BodyRuns::None && !gelu) {
      std::vector<Fact> facts;
      for (const auto &v : ins)
        facts.push_back(actualFact(v));
      ActualInferContext ictx(n, std::move(facts));
      expected = def->infer(ictx);
      if (!expected->ok())
        return errorf("node '{}' ({}): {} (inputs {})", n.name, op, expected->error().message, inputsText());
    }
    double ruleMs = options.profile ? msSince(checkStarted) : 0;
    auto started = std::chrono::steady_clock::now();
    Result<void> r = success();
    try {
      r = gelu ? (ins[geluX[id]].isTensor() ? detail::fusedGelu(ctx, *ins[geluX[id]])
                                            : Result<void>(makeError("GELU's input is not a tensor")))
               : def->kernel(ctx);
    } catch (const EvalContext::MissingInput &m) {
      r = errorf("input {} is required and not given (or not a tensor)", m.index);
    } catch (const EvalContext::UnreadableInput &u) {
      r = makeError(u.why);
    }
    OpTime *timing = options.profile ? &(*options.profile)[gelu ? "GELU (fused)" : op] : nullptr;
    if (timing) {
      ++timing->calls;
      timing->kernelMs += msSince(started);
      started = std::chrono::steady_clock::now();
    }
    if (!r.ok()) {
      live -= ctx.allocated();
      return errorf("node '{}' ({}): {} (inputs {})", n.name, op, r.error().message, inputsText());
    }
    if (expected)
      if (auto a = agree(**expected, ctx.outputs()); !a.ok())
        return errorf("node '{}' ({}): the kernel and the shape rule disagree: {}", n.name, op,
                      a.error().message);
    if (timing) timing->checkMs += ruleMs + msSince(started);
    // The places given to the kernel stop counting as alive; what it made is held below.
    if (arena)
      for (size_t k = 0; k < n.outputs.size(); ++k) arena->drop({id, uint32_t(k)});
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const auto &t = ctx.outputs()[k];
      bool wanted = isOutput[id][k] || readers[id][k] > 0;
      if (!t && wanted)
        return errorf("node '{}' ({}): the kernel did not set output {}", n.name, op, k);
      if (!t) continue;
      if (options.observe)
        for (const Tensor *e : tensorsOf(t)) options.observe(n, k, *e);
      if (wanted) {
        values[id][k] = t;
        ++aliveOutputs[id];
        if (arena && placer && arena->layout.places[id][k] && t.isTensor() && t->bytes().size() > 0 &&
            arena->offsetOf(t->bytes().data()) && !placer->gave(t->bytes().data())) {
          // An output the plan gives its own place that shares an input's bytes (a branch
          // returning an outer tensor): copied there, as the plan frees the input here.
          auto b = t->bytes();
          std::shared_ptr<std::byte[]> to = placer->place(int64_t(b.size()), false);
          if (!to) {
            ctx.setPlacer(nullptr); // on the heap (the placer has said no)
            SF_ASSIGN(to, ctx.allocateForOverwrite(ElementType::U8, {int64_t(b.size())}));
          }
          detail::copyBytes(to.get(), b.data(), b.size());
          SF_ASSIGN(Tensor copy, Tensor::view(t->type(), t->shape(), std::span<const std::byte>(to.get(), b.size()),
                                              std::shared_ptr<const void>(to, to.get())));
          values[id][k] = Value(std::make_shared<const Tensor>(std::move(copy)));
        }
        if (arena) {
          arena->hold({id, uint32_t(k)}, values[id][k]);
          const auto &p = arena->layout.places[id][k];
          bool inArena = false;
          for (const Tensor *e : tensorsOf(values[id][k])) inArena = inArena || arena->offsetOf(e->bytes().data());
          if (p && p->bytes > 0 && !inArena) ++arena->use.elsewhere;
        }
      }
    }
    if (ctx.foldedActivation()) {
      foldedFrom[fold.take] = id;
      if (fold.skip != kNoNode) skipped[fold.skip] = true;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (dataReaders[id][k] == 0) shed({id, uint32_t(k)});
    nodeBytes[id] = ctx.allocated();
    if (aliveOutputs[id] == 0) live -= nodeBytes[id], nodeBytes[id] = 0;
    peak = std::max(peak, live);
    ++nodesRun;
    releaseInputs(n);
  }
  std::vector<Value> outs;
  for (OutletId o : g.outputs) outs.push_back(o.valid() ? values[o.node][o.slot] : Value());
  // Outputs a kernel made in the arena leave it (the caller's to keep; the arena is reused).
  if (arena)
    for (Value &v : outs) {
      auto own = [&](const std::shared_ptr<const Tensor> &t) -> Result<std::shared_ptr<const Tensor>> {
        if (!t || !arena->offsetOf(t->bytes().data())) return t;
        auto b = t->bytes();
        SF_ASSIGN(Tensor copy, Tensor::fromBytes(t->type(), t->shape(), std::vector<std::byte>(b.begin(), b.end())));
        return std::make_shared<const Tensor>(std::move(copy));
      };
      if (v.isTensor()) {
        SF_ASSIGN(auto t, own(v.tensor()));
        v = Value(t);
      } else if (v.isSequence()) {
        std::vector<std::shared_ptr<const Tensor>> elements;
        for (const auto &e : v.elements()) {
          SF_ASSIGN(auto t, own(e));
          elements.push_back(t);
        }
        v = Value::sequence(v.elementType(), std::move(elements));
      }
    }
  // What the outputs hold stays counted until the caller drops them; a body's results are the
  // enclosing node's to count, so they leave this run's tally here.
  for (OutletId o : g.outputs)
    if (o.valid() && depth > 0 && values[o.node][o.slot]) {
      live -= nodeBytes[o.node];
      nodeBytes[o.node] = 0;
    }
  return outs;
}

} // namespace

/// A layout made for this graph: a place per output, every node once in an order that runs
/// each after the nodes it reads, offsets aligned and inside the arena.
Result<void> checkLayout(const Graph &g, const ArenaLayout &layout) {
  auto other = [&](const std::string &why) {
    return errorf("the arena layout was not made for this graph: {}", why);
  };
  if (layout.places.size() != g.nodes.size())
    return other(fmt::format("{} nodes, this one has {}", layout.places.size(), g.nodes.size()));
  std::vector<size_t> position(g.nodes.size(), SIZE_MAX);
  for (size_t i = 0; i < layout.order.size(); ++i) {
    uint32_t id = layout.order[i];
    if (id >= g.nodes.size() || position[id] != SIZE_MAX || g.nodes[id].removed)
      return other(fmt::format("its order names node {} twice, removed or out of range", id));
    position[id] = i;
  }
  for (const Node &n : g.nodes) {
    if (n.removed) continue;
    if (position[n.id] == SIZE_MAX) return other(fmt::format("its order leaves out '{}'", n.name));
    if (layout.places[n.id].size() != n.outputs.size())
      return other(fmt::format("'{}' has {} outputs, the layout {}", n.name, n.outputs.size(), layout.places[n.id].size()));
    for (OutletId in : n.inputs)
      if (in.valid() && position[in.node] > position[n.id])
        return other(fmt::format("it runs '{}' before '{}', which it reads", n.name, g.nodes[in.node].name));
    for (const auto &p : layout.places[n.id])
      if (p && (p->offset < 0 || p->bytes < 0 || p->offset % 64 != 0 || p->bytes > layout.bytes - p->offset))
        return other(fmt::format("an output of '{}' is placed at {} ({} bytes) in an arena of {}", n.name,
                                 p->offset, p->bytes, layout.bytes));
  }
  return success();
}

Result<RunResult> run(const Graph &g, const std::map<std::string, Tensor> &inputs,
                      const RunOptions &options) {
  std::map<std::string, Value> values;
  for (const auto &[name, t] : inputs) values.emplace(name, Value(std::make_shared<const Tensor>(t)));
  return run(g, values, options);
}

Result<RunResult> run(const Graph &g, const std::map<std::string, Value> &inputs,
                      const RunOptions &options) {
  ExprScope scope = g.enter();
  detail::setGemmThreads(options.threads);
  detail::setDnnlThreads(options.threads);
  Runner runner{options.registry ? *options.registry : evalRegistry(), options};
  runner.budget = options.maxMemory > 0 ? options.maxMemory : defaultBudget();
  // The caller's inputs, checked against what the model declares (for a sequence, each element).
  std::vector<Value> formals;
  std::set<std::string> used;
  for (OutletId o : g.inputs) {
    const Node &n = g.nodes[o.node];
    if (n.isCaptured())
      return errorf("input '{}' is captured from an enclosing graph; run the enclosing graph", n.outputs[0].name);
    const std::string &name = n.outputs[0].name;
    const Fact &fact = n.outputs[0].fact;
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      if (fact.constant && fact.constant->hasData()) { // an input with a default (initializer)
        formals.push_back(Value());
        continue;
      }
      return errorf("input '{}' ({}) is not given", name, fact);
    }
    used.insert(name);
    const Value &v = it->second;
    if (!v) return errorf("input '{}' ({}) is not given", name, fact);
    if (v.isSequence() && fact.type != ElementType::Undefined && v.elementType() != ElementType::Undefined &&
        v.elementType() != fact.type)
      return errorf("input '{}' is {}, the model declares elements {}", name, v.describe(), fact);
    for (const Tensor *t : tensorsOf(v)) {
      if (fact.type != ElementType::Undefined && t->type() != fact.type)
        return errorf("input '{}' is {}, the model declares {}", name, shortName(t->type()), fact);
      if (!fact.shape.rankIsStatic()) continue;
      if (fact.shape.size() != t->shape().size())
        return errorf("input '{}' has shape {}, the model declares {}", name, shapeText(t->shape()), fact);
      for (size_t i = 0; i < t->shape().size(); ++i) {
        const Dimension &d = fact.shape[i];
        int64_t x = t->shape()[i];
        if (x < d.minLength() || (d.hasUpperBound() && x > d.maxLength()))
          return errorf("input '{}' has shape {}, outside what the model admits: {}", name,
                        shapeText(t->shape()), fact);
      }
    }
    formals.push_back(v);
  }
  for (const auto &[name, t] : inputs)
    if (!used.count(name)) return errorf("'{}' is not an input of the model", name);
  // The arena: not while tensors are observed or a caller's kernels run (either may keep a
  // tensor past its last reader), nor where it would not fit the budget or the memory (the
  // heap then, as without one).
  std::optional<Arena> arena;
  if (options.arena && !options.observe && !options.registry) {
    const ArenaLayout &layout = *options.arena;
    SF_TRY(checkLayout(g, layout));
    if (layout.bytes <= runner.budget)
      if (auto memory = Arena::acquire(layout.bytes)) {
        arena.emplace(Arena{layout, std::move(memory), {}, {}});
        arena->use.bytes = layout.bytes;
        runner.arena = &*arena;
      }
  }
  auto outs = runner.execute(g, formals, nullptr, 0);
  if (!outs.ok()) return outs.error();
  RunResult out;
  if (arena) out.arena = arena->use;
  for (OutletId o : g.outputs) out.outputNames.push_back(g.outlet(o).name);
  out.outputs = std::move(*outs);
  out.nodesRun = runner.nodesRun;
  out.peakBytes = runner.peak;
  out.blockedTensors = runner.blockedCount;
  return out;
}

Result<Tensor> randomTensor(ElementType type, const Shape &shape, uint64_t seed) {
  int64_t count = 1;
  for (int64_t d : shape) {
    auto c = d < 0 ? std::nullopt : checkedMul(count, d);
    if (!c) return errorf("shape {} has more than 2^63 elements", shapeText(shape));
    count = *c;
  }
  if (count > (int64_t(1) << 31)) return errorf("shape {}: more than 2^31 random elements", shapeText(shape));
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  std::vector<double> v(static_cast<size_t>(count));
  for (double &x : v) {
    if (isFloat(type)) x = double(next() >> 11) / double(1ULL << 53) * 2 - 1;
    else if (type == ElementType::Bool) x = double(next() & 1);
    else x = double(next() % 10);
  }
  return Tensor::fromDoubles(type, shape, v);
}

} // namespace eval
} // namespace sf
