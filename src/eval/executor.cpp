// The executor (eval/eval.h): topological walk, tensor lifetimes, the memory budget, and the
// check of every kernel's outputs against the op's shape rule at the actual inputs. What a kernel
// allocates is in context.cpp, the arena's places in placer.cpp.
#include "shapeflow/eval/eval.h"

#include "shapeflow/eval/arena.h"
#include "shapeflow/eval/plan.h"

#include "blas.h"
#include "dnnl.h"
#include "kernel_util.h"
#include "placer.h"

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

namespace eval {
namespace {

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
  if (f.shape.size() != t.shape().size()) return errorf("has shape {} but", toString(t.shape()));
  for (size_t i = 0; i < t.shape().size(); ++i) {
    const Dimension &d = f.shape[i];
    int64_t v = t.shape()[i];
    if (d.isStatic() ? d.length() != v : (v < d.minLength() || (d.hasUpperBound() && v > d.maxLength())))
      return errorf("has shape {} but", toString(t.shape()));
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

using detail::Arena;
using detail::NodePlacer;

/// One run: the options, the bytes alive and the budget, shared by the bodies it runs.
struct Runner {
  const RunOptions &options;
  int64_t live = 0, budget = 0, peak = 0;
  size_t nodesRun = 0;
  int64_t bodyRuns = 0;
  Arena *arena = nullptr; // the top graph's, when the run has one
  size_t blockedCount = 0; // tensors kept in a channel layout (bodies' included, once per body run)
  size_t channelsLastCount = 0; // of them channels last

  /// Runs a prepared graph with `formals` for its non-captured inputs (in order; absent: the
  /// input's default initializer) and `owner` the inputs of the node whose body it is
  /// (captured values).
  Result<std::vector<Value>> execute(const ExecPlan &plan, const std::vector<Value> &formals,
                                     const std::vector<Value> *owner, int depth);
};

/// What one execution of a graph keeps: a value per outlet, the readers left, the bytes each
/// node's kernel allocated and how many of its outputs are alive.
struct Frame {
  const ExecPlan &plan;
  Runner &runner;
  Arena *arena;
  std::vector<Value> values;
  /// What the kernels proved of each float tensor (EvalContext::inputBound), by outlet; and the
  /// node's inputs' as its kernel reads them (reused node after node).
  std::vector<float> bounds, inputBounds;
  std::vector<uint32_t> readers, dataReaders;
  std::vector<int64_t> nodeBytes;
  std::vector<uint32_t> alive;

  Frame(const ExecPlan &p, Runner &r, Arena *a)
      : plan(p), runner(r), arena(a), values(p.outletCount()),
        bounds(p.outletCount(), EvalContext::kUnbounded), readers(p.readers()), dataReaders(p.dataReaders()),
        nodeBytes(p.graph().nodes.size(), 0), alive(p.graph().nodes.size(), 0) {}

  Value &value(OutletId o) { return values[plan.outlet(o)]; }
  bool isOutput(OutletId o) const { return plan.isOutput()[plan.outlet(o)]; }

  void release(OutletId o) {
    Value &v = value(o);
    if (!v) return;
    v = Value();
    if (arena) arena->drop(o);
    if (--alive[o.node] == 0) {
      runner.live -= nodeBytes[o.node];
      nodeBytes[o.node] = 0;
    }
  }
  /// The elements go (where the memory plan frees them); readers of the shape see a tensor
  /// without data.
  void shed(OutletId o) {
    Value &v = value(o);
    if (!v.isTensor() || !v->hasData() || isOutput(o) || readers[plan.outlet(o)] == 0) return;
    if (auto t = Tensor::withoutData(v->type(), v->shape()); t.ok()) {
      v = Value(std::make_shared<const Tensor>(std::move(*t)));
      if (arena) arena->drop(o);
    }
  }
  /// After a node ran: its inputs go once their last reader has run, their elements once their
  /// last reader of elements has.
  void releaseInputs(const Node &n, bool shapeOnly) {
    for (OutletId o : n.inputs) {
      if (!o.valid()) continue;
      size_t k = plan.outlet(o);
      if (--readers[k] == 0 && !isOutput(o)) release(o);
      else if (!shapeOnly && dataReaders[k] > 0 && --dataReaders[k] == 0) shed(o);
    }
  }

  Result<void> input(const Step &s, const std::vector<Value> &formals, const std::vector<Value> *owner);
  /// Runs one op: its kernel (with the rule's check), its outputs kept, its inputs released.
  Result<void> op(const Step &s, int depth);
  /// The node's input values (absent: empty), refusing a sequence where the kernel takes tensors.
  Result<std::vector<Value>> inputsOf(const Step &s, const Node &n);
  /// The inputs dying at this node: it is the last left to read their elements (a Shape after it
  /// sees no data).
  std::vector<OutletId> dyingInputs(const Step &s, const Node &n) const;
  /// The kernel, checked against the op's rule at the actual inputs (mode 2) and timed when
  /// profiling.
  Result<void> runKernel(const Step &s, const Node &n, const std::vector<Value> &ins, EvalContext &ctx);
  /// The kernel's outputs kept where something reads them (observed first), each held in the
  /// arena where it landed there.
  Result<void> keepOutputs(const Step &s, const Node &n, EvalContext &ctx, std::optional<NodePlacer> &placer);
  /// An output in the arena away from its own place: one that shares an input's bytes (a branch
  /// returning an outer tensor, a pass-through op's graph output; the plan frees the input here)
  /// or one the kernel made at another output's place (a kernel that did not say which output
  /// it allocated): copied to its own place where it has one and that is free, to the heap
  /// otherwise.
  Result<void> relocate(EvalContext &ctx, NodePlacer &placer, OutletId o, bool hasPlace);
  Result<std::vector<Value>> outputs(int depth);
};

Result<void> Frame::input(const Step &s, const std::vector<Value> &formals, const std::vector<Value> *owner) {
  const Node &n = plan.graph().nodes[s.node];
  Value &v = values[plan.outlet(s.node)];
  if (s.kind == NodeKind::Constant) {
    v = Value(s.constant);
  } else if (s.captured >= 0) {
    if (!owner || size_t(s.captured) >= owner->size() || !(*owner)[size_t(s.captured)])
      return errorf("'{}' is captured from an enclosing graph that does not give it", n.outputs[0].name);
    v = (*owner)[size_t(s.captured)];
  } else {
    v = s.formal < formals.size() ? formals[s.formal] : Value();
    if (!v && !s.constant) return errorf("input '{}' ({}) is not given", n.outputs[0].name, n.outputs[0].fact);
    if (!v) v = Value(s.constant);
  }
  alive[s.node] = 1;
  return success();
}

Result<void> Frame::relocate(EvalContext &ctx, NodePlacer &placer, OutletId o, bool hasPlace) {
  Value &v = value(o);
  auto b = v->bytes();
  std::shared_ptr<std::byte[]> to = hasPlace ? placer.place(int64_t(b.size()), false, o.slot) : nullptr;
  if (!to) {
    ctx.setPlacer(nullptr); // on the heap (the placer has said no)
    SF_ASSIGN(to, ctx.allocateForOverwrite(ElementType::U8, {int64_t(b.size())}));
  }
  detail::copyBytes(to.get(), b.data(), b.size());
  SF_ASSIGN(Tensor copy, Tensor::view(v->type(), v->shape(), std::span<const std::byte>(to.get(), b.size()),
                                      std::shared_ptr<const void>(to, to.get())));
  v = Value(std::make_shared<const Tensor>(std::move(copy)));
  return success();
}

/// Milliseconds since `t`.
double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// The input values as an error names them.
std::string inputsText(const std::vector<Value> &ins) {
  std::string facts;
  for (size_t i = 0; i < ins.size(); ++i)
    facts += fmt::format("{}{}", i ? ", " : "", ins[i] ? ins[i].describe() : std::string("none"));
  return facts;
}

/// A layout-free op on blocked inputs: their shapes must be its output's (as the facts say),
/// or the elements would be paired wrongly.
Result<void> sameBlockedShapes(const Node &n, const std::string &op, const std::vector<Value> &ins) {
  const Shape *full = nullptr;
  for (const Value &in : ins) {
    if (!in.isTensor() || in->elementCount() == 1) continue;
    if (!full) full = &in->shape();
    else if (in->shape() != *full)
      return errorf("node '{}' ({}): inputs of shapes {} and {} kept in channel blocks (the facts said they "
                    "are equal)", n.name, op, toString(*full), toString(in->shape()));
  }
  return success();
}

Result<std::vector<Value>> Frame::inputsOf(const Step &s, const Node &n) {
  const std::string &op = s.op;
  std::vector<Value> ins;
  ins.reserve(n.inputs.size());
  for (OutletId o : n.inputs) {
    ins.push_back(o.valid() ? value(o) : Value());
    if (ins.back() && !ins.back().isTensor() && !s.def->kernelTakesSequences)
      return errorf("node '{}' ({}): input {} is {}, and {} takes tensors", n.name, op, ins.size() - 1,
                    ins.back().describe(), op);
  }
  return ins;
}

std::vector<OutletId> Frame::dyingInputs(const Step &s, const Node &n) const {
  std::vector<OutletId> dying;
  if (!s.readsShapeOnly)
    for (OutletId o : n.inputs)
      if (o.valid() && !isOutput(o) &&
          size_t(std::count(n.inputs.begin(), n.inputs.end(), o)) == dataReaders[plan.outlet(o)])
        dying.push_back(o);
  return dying;
}

Result<void> Frame::op(const Step &s, int depth) {
  const Node &n = plan.graph().nodes[s.node];
  SF_ASSIGN(std::vector<Value> ins, inputsOf(s, n));
  EvalContext ctx(n, ins, s.opset, &runner.live, runner.budget);
  ctx.setGraph(plan.graph());
  inputBounds.clear();
  for (OutletId o : n.inputs) inputBounds.push_back(o.valid() ? bounds[plan.outlet(o)] : EvalContext::kUnbounded);
  ctx.setInputBounds(inputBounds);
  if (s.layoutIn != Layout::Plain || s.layoutOut != Layout::Plain) ctx.setLayouts(s.layoutIn, s.layoutOut);
  if (s.layoutFreeBlocked) SF_TRY(sameBlockedShapes(n, s.op, ins));
  // Its outputs at their places in the arena; an input whose last reader this is may be
  // written over by a kernel that works in place.
  std::optional<NodePlacer> placer;
  if (arena) {
    placer.emplace(*arena, plan.graph(), n, dyingInputs(s, n));
    ctx.setPlacer(&*placer);
  }
  if (s.runsBodies)
    ctx.setBodyRunner([this, &ins, depth](const Graph &body, const std::vector<Value> &f) -> Result<std::vector<Value>> {
      const ExecPlan *bp = plan.body(body);
      if (!bp) return errorf("subgraph '{}' was not prepared with its node", body.name);
      if (runner.options.maxBodyRuns > 0 && ++runner.bodyRuns > runner.options.maxBodyRuns)
        return errorf("more than {} runs of bodies in all (RunOptions::maxBodyRuns)", runner.options.maxBodyRuns);
      return runner.execute(*bp, f, &ins, depth + 1);
    });
  SF_TRY(runKernel(s, n, ins, ctx));
  const uint32_t id = s.node;
  // The places given to the kernel stop counting as alive; what it made is held below.
  if (arena)
    for (size_t k = 0; k < n.outputs.size(); ++k) arena->drop({id, uint32_t(k)});
  SF_TRY(keepOutputs(s, n, ctx, placer));
  for (size_t k = 0; k < n.outputs.size(); ++k) bounds[plan.outlet(id) + k] = ctx.outputBound(k);
  for (size_t k = 0; k < n.outputs.size(); ++k)
    if (dataReaders[plan.outlet(id) + k] == 0) shed({id, uint32_t(k)});
  nodeBytes[id] = ctx.allocated();
  if (alive[id] == 0) runner.live -= nodeBytes[id], nodeBytes[id] = 0;
  runner.peak = std::max(runner.peak, runner.live);
  ++runner.nodesRun;
  releaseInputs(n, s.readsShapeOnly);
  return success();
}

Result<void> Frame::runKernel(const Step &s, const Node &n, const std::vector<Value> &ins, EvalContext &ctx) {
  const RunOptions &options = runner.options;
  const std::string &op = s.op;
  // Mode 2: the op's rule at the actual inputs, before the kernel: inputs it rejects never
  // reach the kernel (an error naming them, as inference words it), and the kernel's outputs
  // must agree with what it expects (below).
  auto checkStarted = std::chrono::steady_clock::now();
  std::optional<Result<Facts>> expected;
  if (options.checkRules && s.checksRule) {
    std::vector<Fact> facts;
    for (const auto &v : ins) facts.push_back(actualFact(v));
    ActualInferContext ictx(n, std::move(facts));
    expected = s.def->infer(ictx);
    if (!expected->ok())
      return errorf("node '{}' ({}): {} (inputs {})", n.name, op, expected->error().message, inputsText(ins));
  }
  double ruleMs = options.profile ? msSince(checkStarted) : 0;
  auto started = std::chrono::steady_clock::now();
  Result<void> r = success();
  try {
    r = s.def->kernel(ctx);
  } catch (const EvalContext::MissingInput &m) {
    r = errorf("input {} is required and not given (or not a tensor)", m.index);
  } catch (const EvalContext::UnreadableInput &u) {
    r = makeError(u.why);
  }
  OpTime *timing = options.profile ? &(*options.profile)[op] : nullptr;
  if (timing) {
    ++timing->calls;
    timing->kernelMs += msSince(started);
    started = std::chrono::steady_clock::now();
  }
  if (!r.ok()) {
    runner.live -= ctx.allocated();
    return errorf("node '{}' ({}): {} (inputs {})", n.name, op, r.error().message, inputsText(ins));
  }
  if (expected)
    if (auto a = agree(**expected, ctx.outputs()); !a.ok())
      return errorf("node '{}' ({}): the kernel and the shape rule disagree: {}", n.name, op, a.error().message);
  if (timing) timing->checkMs += ruleMs + msSince(started);
  return success();
}

Result<void> Frame::keepOutputs(const Step &s, const Node &n, EvalContext &ctx,
                                std::optional<NodePlacer> &placer) {
  const RunOptions &options = runner.options;
  const std::string &op = s.op;
  const uint32_t id = s.node;
  // Every output stays alive where the kernel made it while they are kept one by one: moving
  // one must not write over another.
  if (arena)
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (ctx.outputs()[k]) arena->hold({id, uint32_t(k)}, ctx.outputs()[k]);
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const OutletId o{id, uint32_t(k)};
    const auto &t = ctx.outputs()[k];
    bool wanted = isOutput(o) || readers[plan.outlet(o)] > 0;
    if (!t && wanted) return errorf("node '{}' ({}): the kernel did not set output {}", n.name, op, k);
    if (!t) continue;
    if (options.observe)
      for (const Tensor *e : tensorsOf(t)) options.observe(n, k, *e);
    if (arena) arena->drop(o);
    if (!wanted) continue;
    value(o) = t;
    ++alive[id];
    if (!arena) continue;
    const auto &place = arena->layout.places[id][k];
    if (t.isTensor() && t->bytes().size() > 0)
      if (auto at = arena->offsetOf(t->bytes().data())) {
        bool given = placer->gave(t->bytes().data());
        bool atOwnPlace = given && place && *at == place->offset;
        // A graph output sharing an arena tensor's bytes (a pass-through op: OptionalGetElement,
        // Identity) leaves the arena now, not at the end: the plan frees that tensor's bytes
        // after its last reader here.
        if (!atOwnPlace && (place || given || isOutput(o))) SF_TRY(relocate(ctx, *placer, o, place.has_value()));
      }
    arena->hold(o, value(o));
    bool inArena = false;
    for (const Tensor *e : tensorsOf(value(o))) inArena = inArena || arena->offsetOf(e->bytes().data());
    if (place && place->bytes > 0 && !inArena) ++arena->use.elsewhere;
  }
  return success();
}

Result<std::vector<Value>> Frame::outputs(int depth) {
  const Graph &g = plan.graph();
  std::vector<Value> outs;
  for (OutletId o : g.outputs) outs.push_back(o.valid() ? value(o) : Value());
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
    if (o.valid() && depth > 0 && value(o)) {
      runner.live -= nodeBytes[o.node];
      nodeBytes[o.node] = 0;
    }
  return outs;
}

Result<std::vector<Value>> Runner::execute(const ExecPlan &plan, const std::vector<Value> &formals,
                                           const std::vector<Value> *owner, int depth) {
  if (depth > 64) return errorf("bodies nested deeper than 64");
  Frame frame(plan, *this, depth == 0 ? arena : nullptr);
  blockedCount += plan.blockedCount();
  channelsLastCount += plan.channelsLastCount();
  for (const Step &s : plan.steps()) {
    if (s.kind == NodeKind::Op) SF_TRY(frame.op(s, depth));
    else SF_TRY(frame.input(s, formals, owner));
  }
  return frame.outputs(depth);
}

/// The caller's inputs in the order of the graph's formal inputs, each checked against what the
/// model declares (for a sequence, each element).
Result<std::vector<Value>> formalsOf(const Graph &g, const std::map<std::string, Value> &inputs) {
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
        return errorf("input '{}' has shape {}, the model declares {}", name, toString(t->shape()), fact);
      for (size_t i = 0; i < t->shape().size(); ++i) {
        const Dimension &d = fact.shape[i];
        int64_t x = t->shape()[i];
        if (x < d.minLength() || (d.hasUpperBound() && x > d.maxLength()))
          return errorf("input '{}' has shape {}, outside what the model admits: {}", name, toString(t->shape()),
                        fact);
      }
    }
    formals.push_back(v);
  }
  for (const auto &[name, t] : inputs)
    if (!used.count(name)) return errorf("'{}' is not an input of the model", name);
  return formals;
}

} // namespace

