// Kernels of the resampling ops (src/ops/resize.cpp): Resize (opsets 10-19), Upsample, Col2Im,
// CenterCropPad; GridSample and AffineGrid in grid_sample.cpp.
// Resize: nearest, n-linear and cubic interpolation, every coordinate transformation mode, roi for
// tf_crop_and_resize with its extrapolation value, exclude_outside, axes and
// keep_aspect_ratio_policy. Separable: one axis at a time, each output index a few weighted taps
// of the input axis (or outside the input: the extrapolation value). With opset 18's antialias =
// 1, linear and cubic downscaling stretch the filter by 1 / scale so that every input element
// under the output's footprint contributes (the weights normalised to 1, edge elements repeated
// past the ends, as in ONNX's reference).
#include "../kernel_util.h"
#include "bounds.h"
#include "grid_sample.h"
#include "conv_pool.h"
#include "strides.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace sf::eval::detail {
namespace {

struct Taps {
  bool outside = false;
  std::vector<std::pair<int64_t, double>> taps; // input index, weight
};

struct AxisPlan {
  int64_t in = 0, out = 0;
  double scale = 1, roiStart = 0, roiEnd = 1;
  /// The resized length the coordinate transformation uses: in * scale when scales are given
  /// (not rounded, as the spec's reference computes it), else the size.
  double length = 0;
};

struct Options {
  std::string mode = "nearest", transform = "half_pixel", nearest = "round_prefer_floor";
  double cubicA = -0.75, extrapolation = 0;
  bool excludeOutside = false, antialias = false;
};

/// The cubic convolution kernel with coefficient A at distance d.
double cubicKernel(double A, double d) {
  d = std::abs(d);
  if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
  if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  return 0.0;
}

/// The coordinate in X of output index x along an axis, in float arithmetic as onnxruntime
/// computes it (scale, lengths and roi rounded to float first): a coordinate that is a whole
/// number in exact arithmetic (17 / 1.7) can fall either side of it, and floor and the nearest
/// modes then pick the row onnxruntime (and PyTorch) picks.
double original(const Options &o, const AxisPlan &a, int64_t x) {
  const float s = float(a.scale), xf = float(x), in = float(a.in), length = float(a.length);
  const float start = float(a.roiStart), end = float(a.roiEnd);
  const std::string &t = o.transform;
  if (t == "half_pixel") return (xf + 0.5f) / s - 0.5f;
  if (t == "half_pixel_symmetric") {
    const float adjustment = float(a.out) / (s * in); // 1 unless the size was rounded
    const float offset = in / 2 * (1 - adjustment);
    return float(double(offset) + (double(xf) + 0.5) / double(s) - 0.5);
  }
  if (t == "pytorch_half_pixel") return length > 1 ? (xf + 0.5f) / s - 0.5f : 0.0f;
  if (t == "align_corners") return length == 1 ? 0.0f : xf * (in - 1) / (length - 1);
  if (t == "asymmetric") return xf / s;
  if (t == "tf_half_pixel_for_nn") return (xf + 0.5f) / s;
  if (t == "tf_crop_and_resize")
    return length > 1 ? start * (in - 1) + xf * (end - start) * (in - 1) / (length - 1)
                      : float(0.5 * double(start + end) * double(in - 1));
  return xf / s;
}

Taps tapsFor(const Options &o, const AxisPlan &a, int64_t x) {
  Taps r;
  double xo = original(o, a, x);
  if (o.transform == "tf_crop_and_resize" && (xo < 0 || xo > double(a.in - 1))) {
    r.outside = true;
    return r;
  }
  auto clampIdx = [&](int64_t i) { return std::clamp<int64_t>(i, 0, a.in - 1); };
  // An axis the resize keeps reads itself, whatever the mode and transform (onnxruntime's
  // kernels: tf_half_pixel_for_nn would otherwise shift it by half an element); but for
  // tf_crop_and_resize, whose roi crops it (ONNX's reference; onnxruntime ignores the roi there).
  if (a.scale == 1 && a.out == a.in && o.transform != "tf_crop_and_resize") {
    r.taps.push_back({x, 1.0});
    return r;
  }
  if (o.mode == "nearest") {
    double v;
    if (o.nearest == "simple") v = a.scale < 1 ? std::ceil(xo) : std::floor(xo); // Upsample, Resize-10
    else if (o.nearest == "round_prefer_ceil") v = std::floor(xo + 0.5);
    else if (o.nearest == "floor") v = std::floor(xo);
    else if (o.nearest == "ceil") v = std::ceil(xo);
    else v = std::ceil(xo - 0.5); // round_prefer_floor
    r.taps.push_back({clampIdx(int64_t(v)), 1.0});
    return r;
  }
  int64_t f = int64_t(std::floor(xo));
  double t = xo - double(f);
  if (o.mode == "linear" && !o.antialias) {
    r.taps.push_back({clampIdx(f), 1 - t});
    r.taps.push_back({clampIdx(f + 1), t});
    return r;
  }
  // The kernel (cubic, or with antialiasing linear too) at every input index within its reach
  // of xo. Antialiasing stretches it by 1 / min(scale, 1) (opset 18; ONNX's reference), so that
  // every input element under a downscaled output's footprint contributes, and normalises the
  // weights. The reach is about 2 / scale taps either side, and an output exists only when
  // in * scale >= 1, so one axis has about 4 * in taps at most.
  double stretch = o.antialias ? std::min(a.scale, 1.0) : 1.0;
  double support = o.mode == "linear" ? 1.0 : 2.0;
  int64_t reach = int64_t(std::ceil(support / stretch)); // taps f - reach + 1 .. f + reach
  r.taps.reserve(size_t(2 * reach));
  double sum = 0;
  for (int64_t k = 1 - reach; k <= reach; ++k) {
    int64_t i = f + k;
    double d = (double(k) - t) * stretch;
    double wk = o.mode == "linear" ? std::max(0.0, 1 - std::abs(d)) : cubicKernel(o.cubicA, d);
    if (o.excludeOutside && (i < 0 || i >= a.in)) wk = 0;
    r.taps.push_back({clampIdx(i), wk});
    sum += wk;
  }
  if ((o.antialias || o.excludeOutside) && sum != 0)
    for (auto &p : r.taps) p.second /= sum;
  return r;
}

/// Resamples `data` (shape `s`) along `axis` to `plan.out`, into `out` (s's elements with
/// s[axis] = plan.out), in T (the taps' weights rounded to T).
template <class T>
void resampleAxis(const T *data, const Shape &s, size_t axis, const Options &o, const AxisPlan &plan, T *out) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  if (outer == 0 || plan.out == 0 || inner == 0) return; // nothing to make (or to read)
  // Every output index's taps in flat arrays (output x's are first[x] .. first[x + 1]; an output
  // outside the input has none and takes the extrapolation value).
  std::vector<int64_t> first(size_t(plan.out) + 1, 0), index;
  std::vector<T> weight;
  std::vector<bool> outside(static_cast<size_t>(plan.out));
  for (int64_t x = 0; x < plan.out; ++x) {
    Taps t = tapsFor(o, plan, x);
    outside[size_t(x)] = t.outside;
    for (const auto &[i, wgt] : t.taps) index.push_back(i), weight.push_back(T(wgt));
    first[size_t(x) + 1] = int64_t(index.size());
  }
  const T extrapolation = T(o.extrapolation);
  for (int64_t u = 0; u < outer; ++u) {
    const T *in = data + u * plan.in * inner;
    if (inner == 1) { // the last axis: each output a short sum along the input's row
      T *dst = out + u * plan.out;
      for (int64_t x = 0; x < plan.out; ++x) {
        T acc = 0;
        for (int64_t k = first[size_t(x)]; k < first[size_t(x) + 1]; ++k) acc += weight[size_t(k)] * in[index[size_t(k)]];
        dst[x] = outside[size_t(x)] ? extrapolation : acc;
      }
      continue;
    }
    for (int64_t x = 0; x < plan.out; ++x) {
      T *dst = out + (u * plan.out + x) * inner;
      if (outside[size_t(x)]) {
        std::fill(dst, dst + inner, extrapolation);
        continue;
      }
      std::fill(dst, dst + inner, T(0));
      for (int64_t k = first[size_t(x)]; k < first[size_t(x) + 1]; ++k) {
        const T *src = in + index[size_t(k)] * inner;
        const T wgt = weight[size_t(k)];
        for (int64_t v = 0; v < inner; ++v) dst[v] += wgt * src[v];
      }
    }
  }
}

