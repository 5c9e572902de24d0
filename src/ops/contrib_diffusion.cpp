// onnxruntime's com.microsoft ops that its transformer optimizer writes into diffusion U-Nets
// (channels-last GroupNorm, SkipGroupNorm, NhwcConv; BiasSplitGelu and BiasAdd are in
// contrib.cpp), and the other single-tensor contrib ops of its bert and contrib schemas:
// BiasSoftmax, GemmFastGelu, Inverse, ExpandDims. Semantics from onnxruntime's
// docs/ContribOperators.md and its schemas' shape inference (diffusion_defs.cc, bert_defs.cc,
// contrib_defs.cc); ExpandDims inserts its axis as onnxruntime's CPU kernel does (numpy's rule;
// the schema's inference places a negative axis one further left than the kernel).
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include "input_view.h"
#include "shared_rules.h"

namespace sf {
namespace {

const char *const kMs = "com.microsoft";

/// A vector of one value per channel (gamma, beta, bias): rank 1 of length C.
Result<void> perChannel(InferContext &ctx, size_t i, const char *name, const Dimension &channels) {
  if (!ctx.hasInput(i)) return success();
  const Fact &v = ctx.input(i);
  SF_TRY(requireFloat(v, i));
  if (!v.shape.rankIsStatic()) return success();
  if (v.shape.size() != 1 || !ctx.mergeDims(v.shape[0], channels).ok())
    return errorf("input {} ({}) {} must be [C] with C = {}", i, name, v, channels);
  return success();
}

/// GroupNorm and SkipGroupNorm: X [N, H, W, C] (channels_last = 1, the default) or [N, C, H, W],
/// gamma and beta [C], C a multiple of `groups`; `activation` 0 or 1 (SiLU). SkipGroupNorm adds
/// skip ([N, H, W, C], [N, 1, 1, C] or [N, C]) and bias ([C]) first and may return that sum (S).
/// Y and S are X's shape.
InferFn inferMsGroupNorm(bool skip) {
  return [skip](InferContext &ctx) -> Result<Facts> {
    const Fact &x = ctx.input(0);
    SF_TRY(requireFloat(x, 0));
    SF_ASSIGN(int64_t groups, ctx.attrs().getInt("groups"));
    SF_ASSIGN(int64_t activation, ctx.attrs().getInt("activation"));
    SF_ASSIGN(int64_t last, ctx.attrs().getInt("channels_last", 1));
    if (groups <= 0) return errorf("groups must be positive, got {}", groups);
    if (activation != 0 && activation != 1) return errorf("activation must be 0 (none) or 1 (SiLU), got {}", activation);
    Facts out{makeFact(x.type, x.shape)};
    if (skip && ctx.numOutputs() > 1) out.push_back(makeFact(x.type, x.shape));
    if (!x.shape.rankIsStatic()) return out;
    if (x.shape.size() != 4) return errorf("input 0 {} must be [N, H, W, C] or [N, C, H, W]", x);
    const Dimension channels = last ? x.shape[3] : x.shape[1];
    if (channels.isStatic() && channels.length() % groups != 0)
      return errorf("the channels {} of {} are not a multiple of groups {}", channels, x, groups);
    SF_TRY(perChannel(ctx, 1, "gamma", channels));
    SF_TRY(perChannel(ctx, 2, "beta", channels));
    if (!skip) return out;
    SF_TRY(perChannel(ctx, 4, "bias", channels));
    const Fact &s = ctx.input(3);
    SF_TRY(requireFloat(s, 3));
    if (s.shape.rankIsStatic()) {
      const PartialShape &d = x.shape;
      bool ok = false;
      if (s.shape.size() == 2) {
        ok = ctx.mergeDims(s.shape[0], d[0]).ok() && ctx.mergeDims(s.shape[1], channels).ok();
      } else if (s.shape.size() == 4) {
        const size_t c = last ? 3 : 1;
        ok = ctx.mergeDims(s.shape[0], d[0]).ok() && ctx.mergeDims(s.shape[c], channels).ok();
        // X's spatial dims, or 1s ([N, 1, 1, C]). A symbolic skip dim may be either, so it is not
        // merged (that would bind X's dim to it, wrong where it is 1); where only X's form is
        // possible, its static dims bind X's.
        bool full = true, ones = true;
        for (size_t i = 1; i < 4; ++i) {
          if (i == c || !s.shape[i].isStatic()) continue;
          ones = ones && s.shape[i].length() == 1;
          full = full && (!d[i].isStatic() || d[i].length() == s.shape[i].length());
        }
        ok = ok && (full || ones);
        for (size_t i = 1; i < 4 && ok && !ones; ++i)
          if (i != c && s.shape[i].isStatic()) ok = ctx.mergeDims(s.shape[i], d[i]).ok();
      }
      if (!ok) return errorf("input 3 (skip) {} must be X's shape {}, [N, 1, 1, C] or [N, C]", s, x);
    }
    return out;
  };
}

/// Normalisation per group, then an optional SiLU (a special function and a multiply per element);
/// SkipGroupNorm adds skip and bias first.
CostFn costMsGroupNorm(bool skip) {
  return [skip](const CostContext &ctx) -> Result<OpCost> {
    std::vector<CostFn> parts{costPerOutput(FlopKind::Add, 3), costPerOutput(FlopKind::Mul, 2),
                              costPerOutput(FlopKind::Div)};
    if (ctx.attrs().getInt("activation", 0).valueOr(0) == 1) {
      parts.push_back(costPerOutput(FlopKind::Special));
      parts.push_back(costPerOutput(FlopKind::Mul));
    }
    if (skip) parts.push_back(costPerOutput(FlopKind::Add, ctx.hasInput(4) ? 2 : 1));
    return costSum(std::move(parts))(ctx);
  };
}

/// NhwcConv: Conv with X [N, H, W, C] and W [M, kH, kW, C/group] (channels last, as onnxruntime's
/// kernels and its symbolic shape inference read them); Y [N, H', W', M] by Conv's rule.
Result<Facts> inferNhwcConv(InferContext &ctx) {
  const Fact &x = ctx.input(0), &w = ctx.input(1);
  SF_TRY(requireFloat(x, 0));
  Facts inputs{makeFact(x.type, channelsFirst(x.shape)), makeFact(w.type, channelsFirst(w.shape))};
  std::vector<bool> present{true, true};
  if (ctx.numInputs() > 2) {
    inputs.push_back(ctx.input(2));
    present.push_back(ctx.hasInput(2));
  }
  InputView view(ctx, std::move(inputs), 11, std::move(present));
  SF_ASSIGN(Facts out, inferConv(view));
  return factsOf(makeFact(x.type, channelsLast(out[0].shape)));
}

/// A convolution's multiply-adds: each output element reads C/group x kH x kW weights (W's dims
/// after the first, whatever their order).
Result<OpCost> costNhwcConv(const CostContext &ctx) {
  OpCost c;
  const Fact &w = ctx.input(1);
  if (!w.shape.rankIsStatic() || w.shape.size() < 2) return c;
  std::vector<Dimension> taps(w.shape.dims().begin() + 1, w.shape.dims().end());
  SF_ASSIGN(Dimension perOutput, productOf(taps));
  SF_ASSIGN(Dimension macs, times(elementsOf(ctx.output(0)), perOutput));
  SF_TRY(c.addMacs(macs));
  if (ctx.hasInput(2)) SF_TRY(c.add(FlopKind::Add, elementsOf(ctx.output(0))));
  return c;
}

/// GemmFastGelu(X, W, bias): MatMul's shape (numpy's rule), bias [N] added before the GELU.
Result<Facts> inferGemmFastGelu(InferContext &ctx) {
  const Fact &a = ctx.input(0), &b = ctx.input(1);
  SF_TRY(requireFloat(a, 0));
  SF_ASSIGN(PartialShape s, matmulShape(ctx, a, b, 0, 1));
  if (ctx.hasInput(2) && s.rankIsStatic() && s.size() > 0) {
    const Fact &bias = ctx.input(2);
    if (bias.shape.rankIsStatic() && (bias.shape.size() != 1 || !ctx.mergeDims(bias.shape[0], s[s.size() - 1]).ok()))
      return errorf("input 2 (bias) {} must be [N] with N = {}", bias, s[s.size() - 1]);
  }
  return factsOf(makeFact(a.type, std::move(s)));
}

/// BiasSoftmax(data, bias): softmax of data + bias along `axis`; data's shape.
Result<Facts> inferBiasSoftmax(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(requireFloat(x, 0));
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", 1));
  if (x.shape.rankIsStatic()) SF_TRY(normalizeAxis(axis, int64_t(x.shape.size())));
  return factsOf(makeFact(x.type, x.shape));
}

/// Inverse(X [..., M, M]): X's shape; the last two dims equal.
Result<Facts> inferInverse(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(requireFloat(x, 0));
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, x.shape));
  const size_t r = x.shape.size();
  if (r < 2) return errorf("input 0 {} must have rank 2 or more", x);
  if (!ctx.mergeDims(x.shape[r - 2], x.shape[r - 1]).ok())
    return errorf("input 0 {} must be square in its last two dims", x);
  return factsOf(makeFact(x.type, ctx.symbols().resolve(x.shape)));
}

