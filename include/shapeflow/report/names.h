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
};

/// The names for a report of `g` (call inside `g.enter()`).
ReportNames nameDerivedSizes(const Graph &g, const NamingOptions &options = {});

} // namespace sf
