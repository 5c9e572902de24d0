// A run's layout from the static memory plan (eval/arena.h).
#include "shapeflow/eval/arena.h"

#include "shapeflow/infer/infer.h"
#include "shapeflow/support/format.h"

#include <unordered_map>

namespace sf::eval {

Result<std::map<std::string, int64_t>> bindInputs(const Graph &g, const std::map<std::string, Value> &inputs) {
  ExprScope scope = g.enter();
  std::map<std::string, int64_t> binding;
  std::map<std::string, std::string> from; // symbol -> the input dim that bound it
  for (OutletId o : g.inputs) {
    const Outlet &in = g.outlet(o);
    auto it = inputs.find(in.name);
    if (it == inputs.end() || !it->second.isTensor() || !in.fact.shape.rankIsStatic()) continue;
    const Shape &shape = it->second->shape();
    if (shape.size() != in.fact.shape.size()) continue;
    for (size_t i = 0; i < shape.size(); ++i) {
      const Dimension &d = in.fact.shape[i];
      if (!d.expr() || d.expr()->kind != ExprKind::Sym) continue;
      const std::string &name = symbolInfo(d.expr()->sym).name;
      if (name.empty()) continue;
      std::string where = fmt::format("'{}' dim {}", in.name, i);
      auto [at, fresh] = binding.emplace(name, shape[i]);
      if (fresh) from[name] = where;
      else if (at->second != shape[i])
        return errorf("{} is {} at {} and {} at {}", name, at->second, from[name], shape[i], where);
    }
  }
  return binding;
}

Result<ArenaLayout> layoutAt(const Graph &g, const lower::MemoryPlan &plan,
                             const std::map<std::string, int64_t> &binding) {
  ExprScope scope = g.enter();
  lower::PlanValues at(plan, binding);
  ArenaLayout out;
  out.binding = binding;
  auto peak = at(plan.peak);
  if (!peak || *peak < 0) return errorf("the plan's peak does not evaluate at the inputs' sizes");
  out.bytes = *peak;
  std::unordered_map<std::string, OutletId> byName;
  for (const Node &n : g.nodes)
    if (!n.removed)
      for (size_t k = 0; k < n.outputs.size(); ++k)
        byName.emplace(n.outputs[k].name, OutletId{n.id, uint32_t(k)});
  out.places.resize(g.nodes.size());
  for (const Node &n : g.nodes)
    out.places[n.id].resize(n.outputs.size());
  for (const lower::Slot &s : plan.slots) {
    if (s.body || s.reuse == lower::Reuse::View) continue;
    // An output the model leaves unnamed (an optional output it does not take) is named by its
    // buffer's number in the plan; it stays on the heap.
    if (s.tensor.starts_with('#')) continue;
    auto it = byName.find(s.tensor);
    if (it == byName.end()) return errorf("the plan places '{}', which the graph does not have", s.tensor);
    // An in-place output sits where its input's memory does (the chain ends at an owner).
    const lower::Slot *owner = &s;
    for (size_t hops = 0; owner->sharesWith && hops <= plan.slots.size(); ++hops) {
      if (*owner->sharesWith >= plan.slots.size()) return errorf("slot '{}' shares a slot that does not exist", s.tensor);
      owner = &plan.slots[*owner->sharesWith];
    }
    if (owner->sharesWith) return errorf("slot '{}' shares memory in a cycle", s.tensor);
    auto offset = at(owner->offset), size = at(owner->size), bytes = at(s.bytes);
    if (!offset || !size || !bytes)
      return errorf("the plan's place for '{}' does not evaluate at the inputs' sizes", s.tensor);
    if (*offset < 0 || *bytes < 0 || *bytes > *size || *size > out.bytes - *offset)
      return errorf("the plan puts '{}' ({} bytes) at {} in a slot of {} bytes, outside the arena of {}",
                    s.tensor, *bytes, *offset, *size, out.bytes);
    out.places[it->second.node][it->second.slot] =
        Placement{*offset, *bytes, s.reuse == lower::Reuse::InPlace};
    ++out.tensors;
  }
  // Every node, the plan's ops in its order after the nodes it does not order (inputs, constants).
  std::vector<bool> ordered(g.nodes.size(), false);
  for (uint32_t id : plan.orderIds) {
    if (id >= g.nodes.size() || ordered[id]) return errorf("the plan's order names node {} twice or out of range", id);
    ordered[id] = true;
  }
  SF_ASSIGN(std::vector<uint32_t> topo, g.topologicalOrder());
  for (uint32_t id : topo)
    if (!ordered[id]) out.order.push_back(id);
  out.order.insert(out.order.end(), plan.orderIds.begin(), plan.orderIds.end());
  // An order the executor can follow: every node once, after the nodes it reads.
  std::vector<size_t> position(g.nodes.size(), SIZE_MAX);
  for (size_t i = 0; i < out.order.size(); ++i) position[out.order[i]] = i;
  for (const Node &n : g.nodes) {
    if (n.removed) continue;
    if (position[n.id] == SIZE_MAX) return errorf("the plan's order leaves out node '{}'", n.name);
    for (OutletId in : n.inputs)
      if (in.valid() && position[in.node] > position[n.id])
        return errorf("the plan's order runs node '{}' before '{}', which it reads", n.name, g.nodes[in.node].name);
  }
  return out;
}

Result<ArenaLayout> planArena(const Graph &g, const std::map<std::string, Value> &inputs) {
  SF_ASSIGN(auto binding, bindInputs(g, inputs));
  lower::PlanOptions options;
  options.callerOwnedIO = true;
  options.reference = binding;
  auto plan = lower::planMemory(g, options);
  if (plan.ok()) return layoutAt(g, *plan, binding);
  if (binding.empty()) return plan.error();
  // The plan for every size needs an upper bound for every buffer's end, and a graph may leave
  // some without one (an offset whose expression over unbounded input dims grew past the
  // planner's budget). This run needs a plan for its own sizes only: the graph again, with each
  // input dim fixed to these inputs' size and inferred again (node ids are kept), is planned
  // instead; its layout is checked against the graph like any other (checkLayout).
  Graph fixed = g.clone();
  InferOptions fix;
  for (const auto &[name, value] : binding) fix.dims.push_back({name, Interval{value, value}});
  Diagnostics diags;
  if (!applyInputs(fixed, fix, &diags).ok()) return plan.error();
  inferGraph(fixed, diags, fix);
  if (diags.errorCount()) return plan.error();
  auto fixedPlan = lower::planMemory(fixed, options);
  if (!fixedPlan.ok()) return plan.error();
  return layoutAt(fixed, *fixedPlan, binding);
}

} // namespace sf::eval