/// ExpandDims(X, axis: int32 scalar): X with a dim of 1 inserted at `axis` in [-r - 1, r] (a
/// negative axis counts from the end of the result, numpy's expand_dims, as onnxruntime's kernel
/// does).
Result<Facts> inferExpandDims(InferContext &ctx) {
  const Fact &x = ctx.input(0), &axisFact = ctx.input(1);
  if (axisFact.type != ElementType::Undefined && axisFact.type != ElementType::I32)
    return errorf("input 1 (axis) {} must be an int32 scalar", axisFact);
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, PartialShape::dynamic()));
  const int64_t r = int64_t(x.shape.size());
  auto axis = constInts(axisFact);
  if (!axis) return factsOf(makeFact(x.type, PartialShape::dynamic(size_t(r + 1))));
  if (axis->size() != 1) return errorf("input 1 (axis) {} must hold one value", axisFact);
  const int64_t a = (*axis)[0];
  if (a < -r - 1 || a > r) return errorf("axis {} is outside [{}, {}] for {}", a, -r - 1, r, x);
  const int64_t at = a < 0 ? a + r + 1 : a;
  std::vector<Dimension> d = x.shape.dims();
  d.insert(d.begin() + at, Dimension(1));
  return factsOf(makeFact(x.type, PartialShape(std::move(d))));
}

} // namespace

