// Broadcasting : none, numpy, PDPD and bidirectional, on partial shapes with
// intervals and symbols. Rules for the dynamic cases (each is a test):
//   equal dims (same expression)        -> that dim
//   1 against d                          -> d
//   c (static, != 1) against d           -> c; d must admit 1 or c, and if d cannot be 1 then d == c
//   d1 against d2, neither can be 1      -> d1 == d2 (recorded when a SymbolTable is given)
//   d1 against d2, one cannot be 1       -> that one (the other is 1 or equal to it)
//   d1 against d2, both may be 1         -> max(d1, d2) when both are >= 1 (the valid cases are
//                                           1, or equal); max(d1, d2)*min(d1, d2, 1) when either
//                                           may be 0 (numpy broadcasts 1 against 0 to 0)
//   d against a broadcast b that already  -> b (broadcasting is associative, commutative and
//   holds d (each dim d broadcasts is       idempotent; holds wherever the two broadcast)
//   among b's)
//   dynamic rank on either side          -> dynamic rank
// Errors name the clashing dims and both shapes.
#pragma once

#include "shapeflow/dim/partial_shape.h"

#include <cstdint>

namespace sf {

class SymbolTable;

enum class BroadcastKind { None, Numpy, Pdpd, Bidirectional };

struct BroadcastSpec {
  BroadcastKind kind = BroadcastKind::Numpy;
  int64_t axis = -1; // PDPD only: start axis of B in A; -1 means rank(A) - rank(B)
};

/// Broadcast of two dims under numpy rules; `table` (optional) records learned equalities.
Result<Dimension> broadcastDim(const Dimension &a, const Dimension &b, SymbolTable *table = nullptr);

Result<PartialShape> broadcastShapes(const PartialShape &a, const PartialShape &b,
                                     BroadcastSpec spec = {}, SymbolTable *table = nullptr);

} // namespace sf
