// Printing expressions as Python-compatible text (expr.h toString).
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
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "shapeflow/support/small_vec.h"

namespace sf {
using namespace expr_detail;

// ---------------------------------------------------------------- printing
namespace {
/// What the printer is given: how to print an anonymous symbol, and names that stand for whole
/// subexpressions (printed as atoms: never parenthesised, never looked into).
struct AnonFn {
  std::function<std::string(SymbolId)> anon;
  const PrintNames *names = nullptr;
  Expr except = nullptr; // a definition's own root is printed, not named
  std::string operator()(SymbolId s) const { return anon(s); }
  const std::string *named(Expr e) const {
    if (!names || e == except) return nullptr;
    auto it = names->exprs.find(e);
    return it == names->exprs.end() ? nullptr : &it->second;
  }
};

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
  case RoundMode::Floor:
    return "floor";
  case RoundMode::Ceil:
    return "ceil";
  case RoundMode::Trunc:
    return "trunc";
  case RoundMode::HalfEven:
    return "round";
  }
  return "floor";
}

bool isFloatSum(ExprKind k) { return k == ExprKind::FAdd || k == ExprKind::FSub; }

/// An operand of a float operator: compound ones in parentheses (a different precision is
/// parenthesised by its f32(..)/f64(..) already), except a left operand that binds at least as
/// tightly as its operator (`a - b - c` is `(a - b) - c`, `a*b + c` is `(a*b) + c`: operators
/// of one level associate to the left), so that a long chain prints flat.
std::string printOperand(Expr e, const AnonFn &anon, FloatPrec ctx, ExprKind parent, bool left) {
  if (const std::string *n = anon.named(e)) return *n;
  std::string s = printAny(e, anon, ctx);
  if (left && e->isFloat && e->prec == ctx && e->kind != ExprKind::FConst &&
      (isFloatSum(parent) || !isFloatSum(e->kind)))
    return s;
  bool compound = false;
  switch (e->kind) {
  case ExprKind::Add:
  case ExprKind::Mul:
  case ExprKind::FloorDiv:
  case ExprKind::Mod:
    compound = true;
    break;
  case ExprKind::FAdd:
  case ExprKind::FSub:
  case ExprKind::FMul:
  case ExprKind::FDiv:
    compound = e->prec == ctx;
    break;
  default:
    break;
  }
  return compound ? "(" + s + ")" : s;
}

std::string printFloat(Expr e, const AnonFn &anon, FloatPrec ctx) {
  if (e->prec != ctx)
    return std::string(e->prec == FloatPrec::F64 ? "f64(" : "f32(") + printFloat(e, anon, e->prec) +
           ")";
  switch (e->kind) {
  case ExprKind::FConst:
    return floatLiteral(bitsToDouble(e->value), e->prec);
  case ExprKind::FMin:
  case ExprKind::FMax:
    return std::string(e->kind == ExprKind::FMin ? "min(" : "max(") +
           printAny(e->ops[0], anon, ctx) + ", " + printAny(e->ops[1], anon, ctx) + ")";
  default:
    break;
  }
  const char *op = e->kind == ExprKind::FAdd   ? " + "
                   : e->kind == ExprKind::FSub ? " - "
                   : e->kind == ExprKind::FMul ? " * "
                                               : " / ";
  return printOperand(e->ops[0], anon, ctx, e->kind, true) + op +
         printOperand(e->ops[1], anon, ctx, e->kind, false);
}

std::string printAny(Expr e, const AnonFn &anon, FloatPrec ctx) {
  return e->isFloat ? printFloat(e, anon, ctx) : print(e, anon);
}

/// An atom as a factor of a product: floor division and modulo need parentheses there,
/// because Python reads `2*N//2` as `(2*N)//2`.
std::string printFactor(Expr e, const AnonFn &anon) {
  if (const std::string *n = anon.named(e)) return *n;
  std::string s = print(e, anon);
  if (e->kind == ExprKind::FloorDiv || e->kind == ExprKind::Mod || e->kind == ExprKind::Add)
    return "(" + s + ")";
  return s;
}

std::string printMono(Expr m, const AnonFn &anon) {
  if (const std::string *n = anon.named(m)) return *n;
  if (m->kind != ExprKind::Mul) return printFactor(m, anon);
  std::string s;
  for (size_t i = 0; i < m->ops.size(); ++i) {
    if (i) s += "*";
    s += printFactor(m->ops[i], anon);
  }
  return s;
}

/// A term of a sum as a coefficient times atoms.
struct FactorTerm {
  int64_t coef;
  std::vector<Expr> atoms; // sorted, repeats allowed (as in a Mul node)
};

