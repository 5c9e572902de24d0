// Sliding-window ops: Conv (N-D, groups, dilations, strides, pads, auto_pad), ConvInteger,
// QLinearConv, ConvTranspose, DeformConv, the pools (MaxPool with Indices, AveragePool, LpPool,
// ceil_mode), the global pools, MaxRoiPool, RoiAlign and MaxUnpool.
//
// The window attributes and the output size of each spatial axis are in conv_pool_window.cpp.
#include "conv_pool_window.h"
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"
#include "shapeflow/support/window.h"
#include "shared_rules.h"

#include <numeric>

namespace sf {
namespace {


using window_rules::constDim;
using window_rules::dimAt;
using window_rules::intsOfSize;
using window_rules::readWindow;
using window_rules::spatialRank;
using window_rules::Window;
using window_rules::windowShape;

Result<void> expectRank(const Fact &f, size_t i, const char *name, size_t rank) {
  if (f.shape.rankIsStatic() && f.shape.size() != rank)
    return errorf("{} has rank {}, expected {} ({})", inputLabel(i, name), f.shape.size(), rank, f);
  return success();
}

Result<void> expectMinRank(const Fact &f, size_t i, const char *name, size_t rank) {
  if (f.shape.rankIsStatic() && f.shape.size() < rank)
    return errorf("{} has rank {}, expected at least {} ({})", inputLabel(i, name), f.shape.size(),
                  rank, f);
  return success();
}

/// Merges two dims an op requires equal; the error says which inputs and shows both facts.
Result<Dimension> requireEqual(InferContext &ctx, const Dimension &a, const Dimension &b,
                               const std::string &what, const Fact &fa, const Fact &fb) {
  auto m = ctx.mergeDims(a, b);
  if (!m.ok()) return errorf("{}: {} vs {} ({} vs {})", what, a, b, fa, fb);
  return *m;
}

/// The bias (input `i`) of a convolution has M elements, one per output channel; returns M.
Result<Dimension> biasChannels(InferContext &ctx, size_t i, const Dimension &m, const Fact &w) {
  const Fact &b = ctx.input(i);
  SF_TRY(expectRank(b, i, "B", 1));
  if (!b.shape.rankIsStatic()) return m;
  auto merged = ctx.mergeDims(b.shape[0], m);
  if (!merged.ok())
    return errorf("{} has {} elements, expected M = {} ({} vs {})", inputLabel(i, "B"), b.shape[0],
                  m, b, w);
  return *merged;
}

// ---- convolutions ----

struct ConvInputs {
  size_t x, w, b; // b: SIZE_MAX when the op has no bias
};

/// The shared rule of Conv, ConvInteger, QLinearConv and DeformConv: rank and channel checks,
/// then [N, M, out spatial...].
Result<PartialShape> convShape(InferContext &ctx, ConvInputs in, bool allowAutoPad = true) {
  const Fact &x = ctx.input(in.x), &w = ctx.input(in.w);
  SF_TRY(expectMinRank(x, in.x, "X", 3));
  SF_TRY(expectMinRank(w, in.w, "W", 3));
  if (x.shape.rankIsStatic() && w.shape.rankIsStatic() && x.shape.size() != w.shape.size())
    return errorf("{} has rank {}, expected {} like input {} ({} vs {})", inputLabel(in.w, "W"),
                  w.shape.size(), x.shape.size(), in.x, w, x);
  SF_ASSIGN(int64_t group, ctx.attrs().getInt("group", 1));
  if (group <= 0) return errorf("attribute 'group' is {}, expected > 0", group);
  if (!allowAutoPad && ctx.attrs().has("auto_pad"))
    return makeError("attribute 'auto_pad' is not defined for this op");
  auto spatial = spatialRank(x, &w, ctx.attrs());
  if (!spatial) return PartialShape::dynamic();

  // Channels: C == W.C * group; M divisible by group; B is (M).
  Dimension m = dimAt(w, 0);
  if (x.shape.rankIsStatic() && w.shape.rankIsStatic()) {
    SF_ASSIGN(Dimension perGroupTimesGroup, w.shape[1] * Dimension(group));
    auto c = ctx.mergeDims(x.shape[1], perGroupTimesGroup);
    if (!c.ok())
      return errorf("channels differ: {} has {}, {} has {} per group times group {} ({} vs {})",
                    inputLabel(in.x, "X"), x.shape[1], inputLabel(in.w, "W"), w.shape[1], group, x,
                    w);
  }
  if (m.isStatic() && m.length() % group != 0)
    return errorf("{} has {} output channels, not divisible by group {} ({})",
                  inputLabel(in.w, "W"), m, group, w);
  if (in.b != SIZE_MAX && ctx.hasInput(in.b)) {
    SF_ASSIGN(m, biasChannels(ctx, in.b, m, w));
  }
  std::vector<Dimension> weightKernel;
  if (w.shape.rankIsStatic())
    weightKernel.assign(w.shape.dims().begin() + 2, w.shape.dims().end());
  SF_ASSIGN(Window win, readWindow(ctx, *spatial, weightKernel, false));
  for (auto &k : win.kernel) k = ctx.symbols().resolve(k);
  return windowShape(ctx, x, win, ctx.symbols().resolve(m));
}

Result<ElementType> sameType(const Fact &a, const Fact &b) {
  if (a.type != kUnknownType && b.type != kUnknownType && a.type != b.type)
    return errorf("input types differ: {} vs {}", a, b);
  return a.type != kUnknownType ? a.type : b.type;
}

} // namespace

Result<Facts> inferConv(InferContext &ctx) {
  SF_ASSIGN(ElementType t, sameType(ctx.input(0), ctx.input(1)));
  SF_ASSIGN(PartialShape s, convShape(ctx, {0, 1, 2}));
  return factsOf(makeFact(t, std::move(s)));
}

namespace {

Result<Facts> inferConvInteger(InferContext &ctx) {
  SF_ASSIGN(PartialShape s, convShape(ctx, {0, 1, SIZE_MAX}));
  return factsOf(makeFact(ElementType::I32, std::move(s)));
}

Result<Facts> inferQLinearConv(InferContext &ctx) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  for (auto [data, zp] : {std::pair<size_t, size_t>{0, 2}, {3, 5}}) {
    const Fact &d = ctx.input(data), &z = ctx.input(zp);
    if (ctx.hasInput(zp) && d.type != kUnknownType && z.type != kUnknownType && d.type != z.type)
      return errorf("input {} (zero point) has type {}, expected {} ({} vs {})", zp,
                    toString(z.type), toString(d.type), z, d);
  }
  SF_ASSIGN(PartialShape s, convShape(ctx, {0, 3, 8}));
  return factsOf(makeFact(ctx.input(7).type, std::move(s)));
}

Result<Facts> inferDeformConv(InferContext &ctx) {
  // X, W, offset, B, mask
  SF_ASSIGN(ElementType t, sameType(ctx.input(0), ctx.input(1)));
  SF_ASSIGN(PartialShape s, convShape(ctx, {0, 1, 3}, false));
  SF_ASSIGN(int64_t offsetGroup, ctx.attrs().getInt("offset_group", 1));
  if (offsetGroup <= 0) return errorf("attribute 'offset_group' is {}, expected > 0", offsetGroup);
  if (!s.rankIsStatic()) return factsOf(makeFact(t, s));
  size_t spatial = s.size() - 2;
  const Fact &x = ctx.input(0), &w = ctx.input(1);
  // offset: (N, offset_group * spatial * prod(kernel), out spatial...); mask without `spatial`.
  int64_t kernelElems = 1;
  bool kernelKnown = true;
  auto ks = ctx.attrs().getInts("kernel_shape", {});
  for (size_t i = 0; i < spatial && kernelKnown; ++i) {
    Dimension k = ks.ok() && ks->size() == spatial ? Dimension((*ks)[i]) : dimAt(w, 2 + i);
    auto p = k.isStatic() ? checkedMul(kernelElems, k.length()) : std::nullopt;
    kernelKnown = p.has_value();
    kernelElems = p.value_or(0);
  }
  struct Aux {
    size_t i;
    const char *name;
    int64_t perKernel;
  };
  for (Aux a : {Aux{2, "offset", int64_t(spatial)}, Aux{4, "mask", 1}}) {
    if (!ctx.hasInput(a.i)) continue;
    const Fact &f = ctx.input(a.i);
    SF_TRY(expectRank(f, a.i, a.name, s.size()));
    if (!f.shape.rankIsStatic()) continue;
    if (!ctx.mergeDims(f.shape[0], dimAt(x, 0)).ok())
      return errorf("{} has batch {}, input 0 (X) has {} ({} vs {})", inputLabel(a.i, a.name),
                    f.shape[0], dimAt(x, 0), f, x);
    if (kernelKnown) {
      auto ch = checkedMul(offsetGroup * a.perKernel, kernelElems);
      if (ch && !ctx.mergeDims(f.shape[1], Dimension(*ch)).ok())
        return errorf("{} has {} channels, expected {} ({})", inputLabel(a.i, a.name), f.shape[1],
                      *ch, f);
    }
    for (size_t j = 0; j < spatial; ++j) {
      auto m = ctx.mergeDims(f.shape[2 + j], s[2 + j]);
      if (!m.ok())
        return errorf("{} has spatial shape {}, expected the output's {} ({})",
                      inputLabel(a.i, a.name), f.shape, s, f);
      s[2 + j] = *m;
    }
    auto n = ctx.mergeDims(s[0], f.shape[0]);
    if (n.ok()) s[0] = *n;
  }
  return factsOf(makeFact(t, ctx.symbols().resolve(std::move(s))));
}

/// ConvTranspose: out = stride*(in - 1) + output_padding + ((k - 1)*dilation + 1) - pads,
/// or the output_shape attribute, or in*stride with SAME padding.
Result<Facts> inferConvTranspose(InferContext &ctx) {
  const Fact &x = ctx.input(0), &w = ctx.input(1);
  SF_ASSIGN(ElementType t, sameType(x, w));
  SF_TRY(expectMinRank(x, 0, "X", 3));
  SF_TRY(expectMinRank(w, 1, "W", 3));
  if (x.shape.rankIsStatic() && w.shape.rankIsStatic() && x.shape.size() != w.shape.size())
    return errorf("input 1 (W) has rank {}, expected {} like input 0 ({} vs {})", w.shape.size(),
                  x.shape.size(), w, x);
  SF_ASSIGN(int64_t group, ctx.attrs().getInt("group", 1));
  if (group <= 0) return errorf("attribute 'group' is {}, expected > 0", group);
  SF_ASSIGN(std::vector<int64_t> outputShape, ctx.attrs().getInts("output_shape", {}));
  auto spatial = spatialRank(x, &w, ctx.attrs());
  if (!spatial && !outputShape.empty()) spatial = outputShape.size();
  if (!spatial) return factsOf(makeFact(t, PartialShape::dynamic()));

  // W is (C, M/group, k...): C equals X's channels; the output has M = W[1]*group channels.
  if (x.shape.rankIsStatic() && w.shape.rankIsStatic())
    SF_TRY(requireEqual(ctx, x.shape[1], w.shape[0], "channels differ: input 0 (X) vs input 1 (W)", x, w));
  Dimension m;
  if (w.shape.rankIsStatic()) {
    SF_ASSIGN(m, w.shape[1] * Dimension(group));
  }
  if (ctx.hasInput(2)) {
    SF_ASSIGN(m, biasChannels(ctx, 2, m, w));
  }
  std::vector<Dimension> weightKernel;
  if (w.shape.rankIsStatic()) weightKernel.assign(w.shape.dims().begin() + 2, w.shape.dims().end());
  SF_ASSIGN(Window win, readWindow(ctx, *spatial, weightKernel, false));
  SF_ASSIGN(std::vector<int64_t> outPad, intsOfSize(ctx.attrs(), "output_padding", *spatial, 0, false));

  std::vector<Dimension> out{dimAt(x, 0), ctx.symbols().resolve(m)};
  if (!outputShape.empty()) {
    // The spatial dims, or (as onnxruntime accepts) the whole shape.
    if (outputShape.size() != *spatial && outputShape.size() != *spatial + 2)
      return errorf("attribute 'output_shape' has {} values for {} spatial axes",
                    outputShape.size(), *spatial);
    size_t off = outputShape.size() - *spatial;
    for (size_t i = 0; i < *spatial; ++i) out.push_back(Dimension(outputShape[off + i]));
    return factsOf(makeFact(t, ctx.symbols().resolve(PartialShape(std::move(out)))));
  }
  for (size_t i = 0; i < *spatial; ++i) {
    Dimension in = dimAt(x, 2 + i);
    int64_t s = win.strides[i];
    if (isSamePadding(win.autoPad)) {
      SF_ASSIGN(Dimension o, in * Dimension(s));
      out.push_back(o);
      continue;
    }
    const Dimension &k = ctx.symbols().resolve(win.kernel[i]);
    int64_t pads = win.pads[i] + win.pads[*spatial + i];
    // stride*in + (k - 1)*dilation + (output_padding + 1 - pads - stride)
    SF_ASSIGN(Dimension a, in * constDim(s));
    SF_ASSIGN(Dimension span, k * constDim(win.dilations[i]));
    SF_ASSIGN(Dimension ab, a + span);
    SF_ASSIGN(Dimension o, ab + constDim(outPad[i] + 1 - pads - s - win.dilations[i]));
    if (o.isStatic() && o.length() <= 0)
      return errorf("spatial axis {}: output size would be {} (input {}, pads {})", i, o, in, pads);
    o = o.nonNegative();
    out.push_back(o.isNamedExpr() || o.isStatic() ? o : Dimension::fromInterval(o.interval()));
  }
  return factsOf(makeFact(t, ctx.symbols().resolve(PartialShape(std::move(out)))));
}

// ---- pools ----

/// MaxPool, AveragePool, LpPool; `withIndices`: MaxPool's optional second output (the argmax
/// indices, i64, of output 0's shape).
Result<Facts> poolWith(InferContext &ctx, bool withIndices) {
  const Fact &x = ctx.input(0);
  SF_TRY(expectMinRank(x, 0, "X", 3));
  auto spatial = spatialRank(x, nullptr, ctx.attrs());
  std::vector<Fact> out;
  if (!spatial) {
    out.push_back(makeFact(x.type, PartialShape::dynamic()));
  } else {
    SF_ASSIGN(Window win, readWindow(ctx, *spatial, {}, true));
    win.pool = true;
    SF_ASSIGN(PartialShape s, windowShape(ctx, x, win, dimAt(x, 1)));
    out.push_back(makeFact(x.type, std::move(s)));
  }
  if (withIndices && ctx.numOutputs() > 1) out.push_back(makeFact(ElementType::I64, out[0].shape));
  return out;
}

InferFn inferPool(bool withIndices) {
  return [withIndices](InferContext &ctx) { return poolWith(ctx, withIndices); };
}

Result<Facts> inferGlobalPool(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(expectMinRank(x, 0, "X", 2));
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, PartialShape::dynamic()));
  std::vector<Dimension> dims{x.shape[0], x.shape[1]};
  dims.resize(x.shape.size(), Dimension(1));
  return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
}

