// Symbolic integer expressions over named or anonymous symbols, in canonical form and hash-consed,
// so that two equal expressions are the same pointer.
//
// Lifetime: expressions and symbols live in an ExprContext, the current one of the thread that
// makes them (ExprScope sets it; without one, a process-wide default that lives forever). A
// front end gives each model its own context (Graph::context: the importer and the text parser
// make one, inference and printing enter it), so that a program analysing thousands of models
// frees each model's expressions with the model. Expressions of one context must not be combined
// with those of another, except for the small constants (-64..4096), which live in the default
// context and are shared by every context. Reading an expression (printing it, its bounds, its
// symbols' names) needs no context.
//
// Canonical form: a constant; an atom (symbol, floor division or modulo by a positive constant,
// min, max); a product of two or more atoms; or a sum `c0 + sum(ci * monomial_i)` with integer
// coefficients. Symbols are immutable (name, range), so every node caches its bounds when it is
// created and range-dependent simplifications (min(N, 512) with N <= 100 is N) happen at once.
// An expression that grows past kMaxExprSize nodes or kMaxTerms monomials becomes a fresh
// anonymous symbol bounded by the expression's bounds (counted in exprCapHits()).
//
// Float shape math (a resize factor `800 / min(H, W)`, `floor(H * scale)`) is kept as float
// nodes: FConst and the binary FAdd ... FMax, each evaluated in its precision (f32 or f64, every
// result rounded as a runtime rounds it; an integer operand is converted to that precision), and
// Round (floor, ceil, trunc, round-half-even of a float node), which is an integer atom again.
// An integer expression used where a float is expected stands for that integer (exact below
// 2^24 in f32, the assumption the README states). Float nodes never enter integer arithmetic:
// add, mul, min, ... fail on them. A float node's `bounds` is the integer hull of its real
// range [flo, fhi] (widened for rounding, so never unsound).
#pragma once

#include "shapeflow/dim/interval.h"
#include "shapeflow/support/result.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sf {

using SymbolId = uint32_t;

enum class ExprKind : uint8_t {
  Const, Sym, Add, Mul, FloorDiv, Mod, Min, Max,
  // float-valued (isFloat)
  FConst, FAdd, FSub, FMul, FDiv, FMin, FMax,
  // integer-valued rounding of a float node; `value` is the RoundMode
  Round
};
enum class FloatPrec : uint8_t { None = 0, F32 = 1, F64 = 2 };
enum class FloatOp : uint8_t { Add, Sub, Mul, Div, Min, Max };
enum class RoundMode : uint8_t { Floor, Ceil, Trunc, HalfEven };

struct ExprNode;
/// An expression: a pointer to an interned, immutable node. Equality is pointer equality.
using Expr = const ExprNode *;
struct SymbolInfo;

struct ExprNode {
  ExprKind kind;
  uint32_t size;         // nodes in the tree (for the size cap)
  int64_t value;         // Const: the value; Add: the constant term; FloorDiv/Mod: the divisor;
                         // FConst: the bits of the double; Round: the RoundMode
  SymbolId sym;          // Sym only
  const SymbolInfo *symInfo; // Sym only: its name and range (read without a context)
  FloatPrec prec;        // float nodes: the precision they compute in; None otherwise
  bool isFloat;          // FConst .. FMax
  double flo, fhi;       // float nodes: bounds of the real value (possibly infinite)
  bool hasAnonymous;     // mentions an anonymous symbol somewhere
  bool hasMinMax;        // a Min or Max node somewhere
  uint32_t onlySym;      // the one symbol it mentions; kNoSymbol for none, kManySymbols for more
  Interval bounds;       // derived from the symbols' ranges; never unsound
  size_t hash;
  std::vector<Expr> ops;         // Add: monomials; Mul: atoms (sorted, repeats allowed);
                                 // FloorDiv/Mod: the dividend; Min/Max: the arguments (sorted)
  std::vector<int64_t> coefs;    // Add only: one coefficient per monomial
};

/// Tree nodes (a shared subexpression counts each time it appears, as it prints).
inline constexpr uint32_t kMaxExprSize = 512;
inline constexpr uint32_t kNoSymbol = 0xffffffffu, kManySymbols = 0xfffffffeu;
/// Monomials in one sum (a Concat of 90 detection levels sums 90 counts).
inline constexpr uint32_t kMaxTerms = 128;
/// Products of monomials one multiplication of sums may form (what it costs).
inline constexpr uint32_t kMaxProductTerms = 192;

