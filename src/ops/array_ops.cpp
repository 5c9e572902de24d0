// Ops that build arrays from others: Concat, Split, Expand, Tile, ConstantOfShape, Range, Pad,
// Gather; each carries integer values (shape tensors) through when it can.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

#include <algorithm>
#include <cmath>

namespace sf {
namespace {

// ---------------------------------------------------------------- Concat
Result<Facts> inferConcat(InferContext &ctx) {
  if (ctx.numInputs() == 0) return makeError("needs at least one input");
  // Concat-1 (opsets 1-3) concatenates along axis 1 when none is given.
  bool concat1 = ctx.opset() > 0 && ctx.opset() < 4;
  SF_ASSIGN(int64_t axis, concat1 ? ctx.attrs().getInt("axis", 1) : ctx.attrs().getInt("axis"));
  ElementType type = ElementType::Undefined;
  std::optional<int64_t> rank;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Fact &f = ctx.input(i);
    if (f.type != ElementType::Undefined) {
      if (type != ElementType::Undefined && type != f.type)
        return errorf("input {} has type {}, expected {}", i, f, shortName(type));
      type = f.type;
    }
    if (f.shape.rankIsStatic()) {
      int64_t r = int64_t(f.shape.size());
      if (rank && *rank != r) {
        const Fact &first = ctx.input(0);
        return errorf("input {} has rank {}, expected {} ({} vs {})", i, r, *rank, first, f);
      }
      rank = r;
    }
  }
  if (!rank) return factsOf(makeFact(type, PartialShape::dynamic()));
  if (*rank == 0) return makeError("cannot concatenate scalars");
  SF_ASSIGN(int64_t a, normalizeAxis(axis, *rank));
  std::vector<Dimension> dims(*rank);
  Dimension sum(0);
  bool first = true;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Fact &f = ctx.input(i);
    if (!f.shape.rankIsStatic()) {
      SF_ASSIGN(sum, sum + Dimension::dynamic());
      continue;
    }
    for (int64_t k = 0; k < *rank; ++k) {
      if (k == a) continue;
      if (first) {
        dims[k] = f.shape[k];
        continue;
      }
      auto m = ctx.mergeDims(dims[k], f.shape[k]);
      if (!m.ok())
        return errorf("input {} has dimension {} at axis {}, expected {} ({} vs {})", i, f.shape[k],
                      k, dims[k], ctx.input(0), f);
      dims[k] = *m;
    }
    first = false;
    SF_ASSIGN(sum, sum + f.shape[a]);
  }
  dims[a] = sum;
  Fact out = makeFact(type, ctx.symbols().resolve(PartialShape(std::move(dims))));
  // Float shape math carries values too (integral ones only: see elementwise.cpp's folding).
  if ((isInteger(type) || isFloat(type)) && *rank == 1) {
    // An integer part of known length whose elements are not known keeps its place: [?, ?, 4, 16]
    // still says the last two entries of a Reshape target (each `?` any integer, -1 and 0 too).
    std::vector<Dimension> v;
    bool all = true, anyKnown = false;
    for (size_t i = 0; i < ctx.numInputs() && all; ++i) {
      const Fact &f = ctx.input(i);
      if (auto e = dimValues(f)) {
        v.insert(v.end(), e->begin(), e->end());
        anyKnown = anyKnown || !e->empty();
      } else if (auto fe = isFloat(type) ? valueExprs(f) : std::nullopt) {
        // A float constant beside float shape math (Resize's scales: [1, 1] then H'/H, W'/W).
        for (Expr x : *fe) v.push_back(Dimension(x, Interval{-kInf, kInf}));
        anyKnown = anyKnown || !fe->empty();
      } else if (isInteger(type) && f.shape.rankIsStatic() && f.shape.size() <= 1 &&
                 (f.shape.size() == 0 || f.shape[0].isStatic()) &&
                 v.size() + (f.shape.size() == 0 ? 1 : size_t(f.shape[0].length())) <=
                     kValueBudget) {
        const size_t n = f.shape.size() == 0 ? 1 : size_t(f.shape[0].length());
        v.insert(v.end(), n, Dimension::fromInterval({-kInf, kInf}));
      } else {
        all = false;
      }
    }
    if (all && anyKnown) out.value = std::move(v);
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Split
Result<Facts> inferSplit(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  int64_t axis = ctx.attrs().getInt("axis", 0).valueOr(0);
  size_t n = ctx.numOutputs();
  // The sizes are an input from opset 13 on, and in Split-1 also when the node has one.
  bool splitAsInput =
      ctx.opset() == 0 || ctx.opset() >= 13 || (ctx.opset() == 1 && ctx.hasInput(1));
  auto ints = intsFromAttrOrInput(ctx, "split", 1, splitAsInput);
  // Sizes as dimensions: numbers, or symbolic values computed from sizes (torch.split with
  // lengths taken from other tensors' shapes).
  std::optional<std::vector<Dimension>> sizes;
  if (ints) {
    sizes = constantDims(*ints);
  } else if (splitAsInput && ctx.hasInput(1)) {
    sizes = dimValues(ctx.input(1));
  }
  Facts outs(n, makeFact(in.type, PartialShape::dynamic()));
  if (!in.shape.rankIsStatic()) return outs;
  int64_t r = int64_t(in.shape.size());
  SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
  const Dimension &d = in.shape[a];
  std::vector<Dimension> parts(n);
  if (sizes && !sizes->empty()) {
    if (sizes->size() != n) return errorf("'split' has {} sizes for {} outputs", sizes->size(), n);
    Dimension total(0);
    for (size_t i = 0; i < n; ++i) {
      const Dimension &v = (*sizes)[i];
      if (v.maxLength() < 0) return errorf("negative split size {}", v);
      parts[i] = v.nonNegative();
      SF_ASSIGN(total, total + parts[i]);
    }
    if (!d.compatible(total))
      return errorf("split sizes sum to {} but axis {} has size {} ({})", total, a, d, in);
    SF_TRY(ctx.symbols().equate(d, total));
  } else if (!sizes) {
    for (auto &p : parts)
      p = Dimension::dynamic();
  } else {
    int64_t k = ctx.attrs().getInt("num_outputs", int64_t(n)).valueOr(int64_t(n));
    if (k <= 0) return makeError("num_outputs must be positive");
    if (size_t(k) != n) return errorf("num_outputs is {} but the node has {} outputs", k, n);
    // Before opset 18 an uneven split is an error (onnxruntime: "cannot be split evenly"); an
    // unknown opset (0) is taken as the newest, as elsewhere.
    const bool even = ctx.opset() != 0 && ctx.opset() < 18;
    if (d.isStatic() && even && d.length() % k != 0)
      return errorf("axis {} of size {} does not split evenly into {} outputs", a, d, k);
    if (even) ctx.symbols().require(Condition::Divides, d, Dimension(k));
    // Opset 18: the last chunk may be smaller (chunks of ceil(d / k)).
    SF_ASSIGN(Dimension chunk, d.ceilDiv(k));
    for (size_t i = 0; i < n; ++i)
      parts[i] = chunk;
    if (!even && n > 0) {
      SF_ASSIGN(Dimension used, chunk * Dimension(int64_t(n - 1)));
      SF_ASSIGN(Dimension last, d - used);
      // The last chunk must hold an element (onnxruntime refuses 4 into 3 as 2, 2, 0 and a
      // num_outputs above the axis): a requirement on a symbolic axis.
      if (last.isStatic() && last.length() < 1)
        return errorf("axis {} of size {} does not split into {} outputs of {} (the last would hold {})", a, d, k,
                      chunk, last);
      if (last.minLength() < 1 && last.expr()) SF_TRY(ctx.symbols().narrow(last.expr(), {1, kInf}));
      parts[n - 1] = last.nonNegative();
    }
  }
  for (size_t i = 0; i < n; ++i) {
    std::vector<Dimension> dims = in.shape.dims();
    dims[a] = parts[i];
    outs[i] = makeFact(in.type, PartialShape(std::move(dims)));
  }
  return outs;
}

// ---------------------------------------------------------------- Expand, Tile
Result<Facts> inferExpand(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  auto target = dimValues(ctx.input(1));
  Fact out = makeFact(in.type, PartialShape::dynamic());
  if (!target) {
    const PartialShape &ts = ctx.input(1).shape;
    if (in.shape.rankIsStatic() && ts.rankIsStatic() && ts.size() == 1 && ts[0].isStatic())
      out.shape = shapeOfRank(std::max<int64_t>(in.shape.size(), ts[0].length()));
    return factsOf(std::move(out));
  }
  std::vector<Dimension> td;
  for (const auto &t : *target)
    td.push_back(t.nonNegative());
  SF_ASSIGN(out.shape, ctx.broadcast(in.shape, PartialShape(td), {BroadcastKind::Bidirectional}));
  if (in.value && isSmallVector(out.shape) && out.shape.isStatic()) {
    size_t n = out.shape.size() == 0 ? 1 : size_t(out.shape[0].length());
    if (in.value->size() == n)
      out.value = in.value;
    else if (in.value->size() == 1 && n <= kValueBudget)
      out.value = std::vector<Dimension>(n, (*in.value)[0]);
  }
  return factsOf(std::move(out));
}

Result<Facts> inferTile(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  auto reps = dimValues(ctx.input(1));
  if (!in.shape.rankIsStatic()) return factsOf(makeFact(in.type, PartialShape::dynamic()));
  if (!reps) return factsOf(makeFact(in.type, PartialShape::dynamic(in.shape.size())));
  if (reps->size() != in.shape.size())
    return errorf("'repeats' has {} elements for input {}", reps->size(), in);
  std::vector<Dimension> dims;
  for (size_t i = 0; i < reps->size(); ++i) {
    SF_ASSIGN(Dimension d, in.shape[i] * (*reps)[i].nonNegative());
    dims.push_back(d);
  }
  return factsOf(makeFact(in.type, PartialShape(std::move(dims))));
}

// ---------------------------------------------------------------- ConstantOfShape, Range
Result<Facts> inferConstantOfShape(InferContext &ctx) {
  ElementType t = ElementType::F32;
  int64_t fillValue = 0;
  bool fillKnown = true;
  if (ctx.attrs().has("value")) {
    SF_ASSIGN(auto v, ctx.attrs().getTensor("value"));
    t = v->type();
    fillKnown = false;
    if (isInteger(t)) {
      auto ints = v->toInt64s(1);
      if (ints.ok() && ints->size() == 1) fillValue = (*ints)[0], fillKnown = true;
    }
  }
  auto dims = dimValues(ctx.input(0));
  Fact out = makeFact(t, PartialShape::dynamic());
  if (!dims) {
    const PartialShape &s = ctx.input(0).shape;
    if (s.rankIsStatic() && s.size() == 1 && s[0].isStatic())
      out.shape = shapeOfRank(s[0].length());
    return factsOf(std::move(out));
  }
  std::vector<Dimension> d;
  for (const auto &x : *dims) {
    if (x.isStatic() && x.length() < 0)
      return errorf("shape has a negative dimension {}", x.length());
    d.push_back(x.nonNegative());
  }
  out.shape = PartialShape(d);
  if (isInteger(t) && fillKnown && d.size() <= 1) {
    size_t n = d.empty() ? 1 : (d[0].isStatic() ? size_t(d[0].length()) : 0);
    if ((d.empty() || d[0].isStatic()) && n <= kValueBudget)
      out.value = std::vector<Dimension>(n, Dimension::constantValue(fillValue));
  }
  return factsOf(std::move(out));
}

Result<Facts> inferRange(InferContext &ctx) {
  // Scalars by the spec; onnxruntime also runs a one-element tensor, so that is a warning and
  // anything known to hold more (or fewer) elements an error.
  static const char *const kNames[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i)
    SF_TRY(expectOneElement(ctx, ctx.input(i), kNames[i], {.maxRank = 1, .specRank = 0}));
  ElementType t = ctx.input(0).type;
  auto start = scalarDim(ctx.input(0)), limit = scalarDim(ctx.input(1)),
       delta = scalarDim(ctx.input(2));
  Fact out = makeFact(t, PartialShape::dynamic(1));
  if (!isInteger(t) && t != ElementType::Undefined) {
    auto s = constFloats(ctx.input(0)), l = constFloats(ctx.input(1)),
         d = constFloats(ctx.input(2));
    if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
      if ((*d)[0] == 0) return makeError("delta is 0");
      double n = std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]);
      // NaN or infinite bounds, or more elements than any tensor holds: no size at all.
      if (!(n < 0x1p62))
        return errorf("start {}, limit {} and delta {} give {} elements", (*s)[0], (*l)[0], (*d)[0], n);
      out.shape = PartialShape{Dimension(int64_t(std::max(n, 0.0)))};
    } else if (auto p = precisionOf(t)) {
      // Sizes in float (a size cast to float, a float step): the element count
      // max(ceil((limit - start) / delta), 0) computed as the runtime does, in the input type.
      auto vs = valueExprs(ctx.input(0), 1), vl = valueExprs(ctx.input(1), 1),
           vd = valueExprs(ctx.input(2), 1);
      if (vs && vl && vd && vs->size() == 1 && vl->size() == 1 && vd->size() == 1) {
        auto span = floatOp(FloatOp::Sub, (*vl)[0], (*vs)[0], *p);
        auto q = span.ok() ? floatOp(FloatOp::Div, *span, (*vd)[0], *p) : span;
        auto n = q.ok() ? roundToInt(RoundMode::Ceil, *q) : q;
        auto len = n.ok() ? max(*n, constant(0)) : n;
        if (len.ok()) out.shape = PartialShape{Dimension(*len)};
      }
    }
    return factsOf(std::move(out));
  }
  if (!start || !limit || !delta) return factsOf(std::move(out));
  if (delta->isStatic() && delta->length() == 0) return makeError("delta is 0");
  SF_ASSIGN(Dimension span, *limit - *start);
  Dimension n;
  if (delta->isStatic() && delta->length() > 0) {
    SF_ASSIGN(n, span.ceilDiv(delta->length()));
  } else if (delta->isStatic() && delta->length() < 0) {
    SF_ASSIGN(Dimension negSpan, Dimension::constantValue(0) - span);
    SF_ASSIGN(n, negSpan.ceilDiv(-delta->length()));
  } else if (!delta->isStatic() && delta->minLength() >= 1) {
    // A step that is a size (Range(0, B*L, L), an EmbeddingBag's offsets): the span divided by it
    // where it divides exactly (B), else ceil(span / delta) as floor((span + delta - 1) / delta).
    std::optional<Expr> exact;
    if (span.expr() && delta->expr())
      if (auto q = divExact(span.expr(), delta->expr()); q.ok()) exact = *q;
    if (exact) {
      n = Dimension(*exact);
    } else {
      SF_ASSIGN(Dimension up, span + *delta);
      SF_ASSIGN(up, up - Dimension::constantValue(1));
      SF_ASSIGN(n, up.floorDiv(*delta));
    }
  } else {
    return factsOf(std::move(out));
  }
  if (n.minLength() < 0) { SF_ASSIGN(n, Dimension::max(n, Dimension::constantValue(0))); }
  out.shape = PartialShape{n.nonNegative()};
  // Every element lies between start and the limit (exclusive): 0 .. S - 1 for Range(0, S, 1).
  {
    const bool up = !delta->isStatic() || delta->length() > 0;
    auto one = Dimension::constantValue(1);
    auto hi = up ? *limit - one : Result<Dimension>(*start);
    auto lo = up ? Result<Dimension>(*start) : *limit + one;
    // With a step of 1 every integer between the ends is an element: the bounds are reached.
    const bool reached = delta->isStatic() && (delta->length() == 1 || delta->length() == -1);
    if (hi.ok() && lo.ok() && hi->expr() && lo->expr())
      out.elements = std::make_shared<const ElementBounds>(ElementBounds{*lo, *hi, reached});
  }
  if (n.isStatic() && size_t(n.length()) <= kValueBudget) {
    std::vector<Dimension> v;
    Dimension cur = *start;
    for (int64_t i = 0; i < n.length(); ++i) {
      v.push_back(cur);
      SF_ASSIGN(cur, cur + *delta);
    }
    out.value = std::move(v);
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Pad
Result<Facts> inferPad(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  std::optional<std::vector<Dimension>> pads;
  if (ctx.opset() != 0 && ctx.opset() < 11) {
    auto p = ctx.attrs().getInts(ctx.attrs().has("pads") ? "pads" : "paddings");
    if (!p.ok()) return makeError("attribute 'pads' is required");
    pads = constantDims(*p);
  } else {
    pads = dimValues(ctx.input(1));
  }
  if (!in.shape.rankIsStatic()) return factsOf(makeFact(in.type, PartialShape::dynamic()));
  int64_t r = int64_t(in.shape.size());
  std::vector<int64_t> axes(r);
  for (int64_t i = 0; i < r; ++i)
    axes[i] = i;
  if (ctx.hasInput(3)) {
    auto a = constInts(ctx.input(3));
    if (!a) return factsOf(makeFact(in.type, PartialShape::dynamic(r)));
    SF_ASSIGN(axes, normalizeAxes(*a, r));
  }
  if (!pads) return factsOf(makeFact(in.type, PartialShape::dynamic(r)));
  if (pads->size() != 2 * axes.size())
    return errorf("'pads' has {} elements, expected {} for {}", pads->size(), 2 * axes.size(), in);
  PartialShape s = in.shape;
  size_t k = axes.size();
  // reflect mirrors at most dim - 1 elements each side; edge repeats one, so the axis must hold
  // one (onnxruntime refuses the others).
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "constant"));
  for (size_t i = 0; i < k && (mode == "reflect" || mode == "edge"); ++i) {
    const Dimension &dim = in.shape[axes[i]];
    int64_t most = 0, cropped = 0; // the largest pad, and what negative pads cut off first
    for (const Dimension &p : {(*pads)[i], (*pads)[i + k]})
      if (p.isStatic()) most = std::max(most, p.length()), cropped += std::min<int64_t>(p.length(), 0);
    if (most <= 0) continue;
    const int64_t need = (mode == "reflect" ? most + 1 : 1) - cropped;
    if (dim.isStatic() && dim.length() < need)
      return errorf("{} padding of {} needs axis {} to hold at least {} elements ({})", mode, most, axes[i], need, in);
    if (!dim.isStatic() && dim.expr() && dim.minLength() < need) SF_TRY(ctx.symbols().narrow(dim.expr(), {need, kInf}));
  }
  for (size_t i = 0; i < k; ++i) {
    SF_ASSIGN(Dimension d, in.shape[axes[i]] + (*pads)[i]);
    SF_ASSIGN(d, d + (*pads)[i + k]);
    if (d.isStatic() && d.length() < 0)
      return errorf("padding makes axis {} negative ({})", axes[i], in);
    s[axes[i]] = d.nonNegative();
  }
  return factsOf(makeFact(in.type, s));
}

