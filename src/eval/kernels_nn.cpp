// Neural-network kernels: MatMul, Gemm, Conv, MaxPool, AveragePool, the global pools,
// BatchNormalization (inference), LayerNormalization, Softmax, LogSoftmax, the reductions.
// Plain loops in the accumulation order a reader can check; speed is a later concern.
#include "blas.h"
#include "dnnl.h"
#include "kernel_util.h"
#include "shapeflow/ops/fused.h"
#include "shapeflow/support/pool_length.h"

#include <cmath>
#include <limits>

namespace sf::eval::detail {
namespace {

// ---- MatMul, Gemm ----

/// NumPy matmul's geometry: 1-D operands promoted, batch dims broadcast; A's and B's matrix
/// offsets (in matrices) for each batch index.
struct MatMulGeometry {
  int64_t m = 0, k = 0, n = 0;
  Shape batch, out;
  std::vector<int64_t> sta, stb;
  /// B is one matrix for every batch index and A has all of them, in order: the batch folds into
  /// A's rows (one product of batch*m rows, B packed once).
  bool foldsIntoRows = false;
  std::pair<int64_t, int64_t> offsets(int64_t bi) const {
    int64_t offA = 0, offB = 0, rest = bi;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t i = rest % batch[d];
      rest /= batch[d];
      offA += i * sta[d], offB += i * stb[d];
    }
    return {offA, offB};
  }
};

Result<MatMulGeometry> matmulGeometry(Shape sa, Shape sb) {
  if (sa.empty() || sb.empty()) return errorf("MatMul of a scalar");
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA) sa.insert(sa.begin(), 1);
  if (vecB) sb.push_back(1);
  MatMulGeometry g;
  g.m = sa[sa.size() - 2], g.k = sa.back(), g.n = sb.back();
  if (sb[sb.size() - 2] != g.k) return errorf("A has {} columns, B {} rows", g.k, sb[sb.size() - 2]);
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  SF_ASSIGN(g.batch, broadcastAll({ba, bb}));
  g.sta = broadcastStrides(ba, g.batch), g.stb = broadcastStrides(bb, g.batch);
  g.foldsIntoRows = ba == g.batch && std::all_of(g.stb.begin(), g.stb.end(), [](int64_t s) { return s == 0; });
  g.out = g.batch;
  if (!vecA) g.out.push_back(g.m);
  if (!vecB) g.out.push_back(g.n);
  return g;
}

Result<void> matmul(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  if (a.type() != b.type()) return errorf("A is {} and B is {}", shortName(a.type()), shortName(b.type()));
  SF_ASSIGN(MatMulGeometry g, matmulGeometry(a.shape(), b.shape()));
  const int64_t m = g.m, k = g.k, n = g.n, batches = countOf(g.batch);
  const Shape &out = g.out;
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("MatMul of bool");
    } else {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
      Elements<T> x(a), y(b);
      Output<T> o(ctx, a.type(), out);
      SF_ASSIGN(T *p, o.makeForOverwrite());
      if constexpr (std::is_same_v<T, float>) {
        // A constant B (a layer's weights) on oneDNN, packed once and kept: sgemm packs B again
        // on every call, as long as the product itself when A has few rows (a transformer's tokens).
        if (b.shape().size() == 2 && (g.foldsIntoRows || batches == 1) && ctx.inputIsConstant(1) &&
            dnnlMatMul(batches * m, k, n, x.data(), y.data(), false, ctx.inputShared(1), nullptr, p))
          return o.finish(0);
        if (g.foldsIntoRows) {
          sgemm(false, false, batches * m, n, k, 1.0f, x.data(), k, y.data(), n, 0.0f, p, n);
          return o.finish(0);
        }
        for (int64_t bi = 0; bi < batches; ++bi) {
          auto [offA, offB] = g.offsets(bi);
          sgemm(false, false, m, n, k, 1.0f, x.data() + offA * m * k, k, y.data() + offB * k * n, n, 0.0f,
                p + bi * m * n, n);
        }
        return o.finish(0);
      }
      std::vector<Acc> row(static_cast<size_t>(n));
      for (int64_t bi = 0; bi < batches; ++bi) {
        auto [offA, offB] = g.offsets(bi);
        const T *pa = x.data() + offA * m * k, *pb = y.data() + offB * k * n;
        T *pc = p + bi * m * n;
        for (int64_t i = 0; i < m; ++i) {
          std::fill(row.begin(), row.end(), Acc(0));
          for (int64_t kk = 0; kk < k; ++kk) {
            Acc av = Acc(pa[i * k + kk]);
            const T *br = pb + kk * n;
            for (int64_t j = 0; j < n; ++j) row[size_t(j)] = wrapAdd(row[size_t(j)], wrapMul(av, Acc(br[j])));
          }
          for (int64_t j = 0; j < n; ++j) pc[i * n + j] = T(row[size_t(j)]);
        }
      }
      return o.finish(0);
    }
  }, false);
}

Result<void> gemm(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(int64_t ta, ctx.attrs().getInt("transA", 0));
  SF_ASSIGN(int64_t tb, ctx.attrs().getInt("transB", 0));
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 1.0));
  SF_ASSIGN(double beta, ctx.attrs().getFloat("beta", 1.0));
  if (a.shape().size() != 2 || b.shape().size() != 2) return errorf("A and B must be matrices");
  int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  int64_t kb = tb ? b.shape()[1] : b.shape()[0], n = tb ? b.shape()[0] : b.shape()[1];
  if (k != kb) return errorf("A has {} columns, B {} rows (after transposes)", k, kb);
  Shape out{m, n};
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("Gemm of bool");
    } else {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      Elements<T> x(a), y(b);
      Output<T> o(ctx, a.type(), out);
      SF_ASSIGN(T *p, o.makeForOverwrite());
      std::vector<int64_t> cst;
      std::optional<Elements<T>> c;
      if (ctx.hasInput(2)) {
        SF_ASSIGN(Shape bc, broadcastAll({ctx.input(2).shape(), out}));
        if (bc != out) return errorf("C of shape {} does not broadcast to {}", shapeText(ctx.input(2).shape()), shapeText(out));
        cst = broadcastStrides(ctx.input(2).shape(), out);
        c.emplace(ctx.input(2));
      }
      if constexpr (std::is_same_v<T, float>) {
        // A layer (constant B, C a row of n or absent, alpha and beta 1) on oneDNN, as MatMul.
        bool rowBias = c && ctx.input(2).elementCount() == n && cst.size() == 2 && cst[0] == 0;
        if (!ta && alpha == 1.0 && (!c || (rowBias && beta == 1.0)) && ctx.inputIsConstant(1) &&
            dnnlMatMul(m, k, n, x.data(), y.data(), tb != 0, ctx.inputShared(1), c ? c->data() : nullptr, p))
          return o.finish(0);
        sgemm(ta != 0, tb != 0, m, n, k, float(alpha), x.data(), a.shape()[1], y.data(), b.shape()[1], 0.0f, p, n);
        if (c)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) p[i * n + j] += float(beta) * (*c)[size_t(i * cst[0] + j * cst[1])];
        return o.finish(0);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          Acc s = 0;
          for (int64_t kk = 0; kk < k; ++kk)
            s = wrapAdd(s, wrapMul(Acc(x[size_t(ta ? kk * m + i : i * k + kk)]), Acc(y[size_t(tb ? j * k + kk : kk * n + j)])));
          double v = double(s) * alpha;
          if (c) v += beta * double((*c)[size_t(i * cst[0] + j * cst[1])]);
          p[i * n + j] = toElement<T>(v);
        }
      return o.finish(0);
    }
  }, false);
}