// ---- contexts (see "Lifetime" above) ----
class ExprContext;
/// A new, empty context.
std::shared_ptr<ExprContext> makeExprContext();
/// Makes `ctx` the current context of this thread until the scope ends; a null `ctx` leaves the
/// current one as it is. Scopes nest.
class ExprScope {
public:
  explicit ExprScope(const std::shared_ptr<ExprContext> &ctx);
  ~ExprScope();
  ExprScope(const ExprScope &) = delete;
  ExprScope &operator=(const ExprScope &) = delete;

private:
  ExprContext *previous_;
  bool set_;
};
/// Nodes and symbols held by every context alive (the default one included): what the memory
/// tests watch.
size_t liveExprNodes();
size_t liveExprContexts();

// ---- symbols (in the current context; a symbol never changes once made) ----
struct SymbolInfo {
  std::string name; // empty for an anonymous symbol
  Interval range;
};
/// A new symbol. Names need not be unique in the registry (a narrowed copy of `N` is still `N`);
/// uniqueness of names within one graph is SymbolTable's job.
SymbolId newSymbol(std::string name, Interval range = {0, kInf});
SymbolId newAnonymousSymbol(Interval range = {0, kInf});
const SymbolInfo &symbolInfo(SymbolId id);
size_t symbolCount();

// ---- construction (all return canonical, interned nodes) ----
Expr constant(int64_t v);
Expr symbol(SymbolId id);
/// Arithmetic fails only when a constant overflows int64 (checked, never wraps).
Result<Expr> add(Expr a, Expr b);
Result<Expr> sub(Expr a, Expr b);
Result<Expr> mul(Expr a, Expr b);
Result<Expr> neg(Expr a);
/// Raises, for this thread and this scope, the limits past which an expression becomes a bounded
/// anonymous symbol (kMaxExprSize, kMaxTerms): for what is made once per report rather than per
/// op, like a memory plan's offsets and peak. Never lowers them. Scopes nest.
class ExprLimitScope {
public:
  ExprLimitScope(uint32_t maxSize, uint32_t maxTerms);
  ~ExprLimitScope();
  ExprLimitScope(const ExprLimitScope &) = delete;
  ExprLimitScope &operator=(const ExprLimitScope &) = delete;

private:
  uint32_t size_, terms_;
};

/// Sums many expressions, each times a constant, without forming every partial sum: the terms
/// collect in one linear combination and the expression is made once, by result() (a running
/// `add` would intern and bound each of the n partial sums: quadratic in the terms). The same
/// expression as adding one by one; checked; integer expressions only.
class ExprSum {
public:
  Result<void> add(Expr e, int64_t k = 1);
  /// The sum, replaced by an anonymous symbol with its bounds when it is larger than the limits
  /// (0: the thread's current ones, see ExprLimitScope; a report's totals may allow more).
  Result<Expr> result(uint32_t maxSize = 0, uint32_t maxTerms = 0) const;

private:
  int64_t c_ = 0;
  std::unordered_map<Expr, int64_t> terms_; // monomial -> coefficient
};
/// floor(a / c), c > 0.
Result<Expr> floorDiv(Expr a, int64_t c);
/// ceil(a / c), c > 0; expressed as (a - 1)//c + 1 style canonical form.
Result<Expr> ceilDiv(Expr a, int64_t c);
/// a mod c, c > 0 (Python convention).
Result<Expr> mod(Expr a, int64_t c);
Result<Expr> min(Expr a, Expr b);
Result<Expr> max(Expr a, Expr b);
/// A sum with one min/max term of coefficient +-1 with the rest distributed over it when that
/// is smaller: x + max(a, b) = max(x + a, x + b), x - max(a, b) = min(x - a, x - b) (exact over
/// the integers): `L - max(L - S, 0)` (a slice `[-S:]` of a length-L axis) is `min(S, L)`; the
/// arguments of a min/max likewise (`max(L - max(L - S, 0), 0)` is `min(S, L)`). Not
/// part of the canonical form (sums with two min/max terms would depend on the order they were
/// built in): rules call it on the results they print.
Expr distributeMinMax(Expr e);
/// Exact division: returns the quotient when `b` divides `a` as polynomials
/// (N*3*H*W / (3*H) is N*W; (2*N + 2) / 2 is N + 1); nullopt-like error otherwise.
Result<Expr> divExact(Expr a, Expr b);
/// floor(a / b) for any b: exact division when possible, a constant fold, or a//c for constant c.
/// Fails (caller keeps the result loose) when it cannot be expressed.
Result<Expr> floorDivExpr(Expr a, Expr b);

