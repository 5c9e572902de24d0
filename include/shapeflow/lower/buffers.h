// Lowering, last pass: bufferization. Every tensor and every shape value of the lowered program
// (lower/shape_values.h) gets a buffer with a size (an expression of the symbols, and its upper
// bound) and a lifetime in an execution order (the graph's): allocated at the step that first
// writes it, freed after the last step that reads it. Graph inputs and outputs (and their shape
// values) belong to the caller; constants live outside the arena; Reshape, Flatten, Squeeze,
// Unsqueeze and Identity are views of their input; an elementwise op writes over an input that
// dies there and has its output's type and size. A body's buffers are planned inside the step
// of the op that runs it. The plan is what a static memory planner places.
#pragma once

#include "shapeflow/lower/shape_values.h"

#include <optional>
#include <string>
#include <vector>

namespace sf::lower {

enum class Owner : uint8_t { Arena, Caller, Constant };
/// `arena`, `caller`, `constant`.
const char *toString(Owner o);

enum class Reuse : uint8_t { None, View, InPlace };
/// `none`, `view`, `in-place`.
const char *toString(Reuse r);

struct Buffer {
  std::string name;    // `%t`, or `%t.shape` for a shape value
  std::string tensor;  // the tensor's own name (a shape value: the tensor whose shape it is)
  bool shapeValue = false;
  ElementType type = ElementType::Undefined;
  PartialShape shape;  // of the tensor (a shape value: [rank])
  Dimension bytes;     // an expression of the symbols
  std::optional<int64_t> upperBytes;
  Owner owner = Owner::Arena;
  /// Its memory is another buffer's (a view, or an output written in place); that buffer is
  /// never an alias itself.
  std::optional<size_t> aliasOf;
  Reuse reuse = Reuse::None;
  /// Steps: the first that writes it, the last that reads it (none: nothing reads it; it dies at
  /// `alloc`). Caller buffers and constants are alive before and after the graph.
  size_t alloc = 0;
  std::optional<size_t> lastUse;
};

enum class StepKind : uint8_t { ShapeOf, ShapeCompute, Op };
/// `shape_of`, `shape_compute`, `op`.
const char *toString(StepKind k);

struct BufferPlan;
struct BodyPlan;

struct Step {
  StepKind kind = StepKind::Op;
  uint32_t node = kNoNode; // the op (Op), the op it is for (ShapeCompute), the input (ShapeOf)
  std::vector<size_t> reads, writes;
  /// An op's output shape values: computed before it (read) or returned by it (written); the
  /// input shape values are the other shape buffers it reads.
  std::vector<size_t> outShapes;
  /// Arena buffers (not aliases) allocated before the step and freed after it.
  std::vector<size_t> allocs, frees;
  /// Bodies run by this op, each planned on its own, inside this step.
  std::vector<BodyPlan> bodies;
};

struct BufferPlan {
  const Graph *graph = nullptr;
  std::string path;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  /// Per graph output: the buffer of its shape value (none for a static shape, or one made
  /// outside this graph).
  std::vector<std::optional<size_t>> outputShapes;
};

/// A body's plan, by the attribute's name.
struct BodyPlan {
  std::string name;
  BufferPlan plan;
};

/// The buffers of a lowered program, in the graph's execution order.
Result<BufferPlan> planBuffers(const ShapeProgram &program);

/// The buffer whose memory `b` is (itself when it is not an alias).
size_t rootOf(const BufferPlan &plan, size_t b);

} // namespace sf::lower
