// Normalisations and the softmax family: BatchNormalization (X (N, C, D...), the
// statistics (C); training outputs), InstanceNormalization, LayerNormalization (Mean and
// InvStdDev of shape d[:axis] + 1s), GroupNormalization, LRN, MeanVarianceNormalization,
// LpNormalization, Softmax / LogSoftmax / Hardmax (the axis is checked against the
// rank when the rank is known, and passes when it is not). Every output has X's shape; the
// rules' work is validation: per-channel inputs must have C elements, merged with X's channel
// dim so that what one input says about C, every tensor knows.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"
#include "shared_rules.h"

namespace sf {
namespace {



Dimension dimAt(const Fact &f, size_t axis) {
  return f.shape.rankIsStatic() && axis < f.shape.size() ? f.shape[axis] : Dimension();
}

Result<void> expectMinRank(const Fact &f, size_t i, const char *name, size_t rank) {
  if (f.shape.rankIsStatic() && f.shape.size() < rank)
    return errorf("{} has rank {}, expected at least {} ({})", inputLabel(i, name), f.shape.size(),
                  rank, f);
  return success();
}

/// X passed through: its type and shape, resolved through what the rule learned.
Fact sameAsInput(InferContext &ctx, const Fact &x) {
  return makeFact(x.type, ctx.symbols().resolve(x.shape));
}

/// X with its channel dim (axis 1, or axis 0 of a 1-D input: none) replaced by what was learned.
Fact withChannels(InferContext &ctx, const Fact &x, const Dimension &c) {
  Fact out = makeFact(x.type, x.shape);
  if (out.shape.rankIsStatic() && out.shape.size() >= 2) out.shape[1] = c;
  out.shape = ctx.symbols().resolve(std::move(out.shape));
  return out;
}

/// A per-channel input (scale, bias, mean, ...) must be 1-D with `c` elements; returns the
/// merged channel count.
Result<Dimension> perChannel(InferContext &ctx, size_t i, const char *name, const Dimension &c,
                             const Fact &x, const char *what = "C") {
  if (!ctx.hasInput(i)) return c;
  const Fact &f = ctx.input(i);
  if (!f.shape.rankIsStatic()) return c;
  if (f.shape.size() != 1)
    return errorf("{} has rank {}, expected 1 ({})", inputLabel(i, name), f.shape.size(), f);
  auto m = ctx.mergeDims(f.shape[0], c);
  if (!m.ok())
    return errorf("{} has {} elements, expected {} = {} ({} vs {})", inputLabel(i, name),
                  f.shape[0], what, c, f, x);
  return *m;
}

// ---- BatchNormalization ----

Result<Facts> inferBatchNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  if (x.shape.rankIsStatic() && x.shape.size() == 0)
    return errorf("input 0 (X) is a scalar, expected (N, C, ...) ({})", x);
  // A 1-D input is (N) with C = 1.
  Dimension c = !x.shape.rankIsStatic() ? Dimension() : x.shape.size() == 1 ? Dimension(1) : x.shape[1];
  const char *names[] = {"X", "scale", "B", "mean", "var"};
  SF_ASSIGN(int64_t spatialAttr, ctx.attrs().getInt("spatial", 1));
  bool perActivation = ctx.opset() > 0 && ctx.opset() < 9 && spatialAttr == 0;
  PartialShape stats{c};
  if (perActivation) {
    // Before opset 9, spatial = 0 gives statistics per activation: shape X[1:].
    stats = x.shape.rankIsStatic() && x.shape.size() >= 2
                ? PartialShape(std::vector<Dimension>(x.shape.dims().begin() + 1, x.shape.dims().end()))
                : PartialShape::dynamic();
    for (size_t i = 1; i <= 4; ++i) {
      if (!ctx.hasInput(i)) continue;
      const Fact &f = ctx.input(i);
      auto m = ctx.mergeShapes(stats, f.shape);
      if (!m.ok())
        return errorf("{} must have shape {} with spatial = 0 ({} vs {})", inputLabel(i, names[i]),
                      stats, f, x);
      stats = *m;
    }
  } else {
    for (size_t i = 1; i <= 4; ++i) {
      SF_ASSIGN(c, perChannel(ctx, i, names[i], c, x));
    }
    stats = PartialShape{c};
  }
  stats = ctx.symbols().resolve(std::move(stats));
  Fact y = perActivation ? sameAsInput(ctx, x) : withChannels(ctx, x, c);
  if (perActivation && y.shape.rankIsStatic() && stats.rankIsStatic())
    for (size_t i = 0; i < stats.size(); ++i) y.shape[1 + i] = stats[i];
  const Fact &mean = ctx.input(3), &var = ctx.input(4);
  if (mean.type != kUnknownType && var.type != kUnknownType && mean.type != var.type)
    return errorf("input types differ: {} vs {}", mean, var);
  std::vector<Fact> out{y};
  // Opset 14+: running_mean, running_var (type of the input mean); before: mean, var,
  // saved_mean, saved_var (type of X).
  ElementType statType = ctx.opset() >= 14 && mean.type != kUnknownType ? mean.type : x.type;
  for (size_t i = 1; i < ctx.numOutputs(); ++i) out.push_back(makeFact(statType, stats));
  return out;
}

Result<Facts> inferInstanceNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(expectMinRank(x, 0, "input", 2));
  Dimension c = dimAt(x, 1);
  SF_ASSIGN(c, perChannel(ctx, 1, "scale", c, x));
  SF_ASSIGN(c, perChannel(ctx, 2, "B", c, x));
  return factsOf(withChannels(ctx, x, c));
}

} // namespace

