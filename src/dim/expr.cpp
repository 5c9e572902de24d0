// Canonical symbolic integer expressions: interning, simplification, bounds, printing.
//
// Working form for arithmetic is a linear combination `c + sum(coef_i * mono_i)` (Lin) whose
// monomials are products of atoms. Every public operation converts to Lin, combines, and turns
// the result back into an interned node; so a + b and b + a are the same pointer.
#include "shapeflow/dim/expr.h"

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
namespace {

// ---------------------------------------------------------------- registry and interning
/// The identity of a node (what interning compares), with its operands viewed in place, so a
/// lookup that finds the node allocates nothing.
struct NodeKey {
  ExprKind kind;
  int64_t value;
  SymbolId sym;
  FloatPrec prec;
  std::span<const Expr> ops;
  std::span<const int64_t> coefs;
  size_t hash;
};
NodeKey keyOf(const ExprNode &n) {
  return {n.kind, n.value, n.sym, n.prec, n.ops, n.coefs, n.hash};
}
struct NodeHash {
  using is_transparent = void;
  size_t operator()(const ExprNode *n) const { return n->hash; }
  size_t operator()(const NodeKey &k) const { return k.hash; }
};
struct NodeEq {
  using is_transparent = void;
  static bool same(const NodeKey &a, const NodeKey &b) {
    return a.kind == b.kind && a.value == b.value && a.sym == b.sym && a.prec == b.prec &&
           std::equal(a.ops.begin(), a.ops.end(), b.ops.begin(), b.ops.end()) &&
           std::equal(a.coefs.begin(), a.coefs.end(), b.coefs.begin(), b.coefs.end());
  }
  bool operator()(const ExprNode *a, const ExprNode *b) const { return same(keyOf(*a), keyOf(*b)); }
  bool operator()(const NodeKey &a, const ExprNode *b) const { return same(a, keyOf(*b)); }
  bool operator()(const ExprNode *a, const NodeKey &b) const { return same(keyOf(*a), b); }
};

} // namespace

/// Where nodes and symbols live (expr.h "Lifetime").
class ExprContext {
public:
  ExprContext() { ++gContexts; }
  ~ExprContext() {
    --gContexts;
    gNodes -= nodes.size() + symbols.size();
  }
  std::mutex mu;
  std::deque<ExprNode> nodes;
  std::unordered_set<const ExprNode *, NodeHash, NodeEq> table;
  std::deque<SymbolInfo> symbols;
  std::unordered_map<const ExprNode *, SymbolId> capped;
  std::unordered_map<const ExprNode *, Expr> split; // simplifyClamps' results
  std::atomic<uint64_t> capHits{0};

  static inline std::atomic<size_t> gContexts{0}, gNodes{0};
};