// ---- windows: Conv and the pools ----

/// Spatial geometry of a window op over rank-k spatial dims.
struct Window {
  size_t k = 0;
  std::vector<int64_t> in, kernel, stride, dilation, padBegin, padEnd, out;
};

/// `pool`: the pooling ops' output lengths (pooledLength), where a window may overhang a small
/// input; for convolutions the window must fit.
Result<Window> windowOf(EvalContext &ctx, const Shape &x, std::vector<int64_t> kernel, bool ceilMode,
                        bool pool = false) {
  Window w;
  w.k = x.size() - 2;
  w.in.assign(x.begin() + 2, x.end());
  w.kernel = std::move(kernel);
  if (w.kernel.size() != w.k) return errorf("kernel has {} dims for {} spatial dims", w.kernel.size(), w.k);
  SF_ASSIGN(w.stride, ctx.attrs().getInts("strides", std::vector<int64_t>(w.k, 1)));
  SF_ASSIGN(w.dilation, ctx.attrs().getInts("dilations", std::vector<int64_t>(w.k, 1)));
  SF_ASSIGN(std::vector<int64_t> pads, ctx.attrs().getInts("pads", std::vector<int64_t>(2 * w.k, 0)));
  SF_ASSIGN(std::string autoPad, ctx.attrs().getString("auto_pad", "NOTSET"));
  if (w.stride.size() != w.k || w.dilation.size() != w.k || pads.size() != 2 * w.k)
    return errorf("strides, dilations or pads do not match {} spatial dims", w.k);
  w.padBegin.assign(pads.begin(), pads.begin() + long(w.k));
  w.padEnd.assign(pads.begin() + long(w.k), pads.end());
  w.out.resize(w.k);
  for (size_t i = 0; i < w.k; ++i) {
    if (w.stride[i] <= 0 || w.dilation[i] <= 0) return errorf("strides and dilations must be positive");
    int64_t ext = (w.kernel[i] - 1) * w.dilation[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t o = (w.in[i] + w.stride[i] - 1) / w.stride[i];
      int64_t total = std::max<int64_t>(0, (o - 1) * w.stride[i] + ext - w.in[i]);
      int64_t small = total / 2, big = total - small;
      w.padBegin[i] = autoPad == "SAME_UPPER" ? small : big;
      w.padEnd[i] = autoPad == "SAME_UPPER" ? big : small;
      w.out[i] = o;
      continue;
    }
    if (autoPad == "VALID") w.padBegin[i] = w.padEnd[i] = 0;
    int64_t span = w.in[i] + w.padBegin[i] + w.padEnd[i] - ext;
    auto o = pool ? pooledLength(w.in[i], ext, w.stride[i], w.padBegin[i], w.padEnd[i], ceilMode)
                  : std::optional<int64_t>(span >= 0 ? span / w.stride[i] + 1 : -1);
    if (!o || *o < 0)
      return errorf("the window ({}) is larger than the padded input ({})", ext,
                    w.in[i] + w.padBegin[i] + w.padEnd[i]);
    w.out[i] = *o;
  }
  return w;
}

/// Calls f(outFlat, windowOrigins) for each output position; origins per spatial dim.
template <class F> void forEachPosition(const Window &w, F &&f) {
  int64_t total = 1;
  for (int64_t o : w.out) total *= o;
  std::vector<int64_t> idx(w.k, 0);
  for (int64_t o = 0; o < total; ++o) {
    f(o, idx);
    for (size_t d = w.k; d-- > 0;) {
      if (++idx[d] < w.out[d]) break;
      idx[d] = 0;
    }
  }
}

/// Calls f(inputFlatOffset or -1 for padding, kernelFlat) for each tap of the window at `pos`.
template <class F> void forEachTap(const Window &w, const std::vector<int64_t> &pos, F &&f) {
  int64_t taps = 1;
  for (int64_t kk : w.kernel) taps *= kk;
  std::vector<int64_t> kidx(w.k, 0);
  for (int64_t t = 0; t < taps; ++t) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < w.k; ++d) {
      int64_t i = pos[d] * w.stride[d] - w.padBegin[d] + kidx[d] * w.dilation[d];
      if (i < 0 || i >= w.in[d]) inside = false;
      off = off * w.in[d] + i;
    }
    f(inside ? off : -1, t);
    for (size_t d = w.k; d-- > 0;) {
      if (++kidx[d] < w.kernel[d]) break;
      kidx[d] = 0;
    }
  }
}

/// The activation a FusedConv applies to its output, element by element.
template <class T> void applyPostOp(const PostOp &post, T *p, int64_t count) {
  if (post.kind == PostOp::Kind::Relu)
    for (int64_t i = 0; i < count; ++i) p[i] = p[i] < T(0) ? T(0) : p[i];
  if (post.kind == PostOp::Kind::Swish)
    for (int64_t i = 0; i < count; ++i)
      p[i] = T(double(p[i]) / (1.0 + std::exp(-double(post.alpha) * double(p[i]))));
}

