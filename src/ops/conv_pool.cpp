// Sliding-window ops: Conv (N-D, groups, dilations, strides, pads, auto_pad), ConvInteger,
// QLinearConv, ConvTranspose, DeformConv, the pools (MaxPool with Indices, AveragePool, LpPool,
// ceil_mode), the global pools, MaxRoiPool, RoiAlign and MaxUnpool.
//
// Output sizes follow seed 003: floor((D + pads - ((K - 1)*dilation + 1)) / stride + 1), or
// ceil(D / stride) with SAME padding. A symbolic input gives a symbolic output
// ((H - 1)//2 + 1), and the requirement that the window fits (D + pads >= window) is recorded
// on D's symbol. With ceil_mode a window must start inside the input or its left padding
// (PyTorch's rule, and ONNX's since the reference of opset 19), which drops the last window
// when the stride outruns the kernel.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"
#include "shapeflow/support/pool_length.h"
#include "shapeflow/support/window.h"
#include "shared_rules.h"

#include <numeric>

namespace sf {
namespace {

constexpr ElementType kUnknownType = ElementType::Undefined;


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

Dimension dimAt(const Fact &f, size_t axis) {
  return f.shape.rankIsStatic() && axis < f.shape.size() ? f.shape[axis] : Dimension();
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

// ---- window attributes ----

struct Window {
  size_t spatial = 0;
  std::vector<Dimension> kernel; // from kernel_shape or the weight; dynamic when unknown
  std::vector<int64_t> strides, dilations, pads; // pads: begins then ends
  AutoPad autoPad = AutoPad::NotSet;
  bool ceilMode = false;
  bool pool = false; // pooling ops: a window may overhang a small input (pooledLength)
};

/// The number of spatial axes: from the data's rank, else the weight's, else the attributes.
std::optional<size_t> spatialRank(const Fact &x, const Fact *w, const Attributes &attrs) {
  if (x.shape.rankIsStatic() && x.shape.size() >= 2) return x.shape.size() - 2;
  if (w && w->shape.rankIsStatic() && w->shape.size() >= 2) return w->shape.size() - 2;
  for (const char *name : {"kernel_shape", "strides", "dilations"}) {
    auto v = attrs.getInts(name, {});
    if (v.ok() && !v->empty()) return v->size();
  }
  auto pads = attrs.getInts("pads", {});
  if (pads.ok() && !pads->empty() && pads->size() % 2 == 0) return pads->size() / 2;
  return std::nullopt;
}

Result<std::vector<int64_t>> intsOfSize(const Attributes &attrs, const char *name, size_t n,
                                        int64_t dflt, bool positive) {
  SF_ASSIGN(std::vector<int64_t> v, attrs.getInts(name, {}));
  if (v.empty()) return std::vector<int64_t>(n, dflt);
  if (v.size() != n) return errorf("attribute '{}' has {} values, expected {}", name, v.size(), n);
  for (int64_t x : v)
    if (positive ? x <= 0 : x < 0)
      return errorf("attribute '{}' has value {}, expected {}", name, x,
                    (positive ? "> 0" : ">= 0"));
  return v;
}

/// Reads kernel_shape, strides, dilations, pads, auto_pad (and ceil_mode for pools) for
/// `spatial` axes. `weightKernel` (possibly empty) are the weight's spatial dims: an explicit
/// kernel_shape must agree with them.
Result<Window> readWindow(InferContext &ctx, size_t spatial,
                          const std::vector<Dimension> &weightKernel, bool kernelRequired) {
  const Attributes &attrs = ctx.attrs();
  Window w;
  w.spatial = spatial;
  SF_ASSIGN(std::vector<int64_t> ks, attrs.getInts("kernel_shape", {}));
  if (ks.empty() && kernelRequired && !attrs.has("kernel_shape"))
    return makeError("attribute 'kernel_shape' is missing");
  if (!ks.empty() || (kernelRequired && attrs.has("kernel_shape"))) {
    if (ks.size() != spatial)
      return errorf("attribute 'kernel_shape' has {} values for {} spatial axes", ks.size(),
                    spatial);
    for (int64_t k : ks)
      if (k <= 0) return errorf("attribute 'kernel_shape' has value {}, expected > 0", k);
    for (size_t i = 0; i < spatial; ++i) {
      Dimension k(ks[i]);
      if (i < weightKernel.size()) {
        auto m = ctx.mergeDims(weightKernel[i], k);
        if (!m.ok())
          return errorf("attribute 'kernel_shape' {} disagrees with the weight's spatial dims {}",
                        toString(Shape(ks)), PartialShape(weightKernel));
      }
      w.kernel.push_back(k);
    }
  } else {
    w.kernel = weightKernel;
    w.kernel.resize(spatial);
  }
  SF_ASSIGN(w.strides, intsOfSize(attrs, "strides", spatial, 1, true));
  SF_ASSIGN(w.dilations, intsOfSize(attrs, "dilations", spatial, 1, true));
  SF_ASSIGN(w.pads, intsOfSize(attrs, "pads", 2 * spatial, 0, false));
  SF_ASSIGN(std::string ap, attrs.getString("auto_pad", "NOTSET"));
  auto autoPad = parseAutoPad(ap);
  if (!autoPad)
    return errorf("attribute 'auto_pad' is '{}', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                  ap);
  w.autoPad = *autoPad;
  if (w.autoPad != AutoPad::NotSet) std::fill(w.pads.begin(), w.pads.end(), 0);
  SF_ASSIGN(int64_t ceil, attrs.getInt("ceil_mode", 0));
  w.ceilMode = ceil != 0;
  return w;
}

Dimension constDim(int64_t v) { return Dimension::constantValue(v); }

/// The output size of one spatial axis of a sliding window.
Result<Dimension> windowDim(InferContext &ctx, const Window &w, size_t i, const Dimension &in0) {
  int64_t s = w.strides[i], d = w.dilations[i];
  int64_t pb = w.pads[i], pe = w.pads[w.spatial + i];
  std::string where = "spatial axis " + std::to_string(i) + ": ";
  if (isSamePadding(w.autoPad)) {
    // At a known size the number the kernels compute (support/window.h).
    if (in0.isStatic()) return Dimension(sameOutputLength(in0.length(), s));
    SF_ASSIGN(Dimension out, sameOutputDim(in0, s));
    return out.nonNegative();
  }
  const Dimension &k = w.kernel[i];
  if (!k.isStatic()) {
    // A kernel known only as a symbol or a range: the same formula in dimension arithmetic.
    auto num = [&]() -> Result<Dimension> {
      SF_ASSIGN(Dimension span, k * constDim(d));
      SF_ASSIGN(Dimension n, in0 + constDim(pb + pe - 1 + d));
      return n - span;
    }();
    if (!num.ok()) return Dimension();
    if (num->isStatic() && num->length() < 0)
      return errorf("{}the window does not fit input dimension {}", where, in0);
    SF_ASSIGN(Dimension q, w.ceilMode ? num->nonNegative().ceilDiv(s) : num->nonNegative().floorDiv(s));
    SF_ASSIGN(Dimension out, q + Dimension(1));
    return out.isNamedExpr() || out.isStatic() ? out : Dimension::fromInterval(out.interval());
  }
  int64_t kk = k.length();
  auto span = checkedMul(d, kk - 1);
  auto shift = span ? checkedSub(pb + pe, *span + 1) : std::nullopt;
  if (!shift) return errorf("{}window size overflows int64", where);
  auto doesNotFit = [&](const Dimension &size) {
    return errorf("{}a window of {} (padded by {}) does not fit input dimension {}", where, *span + 1,
                  pb + pe, size);
  };
  if (w.pool && in0.isStatic()) {
    // At a known size the runtimes' edge arithmetic, which lets a window overhang the input.
    auto out = pooledLength(in0.length(), *span + 1, s, pb, pe, w.ceilMode);
    if (!out)
      return doesNotFit(in0);
    return Dimension(*out);
  }
  if (w.pool && !in0.isStatic() && in0.hasUpperBound() && in0.maxLength() + *shift < 0) {
    // Every size in the range is below the window: outputs from partial windows (0 or 1).
    auto hi = pooledLength(in0.maxLength(), *span + 1, s, pb, pe, w.ceilMode);
    if (!hi)
      return doesNotFit(in0);
    auto lo = pooledLength(std::max<int64_t>(in0.minLength(), 0), *span + 1, s, pb, pe, w.ceilMode);
    return Dimension::fromInterval({lo ? *lo : 0, *hi});
  }
  Dimension in = in0;
  if (!in.isStatic() && in.hasUpperBound() && in.maxLength() + *shift < 0)
    return doesNotFit(in);
  if (!in.expr() && !in.isStatic()) {
    // An anonymous range: keep the part where the window fits.
    in = Dimension::fromInterval({std::max(in.minLength(), -*shift), in.maxLength()});
  } else if (in.expr() && !in.isStatic()) {
    // The window must fit: in + pads >= window, recorded on the input's symbol. A pool's window
    // may overhang by less than a stride (one output from its valid part, pooledLength), so
    // there in + pads >= window - (stride - 1).
    int64_t overhang = w.pool ? s - 1 : 0;
    SF_ASSIGN(Expr num, add(in.expr(), constant(*shift)));
    auto fit = ctx.symbols().narrow(num, {-overhang, kInf});
    // (An overhanging window needs a non-empty input: at 0 it is the fitting rule's.)
    if (fit.ok() && overhang > 0 && in.interval().lo < 1 && *shift < 0)
      fit = ctx.symbols().narrow(in.expr(), {std::min<int64_t>(1, -*shift), kInf});
    if (!fit.ok())
      return doesNotFit(in);
    in = ctx.symbols().resolve(in);
    // (A size of 0, which an expression's bounds may not exclude, is left to the fitting rule.)
    if (overhang > 0 && std::max<int64_t>(in.interval().lo, 1) + *shift < 0) {
      // Sizes where it overhangs give what the window's fitting size gives (1 output): the
      // formula below sees max(in, window - pads).
      SF_ASSIGN(Expr clamped, max(in.expr(), constant(-*shift)));
      in = Dimension(clamped, sf::max(in.interval(), Interval::point(-*shift)));
    }
  }
  auto out = windowOutputDim(in, kk, s, d, pb, pe, w.ceilMode);
  if (!out.ok()) return makeError(where + out.error().message);
  if (w.ceilMode && pe - (*span + 1) + s > 0) {
    // The ceil would add a window starting in the right padding: the last window starts at
    // most at in + pb - 1, so out = (in + pb - 1)//s + 1.
    SF_ASSIGN(Dimension n, in + constDim(pb - 1));
    SF_ASSIGN(Dimension q, n.floorDiv(s));
    SF_ASSIGN(Dimension o, q + Dimension(1));
    return o.nonNegative();
  }
  return out->nonNegative();
}

/// [N, channels, out spatial...] for data `x` and the window.
Result<PartialShape> windowShape(InferContext &ctx, const Fact &x, const Window &w,
                                 const Dimension &channels) {
  std::vector<Dimension> out{dimAt(x, 0), channels};
  for (size_t i = 0; i < w.spatial; ++i) {
    if (!x.shape.rankIsStatic()) {
      out.push_back(Dimension());
      continue;
    }
    SF_ASSIGN(Dimension o, windowDim(ctx, w, i, x.shape[2 + i]));
    out.push_back(o);
  }
  return ctx.symbols().resolve(PartialShape(std::move(out)));
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
