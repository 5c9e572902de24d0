// Kernels of the reductions (src/ops/reduce.cpp): the Reduce ops, ArgMax, ArgMin, CumSum.
#include "../kernel_util.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sf::eval::detail {
namespace {

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

/// Rows of `len` elements reduced to one each (the reduced axes trailing: a layer norm's mean, a
/// softmax's sum), for Sum, Mean, SumSquare, Max, Min, L1 and L2: each row in four partial sums
/// (the order of additions in double; the result rounds the same but for a last-place tie in
/// rare rows).
template <class T> void reduceRows(Red kind, const T *data, int64_t n, int64_t len, T *p) {
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
}

/// Any reduced axes: the `n` results of reducing `xs` (of `shape`) to `kept` (the reduced axes of
/// length 1), in double, each element visited in order.
template <class T>
std::vector<double> reduceBroadcast(Red kind, const Elements<T> &xs, const Shape &shape, const Shape &kept, int64_t n) {
  std::vector<double> acc(size_t(n), kind == Red::Max   ? -std::numeric_limits<double>::infinity()
                                     : kind == Red::Min ? std::numeric_limits<double>::infinity()
                                     : kind == Red::Prod ? 1.0
                                                         : 0.0);
  std::vector<double> mx;
  if (kind == Red::LogSumExp) {
    mx.assign(size_t(n), -std::numeric_limits<double>::infinity());
    std::array<std::vector<int64_t>, 1> st{broadcastStrides(kept, shape)};
    forEachBroadcast<1>(shape, st, [&](int64_t i, const std::array<int64_t, 1> &f) {
      mx[size_t(f[0])] = std::max(mx[size_t(f[0])], double(xs[size_t(i)]));
    });
  }
  std::array<std::vector<int64_t>, 1> st{broadcastStrides(kept, shape)};
  int64_t count = countOf(shape) / std::max<int64_t>(n, 1);
  forEachBroadcast<1>(shape, st, [&](int64_t i, const std::array<int64_t, 1> &f) {
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
  for (int64_t i = 0; i < n; ++i) {
    double &a = acc[size_t(i)];
    if (kind == Red::Mean) a /= double(count);
    if (kind == Red::L2) a = std::sqrt(a);
    if (kind == Red::LogSum) a = std::log(a);
    if (kind == Red::LogSumExp) a = std::log(a) + mx[size_t(i)];
  }
  return acc;
}

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
    int64_t noop = 0; // an attribute from the opset where axes became an input
    if (ctx.opset() >= inputSince) {
      SF_ASSIGN(noop, ctx.attrs().getInt("noop_with_empty_axes", 0));
    }
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
        // ReduceMax and ReduceMin of bool (opset 20): any and all (an empty reduction gives
        // their identities, false and true).
        if (kind != Red::Max && kind != Red::Min) return errorf("reduction of bool");
        Elements<bool> xs(x);
        int64_t n = countOf(kept);
        std::vector<double> acc = reduceBroadcast(kind, xs, x.shape(), kept, n);
        Output<bool> o(ctx, x.type(), out);
        SF_ASSIGN(bool *p, o.make());
        for (int64_t i = 0; i < n; ++i) p[i] = acc[size_t(i)] > 0.5;
        return o.finish(0);
      } else {
        Elements<T> xs(x);
        int64_t n = countOf(kept);
        size_t firstReduced = r;
        while (firstReduced > 0 && red[firstReduced - 1]) --firstReduced;
        bool trailing = firstReduced < r && std::none_of(red.begin(), red.begin() + long(firstReduced), [](bool b) { return b; });
        bool simple = kind == Red::Sum || kind == Red::Mean || kind == Red::SumSquare || kind == Red::Max ||
                      kind == Red::Min || kind == Red::L1 || kind == Red::L2;
        if (trailing && simple && n > 0) {
          Output<T> o(ctx, x.type(), out);
          SF_ASSIGN(T *p, o.makeForOverwrite());
          reduceRows(kind, xs.data(), n, countOf(x.shape()) / n, p);
          return o.finish(0);
        }
        std::vector<double> acc = reduceBroadcast(kind, xs, x.shape(), kept, n);
        Output<T> o(ctx, x.type(), out);
        SF_ASSIGN(T *p, o.make());
        for (int64_t i = 0; i < n; ++i) p[i] = toElement<T>(acc[size_t(i)]);
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
    const int64_t len = x.shape()[axis], outer = dimsProduct(x.shape(), 0, axis),
                  inner = dimsProduct(x.shape(), axis + 1, x.shape().size());
    Shape out = x.shape();
    if (keep) out[axis] = 1;
    else out.erase(out.begin() + long(axis));
    // An empty axis has no index to give (onnxruntime refuses it too); other empty dims give an
    // empty output.
    bool otherEmpty = false;
    for (size_t d = 0; d < x.shape().size(); ++d) otherEmpty = otherEmpty || (d != axis && x.shape()[d] == 0);
    if (len == 0 && !otherEmpty)
      return errorf("axis {} of X {} is empty: there is no index to give", axis, shapeText(x.shape()));
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

Result<void> cumSum(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(auto axv, ints(ctx.input(1)));
  if (axv.size() != 1) return errorf("axis must have one element");
  SF_ASSIGN(size_t axis, normAxis(axv[0], a.shape().size()));
  SF_ASSIGN(int64_t exclusive, ctx.attrs().getInt("exclusive", 0));
  SF_ASSIGN(int64_t reverse, ctx.attrs().getInt("reverse", 0));
  int64_t len = a.shape()[axis], outer = dimsProduct(a.shape(), 0, axis),
          inner = dimsProduct(a.shape(), axis + 1, a.shape().size());
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("CumSum of bool");
    } else {
      Elements<T> x(a);
      Output<T> o(ctx, a.type(), a.shape());
      SF_ASSIGN(T *p, o.make());
      for (int64_t u = 0; u < outer; ++u)
        for (int64_t v = 0; v < inner; ++v) {
          T acc = 0;
          for (int64_t s = 0; s < len; ++s) {
            int64_t i = reverse ? len - 1 - s : s;
            size_t at = size_t((u * len + i) * inner + v);
            if (exclusive) {
              p[at] = acc;
              acc = T(acc + x[at]);
            } else {
              acc = T(acc + x[at]);
              p[at] = acc;
            }
          }
        }
      return o.finish(0);
    }
  }, false);
}

} // namespace

Result<void> registerReduceKernels(OpRegistry &r) {
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
  SF_TRY(setKernel(r, "CumSum", cumSum));
  return success();
}

} // namespace sf::eval::detail
