// Sequences and optionals: SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
// OptionalHasElement, OptionalGetElement.
//
// Convention: Fact has no sequence or optional kind, so a sequence is represented by the fact of
// its ELEMENTS, the hull (fact.h) of what every element can be: SequenceConstruct(a:[2,3],
// b:[4,3]) is `f32[?{2..4},3]`, SequenceAt returns that fact as is, SequenceInsert joins the new
// element in. An optional is represented by the fact of the value it may hold. The importer reads
// sequence and optional types the same way (their element type), so Identity, If and Loop carry
// them unchanged. What this cannot say: the length of a sequence (SequenceLength is a fresh
// symbol), that a sequence is empty (SequenceEmpty's element fact is merely unknown), or whether
// an optional holds a value.
#include "shapeflow/ir/graph.h"
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

namespace sf {
namespace {


std::string str(int64_t v) { return std::to_string(v); }

/// An element joined into a sequence: same element type required.
Result<Fact> joinElement(const Fact &seq, const Fact &elem, const std::string &what) {
  auto h = hull(seq, elem);
  if (!h.ok()) return errorf("{} is {} but the sequence holds {}", what, elem, seq);
  return *h;
}

Result<void> requirePosition(InferContext &ctx, size_t i) {
  if (!ctx.hasInput(i)) return success();
  const Fact &p = ctx.input(i);
  if (p.type != ElementType::Undefined && p.type != ElementType::I32 && p.type != ElementType::I64)
    return errorf("position (input {}) must be i32 or i64, got {}", int64_t(i), p);
  // "It must be a scalar (tensor of empty shape)"; onnxruntime reads the first element of any
  // tensor it is given, so anything else is a warning.
  if (p.shape.rankIsStatic() && p.shape.size() > 0)
    ctx.warn(fmt::format("position (input {}) should be a scalar (rank 0), got {}; onnxruntime "
                         "reads its first element",
                         i, p));
  return success();
}

Result<Facts> inferSequenceConstruct(InferContext &ctx) {
  if (ctx.numInputs() == 0) return makeError("needs at least one input");
  Fact seq = ctx.input(0);
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    SF_ASSIGN(seq, joinElement(seq, ctx.input(i), "input " + str(int64_t(i))));
  }
  return factsOf(std::move(seq));
}

Result<Facts> inferSequenceEmpty(InferContext &ctx) {
  SF_ASSIGN(int64_t dtype, ctx.attrs().getInt("dtype", int64_t(ElementType::F32)));
  auto t = elementTypeFromOnnx(dtype);
  if (!t) return errorf("attribute 'dtype' = {} is not a known element type", dtype);
  return factsOf(makeFact(*t, PartialShape::dynamic()));
}

Result<Facts> inferSequenceInsert(InferContext &ctx) {
  SF_TRY(requirePosition(ctx, 2));
  SF_ASSIGN(Fact seq, joinElement(ctx.input(0), ctx.input(1), "the tensor (input 1)"));
  return factsOf(std::move(seq));
}

Result<Facts> inferSequenceAt(InferContext &ctx) {
  if (!ctx.hasInput(1)) return makeError("the position (input 1) is missing");
  SF_TRY(requirePosition(ctx, 1));
  return factsOf(ctx.input(0));
}

Result<Facts> inferSequenceErase(InferContext &ctx) {
  SF_TRY(requirePosition(ctx, 1));
  return factsOf(ctx.input(0));
}

Result<Facts> inferSequenceLength(InferContext &ctx) {
  // The length is not tracked (see the top of the file): a fresh size, shared downstream.
  Dimension n = ctx.freshDim("seq_len", {0, kInf});
  return factsOf(makeShapeValueFact(ElementType::I64, {n}, true));
}

Result<Facts> inferSplitToSequence(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", 0));
  SF_ASSIGN(int64_t keepdims, ctx.attrs().getInt("keepdims", 1));
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, PartialShape::dynamic()));
  int64_t r = int64_t(x.shape.size());
  if (r == 0) return errorf("cannot split a scalar ({})", x);
  SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
  std::vector<Dimension> dims = x.shape.dims();
  const Dimension D = dims[a];
  auto upTo = [&](int64_t hi) { return Dimension::fromInterval({0, std::min(hi, D.maxLength())}); };
  if (!ctx.hasInput(1)) {
    // Chunks of one; keepdims=0 drops the axis.
    if (keepdims)
      dims[a] = Dimension(1);
    else
      dims.erase(dims.begin() + a);
    return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
  }
  const Fact &split = ctx.input(1);
  if (split.type != ElementType::Undefined && split.type != ElementType::I32 &&
      split.type != ElementType::I64)
    return errorf("split (input 1) must be i32 or i64, got {}", split);
  if (split.shape.rankIsStatic() && split.shape.size() > 1)
    return errorf("split (input 1) must be a scalar or 1-D, got {}", split);
  auto v = dimValues(split);
  if (!split.shape.rankIsStatic() || !v) {
    dims[a] = upTo(kInf);
  } else if (split.shape.size() == 0) {
    // Chunks of s; the last one may be shorter.
    const Dimension &s = (*v)[0];
    if (s.maxLength() <= 0) return errorf("split (input 1) must be positive, got {}", s);
    if (s.isStatic() && D.isStatic()) {
      int64_t sv = s.length(), dv = D.length();
      dims[a] = dv <= sv ? Dimension(dv)
                : dv % sv == 0 ? Dimension(sv)
                               : Dimension::fromInterval({dv % sv, sv});
    } else {
      dims[a] = upTo(s.maxLength());
    }
  } else {
    // Chunk lengths given: every element is one of them; they must add up to the axis.
    if (v->empty()) return makeError("split (input 1) is empty");
    Dimension h = (*v)[0];
    bool allStatic = true;
    int64_t sum = 0;
    for (const auto &d : *v) {
      if (d.maxLength() < 0) return errorf("split (input 1) has a negative length {}", d);
      h = Dimension::hull(h, d.nonNegative());
      allStatic = allStatic && d.isStatic();
      if (d.isStatic()) sum = satAdd(sum, d.length());
    }
    if (allStatic && D.isStatic() && sum != D.length())
      return errorf("split lengths add up to {} but the axis has {} ({})", sum, D, x);
    dims[a] = h.nonNegative();
  }
  return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
}

