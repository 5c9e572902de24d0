// The text form of graphs: readable, printed and parsed by the same conventions, and round-trip
// exact: printGraph(parseGraph(printGraph(g))) == printGraph(g). docs/TEXT_FORMAT.md has the
// grammar; in short:
//
//   # comment
//   symbol N 1..64                 # symbols and their ranges (printed when needed)
//   opset 17                       # default opset of a domain ("" here)
//   graph main(x: f32[N,3,H,W], w: f32[16,3,3,3]) {
//     c = Constant() {value = i64[2] [1, -1]}
//     y = Conv(x, w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
//     a, b = Split(y) {axis = 1} @split0
//     z = com.microsoft.Foo:1(a, , b)
//     return y, z
//   }
//
// Errors carry `line:column`.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace sf {

struct PrintOptions {
  /// Print every node output's fact (`y: f32[N,16,?,?] = Conv(x, w)`); Parameters always show
  /// theirs.
  bool facts = false;
  /// Tensors with more elements print as `f32[64,3,7,7] <9408 elements>` and read back as
  /// tensors without data.
  size_t maxTensorElements = 256;
};

std::string printGraph(const Graph &g, const PrintOptions &options = {});
/// Parses one graph (with its symbol and opset declarations). Names resolve within each graph
/// (a subgraph names captured values through its captured Parameters), so a node may read an
/// outlet defined further down; cycles parse (and fail topologicalOrder()).
Result<Graph> parseGraph(std::string_view text);

/// A name as the text form writes it: bare (`conv1`, `x.1`) or quoted (`"/conv1/Conv"`).
std::string printName(std::string_view s);

} // namespace sf
