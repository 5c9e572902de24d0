// Canonical symbolic integer expressions: interning, simplification, bounds, printing.
//
// Working form for arithmetic is a linear combination `c + sum(coef_i * mono_i)` (Lin) whose
// monomials are products of atoms. Every public operation converts to Lin, combines, and turns
// the result back into an interned node; so a + b and b + a are the same pointer.
#include "shapeflow/dim/expr.h"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace sf {
namespace {

// ---------------------------------------------------------------- registry and interning
struct NodeHash {
  size_t operator()(const ExprNode *n) const { return n->hash; }
};
struct NodeEq {
  bool operator()(const ExprNode *a, const ExprNode *b) const {
    return a->kind == b->kind && a->value == b->value && a->sym == b->sym && a->ops == b->ops &&
           a->coefs == b->coefs;
  }
};

struct Registry {
  std::mutex mu;
  std::deque<ExprNode> nodes;
  std::unordered_set<const ExprNode *, NodeHash, NodeEq> table;
  std::deque<SymbolInfo> symbols;
  std::unordered_map<const ExprNode *, SymbolId> capped;
  std::atomic<uint64_t> capHits{0};
};

Registry &registry() {
  static Registry *r = new Registry(); // never destroyed: nodes outlive every static user
  return *r;
}

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

Interval computeBounds(const ExprNode &n);

Expr intern(ExprNode proto) {
  size_t h = mix(size_t(proto.kind), std::hash<int64_t>()(proto.value));
  h = mix(h, proto.sym);
  for (Expr o : proto.ops) h = mix(h, std::hash<const void *>()(o));
  for (int64_t c : proto.coefs) h = mix(h, std::hash<int64_t>()(c));
  proto.hash = h;
  uint32_t size = 1;
  bool anon = false;
  for (Expr o : proto.ops) size += o->size, anon = anon || o->hasAnonymous;
  proto.size = size;
  if (proto.kind == ExprKind::Sym) anon = symbolInfo(proto.sym).name.empty();
  proto.hasAnonymous = anon;
  proto.bounds = computeBounds(proto);
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.table.find(&proto);
  if (it != r.table.end()) return *it;
  r.nodes.push_back(std::move(proto));
  const ExprNode *n = &r.nodes.back();
  r.table.insert(n);
  return n;
}

Expr makeNode(ExprKind k, int64_t value, std::vector<Expr> ops, std::vector<int64_t> coefs = {}) {
  ExprNode n{};
  n.kind = k;
  n.value = value;
  n.sym = 0;
  n.ops = std::move(ops);
  n.coefs = std::move(coefs);
  return intern(std::move(n));
}

Interval computeBounds(const ExprNode &n) {
  switch (n.kind) {
  case ExprKind::Const: return Interval::point(n.value);
  case ExprKind::Sym: return symbolInfo(n.sym).range;
  case ExprKind::Add: {
    Interval b = Interval::point(n.value);
    for (size_t i = 0; i < n.ops.size(); ++i) b = add(b, scale(n.ops[i]->bounds, n.coefs[i]));
    return b;
  }
  case ExprKind::Mul: {
    Interval b = Interval::point(1);
    for (Expr o : n.ops) b = mul(b, o->bounds);
    return b;
  }
  case ExprKind::FloorDiv: return floorDiv(n.ops[0]->bounds, n.value);
  case ExprKind::Mod: return mod(n.ops[0]->bounds, n.value);
  case ExprKind::Min: {
    Interval b = n.ops[0]->bounds;
    for (Expr o : n.ops) b = min(b, o->bounds);
    return b;
  }
  case ExprKind::Max: {
    Interval b = n.ops[0]->bounds;
    for (Expr o : n.ops) b = max(b, o->bounds);
    return b;
  }
  }
  return {-kInf, kInf};
}

Error overflow() { return makeError("integer overflow in dimension arithmetic"); }

// ---------------------------------------------------------------- linear combinations
struct Term {
  Expr mono;
  int64_t coef;
};
struct Lin {
  int64_t c = 0;
  std::vector<Term> terms; // sorted by compareExpr(mono), no zero coefficients
};

Lin toLin(Expr e) {
  Lin l;
  if (e->kind == ExprKind::Const) {
    l.c = e->value;
  } else if (e->kind == ExprKind::Add) {
    l.c = e->value;
    for (size_t i = 0; i < e->ops.size(); ++i) l.terms.push_back({e->ops[i], e->coefs[i]});
  } else {
    l.terms.push_back({e, 1});
  }
  return l;
}

Expr fromLin(const Lin &l) {
  if (l.terms.empty()) return constant(l.c);
  if (l.c == 0 && l.terms.size() == 1 && l.terms[0].coef == 1) return l.terms[0].mono;
  std::vector<Expr> ops;
  std::vector<int64_t> coefs;
  for (const Term &t : l.terms) ops.push_back(t.mono), coefs.push_back(t.coef);
  return makeNode(ExprKind::Add, l.c, std::move(ops), std::move(coefs));
}

/// a + k*b
Result<Lin> linAxpy(const Lin &a, int64_t k, const Lin &b) {
  Lin r;
  auto kc = checkedMul(k, b.c);
  if (!kc) return overflow();
  auto c = checkedAdd(a.c, *kc);
  if (!c) return overflow();
  r.c = *c;
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    int cmp = i == a.terms.size()   ? 1
              : j == b.terms.size() ? -1
                                    : compareExpr(a.terms[i].mono, b.terms[j].mono);
    if (cmp < 0) {
      r.terms.push_back(a.terms[i++]);
      continue;
    }
    auto kb = checkedMul(k, b.terms[j].coef);
    if (!kb) return overflow();
    if (cmp > 0) {
      if (*kb != 0) r.terms.push_back({b.terms[j].mono, *kb});
      ++j;
      continue;
    }
    auto s = checkedAdd(a.terms[i].coef, *kb);
    if (!s) return overflow();
    if (*s != 0) r.terms.push_back({a.terms[i].mono, *s});
    ++i, ++j;
  }
  return r;
}

