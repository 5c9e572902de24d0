// Upper bounds for every tensor, and what is missing for them (lower/bounds.h).
#include "shapeflow/lower/bounds.h"

#include "shapeflow/infer/infer.h"
#include "shapeflow/lower/shape_values.h"
#include "shapeflow/support/checked.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace sf::lower {
namespace {

/// A graph input, or an output of a node that computes it (not an initializer).
bool isReported(const Node &n) {
  if (n.removed) return false;
  return !(n.isConstant() && n.attrs.has("initializer"));
}

std::optional<int64_t> bytesAt(const Fact &f, const std::vector<std::optional<int64_t>> &upper) {
  size_t size = f.type == ElementType::Undefined ? 0 : elementSize(f.type);
  if (size == 0) return std::nullopt;
  int64_t n = int64_t(size);
  for (const auto &u : upper) {
    if (!u) return std::nullopt;
    auto m = checkedMul(n, *u);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

struct Collector {
  BoundsReport &out;
  std::vector<const Node *> producers; // per tensor: its node
  std::vector<const Graph *> graphs;   // per tensor: the graph it is in
  std::unordered_map<const Fact *, size_t> index;

  void graph(const Graph &g, const std::string &path, int depth) {
    if (depth > 64) return;
    auto order = g.topologicalOrder();
    std::vector<uint32_t> ids;
    if (order.ok()) {
      ids = *order;
    } else {
      for (const Node &n : g.nodes)
        ids.push_back(n.id);
    }
    // Graph inputs first, then node outputs in execution order, a body's after its owner.
    // A captured value is its enclosing tensor, listed there.
    for (OutletId in : g.inputs)
      if (!g.nodes[in.node].isCaptured()) add(g, g.outlet(in), g.nodes[in.node], path);
    for (uint32_t id : ids) {
      const Node &n = g.nodes[id];
      if (n.isParameter() || !isReported(n)) continue;
      for (const Outlet &o : n.outputs)
        add(g, o, n, path);
      for (const auto &[attr, value] : n.attrs)
        for (const GraphPtr &b : bodiesOf(g, n, attr, value))
          graph(*b, (path.empty() ? "" : path + "/") + n.name + "/" + attr, depth + 1);
    }
  }

  void add(const Graph &g, const Outlet &o, const Node &n, const std::string &path) {
    TensorBound t;
    t.name = o.name.empty() ? n.name + "#" + std::to_string(&o - n.outputs.data()) : o.name;
    t.path = path;
    t.fact = &o.fact;
    if (o.fact.shape.rankIsStatic()) {
      std::vector<std::optional<int64_t>> upper;
      for (const Dimension &d : o.fact.shape.dims())
        upper.push_back(d.hasUpperBound() ? std::optional<int64_t>(d.maxLength()) : std::nullopt);
      t.upperBytes = bytesAt(o.fact, upper);
      t.upper = std::move(upper);
    }
    index[&o.fact] = out.tensors.size();
    out.tensors.push_back(std::move(t));
    producers.push_back(&n);
    graphs.push_back(&g);
  }
};

std::string opName(const Node &n) { return n.domain.empty() ? n.opType : n.domain + "." + n.opType; }

/// Named symbols of the main graph's inputs: what `--dim` bounds.
std::set<SymbolId> inputSymbols(const Graph &g) {
  std::set<SymbolId> out;
  for (OutletId in : g.inputs) {
    const PartialShape &s = g.fact(in).shape;
    if (!s.rankIsStatic()) continue;
    for (const Dimension &d : s.dims())
      if (d.expr())
        for (SymbolId sym : symbolsOf(d.expr()))
          out.insert(sym);
  }
  return out;
}

/// Which tensors (in the collector's order) have no upper bound in `g`.
std::vector<bool> unboundedTensors(const BoundsReport &r) {
  std::vector<bool> out(r.tensors.size(), false);
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    const TensorBound &t = r.tensors[i];
    if (!t.upper) {
      out[i] = true;
      continue;
    }
    for (const auto &u : *t.upper)
      out[i] = out[i] || !u;
  }
  return out;
}

/// The graph inferred again with the named symbols bounded (each to a finite range above its
/// lower end: what the bound is does not matter, only that there is one), and which of its
/// tensors then have no upper bound: what bounding those symbols would bound, through every
/// rule (a NonZero's count is at most its input's size once that size is bounded).
Result<std::vector<bool>> unboundedWith(const Graph &g, const std::set<std::string> &bounded,
                                        size_t expected) {
  Graph copy = g.clone();
  ExprScope scope = copy.enter();
  InferOptions options;
  for (const std::string &name : bounded) {
    auto id = copy.symbols.find(name);
    if (!id) continue;
    Interval r = symbolInfo(*id).range;
    options.dims.push_back({name, {std::max<int64_t>(r.lo, 0), std::max<int64_t>(r.lo, 0) + 1024}});
  }
  SF_TRY(applyInputs(copy, options));
  Diagnostics diags;
  inferGraph(copy, diags, options);
  BoundsReport again;
  Collector c{again, {}, {}, {}};
  c.graph(copy, "", 0);
  if (again.tensors.size() != expected)
    return makeError("the graph inferred again has another number of tensors");
  return unboundedTensors(again);
}

/// Input symbols without an upper bound, by name: the candidates.
std::map<std::string, SymbolId> unboundedNamed(const std::set<SymbolId> &inputs) {
  std::map<std::string, SymbolId> idOf;
  for (SymbolId s : inputs)
    if (!symbolInfo(s).name.empty() && symbolInfo(s).range.hi == kInf)
      idOf[symbolInfo(s).name] = s;
  return idOf;
}

/// Whether a dim of the tensor's shape mentions the symbol.
bool mentionsSymbol(const BoundsReport &out, size_t tensor, SymbolId s) {
  const PartialShape &sh = out.tensors[tensor].fact->shape;
  if (!sh.rankIsStatic()) return false;
  for (const Dimension &d : sh.dims())
    if (d.expr())
      for (SymbolId t : symbolsOf(d.expr()))
        if (t == s) return true;
  return false;
}

/// A minimal set: drop each candidate (the least used first) whose removal leaves every
/// coverable tensor bounded.
Result<std::set<std::string>> minimalBoundingSet(const Graph &g, const BoundsReport &out,
                                                 const std::set<std::string> &candidates,
                                                 const std::map<std::string, SymbolId> &idOf,
                                                 const std::vector<size_t> &coverable) {
  auto uses = [&](const std::string &name) {
    size_t n = 0;
    for (size_t i : coverable)
      n += mentionsSymbol(out, i, idOf.at(name));
    return n;
  };
  std::vector<std::string> order(candidates.begin(), candidates.end());
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string &a, const std::string &b) { return uses(a) < uses(b); });
  std::set<std::string> chosen = candidates;
  for (const std::string &name : order) {
    std::set<std::string> without = chosen;
    without.erase(name);
    SF_ASSIGN(std::vector<bool> still, unboundedWith(g, without, out.tensors.size()));
    bool ok = true;
    for (size_t i : coverable)
      ok = ok && !still[i];
    if (ok) chosen = std::move(without);
  }
  return chosen;
}