/// The order in which to resample `axes` of x (shape `x`) for the least work: each pass costs its
/// output's elements times its taps, four times that along the last axis (a gather per output,
/// where the other axes add whole rows). Upsampling both axes of an image so takes the columns
/// first (the gathers, on the small input) and the rows last (as whole rows).
std::vector<size_t> cheapestOrder(std::vector<size_t> axes, const Shape &x, const Options &o,
                                  const std::vector<AxisPlan> &plans) {
  auto taps = [&](const AxisPlan &p) {
    double reach = o.mode == "nearest" ? 1.0 : o.mode == "linear" ? 2.0 : 4.0;
    return o.antialias && o.mode != "nearest" ? reach / std::max(std::min(p.scale, 1.0), 1e-3) : reach;
  };
  auto cost = [&](const std::vector<size_t> &order) {
    Shape s = x;
    double c = 0;
    for (size_t d : order) {
      bool last = true;
      for (size_t k = d + 1; k < s.size(); ++k) last = last && s[k] == 1;
      s[d] = plans[d].out;
      double elements = 1;
      for (int64_t v : s) elements *= double(v);
      c += elements * taps(plans[d]) * (last ? 4.0 : 1.0);
    }
    return c;
  };
  std::sort(axes.begin(), axes.end());
  if (axes.size() > 6) return axes; // 720 orders at most are weighed; beyond, the axes' own
  std::vector<size_t> best = axes;
  double bestCost = cost(axes);
  while (std::next_permutation(axes.begin(), axes.end()))
    if (double c = cost(axes); c < bestCost) best = axes, bestCost = c;
  return best;
}