/// The terms of the sum `e`, its constant last (when not zero).
std::vector<FactorTerm> factorTerms(Expr e) {
  std::vector<FactorTerm> terms;
  for (size_t i = 0; i < e->ops.size(); ++i) {
    Expr m = e->ops[i];
    terms.push_back({e->coefs[i], m->kind == ExprKind::Mul
                                      ? std::vector<Expr>(m->ops.begin(), m->ops.end())
                                      : std::vector<Expr>{m}});
  }
  if (e->value != 0) terms.push_back({e->value, {}});
  return terms;
}

/// What every term shares: the coefficients' gcd (with the first term's sign) and the atoms.
struct CommonPart {
  uint64_t g;
  bool negative;
  std::vector<Expr> atoms;
};

/// Takes the common part out of the terms; nullopt when the gcd does not fit.
std::optional<CommonPart> takeCommonPart(std::vector<FactorTerm> &terms) {
  uint64_t g = 0;
  for (const FactorTerm &t : terms)
    g = std::gcd(g, t.coef < 0 ? uint64_t(0) - uint64_t(t.coef) : uint64_t(t.coef));
  if (g == 0 || g > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
  bool negative = terms[0].coef < 0;
  std::vector<Expr> common = terms[0].atoms;
  for (const FactorTerm &t : terms) {
    std::vector<Expr> both;
    std::set_intersection(common.begin(), common.end(), t.atoms.begin(), t.atoms.end(),
                          std::back_inserter(both));
    common = std::move(both);
  }
  for (FactorTerm &t : terms) {
    t.coef = (negative ? -1 : 1) * (t.coef / int64_t(g));
    std::vector<Expr> rest;
    std::set_difference(t.atoms.begin(), t.atoms.end(), common.begin(), common.end(),
                        std::back_inserter(rest));
    t.atoms = std::move(rest);
  }
  return CommonPart{g, negative, std::move(common)};
}

/// The atoms of the terms, each once, in order of first appearance.
std::vector<Expr> distinctAtoms(const std::vector<FactorTerm> &terms) {
  std::vector<Expr> candidates;
  for (const FactorTerm &t : terms)
    for (Expr a : t.atoms)
      if (std::find(candidates.begin(), candidates.end(), a) == candidates.end())
        candidates.push_back(a);
  return candidates;
}

/// The constant c with terms == x*A + c*A (x an atom of degree one), A replacing the terms;
/// nullopt (terms unchanged) when they are not of that form.
std::optional<int64_t> peelBinomial(std::vector<FactorTerm> &terms, Expr x) {
  auto byAtoms = [](const FactorTerm &a, const FactorTerm &b) { return a.atoms < b.atoms; };
  std::vector<FactorTerm> with, without;
  bool linear = true;
  for (const FactorTerm &t : terms) {
    auto n = std::count(t.atoms.begin(), t.atoms.end(), x);
    if (n > 1) linear = false;
    if (n == 0) {
      without.push_back(t);
    } else {
      FactorTerm r = t;
      r.atoms.erase(std::find(r.atoms.begin(), r.atoms.end(), x));
      with.push_back(std::move(r));
    }
  }
  if (!linear || with.empty() || with.size() != without.size()) return std::nullopt;
  std::sort(with.begin(), with.end(), byAtoms);
  std::sort(without.begin(), without.end(), byAtoms);
  std::optional<int64_t> c;
  bool match = true;
  for (size_t i = 0; i < with.size() && match; ++i) {
    const FactorTerm &a = with[i], &b = without[i];
    if (a.atoms != b.atoms || a.coef == 0 || b.coef % a.coef != 0 ||
        (a.coef == -1 && b.coef == std::numeric_limits<int64_t>::min())) {
      match = false;
      break;
    }
    int64_t ratio = b.coef / a.coef;
    if (c && *c != ratio) match = false;
    c = ratio;
  }
  if (!match || !c) return std::nullopt;
  terms = std::move(with);
  return c;
}

/// Peels binomials `(x + c)` off the terms until one is left; false when some cannot be.
bool peelBinomials(std::vector<FactorTerm> &terms, std::vector<std::pair<Expr, int64_t>> &binomials) {
  while (terms.size() > 1) {
    bool found = false;
    for (Expr x : distinctAtoms(terms)) {
      auto c = peelBinomial(terms, x);
      if (!c) continue;
      binomials.push_back({x, *c});
      found = true;
      break;
    }
    if (!found) return false;
  }
  return true;
}

/// A sum that is a monomial times binomials `(x + c)` in its atoms (what the product of
/// `(H - 1)//2 + 1` and `(W - 1)//2 + 1` expands to), printed as that product:
/// `432*N*((H - 1)//2 + 1)*((W - 1)//2 + 1)` instead of its four expanded terms. Only sums with
/// a product of atoms in them (linear sums print as they are), and only when the factoring is
/// complete; otherwise nothing. Printing only: the canonical form stays the expanded sum, and
/// the text reads back to it.
std::optional<std::string> printFactored(Expr e, const AnonFn &anon) {
  bool nonlinear = false;
  for (Expr m : e->ops)
    nonlinear |= m->kind == ExprKind::Mul;
  if (!nonlinear || e->ops.size() + (e->value != 0) < 2) return std::nullopt;
  std::vector<FactorTerm> terms = factorTerms(e);

  // The common part: the coefficients' gcd (with the first term's sign) and the common atoms.
  auto common = takeCommonPart(terms);
  if (!common) return std::nullopt;
  uint64_t g = common->g;
  bool negative = common->negative;

  // Peel binomials: terms = x*A + c*A, x an atom of degree one.
  std::vector<std::pair<Expr, int64_t>> binomials;
  if (!peelBinomials(terms, binomials)) return std::nullopt;
  if (binomials.empty() || terms.size() != 1 || !terms[0].atoms.empty() ||
      (terms[0].coef != 1 && terms[0].coef != -1))
    return std::nullopt;
  if (terms[0].coef == -1) negative = !negative;

  std::vector<std::string> parts;
  if (g != 1) parts.push_back(std::to_string(g));
  for (Expr a : common->atoms)
    parts.push_back(printFactor(a, anon));
  for (auto [x, c] : binomials) {
    uint64_t mag = c < 0 ? uint64_t(0) - uint64_t(c) : uint64_t(c);
    parts.push_back("(" + print(x, anon) + (c < 0 ? " - " : " + ") + std::to_string(mag) + ")");
  }
  std::string out = negative ? "-" : "";
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? "*" : "") + parts[i];
  return out;
}

