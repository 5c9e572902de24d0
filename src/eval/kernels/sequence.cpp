// Kernels of the sequence and optional ops (src/ops/sequence.cpp).
// SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
// SplitToSequence, ConcatFromSequence, SequenceMap, Optional, OptionalHasElement,
// OptionalGetElement. A sequence's elements are shared, never copied; SplitToSequence and
// ConcatFromSequence cut and join with the Split and Concat code (array_ops.cpp).
#include "../kernel_util.h"
#include "shapeflow/ir/element_type.h"

namespace sf::eval::detail {
namespace {

using TensorRef = std::shared_ptr<const Tensor>;

Result<const Value *> sequenceInput(EvalContext &ctx, size_t i) {
  const Value &v = ctx.value(i);
  if (!v.isSequence()) return errorf("input {} is {}, not a sequence", i, v.describe());
  return &v;
}

/// The element type a sequence output declares (for an empty one), else `fallback`.
ElementType declaredType(EvalContext &ctx, size_t output, ElementType fallback) {
  ElementType t = ctx.node().outputs[output].fact.type;
  return t != ElementType::Undefined ? t : fallback;
}

/// A position input in [-n, n - 1] (`insert`: [-n, n]) made non-negative; `otherwise` when absent.
Result<size_t> position(EvalContext &ctx, size_t input, size_t n, bool insert, size_t otherwise) {
  if (!ctx.hasInput(input)) return otherwise;
  SF_ASSIGN(auto p, ints(ctx.input(input)));
  if (p.empty()) return errorf("the position is empty");
  int64_t len = int64_t(n), hi = insert ? len : len - 1;
  if (p[0] < -len || p[0] > hi)
    return errorf("position {} is outside [{}, {}] for a sequence of {}", p[0], -len, hi, n);
  return size_t(p[0] < 0 ? p[0] + len : p[0]);
}

Result<void> sequenceConstruct(EvalContext &ctx) {
  std::vector<TensorRef> elements;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i)) return errorf("input {} is {}, not a tensor", i, ctx.value(i).describe());
    if (!elements.empty() && ctx.input(i).type() != elements[0]->type())
      return errorf("input {} is {}, input 0 {}", i, shortName(ctx.input(i).type()), shortName(elements[0]->type()));
    elements.push_back(ctx.inputShared(i));
  }
  ElementType t = elements.empty() ? declaredType(ctx, 0, ElementType::F32) : elements[0]->type();
  return ctx.setOutput(0, Value::sequence(t, std::move(elements)));
}

Result<void> sequenceEmpty(EvalContext &ctx) {
  SF_ASSIGN(int64_t dtype, ctx.attrs().getInt("dtype", 1)); // 1: FLOAT
  auto t = elementTypeFromOnnx(int32_t(dtype));
  if (!t) return errorf("dtype {} is not an element type", dtype);
  return ctx.setOutput(0, Value::sequence(*t, {}));
}

Result<void> sequenceInsert(EvalContext &ctx) {
  SF_ASSIGN(const Value *s, sequenceInput(ctx, 0));
  if (!ctx.hasInput(1)) return errorf("the tensor to insert is {}", ctx.value(1).describe());
  if (s->elementType() != ElementType::Undefined && ctx.input(1).type() != s->elementType())
    return errorf("inserting {} into a sequence of {}", shortName(ctx.input(1).type()), shortName(s->elementType()));
  auto elements = s->elements();
  SF_ASSIGN(size_t at, position(ctx, 2, elements.size(), true, elements.size()));
  elements.insert(elements.begin() + long(at), ctx.inputShared(1));
  return ctx.setOutput(0, Value::sequence(ctx.input(1).type(), std::move(elements)));
}

