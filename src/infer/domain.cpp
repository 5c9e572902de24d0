// The input sizes a model admits, and bindings drawn from them (see domain.h).
#include "shapeflow/infer/domain.h"

#include "shapeflow/support/format.h"

#include <algorithm>
#include <set>

namespace sf {
namespace {

std::string keyOf(SymbolId s) {
  const std::string &name = symbolInfo(s).name;
  return name.empty() ? "#" + std::to_string(s) : name;
}

/// xorshift64: the draws are the same on every machine.
uint64_t nextRandom(uint64_t &state) {
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return state;
}

/// The smallest size a free symbol is drawn at: its range's lower end, except that an unnamed
/// size whose range starts at 0 (nothing is known of it) starts at 1.
int64_t smallest(const InputDomain::Symbol &s) {
  if (s.range.lo <= 0 && symbolInfo(s.id).name.empty()) return std::min<int64_t>(1, s.range.hi);
  return std::max<int64_t>(s.range.lo, 0);
}

/// The largest size drawn: 63 above the smallest, within the range.
int64_t largestDrawn(const InputDomain::Symbol &s) {
  int64_t lo = smallest(s);
  return s.range.hi == kInf ? lo + 63 : std::min<int64_t>(s.range.hi, lo + 63);
}

} // namespace

std::optional<bool> conditionHolds(const SymbolRequirement &r,
                                   const std::function<std::optional<int64_t>(SymbolId)> &value) {
  if (r.kind == Condition::None || !r.a || !r.b) return std::nullopt;
  auto va = evaluate(r.a, value), vb = evaluate(r.b, value);
  if (!va.ok() || !vb.ok()) return std::nullopt;
  return r.holds(*va, *vb);
}

InputDomain inputDomain(const Graph &g) {
  ExprScope scope = g.enter();
  InputDomain d;
  d.table = &g.symbols;
  d.context = g.context;
  std::set<std::string> seen;
  for (OutletId o : g.inputs) {
    const Fact &f = g.fact(o);
    if ((f.constant && f.constant->hasData()) || !f.shape.rankIsStatic()) continue;
    for (const Dimension &dim : f.shape.dims()) {
      if (dim.isStatic() || !dim.expr()) continue;
      for (SymbolId s : symbolsOf(dim.expr())) {
        Expr e = g.symbols.resolveSymbol(s);
        // A symbol the facts still read is free; one inference replaced is solved.
        InputDomain::Symbol sym{keyOf(s), s, bounds(e), nullptr};
        if (!(isSymbol(e) && e->sym == s)) {
          if (isSymbol(e)) sym = {keyOf(e->sym), e->sym, bounds(e), nullptr};
          else sym.solved = e;
        }
        if (seen.insert(sym.key).second) d.symbols.push_back(sym);
      }
    }
  }
  for (const SymbolRequirement &r : g.symbols.requirements())
    if (r.kind != Condition::None && r.a && r.b) d.conditions.push_back(r);
  return d;
}

std::optional<int64_t> InputDomain::valueAt(const Binding &b, SymbolId s) const {
  ExprScope scope(context);
  if (auto it = b.find(keyOf(s)); it != b.end()) return it->second;
  if (!table) return std::nullopt;
  Expr e = table->resolveSymbol(s);
  if (isSymbol(e)) {
    if (e->sym == s) return std::nullopt;
    return valueAt(b, e->sym);
  }
  auto v = evaluate(e, [&](SymbolId t) { return valueAt(b, t); });
  if (!v.ok()) return std::nullopt;
  return *v;
}

namespace {
Result<void> unknownSize(const std::string &name, int64_t v, const std::vector<InputDomain::Symbol> &symbols) {
  std::string names;
  for (const InputDomain::Symbol &s : symbols)
    if (s.key[0] != '#') names += (names.empty() ? "" : ", ") + s.key;
  return errorf("a size is given for '{}' (= {}), but the model has no size named '{}' ({})", name, v, name,
                names.empty() ? "its inputs have no named sizes" : "its inputs' named sizes: " + names);
}
} // namespace

Result<void> InputDomain::knows(const Binding &b) const {
  ExprScope scope(context);
  for (const auto &entry : b)
    if (std::none_of(symbols.begin(), symbols.end(), [&](const Symbol &s) { return s.key == entry.first; }) &&
        !(table && table->find(entry.first))) // a size the model names that inference solved (T == S + P)
      return unknownSize(entry.first, entry.second, symbols);
  return success();
}

Result<void> checkNamesSymbols(const Graph &g, const Binding &b) {
  ExprScope scope = g.enter();
  for (const auto &[name, v] : b)
    if (!g.symbols.find(name)) return unknownSize(name, v, inputDomain(g).symbols);
  return success();
}

std::optional<std::string> InputDomain::breaks(const Binding &b) const {
  ExprScope scope(context);
  auto value = [&](SymbolId t) { return valueAt(b, t); };
  for (const Symbol &s : symbols) {
    auto it = b.find(s.key);
    if (it == b.end()) continue;
    if (!s.range.contains(it->second))
      return fmt::format("{} = {} is outside {}", s.key, it->second, toString(s.range));
    if (!s.solved) continue;
    auto want = evaluate(s.solved, value);
    if (want.ok() && *want != it->second)
      return fmt::format("{} == {} = {}, given {} = {}", s.key, toString(s.solved), *want, s.key, it->second);
  }
  // A size given by a name the inputs no longer read (inference solved it: T == S + P) must
  // be the value its solution takes.
  for (const auto &entry : b) {
    const std::string &name = entry.first; // (not a structured binding: lambdas below use it)
    const int64_t given = entry.second;
    if (!table || std::any_of(symbols.begin(), symbols.end(), [&](const Symbol &s) { return s.key == name; })) continue;
    auto id = table->find(name);
    if (!id) continue;
    Expr e = table->resolveSymbol(*id);
    if (isSymbol(e) && e->sym == *id) continue;
    auto want = evaluate(e, [&](SymbolId t) { return t == *id ? std::nullopt : valueAt(b, t); });
    if (want.ok() && *want != given)
      return fmt::format("{} == {} = {}, given {} = {}", name, toString(e), *want, name, given);
  }
  for (const SymbolRequirement &r : conditions) {
    if (conditionHolds(r, value) != std::optional<bool>(false)) continue;
    auto va = evaluate(r.a, value), vb = evaluate(r.b, value);
    return fmt::format("{} ({} and {} at these sizes), node '{}' ({})", r.text, *va, *vb, r.node, r.op);
  }
  return std::nullopt;
}

namespace {
using FreeSymbols = std::vector<const InputDomain::Symbol *>;

/// The free symbol `e` is, if it is one.
const InputDomain::Symbol *freeSymbol(const FreeSymbols &free, Expr e) {
  if (!isSymbol(e)) return nullptr;
  for (const InputDomain::Symbol *s : free)
    if (s->id == e->sym || s->key == keyOf(e->sym)) return s;
  return nullptr;
}

/// Meets an equality or broadcast condition by giving a free, unpinned side the other side's
/// value (within its range); whether it did.
bool meetBySide(const InputDomain &d, const FreeSymbols &free, const SymbolRequirement &r, Binding &b,
                std::set<std::string> &pinned) {
  auto value = [&](SymbolId t) { return d.valueAt(b, t); };
  for (auto [side, other] : {std::pair{r.a, r.b}, std::pair{r.b, r.a}}) {
    const InputDomain::Symbol *s = freeSymbol(free, side);
    if (!s || pinned.count(s->key)) continue;
    auto v = evaluate(other, value);
    if (!v.ok() || !s->range.contains(*v)) continue;
    b[s->key] = *v;
    pinned.insert(s->key);
    return true;
  }
  return false;
}

/// Meets a condition by the first size of one of its free, unpinned symbols that meets it, from
/// the drawn one on, within the drawn range; whether it did.
bool meetBySearch(const InputDomain &d, const FreeSymbols &free, const SymbolRequirement &r, Binding &b,
                  std::set<std::string> &pinned) {
  auto value = [&](SymbolId t) { return d.valueAt(b, t); };
  auto meets = [&](const SymbolRequirement &r) { return conditionHolds(r, value) != std::optional<bool>(false); };
  bool met = false;
  std::vector<SymbolId> mentioned = symbolsOf(r.a);
  for (SymbolId t : symbolsOf(r.b)) mentioned.push_back(t);
  for (SymbolId t : mentioned) {
    if (met) break;
    const InputDomain::Symbol *s = freeSymbol(free, symbol(t));
    if (!s || pinned.count(s->key)) continue;
    int64_t lo = smallest(*s), hi = std::max(lo, largestDrawn(*s)), was = b[s->key];
    for (int64_t i = 0; i <= hi - lo && !met; ++i) {
      b[s->key] = lo + (was - lo + i) % (hi - lo + 1);
      met = meets(r);
    }
    if (met) pinned.insert(s->key);
    else b[s->key] = was;
  }
  return met;
}

/// A condition a draw breaks is met where one of its free symbols can meet it: a symbol a
/// condition ties to others (`L == S + P or L == 1`) takes the other side's value; otherwise
/// the first size that meets it, from the drawn one on, within the drawn range. Each symbol is
/// set at most once, and passes repeat until nothing changes.
void meetConditions(const InputDomain &d, const FreeSymbols &free, Binding &b) {
  std::set<std::string> pinned;
  auto value = [&](SymbolId t) { return d.valueAt(b, t); };
  auto meets = [&](const SymbolRequirement &r) { return conditionHolds(r, value) != std::optional<bool>(false); };
  for (size_t pass = 0; pass <= d.conditions.size(); ++pass) {
    bool changed = false;
    for (const SymbolRequirement &r : d.conditions) {
      if (meets(r)) continue;
      bool met = false;
      if (r.kind == Condition::Equal || r.kind == Condition::Broadcast) met = meetBySide(d, free, r, b, pinned);
      if (!met) met = meetBySearch(d, free, r, b, pinned);
      if (met) changed = true;
    }
    if (!changed) break;
  }
}

/// The size drawn for a free symbol in attempt `attempt` of binding k: the smallest sizes first
/// (raised as attempts fail), then one above, then the middle, then random.
int64_t drawnSize(const InputDomain::Symbol &s, size_t k, size_t attempt, uint64_t &state) {
  int64_t lo = smallest(s), hi = std::max(lo, largestDrawn(s));
  if (k == 0) return std::min(lo + int64_t(attempt), hi); // the smallest sizes, raised as needed
  if (k == 1 && attempt == 0) return std::min(lo + 1, hi);
  if (k == 2 && attempt == 0) return lo + (hi - lo) / 2;
  return lo + int64_t(nextRandom(state) % uint64_t(hi - lo + 1));
}
} // namespace

InputDomain::Draw InputDomain::draw(size_t count, uint64_t seed) const {
  ExprScope scope(context);
  Draw out;
  FreeSymbols free;
  for (const Symbol &s : symbols)
    if (!s.solved) free.push_back(&s);
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 7;
  std::set<Binding> distinct;
  std::vector<Binding> repeats; // admissible, but drawn before
  const size_t kAttempts = 200;
  for (size_t k = 0; out.bindings.size() < count; ++k) {
    bool found = false;
    for (size_t attempt = 0; attempt < kAttempts && !found; ++attempt) {
      Binding b;
      for (const Symbol *s : free) b[s->key] = drawnSize(*s, k, attempt, state);
      meetConditions(*this, free, b);
      if (auto why = breaks(b)) {
        out.why = *why;
        continue;
      }
      if (distinct.insert(b).second) {
        out.bindings.push_back(b);
        found = true;
      } else {
        repeats.push_back(b);
      }
    }
    if (found) continue;
    // No new binding: the domain is smaller than `count` (repeat one drawn before) or refuses
    // every draw (stop, and say what refused).
    if (repeats.empty()) break;
    out.bindings.push_back(repeats[k % repeats.size()]);
  }
  if (out.bindings.size() >= count) out.why.clear();
  return out;
}

} // namespace sf
