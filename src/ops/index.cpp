// Indexing and data-dependent ops: GatherElements, GatherND, ScatterND, ScatterElements, Scatter,
// OneHot, TopK, NonZero, Unique, Compress, NonMaxSuppression, Trilu, ReverseSequence, EyeLike,
// DepthToSpace, SpaceToDepth, Det. A size that depends on data (NonZero's count, TopK's k when it
// is not known) is a fresh named symbol with the tightest bound the inputs allow, so that every
// tensor downstream shares it.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace sf {
namespace {

/// Range of the element count of a shape of static rank (open when a dim is unbounded).
Interval elementCountRange(const PartialShape &s) {
  int64_t lo = 1, hi = 1;
  for (const auto &d : s.dims()) {
    lo = satMul(lo, d.minLength());
    hi = satMul(hi, d.maxLength());
  }
  return {lo, hi};
}

/// Error unless `f` has rank `r` (when its rank is known).
Result<void> requireRank(const Fact &f, size_t index, int64_t r, const char *what) {
  if (f.shape.rankIsStatic() && int64_t(f.shape.size()) != r)
    return errorf("input {} ({}) has rank {}, expected {} ({})", int64_t(index), what,
                  int64_t(f.shape.size()), r, f);
  return success();
}

/// Elements of a known constant as doubles (for counting data-dependent sizes exactly).
std::optional<std::vector<double>> constantElements(const Fact &f, size_t budget) {
  if (!f.constant) return std::nullopt;
  auto v = f.constant->toDoubles(budget);
  if (!v.ok()) return std::nullopt;
  return *v;
}

/// Scatters known updates into a known 1-D value vector at known positions.
std::optional<std::vector<Dimension>>
scatterValues(const Fact &data, const std::vector<int64_t> &positions, const Fact &updates) {
  auto dv = dimValues(data);
  auto uv = dimValues(updates);
  if (!dv || !uv || uv->size() != positions.size()) return std::nullopt;
  int64_t n = int64_t(dv->size());
  std::vector<Dimension> v = *dv;
  for (size_t i = 0; i < positions.size(); ++i) {
    int64_t p = positions[i] < 0 ? positions[i] + n : positions[i];
    if (p < 0 || p >= n) return std::nullopt;
    v[p] = (*uv)[i];
  }
  return v;
}

// ---------------------------------------------------------------- GatherElements
Result<Facts> inferGatherElements(InferContext &ctx) {
  const Fact &data = ctx.input(0), &idx = ctx.input(1);
  int64_t axis = ctx.attrs().getInt("axis", 0).valueOr(0);
  Fact out = makeFact(data.type, idx.shape);
  if (data.shape.rankIsStatic()) {
    int64_t r = int64_t(data.shape.size());
    if (r == 0) return errorf("cannot gather from a scalar ({})", data);
    SF_TRY(normalizeAxis(axis, r));
    SF_TRY(requireRank(idx, 1, r, "indices"));
    if (!idx.shape.rankIsStatic()) out.shape = PartialShape::dynamic(r);
  }
  // Values: picking elements of a known vector.
  auto dv = dimValues(data);
  auto iv = constInts(idx);
  if (dv && iv && idx.shape.rankIsStatic() && idx.shape.size() == 1) {
    int64_t n = int64_t(dv->size());
    std::vector<Dimension> v;
    for (int64_t i : *iv) {
      int64_t j = i < 0 ? i + n : i;
      if (j < 0 || j >= n) return errorf("index {} is out of range for {}", i, data);
      v.push_back((*dv)[j]);
    }
    out.value = std::move(v);
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- GatherND
Result<Facts> inferGatherND(InferContext &ctx) {
  const Fact &data = ctx.input(0), &idx = ctx.input(1);
  int64_t b = ctx.attrs().getInt("batch_dims", 0).valueOr(0);
  Fact out = makeFact(data.type, PartialShape::dynamic());
  if (b < 0) return errorf("batch_dims {} is negative", b);
  if (idx.type != ElementType::Undefined && !isInteger(idx.type))
    return errorf("indices must be integers, got {}", idx);
  if (!data.shape.rankIsStatic() || !idx.shape.rankIsStatic()) return factsOf(std::move(out));
  int64_t r = int64_t(data.shape.size()), q = int64_t(idx.shape.size());
  if (r < 1 || q < 1) return errorf("data and indices must have rank >= 1 ({}, {})", data, idx);
  if (b >= std::min(r, q))
    return errorf("batch_dims {} must be less than both ranks ({}, {})", b, data, idx);
  std::vector<Dimension> dims;
  for (int64_t i = 0; i < b; ++i) {
    auto m = ctx.mergeDims(data.shape[i], idx.shape[i]);
    if (!m.ok())
      return errorf("batch dimension {} differs: {} vs {} ({}, {})", i, data.shape[i], idx.shape[i],
                    data, idx);
  }
  const Dimension &kd = idx.shape[q - 1];
  if (!kd.isStatic()) return factsOf(std::move(out));
  int64_t k = kd.length();
  if (k < 1 || k > r - b)
    return errorf("the last dimension of indices ({}) must be in 1..{} ({}, {})", k, r - b, data,
                  idx);
  for (int64_t i = 0; i < q - 1; ++i)
    dims.push_back(idx.shape[i]);
  for (int64_t i = b + k; i < r; ++i)
    dims.push_back(data.shape[i]);
  out.shape = ctx.symbols().resolve(PartialShape(std::move(dims)));
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- ScatterND
Result<Facts> inferScatterND(InferContext &ctx) {
  const Fact &data = ctx.input(0), &idx = ctx.input(1), &upd = ctx.input(2);
  if (data.type != ElementType::Undefined && upd.type != ElementType::Undefined &&
      data.type != upd.type)
    return errorf("updates type differs from data: {} vs {}", upd, data);
  Fact out = makeFact(data.type != ElementType::Undefined ? data.type : upd.type, data.shape);
  if (!data.shape.rankIsStatic() || !idx.shape.rankIsStatic()) return factsOf(std::move(out));
  int64_t r = int64_t(data.shape.size()), q = int64_t(idx.shape.size());
  if (r < 1 || q < 1) return errorf("data and indices must have rank >= 1 ({}, {})", data, idx);
  const Dimension &kd = idx.shape[q - 1];
  if (!kd.isStatic()) return factsOf(std::move(out));
  int64_t k = kd.length();
  if (k > r)
    return errorf("the last dimension of indices ({}) exceeds the data rank {} ({}, {})", k, r,
                  data, idx);
  std::vector<Dimension> expect(idx.shape.dims().begin(), idx.shape.dims().end() - 1);
  expect.insert(expect.end(), data.shape.dims().begin() + k, data.shape.dims().end());
  if (upd.shape.rankIsStatic()) {
    auto m = ctx.mergeShapes(upd.shape, PartialShape(expect));
    if (!m.ok())
      return errorf("updates {} do not match the expected shape {} ({})", upd, PartialShape(expect),
                    m.error().message);
  }
  out.shape = ctx.symbols().resolve(data.shape);
  // Values: writing known elements into a known vector (1-D data, k = 1, no reduction).
  std::string reduction =
      ctx.attrs().has("reduction") ? ctx.attrs().getString("reduction").valueOr("none") : "none";
  if (r == 1 && k == 1 && reduction == "none" && isInteger(out.type)) {
    if (auto pos = constInts(idx)) out.value = scatterValues(data, *pos, upd);
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- ScatterElements, Scatter
Result<Facts> inferScatterElements(InferContext &ctx) {
  const Fact &data = ctx.input(0), &idx = ctx.input(1), &upd = ctx.input(2);
  int64_t axis = ctx.attrs().getInt("axis", 0).valueOr(0);
  if (data.type != ElementType::Undefined && upd.type != ElementType::Undefined &&
      data.type != upd.type)
    return errorf("updates type differs from data: {} vs {}", upd, data);
  Fact out = makeFact(data.type != ElementType::Undefined ? data.type : upd.type, data.shape);
  if (idx.shape.rankIsStatic() && upd.shape.rankIsStatic()) {
    auto m = ctx.mergeShapes(idx.shape, upd.shape);
    if (!m.ok()) return errorf("indices and updates must have the same shape ({} vs {})", idx, upd);
  }
  if (data.shape.rankIsStatic()) {
    int64_t r = int64_t(data.shape.size());
    if (r == 0) return errorf("cannot scatter into a scalar ({})", data);
    SF_TRY(normalizeAxis(axis, r));
    SF_TRY(requireRank(idx, 1, r, "indices"));
    SF_TRY(requireRank(upd, 2, r, "updates"));
    out.shape = ctx.symbols().resolve(data.shape);
    std::string reduction =
        ctx.attrs().has("reduction") ? ctx.attrs().getString("reduction").valueOr("none") : "none";
    if (r == 1 && reduction == "none" && isInteger(out.type)) {
      if (auto pos = constInts(idx)) out.value = scatterValues(data, *pos, upd);
    }
  } else if (idx.shape.rankIsStatic() || upd.shape.rankIsStatic()) {
    // All three have the same rank.
    out.shape = PartialShape::dynamic(
        int64_t(idx.shape.rankIsStatic() ? idx.shape.size() : upd.shape.size()));
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- OneHot
Result<Facts> inferOneHot(InferContext &ctx) {
  const Fact &idx = ctx.input(0), &depthFact = ctx.input(1), &values = ctx.input(2);
  int64_t axis = ctx.attrs().getInt("axis", -1).valueOr(-1);
  // "Scalar or rank 1 tensor containing exactly one element".
  SF_TRY(expectOneElement(ctx, depthFact, "'depth'", {.maxRank = 1}));
  if (values.shape.rankIsStatic()) {
    if (values.shape.size() != 1 || !values.shape[0].compatible(Dimension(2)))
      return errorf("'values' must have shape [2], got {}", values);
  }
  std::optional<Dimension> depth = scalarDim(depthFact);
  if (!depth) {
    auto f = constFloats(depthFact, 1);
    if (f && f->size() == 1 && std::isfinite((*f)[0]) && std::fabs((*f)[0]) < 9.0e18)
      depth = Dimension::constantValue(int64_t(std::trunc((*f)[0])));
  }
  if (depth && depth->isStatic() && depth->length() < 1)
    return errorf("'depth' must be positive, got {}", depth->length());
  Fact out = makeFact(values.type, PartialShape::dynamic());
  if (!idx.shape.rankIsStatic()) return factsOf(std::move(out));
  int64_t r = int64_t(idx.shape.size());
  if (axis < -(r + 1) || axis > r)
    return errorf("axis {} is out of range for output rank {}", axis, r + 1);
  if (axis < 0) axis += r + 1;
  std::vector<Dimension> dims = idx.shape.dims();
  dims.insert(dims.begin() + axis, depth ? depth->nonNegative() : Dimension::dynamic());
  out.shape = PartialShape(std::move(dims));
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- TopK
Result<Facts> inferTopK(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  int64_t axis = ctx.attrs().getInt("axis", -1).valueOr(-1);
  bool kFromInput = ctx.opset() == 0 ? ctx.numInputs() >= 2 : ctx.opset() >= 10;
  std::optional<Dimension> k;
  if (kFromInput) {
    const Fact &kf = ctx.input(1);
    if (!ctx.hasInput(1)) return makeError("input 1 ('K') is required");
    if (kf.type != ElementType::Undefined && !isInteger(kf.type))
      return errorf("'K' must be an integer, got {}", kf);
    // "A 1-D tensor containing a single positive value"; onnxruntime runs nothing else.
    SF_TRY(expectOneElement(ctx, kf, "'K'", {.minRank = 1, .maxRank = 1}));
    k = scalarDim(kf);
  } else {
    auto a = ctx.attrs().getInt("k");
    if (!a.ok()) return makeError("attribute 'k' is required");
    k = Dimension::constantValue(*a);
  }
  if (k && k->isStatic() && k->length() < 0)
    return errorf("k must be non-negative, got {}", k->length());
  Fact values = makeFact(x.type, PartialShape::dynamic());
  Fact indices = makeFact(ElementType::I64, PartialShape::dynamic());
  if (!x.shape.rankIsStatic()) return factsOf(values, indices);
  int64_t r = int64_t(x.shape.size());
  SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
  const Dimension &d = x.shape[a];
  Interval valid{0, d.maxLength()};
  Dimension kd;
  if (k && k->isStatic()) {
    if (k->length() > d.maxLength())
      return errorf("k = {} is larger than axis {} of {}", k->length(), a, x);
    kd = Dimension(k->length());
  } else if (k && k->isNamedExpr()) {
    Interval in = k->interval().intersect(valid);
    if (in.empty()) return errorf("k = {} cannot fit axis {} of {}", k->toString(), a, x);
    kd = Dimension(k->expr(), in);
  } else {
    Interval in = k ? k->interval().intersect(valid) : valid;
    if (in.empty()) return errorf("k = {} cannot fit axis {} of {}", k->toString(), a, x);
    kd = ctx.freshDim("topk_k", in);
  }
  // A k known as a size must fit the axis at every binding (onnxruntime refuses a larger k): a
  // requirement where the axis or k is symbolic (TopK(x, 3) over an axis of L: L >= 3).
  if (k && (k->isStatic() || k->isNamedExpr()) && !(k->isStatic() && d.isStatic()) &&
      k->maxLength() > d.minLength()) {
    SF_ASSIGN(Dimension room, d - kd);
    if (room.expr()) SF_TRY(ctx.symbols().narrow(room.expr(), {0, kInf})); // L >= 3: L's range narrows
  }
  std::vector<Dimension> dims = x.shape.dims();
  dims[a] = kd;
  values.shape = PartialShape(dims);
  indices.shape = PartialShape(std::move(dims));
  return factsOf(values, indices);
}

// ---------------------------------------------------------------- NonZero
Result<Facts> inferNonZero(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  // A scalar counts as a 1-element vector (numpy's nonzero and onnxruntime): [1, nnz].
  Dimension rank =
      x.shape.rankIsStatic() ? Dimension(std::max<int64_t>(x.shape.size(), 1)) : Dimension();
  Interval count{0, kInf};
  if (x.shape.rankIsStatic()) count = {0, elementCountRange(x.shape).hi};
  if (auto v = constantElements(x, kValueBudget)) {
    int64_t n = 0;
    for (double e : *v)
      n += e != 0;
    count = Interval::point(n);
  } else if (x.value && x.shape.rankIsStatic() && x.shape.size() <= 1) {
    // Propagated integers: some are surely nonzero, some surely zero.
    int64_t sure = 0, maybe = 0;
    for (const auto &d : *x.value) {
      if (!d.interval().contains(0))
        ++sure, ++maybe;
      else if (!(d.isStatic() && d.length() == 0))
        ++maybe;
    }
    count = Interval{sure, maybe}.intersect(count);
  }
  Dimension nnz = ctx.freshDim("nonzero", count);
  return factsOf(makeFact(ElementType::I64, PartialShape{rank, nnz}));
}

// ---------------------------------------------------------------- Unique
Result<Facts> inferUnique(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  Facts outs(4, makeFact(ElementType::I64, PartialShape::dynamic(1)));
  outs[0] = makeFact(x.type, PartialShape::dynamic());
  bool hasAxis = ctx.attrs().has("axis");
  if (!x.shape.rankIsStatic()) {
    if (!hasAxis) outs[0].shape = PartialShape::dynamic(1);
    Dimension u = ctx.freshDim("unique", {0, kInf});
    for (size_t i : {size_t(0), size_t(1), size_t(3)})
      if (i != 0 || !hasAxis) outs[i].shape = PartialShape{u};
    return outs;
  }
  if (!hasAxis) {
    Interval n = elementCountRange(x.shape);
    Interval range{std::min<int64_t>(n.lo, 1), n.hi};
    if (auto v = constantElements(x, kValueBudget)) {
      std::set<double> distinct;
      int64_t nans = 0;
      for (double e : *v)
        std::isnan(e) ? ++nans : (distinct.insert(e), 0);
      range = Interval::point(int64_t(distinct.size()) + nans);
    }
    Dimension u = ctx.freshDim("unique", range);
    SF_ASSIGN(Dimension numel, x.shape.elementCount());
    outs[0].shape = PartialShape{u};
    outs[1].shape = PartialShape{u};
    outs[2].shape = PartialShape{numel};
    outs[3].shape = PartialShape{u};
    return outs;
  }
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis"));
  SF_ASSIGN(int64_t a, normalizeAxis(axis, int64_t(x.shape.size())));
  const Dimension &d = x.shape[a];
  Interval range{std::min<int64_t>(d.minLength(), 1), d.maxLength()};
  auto v = constantElements(x, kValueBudget);
  auto shape = x.shape.toShape();
  if (v && shape.ok()) {
    // Distinct slices along the axis.
    int64_t outer = 1, inner = 1, n = (*shape)[a];
    for (int64_t i = 0; i < a; ++i)
      outer *= (*shape)[i];
    for (size_t i = a + 1; i < shape->size(); ++i)
      inner *= (*shape)[i];
    std::set<std::vector<double>> slices;
    for (int64_t j = 0; j < n; ++j) {
      std::vector<double> s;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i)
          s.push_back((*v)[(o * n + j) * inner + i]);
      slices.insert(std::move(s));
    }
    range = Interval::point(int64_t(slices.size()));
  }
  Dimension u = ctx.freshDim("unique", range);
  std::vector<Dimension> y = x.shape.dims();
  y[a] = u;
  outs[0].shape = PartialShape(std::move(y));
  outs[1].shape = PartialShape{u};
  outs[2].shape = PartialShape{d};
  outs[3].shape = PartialShape{u};
  return outs;
}

// ---------------------------------------------------------------- Compress
Result<Facts> inferCompress(InferContext &ctx) {
  const Fact &x = ctx.input(0), &cond = ctx.input(1);
  if (cond.type != ElementType::Undefined && cond.type != ElementType::Bool)
    return errorf("condition must be bool, got {}", cond);
  SF_TRY(requireRank(cond, 1, 1, "condition"));
  bool hasAxis = ctx.attrs().has("axis");
  Fact out = makeFact(x.type, hasAxis ? PartialShape::dynamic() : PartialShape::dynamic(1));
  if (hasAxis && !x.shape.rankIsStatic()) return factsOf(std::move(out));
  // The selectable length: the flattened input, or the axis.
  Dimension len;
  int64_t a = 0;
  if (hasAxis) {
    SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis"));
    SF_ASSIGN(a, normalizeAxis(axis, int64_t(x.shape.size())));
    len = x.shape[a];
  } else if (x.shape.rankIsStatic()) {
    len = Dimension::fromInterval(elementCountRange(x.shape));
  }
  Dimension condLen = cond.shape.rankIsStatic() ? cond.shape[0] : Dimension();
  Interval range{0, std::min(len.maxLength(), condLen.maxLength())};
  if (auto v = constantElements(cond, kValueBudget)) {
    // Trues within what the input surely has, and within what it may have.
    int64_t sure = 0, maybe = 0;
    for (size_t i = 0; i < v->size(); ++i) {
      if ((*v)[i] == 0) continue;
      if (int64_t(i) < len.minLength()) ++sure;
      if (int64_t(i) < len.maxLength()) ++maybe;
    }
    range = {sure, maybe};
  }
  Dimension c = ctx.freshDim("compress", range);
  if (hasAxis) {
    std::vector<Dimension> dims = x.shape.dims();
    dims[a] = c;
    out.shape = PartialShape(std::move(dims));
  } else {
    out.shape = PartialShape{c};
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- NonMaxSuppression
Result<Facts> inferNonMaxSuppression(InferContext &ctx) {
  const Fact &boxes = ctx.input(0), &scores = ctx.input(1);
  SF_TRY(requireRank(boxes, 0, 3, "boxes"));
  SF_TRY(requireRank(scores, 1, 3, "scores"));
  Dimension batches, classes, count;
  if (boxes.shape.rankIsStatic()) {
    if (!boxes.shape[2].compatible(Dimension(4)))
      return errorf("boxes must have 4 coordinates in the last dimension, got {}", boxes);
    SF_TRY(ctx.mergeDims(boxes.shape[2], Dimension(4)));
    batches = boxes.shape[0];
    count = boxes.shape[1];
  }
  if (scores.shape.rankIsStatic()) {
    auto b = ctx.mergeDims(batches, scores.shape[0]);
    auto n = ctx.mergeDims(count, scores.shape[2]);
    if (!b.ok() || !n.ok())
      return errorf("boxes and scores disagree on batches or boxes ({} vs {})", boxes, scores);
    batches = *b;
    count = *n;
    classes = scores.shape[1];
  }
  // Absent max_output_boxes_per_class means 0: nothing is selected.
  int64_t perClass = count.maxLength();
  if (!ctx.hasInput(2)) {
    perClass = 0;
  } else if (auto m = scalarDim(ctx.input(2))) {
    perClass = std::min(perClass, std::max<int64_t>(m->maxLength(), 0));
  }
  int64_t hi = satMul(satMul(batches.maxLength(), classes.maxLength()), perClass);
  Dimension n = ctx.freshDim("nms", {0, hi});
  return factsOf(makeFact(ElementType::I64, PartialShape{n, Dimension(3)}));
}

// ---------------------------------------------------------------- Trilu, ReverseSequence, EyeLike
Result<Facts> inferTrilu(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  if (x.shape.rankIsStatic() && x.shape.size() < 2)
    return errorf("input must have rank >= 2, got {}", x);
  if (ctx.hasInput(1)) {
    // "A 0-D tensor containing a single value"; onnxruntime also runs a one-element vector.
    SF_TRY(expectOneElement(ctx, ctx.input(1), "'k'", {.maxRank = 1, .specRank = 0}));
  }
  return factsOf(makeFact(x.type, x.shape));
}

Result<Facts> inferReverseSequence(InferContext &ctx) {
  const Fact &x = ctx.input(0), &lens = ctx.input(1);
  int64_t batchAxis = ctx.attrs().getInt("batch_axis", 1).valueOr(1);
  int64_t timeAxis = ctx.attrs().getInt("time_axis", 0).valueOr(0);
  if ((batchAxis != 0 && batchAxis != 1) || (timeAxis != 0 && timeAxis != 1) ||
      batchAxis == timeAxis)
    return errorf("batch_axis ({}) and time_axis ({}) must be 0 and 1 in some order", batchAxis,
                  timeAxis);
  SF_TRY(requireRank(lens, 1, 1, "sequence_lens"));
  if (x.shape.rankIsStatic() && x.shape.size() < 2)
    return errorf("input must have rank >= 2, got {}", x);
  if (x.shape.rankIsStatic() && lens.shape.rankIsStatic()) {
    auto m = ctx.mergeDims(x.shape[batchAxis], lens.shape[0]);
    if (!m.ok())
      return errorf("sequence_lens has {} elements but the batch axis has {} ({}, {})",
                    lens.shape[0], x.shape[batchAxis], x, lens);
  }
  return factsOf(makeFact(x.type, ctx.symbols().resolve(x.shape)));
}

Result<Facts> inferEyeLike(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(requireRank(x, 0, 2, "input"));
  ElementType t = x.type;
  if (ctx.attrs().has("dtype")) {
    SF_ASSIGN(int64_t dt, ctx.attrs().getInt("dtype"));
    auto known = elementTypeFromOnnx(dt);
    if (!known || *known == ElementType::Undefined)
      return errorf("attribute 'dtype' ({}) is not a known element type", dt);
    t = *known;
  }
  return factsOf(makeFact(t, x.shape.rankIsStatic() ? x.shape : PartialShape::dynamic(2)));
}

// ---------------------------------------------------------------- DepthToSpace, SpaceToDepth
/// DepthToSpace (`toSpace`) and SpaceToDepth.
Result<Facts> depthSpaceWith(InferContext &ctx, bool toSpace) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(int64_t b, ctx.attrs().getInt("blocksize"));
  if (b <= 0) return errorf("blocksize must be positive, got {}", b);
  SF_TRY(requireRank(x, 0, 4, "input"));
  if (ctx.attrs().has("mode")) {
    std::string mode = ctx.attrs().getString("mode").valueOr("");
    if (mode != "DCR" && mode != "CRD") return errorf("unknown mode '{}'", mode);
  }
  Fact out = makeFact(x.type, PartialShape::dynamic(4));
  if (!x.shape.rankIsStatic()) return factsOf(std::move(out));
  auto bb = checkedMul(b, b);
  if (!bb) return errorf("blocksize {} overflows", b);
  const auto &d = x.shape.dims();
  auto divisible = [&](const Dimension &dim, int64_t by, const char *name) -> Result<Dimension> {
    if (dim.isStatic() && dim.length() % by != 0)
      return errorf("{} ({}) is not divisible by {} ({}, blocksize {})", name, dim, by, x, b);
    // A symbolic dim must be a multiple (the runtimes refuse another): a requirement.
    SF_ASSIGN(Dimension q, dim.floorDiv(by));
    auto back = q * Dimension(by); // a multiple already (2*H by 2) needs nothing
    if (!dim.isStatic() && by > 1 && !(back.ok() && *back == dim))
      ctx.symbols().require(Condition::Divides, dim, Dimension(by));
    return q;
  };
  Dimension bd(b);
  if (toSpace) {
    SF_ASSIGN(Dimension c, divisible(d[1], *bb, "channels"));
    SF_ASSIGN(Dimension h, d[2] * bd);
    SF_ASSIGN(Dimension w, d[3] * bd);
    out.shape = PartialShape{d[0], c, h, w};
  } else {
    SF_ASSIGN(Dimension c, d[1] * Dimension(*bb));
    SF_ASSIGN(Dimension h, divisible(d[2], b, "height"));
    SF_ASSIGN(Dimension w, divisible(d[3], b, "width"));
    out.shape = PartialShape{d[0], c, h, w};
  }
  return factsOf(std::move(out));
}

InferFn inferDepthSpace(bool toSpace) {
  return [toSpace](InferContext &ctx) { return depthSpaceWith(ctx, toSpace); };
}

// ---------------------------------------------------------------- Det
Result<Facts> inferDet(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  Fact out = makeFact(x.type, PartialShape::dynamic());
  if (!x.shape.rankIsStatic()) return factsOf(std::move(out));
  size_t r = x.shape.size();
  if (r < 2) return errorf("input must have rank >= 2, got {}", x);
  auto m = ctx.mergeDims(x.shape[r - 2], x.shape[r - 1]);
  if (!m.ok()) return errorf("matrices must be square, got {}", x);
  std::vector<Dimension> dims(x.shape.dims().begin(), x.shape.dims().end() - 2);
  out.shape = ctx.symbols().resolve(PartialShape(std::move(dims)));
  return factsOf(std::move(out));
}

} // namespace

// ---- costs (docs/COSTS.md) ----
namespace {

/// Scatter with a reduction (add, mul, max, min): one operation of that kind per update element;
/// a plain scatter only moves data.
Result<OpCost> costScatter(const CostContext &ctx) {
  OpCost c;
  std::string reduction = ctx.attrs().getString("reduction", "none").valueOr("none");
  FlopKind k = reduction == "add"   ? FlopKind::Add
               : reduction == "mul" ? FlopKind::Mul
                                    : FlopKind::Compare;
  if (reduction != "none") SF_TRY(c.add(k, elementsOf(ctx.input(2))));
  return c;
}

/// NonMaxSuppression's work follows the scores; counted at its worst: every pair of boxes of a
/// batch and class compared, an IoU being 10 operations.
Result<OpCost> costNms(const CostContext &ctx) {
  OpCost c;
  const PartialShape &scores = ctx.input(1).shape; // [batch, classes, boxes]
  if (!scores.rankIsStatic() || scores.size() != 3) {
    SF_TRY(c.add(FlopKind::Other, Dimension::dynamic()));
    return c;
  }
  SF_ASSIGN(Dimension pairs, times(elementsOf(ctx.input(1)), scores[2]));
  SF_ASSIGN(Dimension ops, times(pairs, Dimension(5))); // n*n/2 pairs, 10 each
  SF_TRY(c.add(FlopKind::Other, ops));
  return c;
}

/// Det: an LU factorisation, n^3/3 MACs per matrix.
Result<OpCost> costDet(const CostContext &ctx) {
  OpCost c;
  const PartialShape &x = ctx.input(0).shape;
  if (!x.rankIsStatic() || x.size() < 2) {
    SF_TRY(c.addMacs(Dimension::dynamic()));
    return c;
  }
  const Dimension &n = x[x.size() - 1];
  SF_ASSIGN(Dimension cube, times(elementsOf(ctx.input(0)), n)); // batch * n^3
  SF_ASSIGN(Dimension third, cube.floorDiv(3));
  SF_TRY(c.addMacs(third));
  return c;
}

} // namespace

void registerIndexOps(OpRegistry &r) {
  // Gathers, crops and rearrangements move data only.
  r.add({.name = "GatherElements", .infer = inferGatherElements, .cost = costNone});
  r.add({.name = "GatherND", .infer = inferGatherND, .cost = costNone});
  r.add({.name = "ScatterND", .infer = inferScatterND, .cost = costScatter});
  r.addAll({"ScatterElements", "Scatter"}, {.infer = inferScatterElements, .cost = costScatter});
  r.add({.name = "OneHot", .infer = inferOneHot, .cost = costNone});
  // TopK, NonZero, Unique: a compare per input element (a selection's floor; sorting adds a
  // factor that depends on the data).
  r.add({.name = "TopK", .infer = inferTopK, .cost = costPerInput(FlopKind::Compare)});
  // Output sizes that follow the data: the kernel tells them (mode 1).
  const OpTraits dataDependent{.dataDependent = true};
  r.add({.name = "NonZero",
         .infer = inferNonZero,
         .traits = dataDependent,
         .cost = costPerInput(FlopKind::Compare)});
  r.add({.name = "Unique",
         .infer = inferUnique,
         .traits = dataDependent,
         .cost = costPerInput(FlopKind::Compare)});
  r.add({.name = "Compress", .infer = inferCompress, .traits = dataDependent, .cost = costNone});
  r.add({.name = "NonMaxSuppression",
         .infer = inferNonMaxSuppression,
         .traits = dataDependent,
         .cost = costNms});
  r.add({.name = "Trilu", .infer = inferTrilu, .cost = costNone});
  r.add({.name = "ReverseSequence", .infer = inferReverseSequence, .cost = costNone});
  r.add({.name = "EyeLike", .infer = inferEyeLike, .cost = costNone});
  r.add({.name = "DepthToSpace", .infer = inferDepthSpace(true), .refine = refineSameRank(), .cost = costNone});
  r.add({.name = "SpaceToDepth", .infer = inferDepthSpace(false), .refine = refineSameRank(), .cost = costNone});
  r.add({.name = "Det", .infer = inferDet, .cost = costDet});
}

} // namespace sf