// ---- float shape math (see the header comment) ----
/// `v` rounded to `p`; an integral result is the integer constant. Fails on NaN or infinity.
Result<Expr> floatConstant(double v, FloatPrec p);
/// `a op b` on integer expressions: +, -, *, min, max, and for Div the exact quotient (divExact;
/// an error when it does not divide). Both operands must be integers.
Result<Expr> integerArith(FloatOp op, Expr a, Expr b);
/// `a op b` computed in `p`. Two integer operands give integer arithmetic where that is exact
/// (+, -, *, min, max, and a division that divides). Fails on a known division by zero.
Result<Expr> floatOp(FloatOp op, Expr a, Expr b, FloatPrec p);
/// An integer from a float expression (an integer expression is returned as is).
Result<Expr> roundToInt(RoundMode m, Expr a);
/// The value of any expression as a double (floats in their precision, integers exactly).
Result<double> evaluateFloat(Expr e, const std::function<std::optional<int64_t>(SymbolId)> &value);
inline bool isFloatExpr(Expr e) { return e && e->isFloat; }

inline bool isConst(Expr e) { return e->kind == ExprKind::Const; }
inline bool isSymbol(Expr e) { return e->kind == ExprKind::Sym; }
inline Interval bounds(Expr e) { return e->bounds; }

/// An expression of one symbol with min/max inside, in the simpler form it takes where the
/// clamps resolve, when that form gives the same value at every point where they do not
/// (max(P - 3, 0) + max(P - max(P - 3, 0), 0) is P); else `e`. Memoized; Dimension applies it
/// to whole dims, so sub-expressions keep their canonical form.
Expr simplifyClamps(Expr e);

/// Replaces symbols through `lookup` (which returns nullptr to keep a symbol).
Result<Expr> substitute(Expr e, const std::function<Expr(SymbolId)> &lookup);
/// Replaces subexpressions through `replace`, asked from the top down (nullptr: keep this node
/// and look inside it); the result is rebuilt in canonical form.
Result<Expr> replaceAtoms(Expr e, const std::function<Expr(Expr)> &replace);
/// Value at a point; fails on overflow, division trouble, or a symbol `value` does not know.
Result<int64_t> evaluate(Expr e, const std::function<std::optional<int64_t>(SymbolId)> &value);
/// Every symbol the expression mentions (sorted, unique).
std::vector<SymbolId> symbolsOf(Expr e);
/// Total order for canonical sorting: constants first, then symbols by id, then by structure.
int compareExpr(Expr a, Expr b);

/// Python-compatible text: `N`, `2*S + 1`, `(H - 1)//2 + 1`, `min(T, 512)`. Anonymous symbols
/// print through `anon` (default: `?`). Float nodes print with `/`, float literals (`800.0`) and
/// `floor(..)`, `ceil(..)`, `trunc(..)`, `round(..)`; their arithmetic is f32 unless inside
/// `f64(..)` (and f32 again inside `f32(..)`).
std::string toString(Expr e);
std::string toString(Expr e, const std::function<std::string(SymbolId)> &anon);

/// Names a report prints in place of what they stand for: derived sizes (`R1` for a repeated
/// subexpression, printed as an atom) and anonymous symbols (`x_d2` for input x's axis 2).
struct PrintNames {
  std::unordered_map<Expr, std::string> exprs;
  std::unordered_map<SymbolId, std::string> symbols;
  bool empty() const { return exprs.empty() && symbols.empty(); }
  /// Every anonymous symbol `e` mentions has a name here.
  bool namesAnonymousOf(Expr e) const;
};
/// `e` printed with `names` (anonymous symbols without a name print as `?`).
std::string toString(Expr e, const PrintNames &names);
/// `e` printed with `names` for its subexpressions but not for itself: the right-hand side of
/// its own definition (`R1 = floor(...)`).
std::string definitionText(Expr e, const PrintNames &names);

/// How many times the size cap turned an expression into a fresh symbol in the current context.
uint64_t exprCapHits();

} // namespace sf