Result<Facts> inferMaxRoiPool(InferContext &ctx) {
  const Fact &x = ctx.input(0), &rois = ctx.input(1);
  SF_TRY(expectRank(x, 0, "X", 4));
  SF_TRY(expectRank(rois, 1, "rois", 2));
  SF_ASSIGN(std::vector<int64_t> pooled, ctx.attrs().getInts("pooled_shape"));
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0)
    return errorf("attribute 'pooled_shape' must be two positive values, got {}",
                  toString(Shape(pooled)));
  if (rois.shape.rankIsStatic() && !ctx.mergeDims(rois.shape[1], Dimension(5)).ok())
    return errorf("input 1 (rois) must have 5 values per RoI (batch index, x1, y1, x2, y2), got {}",
                  rois);
  PartialShape s{dimAt(rois, 0), dimAt(x, 1), Dimension(pooled[0]), Dimension(pooled[1])};
  return factsOf(makeFact(x.type, ctx.symbols().resolve(std::move(s))));
}

Result<Facts> inferRoiAlign(InferContext &ctx) {
  const Fact &x = ctx.input(0), &rois = ctx.input(1), &idx = ctx.input(2);
  SF_TRY(expectRank(x, 0, "X", 4));
  SF_TRY(expectRank(rois, 1, "rois", 2));
  SF_TRY(expectRank(idx, 2, "batch_indices", 1));
  if (rois.type != kUnknownType && x.type != kUnknownType && rois.type != x.type)
    return errorf("input types differ: {} vs {}", x, rois);
  if (idx.type != kUnknownType && idx.type != ElementType::I64 && idx.type != ElementType::I32)
    return errorf("input 2 (batch_indices) must be an integer tensor, got {}", idx);
  if (rois.shape.rankIsStatic() && !ctx.mergeDims(rois.shape[1], Dimension(4)).ok())
    return errorf("input 1 (rois) must have 4 values per RoI (x1, y1, x2, y2), got {}", rois);
  SF_ASSIGN(Dimension n, requireEqual(ctx, dimAt(rois, 0), dimAt(idx, 0),
                                      "RoI counts differ: input 1 (rois) vs input 2 (batch_indices)",
                                      rois, idx));
  SF_ASSIGN(int64_t oh, ctx.attrs().getInt("output_height", 1));
  SF_ASSIGN(int64_t ow, ctx.attrs().getInt("output_width", 1));
  if (oh <= 0 || ow <= 0)
    return errorf("output_height and output_width must be positive, got {} and {}", oh, ow);
  PartialShape s{n, dimAt(x, 1), Dimension(oh), Dimension(ow)};
  return factsOf(makeFact(x.type, ctx.symbols().resolve(std::move(s))));
}

