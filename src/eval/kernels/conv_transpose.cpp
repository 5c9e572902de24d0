// Kernel of ConvTranspose (src/ops/conv_pool.cpp). f32: windows that do not overlap as one
// product per image, else oneDNN's deconvolution, else columns on sgemm added where their taps
// land (col2im); the other types in plain loops in double.
#include "../blas.h"
#include "../dnnl.h"
#include "../kernel_util.h"
#include "bounds.h"
#include "conv_pool.h"
#include "shapeflow/support/window.h"

#include <algorithm>
#include <cmath>

namespace sf::eval::detail {
namespace {

/// ConvTranspose's geometry: n images of c channels in `group` groups of cg, m = mg * group
/// output channels; per spatial axis the input length, kernel, stride, dilation, the padding
/// before the axis (lo) and the output length.
struct Transposed {
  size_t k = 0;
  int64_t n = 0, c = 0, cg = 0, m = 0, mg = 0, group = 1;
  std::vector<int64_t> in, out, lo, kernel, stride, dil;
};

/// The geometry of a ConvTranspose of X `xs` and W `ws` from the node's attributes, each axis by
/// transposedWindowAxis (support/window.h).
Result<Transposed> transposedOf(EvalContext &ctx, const Shape &xs, const Shape &ws) {
  if (xs.size() < 3 || ws.size() != xs.size()) return errorf("X is {} and W is {}", shapeText(xs), shapeText(ws));
  Transposed g;
  size_t k = g.k = xs.size() - 2;
  SF_ASSIGN(g.group, ctx.attrs().getInt("group", 1));
  g.n = xs[0], g.c = xs[1], g.mg = ws[1], g.m = g.mg * g.group;
  if (g.group <= 0 || ws[0] != g.c || g.c % g.group != 0) return errorf("X has {} channels, W {}", g.c, shapeText(ws));
  g.cg = g.c / g.group;
  g.kernel.assign(ws.begin() + 2, ws.end());
  SF_ASSIGN(g.stride, ctx.attrs().getInts("strides", std::vector<int64_t>(k, 1)));
  SF_ASSIGN(g.dil, ctx.attrs().getInts("dilations", std::vector<int64_t>(k, 1)));
  SF_ASSIGN(auto outPad, ctx.attrs().getInts("output_padding", std::vector<int64_t>(k, 0)));
  SF_ASSIGN(auto pads, ctx.attrs().getInts("pads", std::vector<int64_t>(2 * k, 0)));
  SF_ASSIGN(std::string autoPadText, ctx.attrs().getString("auto_pad", "NOTSET"));
  // Text other than auto_pad's four values reads as NOTSET here (the rule refuses it).
  AutoPad autoPad = parseAutoPad(autoPadText).value_or(AutoPad::NotSet);
  if (g.stride.size() != k || g.dil.size() != k || outPad.size() != k || pads.size() != 2 * k)
    return errorf("strides, dilations, output_padding or pads do not match {} spatial dims", k);
  g.in.assign(xs.begin() + 2, xs.end()), g.out.resize(k), g.lo.resize(k);
  std::vector<int64_t> outputShape;
  if (ctx.attrs().has("output_shape")) {
    SF_ASSIGN(outputShape, ctx.attrs().getInts("output_shape"));
    if (outputShape.size() == k + 2) outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
    if (outputShape.size() != k) return errorf("output_shape has {} dims", outputShape.size());
  }
  for (size_t i = 0; i < k; ++i) {
    std::optional<int64_t> outputLength;
    if (!outputShape.empty()) outputLength = outputShape[i];
    WindowAxis a = transposedWindowAxis(g.in[i], g.kernel[i], g.stride[i], g.dil[i], pads[i], pads[i + k], outPad[i],
                                        autoPad, outputLength);
    g.lo[i] = a.padBegin, g.out[i] = a.out;
    if (g.out[i] < 0) return errorf("a negative output size");
  }
  return g;
}

/// The flat output position each input position reaches through each tap: entry t * inSize + pi,
/// -1 where it falls outside the output (cropped by the pads).
std::vector<int64_t> reachTable(const Transposed &g) {
  const size_t k = g.k;
  const int64_t inSize = countOf(g.in), taps = countOf(g.kernel);
  std::vector<int64_t> ip(k), kp(k), reach(size_t(taps * inSize));
  for (int64_t t = 0; t < taps; ++t) {
    int64_t r2 = t;
    for (size_t d = k; d-- > 0;) kp[d] = r2 % g.kernel[d], r2 /= g.kernel[d];
    for (int64_t pi = 0; pi < inSize; ++pi) {
      int64_t rest = pi, off = 0;
      bool inside = true;
      for (size_t d = k; d-- > 0;) ip[d] = rest % g.in[d], rest /= g.in[d];
      for (size_t d = 0; d < k; ++d) {
        int64_t o = ip[d] * g.stride[d] + kp[d] * g.dil[d] - g.lo[d];
        if (o < 0 || o >= g.out[d]) inside = false;
        off = off * g.out[d] + o;
      }
      reach[size_t(t * inSize + pi)] = inside ? off : -1;
    }
  }
  return reach;
}

/// ConvTranspose in f32 into the zeroed output `p`: each (image, group): the columns W_g^T
/// [mg*taps, cg] times X_g [cg, positions] on sgemm (in tiles of input positions, at most 16 MB of
/// columns), then each column entry added to the output position its tap reaches (col2im).
Result<void> convTransposeColumns(EvalContext &ctx, const Transposed &g, const float *xv, const float *wv, float *p) {
  const int64_t n = g.n, c = g.c, cg = g.cg, m = g.m, mg = g.mg, group = g.group;
  const int64_t inSize = countOf(g.in), outSize = countOf(g.out), taps = countOf(g.kernel);
  std::vector<float> bias;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(auto bv, doubles(ctx.input(2)));
    if (int64_t(bv.size()) != m) return errorf("B has {} elements, not {}", bv.size(), m);
    bias.assign(bv.begin(), bv.end());
  }
  const std::vector<int64_t> reach = reachTable(g);
  const int64_t rows = mg * taps;
  const int64_t tile = std::max<int64_t>(1, std::min<int64_t>(inSize, (int64_t(1) << 22) / std::max<int64_t>(rows, 1)));
  std::vector<float> cols(size_t(rows * tile));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < group; ++gi) {
      const float *xg = xv + (b * c + gi * cg) * inSize;
      const float *wg = wv + gi * cg * rows;
      float *yg = p + (b * m + gi * mg) * outSize;
      for (int64_t p0 = 0; p0 < inSize; p0 += tile) {
        int64_t pn = std::min(tile, inSize - p0);
        sgemm(true, false, rows, pn, cg, 1.0f, wg, rows, xg + p0, inSize, 0.0f, cols.data(), pn);
        for (int64_t mm = 0; mm < mg; ++mm)
          for (int64_t t = 0; t < taps; ++t) {
            const float *col = cols.data() + (mm * taps + t) * pn;
            const int64_t *r = reach.data() + t * inSize + p0;
            float *ym = yg + mm * outSize;
            for (int64_t j = 0; j < pn; ++j)
              if (r[j] >= 0) ym[r[j]] += col[j];
          }
      }
      if (!bias.empty())
        for (int64_t mm = 0; mm < mg; ++mm) {
          float bv = bias[size_t(gi * mg + mm)];
          float *ym = yg + mm * outSize;
          for (int64_t q = 0; q < outSize; ++q) ym[q] += bv;
        }
    }
  return success();
}

