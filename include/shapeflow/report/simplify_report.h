// `shapeflow simplify` and Python's shapeflow.simplify: a model rewritten by the simplifier's
// passes (rewrite/rewrite.h) with the executor's kernels for constant folding, written back to
// ONNX (onnx/writer.h), and the report of what changed.
#pragma once

#include "shapeflow/rewrite/rewrite.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace sf {

struct SimplifyOptions {
  /// Constant folding makes tensors of at most this many bytes (PassContext::foldLimit).
  int64_t foldLimit = int64_t(1) << 20;
};

/// A graph's size: op nodes by op type, the nodes that compute shapes (fed by a Shape or Size,
/// directly or not), and the bytes of its constants.
struct GraphCensus {
  size_t nodes = 0;
  size_t shapeNodes = 0;
  std::map<std::string, size_t> byOp;
  int64_t weightBytes = 0;
};
GraphCensus censusOf(const Graph &g);

struct SimplifyReport {
  std::string model, output;
  GraphCensus before, after;
  std::vector<rewrite::PassCount> passes;
  /// Bytes written to the output and to its external data file.
  int64_t fileBytes = 0, externalBytes = 0;
  /// Every input dim that was symbolic still is.
  bool inputsKept = true;
};

/// Runs the simplifier's passes over an inferred graph to a fixed point (constant folding with
/// the executor's kernels): `g` becomes the simplified graph. Fills `before`, `after`, `passes`.
Result<SimplifyReport> simplifyGraph(Graph &g, const SimplifyOptions &options = {});

/// Writes the simplified graph as ONNX (onnx/writer.h): the top-level fields of `original` (the
/// model's bytes; empty for a text-form graph) kept, unnamed input dims named as reports name
/// them (`x_d0`), types written only for outputs that hold tensors. With `external`, tensors of
/// at least 1 KiB go there as external data that the model finds at `location`. Sets the
/// report's byte counts.
Result<void> writeSimplified(const Graph &g, std::string_view original, std::ostream &os, SimplifyReport &r,
                             std::ostream *external = nullptr, const std::string &location = {});

nlohmann::json simplifyJson(const SimplifyReport &r);
void printSimplify(const SimplifyReport &r, std::ostream &os);

} // namespace sf
