// Graph::verify (structural invariants) and Graph::topologicalOrder (iterative DFS).
#include "shapeflow/ir/graph.h"

#include <algorithm>

namespace sf {
namespace {

constexpr size_t kMaxProblems = 20;
constexpr int kMaxDepth = 64;

std::string outletLabel(const Graph &g, OutletId o) {
  const std::string &name = g.outlet(o).name;
  std::string where = "output " + std::to_string(o.slot) + " of " + g.nodeLabel(o.node);
  return name.empty() ? where : "'" + name + "' (" + where + ")";
}

/// Offsets of each node's outlets in one flat array, and of each outlet's expected readers (from
/// the inputs) in another: counted first, then filled (no allocation per outlet).
struct ReaderIndex {
  std::vector<size_t> base;        // per node: its first outlet
  std::vector<size_t> readerStart; // per outlet: its first reader
  std::vector<InletId> readers;
  std::vector<size_t> fill; // per outlet: where its next reader goes
};

ReaderIndex readerIndex(const Graph &g) {
  const size_t n = g.nodes.size();
  ReaderIndex x;
  x.base.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) x.base[i + 1] = x.base[i] + g.nodes[i].outputs.size();
  x.readerStart.assign(x.base[n] + 1, 0);
  for (const Node &node : g.nodes) {
    if (node.removed) continue;
    for (OutletId o : node.inputs)
      if (g.contains(o)) ++x.readerStart[x.base[o.node] + o.slot + 1];
  }
  for (size_t k = 0; k < x.base[n]; ++k) x.readerStart[k + 1] += x.readerStart[k];
  x.readers.resize(x.readerStart[x.base[n]]);
  x.fill.assign(x.readerStart.begin(), x.readerStart.end() - 1);
  return x;
}

class Verifier {
public:
  std::vector<std::string> problems;
  VerifyOptions options;

  void graph(const Graph &g, const Node *owner, const std::string &prefix, int depth) {
    ReaderIndex x = readerIndex(g);
    std::unordered_map<std::string_view, OutletId> names;
    if (options.uniqueNames) names.reserve(x.base[g.nodes.size()]);
    for (size_t i = 0; i < g.nodes.size(); ++i) node(g, owner, prefix, i, x, names);
    successors(g, prefix, x);
    inputsAndOutputs(g, prefix);
    subgraphs(g, prefix, depth);
  }

private:
  void problem(const std::string &prefix, std::string what) {
    if (problems.size() < kMaxProblems) problems.push_back(prefix + what);
  }

  /// Node i: its id, its inputs (each noted as a reader of its outlet), its output names, and a
  /// Parameter's form.
  void node(const Graph &g, const Node *owner, const std::string &prefix, size_t i, ReaderIndex &x,
            std::unordered_map<std::string_view, OutletId> &names) {
    const Node &node = g.nodes[i];
    if (node.id != i) problem(prefix, "node at position " + std::to_string(i) + " has id " +
                                          std::to_string(node.id));
    if (node.removed) {
      if (!node.inputs.empty() || !node.outputs.empty())
        problem(prefix, "removed node #" + std::to_string(i) + " still has inputs or outputs");
      return;
    }
    for (uint32_t s = 0; s < node.inputs.size(); ++s) {
      OutletId o = node.inputs[s];
      if (!o.valid()) continue;
      if (!g.contains(o)) {
        problem(prefix, g.nodeLabel(uint32_t(i)) + " input " + std::to_string(s) +
                            " refers to a missing outlet " + std::to_string(o.node) + ":" +
                            std::to_string(o.slot));
        continue;
      }
      x.readers[x.fill[x.base[o.node] + o.slot]++] = InletId{uint32_t(i), s};
    }
    for (uint32_t s = 0; s < node.outputs.size(); ++s) {
      const std::string &name = node.outputs[s].name;
      if (name.empty() || !options.uniqueNames) continue;
      auto [it, fresh] = names.emplace(name, OutletId{uint32_t(i), s});
      if (!fresh)
        problem(prefix, "name '" + name + "' is used by " + g.nodeLabel(it->second.node) + " and " +
                            g.nodeLabel(uint32_t(i)));
    }
    if (node.isParameter()) parameter(g, owner, prefix, i);
  }

  void parameter(const Graph &g, const Node *owner, const std::string &prefix, size_t i) {
    const Node &node = g.nodes[i];
    if (!node.inputs.empty() || node.outputs.size() != 1)
      problem(prefix, g.nodeLabel(uint32_t(i)) + " must have no inputs and one output");
    if (!node.isCaptured()) return;
    auto idx = node.attrs.getInt("captured");
    if (!owner) problem(prefix, g.nodeLabel(uint32_t(i)) + " is captured but the graph has no owner");
    else if (!idx.ok()) problem(prefix, g.nodeLabel(uint32_t(i)) + ": " + idx.error().message);
    else if (*idx < 0 || uint64_t(*idx) >= owner->inputs.size())
      problem(prefix, g.nodeLabel(uint32_t(i)) + " captures input " + std::to_string(*idx) +
                          " of its owner, which has " + std::to_string(owner->inputs.size()) +
                          " inputs");
  }