/// ConvTranspose in f32 whose windows do not overlap (2-D, each stride at least its kernel,
/// dilations 1, one group, W a constant): every output element is one input position's product
/// with one tap or the bias alone. Per image one product on oneDNN, X^T [H*W, C] by W
/// [C, M*kh*kw], each row's M*kh*kw values then written at their output positions plus the bias
/// (a U-Net's 2x2 stride-2 upsampling), in the layout the executor keeps Y in (plain, channel
/// blocks or channels last: each channel's first element and the step between positions). X is
/// plain. False where this does not apply.
bool convTransposeDisjoint(EvalContext &ctx, const Transposed &g, const float *xv, const float *wv, float *p) {
  if (g.k != 2 || g.group != 1 || !ctx.inputIsConstant(1)) return false;
  const Layout layout = ctx.outputLayout();
  const int64_t block = channelBlock(layout);
  if (block && g.m % block != 0) return false;
  for (size_t d = 0; d < 2; ++d)
    if (g.dil[d] != 1 || g.kernel[d] > g.stride[d] || g.kernel[d] <= 0) return false;
  std::optional<Elements<float>> bias;
  if (ctx.hasInput(2)) {
    if (ctx.input(2).type() != ElementType::F32 || ctx.input(2).elementCount() != g.m) return false;
    bias.emplace(ctx.input(2));
  }
  const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1], kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.stride[0], sw = g.stride[1], top = g.lo[0], left = g.lo[1], taps = kh * kw, cols = g.m * taps;
  const int64_t inSize = H * W, outSize = OH * OW;
  if (inSize == 0 || g.c == 0 || cols == 0) return false;
  if (!ctx.admit(ElementType::F32, Shape{inSize, cols}).ok()) return false;
  // Every output position has its tap when the kernel fills its stride and the input reaches the end.
  const bool covered = kh == sh && kw == sw && OH + top <= H * sh && OW + left <= W * sw;
  // Channel o of image b starts at first(b, o); positions are `step` floats apart.
  const int64_t step = block ? block : layout == Layout::ChannelsLast ? g.m : 1;
  auto first = [&](int64_t b, int64_t o) {
    return block ? ((b * g.m + o - o % block) * outSize) + o % block
           : layout == Layout::ChannelsLast ? b * g.m * outSize + o
                                            : (b * g.m + o) * outSize;
  };
  if (!covered)
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t o = 0; o < g.m; ++o) {
        float *yo = p + first(b, o);
        const float v = bias ? (*bias)[size_t(o)] : 0.0f;
        for (int64_t q = 0; q < outSize; ++q) yo[q * step] = v;
      }
  std::vector<float> y(size_t(inSize * cols));
  for (int64_t b = 0; b < g.n; ++b) {
    if (!dnnlMatMul(inSize, g.c, cols, xv + b * g.c * inSize, wv, false, ctx.inputShared(1), nullptr, y.data(), true))
      return false; // oneDNN did not take it (the first image: nothing written but the bias)
    if (step > 1) {
      // A channel layout: each output position's channels are consecutive (a block's 8 or 16,
      // or all of them), so the position is the outer loop and the channels the inner one, read
      // `taps` apart in the product's row.
      const int64_t lanes = block ? block : g.m;
      for (int64_t i = 0; i < H; ++i)
        for (int64_t a = 0; a < kh; ++a) {
          const int64_t oy = i * sh + a - top;
          if (oy < 0 || oy >= OH) continue;
          for (int64_t j = 0; j < W; ++j)
            for (int64_t c = 0; c < kw; ++c) {
              const int64_t ox = j * sw + c - left;
              if (ox < 0 || ox >= OW) continue;
              const float *from = y.data() + (i * W + j) * cols + a * kw + c;
              for (int64_t o0 = 0; o0 < g.m; o0 += lanes) {
                float *to = p + first(b, o0) + (oy * OW + ox) * step;
                for (int64_t l = 0; l < lanes; ++l)
                  to[l] = from[(o0 + l) * taps] + (bias ? (*bias)[size_t(o0 + l)] : 0.0f);
              }
            }
        }
      continue;
    }
    for (int64_t o = 0; o < g.m; ++o) {
      const float bo = bias ? (*bias)[size_t(o)] : 0.0f;
      float *yo = p + first(b, o);
      for (int64_t i = 0; i < H; ++i)
        for (int64_t a = 0; a < kh; ++a) {
          const int64_t oy = i * sh + a - top;
          if (oy < 0 || oy >= OH) continue;
          float *row = yo + oy * OW * step;
          const float *from = y.data() + i * W * cols + o * taps + a * kw;
          for (int64_t j = 0; j < W; ++j)
            for (int64_t c = 0; c < kw; ++c) {
              const int64_t ox = j * sw + c - left;
              if (ox >= 0 && ox < OW) row[ox * step] = from[j * cols + c] + bo;
            }
        }
    }
  }
  return true;
}