/// Each chosen symbol with the tensors it bounds that the others do not.
Result<void> addInputMissing(const Graph &g, BoundsReport &out, const std::set<std::string> &chosen,
                             const std::vector<size_t> &coverable) {
  for (const std::string &name : chosen) {
    std::set<std::string> others = chosen;
    others.erase(name);
    SF_ASSIGN(std::vector<bool> without, unboundedWith(g, others, out.tensors.size()));
    MissingBound m;
    m.symbol = name;
    m.input = true;
    for (size_t i : coverable)
      if (without[i]) {
        if (m.tensors++ == 0) m.example = out.tensors[i].name;
      }
    if (m.tensors) out.missing.push_back(std::move(m));
  }
  return success();
}

/// Per hopeless tensor, where its size starts: a tensor whose producer reads such a tensor has
/// its origin; otherwise its producer is the origin.
std::vector<const Node *> hopelessOrigins(const Collector &c, const std::vector<bool> &isHopeless) {
  std::vector<const Node *> origin(isHopeless.size(), nullptr);
  for (size_t i = 0; i < isHopeless.size(); ++i) {
    if (!isHopeless[i]) continue;
    const Node *n = c.producers[i];
    origin[i] = n;
    for (OutletId in : n->inputs) {
      if (!c.graphs[i]->contains(in)) continue;
      auto it = c.index.find(&c.graphs[i]->fact(in));
      if (it != c.index.end() && it->second < i && isHopeless[it->second]) {
        origin[i] = origin[it->second];
        break;
      }
    }
  }
  return origin;
}

