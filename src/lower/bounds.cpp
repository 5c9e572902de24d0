// Upper bounds for every tensor, and what is missing for them (lower/bounds.h).
#include "shapeflow/lower/bounds.h"

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
    for (OutletId in : g.inputs)
      add(g, g.outlet(in), g.nodes[in.node], path);
    for (uint32_t id : ids) {
      const Node &n = g.nodes[id];
      if (n.isParameter() || !isReported(n)) continue;
      for (const Outlet &o : n.outputs)
        add(g, o, n, path);
      for (const auto &[attr, value] : n.attrs)
        for (const GraphPtr &b : bodiesOf(n, attr, value))
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

/// Whether an expression is bounded above once the symbols in `bounded` are.
class BoundChecker {
public:
  bool bounded(Expr e, const std::set<SymbolId> &set) {
    if (e->bounds.hi != kInf) return true;
    auto r = substitute(e, [&](SymbolId s) -> Expr {
      if (!set.count(s)) return nullptr;
      return symbol(twin(s));
    });
    return r.ok() && (*r)->bounds.hi != kInf;
  }

private:
  /// A copy of `s` bounded above (the bound's size does not matter, only that there is one).
  SymbolId twin(SymbolId s) {
    auto it = twins_.find(s);
    if (it != twins_.end()) return it->second;
    const SymbolInfo &info = symbolInfo(s);
    Interval r = info.range;
    int64_t hi = std::max<int64_t>(r.lo, 0) + 1024;
    SymbolId t = newAnonymousSymbol({r.lo, hi});
    twins_[s] = t;
    return t;
  }
  std::map<SymbolId, SymbolId> twins_;
};

/// A dim without an upper bound: its expression (null when it has none).
struct Unbounded {
  size_t tensor;
  Expr expr;
};

} // namespace

Result<BoundsReport> computeBounds(const Graph &g) {
  ExprScope scope = g.enter();
  BoundsReport out;
  Collector c{out, {}, {}, {}};
  c.graph(g, "", 0);

  std::vector<Unbounded> dims;
  std::vector<bool> tensorUnbounded(out.tensors.size(), false);
  for (size_t i = 0; i < out.tensors.size(); ++i) {
    const TensorBound &t = out.tensors[i];
    if (!t.fact->shape.rankIsStatic()) continue;
    for (const Dimension &d : t.fact->shape.dims())
      if (!d.hasUpperBound()) {
        dims.push_back({i, d.expr()});
        tensorUnbounded[i] = true;
      }
  }
  out.unbounded = size_t(std::count(tensorUnbounded.begin(), tensorUnbounded.end(), true));
  if (dims.empty()) return out;

  std::set<SymbolId> inputs = inputSymbols(g);
  // Candidates: every named symbol without an upper bound in an unbounded dim.
  std::set<SymbolId> candidates;
  for (const Unbounded &u : dims)
    if (u.expr)
      for (SymbolId s : symbolsOf(u.expr))
        if (!symbolInfo(s).name.empty() && symbolInfo(s).range.hi == kInf) candidates.insert(s);

  BoundChecker check;
  // Dims that bounding every candidate bounds; the others need what no symbol gives.
  std::vector<size_t> coverable;
  std::vector<size_t> hopeless;
  for (size_t k = 0; k < dims.size(); ++k)
    (dims[k].expr && check.bounded(dims[k].expr, candidates) ? coverable : hopeless).push_back(k);

  // A minimal set: drop each candidate (the least used first) whose removal leaves every
  // coverable dim bounded.
  auto uses = [&](SymbolId s) {
    std::set<size_t> ts;
    for (size_t k : coverable)
      for (SymbolId t : symbolsOf(dims[k].expr))
        if (t == s) ts.insert(dims[k].tensor);
    return ts;
  };
  std::vector<SymbolId> order(candidates.begin(), candidates.end());
  std::stable_sort(order.begin(), order.end(), [&](SymbolId a, SymbolId b) {
    // Input symbols are kept in preference to data-dependent ones, then the most used.
    bool ia = inputs.count(a), ib = inputs.count(b);
    if (ia != ib) return !ia;
    return uses(a).size() < uses(b).size();
  });
  std::set<SymbolId> chosen = candidates;
  for (SymbolId s : order) {
    std::set<SymbolId> without = chosen;
    without.erase(s);
    bool still = true;
    for (size_t k : coverable) {
      bool mentions = false;
      for (SymbolId t : symbolsOf(dims[k].expr))
        mentions |= t == s;
      if (mentions && !check.bounded(dims[k].expr, without)) {
        still = false;
        break;
      }
    }
    if (still) chosen = std::move(without);
  }

  // Each chosen symbol with the tensors it bounds that the others do not.
  for (SymbolId s : chosen) {
    std::set<SymbolId> others = chosen;
    others.erase(s);
    MissingBound m;
    m.symbol = symbolInfo(s).name;
    m.input = inputs.count(s) > 0;
    std::set<size_t> ts;
    for (size_t k : coverable) {
      bool mentions = false;
      for (SymbolId t : symbolsOf(dims[k].expr))
        mentions |= t == s;
      if (mentions && !check.bounded(dims[k].expr, others)) ts.insert(dims[k].tensor);
    }
    if (ts.empty()) continue;
    m.tensors = ts.size();
    m.example = out.tensors[*ts.begin()].name;
    if (!m.input) {
      // The first tensor holding it came out of the node that made it.
      for (size_t i = 0; i < out.tensors.size(); ++i) {
        const PartialShape &sh = out.tensors[i].fact->shape;
        bool has = false;
        if (sh.rankIsStatic())
          for (const Dimension &d : sh.dims())
            if (d.expr())
              for (SymbolId t : symbolsOf(d.expr()))
                has |= t == s;
        if (has) {
          m.node = c.producers[i]->name;
          m.op = opName(*c.producers[i]);
          break;
        }
      }
    }
    out.missing.push_back(std::move(m));
  }
  // Sizes no input symbol bounds, grouped by where they start: a tensor whose producer reads
  // such a tensor has its origin; otherwise its producer is the origin (the node that made the
  // size: a data-dependent op, an op whose output size inference does not know).
  std::vector<bool> isHopeless(out.tensors.size(), false);
  for (size_t k : hopeless)
    isHopeless[dims[k].tensor] = true;
  std::vector<const Node *> origin(out.tensors.size(), nullptr);
  for (size_t i = 0; i < out.tensors.size(); ++i) {
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
  std::map<const Node *, std::set<size_t>> byNode;
  std::vector<const Node *> nodeOrder;
  for (size_t i = 0; i < out.tensors.size(); ++i) {
    if (!isHopeless[i]) continue;
    if (!byNode.count(origin[i])) nodeOrder.push_back(origin[i]);
    byNode[origin[i]].insert(i);
  }
  for (const Node *n : nodeOrder) {
    MissingBound m;
    m.input = false;
    m.node = n->name;
    m.op = n->isParameter() ? "input" : opName(*n);
    m.tensors = byNode[n].size();
    m.example = out.tensors[*byNode[n].begin()].name;
    out.missing.push_back(std::move(m));
  }
  std::stable_sort(out.missing.begin(), out.missing.end(),
                   [](const MissingBound &a, const MissingBound &b) {
                     if (a.input != b.input) return a.input;
                     return a.tensors > b.tensors;
                   });
  return out;
}

} // namespace sf::lower
