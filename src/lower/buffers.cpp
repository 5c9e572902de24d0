// Buffers and lifetimes of a lowered program (lower/buffers.h).
#include "shapeflow/lower/buffers.h"

#include "shapeflow/ops/op.h"

#include <algorithm>
#include <unordered_map>

namespace sf::lower {

const char *toString(Owner o) {
  switch (o) {
  case Owner::Arena:
    return "arena";
  case Owner::Caller:
    return "caller";
  case Owner::Constant:
    return "constant";
  }
  return "?";
}

const char *toString(Reuse r) {
  switch (r) {
  case Reuse::None:
    return "none";
  case Reuse::View:
    return "view";
  case Reuse::InPlace:
    return "in-place";
  }
  return "?";
}

const char *toString(StepKind k) {
  switch (k) {
  case StepKind::ShapeOf:
    return "shape_of";
  case StepKind::ShapeCompute:
    return "shape_compute";
  case StepKind::Op:
    return "op";
  }
  return "?";
}

size_t rootOf(const BufferPlan &plan, size_t b) {
  // Aliases point at roots once a plan is made; while it is made, a view may point at a buffer
  // that later became an in-place alias itself.
  for (size_t hops = 0; plan.buffers[b].aliasOf && hops <= plan.buffers.size(); ++hops)
    b = *plan.buffers[b].aliasOf;
  return b;
}

namespace {

/// An op whose first output is its first input as it is, with no view trait of its own: a Cast
/// to the type the input already has, a Dropout (at inference its output is its input).
bool passesThrough(const Graph &g, const Node &n) {
  if (!n.domain.empty() || n.inputs.empty() || !g.contains(n.inputs[0]) || n.outputs.empty()) return false;
  if (n.opType == "Dropout") return true;
  if (n.opType != "Cast" && n.opType != "CastLike") return false;
  ElementType in = g.fact(n.inputs[0]).type, out = n.outputs[0].fact.type;
  return in != ElementType::Undefined && in == out;
}

Dimension bytesOfShape(ElementType t, const PartialShape &s) {
  size_t size = t == ElementType::Undefined ? 0 : elementSize(t);
  if (size == 0 || !s.rankIsStatic()) return Dimension::dynamic();
  auto e = s.elementCount();
  if (!e.ok()) return Dimension::dynamic();
  auto b = *e * Dimension(int64_t(size));
  return b.ok() ? *b : Dimension::dynamic();
}

std::optional<int64_t> upperOf(const Dimension &d) {
  if (d.hasUpperBound()) return d.maxLength();
  return std::nullopt;
}

class Planner {
public:
  Planner(const ShapeProgram &p, const OpRegistry &registry) : p_(p), registry_(registry) {}

  /// The buffers and steps of one lowered graph (a body's within its op's step).
  Result<BufferPlan> planGraph(const LoweredGraph &lg, int depth);

private:
  friend struct GraphBuffers;

  void inPlace(BufferPlan &plan, const Graph &g,
               const std::unordered_map<const Fact *, size_t> &ofTensor) {
    // The last step at which each buffer's memory is used, through the views of it (a view is
    // made after its source, so one pass from the last buffer back carries them), and per root
    // as in-place writes join groups.
    std::vector<size_t> end(plan.buffers.size(), 0);
    for (size_t b = plan.buffers.size(); b-- > 0;) {
      const Buffer &buf = plan.buffers[b];
      end[b] = std::max(end[b], buf.lastUse.value_or(buf.alloc));
      if (buf.aliasOf) end[*buf.aliasOf] = std::max(end[*buf.aliasOf], end[b]);
    }
    std::vector<size_t> groupEnd(plan.buffers.size(), 0);
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      size_t root = rootOf(plan, b);
      groupEnd[root] = std::max(groupEnd[root], end[b]);
    }
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      Step &s = plan.steps[i];
      if (s.kind != StepKind::Op || s.writes.empty()) continue;
      const Node &n = g.nodes[s.node];
      const OpDef *def = registry_.find(n.domain, n.opType);
      if (!def || !def->traits.inPlace) continue;
      size_t out = s.writes[0];
      Buffer &o = plan.buffers[out];
      if (o.aliasOf || o.owner != Owner::Arena || o.shapeValue) continue;
      for (OutletId in : n.inputs) {
        if (!g.contains(in)) continue;
        auto it = ofTensor.find(&g.fact(in));
        if (it == ofTensor.end()) continue;
        size_t root = rootOf(plan, it->second);
        const Buffer &r = plan.buffers[root];
        const Buffer &input = plan.buffers[it->second];
        if (r.owner != Owner::Arena || r.shapeValue) continue;
        if (input.type != o.type || !(input.shape == o.shape) || !o.shape.rankIsStatic()) continue;
        if (groupEnd[root] > i) continue; // still read after this op
        o.aliasOf = root;
        o.reuse = Reuse::InPlace;
        groupEnd[root] = std::max(groupEnd[root], end[out]);
        break;
      }
    }
  }
  const ShapeProgram &p_;
  const OpRegistry &registry_;
};

