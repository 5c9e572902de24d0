// `shapeflow why MODEL TENSOR[AXIS]`: how a dim was derived, op by op, back to the inputs: the
// producers whose facts carry the dim's symbols (or, for a number, the data path), each with its
// inputs' facts; the requirements inference recorded on those symbols; and, when the producer
// failed, the derivation of each of its inputs side by side.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/diagnostic.h"
#include "shapeflow/support/result.h"

#include <ostream>
#include <string>

namespace sf {

/// `spec` is `TENSOR` or `TENSOR[AXIS]` (a negative axis counts from the end). Errors name a
/// tensor that does not exist or an axis out of range.
Result<void> explainDim(const Graph &g, const Diagnostics &diags, const std::string &spec,
                        std::ostream &os);

} // namespace sf