std::string print(Expr e, const AnonFn &anon) {
  if (const std::string *n = anon.named(e)) return *n;
  switch (e->kind) {
  case ExprKind::Const:
    return std::to_string(e->value);
  case ExprKind::Sym: {
    const SymbolInfo &info = *e->symInfo;
    return info.name.empty() ? anon(e->sym) : info.name;
  }
  case ExprKind::Mul:
    return printMono(e, anon);
  case ExprKind::Add: {
    if (auto factored = printFactored(e, anon)) return *factored;
    std::string s;
    bool first = true;
    auto emit = [&](int64_t coef, const std::string &body) {
      bool negative = coef < 0;
      uint64_t mag = negative ? uint64_t(0) - uint64_t(coef) : uint64_t(coef);
      if (first)
        s += negative ? "-" : "";
      else
        s += negative ? " - " : " + ";
      first = false;
      if (body.empty())
        s += std::to_string(mag);
      else if (mag == 1)
        s += body;
      else
        s += std::to_string(mag) + "*" + body;
    };
    for (size_t i = 0; i < e->ops.size(); ++i) {
      // `a + b//2` needs no parentheses; `3*(b//2)` does.
      Expr m = e->ops[i];
      bool bare = std::abs(e->coefs[i]) == 1 && m->kind != ExprKind::Mul;
      // A leading minus binds tighter than // and % in Python: `-N//2` is `(-N)//2`.
      if (bare && first && e->coefs[i] < 0)
        bare = m->kind != ExprKind::FloorDiv && m->kind != ExprKind::Mod;
      emit(e->coefs[i], bare ? print(m, anon) : printMono(m, anon));
    }
    if (e->value != 0) emit(e->value, "");
    return s;
  }
  case ExprKind::FloorDiv:
  case ExprKind::Mod: {
    Expr in = e->ops[0];
    std::string inner = print(in, anon);
    if (in->kind == ExprKind::Add && !anon.named(in)) inner = "(" + inner + ")";
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
  default:
    return printFloat(e, anon, FloatPrec::F32);
  }
}
} // namespace

std::string toString(Expr e) {
  return print(e, AnonFn{[](SymbolId) { return std::string("?"); }});
}

std::string toString(Expr e, const std::function<std::string(SymbolId)> &anon) {
  return print(e, AnonFn{anon});
}

namespace {
AnonFn withNames(const PrintNames &names, Expr except) {
  return AnonFn{[&names](SymbolId s) {
                  auto it = names.symbols.find(s);
                  return it == names.symbols.end() ? std::string("?") : it->second;
                },
                &names, except};
}
} // namespace

std::string toString(Expr e, const PrintNames &names) { return print(e, withNames(names, nullptr)); }

std::string definitionText(Expr e, const PrintNames &names) { return print(e, withNames(names, e)); }

bool PrintNames::namesAnonymousOf(Expr e) const {
  if (!e->hasAnonymous) return true;
  for (SymbolId s : symbolsOf(e))
    if (symbolInfo(s).name.empty() && !symbols.count(s)) return false;
  return true;
}

} // namespace sf
