// Questions about expressions: the canonical order, substitution, evaluation, the symbols an
// expression mentions, and simplifyClamps (the range split).
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

// ---------------------------------------------------------------- queries
int compareExpr(Expr a, Expr b) {
  if (a == b) return 0;
  if (a->kind != b->kind) {
    // Order kinds so that plain symbols come before compound atoms in a product.
    auto rank = [](ExprKind k) {
      switch (k) {
      case ExprKind::Const:
        return 0;
      case ExprKind::Sym:
        return 1;
      case ExprKind::Mul:
        return 2;
      case ExprKind::FloorDiv:
        return 3;
      case ExprKind::Mod:
        return 4;
      case ExprKind::Min:
        return 5;
      case ExprKind::Max:
        return 6;
      case ExprKind::Round:
        return 7;
      case ExprKind::Add:
        return 8;
      default:
        return 9 + int(k) - int(ExprKind::FConst); // float kinds last
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
  return replaceAtoms(e, [&](Expr x) -> Expr {
    return x->kind == ExprKind::Sym ? lookup(x->sym) : nullptr;
  });
}

Result<Expr> replaceAtoms(Expr e, const std::function<Expr(Expr)> &replace) {
  std::unordered_map<Expr, Expr> memo;
  std::function<Result<Expr>(Expr)> go = [&](Expr x) -> Result<Expr> {
    auto it = memo.find(x);
    if (it != memo.end()) return it->second;
    if (Expr r = replace(x)) {
      memo.emplace(x, r);
      return r;
    }
    Expr out = x;
    switch (x->kind) {
    case ExprKind::Const:
      break;
    case ExprKind::Sym:
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
    case ExprKind::FConst:
      break;
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

Result<int64_t> evaluate(Expr e, const std::function<std::optional<int64_t>(SymbolId)> &value) {
  switch (e->kind) {
  case ExprKind::Const:
    return e->value;
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
      if (!acc)
        acc = t;
      else
        acc = e->kind == ExprKind::Min ? std::min(*acc, t) : std::max(*acc, t);
    }
    return *acc;
  }
  case ExprKind::Round: {
    SF_ASSIGN(double v, evaluateFloat(e->ops[0], value));
    double r = applyRound(RoundMode(e->value), v);
    if (!(std::fabs(r) < 0x1p62)) return notFinite();
    return int64_t(r);
  }
  default:
    return makeError("a float expression has no integer value: " + toString(e));
  }
}

std::vector<SymbolId> symbolsOf(Expr e) {
  std::vector<SymbolId> out;
  std::vector<Expr> stack{e};
  while (!stack.empty()) {
    Expr x = stack.back();
    stack.pop_back();
    if (x->kind == ExprKind::Sym) out.push_back(x->sym);
    for (Expr o : x->ops)
      stack.push_back(o);
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
    auto back =
        substitute(*e1, [&](SymbolId x) -> Expr { return x == narrow ? symbol(s) : nullptr; });
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

} // namespace sf
