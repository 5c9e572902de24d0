// Checks of lowering's results that read only those results (not the graph nor the code that made
// them): what the test suite runs on every golden graph and dev model, and what a consumer of a
// plan can run on a plan it was given.
#pragma once

#include "shapeflow/lower/buffers.h"
#include "shapeflow/lower/shape_values.h"

namespace sf::lower {

/// A shape program: every value's symbols are held by a value made before it (a computation reads
/// only what exists); each symbol is held where the program says; an op's output shape value
/// exists before the op runs or is its result.
Result<void> verifyShapes(const ShapeProgram &p);

/// A buffer plan: every arena buffer is allocated once, before it is first written, and freed
/// once, after it is last read; every step reads and writes only live buffers (an alias lives
/// while its root does); an in-place write happens only over memory nothing reads afterwards;
/// aliases point at buffers that are not aliases. Bodies recursively.
Result<void> verifyBuffers(const BufferPlan &plan);

} // namespace sf::lower
