// Kernels of the convolutions and pools (src/ops/conv_pool.cpp), the quantized ones apart.
// Conv, MaxPool, AveragePool, the global pools, MaxUnpool, RoiAlign. f32 convolutions
// and pools on oneDNN where the build has it, else im2col (col2im) on sgemm; f64 in plain loops in
// the accumulation order a reader can check.
#include "../blas.h"
#include "../dnnl.h"
#include "../kernel_util.h"
#include "bounds.h"
#include "conv_pool.h"
#include "vec_math.h"
#include "shapeflow/support/window.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace sf::eval::detail {

Result<Window> windowOf(EvalContext &ctx, const Shape &x, std::vector<int64_t> kernel, bool ceilMode,
                        bool pool) {
  Window w;
  w.k = x.size() - 2;
  w.in.assign(x.begin() + 2, x.end());
  w.kernel = std::move(kernel);
  if (w.kernel.size() != w.k) return errorf("kernel has {} dims for {} spatial dims", w.kernel.size(), w.k);
  SF_ASSIGN(w.stride, ctx.attrs().getInts("strides", std::vector<int64_t>(w.k, 1)));
  SF_ASSIGN(w.dilation, ctx.attrs().getInts("dilations", std::vector<int64_t>(w.k, 1)));
  SF_ASSIGN(std::vector<int64_t> pads, ctx.attrs().getInts("pads", std::vector<int64_t>(2 * w.k, 0)));
  SF_ASSIGN(std::string autoPadText, ctx.attrs().getString("auto_pad", "NOTSET"));
  // Text other than auto_pad's four values reads as NOTSET here (the rule refuses it).
  AutoPad autoPad = parseAutoPad(autoPadText).value_or(AutoPad::NotSet);
  if (w.stride.size() != w.k || w.dilation.size() != w.k || pads.size() != 2 * w.k)
    return errorf("strides, dilations or pads do not match {} spatial dims", w.k);
  w.padBegin.assign(pads.begin(), pads.begin() + long(w.k));
  w.padEnd.assign(pads.begin() + long(w.k), pads.end());
  w.out.resize(w.k);
  for (size_t i = 0; i < w.k; ++i) {
    if (w.stride[i] <= 0 || w.dilation[i] <= 0) return errorf("strides and dilations must be positive");
    WindowAxis a = windowAxis(w.in[i], w.kernel[i], w.stride[i], w.dilation[i], w.padBegin[i], w.padEnd[i],
                              autoPad, pool, ceilMode);
    w.padBegin[i] = a.padBegin, w.padEnd[i] = a.padEnd;
    if (a.out < 0)
      return errorf("the window ({}) is larger than the padded input ({})", windowExtent(w.kernel[i], w.dilation[i]),
                    w.in[i] + w.padBegin[i] + w.padEnd[i]);
    w.out[i] = a.out;
  }
  return w;
}

/// Whether a [n, c, spatial...] tensor can be kept in `layout` (conv_pool.h).
static Result<void> layoutHolds(Layout layout, int64_t c, size_t spatial) {
  if (layout == Layout::Plain) return success();
  if (spatial != 2 || (channelBlock(layout) && c % channelBlock(layout) != 0))
    return errorf("a tensor of {} channels and {} spatial dims kept in a channel layout", c, spatial);
  return success();
}

Result<const float *> plainInput(const EvalContext &ctx, const float *x, int64_t n, int64_t c, int64_t hw,
                                 size_t spatial, std::vector<float> &plain) {
  if (ctx.inputLayout() == Layout::Plain) return x;
  SF_TRY(layoutHolds(ctx.inputLayout(), c, spatial));
  plain.resize(size_t(n * c * hw));
  relayout(x, plain.data(), n, c, hw, ctx.inputLayout(), false);
  return static_cast<const float *>(plain.data());
}

Result<void> toOutputLayout(const EvalContext &ctx, float *p, int64_t n, int64_t c, int64_t hw, size_t spatial) {
  if (ctx.outputLayout() == Layout::Plain) return success();
  SF_TRY(layoutHolds(ctx.outputLayout(), c, spatial));
  std::vector<float> plain(p, p + n * c * hw);
  relayout(plain.data(), p, n, c, hw, ctx.outputLayout(), true);
  return success();
}