/// Conv, with `post` applied to its output (FusedConv): in oneDNN's pass where it runs the
/// convolution, else after the loops.
Result<void> convWith(EvalContext &ctx, PostOp post) {
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
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x), ws(wt);
    std::optional<Elements<T>> bias;
    if (ctx.hasInput(2)) {
      if (ctx.input(2).elementCount() != m) return errorf("B has {} elements, not {}", ctx.input(2).elementCount(), m);
      bias.emplace(ctx.input(2));
    }
    Output<T> o(ctx, x.type(), out);
    SF_ASSIGN(T *p, o.makeForOverwrite());
    // Where the executor keeps the input or output in channel blocks (EvalContext::setBlocked)
    // and oneDNN does not take the case: the loops below on a plain copy of the input, the
    // output blocked after them.
    std::vector<float> plainX;
    const T *xdata = xs.data();
    if constexpr (std::is_same_v<T, float>) {
      WindowGeometry geo{n, c, m, group, w.in, w.kernel, w.stride, w.dilation, w.padBegin, w.padEnd, w.out};
      geo.srcBlocked = ctx.inputBlocked(), geo.dstBlocked = ctx.outputBlocked();
      if (dnnlConv(geo, xs.data(), ws.data(), ctx.inputShared(1), ctx.inputIsConstant(1),
                   bias ? bias->data() : nullptr, p, post))
        return o.finish(0);
      if (ctx.inputBlocked()) {
        if (c % 16 != 0 || w.in.size() != 2) return errorf("a blocked input of {} channels", c);
        plainX.resize(size_t(n * c * countOf(w.in)));
        reblock16(xs.data(), plainX.data(), n, c, countOf(w.in), false);
        xdata = plainX.data();
      }
    }
    if (ctx.outputBlocked() && !std::is_same_v<T, float>) return errorf("a blocked output of {}", shortName(x.type()));
    int64_t inSize = countOf(w.in), outSize = countOf(w.out), taps = countOf(w.kernel);
    int64_t mg = m / group;
    // The taps of every output position, computed once: input offset or -1, tap-major (the
    // positions of one tap are contiguous, as im2col reads them).
    std::vector<int64_t> tapOff(static_cast<size_t>(outSize * taps));
    forEachPosition(w, [&](int64_t po, const std::vector<int64_t> &pos) {
      forEachTap(w, pos, [&](int64_t off, int64_t t) { tapOff[size_t(t * outSize + po)] = off; });
    });
    if constexpr (std::is_same_v<T, float>) {
      // Where oneDNN does not run it: each (image, group): W_g [mg, cg*taps] times the input's columns [cg*taps, positions]
      // (im2col, in tiles of positions so that the columns stay within 16 MB), on sgemm. A 1x1
      // convolution with unit strides and no padding reads the input as its own columns.
      const int64_t kdim = cg * taps;
      bool direct = taps == 1 && outSize == inSize;
      for (int64_t po = 0; direct && po < outSize; ++po) direct = tapOff[size_t(po)] == po;
      const int64_t tile = std::max<int64_t>(1, std::min<int64_t>(outSize, (int64_t(1) << 22) / std::max<int64_t>(kdim, 1)));
      std::vector<float> col(direct ? 0 : size_t(kdim * tile));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t g = 0; g < group; ++g) {
          const float *wg = ws.data() + g * mg * kdim;
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
              float bv = (*bias)[size_t(g * mg + mm)];
              float *row = dst + mm * outSize;
              for (int64_t po = 0; po < outSize; ++po) row[po] += bv;
            }
        }
      applyPostOp(post, p, n * m * outSize);
      if (ctx.outputBlocked()) {
        if (m % 16 != 0 || w.out.size() != 2) return errorf("a blocked output of {} channels", m);
        std::vector<float> plainY(p, p + n * m * outSize);
        reblock16(plainY.data(), p, n, m, outSize, true);
      }
      return o.finish(0);
    }
    for (int64_t b = 0; b < n; ++b)
      for (int64_t g = 0; g < group; ++g)
        for (int64_t mm = 0; mm < mg; ++mm) {
          int64_t oc = g * mg + mm;
          T *dst = p + (b * m + oc) * outSize;
          for (int64_t po = 0; po < outSize; ++po) {
            double s = bias ? double((*bias)[size_t(oc)]) : 0.0;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const T *src = xdata + (b * c + g * cg + ci) * inSize;
              const T *wk = ws.data() + (oc * cg + ci) * taps;
              for (int64_t t = 0; t < taps; ++t) {
                int64_t off = tapOff[size_t(t * outSize + po)];
                if (off >= 0) s += double(src[off]) * double(wk[t]);
              }
            }
            dst[po] = T(s);
          }
        }
    applyPostOp(post, p, n * m * outSize);
    return o.finish(0);
  });
}

Result<void> conv(EvalContext &ctx) { return convWith(ctx, PostOp{}); }

/// FusedConv (ops/fused.h): Conv and its activation.
Result<void> fusedConv(EvalContext &ctx) {
  SF_ASSIGN(std::string activation, ctx.attrs().getString("activation", ""));
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 1.0));
  if (activation == "Relu") return convWith(ctx, {PostOp::Kind::Relu, 0.0f});
  if (activation == "Swish") return convWith(ctx, {PostOp::Kind::Swish, float(alpha)});
  return errorf("activation '{}'", activation);
}

Result<void> pool(EvalContext &ctx, bool isMax) {
  const Tensor &x = ctx.input(0);
  if (x.shape().size() < 3) return errorf("X is {}", shapeText(x.shape()));
  SF_ASSIGN(auto kernel, ctx.attrs().getInts("kernel_shape"));
  SF_ASSIGN(int64_t ceilMode, ctx.attrs().getInt("ceil_mode", 0));
  SF_ASSIGN(int64_t countPad, ctx.attrs().getInt("count_include_pad", 0));
  SF_ASSIGN(int64_t storageOrder, ctx.attrs().getInt("storage_order", 0));
  SF_ASSIGN(Window w, windowOf(ctx, x.shape(), kernel, ceilMode != 0, true));
  if (!isMax) w.dilation.assign(w.k, w.dilation.empty() ? 1 : w.dilation[0]), (void)0;
  int64_t n = x.shape()[0], c = x.shape()[1];
  Shape out{n, c};
  out.insert(out.end(), w.out.begin(), w.out.end());
  bool indices = isMax && ctx.numOutputs() > 1;
  if (!isMax && !isFloat(x.type())) return errorf("AveragePool of {}", shortName(x.type()));
  return dispatch(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), out);
    SF_ASSIGN(T *p, o.makeForOverwrite());
    if constexpr (std::is_same_v<T, float>) {
      WindowGeometry geo{n, c, c, 1, w.in, w.kernel, w.stride, w.dilation, w.padBegin, w.padEnd, w.out};
      PoolKind kind = isMax ? PoolKind::Max
                      : countPad ? PoolKind::AverageIncludingPads : PoolKind::AverageExcludingPads;
      if (!indices && dnnlPool(geo, kind, xs.data(), p)) return o.finish(0);
    }
    Output<int64_t> oi(ctx, ElementType::I64, out);
    int64_t *pi = nullptr;
    if (indices) {
      SF_ASSIGN(pi, oi.make());
    }
    int64_t inSize = countOf(w.in), outSize = countOf(w.out);
    for (int64_t bc = 0; bc < n * c; ++bc) {
      const T *src = xs.data() + bc * inSize;
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
          // count_include_pad counts the explicit pads inside the window (not ceil_mode's
          // overhang past them).
          int64_t denom = count;
          if (countPad) {
            denom = 1;
            for (size_t d = 0; d < w.k; ++d) {
              int64_t lo = pos[d] * w.stride[d] - w.padBegin[d];
              int64_t hi = std::min(lo + (w.kernel[d] - 1) * w.dilation[d], w.in[d] + w.padEnd[d] - 1);
              denom *= (hi - lo) / w.dilation[d] + 1;
            }
          }
          (void)padded;
          p[bc * outSize + po] = T(denom ? sum / double(denom) : 0.0);
        }
      });
    }
    SF_TRY(o.finish(0));
    if (pi) SF_TRY(oi.finish(1));
    return success();
  }, false);
}

