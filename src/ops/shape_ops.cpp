// Shapes and views of the same elements, and the value propagation that makes shape subgraphs
// symbolic: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice. `Shape -> Gather
// -> Concat -> Reshape` must come out symbolic: each op here passes integer elements (as
// Dimensions) through when it can, and moves small known integers of any rank (movedValues).
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"
#include "shapeflow/support/checked.h"
#include "shapeflow/support/small_vec.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sf {
namespace {

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
/// The output dim of a constant target element v other than -1 (0 copies the input's dim).
Result<Dimension> constantTargetDim(int64_t v, size_t i, const PartialShape &in, bool allowZero) {
  if (v < -1) return errorf("target shape has a negative dimension {}", v);
  if (v == 0 && !allowZero) {
    if (in.rankIsStatic() && i >= in.size())
      return errorf("target shape copies dimension {} (a 0) but the input has rank {}", i,
                    in.size());
    return in.rankIsStatic() ? in[i] : Dimension::dynamic();
  }
  return Dimension(v);
}

/// Whether a non-constant target element `t` may be taken literally where it is 0 ("copy input
/// dim i"), and what must be nonzero for t == 0 to force the input dim to 0.
struct CopyCheck {
  bool sameAsInput = false;
  Expr beyondInput;
};

// When t may be 0 (meaning "copy input dim i"), taking t literally is still exact if t == 0
// forces the input dim to be 0: t is the input dim times a nonzero constant (12*N vs N), or
// times sizes that are never 0 (N*(H//7)*(W//7) vs N, H and W at least 7): a batch of none.
CopyCheck copyCheck(const Dimension &t, const PartialShape &in, size_t i) {
  CopyCheck out{false, t.expr()};
  if (!in.rankIsStatic() || i >= in.size() || !t.expr() || !in[i].expr()) return out;
  if (t.expr() == in[i].expr()) {
    out.sameAsInput = true;
  } else if (!isConst(in[i].expr())) {
    bool sameAsInput;
    auto q = divExact(t.expr(), in[i].expr());
    sameAsInput = q.ok() && ((isConst(*q) && (*q)->value != 0) || bounds(*q).lo >= 1);
    if (q.ok()) out.beyondInput = *q;
    // The input dim a multiple of t (N*(H//7)*(W//7) read back as N): t == 0 makes it 0.
    if (!sameAsInput && !isConst(t.expr())) sameAsInput = divExact(in[i].expr(), t.expr()).ok();
    // t a size s, and the input dim 0 wherever s is (min(S, ...)*max(S, ...) read back as S).
    if (!sameAsInput && isSymbol(t.expr())) {
      SymbolId s = t.expr()->sym;
      auto z = substitute(in[i].expr(), [&](SymbolId id) -> Expr { return id == s ? constant(0) : nullptr; });
      sameAsInput = z.ok() && isConst(*z) && (*z)->value == 0;
    }
    out.sameAsInput = sameAsInput;
  }
  return out;
}

// A size computed from input dims (each >= 1) that is 0 only at a degenerate corner of its
// range (floor(H * scale) with an extreme aspect ratio) is taken as the size it reads as,
// and the assumption is reported.
// With t the input dim times such a size (N*(H//7)*(W//7) for N), the input dim may be 0 (a
// batch of none): t is 0 there too, as the copy would be.
// So is a sum of two or more sizes (S + P: new tokens after a cache), 0 only where all of
// them are (no tokens at all).
/// Whether target element i, which may be 0, is taken to be nonzero (assumed or required).
Result<bool> takenNonzero(InferContext &ctx, const Dimension &t, size_t i, Expr beyondInput) {
  bool inputDims = true;
  for (SymbolId sym : symbolsOf(beyondInput)) inputDims = inputDims && symbolInfo(sym).range.lo >= 1;
  const Expr &e = t.expr();
  bool jointZero = e->kind == ExprKind::Add && e->value >= 0 && e->ops.size() >= 2;
  for (size_t k = 0; jointZero && k < e->ops.size(); ++k)
    jointZero = isSymbol(e->ops[k]) && e->coefs[k] > 0 && symbolInfo(e->ops[k]->sym).range.lo >= 0;
  if (inputDims) {
    ctx.assume("target element " + std::to_string(i) + " (" + t.toString() +
               ") is taken to be nonzero; a 0 would copy the input's dim instead");
    return true;
  }
  if (jointZero) {
    // No tokens at all would copy the input's dim and make other shapes than these: a
    // requirement of the sizes (the contract states it), not an assumption.
    SF_TRY(ctx.symbols().narrow(t.expr(), {1, kInf}));
    return true;
  }
  return false;
}

/// The output dim of a non-constant target element `t` at i: itself unless it may be -1, or 0
/// (copy) with a different input dim there; nullopt when it is ambiguous.
Result<std::optional<Dimension>> variableTargetDim(InferContext &ctx, const Dimension &t,
                                                   const PartialShape &in, size_t i, bool allowZero) {
  CopyCheck copy = copyCheck(t, in, i);
  bool mayBeMinusOne = t.interval().contains(-1);
  bool mayBeZero = !allowZero && t.interval().contains(0) && !copy.sameAsInput;
  // Past the input's rank a 0 has no dim to copy: the node would fail, so it is not 0.
  if (mayBeZero && in.rankIsStatic() && i >= in.size()) mayBeZero = false;
  if (mayBeZero && !mayBeMinusOne && t.isNamedExpr() && t.minLength() >= 0) {
    SF_ASSIGN(bool nonzero, takenNonzero(ctx, t, i, copy.beyondInput));
    if (nonzero) mayBeZero = false;
  }
  if (mayBeMinusOne || mayBeZero) return std::optional<Dimension>();
  return std::optional<Dimension>(t.nonNegative());
}

/// Dims apart: the product of the numbers (none past int64) and the symbolic ones.
struct ConstantTimesSymbolic {
  std::optional<int64_t> constant = 1;
  std::vector<Dimension> symbolic;
};
ConstantTimesSymbolic splitConstant(const std::vector<Dimension> &dims) {
  ConstantTimesSymbolic out;
  for (const Dimension &d : dims) {
    if (!d.isStatic()) out.symbolic.push_back(d);
    else if (out.constant) out.constant = checkedMul(*out.constant, d.length());
  }
  return out;
}

/// The input's elements over the other dims `known` where these are symbolic sizes times a
/// constant c (pixel_unshuffle's [N, C, -1, 2, W] of [N, C, H, 1, W]): the constants of both sides
/// cancel first (Tc / gcd over c / gcd) and the symbolic parts divide exactly, P = H, giving
/// P // c with the requirement that c divides P (H % 2 == 0; onnxruntime refuses the sizes where
/// it does not). None where that is not the form.
Result<std::optional<Dimension>> dividedPastConstants(InferContext &ctx, const Fact &data,
                                                      const std::vector<Dimension> &known) {
  if (!data.shape.rankIsStatic()) return std::optional<Dimension>();
  const ConstantTimesSymbolic in = splitConstant(data.shape.dims()), other = splitConstant(known);
  if (!in.constant || !other.constant || *in.constant <= 0 || *other.constant <= 1) return std::optional<Dimension>();
  SF_ASSIGN(Dimension ts, productOf(in.symbolic));
  SF_ASSIGN(Dimension r, productOf(other.symbolic));
  std::optional<Dimension> p;
  if (r.isStatic() && r.length() == 1) p = ts;
  else if (ts.expr() && r.expr())
    if (auto q = divExact(ts.expr(), r.expr()); q.ok()) p = Dimension(*q);
  if (!p) return std::optional<Dimension>();
  const int64_t g = std::gcd(*in.constant, *other.constant), cn = *other.constant / g, tn = *in.constant / g;
  auto q = cn == 1 ? Result<Dimension>(*p) : p->floorDiv(cn);
  auto x = q.ok() ? *q * Dimension(tn) : q;
  if (!x.ok()) return std::optional<Dimension>();
  if (cn > 1) ctx.symbols().require(Condition::Divides, *p, Dimension(cn));
  return std::optional<Dimension>(x->nonNegative());
}

/// The dim a -1 at `inferred` stands for: the input's elements over the other dims' (exactly,
/// past constants as dividedPastConstants says, else a size within bounds only).
Result<Dimension> inferredTargetDim(InferContext &ctx, const Fact &data, const std::vector<Dimension> &target,
                                    const std::vector<Dimension> &dims, size_t inferred) {
  SF_ASSIGN(Dimension total, data.shape.elementCount());
  std::vector<Dimension> known;
  for (size_t i = 0; i < dims.size(); ++i)
    if (i != inferred) known.push_back(dims[i]);
  SF_ASSIGN(Dimension rest, productOf(known));
  if (total.isStatic() && rest.isStatic()) {
    if (rest.length() == 0 || total.length() % rest.length() != 0)
      return errorf("cannot reshape {} to {}: {} elements do not divide into {}", data,
                    PartialShape(target), total.length(), rest.length());
    return Dimension(total.length() / rest.length());
  }
  SF_ASSIGN(auto divided, dividedPastConstants(ctx, data, known));
  if (divided) return *divided;
  auto q = total.floorDiv(rest);
  return q.ok() ? q->nonNegative() : Dimension::dynamic();
}

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
      out.shape = shapeOfRank(targetShape[0].length());
    return factsOf(std::move(out));
  }
  const PartialShape &in = data.shape;
  std::vector<Dimension> dims(target->size());
  std::optional<size_t> inferred;
  bool ambiguous = false;
  for (size_t i = 0; i < target->size(); ++i) {
    const Dimension &t = (*target)[i];
    if (t.isStatic() && t.length() == -1) {
      if (inferred) return makeError("more than one -1 in the target shape");
      inferred = i;
    } else if (t.isStatic()) {
      SF_ASSIGN(dims[i], constantTargetDim(t.length(), i, in, allowZero));
    } else {
      SF_ASSIGN(auto d, variableTargetDim(ctx, t, in, i, allowZero));
      ambiguous = ambiguous || !d;
      dims[i] = d ? *d : Dimension::dynamic();
    }
  }
  // With allowzero a 0 is a 0, and beside a -1 it leaves the -1 nothing to divide by: the spec
  // forbids both at once (onnxruntime refuses the model).
  if (allowZero && inferred)
    for (const Dimension &t : *target)
      if (t.isStatic() && t.length() == 0)
        return errorf("the target shape {} has both a 0 and a -1 with allowzero = 1", PartialShape(*target));
  if (inferred && !ambiguous && in.rankIsStatic()) {
    SF_ASSIGN(dims[*inferred], inferredTargetDim(ctx, data, *target, dims, *inferred));
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
        ctx.input(1).shape[0].isStatic()) {
      int64_t n = ctx.input(1).shape[0].length();
      if (n > r) return errorf("'axes' has {} entries for input {} of rank {}", n, in, r);
      out.shape = shapeOfRank(r - n);
    }
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
      out.shape = shapeOfRank(int64_t(in.shape.size()) + ctx.input(1).shape[0].length());
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

