// Backward rules (refine.h): what an op's outputs and weights say about its inputs.
#include "shapeflow/ops/refine.h"

#include "shapeflow/ops/helpers.h"

#include <algorithm>

namespace sf {

void RefineContext::refineType(size_t i, ElementType t) {
  if (t == ElementType::Undefined || !hasInput(i)) return;
  Fact f;
  f.type = t;
  refine(i, f);
}

void RefineContext::refineShape(size_t i, PartialShape s) {
  if (!s.rankIsStatic() || int64_t(s.size()) > kMaxRank || !hasInput(i)) return;
  Fact f;
  f.shape = std::move(s);
  refine(i, f);
}

void RefineContext::refineRank(size_t i, int64_t rank) {
  if (rank < 0 || rank > kMaxRank) return;
  refineShape(i, PartialShape::dynamic(rank));
}

std::optional<std::vector<int64_t>> RefineContext::ints(const char *name, size_t index,
                                                       bool useInput) const {
  if (useInput) {
    if (!hasInput(index)) return std::nullopt;
    return constInts(input(index));
  }
  if (!attrs().has(name)) return std::nullopt;
  auto v = attrs().getInts(name);
  if (!v.ok()) return std::nullopt;
  return *v;
}

namespace {

int64_t rankOf(const Fact &f) { return f.shape.rankIsStatic() ? int64_t(f.shape.size()) : -1; }

int64_t intAttr(const RefineContext &ctx, const char *name, int64_t otherwise) {
  auto v = ctx.attrs().getInt(name, otherwise);
  return v.ok() ? *v : otherwise;
}

/// normalizeAxis / normalizeAxes (helpers.h) where a rule has nothing to report: nullopt when
/// out of range, repeated, or more axes than any rank (a malformed list says nothing).
std::optional<int64_t> axisIn(int64_t axis, int64_t rank) {
  auto n = normalizeAxis(axis, rank);
  return n.ok() ? std::optional<int64_t>(*n) : std::nullopt;
}
std::optional<std::vector<int64_t>> axesIn(const std::vector<int64_t> &axes, int64_t rank) {
  if (int64_t(axes.size()) > kMaxRank || rank > kMaxRank) return std::nullopt;
  auto n = normalizeAxes(axes, rank);
  return n.ok() ? std::optional<std::vector<int64_t>>(std::move(*n)) : std::nullopt;
}

/// The inputs in [first, numInputs) share one element type: the one any of them has, else
/// `otherwise` (the output's, for ops whose output has the operands' type).
void shareType(RefineContext &ctx, size_t first, ElementType otherwise) {
  ElementType t = otherwise;
  for (size_t i = first; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i) && ctx.input(i).type != ElementType::Undefined) {
      t = ctx.input(i).type;
      break;
    }
  for (size_t i = first; i < ctx.numInputs(); ++i) ctx.refineType(i, t);
}

/// The input of an op that removed `axes` (normalised against the input's rank, the output's
/// plus their count) from it: the output's dims with `fill` back at each axis; nullopt when the
/// axes are not valid there.
std::optional<PartialShape> withAxesBack(const PartialShape &out,
                                         const std::vector<int64_t> &axes, Dimension fill) {
  const int64_t ri = int64_t(out.size() + axes.size());
  auto norm = axesIn(axes, ri);
  if (!norm) return std::nullopt;
  std::vector<Dimension> dims;
  for (int64_t k = 0, o = 0; k < ri; ++k)
    if (std::find(norm->begin(), norm->end(), k) != norm->end()) dims.push_back(fill);
    else dims.push_back(out[o++]);
  return PartialShape(std::move(dims));
}

} // namespace

RefineFn refineSameShape(bool sameType) {
  return [sameType](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    ctx.refineShape(0, out.shape);
    if (sameType) ctx.refineType(0, out.type);
    if (ctx.outputMaxRank(0) >= 0) ctx.refineMaxRank(0, ctx.outputMaxRank(0));
    if (ctx.outputMinRank(0) > 0) ctx.refineMinRank(0, ctx.outputMinRank(0));
    return {};
  };
}