std::vector<Expr> factorsOf(Expr mono) {
  if (mono->kind == ExprKind::Mul) return mono->ops;
  return {mono};
}

Expr monoFromFactors(std::vector<Expr> f) {
  if (f.empty()) return constant(1);
  if (f.size() == 1) return f[0];
  std::sort(f.begin(), f.end(), [](Expr a, Expr b) { return compareExpr(a, b) < 0; });
  return makeNode(ExprKind::Mul, 0, std::move(f));
}

Expr mulMono(Expr a, Expr b) {
  auto fa = factorsOf(a), fb = factorsOf(b);
  fa.insert(fa.end(), fb.begin(), fb.end());
  return monoFromFactors(std::move(fa));
}

Result<Lin> linMul(const Lin &a, const Lin &b) {
  if (a.terms.size() * b.terms.size() > 4 * kMaxExprSize)
    return makeError("expression too large");
  Lin r;
  auto c = checkedMul(a.c, b.c);
  if (!c) return overflow();
  r.c = *c;
  auto addTerm = [&](Expr mono, int64_t coef) -> Result<void> {
    Lin t;
    t.terms.push_back({mono, coef});
    SF_ASSIGN(r, linAxpy(r, 1, t));
    return success();
  };
  for (const Term &ta : a.terms) {
    auto k = checkedMul(ta.coef, b.c);
    if (!k) return overflow();
    if (*k) SF_TRY(addTerm(ta.mono, *k));
    for (const Term &tb : b.terms) {
      auto kk = checkedMul(ta.coef, tb.coef);
      if (!kk) return overflow();
      SF_TRY(addTerm(mulMono(ta.mono, tb.mono), *kk));
    }
  }
  for (const Term &tb : b.terms) {
    auto k = checkedMul(a.c, tb.coef);
    if (!k) return overflow();
    if (*k) SF_TRY(addTerm(tb.mono, *k));
  }
  return r;
}

