// The window rules of the convolutions and the pools (conv_pool_window.h): the window
// attributes and the output size of each spatial axis.
//
// Output sizes follow the ONNX spec: floor((D + pads - ((K - 1)*dilation + 1)) / stride + 1), or
// ceil(D / stride) with SAME padding. A symbolic input gives a symbolic output
// ((H - 1)//2 + 1), and the requirement that the window fits (D + pads >= window) is recorded
// on D's symbol. With ceil_mode a window must start inside the input or its left padding
// (PyTorch's rule, and ONNX's since the reference of opset 19), which drops the last window
// when the stride outruns the kernel.
#include "conv_pool_window.h"

#include "shapeflow/ops/helpers.h"
#include "shapeflow/support/pool_length.h"

namespace sf::window_rules {

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

/// The output size of one spatial axis for a kernel known only as a symbol or a range: the same
/// formula in dimension arithmetic.
Result<Dimension> symbolicKernelDim(const Window &w, size_t i, const Dimension &in0,
                                    const std::string &where) {
  int64_t s = w.strides[i], d = w.dilations[i];
  int64_t pb = w.pads[i], pe = w.pads[w.spatial + i];
  const Dimension &k = w.kernel[i];
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

/// The input size of one axis where the window fits it (`shift`: pads minus the window): an
/// anonymous range cut to that part, an expression's symbol narrowed to it (a pool's window may
/// overhang by less than a stride).
Result<Dimension> fittingInput(InferContext &ctx, const Window &w, int64_t s, int64_t shift,
                               Dimension in, const auto &doesNotFit) {
  if (!in.isStatic() && in.hasUpperBound() && in.maxLength() + shift < 0)
    return doesNotFit(in);
  if (!in.expr() && !in.isStatic()) {
    // An anonymous range: keep the part where the window fits.
    in = Dimension::fromInterval({std::max(in.minLength(), -shift), in.maxLength()});
  } else if (in.expr() && !in.isStatic()) {
    // The window must fit: in + pads >= window, recorded on the input's symbol. A pool's window
    // may overhang by less than a stride (one output from its valid part, pooledLength), so
    // there in + pads >= window - (stride - 1).
    int64_t overhang = w.pool ? s - 1 : 0;
    SF_ASSIGN(Expr num, add(in.expr(), constant(shift)));
    auto fit = ctx.symbols().narrow(num, {-overhang, kInf});
    // (An overhanging window needs a non-empty input: at 0 it is the fitting rule's.)
    if (fit.ok() && overhang > 0 && in.interval().lo < 1 && shift < 0)
      fit = ctx.symbols().narrow(in.expr(), {std::min<int64_t>(1, -shift), kInf});
    if (!fit.ok())
      return doesNotFit(in);
    in = ctx.symbols().resolve(in);
    // (A size of 0, which an expression's bounds may not exclude, is left to the fitting rule.)
    if (overhang > 0 && std::max<int64_t>(in.interval().lo, 1) + shift < 0) {
      // Sizes where it overhangs give what the window's fitting size gives (1 output): the
      // formula below sees max(in, window - pads).
      SF_ASSIGN(Expr clamped, max(in.expr(), constant(-shift)));
      in = Dimension(clamped, sf::max(in.interval(), Interval::point(-shift)));
    }
  }
  return in;
}

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
  if (!k.isStatic()) return symbolicKernelDim(w, i, in0, where);
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
  SF_ASSIGN(Dimension in, fittingInput(ctx, w, s, *shift, in0, doesNotFit));
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

} // namespace sf::window_rules