Result<void> globalPool(EvalContext &ctx, bool isMax) {
  const Tensor &x = ctx.input(0);
  if (x.shape().size() < 2) return errorf("X is {}", shapeText(x.shape()));
  Shape out = x.shape();
  for (size_t d = 2; d < out.size(); ++d) out[d] = 1;
  int64_t inner = 1;
  for (size_t d = 2; d < x.shape().size(); ++d) inner *= x.shape()[d];
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), out);
    SF_ASSIGN(T *p, o.make());
    for (int64_t bc = 0; bc < x.shape()[0] * x.shape()[1]; ++bc) {
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

// ---- normalisations, softmax, reductions ----

Result<void> batchNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  SF_ASSIGN(int64_t training, ctx.attrs().getInt("training_mode", 0));
  if (x.shape().size() < 2) return errorf("X is {}", shapeText(x.shape()));
  int64_t n = x.shape()[0], c = x.shape()[1], inner = x.elementCount() / std::max<int64_t>(n * c, 1);
  if (training) {
    // The batch's own statistics normalise it; the running ones move toward them by momentum.
    SF_ASSIGN(double momentum, ctx.attrs().getFloat("momentum", 0.9));
    SF_ASSIGN(auto xv, doubles(x));
    SF_ASSIGN(auto scale, doubles(ctx.input(1)));
    SF_ASSIGN(auto bias, doubles(ctx.input(2)));
    SF_ASSIGN(auto runMean, doubles(ctx.input(3)));
    SF_ASSIGN(auto runVar, doubles(ctx.input(4)));
    std::vector<double> y(xv.size()), mean(static_cast<size_t>(c), 0.0), var(static_cast<size_t>(c), 0.0);
    double count = double(n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) mean[size_t(ch)] += xv[size_t((b * c + ch) * inner + i)] / count;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          double d = xv[size_t((b * c + ch) * inner + i)] - mean[size_t(ch)];
          var[size_t(ch)] += d * d / count;
        }
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          size_t at = size_t((b * c + ch) * inner + i);
          y[at] = (xv[at] - mean[size_t(ch)]) / std::sqrt(var[size_t(ch)] + eps) * scale[size_t(ch)] + bias[size_t(ch)];
        }
    SF_ASSIGN(Tensor yt, Tensor::fromDoubles(x.type(), x.shape(), y));
    SF_TRY(ctx.setOutput(0, std::move(yt)));
    for (int64_t ch = 0; ch < c; ++ch) {
      runMean[size_t(ch)] = runMean[size_t(ch)] * momentum + mean[size_t(ch)] * (1 - momentum);
      runVar[size_t(ch)] = runVar[size_t(ch)] * momentum + var[size_t(ch)] * (1 - momentum);
    }
    if (ctx.numOutputs() > 1) {
      SF_ASSIGN(Tensor m, Tensor::fromDoubles(ctx.input(3).type(), ctx.input(3).shape(), runMean));
      SF_TRY(ctx.setOutput(1, std::move(m)));
    }
    if (ctx.numOutputs() > 2) {
      SF_ASSIGN(Tensor v, Tensor::fromDoubles(ctx.input(4).type(), ctx.input(4).shape(), runVar));
      SF_TRY(ctx.setOutput(2, std::move(v)));
    }
    return success();
  }
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    SF_ASSIGN(auto scale, doubles(ctx.input(1)));
    SF_ASSIGN(auto bias, doubles(ctx.input(2)));
    SF_ASSIGN(auto mean, doubles(ctx.input(3)));
    SF_ASSIGN(auto var, doubles(ctx.input(4)));
    if (int64_t(scale.size()) != c || int64_t(bias.size()) != c || int64_t(mean.size()) != c || int64_t(var.size()) != c)
      return errorf("scale, B, mean and var must have {} elements", c);
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), x.shape());
    SF_ASSIGN(T *p, o.make());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch) {
        double k = scale[size_t(ch)] / std::sqrt(var[size_t(ch)] + eps);
        double sh = bias[size_t(ch)] - mean[size_t(ch)] * k;
        for (int64_t i = 0; i < inner; ++i) {
          size_t at = size_t((b * c + ch) * inner + i);
          p[at] = T(double(xs[at]) * k + sh);
        }
      }
    return o.finish(0);
  });
}

Result<void> layerNorm(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-5));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, x.shape().size()));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (size_t d = axis; d < x.shape().size(); ++d) inner *= x.shape()[d];
  Shape statShape = x.shape();
  for (size_t d = axis; d < statShape.size(); ++d) statShape[d] = 1;
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Shape normShape(x.shape().begin() + long(axis), x.shape().end());
    std::vector<double> scale, bias;
    SF_ASSIGN(scale, doubles(ctx.input(1)));
    if (ctx.hasInput(2)) {
      SF_ASSIGN(bias, doubles(ctx.input(2)));
    }
    // Scale and B broadcast to the normalised shape, once (not per element).
    auto expand = [&](const std::vector<double> &v, const Shape &s) {
      std::vector<double> full(static_cast<size_t>(inner));
      auto st = broadcastStrides(s, normShape);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t off = 0, rest = i;
        for (size_t d = normShape.size(); d-- > 0;) {
          off += (rest % normShape[d]) * st[d];
          rest /= normShape[d];
        }
        full[size_t(i)] = v[size_t(off)];
      }
      return full;
    };
    for (size_t k : {size_t(1), size_t(2)}) {
      if (!ctx.hasInput(k)) continue;
      auto b = broadcastAll({ctx.input(k).shape(), normShape});
      if (!b.ok() || *b != normShape)
        return errorf("{} of shape {} does not broadcast to the normalised shape {}", k == 1 ? "Scale" : "B",
                      shapeText(ctx.input(k).shape()), shapeText(normShape));
    }
    scale = expand(scale, ctx.input(1).shape());
    if (!bias.empty()) bias = expand(bias, ctx.input(2).shape());
    Output<T> o(ctx, x.type(), x.shape());
    SF_ASSIGN(T *p, o.make());
    Output<float> om(ctx, ElementType::F32, statShape), oi(ctx, ElementType::F32, statShape);
    float *pm = nullptr, *pi = nullptr;
    if (ctx.numOutputs() > 1) {
      SF_ASSIGN(pm, om.make());
    }
    if (ctx.numOutputs() > 2) {
      SF_ASSIGN(pi, oi.make());
    }
    for (int64_t r = 0; r < outer; ++r) {
      double mean = 0, sq = 0;
      for (int64_t i = 0; i < inner; ++i) mean += double(xs[size_t(r * inner + i)]);
      mean /= double(inner);
      for (int64_t i = 0; i < inner; ++i) {
        double d = double(xs[size_t(r * inner + i)]) - mean;
        sq += d * d;
      }
      double inv = 1 / std::sqrt(sq / double(inner) + eps);
      for (int64_t i = 0; i < inner; ++i) {
        double v = (double(xs[size_t(r * inner + i)]) - mean) * inv * scale[size_t(i)];
        if (!bias.empty()) v += bias[size_t(i)];
        p[r * inner + i] = T(v);
      }
      if (pm) pm[r] = float(mean);
      if (pi) pi[r] = float(inv);
    }
    SF_TRY(o.finish(0));
    if (pm) SF_TRY(om.finish(1));
    if (pi) SF_TRY(oi.finish(2));
    return success();
  });
}

