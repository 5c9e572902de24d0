// Questions about a model that take more than one inference, shared by the command line and the
// Python module: its input contract (each named size probed at 0), and its memory at rows of
// sizes (the model inferred from 0 where a row has an empty cache, and again at a row's concrete
// sizes where the symbolic parts give no number).
#pragma once

#include "shapeflow/infer/infer.h"
#include "shapeflow/report/contract.h"
#include "shapeflow/report/memory_report.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sf {

/// Loads the model afresh, applies `options` (applyInputs), calls `beforeInference` (when set)
/// and infers: one inference of the model, as the caller loads it (a file, bytes in memory).
struct InferredModel {
  Graph graph;
  Diagnostics diags;
  InferStats stats;
};
using InferModel = std::function<Result<InferredModel>(const InferOptions &options,
                                                       const std::function<void(Graph &)> &beforeInference)>;

struct ContractedModel {
  InferredModel model;
  Contract contract;
  /// The sizes `model` was inferred with from 0 (those admitted there), empty when it was not.
  std::vector<std::string> fromZero;
};
/// The model inferred at its symbolic sizes and its contract, each named size the importer
/// takes to be at least 1 admitted from 0 where the model infers with it alone at 0.
/// Past `probedNodes` nodes the sizes are not probed (the contract states the assumption).
Result<ContractedModel> inferWithContract(const InferModel &infer, const InferOptions &options,
                                          size_t probedNodes = SIZE_MAX);

/// A graph past this many nodes is not probed: each probe is a whole inference; such a graph
/// keeps the importer's assumption (`--dim SYM=0..` admits an empty size by hand).
inline constexpr size_t kProbedNodes = 50000;

/// The model inferred with each named size the importer takes to be at least 1 (no range given)
/// and the contract admits at 0 ranged from 0, so that its facts hold for an empty cache too;
/// `admitted` receives those names. Without any, the contract's own inference is the result.
Result<InferredModel> inferAdmittingZero(const InferModel &infer, const InferOptions &options,
                                         std::vector<std::string> *admitted = nullptr);

/// `options` with each size some binding sets to 0 ranged from 0 (`--dim SYM=0..`), unless a
/// range is given for it.
InferOptions withEmptySizes(InferOptions options, const std::vector<Binding> &bindings);

/// What `shapeflow memory` asks: rows, ties as text (`T=P+S`), a budget for one size.
struct MemoryRequest {
  std::vector<Binding> at;
  std::vector<std::string> ties;
  std::optional<std::string> fitSymbol;
  int64_t budget = 0;
  MemoryPart fitPart = MemoryPart::Total;
  int64_t align = 64;
};
Result<MemoryReport> modelMemory(const InferModel &infer, const InferOptions &options, const MemoryRequest &request,
                                 const std::string &label);

} // namespace sf
