// Names that make a report readable:
//  - derived sizes: a long subexpression repeated across dims (a detection model's resized
//    height `floor(H * min(800 * (1 / min(H, W)), 1333 * (1 / max(H, W))))` inside dozens of
//    dims) is named once, `R1 = floor(...)`, and the dims print `(R1 - 1)//32 + 1`; a dim still
//    longer than the limit gets its longest part named too;
//  - anonymous input dims (no dim_param) print as `x_d2` (input x, axis 2) instead of `?`.
// Printing only: the facts are unchanged, and every definition is an expression over the
// symbols and earlier definitions, so the JSON stays evaluable.
#pragma once

#include "shapeflow/dim/expr.h"
#include "shapeflow/ir/graph.h"

#include <string>
#include <utility>
#include <vector>

namespace sf {

struct ReportNames {
  PrintNames print;
  struct Definition {
    std::string name;
    Expr expr;
    std::string text; // the right-hand side: `floor(H * ...)`, `(R1 - 1)//32`, `4*R3`
  };
  /// The derived sizes in an order where each definition uses only names before it.
  std::vector<Definition> definitions;
  /// The anonymous input dims named, with their ranges, in input order.
  std::vector<std::pair<std::string, SymbolId>> inputDims;
};

struct NamingOptions {
  /// A subexpression printed at least this long is named when two or more dims use it.
  size_t minLength = 24;
  /// Dims (and definitions) printed longer than this get their longest part named.
  size_t maxLength = 80;
  /// The expressions a report prints (a model's totals, a plan's peak): named for these alone.
  /// Empty: every dim and shape value of the graph's tensors.
  std::vector<Expr> roots;
};

/// The names for a report of `g` (call inside `g.enter()`).
ReportNames nameDerivedSizes(const Graph &g, const NamingOptions &options = {});

/// `name = text` for each definition, in order, a text longer than `maxText` characters given as
/// its length (the full one is in the report's JSON).
std::vector<std::string> definitionLines(const ReportNames &names, size_t maxText = 160);

/// Names for `dims` alone (a report's totals, a plan's peak), each printed at most about
/// `maxLength` characters, and the definitions they use (definitionLines). Its expressions live
/// in the graph's context: print inside it.
struct NamedTexts {
  PrintNames print;
  std::vector<std::string> where; // `R1 = ...`
  /// `d` printed with the names: a number, or its expression.
  std::string text(const Dimension &d) const;
};
NamedTexts nameForPrinting(const Graph &g, const std::vector<Dimension> &dims, size_t maxLength = 64);

} // namespace sf
