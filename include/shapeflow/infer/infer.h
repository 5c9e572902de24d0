// Forward propagation (seed 000): walks a graph in topological order from its Parameters,
// validates and infers every node with its op's rule, records what rules learn about symbols,
// and collects every independent error in one pass. Downstream of a failed node facts stay loose.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/ops/op.h"
#include "shapeflow/support/diagnostic.h"

#include <string>
#include <vector>

namespace sf {

struct InferOptions {
  const OpRegistry *registry = nullptr; // defaultRegistry() when null
  int maxSubgraphDepth = 16;
};

struct InferStats {
  size_t nodes = 0;
  size_t failed = 0;
  size_t withoutRule = 0;
  std::vector<std::string> opsWithoutRule; // op types, once each
};

/// Infers every outlet's fact in place. `symbols` defaults to the graph's own table.
InferStats inferGraph(Graph &g, Diagnostics &diags, const InferOptions &options = {});
InferStats inferGraph(Graph &g, SymbolTable &symbols, Diagnostics &diags,
                      const InferOptions &options, int depth);

} // namespace sf
