// What a deployment needs to know (`shapeflow memory`): a model's memory in parts, each an
// expression of the input sizes and a number at each binding asked about, and the largest size
// that fits a budget.
//
// The parts:
//  - weights: the initializers and constants as the file stores them (4-bit elements packed two
//    to a byte; shapes only, nothing read);
//  - the KV cache: pairs of a graph input and a graph output that the model carries from one
//    step to the next, found from the graph, not from names: an output whose elements come
//    from an input only moved or copied (Concat, Gather, Slice, Split, layout ops, scatters
//    that write into it, an attention op's present cache from its past one: Attention,
//    com.microsoft Attention, MultiHeadAttention, GroupQueryAttention), with the input's rank
//    and type and its shape but along one axis (a cache that grows, or a window) or the same
//    shape (written in place). Each pair counts its input and its output;
//  - activations: the static memory plan's peak with the inputs and outputs the caller's
//    (tensors between ops; an op's scratch inside its kernel is not a tensor of the graph): at a
//    row, the plan placed at the row's sizes; as an expression, the plan placed at the rows'
//    largest sizes (valid at every size, tight near them);
//  - inputs and outputs that are not cache;
//  - the total of the four.
#pragma once

#include "shapeflow/dim/dimension.h"
#include "shapeflow/infer/domain.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/report/contract.h"
#include "shapeflow/report/names.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sf {

struct CachePair {
  std::string input, output;
  int64_t axis = 0;      // the axis that grows (the sequence axis of an attention cache)
  bool grows = true;     // concatenated (output longer); else written in place
  Dimension bytesIn, bytesOut;
};

/// The pairs of graph input and output that carry a cache from one step to the next.
std::vector<CachePair> findCachePairs(const Graph &g);

/// Bytes of the initializers and constants as stored (4-bit types packed).
int64_t weightBytes(const Graph &g);

enum class MemoryPart : uint8_t { Weights, KvCache, Activations, Io, Total };
/// `weights`, `kv_cache`, `activations`, `io`, `total`.
const char *toString(MemoryPart p);
std::optional<MemoryPart> memoryPartNamed(const std::string &name);

struct MemoryRow {
  Binding at; // every input symbol: those given and those the contract ties to them
  /// How the sizes not given were chosen (`ShownAt::text`); empty when every size was given.
  std::string note;
  int64_t weights = 0, kvCache = 0, activations = 0, io = 0, total = 0;
  int64_t part(MemoryPart p) const;
};

struct MemoryFit {
  std::string symbol;
  int64_t budget = 0;
  MemoryPart part = MemoryPart::Total;
  std::optional<int64_t> max; // none: not even the smallest size fits (or no answer)
  std::string why;
};

struct MemoryReport {
  std::shared_ptr<ExprContext> context; // the graph's: the expressions below live there
  std::string model;
  std::vector<std::string> symbols; // the inputs' named sizes, in order
  int64_t weights = 0;
  std::vector<CachePair> cache;
  Dimension kvCache, io;
  lower::MemoryPlan plan; // the activations' expression: plan.peak
  std::vector<MemoryRow> rows;
  std::optional<MemoryFit> fit;
  /// Names that print the kv cache's, the activations' and the io's expressions short (what
  /// they share and their long parts), and those names' definitions.
  NamedTexts names;
};

struct MemoryOptions {
  std::vector<Binding> at; // the rows
  /// Sizes given as expressions of others at every row and in the fit (`total_sequence_length =
  /// past_sequence_length + sequence_length` where the graph does not tie them itself).
  std::vector<std::pair<std::string, Expr>> ties;
  std::optional<std::string> fitSymbol;
  int64_t budget = 0;
  MemoryPart fitPart = MemoryPart::Total;
  int64_t align = 64;
  /// The model inferred again at a binding's concrete sizes: a row's parts are taken from it
  /// where the symbolic ones do not evaluate there (a size inference left unknown) or the
  /// symbolic plan placed at the row bounds offsets over the whole domain (its expressions grew
  /// too large), so that a row's numbers are the model's at its sizes.
  std::function<Result<Graph>(const Binding &)> inferAt;
};

/// The report of an inferred graph, its contract deciding the symbols tied to the given ones
/// and refusing bindings that break it.
Result<MemoryReport> memoryReport(const Graph &g, const Contract &contract, const std::string &model,
                                  const MemoryOptions &options);

/// `8GiB`, `512 MiB`, `1.5GB`, `1000000`: bytes (KiB/MiB/GiB/TiB by 1024, KB/MB/GB/TB by 1000).
Result<int64_t> parseBytes(const std::string &text);
/// `1.50 GiB`, `512.0 MiB`, `960 B`.
std::string bytesIEC(int64_t bytes);

void printMemory(const MemoryReport &r, std::ostream &os);
nlohmann::json memoryJson(const MemoryReport &r);

} // namespace sf