namespace {

/// The activation a FusedConv applies to its output, element by element.
template <class T> void applyPostOp(const PostOp &post, T *p, int64_t count) {
  if (post.kind == PostOp::Kind::Relu)
    for (int64_t i = 0; i < count; ++i) p[i] = p[i] < T(0) ? T(0) : p[i];
  if (post.kind == PostOp::Kind::Clip) // ONNX's order: the lower bound, then the upper; NaN stays
    for (int64_t i = 0; i < count; ++i) {
      T v = p[i] < T(post.alpha) ? T(post.alpha) : p[i];
      p[i] = v > T(post.beta) ? T(post.beta) : v;
    }
  if (post.kind == PostOp::Kind::Swish)
    for (int64_t i = 0; i < count; ++i)
      p[i] = T(double(p[i]) / (1.0 + std::exp(-double(post.alpha) * double(p[i]))));
  if (post.kind == PostOp::Kind::HardSwish) // as the HardSwish kernel: NaN stays
    for (int64_t i = 0; i < count; ++i)
      p[i] = p[i] * std::max(T(0), std::min(T(1), p[i] / T(6) + T(0.5)));
}

/// Z added to the convolution's output `p` (FusedConv's residual input), element by element in
/// whatever layout both are kept in.
template <class T> void addResidual(const T *z, T *p, int64_t count) {
  if (z)
    for (int64_t i = 0; i < count; ++i) p[i] += z[i];
}

/// A convolution's channels: n images of c channels in and m out, in `group` groups of cg input
/// and mg output channels.
struct ConvChannels {
  int64_t n = 0, c = 0, m = 0, cg = 0, mg = 0, group = 1;
};

/// The taps of every output position, computed once: input offset or -1, tap-major (the
/// positions of one tap are contiguous, as im2col reads them).
std::vector<int64_t> tapOffsets(const Window &w) {
  int64_t outSize = countOf(w.out), taps = countOf(w.kernel);
  std::vector<int64_t> tapOff(static_cast<size_t>(outSize * taps));
  forEachPosition(w, [&](int64_t po, const std::vector<int64_t> &pos) {
    forEachTap(w, pos, [&](int64_t off, int64_t t) { tapOff[size_t(t * outSize + po)] = off; });
  });
  return tapOff;
}

/// f32 where oneDNN does not run it: each (image, group): W_g [mg, cg*taps] times the input's
/// columns [cg*taps, positions] (im2col, in tiles of positions so that the columns stay within
/// 16 MB), on sgemm, then the bias (`bias` may be null). A 1x1 convolution with unit strides and
/// no padding reads the input as its own columns.
void convColumns(const ConvChannels &ch, const Window &w, const std::vector<int64_t> &tapOff, const float *xdata,
                 const float *wdata, const float *bias, float *p) {
  const int64_t n = ch.n, c = ch.c, m = ch.m, cg = ch.cg, mg = ch.mg, group = ch.group;
  int64_t inSize = countOf(w.in), outSize = countOf(w.out), taps = countOf(w.kernel);
  const int64_t kdim = cg * taps;
  bool direct = taps == 1 && outSize == inSize;
  for (int64_t po = 0; direct && po < outSize; ++po) direct = tapOff[size_t(po)] == po;
  const int64_t tile = std::max<int64_t>(1, std::min<int64_t>(outSize, (int64_t(1) << 22) / std::max<int64_t>(kdim, 1)));
  std::vector<float> col(direct ? 0 : size_t(kdim * tile));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < group; ++g) {
      const float *wg = wdata + g * mg * kdim;
      const float *src = xdata + (b * c + g * cg) * inSize;
      float *dst = p + (b * m + g * mg) * outSize;
      if (direct) {
        sgemm(false, false, mg, outSize, kdim, 1.0f, wg, kdim, src, inSize, 0.0f, dst, outSize);
      } else {
        for (int64_t t0 = 0; t0 < outSize; t0 += tile) {
          int64_t tn = std::min(tile, outSize - t0);
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t t = 0; t < taps; ++t) {
              float *row = col.data() + (ci * taps + t) * tn;
              const float *plane = src + ci * inSize;
              for (int64_t j = 0; j < tn; ++j) {
                int64_t off = tapOff[size_t(t * outSize + t0 + j)];
                row[j] = off >= 0 ? plane[off] : 0.0f;
              }
            }
          sgemm(false, false, mg, tn, kdim, 1.0f, wg, kdim, col.data(), tn, 0.0f, dst + t0, outSize);
        }
      }
      if (bias)
        for (int64_t mm = 0; mm < mg; ++mm) {
          float bv = bias[size_t(g * mg + mm)];
          float *row = dst + mm * outSize;
          for (int64_t po = 0; po < outSize; ++po) row[po] += bv;
        }
    }
}

/// The other types: each output a sum in double over its taps, in the order a reader can check
/// (`bias` may be null).
template <class T>
void convLoops(const ConvChannels &ch, const Window &w, const std::vector<int64_t> &tapOff, const T *xdata,
               const T *wdata, const T *bias, T *p) {
  const int64_t n = ch.n, c = ch.c, m = ch.m, cg = ch.cg, mg = ch.mg, group = ch.group;
  int64_t inSize = countOf(w.in), outSize = countOf(w.out), taps = countOf(w.kernel);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < group; ++g)
      for (int64_t mm = 0; mm < mg; ++mm) {
        int64_t oc = g * mg + mm;
        T *dst = p + (b * m + oc) * outSize;
        for (int64_t po = 0; po < outSize; ++po) {
          double s = bias ? double(bias[size_t(oc)]) : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const T *src = xdata + (b * c + g * cg + ci) * inSize;
            const T *wk = wdata + (oc * cg + ci) * taps;
            for (int64_t t = 0; t < taps; ++t) {
              int64_t off = tapOff[size_t(t * outSize + po)];
              if (off >= 0) s += double(src[off]) * double(wk[t]);
            }
          }
          dst[po] = T(s);
        }
      }
}

} // namespace

