// SymbolTable: names, and equalities learned during inference recorded as substitutions.
#include "shapeflow/dim/symbol_table.h"

#include "shapeflow/support/checked.h"

#include <algorithm>

namespace sf {

SymbolId SymbolTable::named(const std::string &name, Interval range) {
  auto it = byName_.find(name);
  if (it != byName_.end()) return it->second;
  SymbolId s = newSymbol(name, range);
  byName_.emplace(name, s);
  order_.push_back(name);
  return s;
}

std::optional<SymbolId> SymbolTable::find(const std::string &name) const {
  auto it = byName_.find(name);
  if (it == byName_.end()) return std::nullopt;
  Expr e = resolveSymbol(it->second);
  if (isSymbol(e)) return e->sym;
  return it->second;
}

Result<SymbolId> SymbolTable::bound(const std::string &name, Interval range) {
  userRanged_.insert(name);
  auto it = byName_.find(name);
  if (it == byName_.end()) return named(name, range);
  // Narrow what the name stands for now (it may have been equated with another symbol).
  Expr cur = resolveSymbol(it->second);
  if (!bounds(cur).intersect(range).empty() || isConst(cur)) {
    auto r = narrow(cur, range);
    if (!r.ok())
      return makeError("symbol " + name + " cannot be in " + toString(range) + ": it is " +
                       sf::toString(cur) + " in " + toString(bounds(cur)));
  } else {
    return makeError("symbol " + name + " cannot be in " + toString(range) + ": it is in " +
                     toString(bounds(cur)));
  }
  Expr now = resolveSymbol(it->second);
  return isSymbol(now) ? now->sym : it->second;
}

Result<SymbolId> SymbolTable::setRange(const std::string &name, Interval range) {
  userRanged_.insert(name);
  if (range.empty()) return makeError("symbol " + name + ": empty range " + toString(range));
  auto it = byName_.find(name);
  if (it == byName_.end()) return named(name, range);
  Expr cur = resolveSymbol(it->second);
  if (!isSymbol(cur)) return bound(name, range); // already tied to an expression: only narrow
  SymbolId s = newSymbol(name, range);
  SF_TRY(bind(cur->sym, symbol(s)));
  it->second = s;
  return s;
}

namespace {
/// `x <= c` as a person reads it: a sum's constant moved right (`P + T - 256 <= 0` reads
/// `P + T <= 256`), and `x == c` where x cannot be below c (`T <= 0` for a size reads `T == 0`).
std::string atMostText(Expr x, int64_t c) {
  Expr y = x;
  int64_t rhs = c;
  if (x->kind == ExprKind::Add && x->value != 0) {
    auto moved = add(x, constant(-x->value));
    auto r = checkedSub(c, x->value);
    if (moved.ok() && r) y = *moved, rhs = *r;
  }
  return sf::toString(y) + (bounds(y).lo == rhs ? " == " : " <= ") + std::to_string(rhs);
}

/// Whether an integer expression never decreases as its symbols grow: symbols, constants, sums
/// with non-negative coefficients, products of non-negative such factors, floor divisions by a
/// positive constant, min and max of such.
bool nonDecreasing(Expr e) {
  switch (e->kind) {
  case ExprKind::Const:
  case ExprKind::Sym: return true;
  case ExprKind::Add:
    for (size_t i = 0; i < e->ops.size(); ++i)
      if (e->coefs[i] < 0 || !nonDecreasing(e->ops[i])) return false;
    return true;
  case ExprKind::Mul:
    for (Expr f : e->ops)
      if (f->bounds.lo < 0 || !nonDecreasing(f)) return false;
    return true;
  case ExprKind::FloorDiv: return e->value > 0 && nonDecreasing(e->ops[0]);
  case ExprKind::Min:
  case ExprKind::Max:
    for (Expr f : e->ops)
      if (!nonDecreasing(f)) return false;
    return true;
  default: return false;
  }
}

/// The range of `sym`, the one symbol of the non-decreasing `e` (in `b`), where `e` lies within
/// `r`, found by bisection over the symbol's range; nullopt when it cannot be found.
std::optional<Interval> symbolRangeWithin(Expr e, Expr sym, Interval b, Interval r) {
  Interval range = bounds(sym);
  const int64_t cap = int64_t(1) << 40; // sizes beyond this are not bisected
  auto at = [&](int64_t v) -> std::optional<int64_t> {
    auto x = evaluate(e, [&](SymbolId) -> std::optional<int64_t> { return v; });
    if (!x.ok()) return std::nullopt;
    return *x;
  };
  int64_t lo = range.lo, hi = std::min(range.hi, cap);
  if (lo < -cap || lo > hi) return std::nullopt;
  // The least v in [a, z] where `above` holds of e(v) (it holds from some v on, e being
  // non-decreasing); z + 1 when it holds nowhere there; nullopt when e cannot be evaluated.
  auto first = [&](int64_t a, int64_t z, auto above) -> std::optional<int64_t> {
    int64_t l = a, h = z + 1;
    while (l < h) {
      int64_t m = l + (h - l) / 2;
      auto x = at(m);
      if (!x) return std::nullopt;
      if (above(*x)) h = m;
      else l = m + 1;
    }
    return l;
  };
  Interval want = range;
  if (r.lo > b.lo) { // the smallest v with e(v) >= r.lo
    auto v = first(lo, hi, [&](int64_t x) { return x >= r.lo; });
    if (!v || *v > hi) return std::nullopt;
    want.lo = *v;
  }
  if (r.hi < b.hi) { // the largest v with e(v) <= r.hi: one below the first past it
    auto v = first(want.lo, hi, [&](int64_t x) { return x > r.hi; });
    if (!v || *v == want.lo) return std::nullopt;
    if (*v <= hi) want.hi = *v - 1;
  }
  return want;
}

/// The values of t with k*t + c in r (k nonzero).
Interval valuesOfLinear(Interval r, int64_t k, int64_t c) {
  auto divFloor = [](int64_t x, int64_t y) { return (x == kInf || x == -kInf) ? x : floorDivUnchecked(x, y); };
  auto divCeil = [&](int64_t x, int64_t y) {
    return (x == kInf || x == -kInf) ? x : -floorDivUnchecked(-x, y);
  };
  Interval shifted = add(r, Interval::point(-c));
  return k > 0 ? Interval{divCeil(shifted.lo, k), divFloor(shifted.hi, k)}
               : Interval{divCeil(neg(shifted).lo, -k), divFloor(neg(shifted).hi, -k)};
}
} // namespace

Result<void> SymbolTable::narrow(Expr e0, Interval r) {
  Expr e = e0;
  if (!subst_.empty()) {
    auto res = substitute(e0, [this](SymbolId t) -> Expr {
      return subst_.count(t) ? resolveSymbol(t) : nullptr;
    });
    if (res.ok()) e = *res;
  }
  Interval b = bounds(e);
  if (r.contains(b)) return success();
  if (b.intersect(r).empty())
    return makeError(sf::toString(e) + " cannot be in " + toString(r) + ": it is in " + toString(b));
  // e == k*t + c for one symbol t: narrow t to (r - c) / k.
  Expr t = nullptr;
  int64_t k = 1, c = 0;
  if (isSymbol(e)) {
    t = e;
  } else if (e->kind == ExprKind::Add && e->ops.size() == 1 && isSymbol(e->ops[0])) {
    t = e->ops[0], k = e->coefs[0], c = e->value;
  }
  if (!t) {
    // One symbol inside a non-decreasing expression (floor divisions, sums with positive
    // coefficients, min, max: a size after a chain of strided windows, ((H - 1)//2 + 1)//2):
    // e in r exactly when the symbol lies between the smallest value where e reaches r.lo and
    // the largest where e stays within r.hi, found by bisection over the symbol's range.
    if (e->onlySym == kNoSymbol || e->onlySym == kManySymbols || !nonDecreasing(e)) {
      requireWithin(e, b, r);
      return success();
    }
    Expr sym = nullptr;
    for (SymbolId id : symbolsOf(e)) sym = symbol(id);
    if (!sym) return success();
    auto want = symbolRangeWithin(e, sym, b, r);
    if (!want) {
      requireWithin(e, b, r);
      return success();
    }
    t = sym, k = 1, c = 0;
    r = *want;
    b = bounds(sym);
  }
  Interval tr = valuesOfLinear(r, k, c);
  Interval nr = bounds(t).intersect(tr);
  if (nr.empty())
    return makeError(sf::toString(e) + " cannot be in " + toString(r) + ": it is in " + toString(b));
  if (nr == bounds(t)) return success();
  const SymbolInfo &info = symbolInfo(t->sym);
  std::string nm = info.name;
  SymbolId narrowed = newSymbol(nm, nr);
  SF_TRY(bind(t->sym, symbol(narrowed)));
  if (!nm.empty()) {
    auto it = byName_.find(nm);
    if (it != byName_.end()) it->second = narrowed;
  }
  return success();
}

SymbolId SymbolTable::freshNamed(const std::string &stem, Interval range) {
  for (;;) {
    std::string name = stem + "_" + std::to_string(stems_[stem]++);
    if (!byName_.count(name)) return named(name, range);
  }
}

Expr SymbolTable::resolveSymbol(SymbolId s) const {
  auto it = subst_.find(s);
  if (it == subst_.end()) return symbol(s);
  Expr target = it->second;
  // Path compression: targets may mention symbols bound after them.
  auto r = substitute(target, [this](SymbolId t) -> Expr {
    return subst_.count(t) ? resolveSymbol(t) : nullptr;
  });
  if (r.ok() && *r != target) subst_[s] = *r, target = *r;
  return target;
}

bool SymbolRequirement::holds(int64_t va, int64_t vb) const {
  switch (kind) {
  case Condition::Broadcast: return va == vb || va == 1 || vb == 1;
  case Condition::Equal: return va == vb;
  case Condition::Divides: return vb != 0 && va % vb == 0;
  case Condition::AtLeast: return va >= vb;
  case Condition::AtMost: return va <= vb;
  case Condition::None: return true;
  }
  return true;
}

void SymbolTable::require(Condition kind, const Dimension &a0, const Dimension &b0) {
  if (!origin_.node || kind == Condition::None || !recordConditions_) return;
  if (kind == Condition::Broadcast && ((a0.isStatic() && a0.length() == 1) || (b0.isStatic() && b0.length() == 1)))
    return;
  Dimension a = resolve(a0), b = resolve(b0);
  // x against min(x, c) for c >= 2 (a table sliced to the sequence's length, then added to it):
  // they broadcast exactly when x <= c (x == 1 is within it, and min(x, c) is 1 only there), a
  // requirement that narrows x's range where it can.
  if (kind == Condition::Broadcast && a.expr() && b.expr())
    for (auto [x, y] : {std::pair{a.expr(), b.expr()}, std::pair{b.expr(), a.expr()}}) {
      if (y->kind != ExprKind::Min || y->ops.size() != 2) continue;
      Expr other = y->ops[0] == x ? y->ops[1] : y->ops[1] == x ? y->ops[0] : nullptr;
      if (other && isConst(other) && other->value >= 2 && narrow(x, {-kInf, other->value}).ok()) return;
    }
  recordCondition(kind, a.expr(), b.expr());
}

void SymbolTable::requireWithin(Expr e, Interval b, Interval r) {
  if (!origin_.node || !recordConditions_) return;
  // Implied by the conditions recorded before: nothing new.
  b = b.intersect(boundsAssumingConditions(e));
  if (b.empty() || r.contains(b)) return;
  if (r.lo > b.lo && r.lo != -kInf) recordCondition(Condition::AtLeast, e, constant(r.lo));
  if (r.hi < b.hi && r.hi != kInf) recordCondition(Condition::AtMost, e, constant(r.hi));
}

Interval SymbolTable::boundsAssumingConditions(Expr e) const {
  Interval b = bounds(e);
  if (boundedExprs_.empty()) return b;
  auto assumed = replaceAtoms(e, [&](Expr x) -> Expr {
    for (const auto &[bounded, stand] : boundedExprs_)
      if (x == bounded) return symbol(stand);
    return nullptr;
  });
  if (assumed.ok()) b = b.intersect(bounds(*assumed));
  // A sum is not a node of another sum: `H - W - 1` is `H - W` shifted by a constant.
  for (const auto &[bounded, stand] : boundedExprs_)
    if (auto d = sub(e, bounded); d.ok() && isConst(*d))
      b = b.intersect(add(bounds(symbol(stand)), Interval::point((*d)->value)));
  return b;
}

void SymbolTable::noteBounded(Expr e, Interval within) {
  Interval now = bounds(e).intersect(within);
  for (auto &[bounded, stand] : boundedExprs_)
    if (bounded == e) {
      now = now.intersect(bounds(symbol(stand)));
      if (!now.empty()) stand = newAnonymousSymbol(now);
      return;
    }
  if (!now.empty()) boundedExprs_.push_back({e, newAnonymousSymbol(now)});
}

void SymbolTable::recordCondition(Condition kind, Expr ea, Expr eb) {
  if (!origin_.node || kind == Condition::None || !recordConditions_) return;
  // Sizes the inputs do not name (a data-dependent count, a probe) cannot be given: a condition
  // on them is nothing a user can meet or check.
  if (!ea || !eb || ea->hasAnonymous || eb->hasAnonymous) return;
  auto isOne = [](Expr e) { return isConst(e) && e->value == 1; };
  if (ea == eb && kind != Condition::Divides) return;
  if (kind == Condition::Broadcast && (isOne(ea) || isOne(eb))) return;
  if (kind == Condition::Divides && (isOne(eb) || isConst(ea))) return;
  // About the first named symbol either side mentions; none: nothing the inputs can violate.
  std::string name;
  for (Expr e : {ea, eb})
    for (SymbolId id : symbolsOf(e))
      if (name.empty() && !symbolInfo(id).name.empty()) name = symbolInfo(id).name;
  if (name.empty()) return;
  const std::string ta = sf::toString(ea), tb = sf::toString(eb);
  std::string text;
  switch (kind) {
  case Condition::Broadcast: {
    // The side that is a number goes right; "or X == 1" only for a side that can be 1.
    const bool swap = isConst(ea) && !isConst(eb);
    const std::string &l = swap ? tb : ta, &rt = swap ? ta : tb;
    text = l + " == " + rt;
    if (bounds(swap ? eb : ea).contains(1)) text += " or " + l + " == 1";
    if (bounds(swap ? ea : eb).contains(1) && !isConst(swap ? ea : eb)) text += " or " + rt + " == 1";
    break;
  }
  case Condition::Equal: text = ta + " == " + tb; break;
  case Condition::Divides: text = "(" + ta + ") % " + tb + " == 0"; break;
  case Condition::AtLeast: text = ta + " >= " + tb; break;
  case Condition::AtMost:
    // min(a, b) <= c: a <= c or b <= c (min(T, P + T - 256) <= 0 reads T == 0 or P + T <= 256).
    if (ea->kind == ExprKind::Min && isConst(eb)) {
      for (Expr x : ea->ops) text += (text.empty() ? "" : " or ") + atMostText(x, eb->value);
    } else {
      text = ta + " <= " + tb;
    }
    break;
  case Condition::None: break;
  }
  if (kind == Condition::Divides && isSymbol(ea)) text = ta + " % " + tb + " == 0";
  if (!conditionKeys_.insert(text + '\n' + *origin_.node).second) return;
  requirements_.push_back({name, std::move(text), *origin_.node, origin_.op ? *origin_.op : std::string(),
                           kind, ea, eb});
  // What the condition bounds, for the conditions after it (see boundedExprs_).
  if (isConst(eb)) {
    if (kind == Condition::AtLeast) noteBounded(ea, {eb->value, kInf});
    if (kind == Condition::AtMost) noteBounded(ea, {-kInf, eb->value});
    if (kind == Condition::Equal) noteBounded(ea, Interval::point(eb->value));
  }
  return;
}

Result<void> SymbolTable::bind(SymbolId s, Expr to) {
  if (isSymbol(to) && to->sym == s) return success();
  auto syms = symbolsOf(to);
  if (std::binary_search(syms.begin(), syms.end(), s)) return success(); // would be circular
  if (origin_.node && !symbolInfo(s).name.empty()) {
    const std::string &name = symbolInfo(s).name;
    std::string text;
    if (isSymbol(to) && symbolInfo(to->sym).name == name) { // narrowed
      Interval was = bounds(symbol(s)), now = bounds(to);
      if (now.lo == now.hi) text = name + " == " + std::to_string(now.lo);
      else if (now.lo != was.lo && now.hi != was.hi)
        text = std::to_string(now.lo) + " <= " + name + " <= " + std::to_string(now.hi);
      else if (now.lo != was.lo) text = name + " >= " + std::to_string(now.lo);
      else text = name + " <= " + std::to_string(now.hi);
    } else {
      text = name + " == " + sf::toString(to);
    }
    requirements_.push_back({name, std::move(text), *origin_.node, origin_.op ? *origin_.op : std::string()});
  }
  subst_[s] = to;
  cache_.clear();
  ++version_;
  return success();
}

namespace {
/// Which of two symbols to eliminate: anonymous before named, later before earlier.
bool preferEliminate(SymbolId a, SymbolId b) {
  bool anonA = symbolInfo(a).name.empty(), anonB = symbolInfo(b).name.empty();
  if (anonA != anonB) return anonA;
  return a > b;
}

/// ea - eb as sum of terms k*x plus a constant.
struct LinearTerms {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t c = 0;
};

LinearTerms linearTerms(Expr d) {
  LinearTerms out;
  if (d->kind == ExprKind::Add) {
    out.c = d->value;
    for (size_t i = 0; i < d->ops.size(); ++i) out.terms.push_back({d->ops[i], d->coefs[i]});
  } else {
    out.terms.push_back({d, 1});
  }
  return out;
}

/// The value a symbol would be solved to: k*s + rest == 0  =>  s == -rest / k.
Result<Expr> solvedValue(const LinearTerms &lt, size_t i) {
  const auto &terms = lt.terms;
  Expr rest = constant(lt.c);
  for (size_t j = 0; j < terms.size(); ++j) {
    if (j == i) continue;
    SF_ASSIGN(Expr t, mul(constant(terms[j].second), terms[j].first));
    SF_ASSIGN(rest, add(rest, t));
  }
  return terms[i].second == 1 ? neg(rest) : Result<Expr>(rest);
}

/// How far `value` leaves `range`: below it, then above it (saturated).
std::pair<uint64_t, uint64_t> rangeLoss(Interval range, Interval value) {
  auto gap = [](int64_t a, int64_t b) -> uint64_t { // b - a for a < b, saturated
    if (a >= b) return 0;
    if (a <= -kInf || b >= kInf) return UINT64_MAX;
    return uint64_t(b) - uint64_t(a);
  };
  return {gap(value.lo, range.lo), gap(range.hi, value.hi)};
}

/// Whether the symbol appears in a term other than the i-th.
bool inOtherTerm(const LinearTerms &lt, size_t i, SymbolId sym) {
  for (size_t j = 0; j < lt.terms.size(); ++j) {
    if (j == i) continue;
    auto syms = symbolsOf(lt.terms[j].first);
    if (std::binary_search(syms.begin(), syms.end(), sym)) return true;
  }
  return false;
}

/// The term whose symbol the sum is solved for, if any.
std::optional<size_t> symbolToSolveFor(const LinearTerms &lt) {
  const auto &terms = lt.terms;
  // The symbol whose value leaves its range least is solved for first, below the range before
  // above it (OH == H - KH + 1 solves H = OH + KH - 1, at least 1 as H is, rather than OH,
  // whose value may be negative), then by preference (anonymous before named, newer before
  // older).
  std::optional<size_t> pick;
  std::pair<uint64_t, uint64_t> pickLoss;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto [m, k] = terms[i];
    if (!isSymbol(m) || (k != 1 && k != -1)) continue;
    if (inOtherTerm(lt, i, m->sym)) continue;
    auto v = solvedValue(lt, i);
    auto l = v.ok() ? rangeLoss(bounds(m), bounds(*v)) : std::pair{UINT64_MAX, UINT64_MAX};
    if (!pick || l < pickLoss ||
        (l == pickLoss && preferEliminate(m->sym, terms[*pick].first->sym))) {
      pick = i;
      pickLoss = l;
    }
  }
  // A value that may go below the symbol's range (`D - (D + 1)//2`, whose bounds interval
  // arithmetic leaves open; `max(a, b)` for a size in 3..5) would lose the symbol's lower bound,
  // and dims made of it could be smaller than any size allows, even negative: not solved (both
  // sides keep their ranges, narrowed to what they share).
  if (pick && pickLoss.first > 0) pick.reset();
  return pick;
}

/// max(x, ..., o) == o: each x is at most o (a mask length T with max(T, P + S) == P + S is
/// at most P + S's largest); min(x, ..., o) == o: each x is at least o.
Result<void> narrowMinMaxOperands(SymbolTable &table, Expr ea, Expr eb) {
  for (auto [side, other] : {std::pair{ea, eb}, std::pair{eb, ea}}) {
    if ((side->kind != ExprKind::Max && side->kind != ExprKind::Min) ||
        std::find(side->ops.begin(), side->ops.end(), other) == side->ops.end())
      continue;
    for (Expr x : side->ops) {
      if (x == other) continue;
      Interval bx = bounds(x), bo = bounds(other);
      Interval to = side->kind == ExprKind::Max ? Interval{bx.lo, std::max(bx.lo, bo.hi)}
                                                : Interval{std::min(bx.hi, bo.lo), bx.hi};
      if (!to.empty()) SF_TRY(table.narrow(x, to));
    }
  }
  return success();
}
} // namespace