// ---------------------------------------------------------------- Gather
Result<Facts> inferGather(InferContext &ctx) {
  const Fact &data = ctx.input(0), &idx = ctx.input(1);
  int64_t axis = ctx.attrs().getInt("axis", 0).valueOr(0);
  if (!data.shape.rankIsStatic() || !idx.shape.rankIsStatic())
    return factsOf(makeFact(data.type, PartialShape::dynamic()));
  int64_t r = int64_t(data.shape.size());
  if (r == 0) return makeError("cannot gather from a scalar");
  SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
  std::vector<Dimension> dims(data.shape.dims().begin(), data.shape.dims().begin() + a);
  dims.insert(dims.end(), idx.shape.dims().begin(), idx.shape.dims().end());
  dims.insert(dims.end(), data.shape.dims().begin() + a + 1, data.shape.dims().end());
  Fact out = makeFact(data.type, PartialShape(std::move(dims)));
  // Values: picking elements of a known vector with known indices.
  auto idxv = constInts(idx);
  auto dv = dimValues(data);
  if (r == 1 && dv && idxv && isSmallVector(out.shape)) {
    int64_t n = int64_t(dv->size());
    std::vector<Dimension> v;
    for (int64_t i : *idxv) {
      int64_t j = i < 0 ? i + n : i;
      if (j < 0 || j >= n) return errorf("index {} is out of range for {}", i, data);
      v.push_back((*dv)[j]);
    }
    out.value = std::move(v);
  } else if (idxv && data.shape[a].isStatic()) {
    int64_t n = data.shape[a].length();
    for (int64_t i : *idxv)
      if (i < -n || i >= n) return errorf("index {} is out of range for axis {} of {}", i, a, data);
  } else if (idx.elements && idx.elements->reached && data.shape[a].isStatic() &&
             idx.elements->lo.minLength() >= 0 && idx.elements->hi.expr()) {
    // Indices known only by their bounds (positions from a Range of symbolic length), when they
    // reach them (every position is there, not a part of them): the largest must be a row of
    // the table, wherever there are indices at all. A smallest that is a valid number, or
    // indices that cannot be empty: hi <= n - 1 (an empty set, hi < lo < n, meets it anyway).
    // A symbolic smallest (positions P .. P + T - 1 after a cache of P) where T may be 0: the
    // count or the overshoot is at most 0, min(T, P + T - n) <= 0, so that T = 0 runs with any P.
    const int64_t n = data.shape[a].length();
    const Dimension &lo = idx.elements->lo, &hi = idx.elements->hi;
    SF_ASSIGN(Dimension span, hi - lo);
    SF_ASSIGN(Dimension count, span + Dimension::constantValue(1));
    const bool simple = count.minLength() >= 1 || (lo.isStatic() && lo.length() < n);
    if (simple) {
      if (hi.minLength() >= n)
        return errorf("indices reach {} but axis {} of {} has {} entries", hi, a, data, n);
      if (hi.maxLength() >= n) SF_TRY(ctx.symbols().narrow(hi.expr(), {-kInf, n - 1}));
    } else if (hi.maxLength() >= n) {
      SF_ASSIGN(Dimension over, hi - Dimension::constantValue(n - 1));
      SF_ASSIGN(Dimension either, Dimension::min(count, over));
      if (either.expr()) SF_TRY(ctx.symbols().narrow(either.expr(), {-kInf, 0}));
    }
  }
  return factsOf(std::move(out));
}