Result<void> convWith(EvalContext &ctx, PostOp post, bool addsZ) {
  const Tensor &x = ctx.input(0), &wt = ctx.input(1);
  if (x.shape().size() < 3 || wt.shape().size() != x.shape().size())
    return errorf("X is {} and W is {}", shapeText(x.shape()), shapeText(wt.shape()));
  SF_ASSIGN(int64_t group, ctx.attrs().getInt("group", 1));
  int64_t n = x.shape()[0], c = x.shape()[1], m = wt.shape()[0], cg = wt.shape()[1];
  if (group <= 0 || c != cg * group || m % group != 0)
    return errorf("X has {} channels, W {} per group of {} groups and {} outputs", c, cg, group, m);
  std::vector<int64_t> kernel(wt.shape().begin() + 2, wt.shape().end());
  if (ctx.attrs().has("kernel_shape")) {
    SF_ASSIGN(auto ks, ctx.attrs().getInts("kernel_shape"));
    if (ks != kernel) return errorf("kernel_shape [{}] is not W's [{}]", fmt::join(ks, ","), fmt::join(kernel, ","));
  }
  SF_ASSIGN(Window w, windowOf(ctx, x.shape(), kernel, false));
  Shape out{n, m};
  out.insert(out.end(), w.out.begin(), w.out.end());
  const ConvChannels ch{n, c, m, cg, m / group, group};
  // FusedConv's Z: added to the output before the activation, kept in the output's layout.
  const Tensor *zt = addsZ && ctx.hasInput(3) ? &ctx.input(3) : nullptr;
  if (zt && (zt->type() != x.type() || zt->shape() != out))
    return errorf("Z is {} {}, the output {} {}", shortName(zt->type()), shapeText(zt->shape()), shortName(x.type()),
                  shapeText(out));
  const int64_t count = countOf(out);
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x), ws(wt);
    std::optional<Elements<T>> bias, zs;
    if (ctx.hasInput(2)) {
      if (ctx.input(2).elementCount() != m) return errorf("B has {} elements, not {}", ctx.input(2).elementCount(), m);
      bias.emplace(ctx.input(2));
    }
    if (zt) zs.emplace(*zt);
    const T *z = zt ? zs->data() : nullptr;
    Output<T> o(ctx, x.type(), out);
    SF_ASSIGN(T *p, o.makeForOverwrite());
    // Where the executor keeps the input or output in a channel layout (EvalContext::setLayouts)
    // and oneDNN does not take the case: the loops below on a plain copy of the input, the
    // output moved into its layout after them.
    std::vector<float> plainX;
    const T *xdata = xs.data();
    if constexpr (std::is_same_v<T, float>) {
      WindowGeometry geo{n, c, m, group, w.in, w.kernel, w.stride, w.dilation, w.padBegin, w.padEnd, w.out};
      geo.src = ctx.inputLayout(), geo.dst = ctx.outputLayout();
      // Relu, Clip and HardSwish in oneDNN's pass only where the convolution cannot make a NaN
      // (its input bounded: as the kernel that made it proved, or measured here); otherwise after
      // it, by the loop that keeps NaN (the layout does not matter to it).
      const bool mapsNan = post.kind == PostOp::Kind::Relu || post.kind == PostOp::Kind::Clip ||
                           post.kind == PostOp::Kind::HardSwish;
      float xBound = ctx.inputBound(0);
      if (mapsNan && xBound == EvalContext::kUnbounded) xBound = measuredBound(xs.data(), x.elementCount());
      float yBound = EvalContext::kUnbounded;
      if (xBound != EvalContext::kUnbounded)
        yBound = convBound(xBound,
                           weightGain(ctx.inputShared(1), ctx.inputIsConstant(1), ws.data(), m, cg * countOf(w.kernel)),
                           bias ? bias->data() : nullptr, m);
      if (z && yBound != EvalContext::kUnbounded) { // the sum's bound: the convolution's and Z's
        float zBound = ctx.inputBound(3);
        if (mapsNan && zBound == EvalContext::kUnbounded) zBound = measuredBound(z, count);
        yBound = zBound == EvalContext::kUnbounded ? zBound : boundOfSum(yBound, zBound);
      }
      PostOp inPass = mapsNan && yBound == EvalContext::kUnbounded ? PostOp{} : post;
      auto onDnnl = [&](PostOp inDnnl, const float *sum) {
        return dnnlConv(geo, xs.data(), ws.data(), ctx.inputShared(1), ctx.inputIsConstant(1),
                        bias ? bias->data() : nullptr, p, inDnnl, sum);
      };
      bool ran = onDnnl(inPass, z);
      if (!ran && z && onDnnl(PostOp{}, nullptr)) {
        // oneDNN runs the convolution but not its sum: Z added after it, then the activation.
        addResidual(z, p, count);
        ran = true, inPass = PostOp{};
      }
      if (ran) {
        if (inPass.kind != post.kind) applyPostOp(post, p, count);
        SF_TRY(o.finish(0));
        if (post.kind == PostOp::Kind::Clip && yBound != EvalContext::kUnbounded)
          yBound = std::min(yBound, std::max(std::fabs(post.alpha), std::fabs(post.beta)));
        ctx.setOutputBound(0, yBound); // Relu, Swish and HardSwish (|x f(x)| <= |x|) keep it
        return success();
      }
      SF_ASSIGN(xdata, plainInput(ctx, xs.data(), n, c, countOf(w.in), w.in.size(), plainX));
    }
    if ((ctx.inputLayout() != Layout::Plain || ctx.outputLayout() != Layout::Plain) && !std::is_same_v<T, float>)
      return errorf("a {} tensor kept in a channel layout", shortName(x.type()));
    int64_t outSize = countOf(w.out);
    std::vector<int64_t> tapOff = tapOffsets(w);
    if constexpr (std::is_same_v<T, float>) {
      convColumns(ch, w, tapOff, xdata, ws.data(), bias ? bias->data() : nullptr, p);
      SF_TRY(toOutputLayout(ctx, p, n, m, outSize, w.out.size()));
      addResidual(z, p, count); // in the output's layout, which is Z's
      applyPostOp(post, p, count);
      return o.finish(0);
    }
    convLoops(ch, w, tapOff, xdata, ws.data(), bias ? bias->data() : nullptr, p);
    addResidual(z, p, count);
    applyPostOp(post, p, count);
    return o.finish(0);
  });
}