/// One graph's buffer plan as it is made (Planner::planGraph): the buffer of each tensor and
/// each of this graph's shape values, and the steps so far.
struct GraphBuffers {
  Planner &planner;
  const ShapeProgram &p_;
  const OpRegistry &registry_;
  const LoweredGraph &lg;
  const Graph &g;
  BufferPlan plan;
  std::unordered_map<const Fact *, size_t> ofTensor;
  std::unordered_map<size_t, size_t> ofShape; // shape value -> buffer, this graph's
  std::unordered_map<const Fact *, bool> isOutput;

  GraphBuffers(Planner &planner_, const LoweredGraph &graph)
      : planner(planner_), p_(planner_.p_), registry_(planner_.registry_), lg(graph),
        g(*graph.graph) {
    plan.graph = &g;
    plan.path = lg.path;
    for (OutletId o : g.outputs)
      isOutput[&g.fact(o)] = true;
  }

  /// A buffer for tensor `o`, allocated at `step`; its index.
  size_t tensorBuffer(const Outlet &o, Owner owner, size_t step) {
    Buffer b;
    b.tensor = o.name.empty() ? "#" + std::to_string(plan.buffers.size()) : o.name;
    b.name = valueName(b.tensor);
    b.type = o.fact.type;
    b.shape = o.fact.shape;
    b.bytes = bytesOfShape(o.fact.type, o.fact.shape);
    b.upperBytes = upperOf(b.bytes);
    b.owner = isOutput.count(&o.fact) ? Owner::Caller : owner;
    b.alloc = step;
    ofTensor[&o.fact] = plan.buffers.size();
    plan.buffers.push_back(std::move(b));
    return plan.buffers.size() - 1;
  }

  /// A buffer for shape value `value`, allocated at `step`; its index.
  size_t shapeBuffer(size_t value, Owner owner, size_t step) {
    const ShapeValue &v = p_.values[value];
    Buffer b;
    b.name = v.name;
    b.tensor = v.tensor;
    b.shapeValue = true;
    b.type = ElementType::I64;
    int64_t rank = v.shape.rankIsStatic() ? int64_t(v.shape.size()) : -1;
    b.shape = rank >= 0 ? PartialShape({Dimension(rank)}) : PartialShape({Dimension()});
    b.bytes = rank >= 0 ? Dimension(8 * rank) : Dimension::dynamic();
    b.upperBytes = upperOf(b.bytes);
    b.owner = owner;
    b.alloc = step;
    ofShape[value] = plan.buffers.size();
    plan.buffers.push_back(std::move(b));
    return plan.buffers.size() - 1;
  }

  /// `s` reads the tensor's buffer, if it has one.
  void read(Step &s, const std::unordered_map<const Fact *, size_t>::const_iterator it) {
    if (it != ofTensor.end()) s.reads.push_back(it->second);
  }

