// Experimental ops ONNX removed at opset 10 that onnxruntime still runs, in the default domain at
// opsets 1-9 (models of that time use them: ImageScaler in front of detectors and classifiers):
// ImageScaler, Scale, Affine, ScaledTanh, ParametricSoftplus, Crop and DynamicSlice (Slice with
// its ranges as inputs, registered with Slice in shape_ops.cpp). Semantics from onnxruntime's
// schemas of them (its onnx_deprecated_operators.cc) and its CPU kernels.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

#include "shared_rules.h"

namespace sf {
namespace {

Result<Facts> inferFloatLikeInput(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(requireFloat(x));
  return factsOf(makeFact(x.type, x.shape));
}

/// ImageScaler: X [N, C, H, W] times `scale`, plus one `bias` per channel (C of them).
Result<Facts> inferImageScaler(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(requireFloat(x));
  if (x.shape.rankIsStatic() && x.shape.size() != 4) return errorf("input 0 must be [N, C, H, W], got {}", x);
  if (ctx.attrs().has("bias") && x.shape.rankIsStatic()) {
    SF_ASSIGN(std::vector<double> bias, ctx.attrs().getFloats("bias"));
    if (!ctx.mergeDims(x.shape[1], Dimension(int64_t(bias.size()))).ok())
      return errorf("attribute 'bias' has {} values, one per channel of {}", bias.size(), x);
  }
  return factsOf(makeFact(x.type, x.shape));
}

/// `d - k` where it must not be negative: an error when it is, a requirement when symbolic.
Result<Dimension> notBelow(InferContext &ctx, const Dimension &d, int64_t k, const char *what) {
  SF_ASSIGN(Dimension rest, d - Dimension(k));
  if (rest.maxLength() < 0) return errorf("{} {} is less than {}", what, d, k);
  if (rest.minLength() < 0 && rest.expr()) SF_TRY(ctx.symbols().narrow(rest.expr(), {0, kInf}));
  return ctx.symbols().resolve(rest).nonNegative();
}

/// Crop of X [N, C, H, W] by `border` (left, top, right, bottom): [N, C, H - top - bottom,
/// W - left - right], or with `scale` (height, width) that window from (top, left): H must reach
/// top + height and W left + width.
Result<Facts> inferCrop(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(requireFloat(x));
  SF_ASSIGN(std::vector<int64_t> border, ctx.attrs().getInts("border", {}));
  if (border.size() != 4) return errorf("attribute 'border' must hold four values (left, top, right, bottom), got {}", border.size());
  for (int64_t b : border)
    if (b < 0) return errorf("attribute 'border' has a negative value {}", b);
  SF_ASSIGN(std::vector<int64_t> scale, ctx.attrs().getInts("scale", {}));
  if (!scale.empty() && (scale.size() != 2 || scale[0] < 0 || scale[1] < 0))
    return errorf("attribute 'scale' must be two sizes (height, width), got {} values", scale.size());
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, PartialShape::dynamic()));
  if (x.shape.size() != 4) return errorf("input 0 must be [N, C, H, W], got {}", x);
  std::vector<Dimension> d = x.shape.dims();
  const int64_t left = border[0], top = border[1], right = border[2], bottom = border[3];
  SF_ASSIGN(Dimension h, notBelow(ctx, d[2], top + bottom, "H"));
  SF_ASSIGN(Dimension w, notBelow(ctx, d[3], left + right, "W"));
  if (!scale.empty()) {
    SF_TRY(notBelow(ctx, d[2], top + scale[0], "H"));
    SF_TRY(notBelow(ctx, d[3], left + scale[1], "W"));
    h = Dimension(scale[0]), w = Dimension(scale[1]);
  }
  d[2] = h, d[3] = w;
  return factsOf(makeFact(x.type, PartialShape(std::move(d))));
}

} // namespace

void registerContribLegacyOps(OpRegistry &r) {
  const OpTraits elementwise{.sameShape = true, .inPlace = true};
  const RefineFn same = refineSameShape();
  r.add({.name = "ImageScaler",
         .infer = inferImageScaler,
         .traits = elementwise,
         .refine = same,
         .cost = costSum({costPerOutput(FlopKind::Mul), costPerOutput(FlopKind::Add)})});
  r.add({.name = "Scale", .infer = inferFloatLikeInput, .traits = elementwise, .refine = same, .cost = costPerOutput(FlopKind::Mul)});
  r.add({.name = "Affine",
         .infer = inferFloatLikeInput,
         .traits = elementwise,
         .refine = same,
         .cost = costSum({costPerOutput(FlopKind::Mul), costPerOutput(FlopKind::Add)})});
  r.addAll({"ScaledTanh", "ParametricSoftplus"},
           {.infer = inferFloatLikeInput, .traits = elementwise, .refine = same, .cost = costPerOutput(FlopKind::Special)});
  r.add({.name = "Crop", .infer = inferCrop, .traits = {.movesElements = true, .keepsElements = true}, .cost = costNone});
}

} // namespace sf