Result<void> SymbolTable::equate(const Dimension &a0, const Dimension &b0) {
  Dimension a = resolve(a0), b = resolve(b0);
  Interval r = a.interval().intersect(b.interval());
  if (r.empty())
    return makeError("dimensions " + a.toString() + " and " + b.toString() + " cannot be equal");
  Expr ea = a.expr(), eb = b.expr();
  if (!ea && !eb) return success();
  if (!ea || !eb || ea == eb) return narrow(ea ? ea : eb, r);
  if (isSymbol(ea) && isSymbol(eb)) {
    SymbolId sa = ea->sym, sb = eb->sym;
    Interval ra = bounds(ea), rb = bounds(eb);
    Interval both = ra.intersect(rb).intersect(r);
    SymbolId keep = preferEliminate(sa, sb) ? sb : sa;
    SymbolId drop = keep == sa ? sb : sa;
    if (bounds(symbol(keep)) != both) {
      const SymbolInfo &info = symbolInfo(keep);
      SymbolId narrowed = newSymbol(info.name, both);
      SF_TRY(bind(keep, symbol(narrowed)));
      if (!info.name.empty() && byName_.count(info.name)) byName_[info.name] = narrowed;
      keep = narrowed;
    }
    return bind(drop, symbol(keep));
  }
  // A bare symbol equal to an expression it does not appear in is that expression (a mask's
  // length L equal to past + new tokens becomes P + S): the expression's symbols stay, with
  // their own ranges, rather than one of them being rewritten in terms of L and the others,
  // which would lose its range (S in 5..7 as L - P in -2..14). Not when that would put an
  // anonymous symbol in place of a named one, nor when the expression may go below the symbol's
  // range (a DeformConv offset's size C, at least 1, equal to M - H + 1, which bounds say
  // nothing of): the symbol would lose its lower bound and the dims could be negative, so the
  // other way is taken. Above its range is only imprecise (a size bounded more loosely).
  for (auto [s, other] : {std::pair{ea, eb}, std::pair{eb, ea}}) {
    if (!isSymbol(s) || isSymbol(other)) continue;
    if (!symbolInfo(s->sym).name.empty() && other->hasAnonymous) continue;
    Interval within = bounds(s).intersect(r), range = bounds(other);
    if (range.lo < within.lo) continue;
    auto syms = symbolsOf(other);
    if (std::binary_search(syms.begin(), syms.end(), s->sym)) continue;
    if (bounds(other).intersect(bounds(s)).empty())
      return makeError("dimensions " + a.toString() + " and " + b.toString() + " cannot be equal");
    SF_TRY(bind(s->sym, other));
    SF_TRY(narrow(other, bounds(s)));
    return narrow(other, r);
  }
  // Solve ea - eb == 0 for a symbol that appears once, linearly, with coefficient +-1.
  SF_ASSIGN(Expr d, sub(ea, eb));
  if (isConst(d)) {
    if (d->value != 0)
      return makeError("dimensions " + a.toString() + " and " + b.toString() + " cannot be equal");
    return success();
  }
  const LinearTerms terms = linearTerms(d);
  std::optional<size_t> pick = symbolToSolveFor(terms);
  if (!pick) {
    // Cannot be solved for a symbol: a condition for the contract; the ranges still narrow, but a
    // bound that follows from the equality and the sizes' ranges (a product of sizes at least 64
    // because each size is taken to be at least 1) is not a condition of its own: it would
    // outlive those ranges (a size admitted from 0) where the equality itself still holds.
    require(Condition::Equal, a, b);
    bool recording = setRecordConditions(false);
    auto narrowed = narrow(ea, r);
    if (narrowed.ok()) narrowed = narrow(eb, r);
    if (narrowed.ok()) narrowed = narrowMinMaxOperands(*this, ea, eb);
    setRecordConditions(recording);
    return narrowed;
  }
  // k*s + rest == 0  =>  s == -rest / k
  Expr s = terms.terms[*pick].first;
  SF_ASSIGN(Expr value, solvedValue(terms, *pick));
  if (bounds(value).intersect(bounds(s)).empty())
    return makeError("dimensions " + a.toString() + " and " + b.toString() + " cannot be equal");
  SF_TRY(bind(s->sym, value));
  // s's range now constrains the symbols of its value, and both sides lie in r.
  SF_TRY(narrow(value, bounds(s)));
  return narrow(ea, r);
}