  /// The inputs' buffers (the caller's, or for a body the op's that runs it) with steps taking
  /// their actual shapes, and the constants' buffers.
  void inputs() {
    // Inputs (the caller's, or for a body the op's that runs it) and their actual shapes.
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Outlet &o = g.outlet(g.inputs[i]);
      tensorBuffer(o, Owner::Caller, 0);
      if (i < lg.inputShapes.size() && lg.inputShapes[i] &&
          p_.values[*lg.inputShapes[i]].source == ShapeSource::Actual &&
          p_.values[*lg.inputShapes[i]].path == lg.path && !ofShape.count(*lg.inputShapes[i])) {
        Step s;
        s.kind = StepKind::ShapeOf;
        s.node = g.inputs[i].node;
        s.reads.push_back(ofTensor[&o.fact]);
        s.writes.push_back(shapeBuffer(*lg.inputShapes[i], Owner::Caller, plan.steps.size()));
        plan.steps.push_back(std::move(s));
      }
    }
    // Constants live outside the arena.
    for (const Node &n : g.nodes)
      if (!n.removed && n.isConstant())
        for (const Outlet &o : n.outputs)
          tensorBuffer(o, Owner::Constant, 0);
  }

  /// Shape computations inserted before the op.
  void shapeSteps(const LoweredOp &op, const Node &n) {
    for (size_t k = 0; k < op.outputShapes.size(); ++k) {
      if (op.modes[k] != ShapeMode::Compute) continue;
      size_t value = *op.outputShapes[k];
      Step s;
      s.kind = StepKind::ShapeCompute;
      s.node = n.id;
      for (size_t from : p_.values[value].from)
        if (auto it = ofShape.find(from); it != ofShape.end()) s.reads.push_back(it->second);
      s.writes.push_back(shapeBuffer(value, Owner::Arena, plan.steps.size()));
      plan.steps.push_back(std::move(s));
    }
  }

  /// One op: its shape computations, then its step (what it reads and writes, a view's
  /// source, its bodies' plans).
  Result<void> opStep(const LoweredOp &op, int depth) {
    const Node &n = g.nodes[op.node];
    const OpDef *def = registry_.find(n.domain, n.opType);
    const OpTraits traits = def ? def->traits : OpTraits{};
    shapeSteps(op, n);
    Step s;
    s.kind = StepKind::Op;
    s.node = n.id;
    size_t index = plan.steps.size();
    for (OutletId in : n.inputs)
      if (g.contains(in) && !(traits.metadataOnly)) read(s, ofTensor.find(&g.fact(in)));
    for (const auto &v : op.inputShapes)
      if (v)
        if (auto it = ofShape.find(*v); it != ofShape.end()) s.reads.push_back(it->second);
    for (size_t k = 0; k < op.outputShapes.size(); ++k)
      if (op.modes[k] == ShapeMode::Compute)
        if (auto it = ofShape.find(*op.outputShapes[k]); it != ofShape.end()) {
          s.reads.push_back(it->second);
          s.outShapes.push_back(it->second);
        }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      size_t b = tensorBuffer(n.outputs[k], Owner::Arena, index);
      s.writes.push_back(b);
      if (k == 0 && (traits.view || passesThrough(g, n)) && !n.inputs.empty() && g.contains(n.inputs[0])) {
        auto it = ofTensor.find(&g.fact(n.inputs[0]));
        if (it != ofTensor.end()) {
          size_t root = rootOf(plan, it->second);
          plan.buffers[b].aliasOf = root;
          plan.buffers[b].reuse = Reuse::View;
          // A view that leaves the graph makes its source the caller's memory.
          if (plan.buffers[b].owner == Owner::Caller && plan.buffers[root].owner == Owner::Arena)
            plan.buffers[root].owner = Owner::Caller;
          plan.buffers[b].owner = plan.buffers[root].owner;
        }
      }
      if (k < op.modes.size() && op.modes[k] == ShapeMode::Result) {
        s.writes.push_back(shapeBuffer(*op.outputShapes[k], Owner::Arena, index));
        s.outShapes.push_back(s.writes.back());
      }
    }
    for (const auto &[name, body] : op.bodies) {
      SF_ASSIGN(BufferPlan bp, planner.planGraph(body, depth + 1));
      s.bodies.push_back({name, std::move(bp)});
    }
    plan.steps.push_back(std::move(s));
    return success();
  }

  /// Outputs: their buffers and shape values are the caller's.
  void outputs() {
    for (size_t i = 0; i < lg.outputShapes.size(); ++i) {
      std::optional<size_t> b;
      if (lg.outputShapes[i])
        if (auto it = ofShape.find(*lg.outputShapes[i]); it != ofShape.end()) {
          plan.buffers[it->second].owner = Owner::Caller;
          b = it->second;
        }
      plan.outputShapes.push_back(b);
    }
  }

  /// Last uses, then in-place writes (an input that dies at an elementwise op whose output has
  /// its type and shape), then allocations and frees of the arena's buffers.
  void lifetimes() {
    for (size_t i = 0; i < plan.steps.size(); ++i)
      for (size_t b : plan.steps[i].reads)
        plan.buffers[b].lastUse = std::max(plan.buffers[b].lastUse.value_or(i), i);
    planner.inPlace(plan, g, ofTensor);
    for (Buffer &b : plan.buffers)
      if (b.aliasOf) b.aliasOf = rootOf(plan, *b.aliasOf);
    std::vector<size_t> groupEnd(plan.buffers.size(), 0);
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const Buffer &buf = plan.buffers[b];
      size_t end = std::max(buf.alloc, buf.lastUse.value_or(buf.alloc));
      size_t root = rootOf(plan, b);
      groupEnd[root] = std::max(groupEnd[root], end);
    }
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const Buffer &buf = plan.buffers[b];
      if (buf.aliasOf || buf.owner != Owner::Arena) continue;
      plan.steps[buf.alloc].allocs.push_back(b);
      plan.steps[groupEnd[b]].frees.push_back(b);
    }
  }
};

Result<BufferPlan> Planner::planGraph(const LoweredGraph &lg, int depth) {
  if (depth > 64) return makeError("subgraphs nested deeper than 64");
  GraphBuffers graph(*this, lg);
  graph.inputs();
  for (const LoweredOp &op : lg.ops) SF_TRY(graph.opStep(op, depth));
  graph.outputs();
  graph.lifetimes();
  return std::move(graph.plan);
}


} // namespace

Result<BufferPlan> planBuffers(const ShapeProgram &program) {
  if (!program.main.graph) return makeError("no lowered graph");
  ExprScope scope = program.main.graph->enter();
  Planner planner(program, defaultRegistry());
  return planner.planGraph(program.main, 0);
}

} // namespace sf::lower
