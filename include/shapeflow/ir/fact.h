// Fact: what is known about one outlet (one tensor) before running the graph (tract's // TypedFact/InferenceFact in one type): the element type (possibly unknown), the shape (rank
// possibly unknown), and optionally its contents:
//  - `constant`: the full tensor, when the outlet is a constant;
//  - `value`: for integer shape-like tensors (rank 0 or 1, few elements; of higher rank only
//    where data movement made them, e.g. a pad tensor reshaped to [3,2] and transposed), one
//    Dimension per element in row-major order; for float tensors, integral values or float
//    expressions (dim/expr.h). This is ONNX's "data propagation": the elements of Shape(x)
//    are x's dims, possibly symbolic, so Shape -> Gather -> Concat -> Reshape stays symbolic.
//    Elements may be negative (a Reshape target's -1): see Dimension::constantValue.
#pragma once

#include "shapeflow/dim/partial_shape.h"
#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/ir/element_type.h"
#include "shapeflow/ir/tensor.h"
#include "shapeflow/support/format.h"
#include "shapeflow/support/result.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sf {

/// The one budget for contents: a fact's `value` holds at most this many elements, and rules
/// decode, fold or move the elements of tensors up to this size (a shape tensor, a small
/// constant); larger tensors keep their type and shape only.
inline constexpr size_t kValueBudget = 4096;

/// Bounds every element of an integer tensor lies within (`lo <= x <= hi`), for a tensor whose
/// elements are not listed: the positions Range(0, S) makes lie in 0 .. S - 1, so that a Gather
/// of a 512-row table with them requires S <= 512.
struct ElementBounds {
  Dimension lo, hi;
  /// The tensor, when not empty, holds elements equal to lo and to hi (a Range with step 1 and
  /// what only rearranges or repeats it), not merely elements between them.
  bool reached = false;
  bool operator==(const ElementBounds &) const = default;
};

struct Fact {
  ElementType type = ElementType::Undefined;
  PartialShape shape = PartialShape::dynamic();
  std::shared_ptr<const Tensor> constant;
  std::optional<std::vector<Dimension>> value;
  /// Set by rules that know it (Range) and carried by ops that move elements (OpTraits).
  std::shared_ptr<const ElementBounds> elements;

  /// A fact with a known type and shape and no contents.
  static Fact known(ElementType t, PartialShape s);
  /// The fact of a constant tensor: its type, shape and the tensor; plus `value` when it is an
  /// integer (or bool) tensor of rank <= 1 with data and at most `valueBudget` elements.
  static Fact fromTensor(std::shared_ptr<const Tensor> t, size_t valueBudget = kValueBudget);

  /// Nothing known at all.
  bool isUnknown() const {
    return type == ElementType::Undefined && !shape.rankIsStatic() && !constant && !value;
  }
  /// Same type, shape and value; constants equal as tensors (or both absent).
  bool operator==(const Fact &o) const;
  bool operator!=(const Fact &o) const { return !(*this == o); }
};

/// A hash consistent with operator== (constants contribute their type and shape only).
size_t hashOf(const Fact &f);

/// `f` with what `symbols` has learned applied to its shape and value (SymbolTable::resolve).
Fact resolved(const Fact &f, const SymbolTable &symbols);

/// `f32[N,3,224,224]`; `i64[4] = [N,3,H,W]` when the value is known (`i64[] = [N]` for a
/// scalar); `?[...]` for a fact about which nothing is known.
std::string toString(const Fact &f, const PrintNames *names = nullptr);
std::string toString(const std::vector<Dimension> &value, const PrintNames *names = nullptr);

/// Elements of an integer fact of rank <= 1 as dimensions (numbers, symbols, expressions,
/// intervals), when its element count is known: from the value, or from the constant.
std::optional<std::vector<Dimension>> dimValues(const Fact &f, size_t budget = kValueBudget);

/// What is known of a value that is one fact or the other (If's branches, a loop's rounds, a
/// sequence's elements): element types must agree when both are known (the error names both:
/// `f32[N] vs i64[N]`), an unknown type takes the other's; shapes join by PartialShape::hull;
/// values join element by element when both are known with the same length; constants survive
/// only when equal.
Result<Fact> hull(const Fact &a, const Fact &b);

/// Both facts at once (OpenVINO's merge, on facts): types must agree or one be unknown; shapes
/// merge with PartialShape::merge; values merge element by element; constants must be equal.
/// The error names both facts: `cannot merge f32[N,3] with i64[2]: element types differ`.
Result<Fact> merge(const Fact &a, const Fact &b);

} // namespace sf

SF_FORMAT_AS_STRING(sf::Fact, sf::toString(v));
