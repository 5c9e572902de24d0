// Linear combinations (Lin): the working form of the integer arithmetic, and the graded monomial
// order that exact division needs.
#include "expr_internal.h"
#include "shapeflow/dim/expr.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "shapeflow/support/small_vec.h"

namespace sf {
using namespace expr_detail;

namespace expr_detail {

// ---------------------------------------------------------------- linear combinations

Lin toLin(Expr e) {
  Lin l;
  if (e->kind == ExprKind::Const) {
    l.c = e->value;
  } else if (e->kind == ExprKind::Add) {
    l.c = e->value;
    for (size_t i = 0; i < e->ops.size(); ++i)
      l.terms.push_back({e->ops[i], e->coefs[i]});
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
  for (const Term &t : l.terms)
    ops.push_back(t.mono), coefs.push_back(t.coef);
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
    if (j == fb.size() || (i < fa.size() && compareExpr(fa[i], fb[j]) <= 0))
      f.push_back(fa[i++]);
    else
      f.push_back(fb[j++]);
  }
  return makeNode(ExprKind::Mul, 0, f);
}

Result<Lin> linMul(const Lin &a, const Lin &b) {
  if (a.terms.size() * b.terms.size() > kMaxProductTerms) return makeError("expression too large");
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
  for (const Term &t : l.terms)
    g = gcd64(g, t.coef);
  return g;
}

Lin linDivConst(const Lin &l, int64_t g) {
  Lin r;
  r.c = l.c / g;
  for (const Term &t : l.terms)
    r.terms.push_back({t.mono, t.coef / g});
  return r;
}

/// The size cap: an expression past kMaxExprSize becomes a fresh bounded symbol (the same one
/// for the same expression, so equal inputs still give equal outputs).
namespace {
thread_local uint32_t tMaxSize = kMaxExprSize, tMaxTerms = kMaxTerms;
} // namespace

Expr capExpr(Expr e) { return capExpr(e, tMaxSize, tMaxTerms); }

Expr capExpr(Expr e, uint32_t maxSize, uint32_t maxTerms) {
  if (e->size <= maxSize && !(e->kind == ExprKind::Add && e->ops.size() > maxTerms)) return e;
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

} // namespace expr_detail

ExprLimitScope::ExprLimitScope(uint32_t maxSize, uint32_t maxTerms)
    : size_(expr_detail::tMaxSize), terms_(expr_detail::tMaxTerms) {
  expr_detail::tMaxSize = std::max(maxSize, size_);
  expr_detail::tMaxTerms = std::max(maxTerms, terms_);
}

ExprLimitScope::~ExprLimitScope() {
  expr_detail::tMaxSize = size_;
  expr_detail::tMaxTerms = terms_;
}

Result<void> ExprSum::add(Expr e, int64_t k) {
  if (e->isFloat) return makeError("a float expression cannot be used in integer arithmetic");
  if (k == 0) return success();
  Lin l = toLin(e);
  auto kc = checkedMul(k, l.c);
  if (!kc) return overflow();
  auto c = checkedAdd(c_, *kc);
  if (!c) return overflow();
  c_ = *c;
  for (const Term &t : l.terms) {
    auto kt = checkedMul(k, t.coef);
    if (!kt) return overflow();
    auto [it, fresh] = terms_.try_emplace(t.mono, 0);
    auto sum = checkedAdd(it->second, *kt);
    if (!sum) return overflow();
    it->second = *sum;
  }
  return success();
}

Result<Expr> ExprSum::result(uint32_t maxSize, uint32_t maxTerms) const {
  Lin l;
  l.c = c_;
  std::vector<Term> terms;
  terms.reserve(terms_.size());
  for (const auto &[mono, coef] : terms_)
    if (coef != 0) terms.push_back({mono, coef});
  std::sort(terms.begin(), terms.end(),
            [](const Term &a, const Term &b) { return compareExpr(a.mono, b.mono) < 0; });
  for (const Term &t : terms)
    l.terms.push_back(t);
  if (maxSize == 0 && maxTerms == 0) return capExpr(fromLin(l));
  return capExpr(fromLin(l), maxSize ? maxSize : tMaxSize, maxTerms ? maxTerms : tMaxTerms);
}

namespace expr_detail {

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

} // namespace expr_detail

} // namespace sf