Result<void> softmax(EvalContext &ctx, bool log) {
  const Tensor &x = ctx.input(0);
  bool legacy = ctx.opset() < 13;
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", legacy ? 1 : -1));
  size_t r = x.shape().size();
  if (r == 0) return errorf("Softmax of a scalar");
  SF_ASSIGN(size_t axis, normAxis(axisAttr, r));
  // Before opset 13 the input is seen as a matrix [outer, inner] at the axis; since 13 the
  // softmax runs along the one axis.
  int64_t outer = 1, len = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  if (legacy) {
    for (size_t d = axis; d < r; ++d) len *= x.shape()[d];
  } else {
    len = x.shape()[axis];
    for (size_t d = axis + 1; d < r; ++d) inner *= x.shape()[d];
  }
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    Output<T> o(ctx, x.type(), x.shape());
    SF_ASSIGN(T *p, o.makeForOverwrite());
    if (inner == 1 && !log) {
      // Along contiguous rows (the last axis): each exponential once, kept for the division.
      std::vector<double> e(static_cast<size_t>(len));
      for (int64_t a = 0; a < outer; ++a) {
        const T *row = xs.data() + a * len;
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t i = 0; i < len; ++i) mx = std::max(mx, double(row[i]));
        for (int64_t i = 0; i < len; ++i) sum += e[size_t(i)] = std::exp(double(row[i]) - mx);
        for (int64_t i = 0; i < len; ++i) p[a * len + i] = T(e[size_t(i)] / sum);
      }
      return o.finish(0);
    }
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t b = 0; b < inner; ++b) {
        auto idx = [&](int64_t i) { return size_t((a * len + i) * inner + b); };
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < len; ++i) mx = std::max(mx, double(xs[idx(i)]));
        double sum = 0;
        for (int64_t i = 0; i < len; ++i) sum += std::exp(double(xs[idx(i)]) - mx);
        for (int64_t i = 0; i < len; ++i) {
          double v = double(xs[idx(i)]) - mx;
          p[idx(i)] = T(log ? v - std::log(sum) : std::exp(v) / sum);
        }
      }
    return o.finish(0);
  });
}

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

/// The reductions: axes from the attribute before `inputSince`, else from input 1.
KernelFn reduce(Red kind, int64_t inputSince) {
  return [kind, inputSince](EvalContext &ctx) -> Result<void> {
    const Tensor &x = ctx.input(0);
    size_t r = x.shape().size();
    std::vector<int64_t> axes;
    if (ctx.opset() >= inputSince) {
      if (ctx.hasInput(1)) {
        SF_ASSIGN(axes, ints(ctx.input(1)));
      }
    } else {
      SF_ASSIGN(axes, ctx.attrs().getInts("axes", {}));
    }
    SF_ASSIGN(int64_t keep, ctx.attrs().getInt("keepdims", 1));
    SF_ASSIGN(int64_t noop, ctx.attrs().getInt("noop_with_empty_axes", 0));
    std::vector<bool> red(r, axes.empty() && !noop);
    std::vector<bool> named(r, false);
    for (int64_t a : axes) {
      SF_ASSIGN(size_t i, normAxis(a, r));
      if (named[i]) return errorf("axis {} is repeated in the axes", a);
      named[i] = red[i] = true;
    }
    Shape out;
    for (size_t d = 0; d < r; ++d)
      if (!red[d]) out.push_back(x.shape()[d]);
      else if (keep) out.push_back(1);
    Shape kept = x.shape();
    for (size_t d = 0; d < r; ++d)
      if (red[d]) kept[d] = 1;
    return dispatch(x.type(), [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        return errorf("reduction of bool");
      } else {
        Elements<T> xs(x);
        int64_t n = countOf(kept);
        // Over the trailing axes (a layer norm's mean, a softmax's sum): row by row, each in
        // four partial sums (the order of additions in double; the result rounds the same but
        // for a last-place tie in rare rows).
        size_t firstReduced = r;
        while (firstReduced > 0 && red[firstReduced - 1]) --firstReduced;
        bool trailing = firstReduced < r && std::none_of(red.begin(), red.begin() + long(firstReduced), [](bool b) { return b; });
        bool simple = kind == Red::Sum || kind == Red::Mean || kind == Red::SumSquare || kind == Red::Max ||
                      kind == Red::Min || kind == Red::L1 || kind == Red::L2;
        if (trailing && simple && n > 0) {
          int64_t len = countOf(x.shape()) / n;
          Output<T> o(ctx, x.type(), out);
          SF_ASSIGN(T *p, o.makeForOverwrite());
          const T *data = xs.data();
          for (int64_t i = 0; i < n; ++i) {
            const T *row = data + i * len;
            double a;
            if (kind == Red::Max || kind == Red::Min) {
              double lanes[4];
              std::fill(lanes, lanes + 4, kind == Red::Max ? -std::numeric_limits<double>::infinity()
                                                           : std::numeric_limits<double>::infinity());
              for (int64_t j = 0; j < len; ++j) {
                double v = double(row[j]);
                double &l = lanes[j & 3];
                l = kind == Red::Max ? std::max(l, v) : std::min(l, v);
              }
              a = lanes[0];
              for (int k = 1; k < 4; ++k) a = kind == Red::Max ? std::max(a, lanes[k]) : std::min(a, lanes[k]);
            } else {
              double lanes[4] = {0, 0, 0, 0};
              int64_t j = 0;
              for (; j + 4 <= len; j += 4)
                for (int k = 0; k < 4; ++k) {
                  double v = double(row[j + k]);
                  lanes[k] += kind == Red::SumSquare || kind == Red::L2 ? v * v : kind == Red::L1 ? std::abs(v) : v;
                }
              for (; j < len; ++j) {
                double v = double(row[j]);
                lanes[0] += kind == Red::SumSquare || kind == Red::L2 ? v * v : kind == Red::L1 ? std::abs(v) : v;
              }
              a = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
              if (kind == Red::Mean) a /= double(len);
              if (kind == Red::L2) a = std::sqrt(a);
            }
            p[i] = toElement<T>(a);
          }
          return o.finish(0);
        }
        std::vector<double> acc(size_t(n), kind == Red::Max   ? -std::numeric_limits<double>::infinity()
                                           : kind == Red::Min ? std::numeric_limits<double>::infinity()
                                           : kind == Red::Prod ? 1.0
                                                               : 0.0);
        std::vector<double> mx;
        if (kind == Red::LogSumExp) {
          mx.assign(size_t(n), -std::numeric_limits<double>::infinity());
          std::array<std::vector<int64_t>, 1> st{broadcastStrides(kept, x.shape())};
          forEachBroadcast<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1> &f) {
            mx[size_t(f[0])] = std::max(mx[size_t(f[0])], double(xs[size_t(i)]));
          });
        }
        std::array<std::vector<int64_t>, 1> st{broadcastStrides(kept, x.shape())};
        int64_t count = countOf(x.shape()) / std::max<int64_t>(n, 1);
        forEachBroadcast<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1> &f) {
          double v = double(xs[size_t(i)]);
          double &a = acc[size_t(f[0])];
          switch (kind) {
          case Red::Sum: case Red::Mean: case Red::LogSum: a += v; break;
          case Red::Max: a = std::max(a, v); break;
          case Red::Min: a = std::min(a, v); break;
          case Red::Prod: a *= v; break;
          case Red::L1: a += std::abs(v); break;
          case Red::L2: case Red::SumSquare: a += v * v; break;
          case Red::LogSumExp: a += std::exp(v - mx[size_t(f[0])]); break;
          }
        });
        Output<T> o(ctx, x.type(), out);
        SF_ASSIGN(T *p, o.make());
        for (int64_t i = 0; i < n; ++i) {
          double a = acc[size_t(i)];
          if (kind == Red::Mean) a /= double(count);
          if (kind == Red::L2) a = std::sqrt(a);
          if (kind == Red::LogSum) a = std::log(a);
          if (kind == Red::LogSumExp) a = std::log(a) + mx[size_t(i)];
          p[i] = toElement<T>(a);
        }
        return o.finish(0);
      }
    });
  };
}

