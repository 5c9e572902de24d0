// The executor (eval/eval.h): topological walk, tensor lifetimes, the memory budget, and the
// check of every kernel's outputs against the op's shape rule at the actual inputs.
#include "shapeflow/eval/eval.h"

#include "shapeflow/support/checked.h"
#include "shapeflow/support/format.h"

#include <unistd.h>

#include <set>
#include <unordered_map>

namespace sf {

Result<std::vector<std::byte>> EvalContext::allocate(ElementType t, const Shape &shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    auto c = d < 0 ? std::nullopt : checkedMul(count, d);
    if (!c) return errorf("an output of shape [{}] has more than 2^63 elements", fmt::join(shape, ","));
    count = *c;
  }
  auto bytes = checkedMul(count, int64_t(elementSize(t)));
  if (!bytes || *liveBytes_ + *bytes > maxBytes_)
    return errorf("an output of {}[{}] ({} bytes) does not fit the memory budget ({} of {} bytes "
                  "in use; --max-memory)",
                  shortName(t), fmt::join(shape, ","), bytes ? std::to_string(*bytes) : "> 2^63",
                  *liveBytes_, maxBytes_);
  *liveBytes_ += *bytes;
  allocated_ += *bytes;
  return std::vector<std::byte>(size_t(*bytes));
}

Result<void> EvalContext::admit(ElementType t, const Shape &shape) const {
  int64_t count = 1;
  for (int64_t d : shape) {
    auto c = d < 0 ? std::nullopt : checkedMul(count, d);
    if (!c) return errorf("an output of shape [{}] has more than 2^63 elements", fmt::join(shape, ","));
    count = *c;
  }
  auto bytes = checkedMul(count, int64_t(std::max<size_t>(elementSize(t), 8)));
  if (!bytes || *liveBytes_ + *bytes > maxBytes_)
    return errorf("an output of {}[{}] does not fit the memory budget ({} of {} bytes in use; "
                  "--max-memory)",
                  shortName(t), fmt::join(shape, ","), *liveBytes_, maxBytes_);
  return success();
}

Result<void> EvalContext::setOutput(size_t i, Tensor t) {
  if (i >= outputs_.size())
    return errorf("the kernel set output {} of an op with {} outputs", i, outputs_.size());
  outputs_[i] = std::make_shared<const Tensor>(std::move(t));
  return success();
}

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

std::string shapeText(const Shape &s) { return fmt::format("[{}]", fmt::join(s, ",")); }

/// The outputs agree with the rule's facts: types where known, ranks where known, every static
/// dim exactly and every other one within its bounds.
Result<void> agree(const Facts &expected, const std::vector<std::shared_ptr<const Tensor>> &actual) {
  for (size_t k = 0; k < actual.size() && k < expected.size(); ++k) {
    if (!actual[k]) continue;
    const Fact &f = expected[k];
    const Tensor &t = *actual[k];
    if (f.type != ElementType::Undefined && f.type != t.type())
      return errorf("output {} is {} but the rule says {}", k, shortName(t.type()), f);
    if (!f.shape.rankIsStatic()) continue;
    if (f.shape.size() != t.shape().size())
      return errorf("output {} has shape {} but the rule says {}", k, shapeText(t.shape()), f);
    for (size_t i = 0; i < t.shape().size(); ++i) {
      const Dimension &d = f.shape[i];
      int64_t v = t.shape()[i];
      if (d.isStatic() ? d.length() != v : (v < d.minLength() || (d.hasUpperBound() && v > d.maxLength())))
        return errorf("output {} has shape {} but the rule says {}", k, shapeText(t.shape()), f);
    }
  }
  return success();
}

} // namespace

namespace {

/// One run: the registry, options, the bytes alive and the budget, shared by the bodies it runs.
struct Runner {
  const OpRegistry &registry;
  const RunOptions &options;
  int64_t live = 0, budget = 0, peak = 0;
  size_t nodesRun = 0;

