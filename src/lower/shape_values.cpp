// Shapes as explicit values (lower/shape_values.h).
#include "shapeflow/lower/shape_values.h"

#include "shapeflow/ir/text.h"
#include "shapeflow/ops/op.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace sf::lower {

const char *toString(ShapeSource s) {
  switch (s) {
  case ShapeSource::Actual:
    return "actual";
  case ShapeSource::Compute:
    return "compute";
  case ShapeSource::Result:
    return "result";
  }
  return "?";
}

const char *toString(ShapeMode m) {
  switch (m) {
  case ShapeMode::Static:
    return "static";
  case ShapeMode::Reuse:
    return "reuse";
  case ShapeMode::Compute:
    return "compute";
  case ShapeMode::Result:
    return "result";
  }
  return "?";
}

std::string valueName(const std::string &tensor) { return "%" + printName(tensor); }
std::string shapeValueName(const std::string &tensor) { return valueName(tensor) + ".shape"; }

std::vector<GraphPtr> bodiesOf(const Graph &g, const Node &n, const std::string &attr,
                               const Attribute &value) {
  std::vector<GraphPtr> graphs;
  // A dead branch: If's condition has a known value.
  if (n.opType == "If" && n.domain.empty() && !n.inputs.empty() && g.contains(n.inputs[0])) {
    const Fact &cond = g.fact(n.inputs[0]);
    if (cond.value && cond.value->size() == 1 && (*cond.value)[0].isStatic()) {
      bool taken = (*cond.value)[0].length() != 0;
      if (attr == (taken ? "else_branch" : "then_branch")) return graphs;
    }
  }
  if (value.kind() == AttributeKind::Graph) {
    if (auto one = n.attrs.getGraph(attr); one.ok() && *one) graphs.push_back(*one);
  } else if (value.kind() == AttributeKind::Graphs) {
    if (auto many = n.attrs.getGraphs(attr); many.ok())
      for (const GraphPtr &b : *many)
        if (b) graphs.push_back(b);
  }
  return graphs;
}

namespace {

/// The expressions of a shape's dims, when every dim has one (static dims are constants): what
/// makes two shapes the same value.
std::optional<std::vector<Expr>> keyOf(const PartialShape &s) {
  if (!s.rankIsStatic()) return std::nullopt;
  std::vector<Expr> key;
  key.reserve(s.size());
  for (const Dimension &d : s.dims()) {
    if (!d.expr()) return std::nullopt;
    key.push_back(d.expr());
  }
  return key;
}

struct KeyHash {
  size_t operator()(const std::vector<Expr> &k) const {
    size_t h = k.size();
    for (Expr e : k)
      h = h * 1000003u ^ std::hash<const void *>()(e);
    return h;
  }
};

/// What a graph's code can see: the shape values of its tensors and enclosing tensors, the
/// values by shape, and the symbols held somewhere. Copied into a body's scope (a body sees its
/// parent's values; its own are not visible after it).
struct Scope {
  std::unordered_map<const Fact *, size_t> ofTensor;
  std::unordered_map<std::vector<Expr>, size_t, KeyHash> byShape;
  std::map<SymbolId, SymbolRef> symbols;
};

class Lowerer {
public:
  explicit Lowerer(ShapeProgram &p) : p_(p) {}

  Result<LoweredGraph> graph(const Graph &g, const std::string &path, Scope scope, int depth,
                             const std::vector<std::optional<size_t>> &captured = {},
                             const std::vector<uint32_t> *given = nullptr) {
    if (depth > 64) return makeError("subgraphs nested deeper than 64");
    LoweredGraph lg;
    lg.graph = &g;
    lg.path = path;
    // Inputs: a captured value has its enclosing tensor's shape value; a formal input (or a
    // captured one without) reads its actual shape.
    for (OutletId in : g.inputs) {
      const Node &param = g.nodes[in.node];
      const Outlet &o = g.outlet(in);
      std::optional<size_t> v;
      if (!o.fact.shape.isStatic()) {
        if (param.isCaptured()) {
          auto k = param.attrs.getInt("captured");
          if (k.ok() && size_t(*k) < captured.size()) v = captured[size_t(*k)];
        }
        if (!v) v = fromShape(scope, o.fact.shape);
        if (!v) v = make(scope, o, path, ShapeSource::Actual, {});
        scope.ofTensor[&o.fact] = *v;
      }
      lg.inputShapes.push_back(v);
    }
    std::vector<uint32_t> order;
    if (given) {
      SF_TRY(checkOrder(g, *given));
      order = *given;
    } else {
      SF_ASSIGN(order, g.topologicalOrder());
    }
    for (uint32_t id : order) {
      const Node &n = g.nodes[id];
      if (n.removed || n.isParameter() || n.isConstant()) continue;
      SF_ASSIGN(LoweredOp op, node(g, n, path, scope, depth));
      lg.ops.push_back(std::move(op));
    }
    for (OutletId out : g.outputs) {
      const Fact &f = g.fact(out);
      auto it = scope.ofTensor.find(&f);
      lg.outputShapes.push_back(f.shape.isStatic() || it == scope.ofTensor.end()
                                    ? std::nullopt
                                    : std::optional<size_t>(it->second));
    }
    return lg;
  }

private:
  /// `order` names every live node once, each after the producers of its inputs.
  static Result<void> checkOrder(const Graph &g, const std::vector<uint32_t> &order) {
    std::vector<bool> done(g.nodes.size(), false);
    size_t live = 0;
    for (const Node &n : g.nodes)
      live += !n.removed;
    for (uint32_t id : order) {
      if (id >= g.nodes.size() || g.nodes[id].removed || done[id])
        return errorf("the order names node {} twice or a node the graph does not have", id);
      for (OutletId in : g.nodes[id].inputs)
        if (g.contains(in) && !done[in.node])
          return errorf("the order runs {} before the producer of its input", g.nodeLabel(id));
      done[id] = true;
    }
    if (order.size() != live) return makeError("the order does not name every node");
    return success();
  }