namespace {

Result<void> conv(EvalContext &ctx) { return convWith(ctx, PostOp{}); }

/// The taps of the window at `pos` that fall in the input or its explicit pads (not in ceil_mode's
/// overhang past them): AveragePool's divisor with count_include_pad.
int64_t tapsWithinPads(const Window &w, const std::vector<int64_t> &pos) {
  int64_t denom = 1;
  for (size_t d = 0; d < w.k; ++d) {
    int64_t lo = pos[d] * w.stride[d] - w.padBegin[d];
    int64_t hi = std::min(lo + (w.kernel[d] - 1) * w.dilation[d], w.in[d] + w.padEnd[d] - 1);
    denom *= (hi - lo) / w.dilation[d] + 1;
  }
  return denom;
}

/// 2-D max pooling (no dilation) of f32 X kept in channel blocks of B into Y in the same layout:
/// per image and block, each output position the lane-wise maximum of the window's positions
/// inside X (v's lane where it is greater than the maximum so far: a NaN stays only where it is
/// the window's first element, as the plain loops below keep it); a window wholly in the padding
/// gives the lowest float, as they do. Returns whether some window was. A block's lanes are one
/// vector of GCC's (16 or 32 bytes, or 64: as many of the target's as that takes). oneDNN's pooling
/// of nChw8c is several times slower (ResNet's first pooling: 0.86 ms against 0.2). Inlined where
/// it is called, so that maxPoolBlocked8Wide compiles it for AVX2.
template <int B> [[gnu::always_inline]] inline bool maxPoolBlocked(const float *x, float *y, int64_t images,
                                                                    const Window &w) {
  typedef float Lanes __attribute__((vector_size(B * sizeof(float))));
  const int64_t H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
  bool empty = false;
  for (int64_t nb = 0; nb < images; ++nb) {
    const float *src = x + nb * H * W * B;
    float *dst = y + nb * OH * OW * B;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * w.stride[0] - w.padBegin[0];
      const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h0 + w.kernel[0], H);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = ow * w.stride[1] - w.padBegin[1];
        const int64_t ws = std::max<int64_t>(w0, 0), we = std::min(w0 + w.kernel[1], W);
        float *out = dst + (oh * OW + ow) * B;
        if (hs >= he || ws >= we) {
          std::fill(out, out + B, std::numeric_limits<float>::lowest());
          empty = true;
          continue;
        }
        Lanes best, v;
        std::memcpy(&best, src + (hs * W + ws) * B, sizeof best);
        for (int64_t h = hs; h < he; ++h)
          for (int64_t c = ws; c < we; ++c) {
            std::memcpy(&v, src + (h * W + c) * B, sizeof v);
            best = v > best ? v : best;
          }
        std::memcpy(out, &best, sizeof best);
      }
    }
  }
  return empty;
}

#if defined(__x86_64__) && defined(__GNUC__)
/// maxPoolBlocked<8> compiled for a processor with AVX2 (hasAvx2Fma): a block's 8 channels of a
/// position in one vector.
__attribute__((target("avx2,fma"))) bool maxPoolBlocked8Wide(const float *x, float *y, int64_t images,
                                                            const Window &w) {
  return maxPoolBlocked<8>(x, y, images, w);
}
#endif