  /// Runs `g` with `formals` for its non-captured inputs (in order; null: the input's default
  /// initializer) and `owner` the inputs of the node whose body it is (captured values).
  Result<std::vector<std::shared_ptr<const Tensor>>>
  execute(const Graph &g, const std::vector<std::shared_ptr<const Tensor>> &formals,
          const std::vector<std::shared_ptr<const Tensor>> *owner, int depth);
};

Result<std::vector<std::shared_ptr<const Tensor>>>
Runner::execute(const Graph &g, const std::vector<std::shared_ptr<const Tensor>> &formals,
                const std::vector<std::shared_ptr<const Tensor>> *owner, int depth) {
  if (depth > 64) return errorf("bodies nested deeper than 64");
  SF_ASSIGN(std::vector<uint32_t> order, g.topologicalOrder());
  std::vector<std::vector<std::shared_ptr<const Tensor>>> values(g.nodes.size());
  std::vector<int64_t> nodeBytes(g.nodes.size(), 0);
  std::vector<size_t> aliveOutputs(g.nodes.size(), 0);
  // Readers left per outlet; graph outputs are never released.
  std::vector<std::vector<size_t>> readers(g.nodes.size());
  std::vector<std::vector<bool>> isOutput(g.nodes.size());
  for (const Node &n : g.nodes) {
    readers[n.id].resize(n.outputs.size());
    for (size_t k = 0; k < n.outputs.size(); ++k)
      readers[n.id][k] = n.outputs[k].successors.size();
    isOutput[n.id].assign(n.outputs.size(), false);
  }
  for (OutletId o : g.outputs)
    if (o.valid()) isOutput[o.node][o.slot] = true;
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
    v.reset();
    if (--aliveOutputs[o.node] == 0) {
      live -= nodeBytes[o.node];
      nodeBytes[o.node] = 0;
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
        std::shared_ptr<const Tensor> t = f != formalOf.end() && f->second < formals.size() ? formals[f->second] : nullptr;
        const Fact &fact = n.outputs[0].fact;
        if (!t) {
          if (!(fact.constant && fact.constant->hasData())) return errorf("input '{}' ({}) is not given", name, fact);
          t = fact.constant;
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
      values[id][0] = fact.constant;
      aliveOutputs[id] = 1;
      continue;
    }
    const OpDef *def = registry.find(n.domain, n.opType);
    std::string op = n.domain.empty() ? n.opType : n.domain + "." + n.opType;
    if (!def || !def->kernel)
      return errorf("node '{}' ({}): no kernel for op '{}'", n.name, op, op);
    std::vector<std::shared_ptr<const Tensor>> ins;
    for (OutletId o : n.inputs)
      ins.push_back(o.valid() ? values[o.node][o.slot] : nullptr);
    // A graph that does not say which opset it imports (the text form without `opset`) gets the
    // newest one's semantics, as the rules do.
    EvalContext ctx(n, ins, n.opsetVersion ? n.opsetVersion : kNewestOpset, &live, budget);
    ctx.setBodyRunner([this, &ins, depth](const Graph &body, const std::vector<std::shared_ptr<const Tensor>> &f) {
      return execute(body, f, &ins, depth + 1);
    });
    if (auto r = def->kernel(ctx); !r.ok()) {
      live -= ctx.allocated();
      std::string facts;
      for (size_t i = 0; i < ins.size(); ++i)
        facts += fmt::format("{}{}", i ? ", " : "", ins[i] ? shortName(ins[i]->type()) + shapeText(ins[i]->shape()) : std::string("none"));
      return errorf("node '{}' ({}): {} (inputs {})", n.name, op, r.error().message, facts);
    }
    // Mode 2: the rule at the actual inputs must agree with what the kernel made.
    if (def->infer && def->traits.bodies == BodyRuns::None) {
      std::vector<Fact> facts;
      for (const auto &t : ins)
        facts.push_back(t ? Fact::fromTensor(t) : Fact{});
      ActualInferContext ictx(n, std::move(facts));
      auto expected = def->infer(ictx);
      if (expected.ok())
        if (auto a = agree(*expected, ctx.outputs()); !a.ok())
          return errorf("node '{}' ({}): the kernel and the shape rule disagree: {}", n.name, op,
                        a.error().message);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const auto &t = ctx.outputs()[k];
      bool wanted = isOutput[id][k] || readers[id][k] > 0;
      if (!t && wanted)
        return errorf("node '{}' ({}): the kernel did not set output {}", n.name, op, k);
      if (!t) continue;
      if (options.observe) options.observe(n, k, *t);
      if (wanted) {
        values[id][k] = t;
        ++aliveOutputs[id];
      }
    }
    nodeBytes[id] = ctx.allocated();
    if (aliveOutputs[id] == 0) live -= nodeBytes[id], nodeBytes[id] = 0;
    peak = std::max(peak, live);
    ++nodesRun;
    for (OutletId o : n.inputs)
      if (o.valid() && --readers[o.node][o.slot] == 0 && !isOutput[o.node][o.slot]) release(o);
  }
  std::vector<std::shared_ptr<const Tensor>> outs;
  for (OutletId o : g.outputs) outs.push_back(o.valid() ? values[o.node][o.slot] : nullptr);
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

Result<RunResult> run(const Graph &g, const std::map<std::string, Tensor> &inputs,
                      const RunOptions &options) {
  ExprScope scope = g.enter();
  Runner runner{options.registry ? *options.registry : evalRegistry(), options};
  runner.budget = options.maxMemory > 0 ? options.maxMemory : defaultBudget();
  // The caller's inputs, checked against what the model declares.
  std::vector<std::shared_ptr<const Tensor>> formals;
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
        formals.push_back(nullptr);
        continue;
      }
      return errorf("input '{}' ({}) is not given", name, fact);
    }
    used.insert(name);
    const Tensor &t = it->second;
    if (fact.type != ElementType::Undefined && t.type() != fact.type)
      return errorf("input '{}' is {}, the model declares {}", name, shortName(t.type()), fact);
    if (fact.shape.rankIsStatic()) {
      if (fact.shape.size() != t.shape().size())
        return errorf("input '{}' has shape {}, the model declares {}", name, shapeText(t.shape()), fact);
      for (size_t i = 0; i < t.shape().size(); ++i) {
        const Dimension &d = fact.shape[i];
        int64_t v = t.shape()[i];
        if (v < d.minLength() || (d.hasUpperBound() && v > d.maxLength()))
          return errorf("input '{}' has shape {}, outside what the model admits: {}", name,
                        shapeText(t.shape()), fact);
      }
    }
    formals.push_back(std::make_shared<const Tensor>(t));
  }
  for (const auto &[name, t] : inputs)
    if (!used.count(name)) return errorf("'{}' is not an input of the model", name);
  SF_ASSIGN(auto outs, runner.execute(g, formals, nullptr, 0));
  RunResult out;
  for (OutletId o : g.outputs) out.outputNames.push_back(g.outlet(o).name);
  out.outputs = std::move(outs);
  out.nodesRun = runner.nodesRun;
  out.peakBytes = runner.peak;
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
