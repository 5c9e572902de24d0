// Lowering, first pass: shapes as explicit values. Every tensor whose shape is not static gets a
// shape value, a small integer tensor holding its dims at run time, made in one of four ways:
//  - Actual: a graph input's shape, read from the tensor (`ActualShapeOf`);
//  - Reuse: the shape is equal, by inference, to one that already has a value (an elementwise
//    op's output, `Add(x, y)` with equal shapes): that value, once (common subexpressions);
//  - Compute (mode 2): every dim is an expression of symbols some shape value already holds: a
//    shape computation inserted before the op, printed as the arithmetic it performs
//    (`(H - 1)//2 + 1`, with `H = %x.shape[2]`);
//  - Result (mode 1): otherwise (a size that depends on the data, a size inference does not
//    know): the op's kernel computes it and returns it as an extra result, which from then on
//    holds the symbols it introduces (`nonzero_0 = %nz.shape[1]`).
// Every op with a dynamic input takes that input's shape value as an extra argument. Bodies of
// control-flow ops are lowered in a scope of their own that sees the enclosing values.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sf::lower {

enum class ShapeSource : uint8_t { Actual, Compute, Result };
/// `actual`, `compute`, `result`.
const char *toString(ShapeSource s);

/// Where a symbol's value is held: element `index` of shape value `value`.
struct SymbolRef {
  size_t value = 0;
  size_t index = 0;
};

struct ShapeValue {
  std::string name;   // `%x.shape` (the tensor's name, quoted when it is not a bare name)
  std::string tensor; // the tensor whose shape it is
  std::string path;   // the graph it is made in: "" for the main graph, `loop/body` inside one
  PartialShape shape; // the dims it holds (rank known; an unknown rank holds a rank too)
  ShapeSource source = ShapeSource::Actual;
  /// Compute: the shape values holding the symbols its expressions use.
  std::vector<size_t> from;
  /// The symbols it is the first to hold, with where (Actual and Result values).
  std::vector<std::pair<SymbolId, size_t>> defines;
};

/// How an output's shape value comes about.
enum class ShapeMode : uint8_t { Static, Reuse, Compute, Result };
/// `static`, `reuse`, `compute`, `result`.
const char *toString(ShapeMode m);

struct LoweredGraph;
struct LoweredBody;

struct LoweredOp {
  uint32_t node = 0;
  /// Per input: its shape value, for an input whose shape is not static.
  std::vector<std::optional<size_t>> inputShapes;
  /// Per output: its shape value (none for a static shape) and how it comes about.
  std::vector<std::optional<size_t>> outputShapes;
  std::vector<ShapeMode> modes;
  /// Bodies (Loop, Scan, If branches), by attribute name, lowered inside this op.
  std::vector<LoweredBody> bodies;
};

struct LoweredGraph {
  const Graph *graph = nullptr;
  std::string path;
  /// Shape values of its inputs (formal and captured), per graph input; none when static.
  std::vector<std::optional<size_t>> inputShapes;
  std::vector<LoweredOp> ops; // in execution order, Parameters and Constants left out
  std::vector<std::optional<size_t>> outputShapes;
};

/// A body of an op: the attribute's name and the body lowered.
struct LoweredBody {
  std::string name;
  LoweredGraph graph;
};

struct ShapeProgram {
  std::vector<ShapeValue> values;
  LoweredGraph main;
  /// Where each symbol the program uses is held (the first value to hold it).
  std::map<SymbolId, SymbolRef> symbols;
};

/// Lowers an inferred graph (inferGraph first; bodies hold their facts once settled), its nodes
/// in `order` when given (a topological order of the main graph's node ids: the memory plan's
/// chosen order), else in the graph's.
Result<ShapeProgram> lowerShapes(const Graph &g, const std::vector<uint32_t> *order = nullptr);

/// The graphs an attribute of `n` holds (a Graph or Graphs attribute; none otherwise) that can
/// run: an If whose condition inference knows runs one branch, the other is left out.
std::vector<GraphPtr> bodiesOf(const Graph &g, const Node &n, const std::string &attr,
                               const Attribute &value);

/// `%name.shape`, `%"a/b".shape`: how a tensor and its shape value are written.
std::string valueName(const std::string &tensor);
std::string shapeValueName(const std::string &tensor);

} // namespace sf::lower
