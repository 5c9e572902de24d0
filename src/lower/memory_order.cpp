// The memory-aware execution order of the static memory plan (OrderPolicy::Memory,
// memory_order.h).
#include "memory_order.h"

#include <set>
#include <unordered_map>

namespace sf::lower {
namespace {

/// Bytes an op step allocates and frees (at the reference), for the memory-aware order.
struct NodeBytes {
  int64_t out = 0;
};

/// The list scheduling of memoryOrder: per node its outputs' bytes at the reference, how many of
/// its producers have not run and the nodes it feeds; per tensor how many readers are left.
struct MemoryScheduler {
  const Graph &g;
  Binding &binding;
  std::vector<int64_t> bytes; // per node: its outputs' bytes
  std::vector<size_t> pending;
  std::vector<std::vector<uint32_t>> users;
  std::unordered_map<const Fact *, int64_t> remaining; // readers left per tensor

  MemoryScheduler(const Graph &graph, Binding &b)
      : g(graph), binding(b), bytes(g.nodes.size(), 0), pending(g.nodes.size(), 0),
        users(g.nodes.size()) {}

  /// Each node's outputs' bytes, producers and users, and each tensor's readers.
  void count() {
    for (const Node &nd : g.nodes) {
      if (nd.removed) continue;
      for (const Outlet &o : nd.outputs) {
        size_t size = o.fact.type == ElementType::Undefined ? 0 : elementSize(o.fact.type);
        auto count = o.fact.shape.elementCount();
        int64_t v = 0;
        if (count.ok() && size) {
          auto b = *count * Dimension(int64_t(size));
          if (b.ok()) {
            auto at = binding.at(*b, o.name);
            if (at.ok()) v = *at;
          }
        }
        bytes[nd.id] += v;
      }
      std::set<uint32_t> producers;
      for (OutletId in : nd.inputs)
        if (g.contains(in)) {
          producers.insert(in.node);
          ++remaining[&g.fact(in)];
        }
      pending[nd.id] = producers.size();
      for (uint32_t p : producers)
        users[p].push_back(nd.id);
    }
  }

  /// The bytes of the inputs `nd` is the last reader of (parameters and constants aside).
  int64_t freed(const Node &nd) {
    int64_t f = 0;
    std::set<const Fact *> seen;
    for (OutletId in : nd.inputs) {
      if (!g.contains(in)) continue;
      const Fact *fact = &g.fact(in);
      if (!seen.insert(fact).second) continue;
      const Node &p = g.nodes[in.node];
      if (p.isParameter() || p.isConstant()) continue;
      int64_t uses = 0;
      for (OutletId again : nd.inputs)
        uses += g.contains(again) && &g.fact(again) == fact;
      if (remaining[fact] == uses) {
        size_t size = fact->type == ElementType::Undefined ? 0 : elementSize(fact->type);
        auto count = fact->shape.elementCount();
        if (count.ok() && size) {
          auto b = *count * Dimension(int64_t(size));
          if (b.ok())
            if (auto at = binding.at(*b, "a tensor"); at.ok()) f += *at;
        }
      }
    }
    return f;
  }

  /// The order: among the ready nodes, the one that adds the fewest live bytes next.
  std::vector<uint32_t> schedule() {
    std::set<uint32_t> ready;
    for (const Node &nd : g.nodes)
      if (!nd.removed && pending[nd.id] == 0) ready.insert(nd.id);
    std::vector<uint32_t> order;
    while (!ready.empty()) {
      uint32_t best = *ready.begin();
      int64_t bestScore = 0;
      bool first = true;
      for (uint32_t id : ready) {
        const Node &nd = g.nodes[id];
        // Parameters and constants first: they cost nothing.
        int64_t score = nd.isParameter() || nd.isConstant() ? INT64_MIN : bytes[id] - freed(nd);
        if (first || score < bestScore) {
          best = id;
          bestScore = score;
          first = false;
        }
      }
      ready.erase(best);
      order.push_back(best);
      const Node &nd = g.nodes[best];
      for (OutletId in : nd.inputs)
        if (g.contains(in)) --remaining[&g.fact(in)];
      for (uint32_t u : users[best])
        if (--pending[u] == 0) ready.insert(u);
    }
    return order;
  }
};

} // namespace

Result<std::vector<uint32_t>> memoryOrder(const Graph &g, Binding &binding) {
  MemoryScheduler scheduler(g, binding);
  scheduler.count();
  std::vector<uint32_t> order = scheduler.schedule();
  size_t live = 0;
  for (const Node &nd : g.nodes)
    live += !nd.removed;
  if (order.size() != live) return makeError("the graph has a cycle: no order runs every node");
  return order;
}

} // namespace sf::lower
