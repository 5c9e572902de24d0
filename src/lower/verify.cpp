// Checks of shape programs and buffer plans from the results alone (lower/verify.h).
#include "shapeflow/lower/verify.h"

#include "shapeflow/support/format.h"

#include <map>
#include <set>

namespace sf::lower {
namespace {

/// Problems found so far, reported together (at most 20).
struct Problems {
  std::vector<std::string> list;
  template <class... Args> void add(fmt::format_string<Args...> f, Args &&...args) {
    if (list.size() < 20) list.push_back(fmt::format(f, std::forward<Args>(args)...));
  }
  Result<void> result(const char *what) const {
    if (list.empty()) return success();
    std::string text = std::string(what) + ":";
    for (const std::string &p : list)
      text += "\n  " + p;
    return makeError(text);
  }
};

void checkGraph(const ShapeProgram &p, const LoweredGraph &lg, std::set<size_t> visible,
                Problems &out, int depth) {
  if (depth > 64) return;
  for (const auto &v : lg.inputShapes)
    if (v) visible.insert(*v);
  for (const LoweredOp &op : lg.ops) {
    for (const auto &v : op.inputShapes)
      if (v && !visible.count(*v))
        out.add("{}: op #{} reads {}, not made before it", lg.path.empty() ? "main" : lg.path,
                op.node, p.values[*v].name);
    std::set<size_t> inner = visible;
    for (size_t k = 0; k < op.outputShapes.size(); ++k)
      if (op.modes[k] == ShapeMode::Compute && op.outputShapes[k]) inner.insert(*op.outputShapes[k]);
    for (const auto &[name, body] : op.bodies)
      checkGraph(p, body, inner, out, depth + 1);
    for (size_t k = 0; k < op.outputShapes.size(); ++k) {
      const auto &v = op.outputShapes[k];
      if (op.modes[k] == ShapeMode::Static) {
        if (v) out.add("op #{} output {} is static but has a shape value", op.node, k);
        continue;
      }
      if (!v) {
        out.add("op #{} output {} has no shape value", op.node, k);
        continue;
      }
      if (op.modes[k] == ShapeMode::Reuse && !visible.count(*v))
        out.add("op #{} output {} reuses {}, not made before it", op.node, k, p.values[*v].name);
      visible.insert(*v);
    }
  }
  for (const auto &v : lg.outputShapes)
    if (v && !visible.count(*v)) out.add("a graph output's shape value {} is not made", p.values[*v].name);
}

} // namespace

Result<void> verifyShapes(const ShapeProgram &p) {
  std::optional<ExprScope> scope;
  if (p.main.graph) scope.emplace(p.main.graph->context);
  Problems out;
  // Where symbols are held: the first value defining each, and that value holds it.
  std::map<SymbolId, size_t> firstDef;
  for (size_t i = 0; i < p.values.size(); ++i)
    for (const auto &[sym, index] : p.values[i].defines) {
      firstDef.try_emplace(sym, i);
      const PartialShape &s = p.values[i].shape;
      if (!s.rankIsStatic() || index >= s.size() || !s[index].expr() ||
          s[index].expr()->kind != ExprKind::Sym || s[index].expr()->sym != sym)
        out.add("{} does not hold the symbol it defines at [{}]", p.values[i].name, index);
    }
  for (const auto &[sym, ref] : p.symbols) {
    auto it = firstDef.find(sym);
    if (it == firstDef.end() || it->second != ref.value)
      out.add("symbol {} is said to be in {}, which does not define it first",
              symbolInfo(sym).name.empty() ? "(anonymous)" : symbolInfo(sym).name,
              ref.value < p.values.size() ? p.values[ref.value].name : "?");
  }
  // A computed value reads only symbols held by values made before it, and names them in `from`.
  for (size_t i = 0; i < p.values.size(); ++i) {
    const ShapeValue &v = p.values[i];
    if (v.source != ShapeSource::Compute) continue;
    if (!v.shape.rankIsStatic()) {
      out.add("{} is computed but its rank is unknown", v.name);
      continue;
    }
    std::set<size_t> from(v.from.begin(), v.from.end());
    for (const Dimension &d : v.shape.dims()) {
      if (!d.expr()) {
        out.add("{} is computed but has a dim with no expression", v.name);
        continue;
      }
      for (SymbolId s : symbolsOf(d.expr())) {
        auto it = p.symbols.find(s);
        if (it == p.symbols.end() || it->second.value >= i)
          out.add("{} uses a symbol no earlier value holds", v.name);
        else if (!from.count(it->second.value))
          out.add("{} reads {} without naming it", v.name, p.values[it->second.value].name);
      }
    }
  }
  checkGraph(p, p.main, {}, out, 0);
  return out.result("the shape program is not consistent");
}

namespace {

void checkPlan(const BufferPlan &plan, Problems &out, int depth) {
  if (depth > 64) return;
  const std::string where = plan.path.empty() ? "main" : plan.path;
  size_t n = plan.buffers.size(), steps = plan.steps.size();
  std::vector<int> allocs(n, 0), frees(n, 0);
  std::vector<size_t> allocAt(n, 0), freeAt(n, 0);
  for (size_t i = 0; i < steps; ++i) {
    for (size_t b : plan.steps[i].allocs)
      if (b < n) ++allocs[b], allocAt[b] = i;
    for (size_t b : plan.steps[i].frees)
      if (b < n) ++frees[b], freeAt[b] = i;
  }
  auto root = [&](size_t b) { return plan.buffers[b].aliasOf.value_or(b); };
  for (size_t b = 0; b < n; ++b) {
    const Buffer &buf = plan.buffers[b];
    if (buf.aliasOf) {
      if (*buf.aliasOf >= n || plan.buffers[*buf.aliasOf].aliasOf)
        out.add("{}: {} is an alias of a buffer that is an alias", where, buf.name);
      if (buf.reuse == Reuse::None) out.add("{}: {} is an alias with no reason", where, buf.name);
    } else if (buf.reuse != Reuse::None) {
      out.add("{}: {} reuses memory but is not an alias", where, buf.name);
    }
    bool arenaRoot = !buf.aliasOf && buf.owner == Owner::Arena;
    if (arenaRoot && (allocs[b] != 1 || frees[b] != 1))
      out.add("{}: {} is allocated {} times and freed {} times", where, buf.name, allocs[b], frees[b]);
    if (!arenaRoot && (allocs[b] || frees[b]))
      out.add("{}: {} is not the arena's but is allocated or freed", where, buf.name);
    if (arenaRoot && allocs[b] == 1 && frees[b] == 1 && freeAt[b] < allocAt[b])
      out.add("{}: {} is freed before it is allocated", where, buf.name);
  }
  // Every access within its root's lifetime; nothing read before it is first written.
  std::vector<std::optional<size_t>> firstWrite(n);
  for (size_t i = 0; i < steps; ++i)
    for (size_t b : plan.steps[i].writes)
      if (b < n && !firstWrite[b]) firstWrite[b] = i;
  for (size_t i = 0; i < steps; ++i) {
    const Step &s = plan.steps[i];
    for (const std::vector<size_t> *list : {&s.reads, &s.writes})
      for (size_t b : *list) {
        if (b >= n) {
          out.add("{}: step {} uses buffer {}, which does not exist", where, i, b);
          continue;
        }
        size_t r = root(b);
        const Buffer &rb = plan.buffers[r];
        if (rb.owner != Owner::Arena) continue;
        if (allocs[r] == 1 && frees[r] == 1 && (i < allocAt[r] || i > freeAt[r]))
          out.add("{}: step {} uses {} outside its lifetime (steps {}..{})", where, i,
                  plan.buffers[b].name, allocAt[r], freeAt[r]);
      }
    for (size_t b : s.reads)
      if (b < n && plan.buffers[b].owner == Owner::Arena && (!firstWrite[b] || *firstWrite[b] > i))
        out.add("{}: step {} reads {} before anything writes it", where, i, plan.buffers[b].name);
  }
  // In place: the memory's earlier contents are not read after the write.
  for (size_t b = 0; b < n; ++b) {
    const Buffer &buf = plan.buffers[b];
    if (buf.reuse != Reuse::InPlace || !firstWrite[b]) continue;
    size_t k = *firstWrite[b];
    for (size_t m = 0; m < n; ++m) {
      if (m == b || root(m) != root(b) || !firstWrite[m] || *firstWrite[m] >= k) continue;
      for (size_t i = k + 1; i < steps; ++i)
        for (size_t r : plan.steps[i].reads)
          if (r == m)
            out.add("{}: {} is written in place at step {} over {}, which step {} reads", where,
                    buf.name, k, plan.buffers[m].name, i);
    }
  }
  for (const Step &s : plan.steps)
    for (const auto &[name, body] : s.bodies)
      checkPlan(body, out, depth + 1);
}

} // namespace

Result<void> verifyBuffers(const BufferPlan &plan) {
  Problems out;
  checkPlan(plan, out, 0);
  return out.result("the buffer plan is not valid");
}

} // namespace sf::lower
