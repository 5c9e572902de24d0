// Reductions: Reduce* (axes from an attribute in older opsets, from an input later; keepdims;
// noop_with_empty_axes), ArgMax/ArgMin, CumSum. Integer shape values propagate through
// ReduceSum/ReduceProd/ReduceMax/ReduceMin of a 1-D vector (the flatten pattern
// `ReduceProd(Shape(x)[1:])` is `C*H*W`) and through CumSum.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

#include <algorithm>

namespace sf {
namespace {


/// What a Reduce node says about its axes: the list when known, else how many when known.
struct AxesSpec {
  std::optional<std::vector<int64_t>> axes;
  std::optional<int64_t> count;
};

/// How the elements of a 1-D integer value combine under a reduction (shape math folds Sum,
/// Prod, Max and Min; the others are not followed).
enum class Fold { None, Sum, Prod, Max, Min };

/// What distinguishes one Reduce op from another for its rule.
struct ReduceSpec {
  /// The opset from which the axes are read from input 1 (ReduceSum moved at 13, the rest at 18).
  int64_t axesInputSince = 18;
  Fold fold = Fold::None;
};

Result<AxesSpec> readAxes(InferContext &ctx, int64_t axesInputSince) {
  AxesSpec s;
  if (ctx.attrs().has("axes")) {
    SF_ASSIGN(auto v, ctx.attrs().getInts("axes"));
    s.axes = v;
    return s;
  }
  bool fromInput = ctx.opset() == 0 || ctx.opset() >= axesInputSince;
  if (!fromInput || !ctx.hasInput(1)) {
    s.axes = std::vector<int64_t>{};
    return s;
  }
  const Fact &a = ctx.input(1);
  if (a.shape.rankIsStatic() && a.shape.size() > 1) return errorf("'axes' must be 1-D, got {}", a);
  if (auto v = constInts(a)) {
    s.axes = *v;
    return s;
  }
  if (a.shape.rankIsStatic() && a.shape.size() == 1 && a.shape[0].isStatic()) {
    s.count = a.shape[0].length();
    if (*s.count == 0) s.axes = std::vector<int64_t>{};
  }
  return s;
}

/// Either `d` (not reduced) or 1 (reduced with keepdims).
Dimension dimOrOne(const Dimension &d) {
  if (d.isStatic() && d.length() == 1) return d;
  return Dimension::fromInterval(d.interval().hull(Interval::point(1)));
}

/// The value of reducing a 1-D integer vector to one element, when the op folds.
std::optional<Dimension> foldValues(Fold op, const std::vector<Dimension> &v) {
  std::optional<Dimension> acc;
  if (op == Fold::Sum)
    acc = Dimension::constantValue(0);
  else if (op == Fold::Prod)
    acc = Dimension::constantValue(1);
  else if (op != Fold::Max && op != Fold::Min)
    return std::nullopt;
  for (const auto &d : v) {
    if (!acc) {
      acc = d; // Max/Min start from the first element
      continue;
    }
    Result<Dimension> r = op == Fold::Sum    ? *acc + d
                          : op == Fold::Prod ? *acc * d
                          : op == Fold::Max  ? Dimension::max(*acc, d)
                                             : Dimension::min(*acc, d);
    if (!r.ok()) return std::nullopt;
    acc = *r;
  }
  return acc; // nullopt for Max/Min of nothing
}

Result<Facts> reduceWith(InferContext &ctx, const ReduceSpec &spec) {
  const Fact &in = ctx.input(0);
  bool keep = ctx.attrs().getInt("keepdims", 1).valueOr(1) != 0;
  // noop_with_empty_axes came with the axes input (ReduceSum at 13, the rest at 18); before
  // that the attribute is not the op's and empty axes reduce every axis.
  bool noop = (ctx.opset() == 0 || ctx.opset() >= spec.axesInputSince) &&
              ctx.attrs().getInt("noop_with_empty_axes", 0).valueOr(0) != 0;
  SF_ASSIGN(AxesSpec axes, readAxes(ctx, spec.axesInputSince));
  if (axes.axes && axes.axes->empty() && noop) {
    // No axis is reduced: each element is reduced alone, which leaves Sum, Prod, Max and Min's
    // values as they are; L1, L2, SumSquare, LogSum and LogSumExp still map each element (ONNX's
    // reference and onnxruntime take |x|, |x|, x*x, log x and x), so their values are not followed.
    Fact out = in;
    out.constant.reset();
    if (spec.fold == Fold::None) out.value.reset();
    return factsOf(std::move(out));
  }
  Fact out = makeFact(in.type, PartialShape::dynamic());
  if (!in.shape.rankIsStatic()) {
    // Reducing every axis without keepdims leaves a scalar whatever the rank.
    if (axes.axes && axes.axes->empty() && !keep) out.shape = PartialShape{};
    return factsOf(std::move(out));
  }
  int64_t r = int64_t(in.shape.size());
  const auto &dims = in.shape.dims();
  if (!axes.axes) {
    if (keep) {
      std::vector<Dimension> d;
      for (const auto &x : dims)
        d.push_back(dimOrOne(x));
      out.shape = PartialShape(std::move(d));
    } else if (axes.count) {
      if (*axes.count > r)
        return errorf("'axes' has {} elements for input of rank {} ({})", *axes.count, r, in);
      // Each remaining dim is one of the input's.
      Interval h{kInf, 0};
      for (const auto &x : dims)
        h = h.hull(x.interval());
      Dimension any = r ? Dimension::fromInterval(h) : Dimension::dynamic();
      out.shape = PartialShape(std::vector<Dimension>(r - *axes.count, any));
    }
    return factsOf(std::move(out));
  }
  SF_ASSIGN(auto norm, normalizeAxes(*axes.axes, r));
  std::vector<bool> reduced(r, norm.empty());
  for (int64_t a : norm)
    reduced[a] = true;
  std::vector<Dimension> od;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduced[i])
      od.push_back(dims[i]);
    else if (keep)
      od.push_back(Dimension(1));
  }
  out.shape = PartialShape(std::move(od));
  // Integral float values fold under Max and Min only (a float Sum or Prod may round).
  bool exactOp = isInteger(in.type) ||
                 (isFloat(in.type) && (spec.fold == Fold::Max || spec.fold == Fold::Min));
  if (in.value && exactOp) {
    // A scalar reduces to itself only under Sum, Prod, Max and Min: SumSquare squares it, L1 and
    // L2 take its magnitude, LogSum its log.
    if (r == 0 && spec.fold != Fold::None) {
      out.value = in.value;
    } else if (r == 1 && reduced[0]) {
      if (auto v = foldValues(spec.fold, *in.value)) out.value = std::vector<Dimension>{*v};
    }
  }
  return factsOf(std::move(out));
}

