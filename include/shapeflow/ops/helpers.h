// Helpers that carry the weight of op rules: axis normalisation, reading integer inputs (from
// constants or from propagated values), output-size formulas, and fact constructors.
#pragma once

#include "shapeflow/ops/op.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sf {

/// Outputs built by moving the given facts in (a braced list would copy each one).
template <class... F> Facts factsOf(F &&...f) {
  Facts v;
  v.reserve(sizeof...(f));
  (v.push_back(std::forward<F>(f)), ...);
  return v;
}

/// Axis in [-rank, rank) to [0, rank); the error says `axis 3 is out of range for rank 2`.
Result<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// Each of `axes` normalised; duplicates are an error.
Result<std::vector<int64_t>> normalizeAxes(const std::vector<int64_t> &axes, int64_t rank);

/// Elements of an integer fact when every one is a known constant (from its constant tensor or
/// its propagated value), within the value budget.
std::optional<std::vector<int64_t>> constInts(const Fact &f, size_t budget = kValueBudget);
/// Elements of a float fact when it is a known constant.
std::optional<std::vector<double>> constFloats(const Fact &f, size_t budget = kValueBudget);
/// The precision float shape math computes in for an element type (f32, f64; else none).
std::optional<FloatPrec> precisionOf(ElementType t);
/// The elements of a rank <= 1 fact as expressions (dim/expr.h): integer values, integral or
/// symbolic float values, or the numbers of a small float constant.
std::optional<std::vector<Expr>> valueExprs(const Fact &f, size_t budget = kValueBudget);
/// Rank 0 or 1: the shapes whose facts carry values as vectors.
inline bool isSmallVector(const PartialShape &s) { return s.rankIsStatic() && s.size() <= 1; }
/// Reads an integer list from attribute `name` (older opsets) or input `index` (newer).
/// Returns nullopt when it is an input whose elements are not known; an empty list when absent.
std::optional<std::vector<int64_t>> intsFromAttrOrInput(InferContext &ctx, const char *name,
                                                        size_t index, bool useInput);
/// The ranks an input holding one value may have: what the runtimes accept (measured with
/// onnxruntime by scripts/probe_one_element.py), and the rank the spec asks for.
struct OneValue {
  int minRank = 0;
  int maxRank = -1;  // -1: any
  int specRank = -1; // a one-element tensor of another accepted rank gets a warning; -1: none
};
/// Checks an input that holds one value (If's condition, Loop's M, Trilu's k, ...): an error when
/// its element count is known to differ from 1 or its rank is outside what runtimes accept
/// (onnxruntime's If takes a bool[1,1] condition, its Trilu no i64[1,1] k); a warning when the
/// rank is accepted but not the spec's (the value is read as the one element).
Result<void> expectOneElement(InferContext &ctx, const Fact &f, std::string_view what,
                              OneValue ranks);
/// The single element of a scalar or 1-element integer fact.
std::optional<Dimension> scalarDim(const Fact &f);

/// Output size of a sliding window (Conv, Pool): floor or ceil of
/// (in + padBegin + padEnd - dilation*(kernel - 1) - 1) / stride + 1. Error when it is < 1 for a
/// static input.
/// "input 2 (B)": how messages name an op's input.
std::string inputLabel(size_t i, const char *name);

/// Input `ic` broadcasts onto `target` in one direction (Gemm's C, LayerNormalization's scale):
/// each of its dims is 1 or the target's dim; a dim that cannot be 1 is the target's, and
/// `target` learns it.
Result<void> broadcastOnto(InferContext &ctx, PartialShape &target, size_t ic, const char *name);

/// The shape of numpy's matmul of `a` and `b` (inputs `ia` and `ib`, for messages): K merged,
/// batch dims broadcast, a vector operand promoted to a matrix and its dim removed again.
Result<PartialShape> matmulShape(InferContext &ctx, const Fact &a, const Fact &b, size_t ia,
                                 size_t ib);

Result<Dimension> windowOutputDim(const Dimension &in, int64_t kernel, int64_t stride,
                                  int64_t dilation, int64_t padBegin, int64_t padEnd,
                                  bool ceilMode);
/// SAME_UPPER / SAME_LOWER output size: ceil(in / stride).
Result<Dimension> sameOutputDim(const Dimension &in, int64_t stride);

/// `f32[N,3,224,224]`: the printed form of a fact for messages.
std::string describe(const Fact &f);
/// Ranks above this are taken for unknown: a rank read from the length of a shape input
/// (`Reshape(x, s)` with `s: i64[n]` unknown) must not make the rule allocate what a file claims.
inline constexpr int64_t kMaxRank = 1024;
/// Known rank `r`, every dim dynamic; an unknown rank when `r` is negative or above kMaxRank.
PartialShape shapeOfRank(int64_t r);
/// A fact with a known type and shape.
Fact makeFact(ElementType t, PartialShape s);
/// An integer fact (1-D i64) whose elements are the given dims (the value of Shape, etc.).
Fact makeShapeValueFact(ElementType t, std::vector<Dimension> dims, bool scalar = false);
/// Fact with everything unknown.
inline Fact unknownFact() { return Fact{}; }

/// The graph attribute `name` (an If branch, a Loop body), with an error naming it when it is
/// missing or not a graph.
Result<const Graph *> bodyAttr(InferContext &ctx, const std::string &name);

/// Product of dims (symbolic where possible).
Result<Dimension> productOf(const std::vector<Dimension> &dims);

// ---- passThrough slots (op.h): when a node passes an input on unchanged ----

/// Input `i`, always (Identity); with `whenSole`, only when it is the node's one input (Concat,
/// Sum, Max, Min, Mean of one input).
PassThroughFn passInput(size_t i = 0, bool whenSole = false);
/// Input 0 when output 0 has its shape at every binding (Reshape, Flatten, Squeeze, Unsqueeze,
/// Expand, Tile: the same shape means the same elements).
PassThroughFn passWhenSameShape();
/// Input 0 when output 0 has its element type (Cast, CastLike).
PassThroughFn passWhenSameType();
/// The other input when one is a constant whose every element is `neutral` and the output has
/// the other's shape: Add of 0 and Mul by 1 either way (`commutative`), Sub of 0 and Div by 1 on
/// the right.
PassThroughFn passWhenOtherIs(double neutral, bool commutative);
/// Output 0 has input i's type and shape at every binding.
bool sameTensorShape(const PassThroughArgs &a, size_t i);

} // namespace sf