RefineFn refineBroadcast(size_t firstInput, bool typeFromOutput, bool mixedTypes) {
  return [=](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    if (!mixedTypes) shareType(ctx, firstInput, typeFromOutput ? out.type : ElementType::Undefined);
    // Where's condition broadcasts too.
    const size_t n = ctx.numInputs();
    const int64_t r = rankOf(out);
    // Every operand has at most the output's rank (or the most the output may have).
    const int64_t most = r >= 0 ? r : ctx.outputMaxRank(0);
    if (most >= 0)
      for (size_t i = 0; i < n; ++i)
        if (ctx.hasInput(i) && rankOf(ctx.input(i)) < 0) ctx.refineMaxRank(i, most);
    if (r < 0) return {};
    for (size_t i = 0; i < n; ++i) {
      if (!ctx.hasInput(i)) continue;
      int64_t ri = rankOf(ctx.input(i));
      // At most the output's rank; at least it too when something else says so.
      if (ri < 0 && ctx.minRank(i) >= r) ri = r;
      if (ri < 0) {
        bool othersSmaller = true;
        for (size_t j = 0; j < n && othersSmaller; ++j)
          if (j != i && ctx.hasInput(j)) {
            int64_t rj = rankOf(ctx.input(j));
            othersSmaller = rj >= 0 && rj < r;
          }
        if (!othersSmaller) continue;
        ri = r;
      }
      if (ri > r) continue; // the forward rule reports it
      std::vector<Dimension> dims;
      for (int64_t k = 0; k < ri; ++k) {
        const int64_t axis = r - ri + k;
        bool othersOne = true;
        for (size_t j = 0; j < n && othersOne; ++j) {
          if (j == i || !ctx.hasInput(j)) continue;
          const Fact &other = ctx.input(j);
          int64_t rj = rankOf(other);
          if (rj < 0) {
            othersOne = false;
            break;
          }
          const int64_t kj = axis - (r - rj);
          if (kj >= 0 && !(other.shape[kj].isStatic() && other.shape[kj].length() == 1))
            othersOne = false;
        }
        dims.push_back(othersOne ? out.shape[axis] : Dimension::dynamic());
      }
      ctx.refineShape(i, PartialShape(std::move(dims)));
    }
    return {};
  };
}

RefineFn refineConv(bool transposed) {
  return [transposed](RefineContext &ctx) -> Result<void> {
    if (!ctx.hasInput(1)) return {};
    const Fact &w = ctx.input(1);
    ctx.refineType(0, w.type);
    if (ctx.numOutputs() > 0) ctx.refineType(0, ctx.output(0).type);
    const int64_t r = rankOf(w);
    if (r < 3) return {};
    std::vector<Dimension> dims(r);
    const int64_t group = intAttr(ctx, "group", 1);
    if (transposed) {
      dims[1] = w.shape[0];
    } else if (w.shape[1].isStatic() && group >= 1) {
      auto c = checkedMul(w.shape[1].length(), group);
      if (c) dims[1] = Dimension(*c);
    }
    if (ctx.numOutputs() > 0 && rankOf(ctx.output(0)) == r) dims[0] = ctx.output(0).shape[0];
    ctx.refineShape(0, PartialShape(std::move(dims)));
    return {};
  };
}

RefineFn refineChannelsFirst() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    ctx.refineType(0, out.type);
    const int64_t r = rankOf(out);
    if (r < 2) return {};
    std::vector<Dimension> dims(r);
    dims[0] = out.shape[0];
    dims[1] = out.shape[1];
    ctx.refineShape(0, PartialShape(std::move(dims)));
    return {};
  };
}

RefineFn refineBatchNorm() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    ctx.refineType(0, out.type);
    ctx.refineShape(0, out.shape);
    const int64_t r = rankOf(ctx.input(0));
    if (r >= 2 && ctx.hasInput(1) && rankOf(ctx.input(1)) == 1) {
      std::vector<Dimension> dims(r);
      dims[1] = ctx.input(1).shape[0];
      ctx.refineShape(0, PartialShape(std::move(dims)));
    }
    return {};
  };
}

RefineFn refineMatMul() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0 || !ctx.hasInput(0) || !ctx.hasInput(1)) return {};
    const Fact &out = ctx.output(0);
    shareType(ctx, 0, out.type);
    const int64_t r = rankOf(out);
    // One operand a matrix, the output's rank at least 2: the other operand is not a vector
    // (a vector would drop a dim) and carries every batch dim, so it has the output's rank.
    for (size_t self : {size_t(0), size_t(1)}) {
      const size_t other = 1 - self;
      const Fact &o = ctx.input(other);
      if (rankOf(o) != 2) continue;
      int64_t rs = rankOf(ctx.input(self));
      if (rs < 0 && r >= 2) rs = r;
      if (rs < 2) continue;
      std::vector<Dimension> dims(rs);
      if (r == rs) {
        for (int64_t k = 0; k + 2 < rs; ++k) dims[k] = out.shape[k];
        if (self == 0) dims[rs - 2] = out.shape[r - 2];
        else dims[rs - 1] = out.shape[r - 1];
      }
      if (self == 0) dims[rs - 1] = o.shape[0]; // K
      else dims[rs - 2] = o.shape[1];
      ctx.refineShape(self, PartialShape(std::move(dims)));
    }
    return {};
  };
}