Result<void> pool(EvalContext &ctx, bool isMax) {
  const Tensor &x = ctx.input(0);
  if (x.shape().size() < 3) return errorf("X is {}", shapeText(x.shape()));
  SF_ASSIGN(auto kernel, ctx.attrs().getInts("kernel_shape"));
  SF_ASSIGN(int64_t ceilMode, ctx.attrs().getInt("ceil_mode", 0));
  SF_ASSIGN(int64_t countPad, ctx.attrs().getInt("count_include_pad", 0));
  SF_ASSIGN(int64_t storageOrder, ctx.attrs().getInt("storage_order", 0));
  SF_ASSIGN(Window w, windowOf(ctx, x.shape(), kernel, ceilMode != 0, true));
  int64_t n = x.shape()[0], c = x.shape()[1];
  Shape out{n, c};
  out.insert(out.end(), w.out.begin(), w.out.end());
  bool indices = isMax && ctx.numOutputs() > 1;
  if (!isMax && !isFloat(x.type())) return errorf("AveragePool of {}", shortName(x.type()));
  return dispatch(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), out, 0);
    SF_ASSIGN(T *p, o.makeForOverwrite());
    // Where the executor keeps X or Y in a channel layout and oneDNN does not take the case: the
    // loops below on a plain copy of X, Y moved into its layout after them.
    const T *xdata = xs.data();
    std::vector<T> plainX;
    if constexpr (std::is_same_v<T, float>) {
      WindowGeometry geo{n, c, c, 1, w.in, w.kernel, w.stride, w.dilation, w.padBegin, w.padEnd, w.out};
      geo.src = ctx.inputLayout(), geo.dst = ctx.outputLayout();
      PoolKind kind = isMax ? PoolKind::Max
                      : countPad ? PoolKind::AverageIncludingPads : PoolKind::AverageExcludingPads;
      const int64_t blk = channelBlock(ctx.inputLayout());
      if (isMax && !indices && blk && ctx.outputLayout() == ctx.inputLayout() && w.k == 2 && c % blk == 0 &&
          w.dilation[0] == 1 && w.dilation[1] == 1) {
#if defined(__x86_64__) && defined(__GNUC__)
        const bool empty = blk == 16     ? maxPoolBlocked<16>(xs.data(), p, n * c / 16, w)
                           : hasAvx2Fma() ? maxPoolBlocked8Wide(xs.data(), p, n * c / 8, w)
                                          : maxPoolBlocked<8>(xs.data(), p, n * c / 8, w);
#else
        const bool empty = blk == 16 ? maxPoolBlocked<16>(xs.data(), p, n * c / 16, w)
                                     : maxPoolBlocked<8>(xs.data(), p, n * c / 8, w);
#endif
        // Each output one of X's elements, or the lowest float for a window wholly in the padding.
        ctx.setOutputBound(0, empty ? EvalContext::kUnbounded : ctx.inputBound(0));
        return o.finish(0);
      }
      if (!indices && dnnlPool(geo, kind, xs.data(), p)) {
        // Every window has an element of x (oneDNN takes pads smaller than the window): the
        // maximum or mean of finite elements is within their bound.
        ctx.setOutputBound(0, ctx.inputBound(0));
        return o.finish(0);
      }
      SF_ASSIGN(xdata, plainInput(ctx, xs.data(), n, c, countOf(w.in), w.in.size(), plainX));
    }
    if ((ctx.inputLayout() != Layout::Plain || ctx.outputLayout() != Layout::Plain) &&
        (!std::is_same_v<T, float> || indices))
      return errorf("a pooling of {} in a channel layout", shortName(x.type()));
    Output<int64_t> oi(ctx, ElementType::I64, out, 1);
    int64_t *pi = nullptr;
    if (indices) {
      SF_ASSIGN(pi, oi.make());
    }
    int64_t inSize = countOf(w.in), outSize = countOf(w.out);
    for (int64_t bc = 0; bc < n * c; ++bc) {
      const T *src = xdata + bc * inSize;
      forEachPosition(w, [&](int64_t po, const std::vector<int64_t> &pos) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t count = 0, at = -1, padded = 0;
        forEachTap(w, pos, [&](int64_t off, int64_t) {
          if (off < 0) {
            ++padded;
            return;
          }
          double v = double(src[off]);
          if (isMax) {
            if (v > best || at < 0) best = v, at = off;
          } else {
            sum += v, ++count;
          }
        });
        if (isMax) {
          // A window wholly in the padding (dilated, at an edge) reads nothing: the lowest value,
          // as onnxruntime gives.
          p[bc * outSize + po] = at < 0 ? std::numeric_limits<T>::lowest() : T(best);
          if (pi) {
            int64_t flat = at;
            if (storageOrder == 1 && w.k == 2) { // column-major within the image
              int64_t h = at / w.in[1], ww = at % w.in[1];
              flat = ww * w.in[0] + h;
            }
            pi[bc * outSize + po] = bc * inSize + flat;
          }
        } else {
          int64_t denom = countPad ? tapsWithinPads(w, pos) : count;
          (void)padded;
          p[bc * outSize + po] = T(denom ? sum / double(denom) : 0.0);
        }
      });
    }
    if constexpr (std::is_same_v<T, float>) SF_TRY(toOutputLayout(ctx, p, n, c, outSize, w.out.size()));
    SF_TRY(o.finish(0));
    if (pi) SF_TRY(oi.finish(1));
    return success();
  }, false);
}

/// The channels of a block of `B` summed together over the `hw` positions of `row`, divided by
/// their count into `p`.
template <int B> void meanOfBlock(const float *row, int64_t hw, float *p) {
  float acc[B] = {};
  for (int64_t i = 0; i < hw; ++i)
    for (int c = 0; c < B; ++c) acc[c] += row[i * B + c];
  for (int c = 0; c < B; ++c) p[c] = hw ? acc[c] / float(hw) : std::numeric_limits<float>::quiet_NaN();
}

/// GlobalAveragePool of f32 X [N, C, H, W] kept in a channel layout: in channel blocks (nChw16c,
/// nChw8c) the channels of a block summed together over the positions; channels last, a row of
/// C channels per position. The output, [N, C, 1, 1], has the same bytes in every layout.
Result<void> globalAveragePoolBlocked(EvalContext &ctx, const Tensor &x, const Shape &out) {
  const Shape &s = x.shape();
  const bool last = ctx.inputLayout() == Layout::ChannelsLast;
  const int64_t blk = channelBlock(ctx.inputLayout());
  if (s.size() != 4 || (!last && s[1] % blk != 0) || x.type() != ElementType::F32)
    return errorf("X {} {} kept in a channel layout", shortName(x.type()), shapeText(s));
  const int64_t hw = s[2] * s[3];
  Elements<float> xs(x);
  Output<float> o(ctx, x.type(), out);
  SF_ASSIGN(float *p, o.makeForOverwrite());
  if (last) {
    const int64_t c = s[1];
    std::vector<float> acc(static_cast<size_t>(c));
    for (int64_t b = 0; b < s[0]; ++b) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      const float *img = xs.data() + b * hw * c;
      for (int64_t i = 0; i < hw; ++i)
        for (int64_t k = 0; k < c; ++k) acc[size_t(k)] += img[i * c + k];
      for (int64_t k = 0; k < c; ++k)
        p[b * c + k] = hw ? acc[size_t(k)] / float(hw) : std::numeric_limits<float>::quiet_NaN();
    }
    return o.finish(0);
  }
  const int64_t blocks = s[0] * (s[1] / blk);
  for (int64_t b = 0; b < blocks; ++b) {
    if (blk == 16) meanOfBlock<16>(xs.data() + b * hw * 16, hw, p + b * 16);
    else meanOfBlock<8>(xs.data() + b * hw * 8, hw, p + b * 8);
  }
  return o.finish(0);
}