  /// Successors mirror inputs exactly (as multisets).
  void successors(const Graph &g, const std::string &prefix, ReaderIndex &x) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node &node = g.nodes[i];
      if (node.removed) continue;
      for (uint32_t s = 0; s < node.outputs.size(); ++s) {
        const auto &listed = node.outputs[s].successors;
        auto wantBegin = x.readers.begin() + ptrdiff_t(x.readerStart[x.base[i] + s]);
        auto wantEnd = x.readers.begin() + ptrdiff_t(x.readerStart[x.base[i] + s + 1]);
        size_t wantCount = size_t(wantEnd - wantBegin);
        bool same = listed.size() == wantCount;
        if (same && wantCount == 1) {
          same = listed[0] == *wantBegin;
        } else if (same) {
          std::vector<InletId> actual(listed.begin(), listed.end());
          std::sort(actual.begin(), actual.end());
          std::sort(wantBegin, wantEnd);
          same = std::equal(actual.begin(), actual.end(), wantBegin);
        }
        if (!same)
          problem(prefix, "successors of " + outletLabel(g, OutletId{uint32_t(i), s}) + " list " +
                              std::to_string(listed.size()) + " inlets, but " + std::to_string(wantCount) +
                              " inputs read it (or they differ)");
      }
    }
  }

  /// Graph inputs: Parameters, each listed once; graph outputs that exist.
  void inputsAndOutputs(const Graph &g, const std::string &prefix) {
    const size_t n = g.nodes.size();
    std::vector<char> listed(n, 0);
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      OutletId o = g.inputs[k];
      if (!g.contains(o)) {
        problem(prefix, "graph input " + std::to_string(k) + " refers to a missing outlet");
        continue;
      }
      if (!g.nodes[o.node].isParameter())
        problem(prefix, "graph input " + std::to_string(k) + " is " + g.nodeLabel(o.node) +
                            ", not a Parameter");
      if (listed[o.node]++) problem(prefix, g.nodeLabel(o.node) + " is listed twice as a graph input");
    }
    for (size_t i = 0; i < n; ++i)
      if (!g.nodes[i].removed && g.nodes[i].isParameter() && !listed[i])
        problem(prefix, g.nodeLabel(uint32_t(i)) + " is not listed as a graph input");
    for (size_t k = 0; k < g.outputs.size(); ++k)
      if (!g.contains(g.outputs[k]))
        problem(prefix, "graph output " + std::to_string(k) + " refers to a missing outlet");
  }

  /// Subgraphs.
  void subgraphs(const Graph &g, const std::string &prefix, int depth) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node &node = g.nodes[i];
      for (const auto &[attrName, attr] : node.attrs) {
        std::vector<const Graph *> subs;
        if (const GraphPtr *p = attr.get<GraphPtr>()) subs.push_back(p->get());
        if (const auto *ps = attr.get<std::vector<GraphPtr>>())
          for (const auto &p : *ps) subs.push_back(p.get());
        for (const Graph *sub : subs) {
          std::string where = prefix + "in attribute '" + attrName + "' of " +
                              g.nodeLabel(uint32_t(i)) + ": ";
          if (!sub) {
            if (problems.size() < kMaxProblems) problems.push_back(where + "no graph");
          } else if (depth >= kMaxDepth) {
            if (problems.size() < kMaxProblems)
              problems.push_back(where + "subgraphs nested too deeply");
          } else {
            graph(*sub, &node, where, depth + 1);
          }
        }
      }
    }
  }
};

} // namespace

Result<void> Graph::verify(VerifyOptions options) const {
  Verifier v;
  v.options = options;
  v.graph(*this, nullptr, "", 0);
  if (v.problems.empty()) return success();
  std::string msg;
  for (const auto &p : v.problems) msg += (msg.empty() ? "" : "\n") + p;
  return makeError(msg);
}

Result<std::vector<uint32_t>> Graph::topologicalOrder() const {
  const size_t n = nodes.size();
  for (size_t i = 0; i < n; ++i) {
    const Node &node = nodes[i];
    if (node.removed) continue;
    for (uint32_t s = 0; s < node.inputs.size(); ++s)
      if (node.inputs[s].valid() && !contains(node.inputs[s]))
        return makeError(nodeLabel(uint32_t(i)) + " input " + std::to_string(s) +
                         " refers to a missing outlet");
  }
  // Post-order DFS from every node in id order, walking to producers. Emitting a node after its
  // producers gives id order whenever ids are already topological. A producer still on the
  // stack closes a cycle, which the stack spells out.
  enum : char { White, Gray, Black };
  std::vector<char> state(n, White);
  std::vector<uint32_t> order;
  order.reserve(n);
  struct Frame {
    uint32_t node;
    uint32_t next; // next input slot to look at
  };
  std::vector<Frame> stack;
  for (uint32_t root = 0; root < n; ++root) {
    if (nodes[root].removed || state[root] != White) continue;
    stack.push_back({root, 0});
    state[root] = Gray;
    while (!stack.empty()) {
      Frame &f = stack.back();
      const Node &node = nodes[f.node];
      if (f.next < node.inputs.size()) {
        OutletId in = node.inputs[f.next++];
        if (!in.valid()) continue;
        if (state[in.node] == White) {
          state[in.node] = Gray;
          stack.push_back({in.node, 0});
        } else if (state[in.node] == Gray) {
          // Data flows from in.node to the node above it on the stack, and so on up to f.node,
          // which reads in.node's output.
          size_t k = stack.size();
          while (stack[k - 1].node != in.node) --k;
          std::string msg = "cycle: ";
          auto label = [&](uint32_t id) {
            return nodes[id].name.empty() ? "#" + std::to_string(id) + " (" + nodes[id].opType + ")"
                                          : nodes[id].name;
          };
          msg += label(in.node);
          for (size_t j = stack.size(); j-- > k;) msg += " -> " + label(stack[j].node);
          msg += " -> " + label(in.node);
          return makeError(msg);
        }
        continue;
      }
      state[f.node] = Black;
      order.push_back(f.node);
      stack.pop_back();
    }
  }
  return order;
}

} // namespace sf
