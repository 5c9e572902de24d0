// Shape manipulation ops and the value propagation that makes shape subgraphs symbolic:
// Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Expand, Tile,
// ConstantOfShape, Range, Slice, Pad, Gather. `Shape -> Gather -> Concat -> Reshape` must come out
// symbolic: each op here passes integer elements (as Dimensions) through when it can.
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/support/small_vec.h"

#include <algorithm>
#include <cmath>

namespace sf {
namespace {


bool isSmallVector(const PartialShape &s) { return s.rankIsStatic() && s.size() <= 1; }

/// Reads an integer list from attribute `name` (older opsets) or input `index` (newer).
/// Returns nullopt when it is an input whose elements are not known.
std::optional<std::vector<int64_t>> intsFromAttrOrInput(InferContext &ctx, const char *name,
                                                        size_t index, bool useInput) {
  if (useInput) {
    if (!ctx.hasInput(index)) return std::vector<int64_t>{};
    return constInts(ctx.input(index));
  }
  if (!ctx.attrs().has(name)) return std::vector<int64_t>{};
  auto v = ctx.attrs().getInts(name);
  if (!v.ok()) return std::nullopt;
  return *v;
}

// ---------------------------------------------------------------- Shape, Size
Result<Facts> inferShape(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  if (!in.shape.rankIsStatic()) return factsOf(makeFact(ElementType::I64, PartialShape::dynamic(1)));
  int64_t r = int64_t(in.shape.size());
  int64_t start = ctx.attrs().getInt("start", 0).valueOr(0);
  int64_t end = ctx.attrs().getInt("end", r).valueOr(r);
  auto clampAxis = [r](int64_t a) { return std::clamp(a < 0 ? a + r : a, int64_t(0), r); };
  start = clampAxis(start), end = clampAxis(end);
  std::vector<Dimension> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(in.shape[i]);
  return factsOf(makeShapeValueFact(ElementType::I64, std::move(dims)));
}

Result<Facts> inferSize(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  Fact out = makeFact(ElementType::I64, PartialShape{});
  if (in.shape.rankIsStatic()) {
    SF_ASSIGN(Dimension n, in.shape.elementCount());
    out.value = std::vector<Dimension>{n};
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Reshape
Result<Facts> inferReshape(InferContext &ctx) {
  const Fact &data = ctx.input(0);
  std::optional<std::vector<Dimension>> target;
  PartialShape targetShape = PartialShape::dynamic();
  if (ctx.opset() != 0 && ctx.opset() < 5) {
    auto v = ctx.attrs().getInts("shape");
    if (!v.ok()) return makeError("attribute 'shape' is required");
    target = constantDims(*v);
  } else {
    target = dimValues(ctx.input(1));
    targetShape = ctx.input(1).shape;
  }
  bool allowZero = ctx.attrs().getInt("allowzero", 0).valueOr(0) != 0;
  Fact out = makeFact(data.type, PartialShape::dynamic());
  if (!target) {
    if (targetShape.rankIsStatic() && targetShape.size() == 1 && targetShape[0].isStatic())
      out.shape = PartialShape::dynamic(targetShape[0].length());
    return factsOf(std::move(out));
  }
  const PartialShape &in = data.shape;
  std::vector<Dimension> dims(target->size());
  std::optional<size_t> inferred;
  bool ambiguous = false;
  for (size_t i = 0; i < target->size(); ++i) {
    const Dimension &t = (*target)[i];
    if (t.isStatic()) {
      int64_t v = t.length();
      if (v == -1) {
        if (inferred) return makeError("more than one -1 in the target shape");
        inferred = i;
      } else if (v < -1) {
        return errorf("target shape has a negative dimension {}", v);
      } else if (v == 0 && !allowZero) {
        if (in.rankIsStatic() && i >= in.size())
          return errorf("target shape copies dimension {} (a 0) but the input has rank {}", i,
                        in.size());
        dims[i] = in.rankIsStatic() ? in[i] : Dimension::dynamic();
      } else {
        dims[i] = Dimension(v);
      }
      continue;
    }
    // A non-constant element: it is itself unless it may be -1, or 0 (copy) with a different
    // input dim there.
    // When t may be 0 (meaning "copy input dim i"), taking t literally is still exact if t == 0
    // forces the input dim to be 0: t is the input dim times a nonzero constant (12*N vs N).
    bool sameAsInput = false;
    if (in.rankIsStatic() && i < in.size() && t.expr() && in[i].expr()) {
      if (t.expr() == in[i].expr()) {
        sameAsInput = true;
      } else if (!isConst(in[i].expr())) {
        auto q = divExact(t.expr(), in[i].expr());
        sameAsInput = q.ok() && isConst(*q) && (*q)->value != 0;
      }
    }
    bool mayBeMinusOne = t.interval().contains(-1);
    bool mayBeZero = !allowZero && t.interval().contains(0) && !sameAsInput;
    // Past the input's rank a 0 has no dim to copy: the node would fail, so it is not 0.
    if (mayBeZero && in.rankIsStatic() && i >= in.size()) mayBeZero = false;
    // A size computed from input dims (each >= 1) that is 0 only at a degenerate corner of its
    // range (floor(H * scale) with an extreme aspect ratio) is taken as the size it reads as,
    // and the assumption is reported.
    if (mayBeZero && !mayBeMinusOne && t.isNamedExpr() && t.minLength() >= 0) {
      bool inputDims = true;
      for (SymbolId sym : symbolsOf(t.expr())) inputDims = inputDims && symbolInfo(sym).range.lo >= 1;
      if (inputDims) {
        mayBeZero = false;
        ctx.warn("target element " + std::to_string(i) + " (" + t.toString() +
                 ") is assumed nonzero; a 0 would copy the input's dim instead");
      }
    }
    if (mayBeMinusOne || mayBeZero) {
      ambiguous = true;
      dims[i] = Dimension::dynamic();
    } else {
      dims[i] = t.nonNegative();
    }
  }
  if (inferred && !ambiguous && in.rankIsStatic()) {
    SF_ASSIGN(Dimension total, in.elementCount());
    std::vector<Dimension> known;
    for (size_t i = 0; i < dims.size(); ++i)
      if (i != *inferred) known.push_back(dims[i]);
    SF_ASSIGN(Dimension rest, productOf(known));
    if (total.isStatic() && rest.isStatic()) {
      if (rest.length() == 0 || total.length() % rest.length() != 0)
        return errorf("cannot reshape {} to {}: {} elements do not divide into {}", data,
                      PartialShape(*target), total.length(), rest.length());
      dims[*inferred] = Dimension(total.length() / rest.length());
    } else {
      auto q = total.floorDiv(rest);
      dims[*inferred] = q.ok() ? q->nonNegative() : Dimension::dynamic();
    }
  } else if (inferred) {
    dims[*inferred] = Dimension::dynamic();
  }
  if (!inferred && !ambiguous && in.rankIsStatic()) {
    SF_ASSIGN(Dimension total, in.elementCount());
    SF_ASSIGN(Dimension outTotal, productOf(dims));
    if (!total.compatible(outTotal))
      return errorf("cannot reshape {} ({} elements) to {} ({} elements)", data, total,
                    PartialShape(dims), outTotal);
    SF_TRY(ctx.symbols().equate(total, outTotal));
  }
  out.shape = PartialShape(std::move(dims));
  out.shape = ctx.symbols().resolve(std::move(out.shape));
  if (data.value && isSmallVector(out.shape)) out.value = data.value;
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Flatten
Result<Facts> inferFlatten(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  int64_t axis = ctx.attrs().getInt("axis", 1).valueOr(1);
  if (!in.shape.rankIsStatic()) return factsOf(makeFact(in.type, PartialShape::dynamic(2)));
  int64_t r = int64_t(in.shape.size());
  if (axis < -r || axis > r) return errorf("axis {} is out of range for rank {}", axis, r);
  if (axis < 0) axis += r;
  const auto &d = in.shape.dims();
  SF_ASSIGN(Dimension a, productOf({d.begin(), d.begin() + axis}));
  SF_ASSIGN(Dimension b, productOf({d.begin() + axis, d.end()}));
  Fact out = makeFact(in.type, PartialShape{a, b});
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Squeeze / Unsqueeze
Result<Facts> inferSqueeze(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  bool axesAsInput = ctx.opset() == 0 || ctx.opset() >= 13;
  auto axes = intsFromAttrOrInput(ctx, "axes", 1, axesAsInput);
  Fact out = makeFact(in.type, PartialShape::dynamic());
  if (!in.shape.rankIsStatic()) return factsOf(std::move(out));
  int64_t r = int64_t(in.shape.size());
  if (!axes) {
    if (ctx.input(1).shape.rankIsStatic() && ctx.input(1).shape.size() == 1 &&
        ctx.input(1).shape[0].isStatic())
      out.shape = PartialShape::dynamic(r - ctx.input(1).shape[0].length());
    return factsOf(std::move(out));
  }
  std::vector<bool> drop(r, false);
  if (axes->empty()) {
    for (int64_t i = 0; i < r; ++i) {
      const Dimension &d = in.shape[i];
      if (d.isStatic() && d.length() == 1) drop[i] = true;
      else if (d.interval().contains(1)) return factsOf(std::move(out)); // may or may not be squeezed
    }
  } else {
    SF_ASSIGN(auto norm, normalizeAxes(*axes, r));
    for (int64_t a : norm) {
      const Dimension &d = in.shape[a];
      if (!d.interval().contains(1))
        return errorf("cannot squeeze axis {} of size {} ({})", a, d, in);
      SF_TRY(ctx.symbols().equate(d, Dimension(1)));
      drop[a] = true;
    }
  }
  std::vector<Dimension> dims;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) dims.push_back(in.shape[i]);
  out.shape = PartialShape(std::move(dims));
  if (in.value && isSmallVector(out.shape)) out.value = in.value;
  return factsOf(std::move(out));
}

Result<Facts> inferUnsqueeze(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  bool axesAsInput = ctx.opset() == 0 || ctx.opset() >= 13;
  auto axes = intsFromAttrOrInput(ctx, "axes", 1, axesAsInput);
  Fact out = makeFact(in.type, PartialShape::dynamic());
  if (!axes || !in.shape.rankIsStatic()) {
    if (!axes && in.shape.rankIsStatic() && ctx.input(1).shape.rankIsStatic() &&
        ctx.input(1).shape.size() == 1 && ctx.input(1).shape[0].isStatic())
      out.shape = PartialShape::dynamic(int64_t(in.shape.size()) + ctx.input(1).shape[0].length());
    else if (axes && !in.shape.rankIsStatic())
      out.shape = PartialShape::dynamic();
    return factsOf(std::move(out));
  }
  if (axes->empty()) return makeError("'axes' must not be empty");
  int64_t r = int64_t(in.shape.size()) + int64_t(axes->size());
  SF_ASSIGN(auto norm, normalizeAxes(*axes, r));
  std::vector<bool> isNew(r, false);
  for (int64_t a : norm) isNew[a] = true;
  std::vector<Dimension> dims;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) dims.push_back(isNew[i] ? Dimension(1) : in.shape[j++]);
  out.shape = PartialShape(std::move(dims));
  if (in.value && isSmallVector(out.shape)) out.value = in.value;
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Transpose
Result<Facts> inferTranspose(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  SmallVec<int64_t, 8> perm;
  bool hasPerm = ctx.attrs().has("perm");
  if (hasPerm) {
    SF_ASSIGN(auto p, ctx.attrs().intsView("perm"));
    for (int64_t x : p) perm.push_back(x);
  }
  if (!in.shape.rankIsStatic() && !hasPerm) return factsOf(makeFact(in.type, PartialShape::dynamic()));
  // With an input of unknown rank, perm tells the rank and must still be a permutation.
  int64_t r = in.shape.rankIsStatic() ? int64_t(in.shape.size()) : int64_t(perm.size());
  if (!hasPerm)
    for (int64_t i = 0; i < r; ++i) perm.push_back(r - 1 - i);
  if (int64_t(perm.size()) != r)
    return errorf("perm has {} entries for input of rank {} ({})", perm.size(), r, in);
  std::vector<bool> seen(size_t(r), false);
  std::vector<Dimension> dims;
  dims.reserve(size_t(r));
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[size_t(p)]) {
      std::string s;
      for (int64_t x : perm) s += (s.empty() ? "" : ",") + std::to_string(x);
      return errorf("perm [{}] is not a permutation of 0..{}", s, r - 1);
    }
    seen[size_t(p)] = true;
    dims.push_back(in.shape.rankIsStatic() ? in.shape[size_t(p)] : Dimension::dynamic());
  }
  return factsOf(makeFact(in.type, PartialShape(std::move(dims))));
}

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
    std::vector<Dimension> v;
    bool all = true;
    for (size_t i = 0; i < ctx.numInputs() && all; ++i) {
      auto e = dimValues(ctx.input(i));
      if (!e) all = false;
      else v.insert(v.end(), e->begin(), e->end());
    }
    if (all) out.value = std::move(v);
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Split
Result<Facts> inferSplit(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  int64_t axis = ctx.attrs().getInt("axis", 0).valueOr(0);
  size_t n = ctx.numOutputs();
  // The sizes are an input from opset 13 on, and in Split-1 also when the node has one.
  bool splitAsInput = ctx.opset() == 0 || ctx.opset() >= 13 || (ctx.opset() == 1 && ctx.hasInput(1));
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
    for (auto &p : parts) p = Dimension::dynamic();
  } else {
    int64_t k = ctx.attrs().getInt("num_outputs", int64_t(n)).valueOr(int64_t(n));
    if (k <= 0) return makeError("num_outputs must be positive");
    if (size_t(k) != n) return errorf("num_outputs is {} but the node has {} outputs", k, n);
    if (d.isStatic() && ctx.opset() < 18 && d.length() % k != 0)
      return errorf("axis {} of size {} does not split evenly into {} outputs", a, d, k);
    // Opset 18: the last chunk may be smaller (chunks of ceil(d / k)).
    SF_ASSIGN(Dimension chunk, d.ceilDiv(k));
    for (size_t i = 0; i < n; ++i) parts[i] = chunk;
    if (ctx.opset() >= 18 && n > 0) {
      SF_ASSIGN(Dimension used, chunk * Dimension(int64_t(n - 1)));
      SF_ASSIGN(Dimension last, d - used);
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
      out.shape = PartialShape::dynamic(std::max<int64_t>(in.shape.size(), ts[0].length()));
    return factsOf(std::move(out));
  }
  std::vector<Dimension> td;
  for (const auto &t : *target) td.push_back(t.nonNegative());
  SF_ASSIGN(out.shape, ctx.broadcast(in.shape, PartialShape(td), {BroadcastKind::Bidirectional}));
  if (in.value && isSmallVector(out.shape) && out.shape.isStatic()) {
    size_t n = out.shape.size() == 0 ? 1 : size_t(out.shape[0].length());
    if (in.value->size() == n) out.value = in.value;
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
      out.shape = PartialShape::dynamic(s[0].length());
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
  for (size_t i = 0; i < 3; ++i) {
    const Fact &f = ctx.input(i);
    if (!f.shape.rankIsStatic() || f.shape.size() == 0) continue;
    auto n = f.shape.elementCount();
    if (!n.ok() || !n->compatible(Dimension(1)))
      return errorf("{} must be a scalar, got {}", kNames[i], f);
    ctx.warn(std::string(kNames[i]) + " should be a scalar (rank 0), got " + describe(f) +
             "; read as its one element");
  }
  ElementType t = ctx.input(0).type;
  auto start = scalarDim(ctx.input(0)), limit = scalarDim(ctx.input(1)),
       delta = scalarDim(ctx.input(2));
  Fact out = makeFact(t, PartialShape::dynamic(1));
  if (!isInteger(t) && t != ElementType::Undefined) {
    auto s = constFloats(ctx.input(0)), l = constFloats(ctx.input(1)), d = constFloats(ctx.input(2));
    if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
      if ((*d)[0] == 0) return makeError("delta is 0");
      double n = std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]);
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
  } else {
    return factsOf(std::move(out));
  }
  if (n.minLength() < 0) {
    SF_ASSIGN(n, Dimension::max(n, Dimension::constantValue(0)));
  }
  out.shape = PartialShape{n.nonNegative()};
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

// ---------------------------------------------------------------- Slice
/// A clamped slice length in its shorter form: `L - max(L - S, 0)` is `min(S, L)`.
Dimension readable(const Dimension &d) {
  if (!d.expr()) return d;
  Expr e = distributeMinMax(d.expr());
  return e == d.expr() ? d : Dimension(e, d.interval());
}

/// Output length of slicing `dim` (ONNX clamping semantics). start and end may be symbolic
/// (a size computed by a shape subgraph); the common forms stay exact, the rest are bounded.
Result<Dimension> sliceDim(const Dimension &dim, const Dimension &start, const Dimension &end,
                           int64_t step) {
  if (step == 0) return makeError("slice step is 0");
  Dimension bounded = Dimension::fromInterval({0, dim.maxLength()});
  if (dim.isStatic() && start.isStatic() && end.isStatic()) {
    int64_t d = dim.length();
    auto clampIdx = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -d ? -1 : v + d; // keep -1 distinguishable for negative steps
      return std::clamp(v, lo, hi);
    };
    if (step > 0) {
      int64_t s = clampIdx(start.length(), 0, d), e = clampIdx(end.length(), 0, d);
      return Dimension(e > s ? (e - s + step - 1) / step : 0);
    }
    int64_t s = clampIdx(start.length(), -1, d - 1), e = clampIdx(end.length(), -1, d - 1);
    return Dimension(s > e ? (s - e + (-step) - 1) / (-step) : 0);
  }
  const Dimension zero = Dimension::constantValue(0), minusOne = Dimension::constantValue(-1);
  if (step < 0) {
    // Clamped index into [-1, dim - 1]: v >= 0 gives min(v, dim - 1); v < 0 gives
    // max(dim + v, -1). Symbolic indices need a known sign (from their bounds).
    SF_ASSIGN(Dimension last, dim - Dimension::constantValue(1));
    auto clampRev = [&](const Dimension &v) -> Result<std::optional<Dimension>> {
      if (v.minLength() >= 0) {
        if (v.isStatic() && v.length() >= dim.maxLength() - 1) return std::optional<Dimension>(last);
        SF_ASSIGN(Dimension m, Dimension::min(last, v));
        return std::optional<Dimension>(m);
      }
      if (v.maxLength() < 0) {
        if (v.isStatic() && v.length() <= -dim.maxLength() - 1)
          return std::optional<Dimension>(minusOne);
        SF_ASSIGN(Dimension sum, dim + v);
        SF_ASSIGN(Dimension m, Dimension::max(sum, minusOne));
        return std::optional<Dimension>(m);
      }
      return std::optional<Dimension>();
    };
    SF_ASSIGN(auto s, clampRev(start));
    SF_ASSIGN(auto e, clampRev(end));
    if (!s || !e) return bounded;
    SF_ASSIGN(Dimension len, *s - *e);
    SF_ASSIGN(len, Dimension::max(len, zero));
    if (step != -1) {
      if (step == INT64_MIN) return bounded;
      SF_ASSIGN(len, len.ceilDiv(-step));
    }
    return readable(len.nonNegative());
  }
  // Clamped index into [0, dim]: v >= 0 gives min(v, dim); v < 0 gives max(dim + v, 0).
  // Symbolic indices need a known sign (from their bounds): `x[:, -S:]` with S >= 1.
  auto clampToDim = [&](const Dimension &v, bool isEnd) -> Result<std::optional<Dimension>> {
    if (v.isStatic()) {
      int64_t x = v.length();
      if (isEnd && (x == INT64_MAX || x >= dim.maxLength())) return std::optional<Dimension>(dim);
      if (x >= 0) {
        SF_ASSIGN(Dimension m, Dimension::min(dim, v));
        return std::optional<Dimension>(m);
      }
      SF_ASSIGN(Dimension sum, dim + v);
      SF_ASSIGN(Dimension m, Dimension::max(sum, zero));
      return std::optional<Dimension>(m);
    }
    if (v.minLength() >= 0) {
      SF_ASSIGN(Dimension m, Dimension::min(dim, v));
      return std::optional<Dimension>(m);
    }
    if (v.maxLength() < 0) {
      SF_ASSIGN(Dimension sum, dim + v);
      SF_ASSIGN(Dimension m, Dimension::max(sum, zero));
      return std::optional<Dimension>(m);
    }
    return std::optional<Dimension>();
  };
  SF_ASSIGN(auto s, clampToDim(start, false));
  SF_ASSIGN(auto e, clampToDim(end, true));
  if (!s || !e) return bounded;
  SF_ASSIGN(Dimension len, *e - *s);
  SF_ASSIGN(len, Dimension::max(len, zero));
  if (step != 1) {
    SF_ASSIGN(len, len.ceilDiv(step));
  }
  return readable(len.nonNegative());
}

Result<Facts> inferSlice(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  std::optional<std::vector<Dimension>> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  auto asDims = [](const std::optional<std::vector<int64_t>> &v) {
    return v ? std::optional(constantDims(*v)) : std::nullopt;
  };
  if (ctx.opset() != 0 && ctx.opset() < 10) {
    starts = asDims(intsFromAttrOrInput(ctx, "starts", 0, false));
    ends = asDims(intsFromAttrOrInput(ctx, "ends", 0, false));
    axes = intsFromAttrOrInput(ctx, "axes", 0, false);
    steps = std::vector<int64_t>{};
  } else {
    starts = dimValues(ctx.input(1));
    ends = dimValues(ctx.input(2));
    axes = ctx.hasInput(3) ? constInts(ctx.input(3)) : std::vector<int64_t>{};
    steps = ctx.hasInput(4) ? constInts(ctx.input(4)) : std::vector<int64_t>{};
  }
  if (!in.shape.rankIsStatic()) return factsOf(makeFact(in.type, PartialShape::dynamic()));
  int64_t r = int64_t(in.shape.size());
  Fact out = makeFact(in.type, in.shape);
  auto boundAxes = [&](const std::vector<int64_t> &which) {
    for (int64_t a : which) out.shape[a] = Dimension::fromInterval({0, in.shape[a].maxLength()});
  };
  if (!axes) {
    std::vector<int64_t> all(r);
    for (int64_t i = 0; i < r; ++i) all[i] = i;
    boundAxes(all);
    return factsOf(std::move(out));
  }
  size_t count = starts ? starts->size() : ends ? ends->size() : axes->size();
  if (axes->empty()) {
    if (!starts && !ends) {
      std::vector<int64_t> all(r);
      for (int64_t i = 0; i < r; ++i) all[i] = i;
      boundAxes(all);
      return factsOf(std::move(out));
    }
    axes = std::vector<int64_t>(count);
    for (size_t i = 0; i < count; ++i) (*axes)[i] = int64_t(i);
  }
  SF_ASSIGN(auto norm, normalizeAxes(*axes, r));
  if (!starts || !ends || !steps) {
    boundAxes(norm);
    return factsOf(std::move(out));
  }
  if (steps->empty()) steps = std::vector<int64_t>(starts->size(), 1);
  if (starts->size() != ends->size() || norm.size() != starts->size() ||
      steps->size() != starts->size())
    return errorf("starts, ends, axes and steps must have the same length ({}, {}, {}, {})",
                  starts->size(), ends->size(), norm.size(), steps->size());
  for (size_t i = 0; i < norm.size(); ++i) {
    SF_ASSIGN(Dimension d, sliceDim(in.shape[norm[i]], (*starts)[i], (*ends)[i], (*steps)[i]));
    out.shape[norm[i]] = d;
  }
  // Values: slicing a known 1-D integer vector with static bounds.
  if (in.value && r == 1 && out.shape[0].isStatic() && in.shape[0].isStatic() &&
      (*starts)[0].isStatic()) {
    int64_t d = in.shape[0].length(), s = (*starts)[0].length(), st = (*steps)[0];
    if (s < 0) s += d;
    s = st > 0 ? std::clamp<int64_t>(s, 0, d) : std::clamp<int64_t>(s, -1, d - 1);
    std::vector<Dimension> v;
    for (int64_t k = 0, i = s; k < out.shape[0].length(); ++k, i += st)
      if (i >= 0 && i < int64_t(in.value->size())) v.push_back((*in.value)[i]);
    if (int64_t(v.size()) == out.shape[0].length()) out.value = std::move(v);
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
  for (int64_t i = 0; i < r; ++i) axes[i] = i;
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
  }
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- data movement on known ints
// Shape math sometimes goes through tensors of rank 2 (torchvision pads to a multiple of 32 with
// pads computed as Reshape [-1, 2] -> Slice(step -1) -> Transpose -> Reshape [-1]), where values
// (rank <= 1) do not reach. When the data input holds known small integers (a constant, or
// values all static), these ops move them: the output gets a constant tensor, and values again
// once its rank is <= 1.

/// Row-major strides of a static shape.
std::vector<int64_t> stridesOf(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

/// How an op moves its data input's elements.
enum class Move { Flat, Transpose, Slice };

/// The elements of the output (indices into the input's elements), or nullopt.
std::optional<std::vector<size_t>> movedIndices(InferContext &ctx, Move move, const Shape &in,
                                                const Shape &out) {
  size_t n = 1;
  for (int64_t d : out) n *= size_t(d);
  std::vector<size_t> idx(n);
  if (move == Move::Flat) {
    for (size_t i = 0; i < n; ++i) idx[i] = i;
    return idx;
  }
  std::vector<int64_t> inStrides = stridesOf(in), outStrides = stridesOf(out);
  size_t r = out.size();
  // For each output axis: the input axis it reads, the first index and the step.
  std::vector<size_t> axis(r);
  std::vector<int64_t> first(r, 0), step(r, 1);
  if (move == Move::Transpose) {
    if (in.size() != r) return std::nullopt;
    std::vector<int64_t> perm;
    if (ctx.attrs().has("perm")) {
      auto p = ctx.attrs().getInts("perm");
      if (!p.ok()) return std::nullopt;
      perm = *p;
    } else {
      for (size_t i = 0; i < r; ++i) perm.push_back(int64_t(r - 1 - i));
    }
    if (perm.size() != r) return std::nullopt;
    for (size_t i = 0; i < r; ++i) axis[i] = size_t(perm[i]);
  } else {
    if (in.size() != r || ctx.opset() < 10) return std::nullopt;
    auto starts = constInts(ctx.input(1)), ends = constInts(ctx.input(2));
    if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
    std::vector<int64_t> axes, steps(starts->size(), 1);
    if (ctx.hasInput(3)) {
      auto a = constInts(ctx.input(3));
      if (!a) return std::nullopt;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i) axes.push_back(int64_t(i));
    }
    if (ctx.hasInput(4)) {
      auto st = constInts(ctx.input(4));
      if (!st) return std::nullopt;
      steps = *st;
    }
    if (axes.size() != starts->size() || steps.size() != starts->size()) return std::nullopt;
    for (size_t i = 0; i < r; ++i) axis[i] = i;
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k] < 0 ? axes[k] + int64_t(r) : axes[k];
      if (a < 0 || a >= int64_t(r) || steps[k] == 0) return std::nullopt;
      int64_t dim = in[a], s0 = (*starts)[k];
      if (s0 < 0) s0 = s0 < -dim ? 0 : s0 + dim;
      s0 = steps[k] > 0 ? std::min(s0, dim) : std::min(s0, dim - 1);
      first[a] = s0;
      step[a] = steps[k];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t src = 0;
    size_t rest = i;
    for (size_t d = 0; d < r; ++d) {
      int64_t k = int64_t(rest / size_t(outStrides[d]));
      rest %= size_t(outStrides[d]);
      int64_t at = first[d] + k * step[d];
      if (at < 0 || at >= in[axis[d]]) return std::nullopt;
      src += at * inStrides[axis[d]];
    }
    idx[i] = size_t(src);
  }
  return idx;
}

/// Moves the known small integers of the data input (see above) into the output.
ValueFn movedValues(Move move) {
  return [move](InferContext &ctx, Facts &outs) {
    if (outs.size() != 1 || outs[0].value || outs[0].constant) return;
    Fact &out = outs[0];
    const Fact &in = ctx.input(0);
    if (!out.shape.isStatic() || !in.shape.isStatic()) return;
    auto outShape = out.shape.toShape(), inShape = in.shape.toShape();
    if (!outShape.ok() || !inShape.ok()) return;
    size_t n = 1;
    for (int64_t d : *outShape)
      n *= size_t(d);
    if (n > kValueBudget) return;
    // The elements: known numbers, or symbolic values (a pad tensor computed from sizes).
    std::optional<std::vector<Dimension>> data;
    if (isInteger(in.type) && in.value) {
      data = *in.value;
    } else if (auto ints = isInteger(in.type) ? constInts(in, kValueBudget) : std::nullopt) {
      data = constantDims(*ints);
    }
    if (!data) return;
    auto idx = movedIndices(ctx, move, *inShape, *outShape);
    if (!idx) return;
    std::vector<Dimension> moved;
    std::vector<int64_t> numbers;
    for (size_t i : *idx) {
      if (i >= data->size()) return;
      moved.push_back((*data)[i]);
      if (moved.back().isStatic()) numbers.push_back(moved.back().length());
    }
    if (numbers.size() != moved.size()) {
      // Values of any rank, row-major (dimValues() hands out only those of rank <= 1).
      out.value = std::move(moved);
      return;
    }
    auto t = Tensor::fromInt64s(*outShape, numbers, in.type);
    if (!t.ok()) return;
    out = Fact::fromTensor(std::make_shared<const Tensor>(std::move(*t)));
  };
}

} // namespace

void registerShapeOps(OpRegistry &r) {
  r.add({.name = "Shape", .infer = inferShape});
  r.add({.name = "Size", .infer = inferSize});
  r.add({.name = "Reshape",
         .infer = inferReshape,
         .values = movedValues(Move::Flat),
         .traits = {.view = true}});
  r.add({.name = "Flatten",
         .infer = inferFlatten,
         .values = movedValues(Move::Flat),
         .traits = {.view = true}});
  r.add({.name = "Squeeze",
         .infer = inferSqueeze,
         .values = movedValues(Move::Flat),
         .traits = {.view = true}});
  r.add({.name = "Unsqueeze",
         .infer = inferUnsqueeze,
         .values = movedValues(Move::Flat),
         .traits = {.view = true}});
  r.add({.name = "Transpose", .infer = inferTranspose, .values = movedValues(Move::Transpose)});
  r.add({.name = "Slice", .infer = inferSlice, .values = movedValues(Move::Slice)});
  r.add({.name = "Concat", .infer = inferConcat});
  r.add({.name = "Split", .infer = inferSplit});
  r.add({.name = "Expand", .infer = inferExpand});
  r.add({.name = "Tile", .infer = inferTile});
  r.add({.name = "ConstantOfShape", .infer = inferConstantOfShape});
  r.add({.name = "Range", .infer = inferRange});
  r.add({.name = "Pad", .infer = inferPad});
  r.add({.name = "Gather", .infer = inferGather});
}

} // namespace sf