/// The mean of f32 values, in 16 partial sums (vectorised) added in double.
float meanF32(const float *x, int64_t n) {
  float part[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int c = 0; c < 16; ++c) part[c] += x[i + c];
  double acc = 0;
  for (; i < n; ++i) acc += x[i];
  for (float v : part) acc += v;
  return float(acc / double(n));
}

Result<void> globalPool(EvalContext &ctx, bool isMax) {
  const Tensor &x = ctx.input(0);
  if (x.shape().size() < 2) return errorf("X is {}", shapeText(x.shape()));
  Shape out = x.shape();
  for (size_t d = 2; d < out.size(); ++d) out[d] = 1;
  if (ctx.inputLayout() != Layout::Plain) {
    if (isMax) return errorf("GlobalMaxPool of a tensor kept in a channel layout");
    return globalAveragePoolBlocked(ctx, x, out);
  }
  int64_t inner = 1;
  for (size_t d = 2; d < x.shape().size(); ++d) inner *= x.shape()[d];
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), out);
    SF_ASSIGN(T *p, o.make());
    for (int64_t bc = 0; bc < x.shape()[0] * x.shape()[1]; ++bc) {
      if constexpr (std::is_same_v<T, float>) {
        if (!isMax && inner > 0) {
          p[bc] = meanF32(xs.data() + bc * inner, inner);
          continue;
        }
      }
      double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < inner; ++i) {
        double v = double(xs[size_t(bc * inner + i)]);
        acc = isMax ? std::max(acc, v) : acc + v;
      }
      p[bc] = T(isMax ? acc : acc / double(inner));
    }
    return o.finish(0);
  });
}