Result<Facts> inferConcatFromSequence(InferContext &ctx) {
  const Fact &seq = ctx.input(0);
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis"));
  SF_ASSIGN(int64_t newAxis, ctx.attrs().getInt("new_axis", 0));
  if (newAxis != 0 && newAxis != 1) return errorf("new_axis must be 0 or 1, got {}", newAxis);
  if (!seq.shape.rankIsStatic()) return factsOf(makeFact(seq.type, PartialShape::dynamic()));
  int64_t r = int64_t(seq.shape.size());
  std::vector<Dimension> dims = seq.shape.dims();
  // The number of elements is unknown: so is the length along the axis.
  if (newAxis) {
    SF_ASSIGN(int64_t a, normalizeAxis(axis, r + 1));
    dims.insert(dims.begin() + a, Dimension::dynamic());
  } else {
    if (r == 0) return errorf("cannot concatenate scalars without new_axis ({})", seq);
    SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
    dims[a] = Dimension::dynamic();
  }
  return factsOf(makeFact(seq.type, PartialShape(std::move(dims))));
}

Result<Facts> inferSequenceMap(InferContext &ctx) {
  SF_ASSIGN(const Graph *body, bodyAttr(ctx, "body"));
  size_t n = body->formalInputCount();
  if (ctx.numInputs() < n)
    return errorf("the body takes {} inputs but the node has {}", int64_t(n),
                  int64_t(ctx.numInputs()));
  if (ctx.numOutputs() != body->outputs.size())
    return errorf("the node has {} outputs, the body {}", int64_t(ctx.numOutputs()),
                  int64_t(body->outputs.size()));
  return ctx.memoized(*body, [&]() -> Result<Facts> {
    // Element facts of sequence inputs and the facts of tensor inputs look alike here (see the
    // top of the file): each is what the body sees.
    Facts formals;
    for (size_t i = 0; i < n; ++i)
      formals.push_back(ctx.input(i));
    // The body's output facts, inferred from element facts that cover every element, cover
    // every output element.
    return ctx.inferBodyFinal(*body, formals, body->outputs.size());
  });
}

Result<Facts> inferOptional(InferContext &ctx) {
  if (ctx.hasInput(0)) return factsOf(ctx.input(0));
  // An empty optional: its `type` gives the element's type and shape.
  auto declared = ctx.attrs().getType("type");
  if (!declared.ok()) return factsOf(Fact{});
  return factsOf(Fact(**declared));
}

Result<Facts> inferOptionalHasElement(InferContext &ctx) {
  Fact out = makeFact(ElementType::Bool, PartialShape{});
  // Opset 18: an absent input is an empty optional.
  if (!ctx.hasInput(0)) out.value = std::vector<Dimension>{Dimension::constantValue(0)};
  return factsOf(std::move(out));
}

Result<Facts> inferOptionalGetElement(InferContext &ctx) {
  if (!ctx.hasInput(0)) return makeError("the optional (input 0) is missing");
  return factsOf(ctx.input(0));
}

} // namespace

void registerSequenceOps(OpRegistry &r) {
  r.add({.name = "SequenceConstruct", .infer = inferSequenceConstruct, .traits = {.outputKind = OutputKind::Other}, .cost = costNone});
  r.add({.name = "SequenceEmpty", .infer = inferSequenceEmpty, .traits = {.outputKind = OutputKind::Other}, .cost = costNone});
  r.add({.name = "SequenceInsert", .infer = inferSequenceInsert, .traits = {.outputKind = OutputKind::Other}, .cost = costNone});
  r.add({.name = "SequenceAt", .infer = inferSequenceAt, .cost = costNone});
  r.add({.name = "SequenceErase", .infer = inferSequenceErase, .traits = {.outputKind = OutputKind::Other}, .cost = costNone});
  r.add({.name = "SequenceLength", .infer = inferSequenceLength, .cost = costNone});
  r.add({.name = "SplitToSequence", .infer = inferSplitToSequence, .traits = {.outputKind = OutputKind::Other}, .cost = costNone});
  r.add({.name = "ConcatFromSequence", .infer = inferConcatFromSequence, .cost = costNone});
  r.add({.name = "SequenceMap",
         .infer = inferSequenceMap,
         .traits = {.bodies = BodyRuns::PerElement, .outputKind = OutputKind::Other},
         .cost = costNone});
  r.add({.name = "Optional", .infer = inferOptional, .traits = {.outputKind = OutputKind::Other}, .cost = costNone});
  r.add({.name = "OptionalHasElement", .infer = inferOptionalHasElement, .cost = costNone});
  r.add({.name = "OptionalGetElement", .infer = inferOptionalGetElement, .traits = {.outputKind = OutputKind::Unknown}, .cost = costNone});
}

} // namespace sf