Result<RunResult> run(const ExecPlan &plan, const std::map<std::string, Value> &inputs, const RunOptions &options) {
  const Graph &g = plan.graph();
  ExprScope scope = g.enter();
  detail::setGemmThreads(options.threads);
  detail::setDnnlThreads(options.threads);
  Runner runner{options};
  runner.budget = options.maxMemory > 0 ? options.maxMemory : defaultBudget();
  SF_ASSIGN(std::vector<Value> formals, formalsOf(g, inputs));
  // The arena: not while tensors are observed (an observer may keep a tensor past its last
  // reader), nor where it would not fit the budget or the memory (the heap then, as without one).
  std::optional<Arena> arena;
  if (const ArenaLayout *layout = plan.arena(); layout && !options.observe && layout->bytes <= runner.budget)
    if (auto memory = Arena::acquire(layout->bytes)) {
      arena.emplace(Arena{*layout, std::move(memory), {}, {}});
      arena->use.bytes = layout->bytes;
      runner.arena = &*arena;
    }
  auto outs = runner.execute(plan, formals, nullptr, 0);
  if (!outs.ok()) return outs.error();
  RunResult out;
  if (arena) out.arena = arena->use;
  for (OutletId o : g.outputs) out.outputNames.push_back(g.outlet(o).name);
  out.outputs = std::move(*outs);
  out.nodesRun = runner.nodesRun;
  out.peakBytes = runner.peak;
  out.blockedTensors = runner.blockedCount;
  out.channelsLastTensors = runner.channelsLastCount;
  return out;
}