/// Resize's and Upsample's attributes (Upsample and opsets before 11: asymmetric; nearest
/// truncates, or takes the ceiling on a shrinking axis).
Result<Options> resizeOptions(EvalContext &ctx, bool upsample) {
  Options o;
  SF_ASSIGN(o.mode, ctx.attrs().getString("mode", "nearest"));
  bool legacy = upsample || ctx.opset() < 11;
  if (legacy) {
    // onnxruntime's nearest pixel before opset 11: the coordinate truncated, or its ceiling
    // where the axis shrinks.
    o.transform = "asymmetric";
    o.nearest = "simple";
    if (o.mode == "bilinear") o.mode = "linear";
  } else {
    SF_ASSIGN(o.transform, ctx.attrs().getString("coordinate_transformation_mode", "half_pixel"));
    SF_ASSIGN(o.nearest, ctx.attrs().getString("nearest_mode", "round_prefer_floor"));
    SF_ASSIGN(o.cubicA, ctx.attrs().getFloat("cubic_coeff_a", -0.75));
    SF_ASSIGN(o.extrapolation, ctx.attrs().getFloat("extrapolation_value", 0.0));
    SF_ASSIGN(int64_t ex, ctx.attrs().getInt("exclude_outside", 0));
    o.excludeOutside = ex != 0;
    SF_ASSIGN(int64_t aa, ctx.attrs().getInt("antialias", 0));
    o.antialias = aa != 0 && o.mode != "nearest"; // nearest ignores it
  }
  if (o.mode != "nearest" && o.mode != "linear" && o.mode != "cubic") return errorf("mode '{}'", o.mode);
  return o;
}

/// What a Resize is given: the axes it resizes (all by default, made non-negative), and for
/// them scales or sizes, and roi.
struct ResizeInputs {
  std::vector<int64_t> axes;
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::vector<double> roi;
};