Result<void> sequenceAt(EvalContext &ctx) {
  SF_ASSIGN(const Value *s, sequenceInput(ctx, 0));
  if (!ctx.hasInput(1)) return errorf("the position is {}", ctx.value(1).describe());
  SF_ASSIGN(size_t at, position(ctx, 1, s->elements().size(), false, 0));
  return ctx.setOutput(0, Value(s->elements()[at]));
}

Result<void> sequenceErase(EvalContext &ctx) {
  SF_ASSIGN(const Value *s, sequenceInput(ctx, 0));
  auto elements = s->elements();
  if (elements.empty()) return errorf("erasing from an empty sequence");
  SF_ASSIGN(size_t at, position(ctx, 1, elements.size(), false, elements.size() - 1));
  elements.erase(elements.begin() + long(at));
  return ctx.setOutput(0, Value::sequence(s->elementType(), std::move(elements)));
}

Result<void> sequenceLength(EvalContext &ctx) {
  SF_ASSIGN(const Value *s, sequenceInput(ctx, 0));
  SF_ASSIGN(Tensor t, Tensor::fromInt64s({}, {int64_t(s->elements().size())}));
  return ctx.setOutput(0, std::move(t));
}

Result<void> splitToSequence(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
  SF_ASSIGN(int64_t keepdims, ctx.attrs().getInt("keepdims", 1));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  int64_t len = a.shape()[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (ctx.hasInput(1)) {
    const Tensor &s = ctx.input(1);
    SF_ASSIGN(sizes, ints(s));
    if (s.rank() == 0) { // chunks of that size, the last one smaller
      int64_t each = sizes.empty() ? 0 : sizes[0];
      if (each <= 0) return errorf("split {} is not positive", each);
      sizes.clear();
      for (int64_t at = 0; at < len; at += each) sizes.push_back(std::min(each, len - at));
    } else if (s.rank() != 1) {
      return errorf("split has rank {}, expected 0 or 1", s.rank());
    }
  } else { // pieces of 1, the axis dropped unless keepdims
    sizes.assign(size_t(len), 1);
    squeeze = keepdims == 0;
  }
  SF_ASSIGN(auto parts, splitTensor(ctx, a, axis, sizes, false));
  std::vector<TensorRef> elements;
  for (Tensor &p : parts) {
    if (squeeze) {
      Shape s = p.shape();
      s.erase(s.begin() + long(axis));
      auto owner = std::make_shared<const Tensor>(std::move(p));
      SF_ASSIGN(Tensor v, Tensor::view(owner->type(), s, owner->bytes(), owner));
      elements.push_back(std::make_shared<const Tensor>(std::move(v)));
    } else {
      elements.push_back(std::make_shared<const Tensor>(std::move(p)));
    }
  }
  return ctx.setOutput(0, Value::sequence(a.type(), std::move(elements)));
}

Result<void> concatFromSequence(EvalContext &ctx) {
  SF_ASSIGN(const Value *s, sequenceInput(ctx, 0));
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis"));
  SF_ASSIGN(int64_t newAxis, ctx.attrs().getInt("new_axis", 0));
  const auto &elements = s->elements();
  if (elements.empty()) return errorf("the sequence is empty");
  size_t rank = elements[0]->rank();
  SF_ASSIGN(size_t axis, normAxis(axisAttr, rank + (newAxis ? 1 : 0)));
  // Stacking is concatenation of the elements seen with a 1 inserted at the axis.
  std::vector<Tensor> views;
  std::vector<const Tensor *> parts;
  views.reserve(elements.size());
  for (const auto &e : elements) {
    if (!newAxis) {
      parts.push_back(e.get());
      continue;
    }
    Shape sh = e->shape();
    sh.insert(sh.begin() + long(axis), 1);
    SF_ASSIGN(Tensor v, Tensor::view(e->type(), sh, e->bytes(), e));
    views.push_back(std::move(v));
  }
  for (const Tensor &v : views) parts.push_back(&v);
  SF_ASSIGN(Tensor t, concatTensors(ctx, parts, axis));
  return ctx.setOutput(0, std::move(t));
}

Result<void> sequenceMap(EvalContext &ctx) {
  SF_ASSIGN(GraphPtr body, ctx.attrs().getGraph("body"));
  SF_ASSIGN(const Value *first, sequenceInput(ctx, 0));
  size_t n = first->elements().size();
  // Inputs of the node that are the body's formals (the rest are values the body captures).
  size_t formals = 0;
  for (OutletId o : body->inputs) formals += !body->nodes[o.node].isCaptured();
  if (formals > ctx.numInputs()) return errorf("the body has {} inputs, the node {}", formals, ctx.numInputs());
  for (size_t i = 1; i < formals; ++i)
    if (ctx.value(i).isSequence() && ctx.value(i).elements().size() != n)
      return errorf("input {} has {} elements, input 0 {}", i, ctx.value(i).elements().size(), n);
  std::vector<std::vector<TensorRef>> outs(ctx.numOutputs());
  for (size_t k = 0; k < n; ++k) {
    std::vector<Value> args;
    for (size_t i = 0; i < formals; ++i) {
      const Value &v = ctx.value(i);
      args.push_back(v.isSequence() ? Value(v.elements()[k]) : v);
    }
    SF_ASSIGN(auto results, ctx.runBody(*body, args));
    if (results.size() != outs.size()) return errorf("the body has {} outputs, the node {}", results.size(), outs.size());
    for (size_t j = 0; j < results.size(); ++j) {
      if (!results[j].isTensor()) return errorf("the body's output {} is {}", j, results[j].describe());
      outs[j].push_back(results[j].tensor());
    }
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    ElementType t = outs[j].empty() ? declaredType(ctx, j, ElementType::Undefined) : outs[j][0]->type();
    SF_TRY(ctx.setOutput(j, Value::sequence(t, std::move(outs[j]))));
  }
  return success();
}

Result<void> optional(EvalContext &ctx) {
  if (ctx.value(0)) return ctx.setOutput(0, ctx.value(0));
  return ctx.setOutput(0, Value::none(declaredType(ctx, 0, ElementType::Undefined)));
}

Result<void> optionalHasElement(EvalContext &ctx) {
  bool has = ctx.value(0) && !ctx.value(0).isNone();
  SF_ASSIGN(Tensor t, Tensor::fromInt64s({}, {has ? 1 : 0}, ElementType::Bool));
  return ctx.setOutput(0, std::move(t));
}

Result<void> optionalGetElement(EvalContext &ctx) {
  const Value &v = ctx.value(0);
  if (!v || v.isNone()) return errorf("the optional is empty");
  return ctx.setOutput(0, v);
}

} // namespace

Result<void> registerSequenceKernels(OpRegistry &r) {
  SF_TRY(setSequenceKernel(r, "SequenceConstruct", sequenceConstruct));
  SF_TRY(setSequenceKernel(r, "SequenceEmpty", sequenceEmpty));
  SF_TRY(setSequenceKernel(r, "SequenceInsert", sequenceInsert));
  SF_TRY(setSequenceKernel(r, "SequenceAt", sequenceAt));
  SF_TRY(setSequenceKernel(r, "SequenceErase", sequenceErase));
  SF_TRY(setSequenceKernel(r, "SequenceLength", sequenceLength));
  SF_TRY(setKernel(r, "SplitToSequence", splitToSequence));
  SF_TRY(setSequenceKernel(r, "ConcatFromSequence", concatFromSequence));
  SF_TRY(setSequenceKernel(r, "SequenceMap", sequenceMap));
  SF_TRY(setSequenceKernel(r, "Optional", optional));
  SF_TRY(setSequenceKernel(r, "OptionalHasElement", optionalHasElement));
  SF_TRY(setSequenceKernel(r, "OptionalGetElement", optionalGetElement));
  return success();
}

} // namespace sf::eval::detail
