// The simplifier's passes (rewrite/rewrite.h): a smaller equivalent graph from the facts, which
// stays dynamic where the inputs are.
#include "shapeflow/rewrite/rewrite.h"

#include "shapeflow/infer/infer.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace sf::rewrite {
namespace {

bool isGraphOutput(const Graph &g, OutletId o) {
  return std::find(g.outputs.begin(), g.outputs.end(), o) != g.outputs.end();
}

bool unread(const Graph &g, OutletId o) { return g.outlet(o).successors.empty() && !isGraphOutput(g, o); }

/// The node's input `i` is a constant with its elements (an absent optional input counts as
/// given: null).
std::optional<TensorPtr> constantInput(const Graph &g, const Node &n, size_t i) {
  OutletId in = n.inputs[i];
  if (!in.valid()) return TensorPtr();
  const Node &p = g.nodes[in.node];
  if (!p.isConstant()) return std::nullopt;
  const Fact &f = p.outputs[0].fact;
  if (!f.constant || !f.constant->hasData()) return std::nullopt;
  return f.constant;
}

/// Bytes of a static fact's elements (nullopt when its shape or type is not known exactly).
std::optional<int64_t> staticBytes(const Fact &f) {
  if (f.type == ElementType::Undefined || !f.shape.rankIsStatic()) return std::nullopt;
  auto shape = f.shape.toShape();
  if (!shape.ok()) return std::nullopt;
  int64_t n = int64_t(std::max<size_t>(elementSize(f.type), 1));
  for (int64_t d : *shape) {
    if (d != 0 && n > INT64_MAX / d) return std::nullopt;
    n *= d;
  }
  return n;
}

/// Every reader of `from` reads `to` instead, and `to` takes `from`'s name when `from` is a
/// graph output (the model's outputs keep their names). False when that cannot be done: `to`
/// is a graph input or output of its own, so renaming it would change the model's interface.
bool stand(Graph &g, OutletId from, OutletId to) {
  const bool output = isGraphOutput(g, from);
  if (output) {
    const Node &src = g.nodes[to.node];
    if (src.isParameter() || isGraphOutput(g, to)) return false;
  }
  std::string name = g.outlet(from).name;
  if (!g.replaceUses(from, to).ok()) return false;
  if (output) {
    (void)g.renameOutlet(from, "");
    if (!g.renameOutlet(to, name).ok()) return false;
  }
  return true;
}

/// Removes `n` when nothing reads any of its outputs.
bool removeIfUnread(Graph &g, uint32_t id) {
  const Node &n = g.nodes[id];
  for (uint32_t k = 0; k < n.outputs.size(); ++k)
    if (!unread(g, {id, k})) return false;
  return g.removeNode(id).ok();
}

/// Replaces output `o` by a constant holding `t` (the constant takes its name).
bool replaceByConstant(Graph &g, OutletId o, TensorPtr t) {
  auto c = g.addConstant(freshName(g, g.outlet(o).name + "_folded"), std::move(t));
  if (!c.ok()) return false;
  g.outlet(*c).declared = g.outlet(o).declared;
  std::string name = g.outlet(o).name;
  if (!g.replaceUses(o, *c).ok()) return false;
  (void)g.renameOutlet(o, "");
  (void)g.renameOutlet(*c, name);
  g.nodes[c->node].name = name;
  return true;
}

/// Each output of node `id` that something reads becomes the constant `tensorOf(k)` gives
/// (none when it gives null); the node goes once nothing reads it. How many were replaced.
size_t replaceOutputsByConstants(Graph &g, uint32_t id, const std::function<TensorPtr(uint32_t)> &tensorOf) {
  size_t replaced = 0;
  for (uint32_t k = 0; k < g.nodes[id].outputs.size(); ++k) {
    if (unread(g, {id, k})) continue;
    TensorPtr t = tensorOf(k);
    if (t && replaceByConstant(g, {id, k}, std::move(t))) ++replaced;
  }
  if (replaced) (void)removeIfUnread(g, id);
  return replaced;
}

bool hasBodies(const Node &n) {
  for (const auto &[name, a] : n.attrs)
    if (a.kind() == AttributeKind::Graph || a.kind() == AttributeKind::Graphs) return true;
  return false;
}

/// The tensor a fact's known elements make (an integer tensor of rank <= 1 whose every element
/// is a number), or null.
TensorPtr tensorOfValue(const Fact &f) {
  if (f.constant && f.constant->hasData()) return f.constant;
  if (!f.value || !f.shape.rankIsStatic() || f.shape.size() > 1) return nullptr;
  std::vector<int64_t> values;
  for (const Dimension &d : *f.value) {
    if (!d.isStatic()) return nullptr;
    values.push_back(d.length());
  }
  auto shape = f.shape.toShape();
  if (!shape.ok()) return nullptr;
  auto t = Tensor::fromInt64s(*shape, values, f.type);
  if (!t.ok()) return nullptr;
  return std::make_shared<const Tensor>(std::move(*t));
}

/// The same attributes in the same order, tensors equal by their elements (nodes with bodies
/// are never compared).
bool sameAttributes(const Attributes &a, const Attributes &b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i->first != j->first || i->second.kind() != j->second.kind()) return false;
    const auto &x = i->second.value(), &y = j->second.value();
    if (const auto *t = std::get_if<TensorPtr>(&x)) {
      const auto *u = std::get_if<TensorPtr>(&y);
      if (!*t || !*u || !(**t == **u)) return false;
    } else if (i->second.kind() == AttributeKind::Tensors || i->second.kind() == AttributeKind::Graph ||
               i->second.kind() == AttributeKind::Graphs || i->second.kind() == AttributeKind::Type) {
      return false;
    } else if (!(x == y)) {
      return false;
    }
  }
  return true;
}

