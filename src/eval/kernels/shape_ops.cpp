// Kernels of the shape ops (src/ops/shape_ops.cpp): shapes, views, Transpose and Slice.
// Shape, Size; the views (Reshape, Flatten, Squeeze, Unsqueeze) share their input's bytes;
// Transpose and Slice copy elements as bytes.
#include "../kernel_util.h"
#include "bounds.h"
#include "strides.h"

#include <algorithm>
#include <optional>

namespace sf::eval::detail {
namespace {

Result<void> viewAs(EvalContext &ctx, Shape shape) {
  const Tensor &a = ctx.input(0);
  if (countOf(shape) != a.elementCount())
    return errorf("cannot view {} elements as {}", a.elementCount(), shapeText(shape));
  SF_ASSIGN(Tensor t, Tensor::view(a.type(), std::move(shape), a.bytes(), ctx.inputShared(0)));
  return ctx.setOutput(0, std::move(t));
}

Result<void> shapeOp(EvalContext &ctx) {
  const Shape &s = ctx.input(0).shape();
  int64_t r = int64_t(s.size());
  SF_ASSIGN(int64_t start, ctx.attrs().getInt("start", 0));
  SF_ASSIGN(int64_t end, ctx.attrs().getInt("end", r));
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r), end = std::clamp<int64_t>(end, 0, r);
  Output<int64_t> o(ctx, ElementType::I64, {std::max<int64_t>(end - start, 0)});
  SF_ASSIGN(int64_t *p, o.makeForOverwrite());
  std::copy(s.begin() + start, s.begin() + std::max(start, end), p);
  return o.finish(0);
}

Result<void> sizeOp(EvalContext &ctx) {
  SF_ASSIGN(Tensor t, Tensor::fromInt64s({}, {ctx.input(0).elementCount()}));
  return ctx.setOutput(0, std::move(t));
}

Result<void> reshape(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  std::vector<int64_t> want;
  if (ctx.opset() < 5) {
    SF_ASSIGN(want, ctx.attrs().getInts("shape"));
  } else {
    SF_ASSIGN(want, ints(ctx.input(1)));
  }
  SF_ASSIGN(int64_t allowzero, ctx.attrs().getInt("allowzero", 0));
  Shape out(want.size());
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t d = want[i];
    if (d == 0 && !allowzero) {
      if (i >= a.shape().size()) return errorf("shape element {} is 0 past the input's rank", i);
      d = a.shape()[i];
    }
    if (d == -1) {
      if (infer) return errorf("more than one -1 in the shape");
      infer = i;
      continue;
    }
    if (d < 0) return errorf("shape element {} is {}", i, d);
    out[i] = d;
    auto product = checkedMul(known, d);
    if (!product) return errorf("the shape [{}] has more than 2^63 elements", fmt::join(want, ","));
    known = *product;
  }
  if (infer) {
    if (known == 0 || a.elementCount() % known != 0)
      return errorf("cannot reshape {} elements into [{}]", a.elementCount(), fmt::join(want, ","));
    out[*infer] = a.elementCount() / known;
  }
  return viewAs(ctx, out);
}

Result<void> flatten(EvalContext &ctx) {
  const Shape &s = ctx.input(0).shape();
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", 1));
  if (axis < 0) axis += int64_t(s.size());
  if (axis < 0 || axis > int64_t(s.size())) return errorf("axis out of range");
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= s[size_t(i)];
  int64_t inner = outer == 0 ? 0 : ctx.input(0).elementCount() / std::max<int64_t>(outer, 1);
  if (outer == 0) {
    inner = 1;
    for (size_t i = size_t(axis); i < s.size(); ++i) inner *= s[i];
  }
  return viewAs(ctx, {outer, inner});
}

Result<std::vector<int64_t>> axesOf(EvalContext &ctx, int64_t inputSince, size_t input) {
  if (ctx.opset() >= inputSince) {
    if (!ctx.hasInput(input)) return std::vector<int64_t>{};
    return ints(ctx.input(input));
  }
  return ctx.attrs().getInts("axes", {});
}

Result<void> squeeze(EvalContext &ctx) {
  const Shape &s = ctx.input(0).shape();
  SF_ASSIGN(auto axes, axesOf(ctx, 13, 1));
  std::vector<bool> drop(s.size(), false);
  if (axes.empty())
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  for (int64_t a : axes) {
    SF_ASSIGN(size_t i, normAxis(a, s.size()));
    if (s[i] != 1) return errorf("axis {} has size {}, not 1", a, s[i]);
    drop[i] = true;
  }
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  return viewAs(ctx, out);
}

Result<void> unsqueeze(EvalContext &ctx) {
  const Shape &s = ctx.input(0).shape();
  SF_ASSIGN(auto axes, axesOf(ctx, 13, 1));
  size_t rank = s.size() + axes.size();
  std::vector<bool> added(rank, false);
  for (int64_t a : axes) {
    SF_ASSIGN(size_t i, normAxis(a, rank));
    if (added[i]) return errorf("axis {} repeated", a);
    added[i] = true;
  }
  Shape out;
  size_t k = 0;
  for (size_t i = 0; i < rank; ++i) out.push_back(added[i] ? 1 : s[k++]);
  return viewAs(ctx, out);
}

