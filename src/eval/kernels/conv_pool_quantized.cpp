// Kernels of the integer convolutions of src/ops/conv_pool.cpp: ConvInteger, QLinearConv.
// Computed exactly in doubles: the zero points subtracted, then requantised to the output type.
#include "../kernel_util.h"
#include "conv_pool.h"
#include "quantized.h"

#include <algorithm>
#include <cmath>

namespace sf::eval::detail {
namespace {

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
    // In float as onnxruntime requantizes: x_scale * w_scale / y_scale, times the integer sum
    // and bias, rounded to nearest even.
    const float k = float(xs[0]) * float(wsc.size() == 1 ? wsc[0] : wsc[size_t(oc)]) / float(ys[0]);
    const double acc = r.second[i] + (bias.empty() ? 0.0 : bias[size_t(oc)]);
    r.second[i] = std::clamp(double(std::nearbyint(float(acc) * k)) + yzp[0], range.first, range.second);
  }
  SF_TRY(ctx.admit(out, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerConvPoolQuantizedKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "ConvInteger", convInteger));
  SF_TRY(setKernel(r, "QLinearConv", qlinearConv));
  return success();
}

} // namespace sf::eval::detail