/// Reshape's target for output dims `out` from input dims `in`, kept dynamic: numbers where
/// they are numbers, 0 (copy) where a dim is the input's at the same index, one -1 for the one
/// left; nullopt when more are left, or when -1 could meet an empty tensor (it cannot be
/// inferred then), or a 0 would read as a copy.
std::optional<std::vector<int64_t>> reshapeTarget(const std::vector<Dimension> &in, const std::vector<Dimension> &out,
                                                  const Attributes &attrs) {
  auto allowzero = attrs.getInt("allowzero");
  const bool zeroCopies = !allowzero.ok() || *allowzero == 0;
  std::vector<int64_t> entries;
  int inferred = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    const bool copies = zeroCopies && i < in.size() && in[i] == out[i];
    if (out[i].isStatic() && (out[i].length() != 0 || !zeroCopies || copies)) entries.push_back(copies ? 0 : out[i].length());
    else if (copies && out[i].expr()) entries.push_back(0);
    else if (inferred < 0 && !out[i].isStatic()) {
      inferred = int(i);
      entries.push_back(-1);
    } else return std::nullopt;
  }
  if (inferred >= 0)
    for (size_t i = 0; i < out.size(); ++i)
      if (int(i) != inferred && out[i].minLength() < 1) return std::nullopt;
  return entries;
}

/// Expand's target for output dims `out` from input dims `in`: 1 where the output keeps the
/// input's dim (aligned from the right), numbers elsewhere; nullopt when a dim is neither.
std::optional<std::vector<int64_t>> broadcastTarget(const std::vector<Dimension> &in,
                                                    const std::vector<Dimension> &out) {
  std::vector<int64_t> entries;
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t fromRight = out.size() - i;
    const Dimension *aligned = fromRight <= in.size() ? &in[in.size() - fromRight] : nullptr;
    if (aligned && *aligned == out[i]) entries.push_back(1);
    else if (out[i].isStatic()) entries.push_back(out[i].length());
    else return std::nullopt;
  }
  return entries;
}

} // namespace

