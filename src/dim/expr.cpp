// Canonical symbolic integer expressions: contexts, interning, symbols, and the integer operations
// (expr.h). Working form for arithmetic is a linear combination `c + sum(coef_i * mono_i)` (Lin,
// expr_lin.cpp) whose monomials are products of atoms. Every public operation converts to Lin,
// combines, and turns the result back into an interned node; so a + b and b + a are the same
// pointer.
#include "shapeflow/dim/expr.h"
#include "shapeflow/support/hash.h"
#include "expr_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <span>
#include <unordered_set>

#include "shapeflow/support/small_vec.h"

namespace sf {
using namespace expr_detail;

namespace expr_detail {

Error overflow() { return makeError("integer overflow in dimension arithmetic"); }

ExprContext &defaultContext() {
  static ExprContext *c = new ExprContext(); // never destroyed: the small constants live here
  return *c;
}

thread_local ExprContext *tCurrent = nullptr;

ExprContext &registry() { return tCurrent ? *tCurrent : defaultContext(); }


Interval computeBounds(const ExprNode &n);
void computeFloatBounds(ExprNode &n);

bool isFloatKind(ExprKind k) { return k >= ExprKind::FConst && k <= ExprKind::FMax; }

size_t hashKey(const NodeKey &k) {
  size_t h = hashMix(size_t(k.kind), std::hash<int64_t>()(k.value));
  h = hashMix(h, k.sym);
  h = hashMix(h, size_t(k.prec));
  for (Expr o : k.ops) h = hashMix(h, std::hash<const void *>()(o));
  for (int64_t c : k.coefs) h = hashMix(h, std::hash<int64_t>()(c));
  return h;
}

/// The interned node with this identity, or null.
Expr findInterned(const NodeKey &k) {
  ExprContext &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.table.find(k);
  return it == r.table.end() ? nullptr : *it;
}

Expr intern(ExprNode proto) {
  proto.hash = hashKey(keyOf(proto));
  if (Expr found = findInterned(keyOf(proto))) return found;
  // A new node: its derived fields (computed outside the lock; symbolInfo takes it).
  uint32_t size = 1;
  bool anon = false, minMax = proto.kind == ExprKind::Min || proto.kind == ExprKind::Max;
  uint32_t only = proto.kind == ExprKind::Sym ? proto.sym : kNoSymbol;
  for (Expr o : proto.ops) {
    size += o->size, anon = anon || o->hasAnonymous, minMax = minMax || o->hasMinMax;
    if (o->onlySym != kNoSymbol) only = only == kNoSymbol || only == o->onlySym ? o->onlySym : kManySymbols;
  }
  proto.size = size;
  proto.hasMinMax = minMax;
  proto.onlySym = only;
  if (proto.kind == ExprKind::Sym) {
    proto.symInfo = &symbolInfo(proto.sym);
    anon = proto.symInfo->name.empty();
  }
  proto.hasAnonymous = anon;
  proto.isFloat = isFloatKind(proto.kind);
  if (proto.isFloat) computeFloatBounds(proto);
  proto.bounds = computeBounds(proto);
  ExprContext &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.table.find(keyOf(proto)); // another thread may have made it meanwhile
  if (it != r.table.end()) return *it;
  r.nodes.push_back(std::move(proto));
  ++ExprContext::gNodes;
  const ExprNode *n = &r.nodes.back();
  r.table.insert(n);
  return n;
}

Expr makeNode(ExprKind k, int64_t value, std::span<const Expr> ops,
              std::span<const int64_t> coefs) {
  NodeKey key{k, value, 0, FloatPrec::None, ops, coefs, 0};
  key.hash = hashKey(key);
  if (Expr found = findInterned(key)) return found;
  ExprNode n{};
  n.kind = k;
  n.value = value;
  n.sym = 0;
  n.ops.assign(ops.begin(), ops.end());
  n.coefs.assign(coefs.begin(), coefs.end());
  return intern(std::move(n));
}

} // namespace expr_detail

// ---------------------------------------------------------------- symbols
SymbolId newSymbol(std::string name, Interval range) {
  // Ranges are kept as given (a capped expression may be negative); dims clamp at their level.
  if (range.hi < range.lo) range.hi = range.lo;
  ExprContext &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.symbols.push_back({std::move(name), range});
  ++ExprContext::gNodes;
  return SymbolId(r.symbols.size() - 1);
}

SymbolId newAnonymousSymbol(Interval range) { return newSymbol("", range); }

const SymbolInfo &symbolInfo(SymbolId id) {
  ExprContext &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (id >= r.symbols.size()) {
    // A symbol read in another context than the one that made it: a bug in the caller.
    std::fprintf(stderr, "shapeflow: symbol %u used outside its expression context\n", id);
    std::abort();
  }
  return r.symbols[id];
}

size_t symbolCount() {
  ExprContext &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.symbols.size();
}

uint64_t exprCapHits() { return registry().capHits.load(); }

std::shared_ptr<ExprContext> makeExprContext() { return std::make_shared<ExprContext>(); }

ExprScope::ExprScope(const std::shared_ptr<ExprContext> &ctx)
    : previous_(tCurrent), set_(bool(ctx)) {
  if (set_) tCurrent = ctx.get();
}

ExprScope::~ExprScope() {
  if (set_) tCurrent = previous_;
}

size_t liveExprNodes() { return ExprContext::gNodes.load(); }
size_t liveExprContexts() { return ExprContext::gContexts.load(); }

// ---------------------------------------------------------------- construction
Expr constant(int64_t v) {
  // Small constants are made once (they come up in nearly every shape computation).
  constexpr int64_t kLo = -64, kHi = 4096;
  static const std::vector<Expr> small = [] {
    ExprContext *saved = tCurrent;
    tCurrent = &defaultContext();
    std::vector<Expr> t;
    for (int64_t c = kLo; c <= kHi; ++c)
      t.push_back(makeNode(ExprKind::Const, c, {}));
    tCurrent = saved;
    return t;
  }();
  if (v >= kLo && v <= kHi) return small[size_t(v - kLo)];
  return makeNode(ExprKind::Const, v, {});
}

Expr symbol(SymbolId id) {
  ExprNode n{};
  n.kind = ExprKind::Sym;
  n.value = 0;
  n.sym = id;
  return intern(std::move(n));
}

namespace {
Error floatInIntegerMath() {
  return makeError("a float expression cannot be used in integer arithmetic");
}
} // namespace

#define SF_INT_ONLY(...)                                                                            \
  for (Expr e_ : {__VA_ARGS__})                                                                    \
    if (e_->isFloat) return floatInIntegerMath();

Result<Expr> add(Expr a, Expr b) {
  SF_INT_ONLY(a, b);
  return finish(linAxpy(toLin(a), 1, toLin(b)));
}
Result<Expr> sub(Expr a, Expr b) {
  SF_INT_ONLY(a, b);
  return finish(linAxpy(toLin(a), -1, toLin(b)));
}
Result<Expr> neg(Expr a) {
  SF_INT_ONLY(a);
  return finish(linAxpy(Lin{}, -1, toLin(a)));
}
Result<Expr> mul(Expr a, Expr b) {
  SF_INT_ONLY(a, b);
  return finish(linMul(toLin(a), toLin(b)));
}

Result<Expr> floorDiv(Expr a, int64_t c) {
  SF_INT_ONLY(a);
  if (c <= 0) return makeError("floor division by a non-positive constant " + std::to_string(c));
  if (c == 1) return a;
  if (isConst(a)) {
    auto q = checkedFloorDiv(a->value, c);
    if (!q) return overflow();
    return constant(*q);
  }
  // floor(x / c) == floor((x / g) / (c / g)) when g divides every coefficient of x and c.
  Lin l = toLin(a);
  int64_t g = linContent(l, c);
  if (g > 1) l = linDivConst(l, g), c /= g;
  if (c == 1) return finish(l);
  // floor((c*y + z) / c) == y + floor(z / c) for integer y.
  Lin out, rest;
  for (const Term &t : l.terms) {
    if (t.coef % c == 0) out.terms.push_back({t.mono, t.coef / c});
    else rest.terms.push_back(t);
  }
  // Keep the constant inside in (-c, 0], so that ceil-like forms read `(H - 1)//2 + 1`.
  if (rest.terms.empty()) {
    out.c = floorDivUnchecked(l.c, c);
    return finish(out);
  }
  if (l.c == std::numeric_limits<int64_t>::min()) return overflow(); // -l.c below (found by fuzz_text)
  int64_t q = -floorDivUnchecked(-l.c, c); // ceil(l.c / c)
  out.c = q;
  rest.c = l.c - q * c;
  {
    Expr inner = fromLin(rest);
    Interval b = inner->bounds;
    int64_t lo = b.lo == -kInf ? b.lo : floorDivUnchecked(b.lo, c);
    int64_t hi = b.hi == kInf ? b.hi : floorDivUnchecked(b.hi, c);
    Expr atom;
    if (lo == hi && lo != kInf && lo != -kInf) {
      atom = constant(lo);
    } else if (inner->kind == ExprKind::FloorDiv) {
      // floor(floor(x / a) / c) == floor(x / (a*c)) for positive a, c.
      auto ac = checkedMul(inner->value, c);
      if (!ac) return overflow();
      SF_ASSIGN(atom, floorDiv(inner->ops[0], *ac)); // canonical again (gcd, constant)
    } else {
      atom = makeNode(ExprKind::FloorDiv, c, std::span<const Expr>(&inner, 1));
    }
    SF_ASSIGN(out, linAxpy(out, 1, toLin(atom)));
  }
  return finish(out);
}

Result<Expr> ceilDiv(Expr a, int64_t c) {
  if (c <= 0) return makeError("ceil division by a non-positive constant " + std::to_string(c));
  SF_ASSIGN(Expr shifted, add(a, constant(c - 1)));
  return floorDiv(shifted, c);
}

Result<Expr> mod(Expr a, int64_t c) {
  SF_INT_ONLY(a);
  if (c <= 0) return makeError("modulo by a non-positive constant " + std::to_string(c));
  if (c == 1) return constant(0);
  if (isConst(a)) return constant(*checkedMod(a->value, c));
  Lin l = toLin(a), rest;
  for (const Term &t : l.terms)
    if (t.coef % c != 0) rest.terms.push_back(t);
  rest.c = *checkedMod(l.c, c);
  if (rest.terms.empty()) return constant(rest.c);
  // (g*x) mod (g*d) == g * (x mod d).
  int64_t g = linContent(rest, c);
  if (g > 1) {
    SF_ASSIGN(Expr inner, mod(fromLin(linDivConst(rest, g)), c / g));
    return mul(constant(g), inner);
  }
  Expr inner = fromLin(rest);
  Interval b = inner->bounds;
  if (b.lo >= 0 && b.hi < c) return finishExpr(inner);
  return finishExpr(makeNode(ExprKind::Mod, c, std::span<const Expr>(&inner, 1)));
}

namespace {
/// Bounds of a sum with its floor divisions written out: k*(x//c) where c divides k is
/// (k/c)*x - (k/c)*(x mod c), with x mod c in [0, c - 1]; so L - 3*(L//3) is within [0, 2]
/// (interval arithmetic on the terms alone gives no bound). None where nothing is written out.
std::optional<Interval> floorAwareBounds(const Lin &d) {
  Lin acc;
  acc.c = d.c;
  Interval slack{0, 0};
  bool wrote = false;
  for (const Term &t : d.terms) {
    const Expr &m = t.mono;
    if (m->kind == ExprKind::FloorDiv && m->value > 0 && t.coef % m->value == 0) {
      const int64_t k = t.coef / m->value;
      auto next = linAxpy(acc, k, toLin(m->ops[0]));
      auto spread = checkedMul(k < 0 ? -k : k, m->value - 1);
      if (!next.ok() || !spread) return std::nullopt;
      acc = std::move(*next);
      slack = add(slack, k > 0 ? Interval{-*spread, 0} : Interval{0, *spread});
      wrote = true;
      continue;
    }
    Lin one;
    one.terms.push_back(t);
    auto next = linAxpy(acc, 1, one);
    if (!next.ok()) return std::nullopt;
    acc = std::move(*next);
  }
  if (!wrote) return std::nullopt;
  return add(fromLin(acc)->bounds, slack);
}
} // namespace

namespace expr_detail {
/// min (isMin) or max of a list: flattened, pairwise-dominated arguments dropped, sorted.
Result<Expr> minMax(bool isMin, std::vector<Expr> args) {
  for (Expr a : args)
    if (a->isFloat) return floatInIntegerMath();
  ExprKind kind = isMin ? ExprKind::Min : ExprKind::Max;
  std::vector<Expr> flat;
  for (Expr a : args) {
    if (a->kind == kind) flat.insert(flat.end(), a->ops.begin(), a->ops.end());
    else flat.push_back(a);
  }
  std::vector<Expr> kept;
  for (size_t i = 0; i < flat.size(); ++i) {
    bool dropped = false;
    for (size_t j = 0; j < flat.size() && !dropped; ++j) {
      if (i == j) continue;
      // Drop flat[i] when flat[j] always wins (ties broken by index so one of equals stays).
      // (the difference as a sum: its bounds are all this needs)
      auto d = linAxpy(toLin(flat[i]), -1, toLin(flat[j]));
      if (!d.ok()) continue;
      Interval b = fromLin(*d)->bounds;
      if ((isMin ? b.lo < 0 : b.hi > 0))
        if (auto f = floorAwareBounds(*d)) b = Interval{std::max(b.lo, f->lo), std::min(b.hi, f->hi)};
      bool jWins = isMin ? (b.lo >= 0) : (b.hi <= 0);
      bool equal = b.lo == 0 && b.hi == 0;
      if (jWins && (!equal || j < i)) dropped = true;
      // Absorption: max(a, min(a', b)) is a where a' <= a (and min(a, max(a', b)) where a' >= a):
      // an argument of the other kind with an operand flat[j] always wins against wins too.
      if (!dropped && flat[i]->kind == (isMin ? ExprKind::Max : ExprKind::Min))
        for (Expr o : flat[i]->ops) {
          auto od = linAxpy(toLin(o), -1, toLin(flat[j]));
          if (!od.ok()) continue;
          Interval ob = fromLin(*od)->bounds;
          if (isMin ? ob.lo >= 0 : ob.hi <= 0) {
            dropped = true;
            break;
          }
        }
    }
    if (!dropped) kept.push_back(flat[i]);
  }
  if (kept.size() == 1) return kept[0];
  std::sort(kept.begin(), kept.end(), [](Expr a, Expr b) { return compareExpr(a, b) < 0; });
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  if (kept.size() == 1) return kept[0];
  return finishExpr(makeNode(kind, 0, kept));
}
} // namespace expr_detail

Result<Expr> min(Expr a, Expr b) { return minMax(true, {a, b}); }
Result<Expr> max(Expr a, Expr b) { return minMax(false, {a, b}); }

Expr distributeMinMax(Expr e) {
  if (!e->hasMinMax) return e;
  if (e->kind == ExprKind::Min || e->kind == ExprKind::Max) {
    // Into the arguments: max(L - max(L - S, 0), 0) is max(min(S, L), 0), which is min(S, L).
    std::vector<Expr> args;
    bool changed = false;
    for (Expr a : e->ops) {
      args.push_back(distributeMinMax(a));
      changed = changed || args.back() != a;
    }
    if (!changed) return e;
    auto d = minMax(e->kind == ExprKind::Min, std::move(args));
    return d.ok() && (*d)->size < e->size ? *d : e;
  }
  if (e->kind != ExprKind::Add) return e;
  Lin l = toLin(e);
  size_t at = SIZE_MAX;
  for (size_t i = 0; i < l.terms.size(); ++i) {
    ExprKind k = l.terms[i].mono->kind;
    if (k != ExprKind::Min && k != ExprKind::Max) continue;
    if (at != SIZE_MAX) return e; // more than one
    at = i;
  }
  if (at == SIZE_MAX) return e;
  const Term &t = l.terms[at];
  if ((t.coef != 1 && t.coef != -1) || t.mono->ops.size() > 4) return e;
  Lin rest;
  rest.c = l.c;
  for (size_t i = 0; i < l.terms.size(); ++i)
    if (i != at) rest.terms.push_back(l.terms[i]);
  std::vector<Expr> args;
  for (Expr arg : t.mono->ops) {
    auto sum = linAxpy(rest, t.coef, toLin(arg));
    if (!sum.ok()) return e;
    args.push_back(distributeMinMax(capExpr(fromLin(*sum))));
  }
  bool isMin = (t.mono->kind == ExprKind::Min) == (t.coef == 1);
  auto d = minMax(isMin, std::move(args));
  if (!d.ok() || (*d)->size >= e->size) return e;
  return *d;
}

Result<Expr> divExact(Expr a, Expr b) {
  SF_INT_ONLY(a, b);
  if (isConst(b) && b->value == 0) return makeError("division by zero");
  if (a == b) return constant(1);
  Lin rem = toLin(a), quot, lb = toLin(b);
  if (lb.terms.empty()) {
    int64_t c = lb.c;
    if (c == -1) return neg(a);
    if (rem.c % c != 0) return makeError("not divisible");
    for (const Term &t : rem.terms)
      if (t.coef % c != 0) return makeError("not divisible");
    Lin r;
    r.c = rem.c / c;
    for (const Term &t : rem.terms) r.terms.push_back({t.mono, t.coef / c});
    return finish(r);
  }
  const Term *lead = leadingTerm(lb);
  Term lt = *lead;
  for (int iter = 0; iter < 256; ++iter) {
    if (rem.terms.empty()) {
      if (rem.c != 0) return makeError("not divisible");
      return finish(quot);
    }
    const Term *lr = leadingTerm(rem);
    auto m = divMono(lr->mono, lt.mono);
    if (!m || lr->coef % lt.coef != 0) return makeError("not divisible");
    int64_t k = lr->coef / lt.coef;
    Lin q;
    if (isConst(*m)) q.c = k;
    else q.terms.push_back({*m, k});
    SF_ASSIGN(quot, linAxpy(quot, 1, q));
    SF_ASSIGN(Lin qb, linMul(q, lb));
    SF_ASSIGN(rem, linAxpy(rem, -1, qb));
  }
  return makeError("not divisible");
}

Result<Expr> floorDivExpr(Expr a, Expr b) {
  SF_INT_ONLY(a, b);
  if (isConst(b)) {
    if (b->value > 0) return floorDiv(a, b->value);
    if (b->value == 0) return makeError("division by zero");
    if (isConst(a)) {
      auto q = checkedFloorDiv(a->value, b->value);
      if (!q) return overflow();
      return constant(*q);
    }
  }
  auto q = divExact(a, b);
  if (q.ok()) return q;
  return makeError("cannot express floor division symbolically");
}

} // namespace sf