Result<Facts> inferMaxUnpool(InferContext &ctx) {
  const Fact &x = ctx.input(0), &idx = ctx.input(1);
  SF_TRY(expectMinRank(x, 0, "X", 3));
  if (idx.type != kUnknownType && idx.type != ElementType::I64)
    return errorf("input 1 (I) must be i64, got {}", idx);
  auto merged = ctx.mergeShapes(x.shape, idx.shape);
  if (!merged.ok())
    return errorf("input 1 (I) must have the shape of input 0 (X): {} vs {}", idx, x);
  PartialShape xs = *merged;
  if (ctx.hasInput(2)) {
    // The output shape is given as a tensor: its value, element by element.
    const Fact &os = ctx.input(2);
    SF_TRY(expectRank(os, 2, "output_shape", 1));
    if (os.type != kUnknownType && !isInteger(os.type))
      return errorf("input 2 (output_shape) must be an integer tensor, got {}", os);
    if (auto v = dimValues(os, kValueBudget)) {
      if (xs.rankIsStatic() && v->size() != xs.size())
        return errorf("input 2 (output_shape) has {} elements for input of rank {} ({} vs {})",
                      v->size(), xs.size(), os, x);
      std::vector<Dimension> dims;
      for (const Dimension &d : *v) {
        if (d.isStatic() && d.length() < 0)
          return errorf("input 2 (output_shape) has a negative element ({})", os);
        dims.push_back(d.nonNegative());
      }
      // (Found by fuzz_graph: an X of rank 0 with an empty output_shape read dims[0].)
      if (xs.rankIsStatic() && dims.size() >= 2) {
        SF_ASSIGN(dims[0], requireEqual(ctx, dims[0], xs[0], "batch sizes differ: output_shape vs X", os, x));
        SF_ASSIGN(dims[1], requireEqual(ctx, dims[1], xs[1], "channels differ: output_shape vs X", os, x));
      }
      return factsOf(makeFact(x.type, ctx.symbols().resolve(PartialShape(std::move(dims)))));
    }
    if (os.shape.rankIsStatic() && os.shape[0].isStatic()) {
      std::vector<Dimension> dims(os.shape[0].length());
      if (xs.rankIsStatic() && dims.size() != xs.size())
        return errorf("input 2 (output_shape) has {} elements for input of rank {} ({} vs {})",
                      dims.size(), xs.size(), os, x);
      if (xs.rankIsStatic() && dims.size() >= 2) dims[0] = xs[0], dims[1] = xs[1];
      return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
    }
    return factsOf(makeFact(x.type, xs.rankIsStatic() ? PartialShape::dynamic(xs.size())
                                                               : PartialShape::dynamic()));
  }
  auto spatial = spatialRank(makeFact(x.type, xs), nullptr, ctx.attrs());
  if (!spatial) return factsOf(makeFact(x.type, PartialShape::dynamic()));
  SF_ASSIGN(Window win, readWindow(ctx, *spatial, {}, true));
  Fact xf = makeFact(x.type, xs);
  std::vector<Dimension> out{dimAt(xf, 0), dimAt(xf, 1)};
  for (size_t i = 0; i < *spatial; ++i) {
    // (in - 1)*stride + kernel - pads
    Dimension in = dimAt(xf, 2 + i);
    SF_ASSIGN(Dimension a, in * constDim(win.strides[i]));
    SF_ASSIGN(Dimension o, a + constDim(win.kernel[i].length() - win.strides[i] - win.pads[i] -
                                        win.pads[*spatial + i]));
    if (o.isStatic() && o.length() <= 0)
      return errorf("spatial axis {}: output size would be {}", i, o);
    o = o.nonNegative();
    out.push_back(o.isNamedExpr() || o.isStatic() ? o : Dimension::fromInterval(o.interval()));
  }
  return factsOf(makeFact(x.type, PartialShape(std::move(out))));
}

} // namespace

