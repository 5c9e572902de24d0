// Lowering's last step: alloc/dealloc pairs replaced by static offsets in one arena.
// Built on the buffer plan (lower/buffers.h): one slot per buffer that owns memory (views and
// in-place outputs share their source's slot), each live from the step that writes it to the
// step that last reads it (graph outputs to the end).
//
// Placement is greedy by size (TFLite's "greedy by size", Pisarchyk and Lee 2020): largest first,
// each into the best-fitting gap among the slots live at the same time. With symbolic sizes the
// placement is decided at a reference binding (the symbols' upper bounds) and the offsets kept
// as expressions: a slot's offset is the largest end of the slots it was placed above, so that
// at every binding of the domain no two slots live at once overlap, and the arena is the
// plan's `peak` expression (not the upper bound's arena for every input size).
#pragma once

#include "shapeflow/lower/buffers.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sf::lower {

enum class OrderPolicy : uint8_t { Model, Memory };

struct PlanOptions {
  int64_t align = 64;
  /// Graph inputs and outputs outside the arena (the caller's memory).
  bool callerOwnedIO = false;
  OrderPolicy order = OrderPolicy::Model;
  /// Where to decide the placement of a symbolic plan: values by symbol name (default: each
  /// symbol's upper bound; a symbol without one is an error naming it).
  std::map<std::string, int64_t> reference;
  /// The sizes a symbolic plan is judged at (peak over the lower bound) when it tries other
  /// references: default, every named size at the lower end, the middle and the upper end of its
  /// range; a caller that knows which sizes the model admits together gives them here (each is
  /// then tried as a reference too).
  std::vector<std::map<std::string, int64_t>> judgeAt;
  /// Other references are tried where the plan's peak is more than this times the lower bound
  /// at one of those sizes.
  double retryAbove = 1.05;
};

struct Slot {
  std::string tensor;
  Dimension bytes;  // the tensor's own (a body's arena: its peak)
  Dimension size;   // aligned
  Dimension offset; // aligned
  size_t first = 0, last = 0; // indices into MemoryPlan::order
  /// For a tensor that shares another's slot: that tensor, and how (view, in-place).
  std::optional<size_t> sharesWith;
  Reuse reuse = Reuse::None;
  /// The slots (by index) it was placed above: its offset is the largest of their ends.
  std::vector<size_t> above;
  bool body = false; // a body's arena, live during the step of the op that runs it
};

struct MemoryPlan {
  int64_t align = 64;
  std::vector<std::string> order;        // node names, in execution order
  std::vector<uint32_t> orderIds;        // the same, as node ids
  std::vector<Slot> slots;               // owners first... in placement-independent order
  Dimension peak;                        // the arena: the largest slot end
  Dimension lowerBound;                  // max over steps of the bytes live at that step
  Dimension lowerBoundModelOrder;        // the same in the model's order
  bool symbolic = false;
  std::map<std::string, int64_t> reference; // the binding the placement was decided at
  int64_t shapeValueBytes = 0;           // shape values, kept apart from the arena (at most)
  /// Offsets (and the peak) whose expression grew past a size and were replaced by a constant
  /// bound (valid for every binding, wasteful below it).
  size_t boundedOffsets = 0;
  /// Symbols the plan's expressions use for a rounding of float shape math (`_r0` stands for
  /// floor(H * ...)), with what they stand for.
  std::vector<std::pair<std::string, Dimension>> derived;
};

/// Plans the arena of an inferred graph.
Result<MemoryPlan> planMemory(const Graph &g, const PlanOptions &options = {});

/// A plan's sizes and offsets at a binding: named symbols by `at`, else the plan's reference,
/// else their upper bound; derived symbols through their definitions, each evaluated once (an
/// offset's definition names the offsets below it). None where a dim does not evaluate.
class PlanValues {
public:
  explicit PlanValues(const MemoryPlan &plan, std::map<std::string, int64_t> at = {});
  std::optional<int64_t> operator()(const Dimension &d);

private:
  std::optional<int64_t> symbol(SymbolId s);

  const MemoryPlan &plan_;
  std::map<std::string, int64_t> at_;
  std::map<std::string, const Dimension *> derived_;
  std::unordered_map<SymbolId, std::optional<int64_t>> memo_;
};

/// The named sizes a plan's buffers depend on, bounded ones only (not its derived symbols), with
/// their ranges. Under the plan's graph's expression scope.
std::map<std::string, Interval> namedSymbols(const MemoryPlan &p);

/// A plan's peak over the live-bytes lower bound of its order at a binding of the named symbols
/// (the others at their upper bounds; the plan's own reference is not used). None where it does
/// not evaluate. Under the plan's graph's expression scope.
std::optional<double> peakOverLowerBound(const MemoryPlan &p, const std::map<std::string, int64_t> &values);

/// The live-bytes lower bound of slots (sizes at `at`) over `steps` steps.
int64_t liveLowerBound(const std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> &slots,
                       size_t steps);

} // namespace sf::lower
