// The memory plan's verifier (lower/plan_check.h): from the plan's JSON alone.
#include "shapeflow/lower/plan_check.h"

#include "shapeflow/dim/parse.h"
#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace sf::lower {
namespace {

struct Entry {
  std::string tensor;
  Dimension bytes, size, offset;
  size_t first = 0, last = 0;
  std::string sharesWith; // "" when it owns its memory
};

Result<Dimension> readDim(const nlohmann::json &j, SymbolTable &table, const std::string &what) {
  if (j.is_number_integer()) return Dimension::constantValue(j.get<int64_t>());
  if (!j.is_object() || !j.contains("expr") || !j["expr"].is_string())
    return errorf("{}: not an integer or {{\"expr\", \"min\", \"max\"}}", what);
  std::string text = j["expr"].get<std::string>();
  if (text == "?") return errorf("{}: an expression the plan does not give (\"?\")", what);
  auto d = parseDimension(text, table);
  if (!d.ok()) return errorf("{}: {}", what, d.error().message);
  return *d;
}

/// Pseudo-random but reproducible.
uint64_t nextRandom(uint64_t &state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 33;
}

/// One check of a plan's JSON: what it states (symbols, derived symbols, buffers), the bindings
/// it is evaluated at, and the problems found.
struct PlanChecker {
  const nlohmann::json &plan;
  SymbolTable table;
  // Symbols with their ranges, as the plan states them.
  std::vector<std::pair<SymbolId, Interval>> symbols;
  // Derived symbols: each stands for an expression of the others (a rounding of float shape
  // math), with its range; its value at a binding is the expression's.
  std::vector<std::pair<SymbolId, Dimension>> derived;
  int64_t align = 1;
  size_t steps = 0;
  Dimension peak;
  std::vector<Entry> entries;
  std::map<std::string, size_t> index;
  PlanCheck out;
  // Bindings to check at: the corners, the middle, random points (bounded symbols only).
  std::vector<std::map<SymbolId, int64_t>> bindings;
  // A derived symbol's value at a binding is its definition's, which may name other derived
  // symbols (in any order): resolved on demand, each once, a cycle being a problem.
  std::map<SymbolId, const Dimension *> definition;

  explicit PlanChecker(const nlohmann::json &p) : plan(p) {}

  /// The plan's symbols and derived symbols, with their ranges.
  Result<void> readSymbols() {
    if (plan.contains("symbols") && plan["symbols"].is_object())
      for (const auto &[name, range] : plan["symbols"].items()) {
        int64_t lo = range.value("min", int64_t(0));
        int64_t hi = range.contains("max") && range["max"].is_number_integer()
                         ? range["max"].get<int64_t>()
                         : kInf;
        symbols.push_back({table.named(name, {lo, hi}), {lo, hi}});
      }
    if (plan.contains("derived") && plan["derived"].is_object())
      for (const auto &[name, def] : plan["derived"].items()) {
        SF_ASSIGN(Dimension d, readDim(def, table, "derived symbol " + name));
        int64_t lo = def.is_object() ? def.value("min", int64_t(0)) : d.minLength();
        int64_t hi = def.is_object() && def.contains("max") && def["max"].is_number_integer()
                         ? def["max"].get<int64_t>()
                         : (d.hasUpperBound() ? d.maxLength() : kInf);
        derived.push_back({table.named(name, {lo, hi}), d});
      }
    return success();
  }

  /// The alignment, the steps, the peak and every buffer, as the plan states them.
  Result<void> readBuffers() {
    align = plan.value("align", int64_t(1));
    steps = plan["order"].size();
    SF_ASSIGN(peak, readDim(plan["peak"], table, "peak"));
    for (const auto &b : plan["buffers"]) {
      Entry e;
      e.tensor = b.value("tensor", std::string());
      std::string what = "buffer '" + e.tensor + "'";
      SF_ASSIGN(e.size, readDim(b.at("size"), table, what + " size"));
      SF_ASSIGN(e.offset, readDim(b.at("offset"), table, what + " offset"));
      e.bytes = e.size;
      if (b.contains("bytes")) {
        SF_ASSIGN(e.bytes, readDim(b["bytes"], table, what + " bytes"));
      }
      e.first = b.value("first", size_t(0));
      e.last = b.value("last", size_t(0));
      e.sharesWith = b.value("in_place_of", std::string());
      index[e.tensor] = entries.size();
      entries.push_back(std::move(e));
    }
    out.buffers = entries.size();
    return success();
  }

  /// A problem found (the first 20 are kept).
  void problem(std::string p) {
    if (out.problems.size() < 20) out.problems.push_back(std::move(p));
  }