Result<ResizeInputs> resizeInputs(EvalContext &ctx, bool upsample, size_t r) {
  ResizeInputs in;
  std::vector<int64_t> &axes = in.axes;
  if (ctx.attrs().has("axes")) {
    SF_ASSIGN(axes, ctx.attrs().getInts("axes"));
  }
  if (axes.empty())
    for (size_t d = 0; d < r; ++d) axes.push_back(int64_t(d));
  for (int64_t &a : axes) {
    SF_ASSIGN(size_t d, normAxis(a, r));
    a = int64_t(d);
  }
  if (upsample || ctx.opset() < 10) {
    if (ctx.numInputs() > 1 && ctx.hasInput(1)) {
      SF_ASSIGN(in.scales, doubles(ctx.input(1)));
    } else {
      SF_ASSIGN(in.scales, ctx.attrs().getFloats("scales"));
    }
  } else if (ctx.opset() < 11) {
    SF_ASSIGN(in.scales, doubles(ctx.input(1)));
  } else {
    if (ctx.hasInput(1)) {
      SF_ASSIGN(in.roi, doubles(ctx.input(1)));
    }
    if (ctx.hasInput(2)) {
      SF_ASSIGN(in.scales, doubles(ctx.input(2)));
    }
    if (in.scales.empty() && ctx.hasInput(3)) {
      SF_ASSIGN(in.sizes, ints(ctx.input(3)));
    }
    if (in.scales.empty() && in.sizes.empty()) return errorf("neither scales nor sizes is given");
  }
  return in;
}

/// Each axis's plan from the scales, or from the sizes and keep_aspect_ratio_policy; roi for
/// tf_crop_and_resize.
Result<std::vector<AxisPlan>> axisPlans(EvalContext &ctx, const Shape &x, const Options &o, const ResizeInputs &in) {
  const std::vector<int64_t> &axes = in.axes, &sizes = in.sizes;
  const std::vector<double> &scales = in.scales, &roi = in.roi;
  size_t r = x.size();
  std::vector<AxisPlan> plans(r);
  for (size_t d = 0; d < r; ++d) plans[d] = {x[d], x[d], 1.0, 0, 1, double(x[d])};
  size_t count = scales.empty() ? sizes.size() : scales.size();
  if (count != axes.size()) return errorf("{} scales or sizes for {} axes", count, axes.size());
  if (!scales.empty()) {
    for (size_t k = 0; k < axes.size(); ++k) {
      AxisPlan &p = plans[size_t(axes[k])];
      if (!(scales[k] > 0) || !std::isfinite(scales[k]))
        return errorf("scale {} is not a positive number", scales[k]);
      if (double(p.in) * scales[k] >= 0x1p62)
        return errorf("scale {} makes axis {} of length {} too long", scales[k], axes[k], p.in);
      p.scale = scales[k];
      // In float, as onnxruntime (and the shape rule) compute it: 10 * 2.3f is 23 in float and
      // 22.99... in double.
      p.out = int64_t(std::floor(double(float(p.in) * float(scales[k]))));
      p.length = double(p.in) * scales[k];
    }
  } else {
    SF_ASSIGN(std::string policy, ctx.attrs().getString("keep_aspect_ratio_policy", "stretch"));
    double common = policy == "not_larger" ? INFINITY : 0;
    for (size_t k = 0; k < axes.size(); ++k) {
      double s = double(sizes[k]) / double(plans[size_t(axes[k])].in);
      common = policy == "not_larger" ? std::min(common, s) : std::max(common, s);
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      AxisPlan &p = plans[size_t(axes[k])];
      if (policy == "stretch") {
        p.out = sizes[k];
        p.scale = double(sizes[k]) / double(p.in);
        p.length = double(p.out);
      } else {
        p.scale = common;
        double length = std::round(common * double(p.in));
        if (!(length >= 0) || length >= 0x1p62)
          return errorf("keep_aspect_ratio_policy '{}' makes axis {} of length {} {} long", policy,
                        axes[k], p.in, length);
        p.out = int64_t(length);
        p.length = double(p.out);
      }
    }
  }
  if (o.transform == "tf_crop_and_resize") {
    if (roi.size() != 2 * axes.size()) return errorf("roi has {} elements for {} axes", roi.size(), axes.size());
    for (size_t k = 0; k < axes.size(); ++k) {
      plans[size_t(axes[k])].roiStart = roi[k];
      plans[size_t(axes[k])].roiEnd = roi[k + axes.size()];
    }
  }
  return plans;
}

