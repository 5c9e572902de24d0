// Kernels of the ops shapeflow's rewrites emit (src/ops/fused.cpp): FusedConv, Conv and activation.
#include "../kernel_util.h"
#include "conv_pool.h"
#include "shapeflow/ops/fused.h"

namespace sf::eval::detail {
namespace {

/// FusedConv (ops/fused.h): Conv, its Z added (convWith reads it) and its activation.
Result<void> fusedConv(EvalContext &ctx) {
  SF_ASSIGN(std::string activation, ctx.attrs().getString("activation", ""));
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 1.0));
  if (activation.empty() && ctx.hasInput(3)) return convWith(ctx, PostOp{}, true);
  if (activation == "Relu") return convWith(ctx, {PostOp::Kind::Relu, 0.0f}, true);
  if (activation == "Clip") {
    SF_ASSIGN(double lo, ctx.attrs().getFloat("min", -std::numeric_limits<double>::infinity()));
    SF_ASSIGN(double hi, ctx.attrs().getFloat("max", std::numeric_limits<double>::infinity()));
    return convWith(ctx, {PostOp::Kind::Clip, float(lo), float(hi)}, true);
  }
  if (activation == "Swish") return convWith(ctx, {PostOp::Kind::Swish, float(alpha)}, true);
  if (activation == "HardSwish") return convWith(ctx, {PostOp::Kind::HardSwish}, true);
  return errorf("activation '{}'", activation);
}

} // namespace

Result<void> registerFusedKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, kFusedConv, fusedConv, kShapeflowDomain));
  r.findMutable(kShapeflowDomain, kFusedConv)->kernelTakesBlocked = true;
  return success();
}

} // namespace sf::eval::detail