void registerContribDiffusionOps(OpRegistry &r) {
  r.add({.name = "GroupNorm", .domain = kMs, .infer = inferMsGroupNorm(false), .cost = costMsGroupNorm(false)});
  r.add({.name = "SkipGroupNorm", .domain = kMs, .infer = inferMsGroupNorm(true), .cost = costMsGroupNorm(true)});
  r.add({.name = "NhwcConv", .domain = kMs, .infer = inferNhwcConv, .cost = costNhwcConv});
  // The product, the bias, then FastGelu's tanh form (a special function and a few operations).
  r.add({.name = "GemmFastGelu",
         .domain = kMs,
         .infer = inferGemmFastGelu,
         .cost = costSum({costMatMul, costPerOutput(FlopKind::Special), costPerOutput(FlopKind::Mul, 3),
                          costPerOutput(FlopKind::Add, 2)})});
  // The bias added, then a softmax (a max, an exponential, a sum and a division per element).
  r.add({.name = "BiasSoftmax",
         .domain = kMs,
         .infer = inferBiasSoftmax,
         .cost = costSum({costPerOutput(FlopKind::Add, 2), costPerOutput(FlopKind::Compare),
                          costPerOutput(FlopKind::Special), costPerOutput(FlopKind::Div)})});
  // LU with pivoting per matrix: about M^3 multiply-adds per M x M matrix, M per output element.
  r.add({.name = "Inverse",
         .domain = kMs,
         .infer = inferInverse,
         .cost = [](const CostContext &ctx) -> Result<OpCost> {
           OpCost c;
           const Fact &x = ctx.input(0);
           if (!x.shape.rankIsStatic() || x.shape.size() < 2) return c;
           SF_ASSIGN(Dimension macs, times(elementsOf(x), x.shape[x.shape.size() - 1]));
           SF_TRY(c.addMacs(macs));
           return c;
         }});
  r.add({.name = "ExpandDims", .domain = kMs, .infer = inferExpandDims});
}

} // namespace sf