KernelFn argReduce(bool isMax) {
  return [isMax](EvalContext &ctx) -> Result<void> {
    const Tensor &x = ctx.input(0);
    SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
    SF_ASSIGN(int64_t keep, ctx.attrs().getInt("keepdims", 1));
    SF_ASSIGN(int64_t last, ctx.attrs().getInt("select_last_index", 0));
    SF_ASSIGN(size_t axis, normAxis(axisAttr, x.shape().size()));
    int64_t outer = 1, len = x.shape()[axis], inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (size_t d = axis + 1; d < x.shape().size(); ++d) inner *= x.shape()[d];
    Shape out = x.shape();
    if (keep) out[axis] = 1;
    else out.erase(out.begin() + long(axis));
    return dispatch(x.type(), [&](auto tag) -> Result<void> {
      using T = typename decltype(tag)::type;
      Elements<T> xs(x);
      Output<int64_t> o(ctx, ElementType::I64, out);
      SF_ASSIGN(int64_t *p, o.make());
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t b = 0; b < inner; ++b) {
          int64_t best = 0;
          for (int64_t i = 1; i < len; ++i) {
            T v = xs[size_t((a * len + i) * inner + b)], w = xs[size_t((a * len + best) * inner + b)];
            if (isMax ? (v > w || (last && v == w)) : (v < w || (last && v == w))) best = i;
          }
          p[a * inner + b] = best;
        }
      return o.finish(0);
    }, false);
  };
}

Result<void> convTranspose(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &wt = ctx.input(1);
  const Shape &xs = x.shape(), &ws = wt.shape();
  if (xs.size() < 3 || ws.size() != xs.size()) return errorf("X is {} and W is {}", shapeText(xs), shapeText(ws));
  size_t k = xs.size() - 2;
  SF_ASSIGN(int64_t group, ctx.attrs().getInt("group", 1));
  int64_t n = xs[0], c = xs[1], mg = ws[1], m = mg * group;
  if (group <= 0 || ws[0] != c || c % group != 0) return errorf("X has {} channels, W {}", c, shapeText(ws));
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  SF_ASSIGN(auto stride, ctx.attrs().getInts("strides", std::vector<int64_t>(k, 1)));
  SF_ASSIGN(auto dil, ctx.attrs().getInts("dilations", std::vector<int64_t>(k, 1)));
  SF_ASSIGN(auto outPad, ctx.attrs().getInts("output_padding", std::vector<int64_t>(k, 0)));
  SF_ASSIGN(auto pads, ctx.attrs().getInts("pads", std::vector<int64_t>(2 * k, 0)));
  SF_ASSIGN(std::string autoPad, ctx.attrs().getString("auto_pad", "NOTSET"));
  if (stride.size() != k || dil.size() != k || outPad.size() != k || pads.size() != 2 * k)
    return errorf("strides, dilations, output_padding or pads do not match {} spatial dims", k);
  std::vector<int64_t> in(xs.begin() + 2, xs.end()), out(k), lo(k);
  std::vector<int64_t> outputShape;
  if (ctx.attrs().has("output_shape")) {
    SF_ASSIGN(outputShape, ctx.attrs().getInts("output_shape"));
    if (outputShape.size() == k + 2) outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
    if (outputShape.size() != k) return errorf("output_shape has {} dims", outputShape.size());
  }
  for (size_t i = 0; i < k; ++i) {
    int64_t full = stride[i] * (in[i] - 1) + outPad[i] + (kernel[i] - 1) * dil[i] + 1;
    if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t want = !outputShape.empty() ? outputShape[i] : in[i] * stride[i];
      int64_t total = full - want;
      bool upper = autoPad != "SAME_LOWER";
      lo[i] = upper ? total / 2 : total - total / 2;
      out[i] = want;
    } else {
      if (autoPad == "VALID") pads[i] = pads[i + k] = 0;
      lo[i] = pads[i];
      out[i] = full - pads[i] - pads[i + k];
    }
    if (out[i] < 0) return errorf("a negative output size");
  }
  Shape outShape{n, m};
  outShape.insert(outShape.end(), out.begin(), out.end());
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xv(x), wv(wt);
    int64_t inSize = countOf(in), outSize = countOf(out), taps = countOf(kernel);
    std::vector<int64_t> ip(k), kp(k);
    int64_t cg = c / group;
    if constexpr (std::is_same_v<T, float>) {
      // Each (image, group): the columns W_g^T [mg*taps, cg] times X_g [cg, positions] on sgemm
      // (in tiles of input positions, at most 16 MB of columns), then each column entry added
      // to the output position its tap reaches (col2im).
      std::vector<float> bias;
      if (ctx.hasInput(2)) {
        SF_ASSIGN(auto bv, doubles(ctx.input(2)));
        if (int64_t(bv.size()) != m) return errorf("B has {} elements, not {}", bv.size(), m);
        bias.assign(bv.begin(), bv.end());
      }
      Output<float> o(ctx, x.type(), outShape);
      SF_ASSIGN(float *p, o.make());
      // The output offset of input position pi through tap t, or -1 (outside).
      std::vector<int64_t> reach(size_t(taps * inSize));
      for (int64_t t = 0; t < taps; ++t) {
        int64_t r2 = t;
        for (size_t d = k; d-- > 0;) kp[d] = r2 % kernel[d], r2 /= kernel[d];
        for (int64_t pi = 0; pi < inSize; ++pi) {
          int64_t rest = pi, off = 0;
          bool inside = true;
          for (size_t d = k; d-- > 0;) ip[d] = rest % in[d], rest /= in[d];
          for (size_t d = 0; d < k; ++d) {
            int64_t oo = ip[d] * stride[d] + kp[d] * dil[d] - lo[d];
            if (oo < 0 || oo >= out[d]) inside = false;
            off = off * out[d] + oo;
          }
          reach[size_t(t * inSize + pi)] = inside ? off : -1;
        }
      }
      const int64_t rows = mg * taps;
      const int64_t tile = std::max<int64_t>(1, std::min<int64_t>(inSize, (int64_t(1) << 22) / std::max<int64_t>(rows, 1)));
      std::vector<float> cols(size_t(rows * tile));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t g = 0; g < group; ++g) {
          const float *xg = xv.data() + (b * c + g * cg) * inSize;
          const float *wg = wv.data() + g * cg * rows;
          float *yg = p + (b * m + g * mg) * outSize;
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
              float bv = bias[size_t(g * mg + mm)];
              float *ym = yg + mm * outSize;
              for (int64_t q = 0; q < outSize; ++q) ym[q] += bv;
            }
        }
      return o.finish(0);
    }
    std::vector<double> acc(static_cast<size_t>(n * m * outSize), 0.0);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t g = 0; g < group; ++g)
        for (int64_t ci = 0; ci < cg; ++ci) {
          int64_t ch = g * cg + ci;
          for (int64_t pi = 0; pi < inSize; ++pi) {
            int64_t rest = pi;
            for (size_t d = k; d-- > 0;) ip[d] = rest % in[d], rest /= in[d];
            double xvv = double(xv[size_t((b * c + ch) * inSize + pi)]);
            for (int64_t t = 0; t < taps; ++t) {
              int64_t r2 = t, off = 0;
              bool inside = true;
              for (size_t d = k; d-- > 0;) kp[d] = r2 % kernel[d], r2 /= kernel[d];
              for (size_t d = 0; d < k; ++d) {
                int64_t o = ip[d] * stride[d] + kp[d] * dil[d] - lo[d];
                if (o < 0 || o >= out[d]) inside = false;
                off = off * out[d] + o;
              }
              if (!inside) continue;
              for (int64_t mm = 0; mm < mg; ++mm)
                acc[size_t((b * m + g * mg + mm) * outSize + off)] +=
                    xvv * double(wv[size_t((ch * mg + mm) * taps + t)]);
            }
          }
        }
    std::vector<double> bias;
    if (ctx.hasInput(2)) {
      SF_ASSIGN(bias, doubles(ctx.input(2)));
      if (int64_t(bias.size()) != m) return errorf("B has {} elements, not {}", bias.size(), m);
    }
    Output<T> o(ctx, x.type(), outShape);
    SF_ASSIGN(T *p, o.make());
    for (int64_t i = 0; i < n * m * outSize; ++i)
      p[i] = T(acc[size_t(i)] + (bias.empty() ? 0.0 : bias[size_t((i / outSize) % m)]));
    return o.finish(0);
  });
}