/// com.microsoft ExpandDims(X, axis: an int32 scalar): a dim of 1 at `axis` in [-r - 1, r], a
/// negative one counted from the end of the result (numpy's expand_dims, onnxruntime's kernel).
Result<void> expandDims(EvalContext &ctx) {
  const Shape &s = ctx.input(0).shape();
  SF_ASSIGN(auto axis, ints(ctx.input(1)));
  if (axis.size() != 1) return errorf("axis holds {} values, not one", axis.size());
  const int64_t r = int64_t(s.size()), a = axis[0];
  if (a < -r - 1 || a > r) return errorf("axis {} is outside [{}, {}] for {}", a, -r - 1, r, shapeText(s));
  Shape out = s;
  out.insert(out.begin() + (a < 0 ? a + r + 1 : a), 1);
  return viewAs(ctx, out);
}

Result<void> transpose(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_TRY(requireBytes(a));
  size_t r = a.shape().size();
  std::vector<int64_t> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = int64_t(r - 1 - i);
  if (ctx.attrs().has("perm")) {
    SF_ASSIGN(perm, ctx.attrs().getInts("perm"));
  }
  if (perm.size() != r) return errorf("perm has {} elements for rank {}", perm.size(), r);
  auto st = stridesOf(a.shape());
  Shape out(r);
  std::vector<int64_t> srcStride(r);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < r; ++i) {
    SF_ASSIGN(size_t p, normAxis(perm[i], r, "perm element"));
    if (seen[p]) return errorf("perm repeats {}", p);
    seen[p] = true;
    out[i] = a.shape()[p];
    srcStride[i] = st[p];
  }
  SF_ASSIGN(auto bytes, ctx.allocateUnzeroed(a.type(), out));
  gatherStrided(bytes.data(), a.bytes().data(), elementSize(a.type()), out, srcStride);
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> slice(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_TRY(requireBytes(a));
  size_t r = a.shape().size();
  std::vector<int64_t> starts, ends, axes, steps;
  // Slice-1's ranges are attributes; DynamicSlice's (opsets 1-9) inputs, as Slice-10's.
  if (ctx.opset() < 10 && !ctx.hasInput(1)) {
    SF_ASSIGN(starts, ctx.attrs().getInts("starts"));
    SF_ASSIGN(ends, ctx.attrs().getInts("ends"));
    SF_ASSIGN(axes, ctx.attrs().getInts("axes", {}));
  } else {
    SF_ASSIGN(starts, ints(ctx.input(1)));
    SF_ASSIGN(ends, ints(ctx.input(2)));
    if (ctx.hasInput(3)) {
      SF_ASSIGN(axes, ints(ctx.input(3)));
    }
    if (ctx.hasInput(4)) {
      SF_ASSIGN(steps, ints(ctx.input(4)));
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return errorf("starts, ends, axes and steps have different lengths");
  std::vector<int64_t> begin(r, 0), step(r, 1);
  Shape out = a.shape();
  std::vector<bool> seen(r, false);
  for (size_t k = 0; k < starts.size(); ++k) {
    SF_ASSIGN(size_t ax, normAxis(axes[k], r));
    if (seen[ax]) return errorf("axis {} repeated", axes[k]);
    seen[ax] = true;
    int64_t len = a.shape()[ax], s = steps[k];
    if (s == 0) return errorf("step 0");
    auto clampIdx = [&](int64_t v, bool isStart) {
      if (v < 0) v = v < -len ? (s > 0 ? 0 : -1) : v + len;
      if (s > 0) return std::clamp<int64_t>(v, 0, len);
      (void)isStart;
      return std::clamp<int64_t>(v, -1, len - 1);
    };
    int64_t b = clampIdx(starts[k], true), e = clampIdx(ends[k], false);
    int64_t n = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e + (-s) - 1) / (-s) : 0);
    begin[ax] = b, step[ax] = s, out[ax] = n;
  }
  auto st = stridesOf(a.shape());
  std::vector<int64_t> srcStride(r);
  int64_t base = 0;
  for (size_t d = 0; d < r; ++d) {
    srcStride[d] = st[d] * step[d];
    base += begin[d] * st[d];
  }
  SF_ASSIGN(auto bytes, ctx.allocateUnzeroed(a.type(), out));
  size_t elem = elementSize(a.type());
  if (countOf(out) > 0)
    gatherStrided(bytes.data(), a.bytes().data() + size_t(base) * elem, elem, out, srcStride);
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerShapeOpsKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "Shape", shapeOp));
  SF_TRY(setKernel(r, "Size", sizeOp));
  SF_TRY(setKernel(r, "Reshape", keepingBound(reshape)));
  SF_TRY(setKernel(r, "Flatten", keepingBound(flatten)));
  SF_TRY(setKernel(r, "Squeeze", keepingBound(squeeze)));
  SF_TRY(setKernel(r, "Unsqueeze", keepingBound(unsqueeze)));
  SF_TRY(setKernel(r, "ExpandDims", keepingBound(expandDims), "com.microsoft"));
  SF_TRY(setKernel(r, "Transpose", keepingBound(transpose)));
  SF_TRY(setKernel(r, "Slice", keepingBound(slice)));
  SF_TRY(setKernel(r, "DynamicSlice", keepingBound(slice)));
  return success();
}

} // namespace sf::eval::detail
