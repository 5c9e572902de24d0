// The input contract (`shapeflow contract`): what input sizes a model accepts, from the facts
// inference learned about the inputs' symbols while it ran at symbolic sizes (every narrowing and
// every equality the op rules imposed, each with the node behind it) and from the static dims
// the model declares, which runtimes hold inputs to.
#pragma once

#include "shapeflow/dim/expr.h"
#include "shapeflow/dim/interval.h"
#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/support/diagnostic.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <string>
#include <vector>

namespace sf {

struct Contract {
  /// A static dim an input declares: runtimes refuse other sizes there.
  struct Fixed {
    std::string input;
    size_t axis = 0;
    int64_t value = 0;
  };
  /// A symbol of the inputs' shapes: free within `range`, or solved (`equals`: another input
  /// symbol, a number, an expression of other symbols).
  struct Symbol {
    std::string name;
    Interval range;
    std::string equals;      // empty when the symbol stays free
    Expr solved = nullptr;   // what `equals` prints (in `context`)
    /// Solved, and named by an input without a range given: its own minimum is the assumed
    /// 1, whatever larger one its solution takes from the others' assumed minimums.
    bool solvedFromAssumed = false;
  };
  std::shared_ptr<ExprContext> context; // the graph's: `solved` lives there
  std::vector<Fixed> fixed;
  std::vector<Symbol> symbols;
  std::vector<SymbolRequirement> requirements; // in the order inference met them
  std::vector<Diagnostic> errors;              // the model fails at every size (or at the ones given)
  /// Free symbols whose minimum is the importer's assumption (a named size is at least 1), not
  /// a range the user gave: candidates for an empty size (an empty KV cache, a batch of none).
  std::vector<std::string> assumedMinimum;
  /// The requirements in one line each (`H >= 32`, `W == H`, `x[1] == 3 (declared)`).
  std::vector<std::string> summary() const;
  /// Whether sizes (a value for each free or solved symbol, and the inputs' dims as `x[2]`)
  /// meet the contract: nullopt when they do, else the first requirement they break. A solved
  /// symbol is checked against its solution when the symbols it uses are given.
  std::optional<std::string> check(const std::vector<std::pair<std::string, int64_t>> &binding) const;
  /// `binding` with the sizes the contract ties to the given ones: a solved symbol's solution,
  /// and a symbol that is one side of an equality or a broadcast whose other side the binding
  /// decides (a mask length that must equal `P + S`).
  std::map<std::string, int64_t> tied(std::map<std::string, int64_t> binding) const;
  /// Whether a requirement ties `name` to other sizes (one side of an equality or a broadcast).
  bool tiedByRequirement(const std::string &name) const;
  /// A condition the sizes do not decide (a side divides by 0; not a symbol left out): holds
  /// (check()), breaks too, or is the only thing that breaks (conditions that fail are not
  /// counted).
  enum class Undecided { Holds, Breaks, OnlyItBreaks };
  std::optional<std::string> broken(const std::vector<std::pair<std::string, int64_t>> &binding,
                                    Undecided undecided) const;
};

/// What the inputs declare, taken before inference, which resolves the inputs' facts (an input's
/// `L` equated to another's `K` reads `K` afterwards, a `K` fixed by a weight reads 4).
struct ContractBasis {
  std::vector<std::string> symbols; // named symbols of the inputs' shapes, in order
  std::vector<Contract::Fixed> fixed;
};
ContractBasis contractBasis(const Graph &g);
/// The contract of a graph inferred at its symbolic input sizes (inferGraph has run since
/// contractBasis()).
Contract makeContract(const Graph &g, const Diagnostics &diags, const ContractBasis &basis);
/// Lowers to 0 the minimum of each symbol of `c.assumedMinimum` at which the model infers
/// without an error with that symbol alone at 0 (`infersAtZero` loads and infers the model again
/// with the symbol pinned there); the others keep their minimum of 1. Returns the symbols lowered.
std::vector<std::string> admitZeroSizes(Contract &c, const std::function<bool(const std::string &)> &infersAtZero);
/// `e` at sizes given by symbol name; none where one is missing or it does not evaluate.
std::optional<int64_t> evaluateByName(Expr e, const std::map<std::string, int64_t> &at);
/// `d` likewise: its length when static, its expression's value otherwise.
std::optional<int64_t> evaluateByName(const Dimension &d, const std::map<std::string, int64_t> &at);

/// The sizes a report shows its numbers at, by one rule for `stats`, `plan` and `memory`: each
/// input symbol at the value given; else at the upper end of its range where the range is
/// bounded (by `--dim` or by the model); else at its smallest admitted size, because nothing
/// bounds it. Sizes the contract ties to others (a mask length equal to `past + seq`) follow
/// them rather than the rule; symbols in `leave` are left out (the caller's own ties decide them,
/// or a search varies them), and so are tied symbols whose ties the sizes do not decide, unless
/// `fillTied`.
struct ShownAt {
  std::map<std::string, int64_t> at;
  std::vector<std::string> given, upper, smallest, tied; // how each symbol of `at` was chosen
  std::vector<std::string> order;                        // the inputs' order of the symbols
  std::optional<std::string> broken;                     // the requirement these sizes break
  /// `batch=8, past=4096, ... (upper ends of their ranges: batch, past; ...)`.
  std::string text() const;
};
ShownAt shownAt(const Contract &c, const std::map<std::string, int64_t> &given,
                const std::set<std::string> &leave = {}, bool fillTied = true);
void printContract(const Contract &c, const std::string &model, std::ostream &os);
nlohmann::json contractJson(const Contract &c, const std::string &model);

} // namespace sf