int64_t gcd64(int64_t a, int64_t b) {
  // std::gcd on INT64_MIN is undefined; dimension coefficients never get there in practice, but
  // keep this total.
  auto ua = uint64_t(a < 0 ? -(a + 1) + 1ULL : uint64_t(a));
  auto ub = uint64_t(b < 0 ? -(b + 1) + 1ULL : uint64_t(b));
  uint64_t g = std::gcd(ua, ub);
  return g > uint64_t(INT64_MAX) ? 1 : int64_t(g);
}

/// gcd of every coefficient and the constant and `c`.
int64_t linContent(const Lin &l, int64_t c) {
  int64_t g = gcd64(c, l.c);
  for (const Term &t : l.terms) g = gcd64(g, t.coef);
  return g;
}

Lin linDivConst(const Lin &l, int64_t g) {
  Lin r;
  r.c = l.c / g;
  for (const Term &t : l.terms) r.terms.push_back({t.mono, t.coef / g});
  return r;
}

/// The size cap: an expression past kMaxExprSize becomes a fresh bounded symbol (the same one
/// for the same expression, so equal inputs still give equal outputs).
Expr capExpr(Expr e) {
  if (e->size <= kMaxExprSize) return e;
  Registry &r = registry();
  std::optional<SymbolId> id;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.capped.find(e);
    if (it != r.capped.end()) id = it->second;
  }
  if (!id) {
    SymbolId s = newAnonymousSymbol(e->bounds);
    std::lock_guard<std::mutex> lock(r.mu);
    auto [it, inserted] = r.capped.emplace(e, s);
    if (inserted) r.capHits++;
    id = it->second;
  }
  return symbol(*id);
}

Result<Expr> finish(Result<Lin> l) {
  if (!l.ok()) return l.takeError();
  return capExpr(fromLin(*l));
}

Result<Expr> finishExpr(Expr e) { return capExpr(e); }

// ---------------------------------------------------------------- monomial order for division
int degree(Expr mono) { return mono->kind == ExprKind::Mul ? int(mono->ops.size()) : 1; }

/// Graded order over monomials, compatible with multiplication (needed for exact division).
int gradedCmp(Expr a, Expr b) {
  int da = degree(a), db = degree(b);
  if (da != db) return da < db ? -1 : 1;
  auto fa = factorsOf(a), fb = factorsOf(b);
  for (size_t i = fa.size(); i-- > 0;) {
    int c = compareExpr(fa[i], fb[i]);
    if (c) return c;
  }
  return 0;
}

/// mono / divisor when the divisor's factors are a sub-multiset of mono's.
std::optional<Expr> divMono(Expr mono, Expr divisor) {
  if (isConst(divisor)) return mono;
  auto fm = factorsOf(mono), fd = factorsOf(divisor);
  std::vector<Expr> rest;
  size_t j = 0;
  for (size_t i = 0; i < fm.size(); ++i) {
    if (j < fd.size() && fm[i] == fd[j]) {
      ++j;
      continue;
    }
    rest.push_back(fm[i]);
  }
  if (j != fd.size()) return std::nullopt;
  return monoFromFactors(std::move(rest));
}

const Term *leadingTerm(const Lin &l) {
  const Term *best = nullptr;
  for (const Term &t : l.terms)
    if (!best || gradedCmp(t.mono, best->mono) > 0) best = &t;
  return best;
}

} // namespace

// ---------------------------------------------------------------- symbols
SymbolId newSymbol(std::string name, Interval range) {
  // Ranges are kept as given (a capped expression may be negative); dims clamp at their level.
  if (range.hi < range.lo) range.hi = range.lo;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.symbols.push_back({std::move(name), range});
  return SymbolId(r.symbols.size() - 1);
}

