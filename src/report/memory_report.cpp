// A model's memory in parts, at bindings, and the largest size that fits (memory_report.h).
#include "shapeflow/report/memory_report.h"

#include "shapeflow/cost/stats.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/report.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace sf {
namespace {

bool isRuntimeInput(const Graph &g, OutletId o) {
  if (!o.valid()) return false;
  const Node &n = g.nodes[o.node];
  if (!n.isParameter() || n.isCaptured()) return false;
  const Fact &f = n.outputs[o.slot].fact;
  return !(f.constant && f.constant->hasData());
}

/// The inputs of `n` whose elements its output `slot` holds, moved or copied but not computed:
/// the data inputs of ops that only move elements, and an attention op's past cache for its
/// present one.
std::vector<size_t> movedInputs(const Node &n, size_t slot) {
  if (n.kind != NodeKind::Op) return {};
  static const std::set<std::string, std::less<>> kAll = {"Concat", "Identity"};
  static const std::set<std::string, std::less<>> kFirst = {
      "Cast", "CastLike", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Gather", "Slice",
      "Split", "Expand", "ScatterND", "ScatterElements", "TensorScatter", "Tile", "Pad"};
  if (n.domain.empty() && kAll.count(n.opType)) {
    std::vector<size_t> all(n.inputs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }
  if (n.domain.empty() && kFirst.count(n.opType)) return {0};
  struct Carry {
    const char *domain, *op;
    size_t output, input;
  };
  static const Carry kCarries[] = {
      {"", "Attention", 1, 4},
      {"", "Attention", 2, 5},
      {"com.microsoft", "Attention", 1, 4},
      {"com.microsoft", "MultiHeadAttention", 1, 6},
      {"com.microsoft", "MultiHeadAttention", 2, 7},
      {"com.microsoft", "GroupQueryAttention", 1, 3},
      {"com.microsoft", "GroupQueryAttention", 2, 4},
  };
  for (const Carry &c : kCarries)
    if (n.domain == c.domain && n.opType == c.op && slot == c.output && c.input < n.inputs.size()) return {c.input};
  return {};
}

/// The runtime inputs whose elements reach `out` only moved or copied, in the order of the
/// producers' inputs.
std::vector<OutletId> movedFrom(const Graph &g, OutletId out) {
  std::vector<OutletId> found, stack{out};
  std::set<OutletId> seen{out};
  while (!stack.empty()) {
    OutletId o = stack.back();
    stack.pop_back();
    if (isRuntimeInput(g, o)) {
      found.push_back(o);
      continue;
    }
    const Node &n = g.nodes[o.node];
    // Depth first, the first input first: a cache's past precedes the new positions in the
    // concatenation that makes its present.
    auto moved = movedInputs(n, o.slot);
    for (auto i = moved.rbegin(); i != moved.rend(); ++i)
      if (*i < n.inputs.size() && n.inputs[*i].valid() && seen.insert(n.inputs[*i]).second)
        stack.push_back(n.inputs[*i]);
  }
  return found;
}

/// How `out` holds `in`: along which axis it grew (the one axis where their dims differ; a
/// window that drops old positions too), or in place (the same shape); none when the shapes do
/// not say.
std::optional<std::pair<int64_t, bool>> carriedAlong(const Fact &in, const Fact &out) {
  if (in.type != out.type || !in.shape.rankIsStatic() || !out.shape.rankIsStatic() ||
      in.shape.size() != out.shape.size() || in.shape.size() == 0)
    return std::nullopt;
  std::optional<int64_t> axis;
  for (size_t i = 0; i < in.shape.size(); ++i) {
    if (in.shape[i] == out.shape[i]) continue;
    if (axis) return std::nullopt;
    axis = int64_t(i);
  }
  if (axis) return std::pair{*axis, true};
  return std::pair{int64_t(in.shape.size()) - 2, false};
}

int64_t storedBytes(const Fact &f) {
  if (!f.shape.isStatic()) return 0;
  int64_t n = 1;
  for (const Dimension &d : f.shape.dims()) n = d.length() > 0 && n > (int64_t(1) << 50) / d.length() ? n : n * d.length();
  if (isInt4(f.type) || f.type == ElementType::F4E2M1) return (n + 1) / 2;
  return n * int64_t(elementSize(f.type));
}

Result<Dimension> sumOf(const std::vector<Dimension> &dims) {
  DimensionSum sum;
  for (const Dimension &d : dims) SF_TRY(sum.add(d));
  return sum.value();
}


/// `given` with the symbols the contract ties to it (a solved symbol's solution; a mask length
/// that must equal `past + seq`), then checked against the contract.
Result<Binding> completeBinding(const Contract &c, Binding given, const std::vector<std::pair<std::string, Expr>> &ties) {
  Binding b = std::move(given);
  // The user's ties first, then the contract's, until neither adds a size.
  for (size_t round = 0; round <= ties.size(); ++round) {
    size_t before = b.size();
    for (const auto &[name, e] : ties)
      if (!b.count(name))
        if (auto v = evaluateByName(e, b)) b[name] = *v;
    b = c.tied(std::move(b));
    if (b.size() == before) break;
  }
  std::vector<std::string> missing;
  for (const Contract::Symbol &s : c.symbols)
    if (!b.count(s.name)) missing.push_back(s.name);
  if (!missing.empty())
    return errorf("no size is given for {} (give each with --at SYM=V)", fmt::join(missing, ", "));
  std::vector<std::pair<std::string, int64_t>> list(b.begin(), b.end());
  if (auto broken = c.check(list)) return errorf("the sizes break the model's contract: {}", *broken);
  return b;
}

std::string bindingText(const Binding &b) {
  std::vector<std::string> parts;
  for (const auto &[k, v] : b) parts.push_back(k + "=" + std::to_string(v));
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// The graph's runtime inputs and its outputs, the cache pairs' tensors left out: the io part.
std::vector<OutletId> ioOutlets(const Graph &g, const std::vector<CachePair> &cache) {
  std::set<std::string> cacheTensors;
  for (const CachePair &p : cache) cacheTensors.insert(p.input), cacheTensors.insert(p.output);
  std::vector<OutletId> out;
  for (const auto *list : {&g.inputs, &g.outputs})
    for (OutletId o : *list)
      if ((isRuntimeInput(g, o) || list == &g.outputs) && !cacheTensors.count(g.outlet(o).name)) out.push_back(o);
  return out;
}

/// The parts of a graph inferred at concrete sizes (every fact static).
Result<MemoryRow> concreteRow(const Graph &g, const Binding &at, int64_t align) {
  ExprScope scope = g.enter();
  MemoryRow row;
  row.at = at;
  row.weights = weightBytes(g);
  const std::vector<CachePair> cache = findCachePairs(g);
  for (const CachePair &p : cache) {
    if (!p.bytesIn.isStatic() || !p.bytesOut.isStatic())
      return errorf("at {}: the cache {} -> {} is not of a known size", bindingText(at), p.input, p.output);
    row.kvCache += p.bytesIn.length() + p.bytesOut.length();
  }
  for (OutletId o : ioOutlets(g, cache)) {
    Dimension b = bytesOf(g.fact(o));
    if (!b.isStatic()) return errorf("at {}: '{}' is {}, not of a known size", bindingText(at), g.outlet(o).name, g.fact(o));
    row.io += b.length();
  }
  lower::PlanOptions po;
  po.align = align;
  po.callerOwnedIO = true;
  SF_ASSIGN(lower::MemoryPlan plan, lower::planMemory(g, po));
  auto peak = lower::PlanValues(plan, at)(plan.peak);
  if (!peak) return errorf("at {}: the plan's peak is not a number", bindingText(at));
  row.activations = *peak;
  row.total = row.weights + row.kvCache + row.activations + row.io;
  return row;
}

/// Each part at bindings; the activations from the static plan placed at the binding itself
/// (what a deployment at those sizes plans), each binding evaluated once. Where the symbolic
/// parts do not give a number, the model inferred again at the binding's sizes does.
class RowEvaluator {
public:
  RowEvaluator(const Graph &g, const MemoryReport &r, const MemoryOptions &o) : g_(g), r_(r), options_(o) {}

  Result<MemoryRow> at(const Binding &at) {
    if (auto it = rows_.find(at); it != rows_.end()) return it->second;
    auto row = symbolic(at);
    if (!row.ok() && options_.inferAt) {
      SF_ASSIGN(Graph concrete, options_.inferAt(at));
      row = concreteRow(concrete, at, options_.align);
    }
    if (!row.ok()) return row.takeError();
    return rows_[at] = *row;
  }

private:
  Result<MemoryRow> symbolic(const Binding &at) {
    MemoryRow row;
    row.at = at;
    row.weights = r_.weights;
    auto kv = evaluateByName(r_.kvCache, at), io = evaluateByName(r_.io, at);
    if (!kv || !io) return errorf("at {}: the {} does not evaluate", bindingText(at), !kv ? "KV cache" : "inputs and outputs");
    lower::PlanOptions po;
    po.align = options_.align;
    po.callerOwnedIO = true;
    po.reference = at;
    auto plan = lower::planMemory(g_, po);
    if (!plan.ok()) return errorf("at {}: the memory plan: {}", bindingText(at), plan.error().message);
    if (plan->boundedOffsets > 0 && options_.inferAt)
      return errorf("at {}: the plan bounds offsets over the whole domain", bindingText(at));
    auto v = lower::PlanValues(*plan, at)(plan->peak);
    if (!v) return errorf("at {}: the plan's peak does not evaluate", bindingText(at));
    row.kvCache = *kv, row.io = *io, row.activations = *v;
    row.total = row.weights + row.kvCache + row.activations + row.io;
    return row;
  }

  const Graph &g_;
  const MemoryReport &r_;
  const MemoryOptions &options_;
  std::map<Binding, MemoryRow> rows_;
};

/// A part of the memory at sizes of one symbol, the others as given; why the last size that
/// gave none did not.
class PartProbe {
public:
  PartProbe(RowEvaluator &rows, const Contract &c, const Binding &base, const MemoryOptions &o, const MemoryFit &fit)
      : rows_(rows), c_(c), base_(base), o_(o), fit_(fit) {}

  std::optional<int64_t> operator()(int64_t v) {
    Binding b = base_;
    b[fit_.symbol] = v;
    auto full = completeBinding(c_, b, o_.ties);
    if (!full.ok()) {
      lastWhy = full.error().message;
      return std::nullopt;
    }
    auto row = rows_.at(*full);
    if (!row.ok()) {
      lastWhy = row.error().message;
      return std::nullopt;
    }
    return row->part(fit_.part);
  }

  std::string lastWhy;

private:
  RowEvaluator &rows_;
  const Contract &c_;
  const Binding &base_;
  const MemoryOptions &o_;
  const MemoryFit &fit_;
};

/// The last size that fits (`good`) and the first past the budget or refused by the model
/// (`bad`, -1 when none up to `hi`; `badWhy` says why the model refused it).
struct FitBracket {
  int64_t good, bad;
  std::string badWhy;
};

/// Doubling steps to the first size past the budget (or that the model refuses), then
/// bisection between the last that fits and it.
FitBracket bracketBudget(PartProbe &partAt, int64_t lo, int64_t hi, int64_t budget) {
  int64_t good = lo, bad = -1;
  std::string badWhy;
  for (int64_t step = 1; good < hi;) {
    int64_t v = std::min(hi, good + step);
    auto p = partAt(v);
    if (!p || *p > budget) {
      bad = v, badWhy = p ? "" : partAt.lastWhy;
      break;
    }
    good = v;
    step = step > (int64_t(1) << 40) ? step : step * 2;
  }
  while (bad >= 0 && bad - good > 1) {
    int64_t mid = good + (bad - good) / 2;
    auto p = partAt(mid);
    if (!p || *p > budget) bad = mid, badWhy = p ? "" : partAt.lastWhy;
    else good = mid;
  }
  return {good, bad, badWhy};
}

/// The search takes the part to grow with the symbol: checked at sizes up to the answer.
bool growsUpTo(PartProbe &partAt, int64_t lo, int64_t good) {
  bool grows = true;
  std::optional<int64_t> prev;
  for (int k = 0; k <= 16 && grows; ++k) {
    int64_t v = lo + (good - lo) * k / 16;
    auto p = partAt(v);
    if (p && prev && *p < *prev) grows = false;
    if (p) prev = p;
  }
  return grows;
}

/// The largest value of `symbol` whose part is within the budget, the others as given.
Result<MemoryFit> fitSymbol(RowEvaluator &rows, const Contract &c, const Binding &given, const MemoryOptions &o) {
  MemoryFit fit{*o.fitSymbol, o.budget, o.fitPart, std::nullopt, ""};
  const Contract::Symbol *sym = nullptr;
  for (const Contract::Symbol &s : c.symbols)
    if (s.name == fit.symbol) sym = &s;
  if (!sym) return errorf("--for {}: not a size of the model's inputs", fit.symbol);
  if (sym->solved) return errorf("--for {}: the model ties it to other sizes ({} == {})", fit.symbol, sym->name, sym->equals);
  Binding base = given;
  base.erase(fit.symbol);
  PartProbe partAt(rows, c, base, o, fit);
  const int64_t lo = sym->range.lo, hi = std::min<int64_t>(sym->range.hi, int64_t(1) << 40);
  auto first = partAt(lo);
  if (!first) {
    fit.why = fmt::format("at {} = {} (its smallest size): {}", fit.symbol, lo, partAt.lastWhy);
    return fit;
  }
  if (*first > fit.budget) {
    fit.why = fmt::format("even at {} = {} (its smallest size) the {} is {}", fit.symbol, lo, toString(fit.part),
                          bytesIEC(*first));
    return fit;
  }
  const auto [good, bad, badWhy] = bracketBudget(partAt, lo, hi, fit.budget);
  fit.max = good;
  bool grows = growsUpTo(partAt, lo, good);
  std::string growth = grows ? "" : fmt::format("; the {} does not grow with {} everywhere below it: a smaller "
                                                "size may fit where a larger one does not", toString(fit.part), fit.symbol);
  if (bad < 0) {
    fit.why = hi == sym->range.hi ? fmt::format("the model admits {} up to {}, which fits", fit.symbol, hi)
                                  : fmt::format("unbounded: the {} stays within the budget up to {} = {}",
                                                toString(fit.part), fit.symbol, hi);
    if (hi != sym->range.hi) fit.max.reset();
  } else if (!badWhy.empty()) {
    fit.why = fmt::format("{} = {} is the largest the model admits here ({} = {}: {})", fit.symbol, good,
                          fit.symbol, bad, badWhy);
  } else {
    int64_t in = *partAt(good), out = *partAt(bad);
    fit.why = fmt::format("{} B ({}) at {} = {}, {} B ({}) at {}", in, bytesIEC(in), fit.symbol, good, out,
                          bytesIEC(out), bad);
  }
  fit.why += growth;
  return fit;
}

/// One of the report's parts printed with its names.
std::string shortExpr(const MemoryReport &r, const Dimension &d) {
  if (!d.isStatic() && !d.expr()) return "no expression over every size (each row planned at its sizes)";
  return r.names.text(d);
}

/// The derived sizes (`_o3 = max(...)`) the plan's peak names, and the ones they name, each
/// `name = expression`; a note instead where there are many or they are long.
std::vector<std::string> derivedLines(const lower::MemoryPlan &plan) {
  // The derived sizes the peak names, directly or through others, in definition order.
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < plan.derived.size(); ++i) index[plan.derived[i].first] = i;
  std::set<size_t> used;
  std::vector<Expr> pending;
  if (plan.peak.expr()) pending.push_back(plan.peak.expr());
  while (!pending.empty()) {
    Expr e = pending.back();
    pending.pop_back();
    for (SymbolId s : symbolsOf(e))
      if (auto it = index.find(symbolInfo(s).name); it != index.end() && used.insert(it->second).second)
        if (Expr next = plan.derived[it->second].second.expr()) pending.push_back(next);
  }
  std::vector<std::string> order, lines;
  size_t length = 0;
  for (size_t i : definitionOrder(plan)) {
    if (!used.count(i)) continue;
    order.push_back(plan.derived[i].first);
    lines.push_back(plan.derived[i].first + " = " + toString(plan.derived[i].second));
    length += lines.back().size();
  }
  if (lines.size() > 8 || length > 600)
    return {fmt::format("with {} derived sizes ({}): --json lists them under activations.derived", order.size(),
                        fmt::join(order.begin(), order.begin() + std::min<size_t>(order.size(), 6), ", "))};
  std::sort(lines.begin(), lines.end());
  for (std::string &l : lines) l = "where " + l;
  return lines;
}

} // namespace

const char *toString(MemoryPart p) {
  switch (p) {
  case MemoryPart::Weights: return "weights";
  case MemoryPart::KvCache: return "kv_cache";
  case MemoryPart::Activations: return "activations";
  case MemoryPart::Io: return "io";
  case MemoryPart::Total: return "total";
  }
  return "?";
}

std::optional<MemoryPart> memoryPartNamed(const std::string &name) {
  for (MemoryPart p : {MemoryPart::Weights, MemoryPart::KvCache, MemoryPart::Activations, MemoryPart::Io,
                       MemoryPart::Total})
    if (name == toString(p)) return p;
  return std::nullopt;
}

int64_t MemoryRow::part(MemoryPart p) const {
  switch (p) {
  case MemoryPart::Weights: return weights;
  case MemoryPart::KvCache: return kvCache;
  case MemoryPart::Activations: return activations;
  case MemoryPart::Io: return io;
  case MemoryPart::Total: return total;
  }
  return total;
}

std::vector<CachePair> findCachePairs(const Graph &g) {
  std::vector<CachePair> pairs;
  std::set<std::string> outputs;
  for (OutletId out : g.outputs) {
    if (!out.valid() || !outputs.insert(g.outlet(out).name).second || isRuntimeInput(g, out)) continue;
    const Fact &fo = g.fact(out);
    for (OutletId in : movedFrom(g, out)) {
      const Fact &fi = g.fact(in);
      auto along = carriedAlong(fi, fo);
      if (!along) continue;
      CachePair p;
      p.input = g.outlet(in).name;
      p.output = g.outlet(out).name;
      p.axis = along->first;
      p.grows = along->second;
      p.bytesIn = bytesOf(fi);
      p.bytesOut = bytesOf(fo);
      pairs.push_back(std::move(p));
      break;
    }
  }
  return pairs;
}

int64_t weightBytes(const Graph &g) {
  int64_t total = 0;
  for (const Node &n : g.nodes) {
    if (n.removed) continue;
    bool constant = n.isConstant() || (n.isParameter() && !n.isCaptured() && !n.outputs.empty() &&
                                       n.outputs[0].fact.constant && n.outputs[0].fact.constant->hasData());
    if (!constant) continue;
    for (const Outlet &o : n.outputs) total += storedBytes(o.fact);
  }
  return total;
}

Result<MemoryReport> memoryReport(const Graph &g, const Contract &contract, const std::string &model,
                                  const MemoryOptions &options) {
  ExprScope scope = g.enter();
  MemoryReport r;
  r.context = g.context;
  r.model = model;
  for (const Contract::Symbol &s : contract.symbols) r.symbols.push_back(s.name);
  r.weights = weightBytes(g);
  r.cache = findCachePairs(g);
  std::vector<Dimension> kv, io;
  for (const CachePair &p : r.cache) kv.push_back(p.bytesIn), kv.push_back(p.bytesOut);
  for (OutletId o : ioOutlets(g, r.cache)) io.push_back(bytesOf(g.fact(o)));
  SF_ASSIGN(r.kvCache, sumOf(kv));
  SF_ASSIGN(r.io, sumOf(io));
  // The rows, each completed with the sizes the contract ties to the given ones and the rule of
  // every report for the others (no --at: one row at the rule's sizes alone).
  std::set<std::string> userTied;
  for (const auto &[name, e] : options.ties) userTied.insert(name);
  std::vector<Binding> rows;
  std::vector<std::string> notes;
  const std::vector<Binding> given = options.at.empty() ? std::vector<Binding>{Binding{}} : options.at;
  for (const Binding &b : given) {
    ShownAt shown = shownAt(contract, b, userTied);
    auto full = completeBinding(contract, shown.at, options.ties);
    if (!full.ok() && options.at.empty()) break; // the rule's sizes break the contract: no row
    if (!full.ok()) return errorf("--at {}: {}", bindingText(b), full.error().message);
    rows.push_back(*full);
    notes.push_back(shown.upper.empty() && shown.smallest.empty() ? std::string() : shown.text());
  }
  // The plan: placed at the largest size of each symbol over the rows (else its upper bound);
  // valid at every binding.
  lower::PlanOptions po;
  po.align = options.align;
  po.callerOwnedIO = true;
  for (const Binding &b : rows)
    for (const auto &[k, v] : b) po.reference[k] = std::max(po.reference.count(k) ? po.reference[k] : v, v);
  auto plan = lower::planMemory(g, po);
  if (!plan.ok() && options.inferAt)
    plan = lower::MemoryPlan{.peak = Dimension::dynamic()}; // no expression; rows planned at their sizes
  else if (!plan.ok())
    return errorf("the memory plan: {} (bounding the sizes helps where an expression grows too large: "
                  "--dim SYM=LO..HI)", plan.error().message);
  r.plan = std::move(*plan);
  r.names = nameForPrinting(g, {r.kvCache, r.plan.peak, r.io}, 72);
  RowEvaluator evaluate(g, r, options);
  for (size_t i = 0; i < rows.size(); ++i) {
    SF_ASSIGN(MemoryRow row, evaluate.at(rows[i]));
    row.note = notes[i];
    r.rows.push_back(std::move(row));
  }
  if (options.fitSymbol) {
    // The other sizes: the first --at, the rule for those it leaves open.
    std::set<std::string> leave = userTied;
    leave.insert(*options.fitSymbol);
    Binding first = options.at.empty() ? Binding{} : options.at.front();
    first.erase(*options.fitSymbol); // the size searched: what it ties follows each value tried
    ShownAt base = shownAt(contract, first, leave, false);
    const Binding &given = base.at;
    SF_ASSIGN(MemoryFit fit, fitSymbol(evaluate, contract, given, options));
    if (!base.upper.empty() || !base.smallest.empty()) fit.why += "; the other sizes at " + base.text();
    r.fit = std::move(fit);
  }
  return r;
}

Result<int64_t> parseBytes(const std::string &text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return errorf("'{}' is not a size in bytes (e.g. 8GiB, 512MiB, 1000000)", text);
  double number = 0;
  try {
    number = std::stod(text.substr(0, i));
  } catch (...) {
    return errorf("'{}' is not a size in bytes (e.g. 8GiB, 512MiB, 1000000)", text);
  }
  std::string unit = text.substr(i);
  unit.erase(0, unit.find_first_not_of(' '));
  static const std::pair<const char *, double> kUnits[] = {
      {"", 1},         {"B", 1},          {"KiB", 1024.0},   {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6},    {"GB", 1e9},        {"TB", 1e12}};
  for (const auto &[name, scale] : kUnits)
    if (unit == name) {
      double bytes = std::floor(number * scale);
      if (!(bytes >= 0) || bytes > 9.0e18) return errorf("'{}': out of range", text);
      return int64_t(bytes);
    }
  return errorf("'{}': unknown unit '{}' (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", text, unit);
}

std::string bytesIEC(int64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = double(bytes);
  size_t u = 0;
  for (v /= 1024; v >= 1024 && u + 1 < std::size(kUnits); ++u) v /= 1024;
  return fmt::format("{:.{}f} {}", v, v < 10 ? 2 : v < 100 ? 1 : 0, kUnits[u]);
}

void printMemory(const MemoryReport &r, std::ostream &os) {
  std::optional<ExprScope> scope;
  if (r.context) scope.emplace(r.context);
  os << "model: " << r.model << "\n";
  os << "weights: " << bytesIEC(r.weights) << " (initializers and constants as stored)\n";
  if (r.cache.empty()) {
    os << "kv cache: none (no graph output carries a graph input forward)\n";
  } else {
    os << "kv cache: " << r.cache.size() << (r.cache.size() == 1 ? " pair" : " pairs")
       << ", input -> output (the axis that grows):\n";
    for (const CachePair &p : r.cache)
      os << "  " << p.input << " -> " << p.output << "  (axis " << p.axis << (p.grows ? ")" : ", written in place)")
         << "\n";
    os << "  bytes, in and out: " << shortExpr(r, r.kvCache) << "\n";
  }
  os << "activations: the static plan's peak, inputs and outputs the caller's (a row: planned at its sizes; the "
        "expression: planned at the rows' largest, valid at every size): "
     << shortExpr(r, r.plan.peak) << "\n";
  for (const std::string &line : derivedLines(r.plan)) os << "  " << line << "\n";
  os << "inputs and outputs (not cache): " << shortExpr(r, r.io) << "\n";
  if (!r.names.where.empty()) os << "where\n";
  for (const std::string &line : r.names.where) os << "  " << line << "\n";
  if (!r.rows.empty()) {
    std::vector<std::string> names;
    for (const auto &[k, v] : r.rows.front().at) names.push_back(k);
    os << "\n|";
    for (const std::string &n : names) os << " " << n << " |";
    os << " weights | kv cache | activations | io | total |\n|";
    for (size_t i = 0; i < names.size() + 5; ++i) os << "---:|";
    os << "\n";
    for (const MemoryRow &row : r.rows) {
      os << "|";
      for (const std::string &n : names) os << " " << row.at.at(n) << " |";
      for (int64_t v : {row.weights, row.kvCache, row.activations, row.io, row.total}) os << " " << bytesIEC(v) << " |";
      os << "\n";
    }
    for (size_t i = 0; i < r.rows.size(); ++i)
      if (!r.rows[i].note.empty()) os << "row " << i + 1 << " at " << r.rows[i].note << "\n";
  }
  if (r.fit) {
    const MemoryFit &f = *r.fit;
    os << "\nfit: the " << toString(f.part) << " within " << bytesIEC(f.budget) << ": " << f.symbol << " <= "
       << (f.max ? std::to_string(*f.max) : std::string("none")) << " (" << f.why << ")\n";
  }
}

nlohmann::json memoryJson(const MemoryReport &r) {
  using nlohmann::json;
  std::optional<ExprScope> scope;
  if (r.context) scope.emplace(r.context);
  json j;
  j["model"] = r.model;
  j["symbols"] = r.symbols;
  json at = json::array();
  for (const MemoryRow &row : r.rows) at.push_back(row.at);
  j["at"] = at;
  j["weights"] = {{"bytes", r.weights}};
  json cache = json::array();
  for (const CachePair &p : r.cache)
    cache.push_back({{"input", p.input}, {"output", p.output}, {"axis", p.axis}, {"grows", p.grows},
                     {"bytes_in", dimJson(p.bytesIn)}, {"bytes_out", dimJson(p.bytesOut)}});
  j["kv_cache"] = cache;
  json derived = json::array();
  for (const auto &[name, d] : r.plan.derived) derived.push_back({{"name", name}, {"expr", dimJson(d)}});
  j["activations"] = {{"peak", dimJson(r.plan.peak)}, {"derived", derived}};
  j["io"] = {{"bytes", dimJson(r.io)}};
  auto total = [&]() -> json {
    auto t = sumOf({Dimension(r.weights), r.kvCache, r.plan.peak, r.io});
    return t.ok() ? dimJson(*t) : json(nullptr);
  };
  j["total"] = total();
  json rows = json::array();
  for (const MemoryRow &row : r.rows)
    rows.push_back({{"at", row.at}, {"weights", row.weights}, {"kv_cache", row.kvCache},
                    {"activations", row.activations}, {"io", row.io}, {"total", row.total}});
  j["rows"] = rows;
  if (r.fit)
    j["fit"] = {{"symbol", r.fit->symbol}, {"budget", r.fit->budget}, {"part", toString(r.fit->part)},
                {"max", r.fit->max ? json(*r.fit->max) : json(nullptr)}, {"why", r.fit->why}};
  return j;
}

} // namespace sf