/// X (shape `s`, plain) resampled along `axes` (in that order) into `y`, in T: each pass reads X
/// or the previous pass's elements, the last writes y (no axis: X copied).
template <class T>
void resampleAxes(const T *x, Shape s, const std::vector<size_t> &axes, const Options &o,
                  const std::vector<AxisPlan> &plans, T *y) {
  if (axes.empty()) return void(std::copy(x, x + countOf(s), y));
  const T *cur = x;
  std::vector<T> buffers[2];
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t d = axes[i];
    Shape next = s;
    next[d] = plans[d].out;
    T *out = y;
    if (i + 1 < axes.size()) {
      buffers[i % 2].resize(size_t(countOf(next)));
      out = buffers[i % 2].data();
    }
    resampleAxis(cur, s, d, o, plans[d], out);
    cur = out, s = next;
  }
}

Result<void> resample(EvalContext &ctx, bool upsample, const Options &o) {
  const Tensor &x = ctx.input(0);
  size_t r = x.shape().size();
  SF_ASSIGN(ResizeInputs in, resizeInputs(ctx, upsample, r));
  SF_ASSIGN(std::vector<AxisPlan> plans, axisPlans(ctx, x.shape(), o, in));
  Shape outShape;
  for (const AxisPlan &p : plans) outShape.push_back(p.out);
  SF_TRY(ctx.admit(x.type(), outShape));
  // An axis whose length and scale stay (a Resize to a skip connection's own sizes) is kept as it
  // is where the transform maps each index to itself: every transform but tf_crop_and_resize
  // (its roi) and tf_half_pixel_for_nn (x + 0.5, which nearest's ceil modes and the filters
  // sample otherwise). Every axis kept: X itself, shared (in its layout, where the executor keeps
  // X and Y in the same one).
  auto identity = [&](const AxisPlan &p) {
    return p.in == p.out && p.scale == 1.0 && o.transform != "tf_crop_and_resize" &&
           o.transform != "tf_half_pixel_for_nn";
  };
  const Layout in4 = ctx.inputLayout(), out4 = ctx.outputLayout();
  const bool allKept = std::all_of(plans.begin(), plans.end(), identity);
  if (allKept && in4 == out4) return ctx.setOutput(0, x);
  std::vector<size_t> axes;
  for (size_t d = 0; d < r; ++d)
    if (!identity(plans[d])) axes.push_back(d);
  // An output without elements is made without reading X; else an empty axis has nothing to
  // sample a longer one from.
  Shape s = x.shape();
  if (countOf(outShape) == 0) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), outShape, {}));
    return ctx.setOutput(0, std::move(t));
  }
  for (size_t d : axes)
    if (plans[d].in == 0)
      return errorf("axis {} of X {} is empty and cannot be resized to {}", d, shapeText(x.shape()), plans[d].out);
  if (x.type() == ElementType::F32) {
    // In float (as onnxruntime), the axes in the order that makes the least work (the same filter,
    // rounded otherwise). X and Y may be kept in a channel layout (the executor's plan, as for a
    // pooling): where both are in the same one and only the spatial axes change, the passes run
    // on the layout's own axes ([N, C/B, H, W, B] or [N, H, W, C]); otherwise X is read plain and
    // Y moved into its layout after.
    Elements<float> xs(x);
    Output<float> y(ctx, ElementType::F32, outShape, 0);
    SF_ASSIGN(float *p, y.makeForOverwrite());
    const bool spatial = r == 4 && identity(plans[0]) && identity(plans[1]);
    if (in4 != Layout::Plain && in4 == out4 && spatial) {
      const int64_t b = channelBlock(in4), n = s[0], c = s[1];
      // The layout's axes and which of X's each is (-1: the block's lanes).
      const std::vector<int> from = b ? std::vector<int>{0, 1, 2, 3, -1} : std::vector<int>{0, 2, 3, 1};
      if (b && c % b != 0) return errorf("X {} kept in blocks of {}", shapeText(x.shape()), b);
      Shape view = b ? Shape{n, c / b, s[2], s[3], b} : Shape{n, s[2], s[3], c};
      std::vector<AxisPlan> viewPlans(view.size());
      std::vector<size_t> viewAxes;
      for (size_t a = 0; a < view.size(); ++a) {
        if (from[a] < 0 || !std::count(axes.begin(), axes.end(), size_t(from[a]))) continue;
        viewPlans[a] = plans[size_t(from[a])];
        viewAxes.push_back(a);
      }
      resampleAxes(xs.data(), view, cheapestOrder(viewAxes, view, o, viewPlans), o, viewPlans, p);
      return y.finish(0);
    }
    if ((in4 != Layout::Plain || out4 != Layout::Plain) && r != 4)
      return errorf("X {} kept in a channel layout", shapeText(x.shape()));
    std::vector<float> plainX;
    const float *xp = xs.data();
    if (in4 != Layout::Plain) {
      SF_ASSIGN(xp, plainInput(ctx, xs.data(), s[0], s[1], s[2] * s[3], 2, plainX));
    }
    resampleAxes(xp, s, cheapestOrder(axes, s, o, plans), o, plans, p);
    if (out4 != Layout::Plain) SF_TRY(toOutputLayout(ctx, p, outShape[0], outShape[1], outShape[2] * outShape[3], 2));
    return y.finish(0);
  }
  if (in4 != Layout::Plain || out4 != Layout::Plain)
    return errorf("a {} tensor kept in a channel layout", shortName(x.type()));
  // The other types in double in the axes' order, integers rounded.
  SF_ASSIGN(std::vector<double> data, doubles(x));
  std::vector<double> out(size_t(countOf(outShape)));
  resampleAxes(data.data(), s, axes, o, plans, out.data());
  if (isInteger(x.type()))
    for (double &v : out) v = std::round(v);
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), outShape, out));
  return ctx.setOutput(0, std::move(t));
}