SymbolId newAnonymousSymbol(Interval range) { return newSymbol("", range); }

const SymbolInfo &symbolInfo(SymbolId id) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.symbols.at(id);
}

size_t symbolCount() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.symbols.size();
}

uint64_t exprCapHits() { return registry().capHits.load(); }

// ---------------------------------------------------------------- construction
Expr constant(int64_t v) { return makeNode(ExprKind::Const, v, {}); }

Expr symbol(SymbolId id) {
  ExprNode n{};
  n.kind = ExprKind::Sym;
  n.value = 0;
  n.sym = id;
  return intern(std::move(n));
}

Result<Expr> add(Expr a, Expr b) { return finish(linAxpy(toLin(a), 1, toLin(b))); }
Result<Expr> sub(Expr a, Expr b) { return finish(linAxpy(toLin(a), -1, toLin(b))); }
Result<Expr> neg(Expr a) { return finish(linAxpy(Lin{}, -1, toLin(a))); }
Result<Expr> mul(Expr a, Expr b) { return finish(linMul(toLin(a), toLin(b))); }

Result<Expr> floorDiv(Expr a, int64_t c) {
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
      atom = makeNode(ExprKind::FloorDiv, c, {inner});
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
  return finishExpr(makeNode(ExprKind::Mod, c, {inner}));
}

namespace {
/// min (isMin) or max of a list: flattened, pairwise-dominated arguments dropped, sorted.
Result<Expr> minMax(bool isMin, std::vector<Expr> args) {
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
      auto d = sub(flat[i], flat[j]);
      if (!d.ok()) continue;
      Interval b = (*d)->bounds;
      bool jWins = isMin ? (b.lo >= 0) : (b.hi <= 0);
      bool equal = b.lo == 0 && b.hi == 0;
      if (jWins && (!equal || j < i)) dropped = true;
    }
    if (!dropped) kept.push_back(flat[i]);
  }
  if (kept.size() == 1) return kept[0];
  std::sort(kept.begin(), kept.end(), [](Expr a, Expr b) { return compareExpr(a, b) < 0; });
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  if (kept.size() == 1) return kept[0];
  return finishExpr(makeNode(kind, 0, std::move(kept)));
}
} // namespace

Result<Expr> min(Expr a, Expr b) { return minMax(true, {a, b}); }
Result<Expr> max(Expr a, Expr b) { return minMax(false, {a, b}); }

