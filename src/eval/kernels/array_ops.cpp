// Kernels of the ops that build arrays from others (src/ops/array_ops.cpp).
// Concat, Split, Gather, Expand, Tile, Pad, ConstantOfShape, Range; elements move as bytes.
// concatTensors and splitTensor also serve the sequence kernels (ConcatFromSequence,
// SplitToSequence).
#include "../kernel_util.h"
#include "bounds.h"
#include "strides.h"

#include <algorithm>
#include <cmath>

namespace sf::eval::detail {

Result<Tensor> concatTensors(EvalContext &ctx, const std::vector<const Tensor *> &parts, size_t axis) {
  if (parts.empty()) return errorf("nothing to concatenate");
  const Tensor &a = *parts[0];
  SF_TRY(requireBytes(a));
  if (axis >= a.shape().size()) return errorf("axis {} of rank {}", axis, a.shape().size());
  Shape out = a.shape();
  out[axis] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor &t = *parts[i];
    if (t.type() != a.type() || t.shape().size() != out.size())
      return errorf("input {} is {}{}, input 0 {}{}", i, shortName(t.type()), shapeText(t.shape()),
                    shortName(a.type()), shapeText(a.shape()));
    for (size_t d = 0; d < out.size(); ++d)
      if (d != axis && t.shape()[d] != a.shape()[d])
        return errorf("input {} has shape {}, input 0 {}", i, shapeText(t.shape()), shapeText(a.shape()));
    out[axis] += t.shape()[axis];
  }
  SF_ASSIGN(auto bytes, ctx.allocateUnzeroed(a.type(), out)); // the parts fill it
  size_t elem = elementSize(a.type());
  int64_t outer = 1, inner = 1;
  outer = dimsProduct(out, 0, axis);
  inner = dimsProduct(out, axis + 1, out.size());
  int64_t rowOut = out[axis] * inner, at = 0;
  for (const Tensor *t : parts) {
    int64_t row = t->shape()[axis] * inner;
    for (int64_t o = 0; o < outer && row > 0; ++o)
      copyBytes(bytes.data() + size_t(o * rowOut + at) * elem, t->bytes().data() + size_t(o * row) * elem,
                  size_t(row) * elem);
    at += row;
  }
  return std::move(bytes).tensor(a.type(), out);
}

Result<std::vector<Tensor>> splitTensor(EvalContext &ctx, const Tensor &a, size_t axis,
                                        const std::vector<int64_t> &sizes, bool eachAnOutput) {
  SF_TRY(requireBytes(a));
  if (axis >= a.shape().size()) return errorf("axis {} of rank {}", axis, a.shape().size());
  int64_t len = a.shape()[axis];
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0) return errorf("sizes [{}] include a negative one", fmt::join(sizes, ","));
    auto t = checkedAdd(sum, s);
    if (!t) return errorf("sizes [{}] overflow", fmt::join(sizes, ","));
    sum = *t;
  }
  if (sum != len) return errorf("sizes [{}] add up to {}, the axis is {}", fmt::join(sizes, ","), sum, len);
  size_t elem = elementSize(a.type());
  int64_t outer = 1, inner = 1;
  outer = dimsProduct(a.shape(), 0, axis);
  inner = dimsProduct(a.shape(), axis + 1, a.shape().size());
  int64_t at = 0;
  std::vector<Tensor> outs;
  for (int64_t size : sizes) {
    Shape out = a.shape();
    out[axis] = size;
    SF_ASSIGN(auto bytes, ctx.allocateUnzeroed(a.type(), out, eachAnOutput ? outs.size() : 0));
    int64_t row = size * inner;
    for (int64_t o = 0; o < outer && row > 0; ++o)
      copyBytes(bytes.data() + size_t(o * row) * elem, a.bytes().data() + size_t(o * len * inner + at) * elem,
                  size_t(row) * elem);
    at += row;
    SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
    outs.push_back(std::move(t));
  }
  return outs;
}

namespace {

Result<void> concat(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", ctx.opset() < 4 ? 1 : 0));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  std::vector<const Tensor *> parts;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i)) parts.push_back(&ctx.input(i));
  SF_ASSIGN(Tensor t, concatTensors(ctx, parts, axis));
  float bound = 0; // the largest of the parts' (EvalContext::inputBound)
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i) && ctx.input(i).elementCount() > 0) bound = std::max(bound, ctx.inputBound(i));
  if (t.elementCount() > 0) ctx.setOutputBound(0, bound);
  return ctx.setOutput(0, std::move(t));
}