InferFn inferReduce(ReduceSpec spec) {
  return [spec](InferContext &ctx) { return reduceWith(ctx, spec); };
}

Result<Facts> inferArgMinMax(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  int64_t axis = ctx.attrs().getInt("axis", 0).valueOr(0);
  bool keep = ctx.attrs().getInt("keepdims", 1).valueOr(1) != 0;
  Fact out = makeFact(ElementType::I64, PartialShape::dynamic());
  if (!in.shape.rankIsStatic()) return factsOf(std::move(out));
  int64_t r = int64_t(in.shape.size());
  SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
  std::vector<Dimension> od;
  bool othersHoldElements = true;
  for (int64_t i = 0; i < r; ++i) {
    if (i != a)
      od.push_back(in.shape[i]);
    else if (keep)
      od.push_back(Dimension(1));
    if (i != a && in.shape[i].minLength() < 1) othersHoldElements = false;
  }
  // An empty axis has no index to give where the output has elements (onnxruntime refuses it):
  // the axis must hold one, a requirement where it is a size that may be 0.
  const Dimension &d = in.shape[a];
  if (othersHoldElements && d.minLength() < 1) {
    if (d.isStatic()) return errorf("axis {} of {} is empty: there is no index to give", a, in);
    if (d.expr()) SF_TRY(ctx.symbols().narrow(d.expr(), {1, kInf}));
  }
  out.shape = PartialShape(std::move(od));
  return factsOf(std::move(out));
}

