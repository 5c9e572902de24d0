// Lowering, second pass: an upper bound for every tensor, so that memory can be allocated
// statically. A dim's bound is the top of its range: from the symbols' ranges (`--dim`, declared
// intervals) through its expression, and for a size that depends on the data from its bounded
// symbol. Where tensors have none, the report does not stop at the first: it names a minimal set
// of input symbols whose bounds would bound every tensor they leave unbounded (each with the
// tensors it would bound), and the data-dependent sizes that no input bound can.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <optional>
#include <string>
#include <vector>

namespace sf::lower {

struct TensorBound {
  std::string name;
  std::string path; // "" in the main graph, `loop/body` inside one
  const Fact *fact = nullptr;
  /// Per dim its upper bound (none: unbounded); none at all when the rank is unknown.
  std::optional<std::vector<std::optional<int64_t>>> upper;
  /// Elements times the element size at the bounds; none when a dim or the type is not bounded
  /// or known, or the product passes 2^63.
  std::optional<int64_t> upperBytes;
};

struct MissingBound {
  /// The symbol whose bound is missing; empty for sizes that have no symbol at all.
  std::string symbol;
  /// For a data-dependent size: every named size without a bound it makes (`symbol` is the
  /// first); `--dim` bounds those the model declares.
  std::vector<std::string> symbols;
  /// An input symbol (`--dim SYM=LO..HI` bounds it); otherwise a size that depends on the data.
  bool input = true;
  /// For a data-dependent size: the node whose output first has it, and its op.
  std::string node, op;
  /// Tensors that a bound on it would bound (for an input symbol: that the other missing
  /// symbols' bounds do not bound as well), and the first of them.
  size_t tensors = 0;
  std::string example;
};

struct BoundsReport {
  std::vector<TensorBound> tensors; // graph inputs and node outputs, in graph order, bodies after their owner
  std::vector<MissingBound> missing;
  size_t unbounded = 0; // tensors without upper_bytes because of a dim
};

/// The bounds of an inferred graph.
Result<BoundsReport> computeBounds(const Graph &g);

} // namespace sf::lower
