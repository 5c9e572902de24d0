// Reductions: Reduce* (axes from an attribute in older opsets, from an input later; keepdims;
// noop_with_empty_axes), ArgMax/ArgMin, CumSum. Integer shape values propagate through
// ReduceSum/ReduceProd/ReduceMax/ReduceMin of a 1-D vector (the flatten pattern
// `ReduceProd(Shape(x)[1:])` is `C*H*W`) and through CumSum.
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include <algorithm>

namespace sf {
namespace {


/// What a Reduce node says about its axes: the list when known, else how many when known.
struct AxesSpec {
  std::optional<std::vector<int64_t>> axes;
  std::optional<int64_t> count;
};

/// The opset from which `op` reads its axes from input 1 (ReduceSum moved at 13, the rest at 18).
int64_t axesInputSince(const std::string &op) { return op == "ReduceSum" ? 13 : 18; }

Result<AxesSpec> readAxes(InferContext &ctx) {
  AxesSpec s;
  if (ctx.attrs().has("axes")) {
    SF_ASSIGN(auto v, ctx.attrs().getInts("axes"));
    s.axes = v;
    return s;
  }
  bool fromInput = ctx.opset() == 0 || ctx.opset() >= axesInputSince(ctx.opType());
  if (!fromInput || !ctx.hasInput(1)) {
    s.axes = std::vector<int64_t>{};
    return s;
  }
  const Fact &a = ctx.input(1);
  if (a.shape.rankIsStatic() && a.shape.size() > 1)
    return makeError("'axes' must be 1-D, got " + describe(a));
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
std::optional<Dimension> foldValues(const std::string &op, const std::vector<Dimension> &v) {
  std::optional<Dimension> acc;
  if (op == "ReduceSum")
    acc = Dimension::constantValue(0);
  else if (op == "ReduceProd")
    acc = Dimension::constantValue(1);
  else if (op != "ReduceMax" && op != "ReduceMin")
    return std::nullopt;
  for (const auto &d : v) {
    if (!acc) {
      acc = d; // Max/Min start from the first element
      continue;
    }
    Result<Dimension> r = op == "ReduceSum"    ? *acc + d
                          : op == "ReduceProd" ? *acc * d
                          : op == "ReduceMax"  ? Dimension::max(*acc, d)
                                               : Dimension::min(*acc, d);
    if (!r.ok()) return std::nullopt;
    acc = *r;
  }
  return acc; // nullopt for Max/Min of nothing
}

Result<Facts> reduce(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  bool keep = ctx.attrs().getInt("keepdims", 1).valueOr(1) != 0;
  bool noop = ctx.attrs().getInt("noop_with_empty_axes", 0).valueOr(0) != 0;
  SF_ASSIGN(AxesSpec spec, readAxes(ctx));
  if (spec.axes && spec.axes->empty() && noop) {
    Fact out = in;
    out.constant.reset();
    return factsOf(std::move(out));
  }
  Fact out = makeFact(in.type, PartialShape::dynamic());
  if (!in.shape.rankIsStatic()) {
    // Reducing every axis without keepdims leaves a scalar whatever the rank.
    if (spec.axes && spec.axes->empty() && !keep) out.shape = PartialShape{};
    return factsOf(std::move(out));
  }
  int64_t r = int64_t(in.shape.size());
  const auto &dims = in.shape.dims();
  if (!spec.axes) {
    if (keep) {
      std::vector<Dimension> d;
      for (const auto &x : dims)
        d.push_back(dimOrOne(x));
      out.shape = PartialShape(std::move(d));
    } else if (spec.count) {
      if (*spec.count > r)
        return makeError("'axes' has " + std::to_string(*spec.count) +
                         " elements for input of rank " + std::to_string(r) + " (" + describe(in) +
                         ")");
      // Each remaining dim is one of the input's.
      Interval h{kInf, 0};
      for (const auto &x : dims)
        h = h.hull(x.interval());
      Dimension any = r ? Dimension::fromInterval(h) : Dimension::dynamic();
      out.shape = PartialShape(std::vector<Dimension>(r - *spec.count, any));
    }
    return factsOf(std::move(out));
  }
  SF_ASSIGN(auto norm, normalizeAxes(*spec.axes, r));
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
                 (isFloat(in.type) && (ctx.opType() == "ReduceMax" || ctx.opType() == "ReduceMin"));
  if (in.value && exactOp) {
    if (r == 0) {
      out.value = in.value;
    } else if (r == 1 && reduced[0]) {
      if (auto v = foldValues(ctx.opType(), *in.value)) out.value = std::vector<Dimension>{*v};
    }
  }
  return factsOf(std::move(out));
}

Result<Facts> argMinMax(InferContext &ctx) {
  const Fact &in = ctx.input(0);
  int64_t axis = ctx.attrs().getInt("axis", 0).valueOr(0);
  bool keep = ctx.attrs().getInt("keepdims", 1).valueOr(1) != 0;
  Fact out = makeFact(ElementType::I64, PartialShape::dynamic());
  if (!in.shape.rankIsStatic()) return factsOf(std::move(out));
  int64_t r = int64_t(in.shape.size());
  SF_ASSIGN(int64_t a, normalizeAxis(axis, r));
  std::vector<Dimension> od;
  for (int64_t i = 0; i < r; ++i) {
    if (i != a)
      od.push_back(in.shape[i]);
    else if (keep)
      od.push_back(Dimension(1));
  }
  out.shape = PartialShape(std::move(od));
  return factsOf(std::move(out));
}

Result<Facts> cumSum(InferContext &ctx) {
  const Fact &x = ctx.input(0), &axisFact = ctx.input(1);
  if (axisFact.type != ElementType::Undefined && !isInteger(axisFact.type))
    return makeError("'axis' must be an integer, got " + describe(axisFact));
  if (axisFact.shape.rankIsStatic() && axisFact.shape.size() > 1)
    return makeError("'axis' must be a scalar, got " + describe(axisFact));
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
  r.addAll({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
            "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"},
           reduce);
  r.addAll({"ArgMax", "ArgMin"}, argMinMax);
  r.addAll({"CumSum"}, cumSum);
}

} // namespace sf
