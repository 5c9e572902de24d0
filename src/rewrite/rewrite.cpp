// The pass driver and the building blocks of passes (rewrite/rewrite.h).
#include "shapeflow/rewrite/rewrite.h"

#include "shapeflow/infer/infer.h"
#include "shapeflow/support/format.h"

namespace sf::rewrite {

Result<std::vector<PassCount>> runPasses(PassContext &ctx, std::span<const Pass> passes, int maxRounds) {
  ExprScope scope = ctx.graph.enter();
  std::vector<PassCount> counts;
  for (const Pass &p : passes) counts.push_back({p.name, 0});
  for (int round = 0; round < maxRounds; ++round) {
    size_t changed = 0;
    for (size_t i = 0; i < passes.size(); ++i) {
      SF_ASSIGN(size_t n, passes[i].apply(ctx));
      counts[i].rewrites += n;
      changed += n;
    }
    if (changed == 0) break;
  }
  bool removed = false;
  for (const Node &n : ctx.graph.nodes) removed = removed || n.removed;
  if (removed) ctx.graph.compact();
  return counts;
}

const OpDef *recordOf(const PassContext &ctx, const Node &n) {
  if (n.removed || n.kind != NodeKind::Op) return nullptr;
  return ctx.registry.find(n.domain, n.opType);
}

const Node *onlyReader(const Graph &g, const Node &n) {
  if (n.outputs.size() != 1 || n.outputs[0].successors.size() != 1) return nullptr;
  for (OutletId o : g.outputs)
    if (o == OutletId{n.id, 0}) return nullptr;
  return &g.nodes[n.outputs[0].successors[0].node];
}

std::string freshName(const Graph &g, const std::string &stem) {
  std::string name = stem;
  for (int k = 1; g.findOutlet(name); ++k) name = stem + "_" + std::to_string(k);
  return name;
}

std::optional<double> scalarConstant(const Graph &g, OutletId o) {
  if (!g.contains(o)) return std::nullopt;
  const Fact &f = g.fact(o);
  if (!f.constant || !f.constant->hasData() || f.constant->elementCount() != 1) return std::nullopt;
  auto v = f.constant->toDoubles(1);
  if (!v.ok()) return std::nullopt;
  return (*v)[0];
}

Result<uint32_t> replaceWithNode(PassContext &ctx, std::string_view domain, std::string_view opType, int opset,
                                 std::vector<OutletId> inputs, Attributes attrs, OutletId replaced,
                                 std::span<const uint32_t> dead) {
  Graph &g = ctx.graph;
  if (!g.contains(replaced)) return errorf("the outlet to replace does not exist");
  const std::string nodeName = g.nodes[replaced.node].name;
  SF_ASSIGN(uint32_t id, g.addNode(std::string(opType), nodeName, std::move(inputs), std::vector<std::string>{""},
                                   std::move(attrs)));
  g.nodes[id].domain = std::string(domain);
  g.nodes[id].opsetVersion = opset;
  // The new node's rule must accept its inputs and give what the replaced outlet holds; the
  // replaced outlet's fact stays (the nodes after it were inferred with it).
  // Refused: the graph is left as it was.
  auto refuse = [&](Error e) -> Result<uint32_t> {
    (void)g.removeNode(id);
    return e;
  };
  auto facts = inferNodeFacts(g, id, &ctx.registry);
  if (!facts.ok()) return refuse(facts.error());
  const Fact &was = g.fact(replaced);
  if (facts->empty() || (*facts)[0].type != was.type || !(*facts)[0].shape.compatible(was.shape))
    return refuse(errorf("{}: its rule gives {} where the outlet it replaces is {}", g.nodeLabel(id),
                         facts->empty() ? std::string("nothing") : fmt::format("{}", (*facts)[0]), was));
  g.nodes[id].outputs[0].fact = was;
  g.nodes[id].outputs[0].declared = g.outlet(replaced).declared;
  const std::string name = g.outlet(replaced).name;
  SF_TRY(g.replaceUses(replaced, {id, 0}));
  // The dead nodes, each once nothing reads it any more (readers first, in whatever order given).
  std::vector<uint32_t> left(dead.begin(), dead.end());
  while (!left.empty()) {
    size_t before = left.size();
    std::erase_if(left, [&](uint32_t d) {
      const Node &n = g.nodes[d];
      for (const Outlet &o : n.outputs)
        if (!o.successors.empty()) return false;
      return g.removeNode(d).ok();
    });
    if (left.size() == before)
      return errorf("{} is still read after the rewrite", g.nodeLabel(left.front()));
  }
  SF_TRY(g.renameOutlet({id, 0}, name));
  return id;
}

} // namespace sf::rewrite