  /// The memory a buffer is in: itself, or what it shares (followed to the end).
  size_t rootOf(size_t i) const {
    for (size_t hops = 0; !entries[i].sharesWith.empty() && hops <= entries.size(); ++hops) {
      auto it = index.find(entries[i].sharesWith);
      if (it == index.end()) break;
      i = it->second;
    }
    return i;
  }

  /// Every buffer lives within the steps and shares only buffers of the plan.
  void checkLifetimes() {
    for (const Entry &e : entries) {
      if (e.first > e.last || (steps && e.last >= steps))
        problem(fmt::format("'{}' lives at steps {}..{}, not within the {} steps", e.tensor, e.first,
                            e.last, steps));
      if (!e.sharesWith.empty() && !index.count(e.sharesWith))
        problem(fmt::format("'{}' shares '{}', which is not in the plan", e.tensor, e.sharesWith));
    }
  }

  /// Only the symbols the plan's expressions use matter: the others are dropped.
  void keepUsedSymbols() {
    std::set<SymbolId> used;
    auto use = [&](const Dimension &d) {
      if (d.expr())
        for (SymbolId s : symbolsOf(d.expr()))
          used.insert(s);
    };
    use(peak);
    for (const Entry &e : entries) {
      use(e.size);
      use(e.offset);
      use(e.bytes);
    }
    for (const auto &[s, def] : derived)
      if (used.count(s)) use(def);
    std::erase_if(symbols, [&](const auto &s) { return !used.count(s.first); });
  }

  /// One binding: each symbol at `f` of its range, each derived symbol at its definition's value.
  template <class F> void pick(F f) {
    std::map<SymbolId, int64_t> b;
    for (const auto &[s, r] : symbols)
      b[s] = f(r);
    std::set<SymbolId> resolving;
    std::function<std::optional<int64_t>(SymbolId)> value = [&](SymbolId t) -> std::optional<int64_t> {
      if (auto it = b.find(t); it != b.end()) return it->second;
      auto d = definition.find(t);
      if (d == definition.end() || !d->second->expr() || !resolving.insert(t).second)
        return std::nullopt;
      auto v = evaluate(d->second->expr(), value);
      if (!v.ok()) return std::nullopt;
      Interval r = symbolInfo(t).range;
      if (*v < r.lo || *v > r.hi)
        problem(fmt::format("derived symbol {} is {} at a binding, outside its range {}",
                            symbolInfo(t).name, *v, toString(r)));
      b[t] = *v;
      return *v;
    };
    for (const auto &[s, def] : derived)
      if (!value(s)) problem(fmt::format("derived symbol {} does not evaluate at a binding",
                                         symbolInfo(s).name));
    bindings.push_back(std::move(b));
  }

  /// The bindings to check at: the lower corner, the upper corner, the middle, 13 random points.
  void pickBindings() {
    for (const auto &[s, def] : derived)
      definition[s] = &def;
    bool bounded = true;
    for (const auto &[s, r] : symbols)
      bounded = bounded && r.hi != kInf;
    if (!symbols.empty() && !bounded)
      problem("a symbol has no upper bound: the plan cannot hold for all of its values");
    if (bounded) {
      pick([](Interval r) { return r.lo; });
      pick([](Interval r) { return r.hi; });
      pick([](Interval r) { return r.lo + (r.hi - r.lo) / 2; });
      if (!symbols.empty()) {
        uint64_t state = 0x5eed;
        for (int k = 0; k < 13; ++k)
          pick([&](Interval r) {
            return r.lo + int64_t(nextRandom(state) % uint64_t(r.hi - r.lo + 1));
          });
      }
    }
    out.bindings = bindings.size();
  }

  /// `d` at binding `b` (none where it does not evaluate).
  static std::optional<int64_t> at(const Dimension &d, const std::map<SymbolId, int64_t> &b) {
    if (d.isStatic()) return d.length();
    if (!d.expr()) return std::nullopt;
    auto v = evaluate(d.expr(), [&](SymbolId s) -> std::optional<int64_t> {
      auto it = b.find(s);
      if (it == b.end()) return std::nullopt;
      return it->second;
    });
    if (!v.ok()) return std::nullopt;
    return *v;
  }

  /// Per buffer: large enough, aligned, within the peak, at every binding.
  void checkBuffers() {
    for (const auto &b : bindings) {
      auto pk = at(peak, b);
      if (!pk) {
        problem("the peak does not evaluate at a binding");
        break;
      }
      for (const Entry &e : entries) {
        auto size = at(e.size, b), bytes = at(e.bytes, b), off = at(e.offset, b);
        if (!size || !bytes || !off) {
          problem(fmt::format("'{}' does not evaluate at a binding", e.tensor));
          continue;
        }
        if (*size < *bytes)
          problem(fmt::format("'{}' has {} bytes in a buffer of {}", e.tensor, *bytes, *size));
        if (*off < 0 || (align > 1 && *off % align != 0))
          problem(fmt::format("'{}' is at {}, not a multiple of {}", e.tensor, *off, align));
        if (*off + *size > *pk)
          problem(fmt::format("'{}' ends at {}, past the peak {}", e.tensor, *off + *size, *pk));
      }
      if (out.problems.size() >= 20) break;
    }
  }