Result<void> split(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  int64_t len = a.shape()[axis];
  size_t n = ctx.numOutputs();
  std::vector<int64_t> sizes;
  if (ctx.opset() >= 13 && ctx.hasInput(1)) {
    SF_ASSIGN(sizes, ints(ctx.input(1)));
  } else if (ctx.opset() < 13 && ctx.attrs().has("split")) {
    SF_ASSIGN(sizes, ctx.attrs().getInts("split"));
  } else if (ctx.opset() < 2 && ctx.hasInput(1)) {
    SF_ASSIGN(sizes, ints(ctx.input(1)));
  } else {
    int64_t parts = int64_t(n);
    if (ctx.attrs().has("num_outputs")) {
      SF_ASSIGN(parts, ctx.attrs().getInt("num_outputs"));
    }
    if (parts <= 0) return errorf("{} parts", parts);
    // Before opset 18 the parts are equal (onnxruntime refuses an axis they do not divide).
    if (ctx.opset() > 0 && ctx.opset() < 18 && len % parts != 0)
      return errorf("axis {} of size {} does not split evenly into {} outputs", axis, len, parts);
    int64_t each = (len + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::max<int64_t>(0, std::min(each, len - k * each)));
  }
  if (sizes.size() != n) return errorf("{} sizes for {} outputs", sizes.size(), n);
  SF_ASSIGN(auto outs, splitTensor(ctx, a, axis, sizes, true));
  for (size_t k = 0; k < n; ++k) SF_TRY(ctx.setOutput(k, std::move(outs[k])));
  return success();
}

Result<void> gather(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &ix = ctx.input(1);
  SF_TRY(requireBytes(a));
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  SF_ASSIGN(auto idx, ints(ix));
  int64_t len = a.shape()[axis];
  for (int64_t &i : idx) {
    if (i < -len || i >= len) return errorf("index {} is out of range for an axis of {}", i, len);
    if (i < 0) i += len;
  }
  Shape out;
  for (size_t d = 0; d < axis; ++d) out.push_back(a.shape()[d]);
  for (int64_t d : ix.shape()) out.push_back(d);
  for (size_t d = axis + 1; d < a.shape().size(); ++d) out.push_back(a.shape()[d]);
  size_t elem = elementSize(a.type());
  int64_t outer = 1, inner = 1;
  outer = dimsProduct(a.shape(), 0, axis);
  inner = dimsProduct(a.shape(), axis + 1, a.shape().size());
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  size_t chunk = size_t(inner) * elem;
  std::byte *p = bytes.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      if (chunk) copyBytes(p, a.bytes().data() + size_t((o * len + i) * inner) * elem, chunk);
      p += chunk;
    }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> expand(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_TRY(requireBytes(a));
  SF_ASSIGN(auto want, ints(ctx.input(1)));
  SF_ASSIGN(Shape out, broadcastAll({a.shape(), Shape(want.begin(), want.end())}));
  auto st = broadcastStrides(a.shape(), out);
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  gatherStrided(bytes.data(), a.bytes().data(), elementSize(a.type()), out, st);
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> tile(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_TRY(requireBytes(a));
  SF_ASSIGN(auto reps, ints(ctx.input(1)));
  size_t r = a.shape().size();
  if (reps.size() != r) return errorf("repeats has {} elements for rank {}", reps.size(), r);
  Shape out(r);
  for (size_t d = 0; d < r; ++d) {
    if (reps[d] < 0) return errorf("repeat {} is negative", reps[d]);
    out[d] = a.shape()[d] * reps[d];
  }
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  auto st = stridesOf(a.shape());
  size_t elem = elementSize(a.type());
  int64_t total = countOf(out);
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t off = 0, rest = o;
    for (size_t d = r; d-- > 0;) {
      int64_t i = rest % out[d];
      rest /= out[d];
      off += (i % a.shape()[d]) * st[d];
    }
    copyBytes(bytes.data() + size_t(o) * elem, a.bytes().data() + size_t(off) * elem, elem);
  }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> pad(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "constant"));
  size_t r = a.shape().size();
  std::vector<int64_t> pads;
  double value = 0;
  std::vector<int64_t> axes;
  if (ctx.opset() < 11) {
    SF_ASSIGN(pads, ctx.attrs().getInts(ctx.opset() < 2 ? "paddings" : "pads"));
    SF_ASSIGN(value, ctx.attrs().getFloat("value", 0.0));
  } else {
    SF_ASSIGN(pads, ints(ctx.input(1)));
    if (ctx.hasInput(2)) {
      SF_ASSIGN(auto v, doubles(ctx.input(2)));
      if (!v.empty()) value = v[0];
    }
    if (ctx.hasInput(3)) {
      SF_ASSIGN(axes, ints(ctx.input(3)));
    }
  }
  if (axes.empty())
    for (size_t d = 0; d < r; ++d) axes.push_back(int64_t(d));
  if (pads.size() != 2 * axes.size()) return errorf("{} pads for {} axes", pads.size(), axes.size());
  std::vector<int64_t> lo(r, 0), hi(r, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    SF_ASSIGN(size_t d, normAxis(axes[k], r));
    lo[d] = pads[k], hi[d] = pads[k + axes.size()];
  }
  Shape out(r);
  for (size_t d = 0; d < r; ++d) {
    out[d] = a.shape()[d] + lo[d] + hi[d];
    if (out[d] < 0) return errorf("pads make a negative dim");
  }
  auto st = stridesOf(a.shape());
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a);
    Output<T> o(ctx, a.type(), out);
    SF_ASSIGN(T *p, o.make());
    std::vector<int64_t> at;
    for (int64_t k = 0; k < countOf(out); ++k) {
      unravel(k, out, at);
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < r; ++d) {
        int64_t i = at[d] - lo[d], n = a.shape()[d];
        if (i < 0 || i >= n) {
          if (mode == "constant" || n == 0) {
            inside = false;
            break;
          }
          if (mode == "edge") i = i < 0 ? 0 : n - 1;
          else if (mode == "reflect") {
            if (n == 1) i = 0;
            else {
              int64_t period = 2 * (n - 1);
              i = ((i % period) + period) % period;
              if (i >= n) i = period - i;
            }
          } else if (mode == "wrap") i = ((i % n) + n) % n;
          else return errorf("mode '{}'", mode);
        }
        off += i * st[d];
      }
      p[k] = inside ? x[size_t(off)] : T(value);
    }
    return o.finish(0);
  });
}