Dimension SymbolTable::resolve(const Dimension &d) const {
  Expr e = d.expr();
  if (!e || subst_.empty() || isConst(e)) return d;
  Expr out;
  auto it = cache_.find(e);
  if (it != cache_.end()) {
    out = it->second;
  } else {
    if (isSymbol(e)) {
      out = resolveSymbol(e->sym);
    } else {
      auto r = substitute(e, [this](SymbolId t) -> Expr {
        return subst_.count(t) ? resolveSymbol(t) : nullptr;
      });
      out = r.ok() ? *r : e;
    }
    cache_.emplace(e, out);
  }
  if (out == e) return d;
  // The dim's own range narrows the result only where it says more than its expression's bounds
  // did: a symbol widened by setRange (--dim N=0..) must widen the dims that use it.
  Interval r = bounds(out);
  if (d.interval() != bounds(e)) r = r.intersect(d.interval());
  if (r.empty()) return d;
  return Dimension(out, r);
}

PartialShape SymbolTable::resolve(const PartialShape &s) const {
  if (!s.rankIsStatic() || subst_.empty()) return s;
  PartialShape out = s;
  for (auto &d : out.dims()) d = resolve(d);
  return out;
}

PartialShape SymbolTable::resolve(PartialShape &&s) const {
  if (s.rankIsStatic() && !subst_.empty())
    for (auto &d : s.dims()) d = resolve(d);
  return std::move(s);
}

std::vector<std::pair<std::string, Interval>> SymbolTable::namedSymbols() const {
  std::vector<std::pair<std::string, Interval>> out;
  for (const auto &name : order_) {
    Expr e = resolveSymbol(byName_.at(name));
    out.push_back({name, bounds(e)});
  }
  return out;
}

} // namespace sf