/// MaxUnpool: X's values placed at their MaxPool indices in a zero tensor of the unpooled size
/// (or output_shape).
Result<void> maxUnpool(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto idx, ints(ctx.input(1)));
  const Shape &xs = x.shape();
  if (xs.size() < 3) return errorf("X is {}", shapeText(xs));
  size_t k = xs.size() - 2;
  SF_ASSIGN(auto kernel, ctx.attrs().getInts("kernel_shape"));
  SF_ASSIGN(auto strides, ctx.attrs().getInts("strides", std::vector<int64_t>(k, 1)));
  SF_ASSIGN(auto pads, ctx.attrs().getInts("pads", std::vector<int64_t>(2 * k, 0)));
  if (kernel.size() != k || strides.size() != k || pads.size() != 2 * k) return errorf("attributes do not match {} spatial dims", k);
  // The indices address the unpooled shape the attributes give; output_shape, when larger,
  // pads it with zeros at the end of each dim.
  Shape inferred = xs;
  for (size_t d = 0; d < k; ++d) inferred[2 + d] = (xs[2 + d] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + k];
  Shape out = inferred;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(auto os, ints(ctx.input(2)));
    if (os.size() != xs.size()) return errorf("output_shape has {} dims", os.size());
    out.assign(os.begin(), os.end());
    for (size_t d = 0; d < out.size(); ++d)
      if (out[d] < inferred[d]) return errorf("output_shape {} is smaller than {}", shapeText(out), shapeText(inferred));
  }
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto v, doubles(x));
  int64_t total = countOf(inferred);
  std::vector<double> flat(static_cast<size_t>(total), 0.0), y(static_cast<size_t>(countOf(out)), 0.0);
  for (size_t i = 0; i < v.size() && i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= total) return errorf("index {} is outside the output of {} elements", idx[i], total);
    flat[size_t(idx[i])] = v[i];
  }
  std::vector<int64_t> at(inferred.size());
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, o = 0;
    for (size_t d = inferred.size(); d-- > 0;) at[d] = rest % inferred[d], rest /= inferred[d];
    for (size_t d = 0; d < out.size(); ++d) o = o * out[d] + at[d];
    y[size_t(o)] = flat[size_t(i)];
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// RoiAlign: each region of interest pooled to output_height x output_width by bilinear samples
/// (avg, or max of the weighted corner values as onnxruntime computes it).
Result<void> roiAlign(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  if (x.shape().size() != 4) return errorf("X must be [N,C,H,W]");
  SF_ASSIGN(auto rois, doubles(ctx.input(1)));
  SF_ASSIGN(auto batchIdx, ints(ctx.input(2)));
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "avg"));
  SF_ASSIGN(int64_t outH, ctx.attrs().getInt("output_height", 1));
  SF_ASSIGN(int64_t outW, ctx.attrs().getInt("output_width", 1));
  SF_ASSIGN(int64_t ratio, ctx.attrs().getInt("sampling_ratio", 0));
  SF_ASSIGN(double scale, ctx.attrs().getFloat("spatial_scale", 1.0));
  SF_ASSIGN(std::string ctm, ctx.attrs().getString("coordinate_transformation_mode",
                                                    ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel"));
  int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  int64_t num = int64_t(batchIdx.size());
  if (int64_t(rois.size()) != num * 4) return errorf("rois has {} values for {} regions", rois.size(), num);
  Shape out{num, c, outH, outW};
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto xs, doubles(x));
  bool half = ctm == "half_pixel";
  std::vector<double> y(static_cast<size_t>(countOf(out)), 0.0);
  for (int64_t r = 0; r < num; ++r) {
    int64_t b = batchIdx[size_t(r)];
    if (b < 0 || b >= n) return errorf("batch index {} of {}", b, n);
    double off = half ? 0.5 : 0.0;
    double x1 = rois[size_t(r * 4)] * scale - off, y1 = rois[size_t(r * 4 + 1)] * scale - off;
    double x2 = rois[size_t(r * 4 + 2)] * scale - off, y2 = rois[size_t(r * 4 + 3)] * scale - off;
    double rw = x2 - x1, rh = y2 - y1;
    if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    double bh = rh / double(outH), bw = rw / double(outW);
    int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / double(outH)));
    int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / double(outW)));
    double count = double(std::max<int64_t>(gh * gw, 1));
    for (int64_t ch = 0; ch < c; ++ch) {
      const double *img = &xs[size_t((b * c + ch) * h * w)];
      for (int64_t ph = 0; ph < outH; ++ph)
        for (int64_t pw = 0; pw < outW; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double yy = y1 + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);
              double xx = x1 + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);
              double v1 = 0, v2 = 0, v3 = 0, v4 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0;
              if (!(yy < -1.0 || yy > double(h) || xx < -1.0 || xx > double(w))) {
                yy = std::max(yy, 0.0), xx = std::max(xx, 0.0);
                int64_t yl = int64_t(yy), xl = int64_t(xx), yhh, xh;
                if (yl >= h - 1) yhh = yl = h - 1, yy = double(yl);
                else yhh = yl + 1;
                if (xl >= w - 1) xh = xl = w - 1, xx = double(xl);
                else xh = xl + 1;
                double ly = yy - double(yl), lx = xx - double(xl), hy = 1 - ly, hx = 1 - lx;
                w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;
                v1 = img[yl * w + xl], v2 = img[yl * w + xh], v3 = img[yhh * w + xl], v4 = img[yhh * w + xh];
              }
              if (mode == "max") {
                double m = std::max({w1 * v1, w2 * v2, w3 * v3, w4 * v4});
                acc = first ? m : std::max(acc, m);
                first = false;
              } else {
                acc += w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4;
              }
            }
          y[size_t(((r * c + ch) * outH + ph) * outW + pw)] = mode == "max" ? acc : acc / count;
        }
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// LpPool (and GlobalLpPool, the window the whole map): (sum over the window's taps in the input
/// of |x|^p)^(1/p); taps in the padding add nothing.
Result<void> lpPool(EvalContext &ctx, bool global) {
  const Tensor &x = ctx.input(0);
  if (x.shape().size() < 3) return errorf("X is {}", shapeText(x.shape()));
  SF_ASSIGN(int64_t p, ctx.attrs().getInt("p", 2));
  if (p <= 0) return errorf("p is {}, not positive", p);
  std::vector<int64_t> kernel(x.shape().begin() + 2, x.shape().end());
  Window w;
  if (global) {
    w.k = kernel.size();
    w.in = w.kernel = kernel;
    w.stride.assign(w.k, 1), w.dilation.assign(w.k, 1), w.padBegin.assign(w.k, 0), w.padEnd.assign(w.k, 0);
    w.out.assign(w.k, 1);
  } else {
    SF_ASSIGN(kernel, ctx.attrs().getInts("kernel_shape"));
    SF_ASSIGN(int64_t ceilMode, ctx.attrs().getInt("ceil_mode", 0));
    SF_ASSIGN(w, windowOf(ctx, x.shape(), kernel, ceilMode != 0, true));
  }
  const int64_t n = x.shape()[0], c = x.shape()[1], inSize = countOf(w.in), outSize = countOf(w.out);
  Shape out{n, c};
  out.insert(out.end(), w.out.begin(), w.out.end());
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto xv, doubles(x));
  std::vector<double> y(size_t(n * c * outSize));
  for (int64_t bc = 0; bc < n * c; ++bc)
    forEachPosition(w, [&](int64_t po, const std::vector<int64_t> &pos) {
      double sum = 0;
      forEachTap(w, pos, [&](int64_t off, int64_t) {
        if (off >= 0) sum += std::pow(std::abs(xv[size_t(bc * inSize + off)]), double(p));
      });
      y[size_t(bc * outSize + po)] = std::pow(sum, 1.0 / double(p));
    });
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// One value of X's plane at (h, w) by bilinear interpolation, 0 outside (DeformConv's sampling).
double bilinearAt(const double *plane, int64_t H, int64_t W, double h, double w) {
  if (h <= -1 || h >= double(H) || w <= -1 || w >= double(W)) return 0;
  const int64_t h0 = int64_t(std::floor(h)), w0 = int64_t(std::floor(w));
  const double dh = h - double(h0), dw = w - double(w0);
  auto at = [&](int64_t i, int64_t j) { return i < 0 || i >= H || j < 0 || j >= W ? 0.0 : plane[i * W + j]; };
  return (1 - dh) * ((1 - dw) * at(h0, w0) + dw * at(h0, w0 + 1)) + dh * ((1 - dw) * at(h0 + 1, w0) + dw * at(h0 + 1, w0 + 1));
}