namespace {

ExprContext &defaultContext() {
  static ExprContext *c = new ExprContext(); // never destroyed: the small constants live here
  return *c;
}

thread_local ExprContext *tCurrent = nullptr;

ExprContext &registry() { return tCurrent ? *tCurrent : defaultContext(); }

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

Interval computeBounds(const ExprNode &n);
void computeFloatBounds(ExprNode &n);

bool isFloatKind(ExprKind k) { return k >= ExprKind::FConst && k <= ExprKind::FMax; }

size_t hashKey(const NodeKey &k) {
  size_t h = mix(size_t(k.kind), std::hash<int64_t>()(k.value));
  h = mix(h, k.sym);
  h = mix(h, size_t(k.prec));
  for (Expr o : k.ops) h = mix(h, std::hash<const void *>()(o));
  for (int64_t c : k.coefs) h = mix(h, std::hash<int64_t>()(c));
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
              std::span<const int64_t> coefs = {}) {
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

// ---------------------------------------------------------------- float bounds
constexpr double kDInf = std::numeric_limits<double>::infinity();

/// Lower and upper real bounds of any node (an integer node's interval, a float node's range).
double realLo(Expr e) {
  if (e->isFloat) return e->flo;
  return e->bounds.lo == -kInf ? -kDInf : double(e->bounds.lo);
}
double realHi(Expr e) {
  if (e->isFloat) return e->fhi;
  return e->bounds.hi == kInf ? kDInf : double(e->bounds.hi);
}

/// Rounded outward by more than the rounding of one operation in `p` (including the conversion
/// of its operands), so that the bounds hold for the value the runtime computes.
void widen(double &lo, double &hi, FloatPrec p) {
  double eps = p == FloatPrec::F32 ? 0x1p-21 : 0x1p-50;
  double tiny = p == FloatPrec::F32 ? 1e-37 : 1e-300;
  if (std::isnan(lo) || std::isnan(hi)) {
    lo = -kDInf, hi = kDInf;
    return;
  }
  // Rounding never changes a sign, so a non-negative range stays non-negative.
  bool nonNegative = lo >= 0, nonPositive = hi <= 0;
  lo = lo - std::fabs(lo) * eps - tiny;
  hi = hi + std::fabs(hi) * eps + tiny;
  if (nonNegative) lo = std::max(lo, 0.0);
  if (nonPositive) hi = std::min(hi, 0.0);
}

double bitsToDouble(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
int64_t doubleToBits(double d) {
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

void computeFloatBounds(ExprNode &n) {
  if (n.kind == ExprKind::FConst) {
    n.flo = n.fhi = bitsToDouble(n.value);
    return;
  }
  double alo = realLo(n.ops[0]), ahi = realHi(n.ops[0]);
  double blo = realLo(n.ops[1]), bhi = realHi(n.ops[1]);
  double lo = -kDInf, hi = kDInf;
  auto hullOf = [&](std::initializer_list<double> xs) {
    lo = kDInf, hi = -kDInf;
    for (double x : xs) {
      if (std::isnan(x)) { // 0 * inf: unbounded
        lo = -kDInf, hi = kDInf;
        return;
      }
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
  };
  switch (n.kind) {
  case ExprKind::FAdd: lo = alo + blo, hi = ahi + bhi; break;
  case ExprKind::FSub: lo = alo - bhi, hi = ahi - blo; break;
  case ExprKind::FMul: {
    // An infinite end stands for "unbounded" over finite values: 0 times it is 0, not NaN.
    auto m = [](double x, double y) { return x == 0 || y == 0 ? 0.0 : x * y; };
    hullOf({m(alo, blo), m(alo, bhi), m(ahi, blo), m(ahi, bhi)});
    break;
  }
  case ExprKind::FDiv:
    if (blo > 0 || bhi < 0) hullOf({alo / blo, alo / bhi, ahi / blo, ahi / bhi});
    break;
  case ExprKind::FMin: lo = std::min(alo, blo), hi = std::min(ahi, bhi); break;
  case ExprKind::FMax: lo = std::max(alo, blo), hi = std::max(ahi, bhi); break;
  default: break;
  }
  widen(lo, hi, n.prec);
  n.flo = lo, n.fhi = hi;
}

/// The integer hull of a real range, saturated to [-kInf, kInf].
int64_t toIntBound(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return kInf;
  if (v <= -9.2e18) return -kInf;
  return int64_t(v);
}

double applyRound(RoundMode m, double v) {
  switch (m) {
  case RoundMode::Floor: return std::floor(v);
  case RoundMode::Ceil: return std::ceil(v);
  case RoundMode::Trunc: return std::trunc(v);
  case RoundMode::HalfEven: return std::nearbyint(v); // default rounding mode: half to even
  }
  return v;
}

/// Bounds of a sum of monomials after writing each atom x as x' + lo(x) with x' >= 0 and
/// expanding: 16*a*b + 16*a + 16*b + 16 with a, b >= -1 (ceil-like atoms (F - 1)//32 of sizes
/// that may be 0) is 16*a'*b' >= 0, which interval arithmetic on the terms cannot see. Returns
/// the unbounded interval when it does not apply (an atom unbounded below, a high degree, an
/// overflow).
Interval shiftedSumBounds(const ExprNode &n) {
  const Interval all{-kInf, kInf};
  constexpr size_t kMaxDegree = 6;
  std::map<std::vector<Expr>, int64_t> terms; // shifted monomial (sorted atoms) -> coefficient
  int64_t c0 = n.value;
  for (size_t i = 0; i < n.ops.size(); ++i) {
    Expr m = n.ops[i];
    std::vector<Expr> f = m->kind == ExprKind::Mul ? m->ops : std::vector<Expr>{m};
    if (f.size() > kMaxDegree) return all;
    for (Expr x : f)
      if (x->bounds.lo == -kInf) return all;
    // prod (x'_j + lo_j) = sum over subsets of the x' taken, times the lo's not taken.
    for (uint32_t mask = 0; mask < (1u << f.size()); ++mask) {
      std::optional<int64_t> coef = n.coefs[i];
      std::vector<Expr> taken;
      for (size_t j = 0; j < f.size() && coef; ++j) {
        if (mask & (1u << j)) taken.push_back(f[j]);
        else coef = checkedMul(*coef, f[j]->bounds.lo);
      }
      if (!coef) return all;
      if (*coef == 0) continue;
      if (taken.empty()) {
        auto s = checkedAdd(c0, *coef);
        if (!s) return all;
        c0 = *s;
        continue;
      }
      int64_t &slot = terms[taken];
      auto s = checkedAdd(slot, *coef);
      if (!s) return all;
      slot = *s;
    }
  }
  Interval b = Interval::point(c0);
  for (const auto &[atoms, coef] : terms) {
    Interval t = Interval::point(1);
    for (Expr x : atoms) {
      int64_t w = x->bounds.hi == kInf ? kInf : satAdd(x->bounds.hi, -x->bounds.lo);
      t = mul(t, Interval{0, w});
    }
    b = add(b, scale(t, coef));
  }
  return b;
}

Interval computeBounds(const ExprNode &n) {
  if (n.isFloat) return {toIntBound(std::floor(n.flo)), toIntBound(std::ceil(n.fhi))};
  switch (n.kind) {
  case ExprKind::Round: {
    auto m = RoundMode(n.value);
    return {toIntBound(applyRound(m, n.ops[0]->flo)), toIntBound(applyRound(m, n.ops[0]->fhi))};
  }
  case ExprKind::Const: return Interval::point(n.value);
  case ExprKind::Sym:
    return n.symInfo->range;
  case ExprKind::Add: {
    Interval b = Interval::point(n.value);
    for (size_t i = 0; i < n.ops.size(); ++i) b = add(b, scale(n.ops[i]->bounds, n.coefs[i]));
    if (b.lo < 0) b = b.intersect(shiftedSumBounds(n)); // both are sound: keep the tighter
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
  default: break;
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
  SmallVec<Term, 6> terms; // sorted by compareExpr(mono), no zero coefficients
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
  SmallVec<Expr, 6> ops;
  SmallVec<int64_t, 6> coefs;
  for (const Term &t : l.terms) ops.push_back(t.mono), coefs.push_back(t.coef);
  return makeNode(ExprKind::Add, l.c, ops, coefs);
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
  return makeNode(ExprKind::Mul, 0, f);
}

Expr mulMono(Expr a, Expr b) {
  // The factors of both, merged in order (each side is already sorted).
  auto factors = [](const Expr &m) {
    return m->kind == ExprKind::Mul ? std::span<const Expr>(m->ops) : std::span<const Expr>(&m, 1);
  };
  auto fa = factors(a), fb = factors(b);
  SmallVec<Expr, 8> f;
  f.reserve(fa.size() + fb.size());
  size_t i = 0, j = 0;
  while (i < fa.size() || j < fb.size()) {
    if (j == fb.size() || (i < fa.size() && compareExpr(fa[i], fb[j]) <= 0)) f.push_back(fa[i++]);
    else f.push_back(fb[j++]);
  }
  return makeNode(ExprKind::Mul, 0, f);
}

Result<Lin> linMul(const Lin &a, const Lin &b) {
  if (a.terms.size() * b.terms.size() > kMaxProductTerms)
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
  r.terms.reserve(a.terms.size() * b.terms.size() + a.terms.size() + b.terms.size());
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
  if (e->size <= kMaxExprSize && !(e->kind == ExprKind::Add && e->ops.size() > kMaxTerms))
    return e;
  ExprContext &r = registry();
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
  return finishExpr(makeNode(kind, 0, kept));
}
} // namespace

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

// ---------------------------------------------------------------- float shape math
namespace {
double toPrec(double v, FloatPrec p) { return p == FloatPrec::F32 ? double(float(v)) : v; }

std::optional<double> knownNumber(Expr e) {
  if (e->kind == ExprKind::Const) return double(e->value);
  if (e->kind == ExprKind::FConst) return bitsToDouble(e->value);
  return std::nullopt;
}

double applyFloatOp(FloatOp op, double a, double b) {
  switch (op) {
  case FloatOp::Add: return a + b;
  case FloatOp::Sub: return a - b;
  case FloatOp::Mul: return a * b;
  case FloatOp::Div: return a / b;
  case FloatOp::Min: return std::min(a, b);
  case FloatOp::Max: return std::max(a, b);
  }
  return a;
}

ExprKind kindOf(FloatOp op) {
  switch (op) {
  case FloatOp::Add: return ExprKind::FAdd;
  case FloatOp::Sub: return ExprKind::FSub;
  case FloatOp::Mul: return ExprKind::FMul;
  case FloatOp::Div: return ExprKind::FDiv;
  case FloatOp::Min: return ExprKind::FMin;
  case FloatOp::Max: return ExprKind::FMax;
  }
  return ExprKind::FAdd;
}

FloatOp opOf(ExprKind k) {
  switch (k) {
  case ExprKind::FSub: return FloatOp::Sub;
  case ExprKind::FMul: return FloatOp::Mul;
  case ExprKind::FDiv: return FloatOp::Div;
  case ExprKind::FMin: return FloatOp::Min;
  case ExprKind::FMax: return FloatOp::Max;
  default: return FloatOp::Add;
  }
}

/// `e` used as an operand in precision `p` keeps its value: an integer, or a float of `p`.
bool sameValueIn(Expr e, FloatPrec p) { return !e->isFloat || e->prec == p; }

Error notFinite() { return makeError("float shape math gives a value that is not finite"); }
} // namespace

Result<Expr> floatConstant(double v, FloatPrec p) {
  if (p == FloatPrec::None) return makeError("a float constant needs a precision");
  v = toPrec(v, p);
  if (!std::isfinite(v)) return notFinite();
  if (std::trunc(v) == v && std::fabs(v) < 0x1p62) return constant(int64_t(v));
  ExprNode n{};
  n.kind = ExprKind::FConst;
  n.value = doubleToBits(v);
  n.prec = p;
  return intern(std::move(n));
}

Result<Expr> integerArith(FloatOp op, Expr a, Expr b) {
  switch (op) {
  case FloatOp::Add: return add(a, b);
  case FloatOp::Sub: return sub(a, b);
  case FloatOp::Mul: return mul(a, b);
  case FloatOp::Min: return min(a, b);
  case FloatOp::Max: return max(a, b);
  case FloatOp::Div: return divExact(a, b);
  }
  return makeError("unknown integer operation");
}

Result<Expr> floatOp(FloatOp op, Expr a, Expr b, FloatPrec p) {
  if (p == FloatPrec::None) return makeError("float arithmetic needs a precision");
  auto ka = knownNumber(a), kb = knownNumber(b);
  if (ka && kb) {
    double x = toPrec(*ka, p), y = toPrec(*kb, p);
    if (op == FloatOp::Div && y == 0) return makeError("division by zero in float shape math");
    return floatConstant(applyFloatOp(op, x, y), p);
  }
  if (!a->isFloat && !b->isFloat) {
    // Integers stand for themselves in float math (exact below 2^24 in f32).
    auto r = integerArith(op, a, b);
    if (op != FloatOp::Div || r.ok()) return r;
  }
  if (kb && *kb == 0 && op == FloatOp::Div) return makeError("division by zero in float shape math");
  // Identities that hold for every float (the value of x * 1.0 is x), when the other operand
  // keeps its value in this precision.
  auto is = [](const std::optional<double> &k, double v) { return k && *k == v; };
  if (op == FloatOp::Mul && is(ka, 1) && sameValueIn(b, p)) return b;
  if ((op == FloatOp::Mul || op == FloatOp::Div) && is(kb, 1) && sameValueIn(a, p)) return a;
  if (op == FloatOp::Add && is(ka, 0) && sameValueIn(b, p)) return b;
  if ((op == FloatOp::Add || op == FloatOp::Sub) && is(kb, 0) && sameValueIn(a, p)) return a;
  if ((op == FloatOp::Min || op == FloatOp::Max) && sameValueIn(a, p) && sameValueIn(b, p)) {
    if (a == b) return a;
    bool aBelow = realHi(a) <= realLo(b), bBelow = realHi(b) <= realLo(a);
    if (aBelow) return op == FloatOp::Min ? a : b;
    if (bBelow) return op == FloatOp::Min ? b : a;
  }
  bool commutative = op == FloatOp::Add || op == FloatOp::Mul || op == FloatOp::Min ||
                     op == FloatOp::Max;
  if (commutative && compareExpr(a, b) > 0) std::swap(a, b);
  ExprNode n{};
  n.kind = kindOf(op);
  n.prec = p;
  n.ops = {a, b};
  Expr e = intern(std::move(n));
  // A float value cannot become a bounded integer symbol: past the cap it is not expressed.
  if (e->size > kMaxExprSize) return makeError("float expression too large");
  return e;
}

Result<Expr> roundToInt(RoundMode m, Expr a) {
  if (!a->isFloat) return a;
  if (a->kind == ExprKind::FConst) {
    double r = applyRound(m, bitsToDouble(a->value));
    if (!(std::fabs(r) < 0x1p62)) return notFinite();
    return constant(int64_t(r));
  }
  if (m == RoundMode::Trunc && a->flo >= 0) m = RoundMode::Floor;
  else if (m == RoundMode::Trunc && a->fhi <= 0) m = RoundMode::Ceil;
  // floor / ceil of an integer over a positive integer: the float quotient never rounds across
  // an integer while both are exact in the precision (below 2^24 in f32), so it is a // c.
  if ((m == RoundMode::Floor || m == RoundMode::Ceil) && a->kind == ExprKind::FDiv &&
      !a->ops[0]->isFloat && isConst(a->ops[1]) && a->ops[1]->value > 0) {
    return m == RoundMode::Floor ? floorDiv(a->ops[0], a->ops[1]->value)
                                 : ceilDiv(a->ops[0], a->ops[1]->value);
  }
  ExprNode n{};
  n.kind = ExprKind::Round;
  n.value = int64_t(m);
  n.ops = {a};
  Expr e = intern(std::move(n));
  if (e->bounds.isPoint() && e->bounds.lo != kInf && e->bounds.lo != -kInf)
    return constant(e->bounds.lo);
  return capExpr(e);
}

namespace {
Result<double> evalFloatIn(Expr e, FloatPrec p,
                           const std::function<std::optional<int64_t>(SymbolId)> &value) {
  if (!e->isFloat) {
    SF_ASSIGN(int64_t v, evaluate(e, value));
    return toPrec(double(v), p);
  }
  if (e->kind == ExprKind::FConst) return toPrec(bitsToDouble(e->value), p);
  SF_ASSIGN(double a, evalFloatIn(e->ops[0], e->prec, value));
  SF_ASSIGN(double b, evalFloatIn(e->ops[1], e->prec, value));
  return toPrec(toPrec(applyFloatOp(opOf(e->kind), a, b), e->prec), p);
}
} // namespace

Result<double> evaluateFloat(Expr e,
                             const std::function<std::optional<int64_t>(SymbolId)> &value) {
  // An integer read in f64 is itself (toPrec leaves doubles alone).
  return evalFloatIn(e, e->isFloat ? e->prec : FloatPrec::F64, value);
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
      case ExprKind::Round: return 7;
      case ExprKind::Add: return 8;
      default: return 9 + int(k) - int(ExprKind::FConst); // float kinds last
      }
    };
    return rank(a->kind) < rank(b->kind) ? -1 : 1;
  }
  if (a->kind == ExprKind::Sym) return a->sym < b->sym ? -1 : a->sym > b->sym ? 1 : 0;
  if (a->value != b->value) return a->value < b->value ? -1 : 1;
  if (a->prec != b->prec) return a->prec < b->prec ? -1 : 1;
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
    case ExprKind::FConst: break;
    case ExprKind::FAdd:
    case ExprKind::FSub:
    case ExprKind::FMul:
    case ExprKind::FDiv:
    case ExprKind::FMin:
    case ExprKind::FMax: {
      SF_ASSIGN(Expr a, go(x->ops[0]));
      SF_ASSIGN(Expr b, go(x->ops[1]));
      SF_ASSIGN(out, floatOp(opOf(x->kind), a, b, x->prec));
      break;
    }
    case ExprKind::Round: {
      SF_ASSIGN(Expr t, go(x->ops[0]));
      SF_ASSIGN(out, roundToInt(RoundMode(x->value), t));
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
  case ExprKind::Round: {
    SF_ASSIGN(double v, evaluateFloat(e->ops[0], value));
    double r = applyRound(RoundMode(e->value), v);
    if (!(std::fabs(r) < 0x1p62)) return notFinite();
    return int64_t(r);
  }
  default: return makeError("a float expression has no integer value: " + toString(e));
  }
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

// ---------------------------------------------------------------- range split
// Clamps (min/max) of one symbol often cancel: the lengths of torch.roll's two slices,
// max(P - 3, 0) + max(P - max(P - 3, 0), 0), add up to P for every P >= 0, but no rewrite of
// the terms shows it. For an expression of a single symbol S in [lo, hi] with min/max inside:
// re-canonicalize it with S narrowed to [K, hi] (the clamps resolve there), and keep that form
// when it is smaller and equals the expression at every S in [lo, K) (checked by evaluating
// each one). Sound: on [K, hi] the narrowed form is the expression's canonical form under the
// narrower range, on [lo, K) the values were compared one by one.
namespace {
thread_local bool tInSplit = false;

Expr trySplit(Expr e) {
  SymbolId s = e->onlySym;
  SymbolInfo info = symbolInfo(s);
  Interval r = info.range;
  if (r.lo == -kInf || r.lo < -(int64_t(1) << 40) || r.lo > (int64_t(1) << 40)) return e;
  for (int64_t span : {64, 1024}) {
    int64_t k = r.lo + span;
    if (r.hi != kInf && k > r.hi) return e;
    SymbolId narrow = newSymbol(info.name, {k, r.hi});
    auto e1 = substitute(e, [&](SymbolId x) -> Expr { return x == s ? symbol(narrow) : nullptr; });
    if (!e1.ok() || (*e1)->hasMinMax) continue;
    auto back = substitute(*e1, [&](SymbolId x) -> Expr { return x == narrow ? symbol(s) : nullptr; });
    if (!back.ok() || (*back)->size >= e->size || (*back)->hasMinMax) continue;
    for (int64_t v = r.lo; v < k; ++v) {
      auto at = [&](SymbolId) -> std::optional<int64_t> { return v; };
      auto a = evaluate(e, at), b = evaluate(*back, at);
      if (a.ok() != b.ok() || (a.ok() && *a != *b)) return e;
    }
    return *back;
  }
  return e;
}
} // namespace

Expr simplifyClamps(Expr e) {
  if (!e->hasMinMax || e->onlySym >= kManySymbols || e->isFloat || tInSplit) return e;
  ExprContext &r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.split.find(e);
    if (it != r.split.end()) return it->second;
  }
  tInSplit = true;
  Expr out = trySplit(e);
  tInSplit = false;
  std::lock_guard<std::mutex> lock(r.mu);
  r.split.emplace(e, out);
  return out;
}

// ---------------------------------------------------------------- printing
namespace {
using AnonFn = std::function<std::string(SymbolId)>;

std::string print(Expr e, const AnonFn &anon);
std::string printAny(Expr e, const AnonFn &anon, FloatPrec ctx);

/// The shortest decimal that reads back as the same value of its precision, with a point or an
/// exponent so that it reads as a float.
std::string floatLiteral(double v, FloatPrec p) {
  char buf[64];
  int maxDigits = p == FloatPrec::F32 ? 9 : 17;
  for (int d = 1; d <= maxDigits; ++d) {
    std::snprintf(buf, sizeof buf, "%.*g", d, v);
    double back = std::strtod(buf, nullptr);
    if (toPrec(back, p) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

const char *roundName(RoundMode m) {
  switch (m) {
  case RoundMode::Floor: return "floor";
  case RoundMode::Ceil: return "ceil";
  case RoundMode::Trunc: return "trunc";
  case RoundMode::HalfEven: return "round";
  }
  return "floor";
}

/// An operand of a float operator: compound ones in parentheses (a different precision is
/// parenthesised by its f32(..)/f64(..) already).
std::string printOperand(Expr e, const AnonFn &anon, FloatPrec ctx) {
  std::string s = printAny(e, anon, ctx);
  bool compound = false;
  switch (e->kind) {
  case ExprKind::Add:
  case ExprKind::Mul:
  case ExprKind::FloorDiv:
  case ExprKind::Mod: compound = true; break;
  case ExprKind::FAdd:
  case ExprKind::FSub:
  case ExprKind::FMul:
  case ExprKind::FDiv: compound = e->prec == ctx; break;
  default: break;
  }
  return compound ? "(" + s + ")" : s;
}

std::string printFloat(Expr e, const AnonFn &anon, FloatPrec ctx) {
  if (e->prec != ctx)
    return std::string(e->prec == FloatPrec::F64 ? "f64(" : "f32(") + printFloat(e, anon, e->prec) +
           ")";
  switch (e->kind) {
  case ExprKind::FConst: return floatLiteral(bitsToDouble(e->value), e->prec);
  case ExprKind::FMin:
  case ExprKind::FMax:
    return std::string(e->kind == ExprKind::FMin ? "min(" : "max(") + printAny(e->ops[0], anon, ctx) +
           ", " + printAny(e->ops[1], anon, ctx) + ")";
  default: break;
  }
  const char *op = e->kind == ExprKind::FAdd   ? " + "
                   : e->kind == ExprKind::FSub ? " - "
                   : e->kind == ExprKind::FMul ? " * "
                                               : " / ";
  return printOperand(e->ops[0], anon, ctx) + op + printOperand(e->ops[1], anon, ctx);
}

std::string printAny(Expr e, const AnonFn &anon, FloatPrec ctx) {
  return e->isFloat ? printFloat(e, anon, ctx) : print(e, anon);
}

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
    const SymbolInfo &info = *e->symInfo;
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
  case ExprKind::Round:
    return std::string(roundName(RoundMode(e->value))) + "(" +
           printAny(e->ops[0], anon, FloatPrec::F32) + ")";
  default: return printFloat(e, anon, FloatPrec::F32);
  }
}
} // namespace

std::string toString(Expr e) {
  return print(e, [](SymbolId) { return std::string("?"); });
}
std::string toString(Expr e, const std::function<std::string(SymbolId)> &anon) {
  return print(e, anon);
}

} // namespace sf
