// The ops shapeflow's rewrites emit (ops/fused.h): their rules and costs.
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/fused.h"
#include "shared_rules.h"

namespace sf {
namespace {

/// FusedConv: Conv's rule, once its activation is one the kernel computes.
Result<Facts> inferFusedConv(InferContext &ctx) {
  SF_ASSIGN(std::string activation, ctx.attrs().getString("activation", ""));
  if (activation != "Relu" && activation != "Clip" && activation != "Swish" && activation != "HardSwish")
    return errorf("attribute 'activation' is '{}', expected Relu, Clip, Swish or HardSwish", activation);
  return inferConv(ctx);
}

} // namespace

void registerFusedOps(OpRegistry &r) {
  r.add({.name = std::string(kFusedConv),
         .domain = std::string(kShapeflowDomain),
         .infer = inferFusedConv,
         .cost = costWithActivation(costConv)});
}

} // namespace sf
