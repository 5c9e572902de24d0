// OpRegistry and the InferContext helpers shared by every rule.
#include "shapeflow/ops/op.h"

#include "shapeflow/ir/graph.h"

#include <algorithm>

namespace sf {

Result<Dimension> InferContext::mergeDims(const Dimension &a, const Dimension &b) {
  auto m = Dimension::merge(a, b);
  if (!m) return errorf("dimensions {} and {} differ", a, b);
  SF_TRY(symbols().equate(a, b));
  return symbols().resolve(*m);
}

Result<PartialShape> InferContext::mergeShapes(const PartialShape &a, const PartialShape &b) {
  if (!a.rankIsStatic()) return b;
  if (!b.rankIsStatic()) return a;
  if (a.size() != b.size()) return errorf("ranks differ: {} vs {}", a, b);
  std::vector<Dimension> out;
  for (size_t i = 0; i < a.size(); ++i) {
    auto d = mergeDims(a[i], b[i]);
    if (!d.ok()) return errorf("shapes {} and {} differ at axis {}", a, b, i);
    out.push_back(*d);
  }
  return PartialShape(std::move(out));
}

Result<PartialShape> InferContext::broadcast(const PartialShape &a, const PartialShape &b,
                                             BroadcastSpec spec) {
  SF_ASSIGN(PartialShape s, broadcastShapes(a, b, spec, &symbols()));
  return symbols().resolve(std::move(s));
}

Dimension InferContext::freshDim(std::string_view stem, Interval range) {
  if (range.isPoint()) return Dimension(range.lo);
  std::string s(stem);
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "d_" + s;
  return Dimension::symbol(symbols().freshNamed(s, range));
}

void OpRegistry::add(OpDef def) {
  std::string key = def.domain + "::" + def.name;
  ops_[key] = std::move(def);
}

void OpRegistry::addAll(std::initializer_list<std::string_view> names, const OpDef &def) {
  for (auto n : names) {
    OpDef d = def;
    d.name = std::string(n);
    add(std::move(d));
  }
}

const OpDef *OpRegistry::find(std::string_view domain, std::string_view name) const {
  // One key buffer per thread: a lookup per node allocates nothing once it has grown.
  thread_local std::string key;
  key.assign(canonicalDomain(domain));
  key += "::";
  key += name;
  auto it = ops_.find(key);
  return it == ops_.end() ? nullptr : &it->second;
}

OpDef *OpRegistry::findMutable(std::string_view domain, std::string_view name) {
  return const_cast<OpDef *>(static_cast<const OpRegistry *>(this)->find(domain, name));
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto &[k, v] : ops_) out.push_back(v.domain.empty() ? v.name : v.domain + "::" + v.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<const OpDef *> OpRegistry::all() const {
  std::vector<const OpDef *> out;
  out.reserve(ops_.size());
  for (const auto &[k, v] : ops_)
    out.push_back(&v);
  return out;
}

namespace {

/// The body an If (its then-branch) or a Loop gives output `slot` from, and that body output's
/// index (a Loop's body outputs its condition first).
std::optional<std::pair<const Graph *, size_t>> bodyOutputFor(const Node &n, const OpDef &def, uint32_t slot) {
  if (def.traits.bodies != BodyRuns::OneBranch && def.traits.bodies != BodyRuns::TripCount) return std::nullopt;
  const size_t offset = def.traits.bodies == BodyRuns::TripCount ? 1 : 0;
  for (const auto &[name, a] : n.attrs)
    if (const auto *body = a.get<GraphPtr>(); body && *body && slot + offset < (*body)->outputs.size())
      return std::pair<const Graph *, size_t>{body->get(), slot + offset};
  return std::nullopt;
}

} // namespace

bool holdsTensor(const Graph &graph, OutletId o, const OpRegistry &registry) {
  const Graph *g = &graph;
  for (int depth = 0; depth < 256 && g->contains(o); ++depth) {
    const Node &n = g->nodes[o.node];
    if (n.kind != NodeKind::Op) return true;
    const OpDef *def = registry.find(n.domain, n.opType);
    if (!def) return false;
    switch (def->traits.outputKind) {
    case OutputKind::Tensor: return true;
    case OutputKind::AsInput:
      if (n.inputs.empty() || !n.inputs[0].valid()) return false;
      o = n.inputs[0];
      continue;
    case OutputKind::Unknown:
      if (auto body = bodyOutputFor(n, *def, o.slot)) {
        g = body->first;
        o = g->outputs[body->second];
        continue;
      }
      return false;
    default: return false;
    }
  }
  return false;
}

const OpRegistry &defaultRegistry() {
  static const OpRegistry *r = [] {
    auto *reg = new OpRegistry();
    registerAllOps(*reg);
    return reg;
  }();
  return *r;
}

} // namespace sf