Result<RunResult> run(const Graph &g, const std::map<std::string, Tensor> &inputs, const RunOptions &options) {
  std::map<std::string, Value> values;
  for (const auto &[name, t] : inputs) values.emplace(name, Value(std::make_shared<const Tensor>(t)));
  return run(g, values, options);
}

Result<RunResult> run(const Graph &g, const std::map<std::string, Value> &inputs, const RunOptions &options) {
  // An arena is not laid out for a caller's kernels (they may keep a tensor past its last reader).
  PrepareOptions po{options.registry, bool(options.observe), options.registry ? nullptr : options.arena,
                    options.channelBlock};
  SF_ASSIGN(auto plan, prepare(g, po));
  return run(*plan, inputs, options);
}

Result<Tensor> randomTensor(ElementType type, const Shape &shape, uint64_t seed) {
  int64_t count = 1;
  for (int64_t d : shape) {
    auto c = d < 0 ? std::nullopt : checkedMul(count, d);
    if (!c) return errorf("shape {} has more than 2^63 elements", toString(shape));
    count = *c;
  }
  if (count > (int64_t(1) << 31)) return errorf("shape {}: more than 2^31 random elements", toString(shape));
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  std::vector<double> v(static_cast<size_t>(count));
  for (double &x : v) {
    if (isFloat(type) || isNarrowFloat(type)) x = double(next() >> 11) / double(1ULL << 53) * 2 - 1;
    else if (type == ElementType::Bool) x = double(next() & 1);
    else x = double(next() % (isInt4(type) ? 8 : 10));
  }
  return Tensor::fromDoubles(type, shape, v);
}

} // namespace eval
} // namespace sf