// ---------------------------------------------------------------- Slice
/// A clamped slice length in its shorter form: `L - max(L - S, 0)` is `min(S, L)`.
Dimension readable(const Dimension &d) {
  if (!d.expr()) return d;
  Expr e = distributeMinMax(d.expr());
  return e == d.expr() ? d : Dimension(e, d.interval());
}

/// No tensor in memory has a dim of 2^62 (its elements alone would pass 2^62 bytes).
inline constexpr int64_t kBeyondAnyDim = int64_t(1) << 62;

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
      // An index of 2^62 or more either way is past every dim a tensor in memory can have
      // (PyTorch's flip: start -1, end -2^63 + 1, step -1): the last element, or before the first.
      if (v.isStatic() && v.length() >= kBeyondAnyDim) return std::optional<Dimension>(last);
      if (v.isStatic() && v.length() <= -kBeyondAnyDim) return std::optional<Dimension>(minusOne);
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
      if (isEnd && x >= dim.maxLength()) return std::optional<Dimension>(dim);
      if (x >= kBeyondAnyDim) return std::optional<Dimension>(dim);   // past the end (INT64_MAX too)
      if (x <= -kBeyondAnyDim) return std::optional<Dimension>(zero); // before the start
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

/// Slice before opset 10 takes its ranges as attributes; DynamicSlice (an op of opsets 1-9 that
/// onnxruntime still runs) as inputs, as Slice does from opset 10.
bool rangesInAttributes(const InferContext &ctx) {
  return ctx.opset() != 0 && ctx.opset() < 10 && !ctx.hasInput(1);
}