/// Resize, and what it proves of an f32 output (EvalContext::inputBound): nearest copies elements
/// of X, linear (with antialiasing or exclude_outside too: non-negative weights divided by their
/// sum) weighs each output as a convex combination of them, so X's bound carries over, with room
/// for the rounding of the float weights and sums, and tf_crop_and_resize's extrapolation value
/// beside it. Cubic's negative taps overshoot: no bound.
Result<void> resize(EvalContext &ctx, bool upsample) {
  SF_ASSIGN(Options o, resizeOptions(ctx, upsample));
  SF_TRY(resample(ctx, upsample, o));
  const Tensor &x = ctx.input(0);
  if (x.type() == ElementType::F32 && o.mode != "cubic" && x.elementCount() > 0) {
    double b = ctx.inputBound(0);
    if (o.transform == "tf_crop_and_resize") // NaN or infinity as the value: no bound
      b = std::isfinite(o.extrapolation) ? std::max(b, std::fabs(o.extrapolation)) : INFINITY;
    ctx.setOutputBound(0, asBound(b * (1 + 1e-3)));
  }
  return success();
}

/// Col2Im: the columns (N, C * prod(block), L) summed back into images (N, C, image...), each
/// column element at its block position's place (strides, pads, dilations as a convolution's).
Result<void> col2Im(EvalContext &ctx) {
  const Tensor &in = ctx.input(0);
  SF_ASSIGN(auto image, ints(ctx.input(1)));
  SF_ASSIGN(auto block, ints(ctx.input(2)));
  const size_t k = image.size();
  if (k < 1 || block.size() != k || in.shape().size() != 3)
    return errorf("input {} with image_shape of {} and block_shape of {} values", shapeText(in.shape()), k, block.size());
  SF_ASSIGN(auto strides, ctx.attrs().getInts("strides", std::vector<int64_t>(k, 1)));
  SF_ASSIGN(auto dilations, ctx.attrs().getInts("dilations", std::vector<int64_t>(k, 1)));
  SF_ASSIGN(auto pads, ctx.attrs().getInts("pads", std::vector<int64_t>(2 * k, 0)));
  if (strides.size() != k || dilations.size() != k || pads.size() != 2 * k)
    return errorf("strides, dilations and pads for {} spatial axes", k);
  int64_t taps = 1, positions = 1;
  std::vector<int64_t> blocks(k);
  for (size_t d = 0; d < k; ++d) {
    if (block[d] <= 0 || image[d] < 0 || strides[d] <= 0 || dilations[d] <= 0) return errorf("a block, image size, stride or dilation out of range");
    taps *= block[d];
    blocks[d] = (image[d] + pads[d] + pads[k + d] - dilations[d] * (block[d] - 1) - 1) / strides[d] + 1;
    positions *= blocks[d];
  }
  const int64_t N = in.shape()[0];
  if (in.shape()[1] % taps != 0 || in.shape()[2] != positions)
    return errorf("input {} does not hold {} taps at {} block positions", shapeText(in.shape()), taps, positions);
  const int64_t C = in.shape()[1] / taps;
  Shape out{N, C};
  out.insert(out.end(), image.begin(), image.end());
  SF_TRY(ctx.admit(in.type(), out));
  SF_ASSIGN(auto v, doubles(in));
  int64_t imageSize = 1;
  for (int64_t s : image) imageSize *= s;
  std::vector<double> y(size_t(N * C * imageSize), 0.0);
  std::vector<int64_t> tap(k), pos(k);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t r = t, d = int64_t(k) - 1; d >= 0; --d) tap[size_t(d)] = r % block[size_t(d)], r /= block[size_t(d)];
        for (int64_t l = 0; l < positions; ++l) {
          for (int64_t r = l, d = int64_t(k) - 1; d >= 0; --d) pos[size_t(d)] = r % blocks[size_t(d)], r /= blocks[size_t(d)];
          int64_t at = 0;
          bool inside = true;
          for (size_t d = 0; d < k; ++d) {
            int64_t i = pos[d] * strides[d] - pads[d] + tap[d] * dilations[d];
            inside = inside && i >= 0 && i < image[d];
            at = at * image[d] + i;
          }
          if (inside) y[size_t((n * C + c) * imageSize + at)] += v[size_t(((n * C + c) * taps + t) * positions + l)];
        }
      }
  SF_ASSIGN(Tensor o, Tensor::fromDoubles(in.type(), out, y));
  return ctx.setOutput(0, std::move(o));
}