Result<void> constantOfShape(EvalContext &ctx) {
  SF_ASSIGN(auto dims, ints(ctx.input(0)));
  Shape out(dims.begin(), dims.end());
  for (int64_t d : out)
    if (d < 0) return errorf("a negative dim {}", d);
  ElementType type = ElementType::F32;
  std::vector<std::byte> one(4, std::byte{0});
  if (ctx.attrs().has("value")) {
    SF_ASSIGN(TensorPtr v, ctx.attrs().getTensor("value"));
    if (v->elementCount() != 1 || !v->hasData()) return errorf("'value' must hold one element");
    type = v->type();
    one.assign(v->bytes().begin(), v->bytes().end());
  }
  SF_ASSIGN(auto bytes, ctx.allocate(type, out));
  for (size_t o = 0; o + one.size() <= bytes.size(); o += one.size())
    copyBytes(bytes.data() + o, one.data(), one.size());
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(type, out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> range(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(auto s, doubles(ctx.input(0)));
  SF_ASSIGN(auto l, doubles(ctx.input(1)));
  SF_ASSIGN(auto d, doubles(ctx.input(2)));
  if (s.size() != 1 || l.size() != 1 || d.size() != 1) return errorf("start, limit and delta must be scalars");
  if (d[0] == 0) return errorf("delta is 0");
  double n = std::max(std::ceil((l[0] - s[0]) / d[0]), 0.0);
  if (!(n <= double(int64_t(1) << 40))) return errorf("{} elements", n); // NaN bounds included
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("Range of bool");
    } else {
      Output<T> o(ctx, a.type(), {int64_t(n)});
      SF_ASSIGN(T *p, o.make());
      T start = T(s[0]), delta = T(d[0]);
      for (int64_t i = 0; i < int64_t(n); ++i) p[i] = T(start + T(i) * delta);
      return o.finish(0);
    }
  }, false);
}

} // namespace

Result<void> registerArrayOpsKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "Concat", keepingLargestBound(concat)));
  SF_TRY(setKernel(r, "Split", keepingBoundEach(split)));
  SF_TRY(setKernel(r, "Gather", keepingBound(gather)));
  SF_TRY(setKernel(r, "Expand", keepingBound(expand)));
  SF_TRY(setKernel(r, "Tile", keepingBound(tile)));
  SF_TRY(setKernel(r, "Pad", pad));
  SF_TRY(setKernel(r, "ConstantOfShape", constantOfShape));
  SF_TRY(setKernel(r, "Range", range));
  return success();
}

} // namespace sf::eval::detail
