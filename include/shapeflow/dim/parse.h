// Parsing the printed form of dims and shapes back: `3`, `N`, `?`, `?{1..8}`, `?{2..}`,
// `2*S + 1`, `(H - 1)//2 + 1`, `min(T, 512)`; shapes `[N,3,?]`, `[]`, `[...]` (unknown rank).
// Also accepted: `{1..8}` and `1..8` for an interval.
#pragma once

#include "shapeflow/dim/partial_shape.h"
#include "shapeflow/dim/symbol_table.h"

#include <string_view>

namespace sf {

/// Names resolve through `table` (made on first use). Errors say where the text went wrong.
Result<Dimension> parseDimension(std::string_view text, SymbolTable &table);
Result<PartialShape> parsePartialShape(std::string_view text, SymbolTable &table);

} // namespace sf