// ---- integer and quantized MatMul and Conv, computed exactly in doubles ----

/// Batched NumPy matmul of doubles (1-D operands promoted), returning the output shape.
Result<std::pair<Shape, std::vector<double>>> matmulDoubles(const std::vector<double> &a, const Shape &sa,
                                                            const std::vector<double> &b, const Shape &sb) {
  SF_ASSIGN(MatMulGeometry g, matmulGeometry(sa, sb));
  const int64_t m = g.m, k = g.k, n = g.n;
  std::vector<double> y(static_cast<size_t>(countOf(g.batch) * m * n), 0.0);
  for (int64_t bi = 0; bi < countOf(g.batch); ++bi) {
    auto [offA, offB] = g.offsets(bi);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t kk = 0; kk < k; ++kk) {
        double av = a[size_t((offA * m + i) * k + kk)];
        for (int64_t j = 0; j < n; ++j) y[size_t((bi * m + i) * n + j)] += av * b[size_t((offB * k + kk) * n + j)];
      }
  }
  return std::pair{g.out, y};
}

/// x - zero point, the zero point per tensor or per index along `axis` (rows of A, columns of
/// B, output channels of W). A per-index zero point must have one element per index of an axis
/// that exists (`axis` may be negative: an operand of too low a rank has none).
Result<std::vector<double>> shifted(std::vector<double> v, const Shape &s, const std::vector<double> &zp,
                                    int64_t axis, const char *name) {
  if (zp.empty()) return v;
  if (zp.size() == 1) {
    for (double &x : v) x -= zp[0];
    return v;
  }
  if (axis < 0 || axis >= int64_t(s.size()))
    return errorf("{} has {} elements; with an operand of shape {} it must have one", name, zp.size(),
                  shapeText(s));
  const int64_t length = s[size_t(axis)];
  if (int64_t(zp.size()) != length)
    return errorf("{} has {} elements; it must have one, or one per index of axis {} of {}", name,
                  zp.size(), axis, shapeText(s));
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < s.size(); ++d) inner *= s[d];
  for (size_t i = 0; i < v.size(); ++i) v[i] -= zp[size_t((int64_t(i) / inner) % length)];
  return v;
}

Result<std::vector<double>> optionalDoubles(EvalContext &ctx, size_t i) {
  if (!ctx.hasInput(i)) return std::vector<double>{};
  return doubles(ctx.input(i));
}