Result<Facts> inferLayerNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(int64_t stash, ctx.attrs().getInt("stash_type", 1));
  auto stashType = elementTypeFromOnnx(stash);
  if (!stashType || !isFloat(*stashType))
    return errorf("attribute 'stash_type' is {}, not a float type", stash);
  PartialShape xs = x.shape;
  SF_TRY(broadcastOnto(ctx, xs, 1, "Scale"));
  if (ctx.hasInput(2)) SF_TRY(broadcastOnto(ctx, xs, 2, "B"));
  const Fact &scale = ctx.input(1);
  if (scale.type != kUnknownType && x.type != kUnknownType && scale.type != x.type)
    return errorf("input types differ: {} vs {}", x, scale);
  std::vector<Fact> out{makeFact(x.type, ctx.symbols().resolve(xs))};
  PartialShape stats = PartialShape::dynamic();
  if (x.shape.rankIsStatic()) {
    int64_t r = int64_t(x.shape.size());
    SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
    std::vector<Dimension> dims = out[0].shape.dims();
    for (int64_t i = a; i < r; ++i) dims[i] = Dimension(1);
    stats = PartialShape(std::move(dims));
  }
  for (size_t i = 1; i < ctx.numOutputs(); ++i) out.push_back(makeFact(*stashType, stats));
  return out;
}

namespace {

/// RMSNormalization (opset 23): Y like X in scale's type (onnxruntime requires the two equal),
/// scale broadcast onto X; the normalised axes from `axis` on.
Result<Facts> inferRmsNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(int64_t stash, ctx.attrs().getInt("stash_type", 1));
  auto stashType = elementTypeFromOnnx(stash);
  if (!stashType || !isFloat(*stashType)) return errorf("attribute 'stash_type' is {}, not a float type", stash);
  const Fact &scale = ctx.input(1);
  if (scale.type != kUnknownType && x.type != kUnknownType && scale.type != x.type)
    return errorf("X is {} and scale {}: the types must agree", x, scale);
  PartialShape xs = x.shape;
  if (xs.rankIsStatic()) {
    SF_TRY(normalizeAxis(axis, int64_t(xs.size())));
  }
  SF_TRY(broadcastOnto(ctx, xs, 1, "scale"));
  return factsOf(makeFact(scale.type != kUnknownType ? scale.type : x.type, ctx.symbols().resolve(xs)));
}

Result<Facts> inferGroupNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(expectMinRank(x, 0, "X", 2));
  SF_ASSIGN(int64_t groups, ctx.attrs().getInt("num_groups"));
  if (groups <= 0) return errorf("attribute 'num_groups' is {}, expected > 0", groups);
  Dimension c = dimAt(x, 1);
  if (c.isStatic() && c.length() % groups != 0)
    return errorf("input 0 (X) has {} channels, not divisible by {} groups ({})", c, groups, x);
  // Opset 18: scale and bias have num_groups elements; opset 21: C. Unknown opset: either.
  for (auto [i, name] : {std::pair<size_t, const char *>{1, "scale"}, {2, "bias"}}) {
    if (!ctx.hasInput(i)) continue;
    const Fact &f = ctx.input(i);
    if (f.shape.rankIsStatic() && f.shape.size() == 1 && ctx.opset() == 0 &&
        f.shape[0].isStatic() && f.shape[0].length() == groups)
      continue;
    if (ctx.opset() > 0 && ctx.opset() < 21) {
      SF_TRY(perChannel(ctx, i, name, Dimension(groups), x, "num_groups"));
    } else {
      SF_ASSIGN(c, perChannel(ctx, i, name, c, x));
    }
  }
  return factsOf(withChannels(ctx, x, c));
}