/// Pad by nothing: every pad 0 (input 1 from opset 11, the `pads` attribute before).
std::optional<size_t> padPassesThrough(const PassThroughArgs &a) {
  std::optional<std::vector<int64_t>> pads;
  if (a.inputs.size() > 1 && a.inputs[1]) pads = constInts(*a.inputs[1]);
  else if (auto p = a.attrs.getInts("pads"); p.ok() && a.inputs.size() <= 1) pads = *p;
  if (!pads) return std::nullopt;
  for (int64_t p : *pads)
    if (p != 0) return std::nullopt;
  return sameTensorShape(a, 0) ? std::optional<size_t>(0) : std::nullopt;
}

} // namespace

void registerArrayOps(OpRegistry &r) {
  r.add({.name = "Concat", .infer = inferConcat, .refine = refineConcat(), .cost = costNone, .passThrough = passInput(0, true)});
  r.add({.name = "Split", .infer = inferSplit, .refine = refineSplit(), .cost = costNone});
  r.add({.name = "Expand",
         .infer = inferExpand,
         .traits = {.movesElements = true, .keepsElements = true, .shapeInput = ShapeInput::Broadcast},
         .refine = refineTypeOnly(),
         .cost = costNone,
         .passThrough = passWhenSameShape()});
  r.add({.name = "Tile",
         .infer = inferTile,
         .traits = {.movesElements = true, .keepsElements = true},
         .refine = refineSameRank(),
         .cost = costNone,
         .passThrough = passWhenSameShape()});
  r.add({.name = "ConstantOfShape", .infer = inferConstantOfShape, .cost = costNone});
  r.add({.name = "Range", .infer = inferRange, .cost = costPerOutput(FlopKind::Add)});
  r.add({.name = "Pad", .infer = inferPad, .refine = refineSameRank(), .cost = costNone, .passThrough = padPassesThrough});
  r.add({.name = "Gather", .infer = inferGather, .traits = {.movesElements = true}, .refine = refineGather(), .cost = costNone});
}

} // namespace sf