RefineFn refineGemm() {
  return [](RefineContext &ctx) -> Result<void> {
    if (!ctx.hasInput(0) || !ctx.hasInput(1)) return {};
    shareType(ctx, 0, ctx.numOutputs() > 0 ? ctx.output(0).type : ElementType::Undefined);
    const bool ta = intAttr(ctx, "transA", 0) != 0, tb = intAttr(ctx, "transB", 0) != 0;
    std::vector<Dimension> a(2), b(2);
    // a = [M, K] (transposed: [K, M]); b = [K, N] (transposed: [N, K]).
    if (ctx.numOutputs() > 0 && rankOf(ctx.output(0)) == 2) {
      a[ta ? 1 : 0] = ctx.output(0).shape[0];
      b[tb ? 0 : 1] = ctx.output(0).shape[1];
    }
    const Fact &fa = ctx.input(0), &fb = ctx.input(1);
    if (rankOf(fb) == 2) a[ta ? 0 : 1] = fb.shape[tb ? 1 : 0];
    if (rankOf(fa) == 2) b[tb ? 1 : 0] = fa.shape[ta ? 0 : 1];
    ctx.refineShape(0, PartialShape(std::move(a)));
    ctx.refineShape(1, PartialShape(std::move(b)));
    return {};
  };
}

RefineFn refineGather() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0 || !ctx.hasInput(1)) return {};
    const Fact &out = ctx.output(0), &data = ctx.input(0), &idx = ctx.input(1);
    ctx.refineType(0, out.type);
    // Known indices must be valid: the data's axis has more entries than the largest and at
    // least as many as the most negative needs (Gather(Shape(x), 2): x has 3 dims or more).
    if (rankOf(data) >= 1) {
      if (auto ks = constInts(idx); ks && !ks->empty())
        if (auto axis = axisIn(intAttr(ctx, "axis", 0), rankOf(data))) {
          int64_t need = 0;
          for (int64_t k : *ks) {
            if (k >= kMaxRank * kMaxRank || k <= -kMaxRank * kMaxRank) { need = 0; break; }
            need = std::max(need, k >= 0 ? k + 1 : -k);
          }
          if (need == 0) return {};
          std::vector<Dimension> dims(rankOf(data));
          dims[*axis] = Dimension(need, kInf);
          ctx.refineShape(0, PartialShape(std::move(dims)));
        }
    }
    const int64_t ro = rankOf(out);
    if (ro < 0) return {};
    int64_t rd = rankOf(data), ri = rankOf(idx);
    if (rd < 0 && ri >= 0) rd = ro - ri + 1;
    if (ri < 0 && rd >= 1) ri = ro - rd + 1;
    if (rd < 1 || ri < 0 || rd + ri - 1 != ro) return {};
    auto axis = axisIn(intAttr(ctx, "axis", 0), rd);
    if (!axis) return {};
    std::vector<Dimension> dd(rd), di(ri);
    for (int64_t k = 0; k < rd; ++k)
      if (k < *axis) dd[k] = out.shape[k];
      else if (k > *axis) dd[k] = out.shape[k + ri - 1];
    for (int64_t k = 0; k < ri; ++k) di[k] = out.shape[*axis + k];
    ctx.refineShape(0, PartialShape(std::move(dd)));
    ctx.refineShape(1, PartialShape(std::move(di)));
    return {};
  };
}

RefineFn refineConcat() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    shareType(ctx, 0, out.type);
    const int64_t r = rankOf(out);
    if (r < 1) return {};
    auto axis = axisIn(intAttr(ctx, "axis", 0), r);
    if (!axis) return {};
    std::vector<Dimension> dims = out.shape.dims();
    dims[*axis] = Dimension::dynamic();
    for (size_t i = 0; i < ctx.numInputs(); ++i) ctx.refineShape(i, PartialShape(dims));
    return {};
  };
}

RefineFn refineTranspose() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    ctx.refineType(0, out.type);
    int64_t r = rankOf(out);
    std::vector<int64_t> perm;
    if (auto p = ctx.ints("perm", 0, false)) {
      perm = *p;
      if (r >= 0 && int64_t(perm.size()) != r) return {};
      r = int64_t(perm.size());
    } else {
      if (r < 0) return {};
      for (int64_t k = r - 1; k >= 0; --k) perm.push_back(k);
    }
    if (!axesIn(perm, r)) return {};
    std::vector<Dimension> dims(r);
    if (rankOf(out) == r)
      for (int64_t k = 0; k < r; ++k) dims[perm[k] < 0 ? perm[k] + r : perm[k]] = out.shape[k];
    ctx.refineShape(0, PartialShape(std::move(dims)));
    return {};
  };
}

RefineFn refineUnsqueeze() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    ctx.refineType(0, out.type);
    const int64_t r = rankOf(out);
    auto axes = ctx.ints("axes", 1, ctx.opset() == 0 || ctx.opset() >= 13);
    if (r < 0 || !axes) return {};
    auto norm = axesIn(*axes, r);
    if (!norm || int64_t(norm->size()) > r) return {};
    std::vector<Dimension> dims;
    for (int64_t k = 0; k < r; ++k)
      if (std::find(norm->begin(), norm->end(), k) == norm->end()) dims.push_back(out.shape[k]);
    ctx.refineShape(0, PartialShape(std::move(dims)));
    return {};
  };
}