/// DeformConv (2-D): each kernel tap of each output position samples X at its place moved by the
/// offsets (per offset group, bilinearly, 0 outside), scaled by the mask when given; then the
/// weights as in Conv, per group, and the bias.
Result<void> deformConv(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &wt = ctx.input(1), &off = ctx.input(2);
  if (x.shape().size() != 4 || wt.shape().size() != 4) return errorf("only 2-D DeformConv: X {} and W {}", shapeText(x.shape()), shapeText(wt.shape()));
  SF_ASSIGN(int64_t group, ctx.attrs().getInt("group", 1));
  SF_ASSIGN(int64_t offGroups, ctx.attrs().getInt("offset_group", 1));
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t M = wt.shape()[0], Cg = wt.shape()[1], kh = wt.shape()[2], kw = wt.shape()[3];
  if (group <= 0 || offGroups <= 0 || C != Cg * group || M % group != 0 || C % offGroups != 0)
    return errorf("X has {} channels, W {} per group of {} groups and {} outputs, {} offset groups", C, Cg, group, M, offGroups);
  SF_ASSIGN(Window w, windowOf(ctx, x.shape(), {kh, kw}, false));
  const int64_t oh = w.out[0], ow = w.out[1], taps = kh * kw;
  if (off.shape() != Shape{N, offGroups * taps * 2, oh, ow})
    return errorf("offset {} is not ({}, {}, {}, {})", shapeText(off.shape()), N, offGroups * taps * 2, oh, ow);
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto wv, doubles(wt));
  SF_ASSIGN(auto ov, doubles(off));
  std::vector<double> bias(size_t(M), 0.0), mask;
  if (ctx.hasInput(3)) {
    SF_ASSIGN(bias, doubles(ctx.input(3)));
    if (int64_t(bias.size()) != M) return errorf("B has {} elements, not {}", bias.size(), M);
  }
  if (ctx.hasInput(4)) {
    if (ctx.input(4).shape() != Shape{N, offGroups * taps, oh, ow})
      return errorf("mask {} is not ({}, {}, {}, {})", shapeText(ctx.input(4).shape()), N, offGroups * taps, oh, ow);
    SF_ASSIGN(mask, doubles(ctx.input(4)));
  }
  Shape out{N, M, oh, ow};
  SF_TRY(ctx.admit(x.type(), out));
  // The sampled columns: per (image, channel, tap, position).
  std::vector<double> col(size_t(C * taps * oh * ow)), y(size_t(N * M * oh * ow));
  const int64_t perGroup = C / offGroups, mg = M / group;
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t ch = 0; ch < C; ++ch) {
      const int64_t g = ch / perGroup;
      const double *plane = &xv[size_t((b * C + ch) * H * W)];
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            const int64_t at = i * ow + j, o = (b * offGroups + g) * taps + t;
            double dy = ov[size_t((o * 2) * oh * ow + at)], dx = ov[size_t((o * 2 + 1) * oh * ow + at)];
            double h = double(i * w.stride[0] - w.padBegin[0] + (t / kw) * w.dilation[0]) + dy;
            double ww = double(j * w.stride[1] - w.padBegin[1] + (t % kw) * w.dilation[1]) + dx;
            double v = bilinearAt(plane, H, W, h, ww);
            if (!mask.empty()) v *= mask[size_t(o * oh * ow + at)];
            col[size_t((ch * taps + t) * oh * ow + at)] = v;
          }
    }
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / mg;
      for (int64_t at = 0; at < oh * ow; ++at) {
        double s = bias[size_t(m)];
        for (int64_t ci = 0; ci < Cg; ++ci)
          for (int64_t t = 0; t < taps; ++t)
            s += wv[size_t((m * Cg + ci) * taps + t)] * col[size_t(((g * Cg + ci) * taps + t) * oh * ow + at)];
        y[size_t((b * M + m) * oh * ow + at)] = s;
      }
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerConvPoolKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "LpPool", [](EvalContext &c) { return lpPool(c, false); }));
  SF_TRY(setKernel(r, "GlobalLpPool", [](EvalContext &c) { return lpPool(c, true); }));
  SF_TRY(setKernel(r, "DeformConv", deformConv));
  SF_TRY(setKernel(r, "Conv", conv));
  r.findMutable("", "Conv")->kernelTakesBlocked = true;
  r.findMutable("", "GlobalAveragePool")->kernelTakesBlocked = true;
  r.findMutable("", "MaxPool")->kernelTakesBlocked = true;
  r.findMutable("", "AveragePool")->kernelTakesBlocked = true;
  SF_TRY(setKernel(r, "MaxPool", [](EvalContext &c) { return pool(c, true); }));
  SF_TRY(setKernel(r, "AveragePool", [](EvalContext &c) { return pool(c, false); }));
  SF_TRY(setKernel(r, "GlobalMaxPool", [](EvalContext &c) { return globalPool(c, true); }));
  SF_TRY(setKernel(r, "GlobalAveragePool", keepingBound([](EvalContext &c) { return globalPool(c, false); })));
  SF_TRY(setKernel(r, "MaxUnpool", maxUnpool));
  SF_TRY(setKernel(r, "RoiAlign", roiAlign));
  return success();
}

} // namespace sf::eval::detail