Result<size_t> removeDeadNodes(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t removed = 0;
  // Readers before producers: walk from the last node back, so that a chain goes in one pass.
  for (uint32_t id = uint32_t(g.nodes.size()); id-- > 0;) {
    const Node &n = g.nodes[id];
    if (n.removed || n.isParameter() || n.outputs.empty()) continue;
    const OpDef *def = recordOf(ctx, n);
    if (def && def->traits.nondeterministic) continue; // kept as the model wrote it
    if (removeIfUnread(g, id)) ++removed;
  }
  return removed;
}

Result<size_t> removeNoOps(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t removed = 0;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    const OpDef *def = recordOf(ctx, n);
    if (!def || !def->passThrough || n.outputs.empty()) continue;
    PassThroughArgs args{n.attrs, {}, {}, n.opsetVersion};
    for (OutletId in : n.inputs) args.inputs.push_back(in.valid() && g.contains(in) ? &g.fact(in) : nullptr);
    for (const Outlet &o : n.outputs) args.outputs.push_back(&o.fact);
    auto through = def->passThrough(args);
    if (!through || *through >= n.inputs.size() || !n.inputs[*through].valid()) continue;
    // Only output 0 is passed on: the others (Dropout's mask) must be unread.
    bool othersUnread = true;
    for (uint32_t k = 1; k < n.outputs.size(); ++k) othersUnread = othersUnread && unread(g, {id, k});
    const OutletId in = n.inputs[*through];
    const Fact &inFact = g.fact(in), &outFact = n.outputs[0].fact;
    if (!othersUnread || inFact.type != outFact.type || !inFact.shape.equalEverywhere(outFact.shape)) continue;
    if (!stand(g, {id, 0}, in)) continue;
    (void)removeIfUnread(g, id);
    ++removed;
  }
  return removed;
}

Result<size_t> foldConstants(PassContext &ctx) {
  if (!ctx.evaluator) return size_t(0);
  Graph &g = ctx.graph;
  size_t folded = 0;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    const OpDef *def = recordOf(ctx, n);
    if (!def || def->traits.nondeterministic || def->traits.dataDependent || hasBodies(n) || n.outputs.empty())
      continue;
    std::vector<TensorPtr> inputs;
    int64_t inputBytes = 0;
    bool constant = true;
    for (size_t i = 0; i < n.inputs.size() && constant; ++i) {
      auto c = constantInput(g, n, i);
      constant = c.has_value();
      if (constant) {
        inputs.push_back(*c);
        if (*c) inputBytes += (*c)->byteSize().ok() ? *(*c)->byteSize() : 0;
      }
    }
    if (!constant) continue;
    // Within the budget, or no larger than what it reads (a ConstantOfShape of 1 GB stays).
    bool fits = true;
    for (const Outlet &o : n.outputs) {
      auto bytes = staticBytes(o.fact);
      fits = fits && bytes && (*bytes <= ctx.foldLimit || *bytes <= inputBytes);
    }
    if (!fits) continue;
    auto outputs = ctx.evaluator->evaluate(g, n, inputs);
    if (!outputs.ok() || outputs->size() != n.outputs.size()) continue;
    const std::vector<TensorPtr> &made = *outputs;
    if (replaceOutputsByConstants(g, id, [&](uint32_t k) {
          return made[k] && made[k]->type() == g.nodes[id].outputs[k].fact.type && holdsTensor(g, {id, k}, ctx.registry)
                     ? made[k]
                     : nullptr;
        }))
      ++folded;
  }
  return folded;
}

Result<size_t> foldShapeValues(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t folded = 0;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    const OpDef *def = recordOf(ctx, n);
    if (!def || hasBodies(n) || def->traits.nondeterministic) continue;
    // A sequence's or an optional's fact is its elements' (ops/sequence.cpp): a value known
    // there is each element's, not the output's, so only outputs that hold a tensor fold.
    if (replaceOutputsByConstants(g, id, [&](uint32_t k) {
          return holdsTensor(g, {id, k}, ctx.registry) ? tensorOfValue(g.nodes[id].outputs[k].fact) : nullptr;
        }))
      ++folded;
  }
  return folded;
}