Result<Facts> inferCumSum(InferContext &ctx) {
  const Fact &x = ctx.input(0), &axisFact = ctx.input(1);
  if (axisFact.type != ElementType::Undefined && !isInteger(axisFact.type))
    return errorf("'axis' must be an integer, got {}", axisFact);
  // "A 0-D tensor"; onnxruntime also runs a one-element vector.
  SF_TRY(expectOneElement(ctx, axisFact, "'axis'", {.maxRank = 1, .specRank = 0}));
  Fact out = makeFact(x.type, x.shape);
  auto axis = scalarDim(axisFact);
  if (!axis || !axis->isStatic() || !x.shape.rankIsStatic()) return factsOf(std::move(out));
  SF_ASSIGN(int64_t a, normalizeAxis(axis->length(), int64_t(x.shape.size())));
  (void)a;
  if (x.value && isInteger(x.type) && x.shape.size() == 1) {
    bool exclusive = ctx.attrs().getInt("exclusive", 0).valueOr(0) != 0;
    bool reverse = ctx.attrs().getInt("reverse", 0).valueOr(0) != 0;
    std::vector<Dimension> in = *x.value, v(in.size());
    if (reverse) std::reverse(in.begin(), in.end());
    Dimension acc = Dimension::constantValue(0);
    for (size_t i = 0; i < in.size(); ++i) {
      if (exclusive) v[i] = acc;
      auto s = acc + in[i];
      if (!s.ok()) return factsOf(std::move(out));
      acc = *s;
      if (!exclusive) v[i] = acc;
    }
    if (reverse) std::reverse(v.begin(), v.end());
    out.value = std::move(v);
  }
  return factsOf(std::move(out));
}

} // namespace

void registerReduceOps(OpRegistry &r) {
  // Costs: one accumulation per input element, of the reduction's kind; a per-output finish
  // (Mean's divide, L2's root, LogSum's log).
  auto perIn = [](FlopKind k, int64_t n = 1) { return costPerInput(k, n); };
  auto perOut = [](FlopKind k) { return costPerOutput(k); };
  r.add({.name = "ReduceSum",
         .infer = inferReduce({.axesInputSince = 13, .fold = Fold::Sum}),
         .refine = refineReduce(13),
         .cost = perIn(FlopKind::Add)});
  r.add({.name = "ReduceProd",
         .infer = inferReduce({.fold = Fold::Prod}),
         .refine = refineReduce(18),
         .cost = perIn(FlopKind::Mul)});
  r.add({.name = "ReduceMax",
         .infer = inferReduce({.fold = Fold::Max}),
         .refine = refineReduce(18),
         .cost = perIn(FlopKind::Compare)});
  r.add({.name = "ReduceMin",
         .infer = inferReduce({.fold = Fold::Min}),
         .refine = refineReduce(18),
         .cost = perIn(FlopKind::Compare)});
  r.add({.name = "ReduceMean",
         .infer = inferReduce({}),
         .refine = refineReduce(18),
         .cost = costSum({perIn(FlopKind::Add), perOut(FlopKind::Div)})});
  r.add({.name = "ReduceL1",
         .infer = inferReduce({}),
         .refine = refineReduce(18),
         .cost = costSum({perIn(FlopKind::Other), perIn(FlopKind::Add)})});
  r.add({.name = "ReduceL2",
         .infer = inferReduce({}),
         .refine = refineReduce(18),
         .cost = costSum({perIn(FlopKind::Mul), perIn(FlopKind::Add), perOut(FlopKind::Special)})});
  r.add({.name = "ReduceSumSquare",
         .infer = inferReduce({}),
         .refine = refineReduce(18),
         .cost = costSum({perIn(FlopKind::Mul), perIn(FlopKind::Add)})});
  r.add({.name = "ReduceLogSum",
         .infer = inferReduce({}),
         .refine = refineReduce(18),
         .cost = costSum({perIn(FlopKind::Add), perOut(FlopKind::Special)})});
  r.add({.name = "ReduceLogSumExp",
         .infer = inferReduce({}),
         .refine = refineReduce(18),
         .cost =
             costSum({perIn(FlopKind::Special), perIn(FlopKind::Add), perOut(FlopKind::Special)})});
  r.addAll({"ArgMax", "ArgMin"}, {.infer = inferArgMinMax, .refine = refineReduce(0, true), .cost = perIn(FlopKind::Compare)});
  r.add({.name = "CumSum", .infer = inferCumSum, .cost = perIn(FlopKind::Add)});
}

} // namespace sf