/// CenterCropPad: each listed axis cropped or zero-padded to its target length about its centre
/// (a pad's odd element and a crop's odd element on the right: the start is the lower half).
Result<void> centerCropPad(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto target, ints(ctx.input(1)));
  const int64_t r = int64_t(x.shape().size());
  std::vector<int64_t> axes;
  if (ctx.attrs().has("axes")) {
    SF_ASSIGN(axes, ctx.attrs().getInts("axes"));
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  if (axes.size() != target.size()) return errorf("shape has {} values for {} axes", target.size(), axes.size());
  Shape out = x.shape();
  std::vector<int64_t> shift(size_t(r), 0); // input index = output index + shift
  for (size_t j = 0; j < axes.size(); ++j) {
    int64_t a = axes[j] < 0 ? axes[j] + r : axes[j];
    if (a < 0 || a >= r || target[j] < 0) return errorf("axis {} or length {} out of range", axes[j], target[j]);
    const int64_t in = x.shape()[size_t(a)], want = target[j];
    shift[size_t(a)] = in >= want ? (in - want) / 2 : -((want - in) / 2);
    out[size_t(a)] = want;
  }
  SF_TRY(ctx.admit(x.type(), out));
  const size_t elem = elementSize(x.type());
  SF_ASSIGN(auto bytes, ctx.allocate(x.type(), out));
  const int64_t total = countOf(out);
  std::vector<int64_t> idx(size_t(r), 0);
  auto inStrides = stridesOf(x.shape());
  for (int64_t o = 0; o < total; ++o) {
    int64_t src = 0;
    bool inside = true;
    for (int64_t d = 0; d < r; ++d) {
      int64_t i = idx[size_t(d)] + shift[size_t(d)];
      inside = inside && i >= 0 && i < x.shape()[size_t(d)];
      src += i * inStrides[size_t(d)];
    }
    if (inside) copyBytes(bytes.data() + size_t(o) * elem, x.bytes().data() + size_t(src) * elem, elem);
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < out[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(x.type(), out));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerResizeKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "Col2Im", col2Im));
  SF_TRY(setKernel(r, "CenterCropPad", centerCropPad));
  SF_TRY(registerGridSampleKernels(r));
  SF_TRY(setKernel(r, "Resize", [](EvalContext &c) { return resize(c, false); }));
  r.findMutable("", "Resize")->kernelTakesBlocked = true; // f32 of rank 4, as a pooling
  SF_TRY(setKernel(r, "Upsample", [](EvalContext &c) { return resize(c, true); }));
  return success();
}

} // namespace sf::eval::detail
