// The ops shapeflow's rewrites emit (ops/fused.h): their rules and costs.
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/fused.h"
#include "shared_rules.h"

namespace sf {
namespace {

/// FusedConv: Conv's rule, once its activation is one the kernel computes (or none, where it adds
/// a Z), and its Z, where given, of the output's type and shape.
Result<Facts> inferFusedConv(InferContext &ctx) {
  SF_ASSIGN(std::string activation, ctx.attrs().getString("activation", ""));
  const bool sums = ctx.hasInput(3);
  if (activation != "Relu" && activation != "Clip" && activation != "Swish" && activation != "HardSwish" &&
      !(sums && activation.empty()))
    return errorf("attribute 'activation' is '{}', expected Relu, Clip, Swish or HardSwish", activation);
  if (ctx.numInputs() > 4) return errorf("{} inputs, at most 4 expected (X, W, B, Z)", ctx.numInputs());
  SF_ASSIGN(Facts facts, inferConv(ctx));
  if (sums) {
    const Fact &z = ctx.input(3), &y = facts[0];
    if (z.type != kUnknownType && y.type != kUnknownType && z.type != y.type)
      return errorf("Z is {}, the convolution's output {}: the types must agree", z, y);
    if (!z.shape.compatible(y.shape))
      return errorf("Z is {}, the convolution's output {}: the shapes must agree", z, y);
  }
  return facts;
}

} // namespace

void registerFusedOps(OpRegistry &r) {
  r.add({.name = std::string(kFusedConv),
         .domain = std::string(kShapeflowDomain),
         .infer = inferFusedConv,
         .cost = costWithActivation(costConv)});
}

} // namespace sf
