// What `shapeflow lower` shows: each stage of lowering (report of lower/*.h) as readable text in
// the spirit of a compiler's listings, and as JSON (README "Lowering").
#pragma once

#include "shapeflow/lower/bounds.h"
#include "shapeflow/lower/buffers.h"
#include "shapeflow/lower/shape_values.h"

#include <string>
#include <vector>

namespace sf {

struct LowerReport {
  std::string model;
  const Graph *graph = nullptr;
  const lower::ShapeProgram *program = nullptr;
  const lower::BoundsReport *bounds = nullptr; // the bounds stage
  const lower::BufferPlan *plan = nullptr;     // the buffers stage
};

/// Stage 1: the program with its shape values, one line per statement.
std::vector<std::string> shapeLines(const LowerReport &r);
/// Stage 2: every tensor with its upper bound, then what bounds are missing.
std::vector<std::string> boundLines(const LowerReport &r);
/// Stage 3: allocations, steps and frees.
std::vector<std::string> bufferLines(const LowerReport &r);

/// The JSON of each stage (`indent` as JsonWriter's).
std::string shapesJsonText(const LowerReport &r, int indent = 0);
std::string boundsJsonText(const LowerReport &r, int indent = 0);
std::string buffersJsonText(const LowerReport &r, int indent = 0);

} // namespace sf
