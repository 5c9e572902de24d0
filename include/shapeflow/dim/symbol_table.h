// SymbolTable: the symbols of one graph (or one inference run). It gives names to symbols
// (one symbol per name), and records what inference learns: two symbols are equal, a symbol equals
// a constant or an expression, a symbol's range narrows. Each fact is a substitution (union-find
// with path compression); resolve() applies them so every tensor sharing a symbol sees it.
#pragma once

#include "shapeflow/dim/dimension.h"
#include "shapeflow/dim/partial_shape.h"

#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sf {

/// A condition on sizes that no substitution expresses: two dims that must broadcast (be equal,
/// or one of them 1: `S == 16 or S == 1`), an equality no symbol can be solved from
/// (`C*N == 24`), a divisibility (`C % 2 == 0`), a bound on an expression no single symbol's
/// range can say (`floor(H * min(800 / min(H, W), ...)) >= 1`, `H - W <= 4`).
enum class Condition : uint8_t { None, Broadcast, Equal, Divides, AtLeast, AtMost };

/// A fact inference learned about a named symbol (a requirement the model puts on its input
/// sizes), with the node whose rule imposed it. A condition (kind != None) keeps its two sides,
/// so that sizes can be checked against it.
struct SymbolRequirement {
  std::string symbol; // the named symbol it is about
  std::string text;   // `H >= 3`, `W == H`, `S == 128`, `L == P + S`, `C % 2 == 0`
  std::string node, op;
  Condition kind = Condition::None;
  Expr a = nullptr, b = nullptr;
  /// For a condition: whether values of its two sides meet it.
  bool holds(int64_t va, int64_t vb) const;
};

class SymbolTable {
public:
  /// The symbol of that name, made with `range` on first use.
  SymbolId named(const std::string &name, Interval range);
  /// The symbol of that name, made with the table's default range on first use.
  SymbolId named(const std::string &name) { return named(name, defaultRange_); }
  /// Range of symbols that named() makes without an explicit range ([0, inf) unless set; the
  /// ONNX importer uses [1, inf): a dimension the model names is a size of at least 1).
  void setDefaultRange(Interval r) { defaultRange_ = r; }
  Interval defaultRange() const { return defaultRange_; }
  /// Lookup only.
  std::optional<SymbolId> find(const std::string &name) const;
  /// Sets the range of a named symbol (before use: --dim N=1..64). Later uses see the new symbol.
  Result<SymbolId> bound(const std::string &name, Interval range);
  /// Gives a named symbol exactly this range (widening allowed): for user input before
  /// inference (--dim N=0..8), when no fact has been derived from the old range yet.
  Result<SymbolId> setRange(const std::string &name, Interval range);
  SymbolId fresh(Interval range = {0, kInf}) { return newAnonymousSymbol(range); }
  /// A fresh data-dependent symbol with a readable unique name (`nonzero_0`, ...).
  SymbolId freshNamed(const std::string &stem, Interval range);

  /// Records a == b. Fails when they cannot be equal (disjoint bounds). Equal constants are fine.
  Result<void> equate(const Dimension &a, const Dimension &b);
  /// Records a condition on `a` and `b` (see Condition) as a requirement of the current origin,
  /// when they mention a named symbol and it does not already hold for every value. Nothing
  /// is substituted: the condition is for the contract to state and check.
  void require(Condition kind, const Dimension &a, const Dimension &b);
  /// Off while a subgraph is inferred (an If branch that may not be taken, a loop body that may
  /// run zero times): conditions there are not requirements of the model. Returns the old value.
  bool setRecordConditions(bool on) { bool was = recordConditions_; recordConditions_ = on; return was; }
  /// Records that `e` lies within `r`: narrows the symbol of `e` when it is `k*s + c` (or a
  /// non-decreasing expression of one symbol, solved by bisection); fails when it cannot lie
  /// there. Where no symbol's range can say it (several symbols, or an expression that is not
  /// monotone), the bound is recorded as a condition (AtLeast, AtMost) of the current origin.
  Result<void> narrow(Expr e, Interval r);
  /// Applies every recorded substitution.
  /// Whether any symbol is bound (resolve() changes nothing otherwise).
  bool hasBindings() const { return !subst_.empty(); }
  Dimension resolve(const Dimension &d) const;
  PartialShape resolve(const PartialShape &s) const;
  /// In place: no copy when nothing is bound (the common case).
  PartialShape resolve(PartialShape &&s) const;
  /// Substitution target of a symbol (itself when none).
  Expr resolveSymbol(SymbolId s) const;

  /// The node whose rule runs now: what the table learns about named symbols meanwhile is
  /// recorded as a requirement of that node (requirements()). No node: nothing is recorded.
  /// The strings must outlive the rule (a node's own name and op type).
  void setOrigin(const std::string *node, const std::string *op) { origin_.node = node, origin_.op = op; }
  /// Whether the user gave this name its range (bound() or setRange(), `--dim`).
  bool rangeGiven(const std::string &name) const { return userRanged_.count(name) > 0; }
  std::pair<const std::string *, const std::string *> origin() const { return {origin_.node, origin_.op}; }
  const std::vector<SymbolRequirement> &requirements() const { return requirements_; }

  /// Named symbols in order of first use, with their current (narrowed) range.
  std::vector<std::pair<std::string, Interval>> namedSymbols() const;
  uint64_t version() const { return version_; }

private:
  Result<void> bind(SymbolId s, Expr to);
  /// require() on resolved expressions.
  void recordCondition(Condition kind, Expr ea, Expr eb);
  /// The bounds of `r` that `e` (in `b`) does not already meet, as AtLeast/AtMost conditions.
  void requireWithin(Expr e, Interval b, Interval r);
  /// The bounds of `e` where every expression a recorded condition bounds lies within them.
  Interval boundsAssumingConditions(Expr e) const;
  /// Records that a condition keeps `e` within `within` (boundedExprs_).
  void noteBounded(Expr e, Interval within);
  std::unordered_map<std::string, SymbolId> byName_;
  std::vector<std::string> order_;
  mutable std::unordered_map<SymbolId, Expr> subst_;
  mutable std::unordered_map<Expr, Expr> cache_; // resolved expressions, cleared on bind
  std::unordered_map<std::string, int> stems_;
  uint64_t version_ = 0;
  /// The origin is the running rule's, never a copy's: a copied table starts without one.
  struct Origin {
    const std::string *node = nullptr, *op = nullptr;
    Origin() = default;
    Origin(const Origin &) {}
    Origin &operator=(const Origin &) { return *this; }
  } origin_;
  std::vector<SymbolRequirement> requirements_;
  std::set<std::string> userRanged_; // names given a range by bound() or setRange()
  /// Expressions an AtLeast/AtMost condition bounds, each with a stand-in symbol of the range the
  /// conditions give it: a later bound implied by them (`(R - 1)//32 + 1 >= 1` after `R >= 1`)
  /// is not recorded again.
  std::vector<std::pair<Expr, SymbolId>> boundedExprs_;
  std::unordered_set<std::string> conditionKeys_; // text and node of each condition recorded
  bool recordConditions_ = true;
  Interval defaultRange_{0, kInf};
};

} // namespace sf
