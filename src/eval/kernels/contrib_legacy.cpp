// Kernels of the experimental ops ONNX removed at opset 10 that onnxruntime still runs (rules in
// src/ops/contrib_legacy.cpp): ImageScaler, Scale, Affine, ScaledTanh, ParametricSoftplus and
// Crop. Element-wise ones in the input's float type, as onnxruntime computes them.
#include "contrib.h"

#include <cmath>

namespace sf::eval::detail {
namespace {

/// Y[i] = f(X[i], c) where c is X's channel (axis 1; 0 for rank < 2).
template <class F> Result<void> perElement(EvalContext &ctx, F f) {
  const Tensor &a = ctx.input(0);
  const Shape &s = a.shape();
  const int64_t channels = s.size() >= 2 ? s[1] : 1;
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  return dispatchFloat(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a);
    Output<T> o(ctx, a.type(), s);
    SF_ASSIGN(T * p, o.makeForOverwrite(true));
    for (size_t i = 0; i < x.size(); ++i) {
      const int64_t c = inner > 0 && channels > 0 ? (int64_t(i) / inner) % channels : 0;
      if constexpr (std::is_same_v<T, float>) p[i] = float(f(float(x[i]), c));
      else p[i] = T(f(double(x[i]), c));
    }
    return o.finish(0);
  });
}

/// Attribute `name` as a float (required where `def` is empty).
Result<float> floatAttr(EvalContext &ctx, const char *name, std::optional<double> def = {}) {
  if (!def && !ctx.attrs().has(name)) return errorf("attribute '{}' is required", name);
  SF_ASSIGN(double v, ctx.attrs().getFloat(name, def.value_or(0.0)));
  return float(v);
}

Result<void> imageScaler(EvalContext &ctx) {
  SF_ASSIGN(float scale, floatAttr(ctx, "scale", 1.0));
  std::vector<double> bias;
  if (ctx.attrs().has("bias")) {
    SF_ASSIGN(bias, ctx.attrs().getFloats("bias"));
  }
  const Shape &s = ctx.input(0).shape();
  if (s.size() != 4) return errorf("input 0 is {}, not [N, C, H, W]", shapeText(s));
  if (int64_t(bias.size()) != s[1]) return errorf("attribute 'bias' has {} values for {} channels", bias.size(), s[1]);
  std::vector<float> b(bias.begin(), bias.end());
  return perElement(ctx, [&](auto x, int64_t c) { return x * decltype(x)(scale) + decltype(x)(b[size_t(c)]); });
}

Result<void> crop(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  SF_ASSIGN(std::vector<int64_t> border, ctx.attrs().getInts("border", {}));
  SF_ASSIGN(std::vector<int64_t> scale, ctx.attrs().getInts("scale", {}));
  if (border.size() != 4 || s.size() != 4) return errorf("border of {} values on {}", border.size(), shapeText(s));
  const int64_t left = border[0], top = border[1], H = s[2], W = s[3];
  int64_t bottom = H - border[3], right = W - border[2];
  if (scale.size() == 2) bottom = top + scale[0], right = left + scale[1];
  if (left < 0 || top < 0 || bottom > H || right > W || bottom < top || right < left)
    return errorf("the window [{}, {}) x [{}, {}) is outside {}", top, bottom, left, right, shapeText(s));
  const Shape out{s[0], s[1], bottom - top, right - left};
  SF_ASSIGN(auto bytes, ctx.allocateUnzeroed(x.type(), out));
  const size_t e = elementSize(x.type());
  const std::byte *src = x.bytes().data();
  std::byte *dst = bytes.data();
  for (int64_t nc = 0; nc < s[0] * s[1]; ++nc)
    for (int64_t h = top; h < bottom; ++h) {
      const size_t row = size_t(right - left) * e;
      std::memcpy(dst, src + size_t((nc * H + h) * W + left) * e, row);
      dst += row;
    }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(x.type(), out));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerContribLegacyKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "ImageScaler", imageScaler));
  SF_TRY(setKernel(r, "Crop", crop));
  SF_TRY(setKernel(r, "Scale", [](EvalContext &ctx) -> Result<void> {
    SF_ASSIGN(float scale, floatAttr(ctx, "scale", 1.0));
    return perElement(ctx, [scale](auto x, int64_t) { return x * decltype(x)(scale); });
  }));
  SF_TRY(setKernel(r, "Affine", [](EvalContext &ctx) -> Result<void> {
    SF_ASSIGN(float alpha, floatAttr(ctx, "alpha", 1.0));
    SF_ASSIGN(float beta, floatAttr(ctx, "beta", 0.0));
    return perElement(ctx, [=](auto x, int64_t) { return decltype(x)(alpha) * x + decltype(x)(beta); });
  }));
  SF_TRY(setKernel(r, "ScaledTanh", [](EvalContext &ctx) -> Result<void> {
    SF_ASSIGN(float alpha, floatAttr(ctx, "alpha"));
    SF_ASSIGN(float beta, floatAttr(ctx, "beta"));
    return perElement(ctx, [=](auto x, int64_t) { return decltype(x)(alpha) * std::tanh(decltype(x)(beta) * x); });
  }));
  SF_TRY(setKernel(r, "ParametricSoftplus", [](EvalContext &ctx) -> Result<void> {
    SF_ASSIGN(float alpha, floatAttr(ctx, "alpha"));
    SF_ASSIGN(float beta, floatAttr(ctx, "beta"));
    return perElement(ctx, [=](auto x, int64_t) {
      using T = decltype(x);
      // alpha * ln(exp(beta x) + 1), without overflow for large beta x.
      T bx = T(beta) * x;
      return T(alpha) * (bx > T(0) ? bx + std::log1p(std::exp(-bx)) : std::log1p(std::exp(bx)));
    });
  }));
  return success();
}

} // namespace sf::eval::detail
