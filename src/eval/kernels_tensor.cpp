// Data-movement kernels: Identity, Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Split, Gather, Slice, Expand, Tile, ConstantOfShape, Range, Dropout (inference).
// Views (Reshape and friends) share their input's bytes; the others copy elements as bytes.
#include "kernel_util.h"

#include <algorithm>
#include <cmath>

namespace sf::eval::detail {
namespace {

Result<void> viewAs(EvalContext &ctx, Shape shape) {
  const Tensor &a = ctx.input(0);
  if (countOf(shape) != a.elementCount())
    return errorf("cannot view {} elements as {}", a.elementCount(), shapeText(shape));
  SF_ASSIGN(Tensor t, Tensor::view(a.type(), std::move(shape), a.bytes(), ctx.inputShared(0)));
  return ctx.setOutput(0, std::move(t));
}

/// Identity passes any value on (tensor, sequence or optional), sharing it.
Result<void> identity(EvalContext &ctx) { return ctx.setOutput(0, ctx.value(0)); }

Result<void> dropout(EvalContext &ctx) {
  // Training mode (opset 12: input 2 true; before 7: is_test 0) draws random numbers: the
  // outputs depend on a generator no two runtimes share, so it is refused rather than guessed.
  bool training = false;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(auto t, ints(ctx.input(2)));
    training = !t.empty() && t[0] != 0;
  }
  if (ctx.opset() < 7 && ctx.attrs().has("is_test")) {
    SF_ASSIGN(int64_t isTest, ctx.attrs().getInt("is_test"));
    training = isTest == 0;
  }
  if (training) {
    double ratio = 0.5;
    if (ctx.hasInput(1)) {
      SF_ASSIGN(auto v, doubles(ctx.input(1)));
      if (!v.empty()) ratio = v[0];
    }
    if (ratio != 0) return errorf("Dropout in training mode draws random numbers; not run");
  }
  SF_TRY(ctx.setOutput(0, ctx.input(0)));
  if (ctx.numOutputs() > 1) {
    SF_ASSIGN(auto ones, ctx.allocate(ElementType::Bool, ctx.input(0).shape()));
    std::fill(ones.begin(), ones.end(), std::byte{1});
    SF_ASSIGN(Tensor m, std::move(ones).tensor(ElementType::Bool, ctx.input(0).shape()));
    SF_TRY(ctx.setOutput(1, std::move(m)));
  }
  return success();
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
    known *= d;
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

/// `n` elements of T from `src`, `step` elements apart (negative: backwards), to `dst`.
template <class T> void copyStrided(std::byte *dst, const std::byte *src, int64_t n, int64_t step) {
  for (int64_t j = 0; j < n; ++j) {
    T v;
    copyBytes(&v, src + static_cast<ptrdiff_t>(j * step) * ptrdiff_t(sizeof(T)), sizeof(T));
    copyBytes(dst + size_t(j) * sizeof(T), &v, sizeof(T));
  }
}

/// Copies elements of `elem` bytes from `src` (shape `in`) to a new layout given by a
/// per-output-dim source stride: row by row along the last output dim (one copy where the
/// row is contiguous in the source, typed loads otherwise).
void gatherStrided(std::byte *dst, const std::byte *src, size_t elem, const Shape &out,
                   const std::vector<int64_t> &srcStride) {
  int64_t total = countOf(out);
  size_t r = out.size();
  if (total == 0) return;
  if (r == 0) {
    copyBytes(dst, src, elem);
    return;
  }
  const int64_t inner = out[r - 1], step = srcStride[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < total; o += inner) {
    // off may be negative (a slice with a negative step runs backwards from its start).
    const std::byte *from = src + static_cast<ptrdiff_t>(off) * static_cast<ptrdiff_t>(elem);
    std::byte *to = dst + size_t(o) * elem;
    if (step == 1) copyBytes(to, from, size_t(inner) * elem);
    else if (elem == 4) copyStrided<uint32_t>(to, from, inner, step);
    else if (elem == 8) copyStrided<uint64_t>(to, from, inner, step);
    else if (elem == 2) copyStrided<uint16_t>(to, from, inner, step);
    else if (elem == 1) copyStrided<uint8_t>(to, from, inner, step);
    else
      for (int64_t j = 0; j < inner; ++j)
        copyBytes(to + size_t(j) * elem, from + static_cast<ptrdiff_t>(j * step) * ptrdiff_t(elem), elem);
    for (size_t d = r - 1; d-- > 0;) {
      idx[d]++;
      off += srcStride[d];
      if (idx[d] < out[d]) break;
      off -= srcStride[d] * out[d];
      idx[d] = 0;
    }
  }
}

std::vector<int64_t> stridesOf(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

Result<void> requireBytes(const Tensor &t) {
  if (t.isString()) return errorf("string tensors are not supported by this kernel");
  return success();
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
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  gatherStrided(bytes.data(), a.bytes().data(), elementSize(a.type()), out, srcStride);
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

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
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  size_t elem = elementSize(a.type());
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= out[d];
  for (size_t d = axis + 1; d < out.size(); ++d) inner *= out[d];
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
                                        const std::vector<int64_t> &sizes) {
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
  for (size_t d = 0; d < axis; ++d) outer *= a.shape()[d];
  for (size_t d = axis + 1; d < a.shape().size(); ++d) inner *= a.shape()[d];
  int64_t at = 0;
  std::vector<Tensor> outs;
  for (int64_t size : sizes) {
    Shape out = a.shape();
    out[axis] = size;
    SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
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
  SF_ASSIGN(auto outs, splitTensor(ctx, a, axis, sizes));
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
  for (size_t d = 0; d < axis; ++d) outer *= a.shape()[d];
  for (size_t d = axis + 1; d < a.shape().size(); ++d) inner *= a.shape()[d];
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

Result<void> slice(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_TRY(requireBytes(a));
  size_t r = a.shape().size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
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
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  size_t elem = elementSize(a.type());
  if (countOf(out) > 0)
    gatherStrided(bytes.data(), a.bytes().data() + size_t(base) * elem, elem, out, srcStride);
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
  if (n > double(int64_t(1) << 40)) return errorf("{} elements", n);
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

Result<void> registerTensorOps(OpRegistry &r) {
  SF_TRY(setSequenceKernel(r, "Identity", identity));
  SF_TRY(setKernel(r, "Dropout", dropout));
  SF_TRY(setKernel(r, "Shape", shapeOp));
  SF_TRY(setKernel(r, "Size", sizeOp));
  SF_TRY(setKernel(r, "Reshape", reshape));
  SF_TRY(setKernel(r, "Flatten", flatten));
  SF_TRY(setKernel(r, "Squeeze", squeeze));
  SF_TRY(setKernel(r, "Unsqueeze", unsqueeze));
  SF_TRY(setKernel(r, "Transpose", transpose));
  SF_TRY(setKernel(r, "Concat", concat));
  SF_TRY(setKernel(r, "Split", split));
  SF_TRY(setKernel(r, "Gather", gather));
  SF_TRY(setKernel(r, "Slice", slice));
  SF_TRY(setKernel(r, "Expand", expand));
  SF_TRY(setKernel(r, "Tile", tile));
  SF_TRY(setKernel(r, "ConstantOfShape", constantOfShape));
  SF_TRY(setKernel(r, "Range", range));
  return success();
}

} // namespace sf::eval::detail