Result<size_t> foldShapeInputs(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t folded = 0;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    const OpDef *def = recordOf(ctx, n);
    if (!def || def->traits.shapeInput == ShapeInput::None || n.inputs.size() < 2 || !n.inputs[1].valid()) continue;
    if (g.nodes[n.inputs[1].node].isConstant() || !g.contains(n.inputs[0])) continue;
    const Fact &x = g.fact(n.inputs[0]), &y = n.outputs[0].fact, &target = g.fact(n.inputs[1]);
    if (!x.shape.rankIsStatic() || !y.shape.rankIsStatic() || target.type == ElementType::Undefined) continue;
    const auto &in = x.shape.dims();
    const auto &out = y.shape.dims();
    std::optional<std::vector<int64_t>> entries = def->traits.shapeInput == ShapeInput::Reshape
                                                      ? reshapeTarget(in, out, n.attrs)
                                                      : broadcastTarget(in, out);
    if (!entries) continue;
    auto t = Tensor::fromInt64s(Shape{int64_t(entries->size())}, *entries, target.type);
    if (!t.ok()) continue;
    auto c = g.addConstant(freshName(g, g.outlet(n.inputs[1]).name + "_const"),
                           std::make_shared<const Tensor>(std::move(*t)));
    if (!c.ok()) continue;
    // The node's own fact must come out the same from the new target.
    const OutletId old = n.inputs[1];
    SF_TRY(g.setInput({id, 1}, *c));
    auto facts = inferNodeFacts(g, id, &ctx.registry);
    if (!facts.ok() || facts->empty() || !(*facts)[0].shape.equalEverywhere(y.shape) || (*facts)[0].type != y.type) {
      SF_TRY(g.setInput({id, 1}, old));
      (void)g.removeNode(c->node);
      continue;
    }
    ++folded;
  }
  return folded;
}

Result<size_t> mergeConstants(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t merged = 0;
  std::unordered_map<size_t, std::vector<OutletId>> byHash;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &n = g.nodes[id];
    if (n.removed || !n.isConstant() || unread(g, {id, 0})) continue;
    const Fact &f = n.outputs[0].fact;
    if (!f.constant || !f.constant->hasData()) continue;
    auto &same = byHash[hashOf(f)];
    OutletId keep;
    for (OutletId o : same)
      if (*g.fact(o).constant == *f.constant) keep = o;
    if (!keep.valid()) {
      same.push_back({id, 0});
      continue;
    }
    if (!stand(g, {id, 0}, keep)) continue;
    (void)removeIfUnread(g, id);
    ++merged;
  }
  return merged;
}

Result<size_t> mergeNodes(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t merged = 0;
  auto order = g.topologicalOrder();
  if (!order.ok()) return order.error();
  std::map<std::string, std::vector<uint32_t>> seen; // op, inputs -> nodes
  for (uint32_t id : *order) {
    const Node &n = g.nodes[id];
    const OpDef *def = recordOf(ctx, n);
    if (!def || def->traits.nondeterministic || hasBodies(n)) continue;
    std::string key = n.domain + "::" + n.opType + "#" + std::to_string(n.opsetVersion) + "(";
    for (OutletId in : n.inputs) key += in.valid() ? fmt::format("{}:{},", in.node, in.slot) : std::string("-,");
    key += ")" + std::to_string(n.outputs.size());
    uint32_t twin = kNoNode;
    for (uint32_t other : seen[key])
      if (!g.nodes[other].removed && sameAttributes(g.nodes[other].attrs, n.attrs)) twin = other;
    if (twin == kNoNode) {
      seen[key].push_back(id);
      continue;
    }
    bool all = true;
    for (uint32_t k = 0; k < n.outputs.size() && all; ++k) {
      if (unread(g, {id, k})) continue;
      if (g.fact({id, k}) != g.fact({twin, k})) all = false;
      else all = stand(g, {id, k}, {twin, k});
    }
    if (removeIfUnread(g, id)) ++merged;
  }
  return merged;
}