// ---- costs (docs/COSTS.md) ----
namespace {

/// Conv-like: one MAC per output element and per weight of one output channel (W's dims after
/// the first: C/group and the kernel), and one add per output element for a bias.
Result<OpCost> convCost(const CostContext &ctx, size_t w, std::optional<size_t> bias) {
  OpCost c;
  const PartialShape &ws = ctx.input(w).shape;
  SF_ASSIGN(Dimension perOutput, productOf(ws, 1, ws.rankIsStatic() ? ws.size() : 0));
  if (!ws.rankIsStatic()) perOutput = Dimension::dynamic();
  Dimension out = elementsOf(ctx.output(0));
  SF_ASSIGN(Dimension macs, times(out, perOutput));
  SF_TRY(c.addMacs(macs));
  if (bias && ctx.hasInput(*bias)) SF_TRY(c.add(FlopKind::Add, out));
  return c;
}

} // namespace

Result<OpCost> costConv(const CostContext &ctx) { return convCost(ctx, 1, 2); }

namespace {

Result<OpCost> costConvInteger(const CostContext &ctx) { return convCost(ctx, 1, std::nullopt); }

/// QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): the integer convolution,
/// the bias, and a requantisation (a multiply and an add) per output element.
Result<OpCost> costQLinearConv(const CostContext &ctx) {
  SF_ASSIGN(OpCost c, convCost(ctx, 3, 8));
  Dimension out = elementsOf(ctx.output(0));
  SF_TRY(c.add(FlopKind::Mul, out));
  SF_TRY(c.add(FlopKind::Add, out));
  return c;
}

/// ConvTranspose scatters every input element onto M/group x kernel outputs: one MAC each.
Result<OpCost> costConvTranspose(const CostContext &ctx) {
  OpCost c;
  const PartialShape &ws = ctx.input(1).shape;
  SF_ASSIGN(Dimension perInput, productOf(ws, 1, ws.rankIsStatic() ? ws.size() : 0));
  if (!ws.rankIsStatic()) perInput = Dimension::dynamic();
  SF_ASSIGN(Dimension macs, times(elementsOf(ctx.input(0)), perInput));
  SF_TRY(c.addMacs(macs));
  if (ctx.hasInput(2)) SF_TRY(c.add(FlopKind::Add, elementsOf(ctx.output(0))));
  return c;
}

/// DeformConv: the convolution's MACs, and for every sampled input value (one per output
/// position, input channel and kernel position) a bilinear interpolation of 4 points: 4 MACs.
Result<OpCost> costDeformConv(const CostContext &ctx) {
  SF_ASSIGN(OpCost c, convCost(ctx, 1, 2));
  const PartialShape &x = ctx.input(0).shape, &ws = ctx.input(1).shape, &y = ctx.output(0).shape;
  if (!x.rankIsStatic() || !ws.rankIsStatic() || !y.rankIsStatic() || x.size() < 2 || y.size() < 2)
    return c;
  SF_ASSIGN(Dimension positions, productOf(y, 2, y.size()));
  SF_ASSIGN(Dimension kernel, productOf(ws, 2, ws.size()));
  SF_ASSIGN(Dimension samples, times(positions, kernel));
  SF_ASSIGN(samples, times(samples, x[0]));
  SF_ASSIGN(samples, times(samples, x[1]));
  SF_ASSIGN(Dimension interp, times(samples, Dimension(4)));
  SF_TRY(c.addMacs(interp));
  return c;
}

/// The window of a pool: the product of kernel_shape (unknown without it).
Dimension windowOf(const CostContext &ctx) {
  auto k = ctx.attrs().getInts("kernel_shape");
  if (!k.ok()) return Dimension::dynamic();
  int64_t p = 1;
  for (int64_t v : *k) {
    auto q = checkedMul(p, std::max<int64_t>(v, 0));
    if (!q) return Dimension::dynamic();
    p = *q;
  }
  return Dimension(p);
}

/// A pool: per output element, `perWindow` operations of kind `k` per window position, and
/// `perOutput` of kind `k2` (AveragePool's divide, LpPool's root).
CostFn costPool(FlopKind k, int64_t perWindow, FlopKind k2 = FlopKind::Div, int64_t perOutput = 0) {
  return [=](const CostContext &ctx) -> Result<OpCost> {
    OpCost c;
    Dimension out = elementsOf(ctx.output(0));
    SF_ASSIGN(Dimension w, times(windowOf(ctx), Dimension(perWindow)));
    SF_ASSIGN(Dimension n, times(out, w));
    SF_TRY(c.add(k, n));
    if (perOutput) {
      SF_ASSIGN(Dimension m, times(out, Dimension(perOutput)));
      SF_TRY(c.add(k2, m));
    }
    return c;
  };
}

/// LpPool: a power and an add per window element, a root per output element.
Result<OpCost> costLpPool(const CostContext &ctx) {
  return costSum(
      {costPool(FlopKind::Special, 1, FlopKind::Special, 1), costPool(FlopKind::Add, 1)})(ctx);
}

/// RoiAlign: per output element, sampling_ratio^2 samples (2^2 when adaptive: the count then
/// depends on the RoIs), each a 4-point bilinear interpolation (4 MACs), averaged or maxed.
Result<OpCost> costRoiAlign(const CostContext &ctx) {
  OpCost c;
  int64_t ratio = ctx.attrs().getInt("sampling_ratio", 0).valueOr(0);
  if (ratio <= 0 || ratio > 1024) ratio = 2;
  Dimension out = elementsOf(ctx.output(0));
  SF_ASSIGN(Dimension samples, times(out, Dimension(ratio * ratio)));
  SF_ASSIGN(Dimension macs, times(samples, Dimension(4)));
  SF_TRY(c.addMacs(macs));
  SF_TRY(c.add(FlopKind::Add, samples));
  return c;
}

} // namespace

