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
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "shapeflow/support/small_vec.h"

namespace sf {
using namespace expr_detail;

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

/// An operand of a float operator: compound ones in parentheses (a different precision is
/// parenthesised by its f32(..)/f64(..) already).
std::string printOperand(Expr e, const AnonFn &anon, FloatPrec ctx) {
  std::string s = printAny(e, anon, ctx);
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
  case ExprKind::Const:
    return std::to_string(e->value);
  case ExprKind::Sym: {
    const SymbolInfo &info = *e->symInfo;
    return info.name.empty() ? anon(e->sym) : info.name;
  }
  case ExprKind::Mul:
    return printMono(e, anon);
  case ExprKind::Add: {
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
  default:
    return printFloat(e, anon, FloatPrec::F32);
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