Result<Expr> divExact(Expr a, Expr b) {
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

// ---------------------------------------------------------------- queries
int compareExpr(Expr a, Expr b) {
  if (a == b) return 0;
  if (a->kind != b->kind) {
    // Order kinds so that plain symbols come before compound atoms in a product.
    auto rank = [](ExprKind k) {
      switch (k) {
      case ExprKind::Const: return 0;
      case ExprKind::Sym: return 1;
      case ExprKind::Mul: return 2;
      case ExprKind::FloorDiv: return 3;
      case ExprKind::Mod: return 4;
      case ExprKind::Min: return 5;
      case ExprKind::Max: return 6;
      case ExprKind::Add: return 7;
      }
      return 8;
    };
    return rank(a->kind) < rank(b->kind) ? -1 : 1;
  }
  if (a->kind == ExprKind::Sym) return a->sym < b->sym ? -1 : a->sym > b->sym ? 1 : 0;
  if (a->value != b->value) return a->value < b->value ? -1 : 1;
  size_t n = std::min(a->ops.size(), b->ops.size());
  for (size_t i = 0; i < n; ++i) {
    int c = compareExpr(a->ops[i], b->ops[i]);
    if (c) return c;
  }
  if (a->ops.size() != b->ops.size()) return a->ops.size() < b->ops.size() ? -1 : 1;
  for (size_t i = 0; i < a->coefs.size() && i < b->coefs.size(); ++i)
    if (a->coefs[i] != b->coefs[i]) return a->coefs[i] < b->coefs[i] ? -1 : 1;
  return a->coefs.size() < b->coefs.size() ? -1 : a->coefs.size() > b->coefs.size() ? 1 : 0;
}

Result<Expr> substitute(Expr e, const std::function<Expr(SymbolId)> &lookup) {
  std::unordered_map<Expr, Expr> memo;
  std::function<Result<Expr>(Expr)> go = [&](Expr x) -> Result<Expr> {
    auto it = memo.find(x);
    if (it != memo.end()) return it->second;
    Expr out = x;
    switch (x->kind) {
    case ExprKind::Const: break;
    case ExprKind::Sym:
      if (Expr r = lookup(x->sym)) out = r;
      break;
    case ExprKind::Add: {
      Expr acc = constant(x->value);
      for (size_t i = 0; i < x->ops.size(); ++i) {
        SF_ASSIGN(Expr t, go(x->ops[i]));
        SF_ASSIGN(Expr kt, mul(constant(x->coefs[i]), t));
        SF_ASSIGN(acc, add(acc, kt));
      }
      out = acc;
      break;
    }
    case ExprKind::Mul: {
      Expr acc = constant(1);
      for (Expr o : x->ops) {
        SF_ASSIGN(Expr t, go(o));
        SF_ASSIGN(acc, mul(acc, t));
      }
      out = acc;
      break;
    }
    case ExprKind::FloorDiv: {
      SF_ASSIGN(Expr t, go(x->ops[0]));
      SF_ASSIGN(out, floorDiv(t, x->value));
      break;
    }
    case ExprKind::Mod: {
      SF_ASSIGN(Expr t, go(x->ops[0]));
      SF_ASSIGN(out, mod(t, x->value));
      break;
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      std::vector<Expr> args;
      for (Expr o : x->ops) {
        SF_ASSIGN(Expr t, go(o));
        args.push_back(t);
      }
      SF_ASSIGN(out, minMax(x->kind == ExprKind::Min, std::move(args)));
      break;
    }
    }
    memo.emplace(x, out);
    return out;
  };
  return go(e);
}

Result<int64_t> evaluate(Expr e,
                         const std::function<std::optional<int64_t>(SymbolId)> &value) {
  switch (e->kind) {
  case ExprKind::Const: return e->value;
  case ExprKind::Sym: {
    auto v = value(e->sym);
    if (!v) return makeError("no value for symbol " + toString(e));
    return *v;
  }
  case ExprKind::Add: {
    int64_t acc = e->value;
    for (size_t i = 0; i < e->ops.size(); ++i) {
      SF_ASSIGN(int64_t t, evaluate(e->ops[i], value));
      auto kt = checkedMul(e->coefs[i], t);
      if (!kt) return overflow();
      auto s = checkedAdd(acc, *kt);
      if (!s) return overflow();
      acc = *s;
    }
    return acc;
  }
  case ExprKind::Mul: {
    int64_t acc = 1;
    for (Expr o : e->ops) {
      SF_ASSIGN(int64_t t, evaluate(o, value));
      auto p = checkedMul(acc, t);
      if (!p) return overflow();
      acc = *p;
    }
    return acc;
  }
  case ExprKind::FloorDiv: {
    SF_ASSIGN(int64_t t, evaluate(e->ops[0], value));
    return *checkedFloorDiv(t, e->value);
  }
  case ExprKind::Mod: {
    SF_ASSIGN(int64_t t, evaluate(e->ops[0], value));
    return *checkedMod(t, e->value);
  }
  case ExprKind::Min:
  case ExprKind::Max: {
    std::optional<int64_t> acc;
    for (Expr o : e->ops) {
      SF_ASSIGN(int64_t t, evaluate(o, value));
      if (!acc) acc = t;
      else acc = e->kind == ExprKind::Min ? std::min(*acc, t) : std::max(*acc, t);
    }
    return *acc;
  }
  }
  return makeError("bad expression");
}

std::vector<SymbolId> symbolsOf(Expr e) {
  std::vector<SymbolId> out;
  std::vector<Expr> stack{e};
  while (!stack.empty()) {
    Expr x = stack.back();
    stack.pop_back();
    if (x->kind == ExprKind::Sym) out.push_back(x->sym);
    for (Expr o : x->ops) stack.push_back(o);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---------------------------------------------------------------- printing
namespace {
using AnonFn = std::function<std::string(SymbolId)>;

std::string print(Expr e, const AnonFn &anon);

/// An atom as a factor of a product: floor division and modulo need parentheses there,
/// because Python reads `2*N//2` as `(2*N)//2`.
std::string printFactor(Expr e, const AnonFn &anon) {
  std::string s = print(e, anon);
  if (e->kind == ExprKind::FloorDiv || e->kind == ExprKind::Mod || e->kind == ExprKind::Add)
    return "(" + s + ")";
  return s;
}

std::string printMono(Expr m, const AnonFn &anon) {
  if (m->kind != ExprKind::Mul) return printFactor(m, anon);
  std::string s;
  for (size_t i = 0; i < m->ops.size(); ++i) {
    if (i) s += "*";
    s += printFactor(m->ops[i], anon);
  }
  return s;
}

std::string print(Expr e, const AnonFn &anon) {
  switch (e->kind) {
  case ExprKind::Const: return std::to_string(e->value);
  case ExprKind::Sym: {
    const SymbolInfo &info = symbolInfo(e->sym);
    return info.name.empty() ? anon(e->sym) : info.name;
  }
  case ExprKind::Mul: return printMono(e, anon);
  case ExprKind::Add: {
    std::string s;
    bool first = true;
    auto emit = [&](int64_t coef, const std::string &body) {
      bool negative = coef < 0;
      uint64_t mag = negative ? uint64_t(0) - uint64_t(coef) : uint64_t(coef);
      if (first) s += negative ? "-" : "";
      else s += negative ? " - " : " + ";
      first = false;
      if (body.empty()) s += std::to_string(mag);
      else if (mag == 1) s += body;
      else s += std::to_string(mag) + "*" + body;
    };
    for (size_t i = 0; i < e->ops.size(); ++i) {
      // `a + b//2` needs no parentheses; `3*(b//2)` does.
      Expr m = e->ops[i];
      bool bare = std::abs(e->coefs[i]) == 1 && m->kind != ExprKind::Mul;
      // A leading minus binds tighter than // and % in Python: `-N//2` is `(-N)//2`.
      if (bare && first && e->coefs[i] < 0) bare = m->kind != ExprKind::FloorDiv && m->kind != ExprKind::Mod;
      emit(e->coefs[i], bare ? print(m, anon) : printMono(m, anon));
    }
    if (e->value != 0) emit(e->value, "");
    return s;
  }
  case ExprKind::FloorDiv:
  case ExprKind::Mod: {
    Expr in = e->ops[0];
    std::string inner = print(in, anon);
    if (in->kind == ExprKind::Add) inner = "(" + inner + ")";
    return inner + (e->kind == ExprKind::FloorDiv ? "//" : " % ") + std::to_string(e->value);
  }
  case ExprKind::Min:
  case ExprKind::Max: {
    // Constants sort first canonically but read better last: `min(T, 512)`.
    std::string s = e->kind == ExprKind::Min ? "min(" : "max(";
    std::vector<Expr> args(e->ops.begin(), e->ops.end());
    std::stable_partition(args.begin(), args.end(), [](Expr a) { return !isConst(a); });
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) s += ", ";
      s += print(args[i], anon);
    }
    return s + ")";
  }
  }
  return "?";
}
} // namespace

std::string toString(Expr e) {
  return print(e, [](SymbolId) { return std::string("?"); });
}
std::string toString(Expr e, const std::function<std::string(SymbolId)> &anon) {
  return print(e, anon);
}

} // namespace sf