Result<void> matmulInteger(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto bv, doubles(b));
  SF_ASSIGN(auto azp, optionalDoubles(ctx, 2));
  SF_ASSIGN(auto bzp, optionalDoubles(ctx, 3));
  size_t ra = a.shape().size(), rb = b.shape().size();
  SF_ASSIGN(av, shifted(std::move(av), a.shape(), azp, ra >= 2 ? int64_t(ra) - 2 : 0, "a_zero_point"));
  SF_ASSIGN(bv, shifted(std::move(bv), b.shape(), bzp, int64_t(rb) - 1, "b_zero_point"));
  SF_ASSIGN(auto r, matmulDoubles(av, a.shape(), bv, b.shape()));
  SF_TRY(ctx.admit(ElementType::I32, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::I32, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

Result<std::pair<double, double>> quantRange(ElementType t) {
  if (t == ElementType::U8) return std::pair{0.0, 255.0};
  if (t == ElementType::I8) return std::pair{-128.0, 127.0};
  return errorf("quantized type {} is not supported", shortName(t));
}

Result<void> qlinearMatMul(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(3);
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto as, doubles(ctx.input(1)));
  SF_ASSIGN(auto azp, doubles(ctx.input(2)));
  SF_ASSIGN(auto bv, doubles(b));
  SF_ASSIGN(auto bs, doubles(ctx.input(4)));
  SF_ASSIGN(auto bzp, doubles(ctx.input(5)));
  SF_ASSIGN(auto ys, doubles(ctx.input(6)));
  SF_ASSIGN(auto yzp, doubles(ctx.input(7)));
  if (as.size() != 1 || bs.size() != 1 || ys.size() != 1 || yzp.size() != 1)
    return errorf("per-axis scales are not supported by this kernel");
  SF_ASSIGN(av, shifted(std::move(av), a.shape(), azp, int64_t(a.shape().size()) - 2, "a_zero_point"));
  SF_ASSIGN(bv, shifted(std::move(bv), b.shape(), bzp, int64_t(b.shape().size()) - 1, "b_zero_point"));
  SF_ASSIGN(auto r, matmulDoubles(av, a.shape(), bv, b.shape()));
  ElementType out = ctx.input(7).type();
  SF_ASSIGN(auto range, quantRange(out));
  double k = as[0] * bs[0] / ys[0];
  for (double &v : r.second) v = std::clamp(std::nearbyint(v * k) + yzp[0], range.first, range.second);
  SF_TRY(ctx.admit(out, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

/// Conv over doubles (X [N,C,...], W [M,C/group,...]) with the node's window attributes.
Result<std::pair<Shape, std::vector<double>>> convDoubles(EvalContext &ctx, const std::vector<double> &xs,
                                                          const Shape &xShape, const std::vector<double> &ws,
                                                          const Shape &wShape) {
  SF_ASSIGN(int64_t group, ctx.attrs().getInt("group", 1));
  int64_t n = xShape[0], c = xShape[1], m = wShape[0], cg = wShape[1];
  if (group <= 0 || c != cg * group || m % group != 0) return errorf("channels do not match the groups");
  std::vector<int64_t> kernel(wShape.begin() + 2, wShape.end());
  SF_ASSIGN(Window w, windowOf(ctx, xShape, kernel, false));
  Shape out{n, m};
  out.insert(out.end(), w.out.begin(), w.out.end());
  int64_t inSize = countOf(w.in), outSize = countOf(w.out), taps = countOf(w.kernel), mg = m / group;
  std::vector<int64_t> tapOff(static_cast<size_t>(outSize * taps));
  forEachPosition(w, [&](int64_t po, const std::vector<int64_t> &pos) {
    forEachTap(w, pos, [&](int64_t off, int64_t t) { tapOff[size_t(po * taps + t)] = off; });
  });
  std::vector<double> y(static_cast<size_t>(countOf(out)), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < group; ++g)
      for (int64_t mm = 0; mm < mg; ++mm) {
        int64_t oc = g * mg + mm;
        for (int64_t po = 0; po < outSize; ++po) {
          double s = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t t = 0; t < taps; ++t) {
              int64_t off = tapOff[size_t(po * taps + t)];
              if (off >= 0) s += xs[size_t((b * c + g * cg + ci) * inSize + off)] * ws[size_t((oc * cg + ci) * taps + t)];
            }
          y[size_t((b * m + oc) * outSize + po)] = s;
        }
      }
  return std::pair{out, y};
}

Result<void> convInteger(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto wv, doubles(w));
  SF_ASSIGN(auto xzp, optionalDoubles(ctx, 2));
  SF_ASSIGN(auto wzp, optionalDoubles(ctx, 3));
  SF_ASSIGN(xv, shifted(std::move(xv), x.shape(), xzp, 0, "x_zero_point"));
  SF_ASSIGN(wv, shifted(std::move(wv), w.shape(), wzp, 0, "w_zero_point"));
  SF_ASSIGN(auto r, convDoubles(ctx, xv, x.shape(), wv, w.shape()));
  SF_TRY(ctx.admit(ElementType::I32, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::I32, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

Result<void> qlinearConv(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &w = ctx.input(3);
  SF_ASSIGN(auto xv, doubles(x));
  SF_ASSIGN(auto xs, doubles(ctx.input(1)));
  SF_ASSIGN(auto xzp, doubles(ctx.input(2)));
  SF_ASSIGN(auto wv, doubles(w));
  SF_ASSIGN(auto wsc, doubles(ctx.input(4)));
  SF_ASSIGN(auto wzp, doubles(ctx.input(5)));
  SF_ASSIGN(auto ys, doubles(ctx.input(6)));
  SF_ASSIGN(auto yzp, doubles(ctx.input(7)));
  SF_ASSIGN(auto bias, optionalDoubles(ctx, 8));
  SF_ASSIGN(xv, shifted(std::move(xv), x.shape(), xzp, 0, "x_zero_point"));
  SF_ASSIGN(wv, shifted(std::move(wv), w.shape(), wzp, 0, "w_zero_point"));
  SF_ASSIGN(auto r, convDoubles(ctx, xv, x.shape(), wv, w.shape()));
  ElementType out = ctx.input(7).type();
  SF_ASSIGN(auto range, quantRange(out));
  int64_t m = r.first[1], inner = countOf(r.first) / std::max<int64_t>(r.first[0] * m, 1);
  for (size_t i = 0; i < r.second.size(); ++i) {
    int64_t oc = (int64_t(i) / inner) % m;
    double wscale = wsc.size() == 1 ? wsc[0] : wsc[size_t(oc)];
    double acc = r.second[i] + (bias.empty() ? 0.0 : bias[size_t(oc)]);
    r.second[i] = std::clamp(std::nearbyint(acc * xs[0] * wscale / ys[0]) + yzp[0], range.first, range.second);
  }
  SF_TRY(ctx.admit(out, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
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

} // namespace

Result<void> registerNN(OpRegistry &r) {
  SF_TRY(setKernel(r, "MaxUnpool", maxUnpool));
  SF_TRY(setKernel(r, "MatMulInteger", matmulInteger));
  SF_TRY(setKernel(r, "QLinearMatMul", qlinearMatMul));
  SF_TRY(setKernel(r, "ConvInteger", convInteger));
  SF_TRY(setKernel(r, "QLinearConv", qlinearConv));
  SF_TRY(setKernel(r, "ConvTranspose", convTranspose));
  SF_TRY(setKernel(r, "MatMul", matmul));
  SF_TRY(setKernel(r, "Gemm", gemm));
  SF_TRY(setKernel(r, "Conv", conv));
  SF_TRY(setKernel(r, kFusedConv, fusedConv, kShapeflowDomain));
  r.findMutable("", "Conv")->kernelTakesBlocked = true;
  r.findMutable(kShapeflowDomain, kFusedConv)->kernelTakesBlocked = true;
  SF_TRY(setKernel(r, "MaxPool", [](EvalContext &c) { return pool(c, true); }));
  SF_TRY(setKernel(r, "AveragePool", [](EvalContext &c) { return pool(c, false); }));
  SF_TRY(setKernel(r, "GlobalMaxPool", [](EvalContext &c) { return globalPool(c, true); }));
  SF_TRY(setKernel(r, "GlobalAveragePool", [](EvalContext &c) { return globalPool(c, false); }));
  SF_TRY(setKernel(r, "BatchNormalization", batchNorm));
  SF_TRY(setKernel(r, "LayerNormalization", layerNorm));
  SF_TRY(setKernel(r, "Softmax", [](EvalContext &c) { return softmax(c, false); }));
  SF_TRY(setKernel(r, "LogSoftmax", [](EvalContext &c) { return softmax(c, true); }));
  SF_TRY(setKernel(r, "ReduceSum", reduce(Red::Sum, 13)));
  SF_TRY(setKernel(r, "ReduceMean", reduce(Red::Mean, 18)));
  SF_TRY(setKernel(r, "ReduceMax", reduce(Red::Max, 18)));
  SF_TRY(setKernel(r, "ReduceMin", reduce(Red::Min, 18)));
  SF_TRY(setKernel(r, "ReduceProd", reduce(Red::Prod, 18)));
  SF_TRY(setKernel(r, "ReduceL1", reduce(Red::L1, 18)));
  SF_TRY(setKernel(r, "ReduceL2", reduce(Red::L2, 18)));
  SF_TRY(setKernel(r, "ReduceSumSquare", reduce(Red::SumSquare, 18)));
  SF_TRY(setKernel(r, "ReduceLogSum", reduce(Red::LogSum, 18)));
  SF_TRY(setKernel(r, "ReduceLogSumExp", reduce(Red::LogSumExp, 18)));
  SF_TRY(setKernel(r, "ArgMax", argReduce(true)));
  SF_TRY(setKernel(r, "ArgMin", argReduce(false)));
  return success();
}

} // namespace sf::eval::detail