namespace {

/// The branch an If whose condition the facts know takes (null: not known).
const Graph *knownBranch(const PassContext &ctx, const Graph &g, const Node &n) {
  const OpDef *def = recordOf(ctx, n);
  if (!def || def->traits.bodies != BodyRuns::OneBranch || n.inputs.empty() || !g.contains(n.inputs[0])) return nullptr;
  auto cond = dimValues(g.fact(n.inputs[0]));
  if (!cond || cond->size() != 1 || !(*cond)[0].isStatic()) return nullptr;
  auto branch = n.attrs.getGraph((*cond)[0].length() != 0 ? "then_branch" : "else_branch");
  return branch.ok() && *branch && (*branch)->outputs.size() == n.outputs.size() ? branch->get() : nullptr;
}

/// Copies `body`'s nodes into `g` (its captured values read from `owner`'s inputs, its
/// constants and ops under names free in `g`); the outer outlet of each body outlet.
Result<std::map<OutletId, OutletId>> inlineBody(Graph &g, const Graph &body, const Node &owner) {
  std::map<OutletId, OutletId> outer;
  const std::vector<OutletId> ownerInputs(owner.inputs.begin(), owner.inputs.end());
  auto order = body.topologicalOrder();
  if (!order.ok()) return order.error();
  for (uint32_t id : *order) {
    const Node &n = body.nodes[id];
    if (n.isParameter()) {
      auto k = n.attrs.getInt("captured");
      if (!k.ok() || size_t(*k) >= ownerInputs.size()) return errorf("a branch input that is not captured");
      outer[{id, 0}] = ownerInputs[size_t(*k)];
      continue;
    }
    if (n.isConstant()) {
      SF_ASSIGN(OutletId c, g.addConstant(freshName(g, n.outputs[0].name), n.outputs[0].fact.constant));
      outer[{id, 0}] = c;
      continue;
    }
    std::vector<OutletId> inputs;
    for (OutletId in : n.inputs) inputs.push_back(in.valid() ? outer.at(in) : OutletId{});
    std::vector<std::string> names;
    for (const Outlet &o : n.outputs) names.push_back(o.name.empty() ? std::string() : freshName(g, o.name));
    SF_ASSIGN(uint32_t copy, g.addNode(n.opType, n.name, std::move(inputs), std::move(names), n.attrs));
    g.nodes[copy].domain = n.domain;
    g.nodes[copy].opsetVersion = n.opsetVersion;
    g.nodes[copy].kind = n.kind;
    for (uint32_t k = 0; k < n.outputs.size(); ++k) {
      g.nodes[copy].outputs[k].fact = n.outputs[k].fact;
      outer[{id, k}] = {copy, k};
    }
  }
  return outer;
}

} // namespace

Result<size_t> inlineKnownBranches(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t inlined = 0;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Graph *branch = knownBranch(ctx, g, g.nodes[id]);
    if (!branch) continue;
    // An output of the If that is a graph output must come from a node of the branch (it takes
    // the output's name), not straight from a value the branch reads.
    bool renamable = true;
    for (uint32_t k = 0; k < g.nodes[id].outputs.size(); ++k)
      if (isGraphOutput(g, {id, k}) && branch->nodes[branch->outputs[k].node].isParameter()) renamable = false;
    if (!renamable) continue;
    SF_ASSIGN(auto outer, inlineBody(g, *branch, g.nodes[id]));
    for (uint32_t k = 0; k < g.nodes[id].outputs.size(); ++k) {
      OutletId to = outer.at(branch->outputs[k]);
      if (!stand(g, {id, k}, to)) return errorf("{}: its output {} could not be replaced", g.nodeLabel(id), k);
    }
    (void)removeIfUnread(g, id);
    ++inlined;
  }
  return inlined;
}

std::vector<Pass> simplifyPasses() {
  return {{"inline-known-branches", inlineKnownBranches},
          {"fold-constants", foldConstants},   {"fold-shape-values", foldShapeValues},
          {"fold-shape-inputs", foldShapeInputs}, {"remove-no-ops", removeNoOps},
          {"merge-constants", mergeConstants}, {"merge-nodes", mergeNodes},
          {"remove-dead-nodes", removeDeadNodes}};
}

} // namespace sf::rewrite