  /// `lo` ends at or below `hi`'s offset at every binding, proved by bounds.
  bool provedBelow(const Entry &lo, const Entry &hi) const {
    // hi.offset - (lo.offset + lo.size) >= 0 for every binding, by bounds: first of each one
    // alone (cheap), then of the difference (which sees what the two have in common).
    if (lo.offset.hasUpperBound() && lo.size.hasUpperBound() &&
        hi.offset.minLength() >= lo.offset.maxLength() + lo.size.maxLength())
      return true;
    auto end = lo.offset + lo.size;
    if (!end.ok()) return false;
    auto diff = hi.offset - *end;
    if (diff.ok() && diff->minLength() >= 0) return true;
    // An offset that is a derived symbol standing for a maximum is at least each of its terms:
    // apart when one of them is at or above the other buffer's end.
    if (!hi.offset.expr() || hi.offset.expr()->kind != ExprKind::Sym) return false;
    auto d = definition.find(hi.offset.expr()->sym);
    if (d == definition.end() || !d->second->expr() || d->second->expr()->kind != ExprKind::Max)
      return false;
    for (const Expr &term : d->second->expr()->ops) {
      auto t = Dimension(term) - *end;
      if (t.ok() && t->minLength() >= 0) return true;
    }
    return false;
  }

  /// Pairs live at a common step: apart, unless they share memory.
  void checkPairs() {
    std::vector<size_t> byFirst(entries.size());
    for (size_t i = 0; i < entries.size(); ++i)
      byFirst[i] = i;
    std::sort(byFirst.begin(), byFirst.end(),
              [&](size_t a, size_t b) { return entries[a].first < entries[b].first; });
    std::vector<std::vector<int64_t>> values(bindings.size());
    for (size_t k = 0; k < bindings.size(); ++k) {
      values[k].resize(2 * entries.size());
      for (size_t i = 0; i < entries.size(); ++i) {
        values[k][2 * i] = at(entries[i].offset, bindings[k]).value_or(0);
        values[k][2 * i + 1] = at(entries[i].size, bindings[k]).value_or(0);
      }
    }
    for (size_t a = 0; a < byFirst.size(); ++a) {
      size_t i = byFirst[a];
      for (size_t c = a + 1; c < byFirst.size(); ++c) {
        size_t j = byFirst[c];
        if (entries[j].first > entries[i].last) break;
        if (rootOf(i) == rootOf(j)) continue;
        const Entry &x = entries[i], &y = entries[j];
        ++out.pairs;
        bool concrete = x.offset.isStatic() && x.size.isStatic() && y.offset.isStatic() &&
                        y.size.isStatic();
        if (!concrete && (provedBelow(x, y) || provedBelow(y, x))) ++out.proved;
        for (size_t k = 0; k < bindings.size(); ++k) {
          int64_t xo = values[k][2 * i], xs = values[k][2 * i + 1];
          int64_t yo = values[k][2 * j], ys = values[k][2 * j + 1];
          if (xs == 0 || ys == 0) continue;
          if (xo < yo + ys && yo < xo + xs) {
            problem(fmt::format("'{}' [{}, {}) and '{}' [{}, {}) overlap and both live at step {}",
                                x.tensor, xo, xo + xs, y.tensor, yo, yo + ys, y.first));
            break;
          }
          if (concrete) break; // one binding says it all
        }
      }
    }
  }
};

} // namespace

Result<PlanCheck> checkPlanJson(const nlohmann::json &plan) {
  if (!plan.is_object() || !plan.contains("buffers") || !plan["buffers"].is_array() ||
      !plan.contains("peak") || !plan.contains("order") || !plan["order"].is_array())
    return makeError("not a memory plan: it needs \"buffers\", \"peak\" and \"order\"");
  auto context = makeExprContext();
  ExprScope scope(context);
  // A plan's offsets are maxima of sums of sizes: larger than an inferred dim may be.
  ExprLimitScope limits(1u << 16, 4096);
  PlanChecker check(plan);
  SF_TRY(check.readSymbols());
  SF_TRY(check.readBuffers());
  check.checkLifetimes();
  check.keepUsedSymbols();
  check.pickBindings();
  check.checkBuffers();
  check.checkPairs();
  return check.out;
}

} // namespace sf::lower