Result<Facts> inferLrn(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(expectMinRank(x, 0, "X", 2));
  SF_ASSIGN(int64_t size, ctx.attrs().getInt("size"));
  if (size <= 0) return errorf("attribute 'size' is {}, expected > 0", size);
  return factsOf(sameAsInput(ctx, x));
}

Result<Facts> inferMvn(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(std::vector<int64_t> axes, ctx.attrs().getInts("axes", {0, 2, 3}));
  if (x.shape.rankIsStatic()) SF_TRY(normalizeAxes(axes, int64_t(x.shape.size())));
  return factsOf(sameAsInput(ctx, x));
}

Result<Facts> inferLpNorm(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(int64_t p, ctx.attrs().getInt("p", 2));
  if (p != 1 && p != 2) return errorf("attribute 'p' is {}, expected 1 or 2", p);
  if (x.shape.rankIsStatic()) SF_TRY(normalizeAxis(axis, int64_t(x.shape.size())));
  return factsOf(sameAsInput(ctx, x));
}

/// Softmax, LogSoftmax, Hardmax: the output has the input's shape . Before opset 13
/// the default axis is 1 and the input is coerced to 2-D around it; before opset 11 the axis
/// may equal the rank (all of the input in the first factor) and ONNX does not check it.
Result<Facts> inferSoftmax(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  bool legacy = ctx.opset() > 0 && ctx.opset() < 13;
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", legacy ? 1 : -1));
  if (x.shape.rankIsStatic()) {
    int64_t r = int64_t(x.shape.size());
    bool coerceToRank = ctx.opset() > 0 && ctx.opset() < 11;
    if (!coerceToRank) {
      SF_TRY(normalizeAxis(axis, r));
    } else if (axis < -r || axis > r) {
      return errorf("axis {} is out of range for rank {}", axis, r);
    }
  }
  return factsOf(sameAsInput(ctx, x));
}

} // namespace

// ---- costs (docs/COSTS.md) ----
namespace {

/// Rows a normalisation computes statistics over: the elements before `axis` (LayerNorm), or
/// N*C (InstanceNorm), N*groups (GroupNorm); unknown when the shape is.
Result<Dimension> rowsBefore(const Fact &x, int64_t axis) {
  if (!x.shape.rankIsStatic()) return Dimension::dynamic();
  int64_t r = int64_t(x.shape.size());
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return Dimension::dynamic();
  return productOf(x.shape, 0, size_t(axis));
}

/// Mean-and-variance normalisation: per element a subtract and two accumulations (Add 3, and
/// the bias's add when there is a bias input), a square, the normalising multiply and the scale
/// (Mul 3); per row of statistics two divides and a reciprocal square root.
Result<OpCost> normCost(const CostContext &ctx, const Dimension &rows, size_t biasInput = 2) {
  OpCost c;
  Dimension n = elementsOf(ctx.input(0));
  SF_ASSIGN(Dimension three, times(n, Dimension(3)));
  SF_TRY(c.add(FlopKind::Add, three));
  if (ctx.hasInput(biasInput)) SF_TRY(c.add(FlopKind::Add, n));
  SF_TRY(c.add(FlopKind::Mul, three));
  SF_ASSIGN(Dimension divs, times(rows, Dimension(2)));
  SF_TRY(c.add(FlopKind::Div, divs));
  SF_TRY(c.add(FlopKind::Special, rows));
  return c;
}

} // namespace

Result<OpCost> costLayerNorm(const CostContext &ctx) { return costLayerNormBiasAt(2)(ctx); }

CostFn costLayerNormBiasAt(size_t biasInput) {
  return [biasInput](const CostContext &ctx) -> Result<OpCost> {
    SF_ASSIGN(Dimension rows,
              rowsBefore(ctx.input(0), ctx.attrs().getInt("axis", -1).valueOr(-1)));
    return normCost(ctx, rows, biasInput);
  };
}

