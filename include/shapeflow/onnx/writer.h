// Writing the IR back to ONNX: a model rewritten in the IR (the simplifier's output) becomes an
// ONNX model again, graph and subgraphs, weights streamed from wherever their bytes are (the
// input file's mapping, an external data file, memory) without another copy.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace sf::onnx {

struct WriteOptions {
  /// Tensors of at least `externalThreshold` bytes are written to `externalData` and the model
  /// refers to them by `externalLocation` (ONNX's external data, a path relative to the model's
  /// folder). Null: every tensor is written inside the model.
  std::ostream *externalData = nullptr;
  std::string externalLocation;
  size_t externalThreshold = 1024;
  /// Names for the anonymous symbols of the facts written (the inputs' unnamed dims, `x_d2`,
  /// report/names.h); null: such dims are written unknown.
  const PrintNames *names = nullptr;
  /// Whether an op's output holds a tensor (the IR's facts do not tell sequences and optionals
  /// from tensors; their types are not written). Null: every output does.
  std::function<bool(const Graph &, OutletId)> holdsTensor;
};

/// What was written.
struct WriteStats {
  size_t nodes = 0;        // op nodes of the main graph
  size_t initializers = 0; // constants of the main graph
  int64_t weightBytes = 0; // bytes of every constant's elements, subgraphs included
  int64_t externalBytes = 0;
};

/// Writes `g` (inferred) as an ONNX model to `os`. The top-level fields of `original` (an ONNX
/// ModelProto: ir_version, opset imports, producer, metadata, functions) are kept as they are and
/// its graph is written from the IR: nodes in a topological order, constants as initializers,
/// the graph's inputs with their facts (an unnamed input dim takes the name inferred sizes use,
/// `x_d2`), its outputs and a value_info for every other tensor from the facts (numbers, and
/// dim_param expressions of the input sizes). `original` may be empty (a graph given in the text
/// form): the model then imports the opsets its nodes carry. Subgraphs are written alike, their
/// reads of enclosing values by the enclosing value's name.
Result<WriteStats> writeModel(const Graph &g, std::string_view original, std::ostream &os,
                              const WriteOptions &options = {});

} // namespace sf::onnx