/// ConvTranspose in f32 on oneDNN's deconvolution (W [c, m/group, kernel...] is its iohw
/// layout); false where oneDNN does not take the case (an output_padding past the end padding,
/// which oneDNN would need as a negative pad) or B's length is wrong (the loops then say so).
bool convTransposeOnDnnl(EvalContext &ctx, const Transposed &g, const float *xv, const float *wv, float *p) {
  WindowGeometry geo{g.n, g.c, g.m, g.group, g.in, g.kernel, g.stride, g.dil, g.lo, {}, g.out};
  for (size_t i = 0; i < g.k; ++i) {
    // out = (in - 1) * stride + (kernel - 1) * dilation + 1 - padBegin - padEnd
    int64_t end = (g.in[i] - 1) * g.stride[i] + (g.kernel[i] - 1) * g.dil[i] + 1 - g.lo[i] - g.out[i];
    if (end < 0) return false;
    geo.padEnd.push_back(end);
  }
  std::optional<Elements<float>> bias;
  if (ctx.hasInput(2)) {
    if (ctx.input(2).type() != ElementType::F32 || ctx.input(2).elementCount() != g.m) return false;
    bias.emplace(ctx.input(2));
  }
  return dnnlDeconv(geo, xv, wv, ctx.inputShared(1), ctx.inputIsConstant(1), bias ? bias->data() : nullptr, p);
}

