// Internals of the expression algebra shared by its files (expr.cpp: contexts, interning,
// symbols, integer construction; expr_lin.cpp: linear combinations; expr_float.cpp: float nodes
// and bounds; expr_query.cpp: comparison, substitution, evaluation, clamps; expr_print.cpp).
// Not part of the public API.
#pragma once

#include "shapeflow/dim/expr.h"
#include "shapeflow/support/small_vec.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sf {
namespace expr_detail {

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
inline NodeKey keyOf(const ExprNode &n) {
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

} // namespace expr_detail

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
  std::unordered_set<const ExprNode *, expr_detail::NodeHash, expr_detail::NodeEq> table;
  std::deque<SymbolInfo> symbols;
  std::unordered_map<const ExprNode *, SymbolId> capped;
  std::unordered_map<const ExprNode *, Expr> split; // simplifyClamps' results
  std::atomic<uint64_t> capHits{0};

  static inline std::atomic<size_t> gContexts{0}, gNodes{0};
};

namespace expr_detail {

// ---- expr.cpp ----
/// "integer overflow in dimension arithmetic"
Error overflow();
ExprContext &defaultContext();
/// The current context of this thread (expr.h "Lifetime").
ExprContext &registry();
size_t mix(size_t h, size_t v);
Expr intern(ExprNode proto);
Expr makeNode(ExprKind k, int64_t value, std::span<const Expr> ops,
              std::span<const int64_t> coefs = {});
/// min (isMin) or max of the arguments, canonical.
Result<Expr> minMax(bool isMin, std::vector<Expr> args);

// ---- expr_float.cpp ----
Interval computeBounds(const ExprNode &n);
void computeFloatBounds(ExprNode &n);
double bitsToDouble(int64_t bits);
int64_t doubleToBits(double d);
double applyRound(RoundMode m, double v);
/// `v` rounded to the precision (f32: to float; f64 and None: as is).
double toPrec(double v, FloatPrec p);
std::optional<double> knownNumber(Expr e);
double applyFloatOp(FloatOp op, double a, double b);
ExprKind kindOf(FloatOp op);
FloatOp opOf(ExprKind k);
bool sameValueIn(Expr e, FloatPrec p);
/// "float shape math gives a value that is not finite"
Error notFinite();

// ---- expr_lin.cpp ----
struct Term {
  Expr mono;
  int64_t coef;
};
struct Lin {
  int64_t c = 0;
  SmallVec<Term, 6> terms; // sorted by compareExpr(mono), no zero coefficients
};
Lin toLin(Expr e);
Expr fromLin(const Lin &l);
Result<Lin> linAxpy(const Lin &a, int64_t k, const Lin &b);
std::vector<Expr> factorsOf(Expr mono);
Expr monoFromFactors(std::vector<Expr> f);
Expr mulMono(Expr a, Expr b);
Result<Lin> linMul(const Lin &a, const Lin &b);
int64_t gcd64(int64_t a, int64_t b);
int64_t linContent(const Lin &l, int64_t c);
Lin linDivConst(const Lin &l, int64_t g);
Expr capExpr(Expr e);
/// The same with other limits (ExprSum::result's).
Expr capExpr(Expr e, uint32_t maxSize, uint32_t maxTerms);
Result<Expr> finish(Result<Lin> l);
Result<Expr> finishExpr(Expr e);
int gradedCmp(Expr a, Expr b);
std::optional<Expr> divMono(Expr mono, Expr divisor);
const Term *leadingTerm(const Lin &l);

} // namespace expr_detail
} // namespace sf
