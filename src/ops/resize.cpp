// Resampling ops: Resize (scales or sizes; opset 10's two inputs, 11+'s four, 18's axes and
// keep_aspect_ratio_policy), Upsample, GridSample, AffineGrid, CenterCropPad, Col2Im.
// `sizes` usually comes from a shape subgraph (torch's F.interpolate(size=...) exports
// Shape -> Slice -> Concat), so it is read from propagated values and stays symbolic; an integer
// scale on a symbolic dim gives `2*H`.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

#include <cmath>
#include <cstdio>

namespace sf {
namespace {

std::string fmtScale(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

/// Element count interval of a shape of static rank.
Interval elementCountRange(const PartialShape &s) {
  int64_t lo = 1, hi = 1;
  for (const auto &d : s.dims()) {
    lo = satMul(lo, d.minLength());
    hi = satMul(hi, d.maxLength());
  }
  return {lo, hi};
}

/// Static length of a 1-D fact, when known. The length becomes a rank here, so a length
/// that no real model has (a malformed file's claim) counts as unknown rather than allocated.
std::optional<int64_t> vectorLength(const Fact &f) {
  std::optional<int64_t> n;
  if (f.constant)
    n = f.constant->elementCount();
  else if (f.shape.rankIsStatic() && f.shape.size() == 1 && f.shape[0].isStatic())
    n = f.shape[0].length();
  if (n && *n > int64_t(kValueBudget)) return std::nullopt;
  return n;
}

/// floor(float(in) * scale), computed in float as onnxruntime and ONNX's shape inference do.
int64_t scaleStatic(int64_t in, float s) {
  double v = std::floor(double(float(in) * s));
  if (!(v < 9.2e18)) return kInf;
  return int64_t(v);
}

/// floor(in * scale) computed in f32 (dim/expr.h float nodes), as scaleStatic does on numbers:
/// for a scale that is not a small dyadic fraction, or one computed from sizes.
Result<Dimension> scaledDimExpr(const Dimension &in, Expr scale) {
  if (!in.expr()) return makeError("no expression");
  SF_ASSIGN(Expr prod, floatOp(FloatOp::Mul, in.expr(), scale, FloatPrec::F32));
  SF_ASSIGN(Expr size, roundToInt(RoundMode::Floor, prod));
  return Dimension(size);
}

/// Output size for one axis under a float scale: an integer expression when the scale is an
/// integer or a fraction with a small power-of-two denominator (0.5, 1.5, 0.25), else the float
/// expression floor(dim * scale) (f32), bounded by the scaled ends of the dim's range.
Result<Dimension> scaledDim(const Dimension &in, double scale) {
  float s = float(scale);
  if (!std::isfinite(s) || !(s > 0))
    return errorf("scale {} must be positive and finite", fmtScale(scale));
  if (in.isStatic()) {
    int64_t v = scaleStatic(in.length(), s);
    if (v == kInf) return errorf("scaling {} by {} overflows", in, fmtScale(scale));
    return Dimension(v);
  }
  // s = num / 2^m exactly for some small m.
  for (int64_t den = 1; den <= 256; den *= 2) {
    double num = double(s) * double(den);
    if (num != std::floor(num) || num > double(1 << 20)) continue;
    if (!in.expr()) break;
    SF_ASSIGN(Dimension scaled, in * Dimension(int64_t(num)));
    return den == 1 ? scaled : scaled.floorDiv(den);
  }
  // Monotone in the input: the ends scale exactly.
  Interval r = in.interval();
  int64_t lo = scaleStatic(r.lo, s);
  int64_t hi = r.hi == kInf ? kInf : scaleStatic(r.hi, s);
  Interval range{lo == kInf ? 0 : lo, hi};
  if (in.expr()) {
    auto k = floatConstant(s, FloatPrec::F32);
    auto d = k.ok() ? scaledDimExpr(in, *k) : k.takeError();
    if (d.ok() && d->expr()) return Dimension(d->expr(), range);
  }
  return Dimension::fromInterval(range);
}

/// Present and non-empty (1), absent or empty (0), or present with an unknown length (2):
/// opset 11-12 models pass an empty name or an empty tensor for the scales they do not use.
int presence(InferContext &ctx, size_t i) {
  if (!ctx.hasInput(i)) return 0;
  const Fact &f = ctx.input(i);
  if (auto n = vectorLength(f)) return *n == 0 ? 0 : 1;
  if (f.shape.rankIsStatic()) {
    Interval n = elementCountRange(f.shape);
    if (n.hi == 0) return 0;
    if (n.lo > 0) return 1;
  }
  return 2;
}

/// Axes listed by attribute (opset 18+), normalised, or every axis.
Result<std::vector<int64_t>> resizeAxes(InferContext &ctx, int64_t rank) {
  if (!ctx.attrs().has("axes")) {
    std::vector<int64_t> all(rank);
    for (int64_t i = 0; i < rank; ++i)
      all[i] = i;
    return all;
  }
  SF_ASSIGN(auto axes, ctx.attrs().getInts("axes"));
  return normalizeAxes(axes, rank);
}

/// keep_aspect_ratio_policy other than stretch: one scale for every listed axis.
Result<void> keepAspect(std::vector<Dimension> &dims, const std::vector<int64_t> &axes,
                        const std::vector<Dimension> &sizes, const std::string &policy) {
  bool notLarger = policy == "not_larger";
  bool allStatic = true;
  for (size_t i = 0; i < axes.size(); ++i)
    allStatic = allStatic && dims[axes[i]].isStatic() && sizes[i].isStatic();
  if (allStatic) {
    float scale = notLarger ? INFINITY : 0.0f;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t in = dims[axes[i]].length();
      if (in == 0) return makeError("cannot keep the aspect ratio of an empty axis");
      float s = float(sizes[i].length()) / float(in);
      scale = notLarger ? std::min(scale, s) : std::max(scale, s);
    }
    for (int64_t a : axes)
      dims[a] = Dimension(int64_t(std::round(scale * float(dims[a].length()))));
    return success();
  }
  // The axis that sets the scale gets its size; the others stay within it (not_larger) or reach
  // beyond it (not_smaller).
  for (size_t i = 0; i < axes.size(); ++i) {
    Interval s = sizes[i].nonNegative().interval();
    dims[axes[i]] = Dimension::fromInterval(notLarger ? Interval{0, s.hi} : Interval{s.lo, kInf});
  }
  return success();
}

// ---------------------------------------------------------------- Resize
/// The listed axes become unknown.
void loosenAxes(std::vector<Dimension> &dims, const std::vector<int64_t> &axes) {
  for (int64_t a : axes)
    dims[a] = Dimension::dynamic();
}

/// The listed axes resized to `param`, the 'sizes' input.
Result<void> resizeToSizes(InferContext &ctx, std::vector<Dimension> &dims,
                           const std::vector<int64_t> &axes, const Fact &param,
                           const std::string &policy) {
  auto sv = dimValues(param);
  if (!sv) {
    loosenAxes(dims, axes);
    return success();
  }
  for (const auto &v : *sv)
    if (v.maxLength() < 0) return errorf("'sizes' has a negative element {}", v);
  // onnxruntime takes size / input dim as each axis' scale and refuses a scale that is not
  // positive: a size of 0 fails on an axis that is not empty (an empty one may stay empty).
  for (size_t i = 0; i < axes.size() && i < sv->size(); ++i) {
    const Dimension &v = (*sv)[i], &in = dims[axes[i]];
    // An empty axis has nothing to sample: a size past 0 would take an infinite scale.
    if (in.isStatic() && in.length() == 0 && v.minLength() >= 1)
      return errorf("'sizes' element {} is {} for an empty axis: runtimes refuse the infinite scale", i, v);
    if (in.minLength() < 1) continue;
    if (v.maxLength() < 1)
      return errorf("'sizes' element {} is {} for an axis of {}: runtimes refuse a zero scale", i, v, in);
    if (v.minLength() < 1 && v.expr()) SF_TRY(ctx.symbols().narrow(v.expr(), {1, kInf}));
  }
  if (policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i)
      dims[axes[i]] = (*sv)[i].nonNegative();
    return success();
  }
  return keepAspect(dims, axes, *sv, policy);
}

/// The listed axes of `x` scaled by `param`, the 'scales' input.
Result<void> resizeByScales(std::vector<Dimension> &dims, const std::vector<int64_t> &axes,
                            const Fact &param, const Fact &x) {
  auto sc = constFloats(param);
  auto scExprs = sc ? std::nullopt : valueExprs(param);
  if (!sc && scExprs && scExprs->size() == axes.size()) {
    // Scales computed from sizes (an upsampling to another tensor's size): floor(dim * scale)
    // in f32 per axis, as far as it can be expressed.
    for (size_t i = 0; i < axes.size(); ++i) {
      auto d = scaledDimExpr(dims[axes[i]], (*scExprs)[i]);
      dims[axes[i]] = d.ok() ? *d : Dimension::dynamic();
    }
  } else if (!sc || sc->size() != axes.size()) {
    loosenAxes(dims, axes);
  } else {
    for (size_t i = 0; i < axes.size(); ++i) {
      auto d = scaledDim(dims[axes[i]], (*sc)[i]);
      if (!d.ok()) return errorf("axis {}: {} ({})", axes[i], d.error().message, x);
      dims[axes[i]] = *d;
    }
  }
  return success();
}

/// The output shape for an input of unknown rank: without axes, sizes give the whole of it.
PartialShape unrankedResizeShape(InferContext &ctx, const Fact &param,
                                 std::optional<int64_t> paramLen, bool useSizes,
                                 const std::string &policy) {
  if (ctx.attrs().has("axes") || !paramLen) return PartialShape::dynamic();
  PartialShape shape = shapeOfRank(*paramLen);
  if (useSizes && policy == "stretch") {
    if (auto sv = dimValues(param)) {
      std::vector<Dimension> d;
      for (const auto &v : *sv)
        d.push_back(v.nonNegative());
      shape = PartialShape(std::move(d));
    }
  }
  return shape;
}

Result<Facts> inferResize(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  bool v10 = ctx.opset() != 0 && ctx.opset() < 11;
  size_t iScales = v10 ? 1 : 2, iSizes = 3;
  int ps = presence(ctx, iScales), pz = v10 ? 0 : presence(ctx, iSizes);
  if (ps == 1 && pz == 1) return makeError("only one of 'scales' and 'sizes' may be given");
  if (ps == 0 && pz == 0) return makeError("one of 'scales' and 'sizes' is required");
  bool useSizes = pz == 1 || (pz == 2 && ps == 0);
  bool useScales = ps == 1 || (ps == 2 && pz == 0);
  const Fact &param = ctx.input(useSizes ? iSizes : iScales);
  std::optional<int64_t> paramLen;
  if (useSizes || useScales) paramLen = vectorLength(param);
  std::string policy = ctx.attrs().has("keep_aspect_ratio_policy")
                           ? ctx.attrs().getString("keep_aspect_ratio_policy").valueOr("stretch")
                           : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return errorf("unknown keep_aspect_ratio_policy '{}'", policy);
  Fact out = makeFact(x.type, PartialShape::dynamic());
  if (!x.shape.rankIsStatic()) {
    out.shape = unrankedResizeShape(ctx, param, paramLen, useSizes, policy);
    return factsOf(std::move(out));
  }
  int64_t r = int64_t(x.shape.size());
  SF_ASSIGN(auto axes, resizeAxes(ctx, r));
  const char *what = useSizes ? "'sizes'" : "'scales'";
  if (paramLen && *paramLen != int64_t(axes.size()))
    return errorf("{} has {} elements, expected {} ({})", what, *paramLen, int64_t(axes.size()), x);
  std::vector<Dimension> dims = x.shape.dims();
  if (useSizes) {
    SF_TRY(resizeToSizes(ctx, dims, axes, param, policy));
  } else if (useScales) {
    SF_TRY(resizeByScales(dims, axes, param, x));
  } else {
    loosenAxes(dims, axes);
  }
  out.shape = PartialShape(std::move(dims));
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Upsample
Result<Facts> inferUpsample(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  std::optional<std::vector<double>> scales;
  int64_t opset = ctx.opset();
  if (ctx.attrs().has("scales") || (opset != 0 && opset < 9 && opset >= 7)) {
    auto v = ctx.attrs().getFloats("scales");
    if (!v.ok()) return makeError("attribute 'scales' is required");
    scales = std::vector<double>(v->begin(), v->end());
  } else if (ctx.attrs().has("height_scale") || ctx.attrs().has("width_scale") ||
             (opset != 0 && opset < 7)) {
    double h = ctx.attrs().getFloat("height_scale").valueOr(1.0);
    double w = ctx.attrs().getFloat("width_scale").valueOr(1.0);
    scales = std::vector<double>{1.0, 1.0, h, w};
  } else {
    if (!ctx.hasInput(1)) return makeError("input 1 ('scales') is required");
    scales = constFloats(ctx.input(1));
  }
  Fact out = makeFact(x.type, PartialShape::dynamic());
  if (scales)
    for (double s : *scales)
      if (!(s >= 1.0)) return errorf("scale {} is less than 1", fmtScale(s));
  if (!x.shape.rankIsStatic()) {
    if (scales)
      out.shape = PartialShape::dynamic(int64_t(scales->size()));
    else if (auto n = vectorLength(ctx.input(1)))
      out.shape = shapeOfRank(*n);
    return factsOf(std::move(out));
  }
  int64_t r = int64_t(x.shape.size());
  if (!scales) {
    out.shape = PartialShape::dynamic(r);
    return factsOf(std::move(out));
  }
  if (int64_t(scales->size()) != r)
    return errorf("'scales' has {} elements, expected {} ({})", int64_t(scales->size()), r, x);
  std::vector<Dimension> dims;
  for (int64_t i = 0; i < r; ++i) {
    SF_ASSIGN(Dimension d, scaledDim(x.shape[i], (*scales)[i]));
    dims.push_back(d);
  }
  out.shape = PartialShape(std::move(dims));
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- GridSample
Result<Facts> inferGridSample(InferContext &ctx) {
  const Fact &x = ctx.input(0), &grid = ctx.input(1);
  if (grid.type != ElementType::Undefined && !isFloat(grid.type))
    return errorf("grid must be floating point, got {}", grid);
  Fact out = makeFact(x.type, PartialShape::dynamic());
  std::optional<int64_t> rank;
  if (x.shape.rankIsStatic()) rank = int64_t(x.shape.size());
  if (grid.shape.rankIsStatic()) {
    int64_t g = int64_t(grid.shape.size());
    if (rank && *rank != g)
      return errorf("grid has rank {}, expected {} ({} vs {})", g, *rank, x, grid);
    rank = g;
  }
  if (!rank) return factsOf(std::move(out));
  if (*rank < 3) return errorf("input must have rank >= 3, got {} and grid {}", x, grid);
  std::vector<Dimension> dims(*rank);
  if (x.shape.rankIsStatic()) {
    dims[0] = x.shape[0];
    dims[1] = x.shape[1];
  }
  if (grid.shape.rankIsStatic()) {
    const Dimension &last = grid.shape[*rank - 1];
    if (!last.compatible(Dimension(*rank - 2)))
      return errorf("grid's last dimension is {}, expected {} ({})", last, *rank - 2, grid);
    SF_TRY(ctx.mergeDims(last, Dimension(*rank - 2)));
    auto n = ctx.mergeDims(dims[0], grid.shape[0]);
    if (!n.ok()) return errorf("batch sizes differ ({} vs {})", x, grid);
    dims[0] = *n;
    for (int64_t i = 1; i < *rank - 1; ++i)
      dims[i + 1] = grid.shape[i];
  }
  out.shape = ctx.symbols().resolve(PartialShape(std::move(dims)));
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- AffineGrid
Result<Facts> inferAffineGrid(InferContext &ctx) {
  const Fact &theta = ctx.input(0), &sizeFact = ctx.input(1);
  Fact out = makeFact(theta.type, PartialShape::dynamic());
  std::optional<int64_t> n = vectorLength(sizeFact);
  if (n && *n != 4 && *n != 5)
    return errorf("'size' must have 4 or 5 elements (N, C, [D,] H, W), got {}", sizeFact);
  if (theta.shape.rankIsStatic()) {
    if (theta.shape.size() != 3) return errorf("theta must have rank 3, got {}", theta);
    if (n) {
      int64_t sp = *n - 2;
      if (!theta.shape[1].compatible(Dimension(sp)) ||
          !theta.shape[2].compatible(Dimension(sp + 1)))
        return errorf("theta must be [N, {}, {}] for a {}-D grid, got {}", sp, sp + 1, sp, theta);
    }
  }
  if (!n) {
    if (theta.shape.rankIsStatic() && theta.shape[1].isStatic()) {
      int64_t sp = theta.shape[1].length();
      if (sp == 2 || sp == 3) n = sp + 2;
    }
    if (!n) return factsOf(std::move(out));
  }
  int64_t sp = *n - 2;
  std::vector<Dimension> dims(sp + 2);
  auto sv = dimValues(sizeFact);
  if (sv && int64_t(sv->size()) == *n) {
    dims[0] = (*sv)[0].nonNegative();
    for (int64_t i = 0; i < sp; ++i)
      dims[1 + i] = (*sv)[2 + i].nonNegative();
  }
  if (theta.shape.rankIsStatic()) {
    auto m = ctx.mergeDims(dims[0], theta.shape[0]);
    if (!m.ok()) return errorf("batch sizes differ ({} vs size {})", theta, dims[0]);
    dims[0] = *m;
  }
  dims[sp + 1] = Dimension(sp);
  out.shape = ctx.symbols().resolve(PartialShape(std::move(dims)));
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- CenterCropPad
Result<Facts> inferCenterCropPad(InferContext &ctx) {
  const Fact &x = ctx.input(0), &shapeFact = ctx.input(1);
  Fact out = makeFact(x.type, PartialShape::dynamic());
  if (!x.shape.rankIsStatic()) return factsOf(std::move(out));
  int64_t r = int64_t(x.shape.size());
  SF_ASSIGN(auto axes, resizeAxes(ctx, r));
  auto n = vectorLength(shapeFact);
  if (n && *n != int64_t(axes.size()))
    return errorf("'shape' has {} elements, expected {} ({})", *n, int64_t(axes.size()), x);
  std::vector<Dimension> dims = x.shape.dims();
  auto sv = dimValues(shapeFact);
  // (Found by fuzz_graph: a value of another length than the axes was read past its end.)
  if (sv && sv->size() != axes.size())
    return errorf("'shape' has {} elements, expected {} ({})", sv->size(), axes.size(), x);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!sv) {
      dims[axes[i]] = Dimension::dynamic();
      continue;
    }
    if ((*sv)[i].maxLength() < 0) return errorf("'shape' has a negative element {}", (*sv)[i]);
    dims[axes[i]] = (*sv)[i].nonNegative();
  }
  out.shape = PartialShape(std::move(dims));
  return factsOf(std::move(out));
}

// ---------------------------------------------------------------- Col2Im
Result<Facts> inferCol2Im(InferContext &ctx) {
  const Fact &x = ctx.input(0), &image = ctx.input(1), &block = ctx.input(2);
  if (x.shape.rankIsStatic() && x.shape.size() != 3)
    return errorf("input must have rank 3 (N, C*prod(block_shape), L), got {}", x);
  auto iv = dimValues(image);
  auto bv = constInts(block);
  std::optional<int64_t> sp = vectorLength(image);
  if (!sp) sp = vectorLength(block);
  Fact out = makeFact(x.type, PartialShape::dynamic());
  if (!sp) return factsOf(std::move(out));
  if (auto bn = vectorLength(block); bn && *bn != *sp)
    return errorf("image_shape and block_shape lengths differ ({} vs {})", image, block);
  std::vector<Dimension> dims(*sp + 2);
  if (iv)
    for (int64_t i = 0; i < *sp; ++i)
      dims[2 + i] = (*iv)[i].nonNegative();
  if (!x.shape.rankIsStatic()) {
    out.shape = PartialShape(std::move(dims));
    return factsOf(std::move(out));
  }
  dims[0] = x.shape[0];
  if (bv) {
    SF_ASSIGN(Dimension prod, productOf(std::vector<Dimension>(bv->begin(), bv->end())));
    for (int64_t b : *bv)
      if (b <= 0) return errorf("block_shape must be positive, got {}", b);
    const Dimension &cb = x.shape[1];
    if (cb.isStatic() && cb.length() % prod.length() != 0)
      return errorf("input channels {} are not divisible by the block size {} ({})", cb, prod, x);
    SF_ASSIGN(dims[1], cb.floorDiv(prod.length()));
    // L must be the number of block positions.
    auto attrInts = [&](const char *name, int64_t n, int64_t dflt) -> Result<std::vector<int64_t>> {
      if (!ctx.attrs().has(name)) return std::vector<int64_t>(n, dflt);
      return ctx.attrs().getInts(name);
    };
    SF_ASSIGN(auto strides, attrInts("strides", *sp, 1));
    SF_ASSIGN(auto dil, attrInts("dilations", *sp, 1));
    SF_ASSIGN(auto pads, attrInts("pads", 2 * *sp, 0));
    if (int64_t(strides.size()) != *sp || int64_t(dil.size()) != *sp ||
        int64_t(pads.size()) != 2 * *sp)
      return errorf("strides, dilations and pads must match {} spatial axes", *sp);
    if (iv) {
      Dimension blocks(1);
      for (int64_t i = 0; i < *sp; ++i) {
        SF_ASSIGN(Dimension n, windowOutputDim(dims[2 + i], (*bv)[i], strides[i], dil[i], pads[i],
                                               pads[i + *sp], false));
        SF_ASSIGN(blocks, blocks * n);
      }
      if (!blocks.compatible(x.shape[2]))
        return errorf("input has {} blocks, expected {} ({})", x.shape[2], blocks, x);
      // The blocks the input holds are those positions (onnxruntime refuses others): the input's
      // L is that count (Lb == 30, or (H - 1)*(W - 1) for a symbolic image).
      SF_TRY(ctx.symbols().equate(x.shape[2], blocks));
    }
    if (!cb.isStatic()) ctx.symbols().require(Condition::Divides, cb, prod);
  }
  out.shape = PartialShape(std::move(dims));
  return factsOf(std::move(out));
}

} // namespace

// ---- costs (docs/COSTS.md) ----
namespace {

/// Resampling: per output element, a weighted sum of the neighbours of the interpolation mode
/// (`nearest` 1 point: no arithmetic; linear 2^d points, cubic 4^d, one MAC each), over d
/// interpolated axes (the spatial ones: all but N and C from rank 3 on). `defaultMode` is the
/// op's when the attribute is absent.
Result<OpCost> resampleCost(const CostContext &ctx, const std::string &defaultMode) {
  OpCost c;
  std::string mode = ctx.attrs().getString("mode", defaultMode).valueOr(defaultMode);
  if (mode == "nearest") return c;
  const PartialShape &y = ctx.output(0).shape;
  int64_t d = !y.rankIsStatic() ? 2 : y.size() >= 3 ? int64_t(y.size()) - 2 : int64_t(y.size());
  int64_t per = 1, base = mode == "cubic" || mode == "bicubic" ? 4 : 2;
  for (int64_t i = 0; i < d && per < (int64_t(1) << 40); ++i)
    per *= base;
  SF_ASSIGN(Dimension macs, times(elementsOf(ctx.output(0)), Dimension(per)));
  SF_TRY(c.addMacs(macs));
  return c;
}

/// AffineGrid: every output point is theta (d x (d + 1)) times a homogeneous coordinate: d + 1
/// MACs per output element (the last dim is d).
Result<OpCost> costAffineGrid(const CostContext &ctx) {
  OpCost c;
  const PartialShape &y = ctx.output(0).shape;
  Dimension perElement = y.rankIsStatic() && y.size() > 0 && y[y.size() - 1].isStatic()
                             ? Dimension(y[y.size() - 1].length() + 1)
                             : Dimension::dynamic();
  SF_ASSIGN(Dimension macs, times(elementsOf(ctx.output(0)), perElement));
  SF_TRY(c.addMacs(macs));
  return c;
}

CostFn costResample(std::string defaultMode) {
  return [defaultMode](const CostContext &ctx) { return resampleCost(ctx, defaultMode); };
}

} // namespace

void registerResizeOps(OpRegistry &r) {
  r.add({.name = "Resize", .infer = inferResize, .refine = refineSameRank(), .cost = costResample("nearest")});
  r.add({.name = "Upsample", .infer = inferUpsample, .refine = refineSameRank(), .cost = costResample("nearest")});
  r.add({.name = "GridSample", .infer = inferGridSample, .cost = costResample("bilinear")});
  r.add({.name = "AffineGrid", .infer = inferAffineGrid, .cost = costAffineGrid});
  r.add({.name = "CenterCropPad", .infer = inferCenterCropPad, .cost = costNone});
  r.add({.name = "Col2Im", .infer = inferCol2Im, .cost = costPerInput(FlopKind::Add)});
}

} // namespace sf