void registerConvPoolOps(OpRegistry &r) {
  r.add({.name = "Conv", .infer = inferConv, .traits = {.takesActivation = true}, .refine = refineConv(false),
         .cost = costConv});
  r.add({.name = "ConvInteger", .infer = inferConvInteger, .cost = costConvInteger});
  r.add({.name = "QLinearConv", .infer = inferQLinearConv, .cost = costQLinearConv});
  r.add({.name = "ConvTranspose", .infer = inferConvTranspose, .refine = refineConv(true), .cost = costConvTranspose});
  r.add({.name = "DeformConv", .infer = inferDeformConv, .cost = costDeformConv});
  r.add({.name = "MaxPool", .infer = inferPool(true), .refine = refineChannelsFirst(), .cost = costPool(FlopKind::Compare, 1)});
  r.add({.name = "AveragePool",
         .infer = inferPool(false),
         .refine = refineChannelsFirst(),
         .cost = costPool(FlopKind::Add, 1, FlopKind::Div, 1)});
  r.add({.name = "LpPool", .infer = inferPool(false), .refine = refineChannelsFirst(), .cost = costLpPool});
  r.add({.name = "GlobalAveragePool",
         .infer = inferGlobalPool,
         .refine = refineChannelsFirst(),
         .cost = costSum({costPerInput(FlopKind::Add), costPerOutput(FlopKind::Div)})});
  r.add(
      {.name = "GlobalMaxPool", .infer = inferGlobalPool, .refine = refineChannelsFirst(), .cost = costPerInput(FlopKind::Compare)});
  r.add({.name = "GlobalLpPool",
         .infer = inferGlobalPool,
         .refine = refineChannelsFirst(),
         .cost = costSum({costPerInput(FlopKind::Special), costPerInput(FlopKind::Add),
                          costPerOutput(FlopKind::Special)})});
  // The bins of MaxRoiPool follow the RoIs (data): one compare per output element is the floor.
  r.add({.name = "MaxRoiPool", .infer = inferMaxRoiPool, .cost = costPerOutput(FlopKind::Compare)});
  r.add({.name = "RoiAlign", .infer = inferRoiAlign, .cost = costRoiAlign});
  r.add({.name = "MaxUnpool", .infer = inferMaxUnpool, .cost = costNone});
}

} // namespace sf