Result<Facts> inferSlice(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  std::optional<std::vector<Dimension>> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  auto asDims = [](const std::optional<std::vector<int64_t>> &v) {
    return v ? std::optional(constantDims(*v)) : std::nullopt;
  };
  if (rangesInAttributes(ctx)) {
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
  if (in.value && r == 1 && norm.size() == 1 && out.shape[0].isStatic() && in.shape[0].isStatic() &&
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

// ---------------------------------------------------------------- data movement on known ints
// Shape math sometimes goes through tensors of rank 2 (torchvision pads to a multiple of 32 with
// pads computed as Reshape [-1, 2] -> Slice(step -1) -> Transpose -> Reshape [-1]), where values
// (rank <= 1) do not reach. When the data input holds known small integers (a constant, or
// values all static), these ops move them: the output gets a constant tensor, and values again
// once its rank is <= 1.

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
    if (in.size() != r || rangesInAttributes(ctx)) return std::nullopt;
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

/// Transpose by the identity permutation (or with none, of rank 1 or less).
std::optional<size_t> transposePassesThrough(const PassThroughArgs &a) {
  if (a.inputs.empty() || !a.inputs[0] || !a.inputs[0]->shape.rankIsStatic()) return std::nullopt;
  const int64_t rank = int64_t(a.inputs[0]->shape.size());
  auto perm = a.attrs.getInts("perm");
  if (!perm.ok()) return rank <= 1 ? std::optional<size_t>(0) : std::nullopt;
  for (int64_t i = 0; i < int64_t(perm->size()); ++i)
    if ((*perm)[size_t(i)] != i) return std::nullopt;
  return size_t(0);
}

/// Slice that keeps every element in order: positive steps (input 4, known) and the input's shape.
std::optional<size_t> slicePassesThrough(const PassThroughArgs &a) {
  if (a.inputs.size() > 4 && a.inputs[4]) {
    auto steps = constInts(*a.inputs[4]);
    if (!steps) return std::nullopt;
    for (int64_t s : *steps)
      if (s <= 0) return std::nullopt;
  }
  return sameTensorShape(a, 0) ? std::optional<size_t>(0) : std::nullopt;
}

} // namespace

void registerShapeOps(OpRegistry &r) {
  r.add({.name = "Shape", .infer = inferShape, .traits = {.metadataOnly = true}, .refine = refineShapeOf(), .cost = costNone});
  r.add({.name = "Size", .infer = inferSize, .traits = {.metadataOnly = true}, .cost = costNone});
  r.add({.name = "Reshape",
         .infer = inferReshape,
         .values = movedValues(Move::Flat),
         .traits = {.view = true, .movesElements = true, .keepsElements = true, .shapeInput = ShapeInput::Reshape},
         .refine = refineTypeOnly(),
         .cost = costNone,
         .passThrough = passWhenSameShape()});
  r.add({.name = "Flatten",
         .infer = inferFlatten,
         .values = movedValues(Move::Flat),
         .traits = {.view = true, .movesElements = true, .keepsElements = true},
         .refine = refineTypeOnly(),
         .cost = costNone,
         .passThrough = passWhenSameShape()});
  r.add({.name = "Squeeze",
         .infer = inferSqueeze,
         .values = movedValues(Move::Flat),
         .traits = {.view = true, .movesElements = true, .keepsElements = true},
         .refine = refineSqueeze(),
         .cost = costNone,
         .passThrough = passWhenSameShape()});
  r.add({.name = "Unsqueeze",
         .infer = inferUnsqueeze,
         .values = movedValues(Move::Flat),
         .traits = {.view = true, .movesElements = true, .keepsElements = true},
         .refine = refineUnsqueeze(),
         .cost = costNone,
         .passThrough = passWhenSameShape()});
  r.add({.name = "Transpose",
         .infer = inferTranspose,
         .values = movedValues(Move::Transpose),
         .traits = {.movesElements = true, .keepsElements = true},
         .refine = refineTranspose(),
         .cost = costNone,
         .passThrough = transposePassesThrough});
  // DynamicSlice (opsets 1-9, removed from ONNX, run by onnxruntime) is Slice with its ranges as
  // inputs: the same record (rangesInAttributes tells the two apart).
  r.addAll({"Slice", "DynamicSlice"},
           {.infer = inferSlice,
            .values = movedValues(Move::Slice),
            .traits = {.movesElements = true},
            .refine = refineSameRank(),
            .cost = costNone,
            .passThrough = slicePassesThrough});
}

} // namespace sf