/// The missing bound of the sizes node `n` starts (its tensors `tensors`).
MissingBound missingAtNode(const BoundsReport &out, const Node *n, const std::set<size_t> &tensors,
                           const std::set<SymbolId> &inputs) {
  MissingBound m;
  m.input = false;
  m.node = n->name;
  m.op = n->isParameter() ? "input" : opName(*n);
  m.tensors = tensors.size();
  // The named sizes it makes that nothing bounds (P and Q of an op declared to make them).
  for (size_t i : tensors) {
    const PartialShape &sh = out.tensors[i].fact->shape;
    if (!sh.rankIsStatic()) continue;
    for (const Dimension &d : sh.dims()) {
      if (d.hasUpperBound() || !d.expr()) continue;
      for (SymbolId sym : symbolsOf(d.expr())) {
        const SymbolInfo &info = symbolInfo(sym);
        if (info.name.empty() || info.range.hi != kInf || inputs.count(sym)) continue;
        if (std::find(m.symbols.begin(), m.symbols.end(), info.name) == m.symbols.end())
          m.symbols.push_back(info.name);
      }
    }
  }
  if (!m.symbols.empty()) m.symbol = m.symbols.front();
  m.example = out.tensors[*tensors.begin()].name;
  return m;
}

/// Sizes no input symbol bounds, grouped by where they start: a tensor whose producer reads
/// such a tensor has its origin; otherwise its producer is the origin (the node that made the
/// size: a data-dependent op, an op whose output size inference does not know).
void addDataDependentMissing(BoundsReport &out, const Collector &c, const std::vector<size_t> &hopeless,
                             const std::set<SymbolId> &inputs) {
  std::vector<bool> isHopeless(out.tensors.size(), false);
  for (size_t i : hopeless)
    isHopeless[i] = true;
  std::vector<const Node *> origin = hopelessOrigins(c, isHopeless);
  std::map<const Node *, std::set<size_t>> byNode;
  std::vector<const Node *> nodeOrder;
  for (size_t i = 0; i < out.tensors.size(); ++i) {
    if (!isHopeless[i]) continue;
    if (!byNode.count(origin[i])) nodeOrder.push_back(origin[i]);
    byNode[origin[i]].insert(i);
  }
  for (const Node *n : nodeOrder)
    out.missing.push_back(missingAtNode(out, n, byNode[n], inputs));
}

} // namespace

Result<BoundsReport> computeBounds(const Graph &g) {
  ExprScope scope = g.enter();
  BoundsReport out;
  Collector c{out, {}, {}, {}};
  c.graph(g, "", 0);

  std::vector<bool> tensorUnbounded = unboundedTensors(out);
  out.unbounded = size_t(std::count(tensorUnbounded.begin(), tensorUnbounded.end(), true));
  if (out.unbounded == 0) return out;

  // Input symbols without an upper bound: the candidates. With every one bounded, the tensors
  // still unbounded need what no input bound gives (sizes that depend on the data).
  std::set<SymbolId> inputs = inputSymbols(g);
  std::map<std::string, SymbolId> idOf = unboundedNamed(inputs);
  std::set<std::string> candidates;
  for (const auto &[name, id] : idOf) candidates.insert(name);
  std::vector<bool> before = unboundedTensors(out);
  std::vector<bool> after = before;
  if (!candidates.empty()) {
    SF_ASSIGN(after, unboundedWith(g, candidates, out.tensors.size()));
  }
  std::vector<size_t> coverable, hopeless;
  for (size_t i = 0; i < before.size(); ++i)
    if (before[i]) (after[i] ? hopeless : coverable).push_back(i);

  SF_ASSIGN(std::set<std::string> chosen, minimalBoundingSet(g, out, candidates, idOf, coverable));
  SF_TRY(addInputMissing(g, out, chosen, coverable));
  addDataDependentMissing(out, c, hopeless, inputs);
  std::stable_sort(out.missing.begin(), out.missing.end(),
                   [](const MissingBound &a, const MissingBound &b) {
                     if (a.input != b.input) return a.input;
                     return a.tensors > b.tensors;
                   });
  return out;
}

} // namespace sf::lower