RefineFn refineSqueeze() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    ctx.refineType(0, out.type);
    const int64_t r = rankOf(out);
    auto axes = ctx.ints("axes", 1, ctx.opset() == 0 || ctx.opset() >= 13);
    if (r < 0 || !axes || axes->empty()) return {}; // no axes: every 1 went, how many is unknown
    if (auto in = withAxesBack(out.shape, *axes, Dimension(1))) ctx.refineShape(0, std::move(*in));
    return {};
  };
}

RefineFn refineReduce(size_t axesInputSince, bool argAxis) {
  return [=](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    if (!argAxis) ctx.refineType(0, out.type);
    const int64_t r = rankOf(out);
    if (r < 0) return {};
    const bool keep = intAttr(ctx, "keepdims", 1) != 0;
    // The reduced axes; empty when every axis is (or none, with noop_with_empty_axes).
    std::optional<std::vector<int64_t>> axes;
    if (argAxis) {
      axes = std::vector<int64_t>{intAttr(ctx, "axis", 0)};
    } else if (axesInputSince > 0 &&
               (ctx.opset() == 0 || ctx.opset() >= int64_t(axesInputSince))) {
      axes = ctx.hasInput(1) ? ctx.ints("axes", 1, true) : std::vector<int64_t>{};
    } else {
      axes = ctx.attrs().has("axes") ? ctx.ints("axes", 1, false) : std::vector<int64_t>{};
    }
    if (keep) {
      std::vector<Dimension> dims(r);
      if (axes && !axes->empty())
        if (auto norm = axesIn(*axes, r))
          for (int64_t k = 0; k < r; ++k)
            if (std::find(norm->begin(), norm->end(), k) == norm->end()) dims[k] = out.shape[k];
      ctx.refineShape(0, PartialShape(std::move(dims)));
      return {};
    }
    if (!axes || axes->empty()) return {};
    if (auto in = withAxesBack(out.shape, *axes, Dimension())) ctx.refineShape(0, std::move(*in));
    return {};
  };
}

RefineFn refineSameRank(bool sameType) {
  return [sameType](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    if (sameType) ctx.refineType(0, out.type);
    ctx.refineRank(0, rankOf(out));
    return {};
  };
}

RefineFn refineSplit() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const int64_t r = rankOf(ctx.output(0));
    for (size_t o = 0; o < ctx.numOutputs(); ++o) ctx.refineType(0, ctx.output(o).type);
    if (r < 1) return {};
    auto axis = axisIn(intAttr(ctx, "axis", 0), r);
    if (!axis) return {};
    std::vector<Dimension> dims(r);
    std::optional<Dimension> sum = Dimension(0);
    for (size_t o = 0; o < ctx.numOutputs(); ++o) {
      const Fact &f = ctx.output(o);
      if (rankOf(f) != r) return {};
      for (int64_t k = 0; k < r; ++k)
        if (k != *axis)
          if (auto m = Dimension::merge(dims[k], f.shape[k])) dims[k] = *m;
      if (sum) {
        auto s = *sum + f.shape[*axis];
        if (s.ok() && f.shape[*axis].expr()) sum = *s;
        else sum.reset();
      }
    }
    if (sum) dims[*axis] = *sum;
    ctx.refineShape(0, PartialShape(std::move(dims)));
    return {};
  };
}

RefineFn refineRecurrent() {
  return [](RefineContext &ctx) -> Result<void> {
    if (!ctx.hasInput(1)) return {};
    const Fact &w = ctx.input(1); // [directions, gates * hidden, input_size]
    ctx.refineType(0, w.type);
    std::vector<Dimension> dims(3);
    if (rankOf(w) == 3) dims[2] = w.shape[2];
    ctx.refineShape(0, PartialShape(std::move(dims)));
    return {};
  };
}

RefineFn refineShapeOf() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() == 0) return {};
    const Fact &out = ctx.output(0);
    // Shape-15's start and end take a part of the shape: its length says less.
    if (ctx.attrs().has("start") || ctx.attrs().has("end") || rankOf(out) != 1) return {};
    const Dimension &len = out.shape[0];
    if (len.isStatic()) ctx.refineRank(0, len.length());
    else if (len.minLength() > 0) ctx.refineMinRank(0, len.minLength());
    return {};
  };
}

RefineFn refineTypeOnly() {
  return [](RefineContext &ctx) -> Result<void> {
    if (ctx.numOutputs() > 0) ctx.refineType(0, ctx.output(0).type);
    return {};
  };
}

} // namespace sf