/// ConvTranspose in the other types: every input element times every weight of its tap added,
/// in double, to the output position the tap reaches.
template <class T>
Result<void> convTransposeLoops(EvalContext &ctx, const Transposed &g, ElementType type, const Shape &outShape,
                                const T *xv, const T *wv) {
  const int64_t n = g.n, c = g.c, cg = g.cg, m = g.m, mg = g.mg, group = g.group;
  const int64_t inSize = countOf(g.in), outSize = countOf(g.out), taps = countOf(g.kernel);
  const std::vector<int64_t> reach = reachTable(g);
  std::vector<double> acc(static_cast<size_t>(n * m * outSize), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < group; ++gi)
      for (int64_t ci = 0; ci < cg; ++ci) {
        int64_t ch = gi * cg + ci;
        for (int64_t pi = 0; pi < inSize; ++pi) {
          double xvv = double(xv[size_t((b * c + ch) * inSize + pi)]);
          for (int64_t t = 0; t < taps; ++t) {
            const int64_t off = reach[size_t(t * inSize + pi)];
            if (off < 0) continue;
            for (int64_t mm = 0; mm < mg; ++mm)
              acc[size_t((b * m + gi * mg + mm) * outSize + off)] +=
                  xvv * double(wv[size_t((ch * mg + mm) * taps + t)]);
          }
        }
      }
  std::vector<double> bias;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(bias, doubles(ctx.input(2)));
    if (int64_t(bias.size()) != m) return errorf("B has {} elements, not {}", bias.size(), m);
  }
  Output<T> o(ctx, type, outShape);
  SF_ASSIGN(T *p, o.make());
  for (int64_t i = 0; i < n * m * outSize; ++i)
    p[i] = T(acc[size_t(i)] + (bias.empty() ? 0.0 : bias[size_t((i / outSize) % m)]));
  return o.finish(0);
}

Result<void> convTranspose(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &wt = ctx.input(1);
  SF_ASSIGN(Transposed g, transposedOf(ctx, x.shape(), wt.shape()));
  Shape outShape{g.n, g.m};
  outShape.insert(outShape.end(), g.out.begin(), g.out.end());
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xv(x), wv(wt);
    if constexpr (std::is_same_v<T, float>) {
      // X and Y may be kept in a channel layout (the executor's plan, as for Conv): X read
      // plain; Y written in its layout by the disjoint product, else moved into it after.
      Output<float> o(ctx, x.type(), outShape);
      SF_ASSIGN(float *p, o.makeForOverwrite());
      std::vector<float> plainX;
      SF_ASSIGN(const float *xp, plainInput(ctx, xv.data(), g.n, g.c, countOf(g.in), g.k, plainX));
      if (!convTransposeDisjoint(ctx, g, xp, wv.data(), p)) {
        if (!convTransposeOnDnnl(ctx, g, xp, wv.data(), p)) {
          std::fill(p, p + countOf(outShape), 0.0f);
          SF_TRY(convTransposeColumns(ctx, g, xp, wv.data(), p));
        }
        SF_TRY(toOutputLayout(ctx, p, g.n, g.m, countOf(g.out), g.k));
      }
      SF_TRY(o.finish(0));
      // What the output is proved to be within (EvalContext::inputBound), as a convolution's.
      if (float xBound = ctx.inputBound(0); xBound != EvalContext::kUnbounded && x.elementCount() > 0) {
        std::optional<Elements<float>> bias;
        if (ctx.hasInput(2) && ctx.input(2).type() == ElementType::F32 && ctx.input(2).elementCount() == g.m)
          bias.emplace(ctx.input(2));
        if (bias || !ctx.hasInput(2)) {
          double gain = transposedWeightGain(ctx.inputShared(1), ctx.inputIsConstant(1), wv.data(), g.group, g.cg,
                                             g.mg, countOf(g.kernel));
          ctx.setOutputBound(0, convBound(xBound, gain, bias ? bias->data() : nullptr, g.m));
        }
      }
      return success();
    } else {
      if (ctx.inputLayout() != Layout::Plain || ctx.outputLayout() != Layout::Plain)
        return errorf("a {} tensor kept in a channel layout", shortName(x.type()));
      return convTransposeLoops<T>(ctx, g, x.type(), outShape, xv.data(), wv.data());
    }
  });
}

} // namespace

Result<void> registerConvTransposeKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "ConvTranspose", convTranspose));
  r.findMutable("", "ConvTranspose")->kernelTakesBlocked = true; // as Conv: 2-D f32 in a channel layout
  return success();
}

} // namespace sf::eval::detail