  Result<LoweredOp> node(const Graph &g, const Node &n, const std::string &path, Scope &scope,
                         int depth) {
    LoweredOp op;
    op.node = n.id;
    for (OutletId in : n.inputs) {
      std::optional<size_t> v;
      if (g.contains(in) && !g.fact(in).shape.isStatic()) {
        auto it = scope.ofTensor.find(&g.fact(in));
        if (it != scope.ofTensor.end()) v = it->second;
      }
      op.inputShapes.push_back(v);
    }
    // Bodies run inside the op: lowered in a scope that sees this one, before the outputs (the
    // op's results come out of them).
    for (const auto &[attr, value] : n.attrs) {
      std::vector<GraphPtr> graphs = bodiesOf(g, n, attr, value);
      for (size_t i = 0; i < graphs.size(); ++i) {
        std::string name = graphs.size() == 1 ? attr : attr + "[" + std::to_string(i) + "]";
        std::string inner = (path.empty() ? "" : path + "/") + n.name + "/" + name;
        SF_ASSIGN(LoweredGraph body, graph(*graphs[i], inner, scope, depth + 1, op.inputShapes));
        op.bodies.push_back({name, std::move(body)});
      }
    }
    const OpDef *def = defaultRegistry().find(n.domain, n.opType);
    bool sameShape = def && def->traits.sameShape;
    for (const Outlet &o : n.outputs) {
      // An op whose output has its input's shape (elementwise, activations) reuses the input's
      // value, whether or not its dims are known (a layer that keeps its input's shape).
      if (sameShape && &o == &n.outputs[0] && !op.inputShapes.empty() && op.inputShapes[0] &&
          !o.fact.shape.isStatic() && o.fact.shape.rank() == g.fact(n.inputs[0]).shape.rank()) {
        op.outputShapes.push_back(op.inputShapes[0]);
        op.modes.push_back(ShapeMode::Reuse);
        scope.ofTensor[&o.fact] = *op.inputShapes[0];
        continue;
      }
      if (o.fact.shape.isStatic()) {
        op.outputShapes.push_back(std::nullopt);
        op.modes.push_back(ShapeMode::Static);
        continue;
      }
      if (auto v = fromShape(scope, o.fact.shape)) {
        op.outputShapes.push_back(v);
        op.modes.push_back(ShapeMode::Reuse);
        scope.ofTensor[&o.fact] = *v;
        continue;
      }
      std::vector<size_t> from;
      bool computable = computableFrom(scope, o.fact.shape, from);
      size_t v = make(scope, o, path, computable ? ShapeSource::Compute : ShapeSource::Result,
                      std::move(from));
      op.outputShapes.push_back(v);
      op.modes.push_back(computable ? ShapeMode::Compute : ShapeMode::Result);
      scope.ofTensor[&o.fact] = v;
    }
    return op;
  }

  /// A value already holding this shape.
  std::optional<size_t> fromShape(const Scope &scope, const PartialShape &s) {
    auto key = keyOf(s);
    if (!key) return std::nullopt;
    auto it = scope.byShape.find(*key);
    if (it == scope.byShape.end()) return std::nullopt;
    return it->second;
  }

  /// Whether every dim is an expression of symbols some value holds; the values it reads.
  bool computableFrom(const Scope &scope, const PartialShape &s, std::vector<size_t> &from) {
    if (!s.rankIsStatic()) return false;
    std::set<size_t> values;
    for (const Dimension &d : s.dims()) {
      if (!d.expr()) return false;
      for (SymbolId sym : symbolsOf(d.expr())) {
        auto it = scope.symbols.find(sym);
        if (it == scope.symbols.end()) return false;
        values.insert(it->second.value);
      }
    }
    from.assign(values.begin(), values.end());
    return true;
  }

  size_t make(Scope &scope, const Outlet &o, const std::string &path, ShapeSource source,
              std::vector<size_t> from) {
    size_t id = p_.values.size();
    ShapeValue v;
    v.tensor = o.name;
    v.name = shapeValueName(o.name.empty() ? "#" + std::to_string(id) : o.name);
    v.path = path;
    v.shape = o.fact.shape;
    v.source = source;
    v.from = std::move(from);
    // An actual shape or a kernel's result holds its dims: a dim that is a bare symbol is held
    // here from now on (the first time).
    if (source != ShapeSource::Compute && v.shape.rankIsStatic()) {
      for (size_t i = 0; i < v.shape.size(); ++i) {
        Expr e = v.shape[i].expr();
        if (!e || e->kind != ExprKind::Sym) continue;
        if (scope.symbols.count(e->sym)) continue;
        scope.symbols[e->sym] = {id, i};
        p_.symbols.try_emplace(e->sym, SymbolRef{id, i});
        v.defines.push_back({e->sym, i});
      }
    }
    if (auto key = keyOf(v.shape)) scope.byShape.try_emplace(*key, id);
    p_.values.push_back(std::move(v));
    return id;
  }

  ShapeProgram &p_;
};

} // namespace

Result<ShapeProgram> lowerShapes(const Graph &g, const std::vector<uint32_t> *order) {
  ExprScope scope = g.enter();
  ShapeProgram p;
  Lowerer l(p);
  SF_ASSIGN(p.main, l.graph(g, "", Scope{}, 0, {}, order));
  return p;
}

} // namespace sf::lower
