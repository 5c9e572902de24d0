// Graph editing (keeping successors and the name index consistent) and deep copies.
#include "shapeflow/ir/graph.h"

#include <algorithm>

namespace sf {

bool Graph::contains(OutletId o) const {
  return o.valid() && o.node < nodes.size() && !nodes[o.node].removed &&
         o.slot < nodes[o.node].outputs.size();
}

std::string Graph::nodeLabel(uint32_t id) const {
  if (id >= nodes.size()) return "#" + std::to_string(id) + " (missing)";
  const Node &n = nodes[id];
  std::string who = n.name.empty() ? "#" + std::to_string(id) : "'" + n.name + "'";
  return who + " (" + (n.domain.empty() ? n.opType : n.domain + "." + n.opType) + ")";
}

size_t Graph::liveNodeCount() const {
  size_t n = 0;
  for (const Node &node : nodes) n += !node.removed;
  return n;
}

size_t Graph::formalInputCount() const {
  size_t n = 0;
  for (OutletId o : inputs)
    if (!contains(o) || !nodes[o.node].isCaptured()) ++n;
  return n;
}

// ---------------------------------------------------------------------------- name index
void Graph::reindex() const {
  index_.clear();
  index_.reserve(nodes.size());
  for (const Node &n : nodes) {
    if (n.removed) continue;
    for (uint32_t s = 0; s < n.outputs.size(); ++s)
      if (!n.outputs[s].name.empty()) index_.emplace(n.outputs[s].name, OutletId{n.id, s});
  }
  indexedNodes_ = nodes.size();
}

void Graph::reserve(size_t count) { nodes.reserve(count); }

void Graph::ensureIndex() const {
  if (indexedNodes_ == nodes.size()) return;
  if (indexedNodes_ > nodes.size()) return reindex();
  // Nodes appended without indexing (appendNode): index the tail only.
  for (size_t i = indexedNodes_; i < nodes.size(); ++i) {
    const Node &n = nodes[i];
    if (n.removed) continue;
    for (uint32_t s = 0; s < n.outputs.size(); ++s)
      if (!n.outputs[s].name.empty()) index_.emplace(n.outputs[s].name, OutletId{n.id, s});
  }
  indexedNodes_ = nodes.size();
}

void Graph::indexName(const std::string &name, OutletId o) const {
  if (!name.empty()) index_[name] = o;
  indexedNodes_ = nodes.size();
}

std::optional<OutletId> Graph::findOutlet(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  ensureIndex();
  auto lookup = [&]() -> std::optional<OutletId> {
    auto it = index_.find(name);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  };
  auto o = lookup();
  if (o && (!contains(*o) || outlet(*o).name != name)) {
    reindex(); // the graph was edited directly
    o = lookup();
  }
  return o;
}

Result<void> Graph::checkNewName(const std::string &newName) const {
  if (newName.empty()) return success();
  if (auto o = findOutlet(newName))
    return makeError("name '" + newName + "' is already used by an output of " +
                     nodeLabel(o->node));
  return success();
}

Result<void> Graph::checkSource(OutletId from) const {
  if (!from.valid() || contains(from)) return success();
  return makeError("outlet " + std::to_string(from.node) + ":" + std::to_string(from.slot) +
                   " does not exist");
}

void Graph::unlink(OutletId from, InletId in) {
  if (!contains(from)) return;
  auto &succ = outlet(from).successors;
  auto it = std::find(succ.begin(), succ.end(), in);
  if (it != succ.end()) succ.erase(it);
}

// ---------------------------------------------------------------------------- editing
Result<OutletId> Graph::addParameter(std::string paramName, Fact f) {
  SF_ASSIGN(uint32_t id, addNode("Parameter", paramName, {}, std::vector<std::string>{paramName}));
  nodes[id].kind = NodeKind::Parameter;
  nodes[id].outputs[0].fact = std::move(f);
  OutletId o{id, 0};
  inputs.push_back(o);
  return o;
}

Result<OutletId> Graph::addCapturedParameter(std::string paramName, Fact f, uint32_t ownerInput) {
  SF_ASSIGN(OutletId o, addParameter(std::move(paramName), std::move(f)));
  nodes[o.node].attrs.set("captured", int64_t(ownerInput));
  return o;
}

Result<OutletId> Graph::addConstant(std::string constName, TensorPtr tensor) {
  SF_TRY(checkNewName(constName));
  return appendConstant(std::move(constName), std::move(tensor));
}

Result<OutletId> Graph::appendConstant(std::string constName, TensorPtr tensor) {
  if (!tensor) return makeError("constant '" + constName + "' has no tensor");
  Fact f = Fact::fromTensor(tensor);
  std::string_view names[] = {constName};
  SF_ASSIGN(uint32_t id, appendNode("Constant", constName, names, Attributes{{"value", std::move(tensor)}}));
  nodes[id].kind = NodeKind::Constant;
  nodes[id].outputs[0].fact = std::move(f);
  return OutletId{id, 0};
}

Result<OutletId> Graph::addConstant(std::string constName, Tensor tensor) {
  return addConstant(std::move(constName), std::make_shared<const Tensor>(std::move(tensor)));
}

Result<uint32_t> Graph::addNode(std::string opType, std::string nodeName,
                                std::vector<OutletId> ins, size_t nOutputs, Attributes attrs) {
  std::vector<std::string> names(nOutputs);
  if (!nodeName.empty()) {
    if (nOutputs == 1) names[0] = nodeName;
    else
      for (size_t i = 0; i < nOutputs; ++i) names[i] = nodeName + "." + std::to_string(i);
  }
  return addNode(std::move(opType), std::move(nodeName), std::move(ins), std::move(names),
                 std::move(attrs));
}

Result<uint32_t> Graph::addNode(std::string opType, std::string nodeName,
                                std::vector<OutletId> ins, std::vector<std::string> outputNames,
                                Attributes attrs) {
  if (nodes.size() >= size_t(kNoNode)) return makeError("too many nodes");
  for (size_t i = 0; i < ins.size(); ++i) {
    auto r = checkSource(ins[i]);
    if (!r.ok()) return makeError("input " + std::to_string(i) + " of new node '" + nodeName +
                                  "': " + r.error().message);
  }
  for (size_t i = 0; i < outputNames.size(); ++i) {
    SF_TRY(checkNewName(outputNames[i]));
    for (size_t j = 0; j < i; ++j)
      if (!outputNames[i].empty() && outputNames[i] == outputNames[j])
        return makeError("node '" + nodeName + "' names two outputs '" + outputNames[i] + "'");
  }
  ensureIndex();
  Node n;
  n.id = uint32_t(nodes.size());
  n.name = std::move(nodeName);
  n.opType = std::move(opType);
  n.attrs = std::move(attrs);
  n.inputs.assign(ins.begin(), ins.end());
  for (auto &outName : outputNames)
    n.outputs.push_back(Outlet{std::move(outName), Fact{}, {}, nullptr});
  for (uint32_t s = 0; s < n.inputs.size(); ++s)
    if (n.inputs[s].valid()) outlet(n.inputs[s]).successors.push_back(InletId{n.id, s});
  nodes.push_back(std::move(n));
  const Node &added = nodes.back();
  for (uint32_t s = 0; s < added.outputs.size(); ++s)
    indexName(added.outputs[s].name, OutletId{added.id, s});
  indexedNodes_ = nodes.size();
  return added.id;
}

Result<uint32_t> Graph::appendNode(std::string opType, std::string nodeName,
                                   std::span<const std::string_view> outputNames, Attributes attrs) {
  if (nodes.size() >= size_t(kNoNode)) return makeError("too many nodes");
  Node &n = nodes.emplace_back();
  n.id = uint32_t(nodes.size() - 1);
  n.name = std::move(nodeName);
  n.opType = std::move(opType);
  n.attrs = std::move(attrs);
  n.outputs.reserve(outputNames.size());
  for (std::string_view outName : outputNames)
    n.outputs.push_back(Outlet{std::string(outName), Fact{}, {}, nullptr});
  return n.id; // indexed on the next lookup (ensureIndex)
}

Result<void> Graph::setInput(InletId in, OutletId from) {
  if (in.node >= nodes.size() || nodes[in.node].removed)
    return makeError("node " + std::to_string(in.node) + " does not exist");
  Node &n = nodes[in.node];
  if (in.slot >= n.inputs.size())
    return makeError(nodeLabel(in.node) + " has no input " + std::to_string(in.slot));
  SF_TRY(checkSource(from));
  unlink(n.inputs[in.slot], in);
  n.inputs[in.slot] = from;
  if (from.valid()) outlet(from).successors.push_back(in);
  return success();
}

Result<uint32_t> Graph::addInput(uint32_t node, OutletId from) {
  if (node >= nodes.size() || nodes[node].removed)
    return makeError("node " + std::to_string(node) + " does not exist");
  SF_TRY(checkSource(from));
  uint32_t slot = uint32_t(nodes[node].inputs.size());
  nodes[node].inputs.push_back(from);
  if (from.valid()) outlet(from).successors.push_back(InletId{node, slot});
  return slot;
}

Result<void> Graph::replaceUses(OutletId from, OutletId to) {
  if (!contains(from)) return makeError("replaceUses: the outlet to replace does not exist");
  if (!contains(to)) return makeError("replaceUses: the replacement outlet does not exist");
  if (from == to) return success();
  SmallVec<InletId, 2> moved = std::move(outlet(from).successors);
  outlet(from).successors.clear();
  for (InletId in : moved) nodes[in.node].inputs[in.slot] = to;
  outlet(to).successors.append(moved.begin(), moved.end());
  for (OutletId &o : outputs)
    if (o == from) o = to;
  return success();
}

Result<void> Graph::removeNode(uint32_t id) {
  if (id >= nodes.size() || nodes[id].removed)
    return makeError("node " + std::to_string(id) + " does not exist");
  Node &n = nodes[id];
  for (uint32_t s = 0; s < n.outputs.size(); ++s) {
    if (!n.outputs[s].successors.empty())
      return makeError("cannot remove " + nodeLabel(id) + ": its output " + std::to_string(s) +
                       " is read by " + nodeLabel(n.outputs[s].successors[0].node));
    for (OutletId o : outputs)
      if (o == OutletId{id, s})
        return makeError("cannot remove " + nodeLabel(id) + ": its output " + std::to_string(s) +
                         " is a graph output");
  }
  for (OutletId o : inputs)
    if (o.node == id) return makeError("cannot remove " + nodeLabel(id) + ": it is a graph input");
  ensureIndex();
  for (uint32_t s = 0; s < n.inputs.size(); ++s) unlink(n.inputs[s], InletId{id, s});
  for (const Outlet &o : n.outputs) {
    auto it = index_.find(o.name);
    if (it != index_.end() && it->second.node == id) index_.erase(it);
  }
  Node tomb;
  tomb.id = id;
  tomb.removed = true;
  n = std::move(tomb);
  return success();
}

Result<void> Graph::renameOutlet(OutletId o, std::string newName) {
  if (!contains(o)) return makeError("renameOutlet: the outlet does not exist");
  if (outlet(o).name == newName) return success();
  SF_TRY(checkNewName(newName));
  ensureIndex();
  auto it = index_.find(outlet(o).name);
  if (it != index_.end() && it->second == o) index_.erase(it);
  outlet(o).name = std::move(newName);
  indexName(outlet(o).name, o);
  return success();
}

std::vector<uint32_t> Graph::compact() {
  std::vector<uint32_t> remap(nodes.size(), kNoNode);
  uint32_t next = 0;
  for (const Node &n : nodes)
    if (!n.removed) remap[n.id] = next++;
  auto fix = [&](OutletId &o) {
    if (o.valid()) o.node = o.node < remap.size() ? remap[o.node] : kNoNode;
  };
  StableVec<Node> kept;
  kept.reserve(next);
  for (Node &n : nodes) {
    if (n.removed) continue;
    n.id = remap[n.id];
    for (OutletId &o : n.inputs) fix(o);
    for (Outlet &out : n.outputs)
      for (InletId &in : out.successors) in.node = remap[in.node];
    kept.push_back(std::move(n));
  }
  nodes = std::move(kept);
  for (OutletId &o : inputs) fix(o);
  for (OutletId &o : outputs) fix(o);
  reindex();
  return remap;
}

Graph Graph::clone() const {
  Graph g = *this;
  for (Node &n : g.nodes) {
    for (auto &[attrName, attr] : n.attrs) {
      if (GraphPtr *sub = attr.get<GraphPtr>()) {
        if (*sub) *sub = std::make_shared<Graph>((*sub)->clone());
      } else if (auto *subs = attr.get<std::vector<GraphPtr>>()) {
        for (GraphPtr &s : *subs)
          if (s) s = std::make_shared<Graph>(s->clone());
      }
    }
  }
  return g;
}

} // namespace sf
