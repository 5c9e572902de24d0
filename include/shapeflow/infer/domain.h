// The input sizes a model admits, as inference learned them (the symbols of the inputs' shapes,
// each free within its range or solved from others, and the conditions the op rules recorded),
// and bindings drawn from them: what `check` runs and what a contract's sizes are checked by.
#pragma once

#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sf {

/// Sizes for the input symbols: a name (or `#id` for an unnamed symbol) to its value.
using Binding = std::map<std::string, int64_t>;

/// Whether a condition holds where `value` gives its symbols; nullopt when it cannot be decided
/// there (a symbol without a value, an evaluation that fails).
std::optional<bool> conditionHolds(const SymbolRequirement &r,
                                   const std::function<std::optional<int64_t>(SymbolId)> &value);

struct InputDomain {
  struct Symbol {
    std::string key;       // its name, or `#id` when unnamed
    SymbolId id = 0;       // as the inputs' facts read after inference
    Interval range;        // where it may lie
    Expr solved = nullptr; // what inference solved it to (an expression of other symbols); null: free
  };
  std::vector<Symbol> symbols;
  std::vector<SymbolRequirement> conditions; // the recorded conditions (kind != None)
  const SymbolTable *table = nullptr;        // resolves symbols the conditions mention
  std::shared_ptr<ExprContext> context;      // where the graph's expressions live

  /// The value of every symbol at `b` (solved symbols from their solutions); nullopt for a
  /// symbol `b` does not reach.
  std::optional<int64_t> valueAt(const Binding &b, SymbolId s) const;
  /// An error naming the first size `b` gives that is not a symbol of the inputs (a misspelt or
  /// stale name), with the symbols there are.
  Result<void> knows(const Binding &b) const;
  /// Nullopt when `b` meets every range, solution and condition it decides; else what it breaks.
  std::optional<std::string> breaks(const Binding &b) const;
  /// `count` bindings that meet the domain: the first at each free symbol's smallest size
  /// (raised where a condition needs), the others drawn within the ranges (sizes up to about 64
  /// above each minimum), symbols a condition ties to others set to meet it. Distinct where the
  /// domain has room; fewer than `count` only when no admissible binding was found in the draws
  /// (`why` says which requirement kept refusing).
  struct Draw {
    std::vector<Binding> bindings;
    std::string why;
  };
  Draw draw(size_t count, uint64_t seed) const;
};

/// An error naming the first size of `b` that is not a named symbol of the graph (inputs' sizes
/// and the sizes inference named, such as a data-dependent `nonzero_0`), with the input symbols
/// there are: values at a binding (`--at`) for sizes the model does not have are a mistake.
Result<void> checkNamesSymbols(const Graph &g, const Binding &b);

/// The domain of an inferred graph's inputs (the graph must outlive it).
InputDomain inputDomain(const Graph &g);

} // namespace sf