namespace {

Result<OpCost> costInstanceNorm(const CostContext &ctx) {
  SF_ASSIGN(Dimension rows, rowsBefore(ctx.input(0), 2));
  return normCost(ctx, rows);
}

Result<OpCost> costGroupNorm(const CostContext &ctx) {
  const Fact &x = ctx.input(0);
  int64_t groups = ctx.attrs().getInt("num_groups", 1).valueOr(1);
  Dimension rows = Dimension::dynamic();
  if (x.shape.rankIsStatic() && x.shape.size() > 0) {
    SF_ASSIGN(rows, times(x.shape[0], Dimension(std::max<int64_t>(groups, 1))));
  }
  return normCost(ctx, rows);
}

Result<OpCost> costMvn(const CostContext &ctx) {
  // Statistics over `axes` (default N, H, W): one row per remaining index.
  const Fact &x = ctx.input(0);
  Dimension rows = Dimension::dynamic();
  if (x.shape.rankIsStatic()) {
    auto axes = ctx.attrs().getInts("axes", {0, 2, 3}).valueOr(std::vector<int64_t>{});
    int64_t r = int64_t(x.shape.size());
    rows = Dimension(1);
    for (int64_t i = 0; i < r; ++i) {
      bool reduced = false;
      for (int64_t a : axes)
        reduced = reduced || (a < 0 ? a + r : a) == i;
      if (!reduced) { SF_ASSIGN(rows, times(rows, x.shape[size_t(i)])); }
    }
  }
  return normCost(ctx, rows);
}

/// LRN: the sum of squares over `size` channels is `size` MACs per element; then a power and
/// a divide per element.
Result<OpCost> costLrn(const CostContext &ctx) {
  OpCost c;
  Dimension n = elementsOf(ctx.input(0));
  int64_t size = ctx.attrs().getInt("size", 1).valueOr(1);
  SF_ASSIGN(Dimension macs, times(n, Dimension(std::max<int64_t>(size, 0))));
  SF_TRY(c.addMacs(macs));
  SF_TRY(c.add(FlopKind::Special, n));
  SF_TRY(c.add(FlopKind::Div, n));
  return c;
}

/// LpNormalization: a multiply-accumulate (p = 2) or an absolute add (p = 1) per element, a
/// root per row, a divide per element.
Result<OpCost> costLpNorm(const CostContext &ctx) {
  OpCost c;
  Dimension n = elementsOf(ctx.input(0));
  if (ctx.attrs().getInt("p", 2).valueOr(2) == 1)
    SF_TRY(c.add(FlopKind::Add, n));
  else
    SF_TRY(c.addMacs(n));
  SF_TRY(c.add(FlopKind::Div, n));
  return c;
}

} // namespace

void registerNormOps(OpRegistry &r) {
  // BatchNormalization at inference: the per-channel constants fold into one multiply and one
  // add per element.
  r.add({.name = "BatchNormalization",
         .infer = inferBatchNorm,
         .refine = refineBatchNorm(),
         .cost = costSum({costPerOutput(FlopKind::Mul), costPerOutput(FlopKind::Add)})});
  r.add({.name = "InstanceNormalization", .infer = inferInstanceNorm, .refine = refineBatchNorm(), .cost = costInstanceNorm});
  r.add({.name = "LayerNormalization", .infer = inferLayerNorm, .refine = refineSameShape(), .cost = costLayerNorm});
  r.add({.name = "RMSNormalization", .infer = inferRmsNorm, .refine = refineSameShape(), .cost = costLayerNorm});
  r.add({.name = "GroupNormalization", .infer = inferGroupNorm, .refine = refineSameShape(), .cost = costGroupNorm});
  r.add({.name = "LRN", .infer = inferLrn, .refine = refineSameShape(), .cost = costLrn});
  r.add({.name = "MeanVarianceNormalization", .infer = inferMvn, .refine = refineSameShape(), .cost = costMvn});
  r.add({.name = "LpNormalization", .infer = inferLpNorm, .refine = refineSameShape(), .cost = costLpNorm});
  // Softmax per element: the max (compare), subtract and sum (2 adds), exp, divide.
  r.add({.name = "Softmax",
         .infer = inferSoftmax,
         .refine = refineSameShape(),
         .cost = costSum({costPerOutput(FlopKind::Compare), costPerOutput(FlopKind::Add, 2),
                          costPerOutput(FlopKind::Special), costPerOutput(FlopKind::Div)})});
  // LogSoftmax: the divide is a second subtract (of the log of the sum).
  r.add({.name = "LogSoftmax",
         .infer = inferSoftmax,
         .refine = refineSameShape(),
         .cost = costSum({costPerOutput(FlopKind::Compare), costPerOutput(FlopKind::Add, 3),
                          costPerOutput(FlopKind::Special)})});
  r.add({.name = "Hardmax", .infer = inferSoftmax, .refine = refineSameShape(), .cost = costPerOutput(FlopKind::Compare)});
}

} // namespace sf
