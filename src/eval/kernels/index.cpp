// Kernels of the indexing and data-dependent ops (src/ops/index.cpp).
// GatherElements, ScatterElements (and Scatter), GatherND, ScatterND, Compress, NonZero, OneHot,
// EyeLike, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence, TopK, NonMaxSuppression, Unique,
// Det.
#include "../kernel_util.h"
#include "bounds.h"
#include "strides.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>

namespace sf::eval::detail {
namespace {

Result<int64_t> normIndex(int64_t i, int64_t len) {
  if (i < -len || i >= len) return errorf("index {} is out of range for an axis of {}", i, len);
  return i < 0 ? i + len : i;
}

/// A scatter's `reduction`: none (replace), add, mul, max, min.
template <class T> void reduceInto(const std::string &red, T &dst, T v) {
  if (red == "add") dst = T(dst + v);
  else if (red == "mul") dst = T(dst * v);
  else if (red == "max") dst = std::max(dst, v);
  else if (red == "min") dst = std::min(dst, v);
  else dst = v;
}

/// GatherElements' and ScatterElements' indices: data's rank, and no longer than data along the
/// other axes (each index position is also a position in data there).
Result<void> elementIndicesFit(const Shape &indices, const Shape &data, size_t axis) {
  if (indices.size() != data.size())
    return errorf("indices {} and data {} have different ranks", shapeText(indices), shapeText(data));
  for (size_t d = 0; d < data.size(); ++d)
    if (d != axis && indices[d] > data[d])
      return errorf("indices {} are longer than data {} along axis {}", shapeText(indices), shapeText(data), d);
  return success();
}

Result<void> gatherElements(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &ix = ctx.input(1);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  SF_TRY(elementIndicesFit(ix.shape(), a.shape(), axis));
  SF_ASSIGN(auto idx, ints(ix));
  auto st = stridesOf(a.shape());
  size_t elem = elementSize(a.type());
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), ix.shape()));
  std::vector<int64_t> at;
  for (int64_t o = 0; o < ix.elementCount(); ++o) {
    unravel(o, ix.shape(), at);
    SF_ASSIGN(int64_t i, normIndex(idx[size_t(o)], a.shape()[axis]));
    at[axis] = i;
    int64_t off = 0;
    for (size_t d = 0; d < at.size(); ++d) off += at[d] * st[d];
    copyBytes(bytes.data() + size_t(o) * elem, a.bytes().data() + size_t(off) * elem, elem);
  }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), ix.shape()));
  return ctx.setOutput(0, std::move(t));
}

/// ScatterElements (and the deprecated Scatter): reduction none/add/mul/max/min.
Result<void> scatterElements(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &ix = ctx.input(1), &up = ctx.input(2);
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
  SF_ASSIGN(std::string red, ctx.attrs().getString("reduction", "none"));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  SF_TRY(elementIndicesFit(ix.shape(), a.shape(), axis));
  if (up.shape() != ix.shape())
    return errorf("updates {} and indices {} differ in shape", shapeText(up.shape()), shapeText(ix.shape()));
  if (up.type() != a.type()) return errorf("updates are {}, data {}", shortName(up.type()), shortName(a.type()));
  SF_ASSIGN(auto idx, ints(ix));
  auto st = stridesOf(a.shape());
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a), u(up);
    Output<T> o(ctx, a.type(), a.shape());
    SF_ASSIGN(T *p, o.make());
    std::copy(x.data(), x.data() + x.size(), p);
    std::vector<int64_t> at;
    for (int64_t k = 0; k < ix.elementCount(); ++k) {
      unravel(k, ix.shape(), at);
      SF_ASSIGN(int64_t i, normIndex(idx[size_t(k)], a.shape()[axis]));
      at[axis] = i;
      int64_t off = 0;
      for (size_t d = 0; d < at.size(); ++d) off += at[d] * st[d];
      reduceInto(red, p[off], u[size_t(k)]);
    }
    return o.finish(0);
  });
}

Result<void> gatherND(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &ix = ctx.input(1);
  SF_ASSIGN(int64_t batch, ctx.attrs().getInt("batch_dims", 0));
  SF_ASSIGN(auto idx, ints(ix));
  const Shape &ds = a.shape(), &is = ix.shape();
  if (is.empty()) return errorf("indices of rank 0");
  int64_t q = is.back();
  if (batch < 0 || size_t(batch) >= is.size() || size_t(batch + q) > ds.size())
    return errorf("indices {} with batch_dims {} do not index data {}", shapeText(is), batch, shapeText(ds));
  for (size_t d = 0; d < size_t(batch); ++d)
    if (is[d] != ds[d])
      return errorf("indices {} and data {} differ in batch dim {}", shapeText(is), shapeText(ds), d);
  Shape out(is.begin(), is.end() - 1);
  for (size_t d = size_t(batch + q); d < ds.size(); ++d) out.push_back(ds[d]);
  int64_t batches = 1;
  for (int64_t d = 0; d < batch; ++d) batches *= ds[size_t(d)];
  int64_t slice = 1;
  for (size_t d = size_t(batch + q); d < ds.size(); ++d) slice *= ds[d];
  int64_t perBatchIdx = countOf(Shape(is.begin() + batch, is.end() - 1));
  int64_t perBatchData = 1;
  for (size_t d = size_t(batch); d < ds.size(); ++d) perBatchData *= ds[d];
  auto st = stridesOf(Shape(ds.begin() + batch, ds.end()));
  size_t elem = elementSize(a.type());
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  std::byte *dst = bytes.data();
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t k = 0; k < perBatchIdx; ++k) {
      int64_t off = b * perBatchData;
      for (int64_t j = 0; j < q; ++j) {
        SF_ASSIGN(int64_t i, normIndex(idx[size_t((b * perBatchIdx + k) * q + j)], ds[size_t(batch + j)]));
        off += i * st[size_t(j)];
      }
      copyBytes(dst, a.bytes().data() + size_t(off) * elem, size_t(slice) * elem);
      dst += size_t(slice) * elem;
    }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> scatterND(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &ix = ctx.input(1), &up = ctx.input(2);
  SF_ASSIGN(std::string red, ctx.attrs().getString("reduction", "none"));
  SF_ASSIGN(auto idx, ints(ix));
  const Shape &ds = a.shape(), &is = ix.shape();
  if (is.empty() || size_t(is.back()) > ds.size())
    return errorf("indices {} do not index data {}", shapeText(is), shapeText(ds));
  int64_t q = is.back();
  // updates: indices' shape without its last dim, then data's dims past the indexed ones.
  Shape want(is.begin(), is.end() - 1);
  want.insert(want.end(), ds.begin() + q, ds.end());
  if (up.shape() != want)
    return errorf("updates {} are not indices {} and data {}'s {}", shapeText(up.shape()), shapeText(is),
                  shapeText(ds), shapeText(want));
  if (up.type() != a.type()) return errorf("updates are {}, data {}", shortName(up.type()), shortName(a.type()));
  int64_t slice = 1;
  for (size_t d = size_t(q); d < ds.size(); ++d) slice *= ds[d];
  auto st = stridesOf(ds);
  int64_t n = countOf(Shape(is.begin(), is.end() - 1));
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a), u(up);
    Output<T> o(ctx, a.type(), ds);
    SF_ASSIGN(T *p, o.make());
    std::copy(x.data(), x.data() + x.size(), p);
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = 0;
      for (int64_t j = 0; j < q; ++j) {
        SF_ASSIGN(int64_t i, normIndex(idx[size_t(k * q + j)], ds[size_t(j)]));
        off += i * st[size_t(j)];
      }
      for (int64_t e = 0; e < slice; ++e) {
        reduceInto(red, p[off + e], u[size_t(k * slice + e)]);
      }
    }
    return o.finish(0);
  });
}

Result<void> compress(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(auto cond, ints(ctx.input(1)));
  bool flat = !ctx.attrs().has("axis");
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
  Shape shape = flat ? Shape{a.elementCount()} : a.shape();
  SF_ASSIGN(size_t axis, normAxis(flat ? 0 : axisAttr, shape.size()));
  int64_t len = shape[axis], outer = 1, inner = 1;
  outer = dimsProduct(shape, 0, axis);
  inner = dimsProduct(shape, axis + 1, shape.size());
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min<int64_t>(len, int64_t(cond.size())); ++i)
    if (cond[size_t(i)]) keep.push_back(i);
  Shape out = shape;
  out[axis] = int64_t(keep.size());
  size_t elem = elementSize(a.type());
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  std::byte *dst = bytes.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : keep) {
      copyBytes(dst, a.bytes().data() + size_t((o * len + i) * inner) * elem, size_t(inner) * elem);
      dst += size_t(inner) * elem;
    }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> nonZero(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(auto v, doubles(a));
  std::vector<int64_t> hits;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0) hits.push_back(int64_t(i));
  size_t r = a.shape().size();
  Shape out{int64_t(r), int64_t(hits.size())};
  Output<int64_t> o(ctx, ElementType::I64, out);
  SF_ASSIGN(int64_t *p, o.make());
  std::vector<int64_t> at;
  for (size_t k = 0; k < hits.size(); ++k) {
    unravel(hits[k], a.shape(), at);
    for (size_t d = 0; d < r; ++d) p[d * hits.size() + k] = at[d];
  }
  return o.finish(0);
}

Result<void> oneHot(EvalContext &ctx) {
  const Tensor &ix = ctx.input(0), &vals = ctx.input(2);
  SF_ASSIGN(auto depthV, doubles(ctx.input(1)));
  if (depthV.size() != 1) return errorf("depth must have one element");
  int64_t depth = int64_t(depthV[0]);
  if (depth <= 0) return errorf("depth {} ", depth);
  SF_ASSIGN(auto idx, doubles(ix));
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", -1));
  size_t r = ix.shape().size() + 1;
  SF_ASSIGN(size_t axis, normAxis(axisAttr, r));
  Shape out = ix.shape();
  out.insert(out.begin() + long(axis), depth);
  int64_t outer = 1, inner = 1;
  outer = dimsProduct(out, 0, axis);
  inner = dimsProduct(out, axis + 1, r);
  return dispatch(vals.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> v(vals);
    if (v.size() != 2) return errorf("values must have two elements");
    Output<T> o(ctx, vals.type(), out);
    SF_ASSIGN(T *p, o.make());
    for (int64_t i = 0; i < countOf(out); ++i) p[i] = v[0];
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t b = 0; b < inner; ++b) {
        int64_t k = int64_t(idx[size_t(a * inner + b)]);
        if (k < 0) k += depth;
        if (k >= 0 && k < depth) p[(a * depth + k) * inner + b] = v[1];
      }
    return o.finish(0);
  });
}

Result<void> eyeLike(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  if (a.shape().size() != 2) return errorf("input must be 2-D");
  SF_ASSIGN(int64_t k, ctx.attrs().getInt("k", 0));
  ElementType type = a.type();
  if (ctx.attrs().has("dtype")) {
    SF_ASSIGN(int64_t dt, ctx.attrs().getInt("dtype"));
    auto t = elementTypeFromOnnx(dt);
    if (!t) return errorf("dtype {}", dt);
    type = *t;
  }
  int64_t rows = a.shape()[0], cols = a.shape()[1];
  std::vector<double> v(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) v[size_t(i * cols + i + k)] = 1;
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(type, a.shape(), v));
  return ctx.setOutput(0, std::move(t));
}

Result<void> trilu(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t upper, ctx.attrs().getInt("upper", 1));
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    SF_ASSIGN(auto kv, ints(ctx.input(1)));
    if (kv.size() != 1) return errorf("k must have one element");
    k = kv[0];
  }
  const Shape &s = a.shape();
  if (s.size() < 2) return errorf("input must have rank >= 2");
  int64_t rows = s[s.size() - 2], cols = s.back(), mats = countOf(s) / std::max<int64_t>(rows * cols, 1);
  size_t elem = elementSize(a.type());
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), s));
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool keep = upper ? j - i >= k : j - i <= k;
        size_t at = size_t((m * rows + i) * cols + j) * elem;
        if (keep) copyBytes(bytes.data() + at, a.bytes().data() + at, elem);
      }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), s));
  return ctx.setOutput(0, std::move(t));
}

Result<void> depthSpace(EvalContext &ctx, bool toSpace) {
  const Tensor &a = ctx.input(0);
  if (a.shape().size() != 4) return errorf("input must be 4-D");
  SF_ASSIGN(int64_t b, ctx.attrs().getInt("blocksize"));
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode", "DCR"));
  int64_t n = a.shape()[0], c = a.shape()[1], h = a.shape()[2], w = a.shape()[3];
  Shape out = toSpace ? Shape{n, c / (b * b), h * b, w * b} : Shape{n, c * b * b, h / b, w / b};
  if (toSpace ? c % (b * b) != 0 : (h % b != 0 || w % b != 0)) return errorf("blocksize {} does not divide", b);
  size_t elem = elementSize(a.type());
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), out));
  int64_t oc = out[1], oh = out[2], ow = out[3];
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ch = 0; ch < oc; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int64_t sc, sy, sx;
          if (toSpace) {
            int64_t by = y % b, bx = x % b;
            sc = mode == "CRD" ? ch * b * b + by * b + bx : (by * b + bx) * oc + ch;
            sy = y / b, sx = x / b;
          } else {
            int64_t cc = ch % c, blk = ch / c;
            sc = cc, sy = y * b + blk / b, sx = x * b + blk % b;
          }
          size_t src = size_t(((in * c + sc) * h + sy) * w + sx) * elem;
          size_t dst = size_t(((in * oc + ch) * oh + y) * ow + x) * elem;
          copyBytes(bytes.data() + dst, a.bytes().data() + src, elem);
        }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), out));
  return ctx.setOutput(0, std::move(t));
}

Result<void> reverseSequence(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(auto lens, ints(ctx.input(1)));
  SF_ASSIGN(int64_t batchAxis, ctx.attrs().getInt("batch_axis", 1));
  SF_ASSIGN(int64_t timeAxis, ctx.attrs().getInt("time_axis", 0));
  const Shape &shape = a.shape();
  if (shape.size() < 2 || batchAxis < 0 || batchAxis > 1 || timeAxis < 0 || timeAxis > 1 || batchAxis == timeAxis)
    return errorf("batch_axis {} and time_axis {} of an input of shape {} (each 0 or 1, apart, rank >= 2)",
                  batchAxis, timeAxis, shapeText(shape));
  const int64_t batch = shape[size_t(batchAxis)], steps = shape[size_t(timeAxis)];
  if (int64_t(lens.size()) != batch)
    return errorf("sequence_lens has {} elements for a batch of {}", lens.size(), batch);
  for (int64_t len : lens)
    if (len < 0 || len > steps) return errorf("a sequence length of {} in {} steps", len, steps);
  auto st = stridesOf(shape);
  size_t elem = elementSize(a.type());
  SF_ASSIGN(auto bytes, ctx.allocate(a.type(), shape));
  std::vector<int64_t> at;
  for (int64_t k = 0; k < a.elementCount(); ++k) {
    unravel(k, shape, at);
    int64_t b = at[size_t(batchAxis)], t = at[size_t(timeAxis)];
    if (t < lens[size_t(b)]) at[size_t(timeAxis)] = lens[size_t(b)] - 1 - t;
    int64_t off = 0;
    for (size_t d = 0; d < at.size(); ++d) off += at[d] * st[d];
    copyBytes(bytes.data() + size_t(k) * elem, a.bytes().data() + size_t(off) * elem, elem);
  }
  SF_ASSIGN(Tensor t, std::move(bytes).tensor(a.type(), a.shape()));
  return ctx.setOutput(0, std::move(t));
}

Result<void> topK(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  int64_t k = 0;
  if (ctx.opset() < 10) {
    SF_ASSIGN(k, ctx.attrs().getInt("k"));
  } else {
    SF_ASSIGN(auto kv, ints(ctx.input(1)));
    if (kv.size() != 1) return errorf("K must have one element");
    k = kv[0];
  }
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", -1));
  SF_ASSIGN(int64_t largest, ctx.attrs().getInt("largest", 1));
  SF_ASSIGN(int64_t sorted, ctx.attrs().getInt("sorted", 1));
  (void)sorted;
  SF_ASSIGN(size_t axis, normAxis(axisAttr, a.shape().size()));
  int64_t len = a.shape()[axis], outer = 1, inner = 1;
  if (k < 0 || k > len) return errorf("K {} for an axis of {}", k, len);
  outer = dimsProduct(a.shape(), 0, axis);
  inner = dimsProduct(a.shape(), axis + 1, a.shape().size());
  Shape out = a.shape();
  out[axis] = k;
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> x(a);
    Output<T> o(ctx, a.type(), out, 0);
    Output<int64_t> oi(ctx, ElementType::I64, out, 1);
    SF_ASSIGN(T *p, o.make());
    SF_ASSIGN(int64_t *pi, oi.make());
    std::vector<int64_t> order(static_cast<size_t>(len));
    for (int64_t u = 0; u < outer; ++u)
      for (int64_t v = 0; v < inner; ++v) {
        std::iota(order.begin(), order.end(), 0);
        auto val = [&](int64_t i) { return x[size_t((u * len + i) * inner + v)]; };
        // Ties: the smaller index first (as the spec asks of sorted outputs).
        std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
          return largest ? val(i) > val(j) : val(i) < val(j);
        });
        for (int64_t i = 0; i < k; ++i) {
          p[(u * k + i) * inner + v] = val(order[size_t(i)]);
          pi[(u * k + i) * inner + v] = order[size_t(i)];
        }
      }
    SF_TRY(o.finish(0));
    return oi.finish(1);
  }, false);
}

Result<void> nonMaxSuppression(EvalContext &ctx) {
  const Tensor &boxesT = ctx.input(0), &scoresT = ctx.input(1);
  if (boxesT.shape().size() != 3 || boxesT.shape()[2] != 4 || scoresT.shape().size() != 3)
    return errorf("boxes must be [B, N, 4] and scores [B, C, N]");
  int64_t batches = boxesT.shape()[0], n = boxesT.shape()[1], classes = scoresT.shape()[1];
  if (scoresT.shape()[0] != batches || scoresT.shape()[2] != n) return errorf("boxes and scores disagree");
  int64_t maxOut = 0;
  double iouThreshold = 0;
  std::optional<double> scoreThreshold;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(auto v, ints(ctx.input(2)));
    if (!v.empty()) maxOut = v[0];
  }
  if (ctx.hasInput(3)) {
    SF_ASSIGN(auto v, doubles(ctx.input(3)));
    if (!v.empty()) iouThreshold = v[0];
  }
  if (ctx.hasInput(4)) {
    SF_ASSIGN(auto v, doubles(ctx.input(4)));
    if (!v.empty()) scoreThreshold = v[0];
  }
  SF_ASSIGN(int64_t center, ctx.attrs().getInt("center_point_box", 0));
  SF_ASSIGN(auto boxes, doubles(boxesT));
  SF_ASSIGN(auto scores, doubles(scoresT));
  // Corners (y1, x1, y2, x2), ordered, of box i of batch b.
  auto corners = [&](int64_t b, int64_t i) {
    const double *p = &boxes[size_t((b * n + i) * 4)];
    if (center) return std::array<double, 4>{p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
    return std::array<double, 4>{std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
  };
  auto iou = [](const std::array<double, 4> &a, const std::array<double, 4> &b) {
    double h = std::max(0.0, std::min(a[2], b[2]) - std::max(a[0], b[0]));
    double w = std::max(0.0, std::min(a[3], b[3]) - std::max(a[1], b[1]));
    double inter = h * w;
    double uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return uni > 0 ? inter / uni : 0.0;
  };
  std::vector<int64_t> selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i) {
        double s = scores[size_t((b * classes + c) * n + i)];
        if (!scoreThreshold || s > *scoreThreshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        return scores[size_t((b * classes + c) * n + i)] > scores[size_t((b * classes + c) * n + j)];
      });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= maxOut) break;
        auto ci = corners(b, i);
        bool suppressed = false;
        for (int64_t k : kept)
          if (iou(ci, corners(b, k)) > iouThreshold) {
            suppressed = true;
            break;
          }
        if (!suppressed) kept.push_back(i);
      }
      for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
    }
  Output<int64_t> o(ctx, ElementType::I64, {int64_t(selected.size() / 3), 3});
  SF_ASSIGN(int64_t *p, o.make());
  std::copy(selected.begin(), selected.end(), p);
  return o.finish(0);
}

/// Unique: the distinct elements (or slices along `axis`), sorted or in order of first
/// occurrence, with the first index of each, the inverse indices and the counts (mode 1: the
/// output size is the data's).
Result<void> unique(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(int64_t sorted, ctx.attrs().getInt("sorted", 1));
  bool hasAxis = ctx.attrs().has("axis");
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", 0));
  Shape shape = hasAxis ? x.shape() : Shape{x.elementCount()};
  SF_ASSIGN(size_t axis, normAxis(hasAxis ? axisAttr : 0, shape.size()));
  int64_t len = shape[axis], outer = 1, inner = 1;
  outer = dimsProduct(shape, 0, axis);
  inner = dimsProduct(shape, axis + 1, shape.size());
  SF_ASSIGN(auto v, doubles(x));
  auto sliceOf = [&](int64_t i) {
    std::vector<double> sl;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) sl.push_back(v[size_t((o * len + i) * inner + k)]);
    return sl;
  };
  std::vector<std::vector<double>> slices;
  std::vector<int64_t> first, counts, inverse(static_cast<size_t>(len));
  std::map<std::vector<double>, int64_t> seen;
  for (int64_t i = 0; i < len; ++i) {
    auto sl = sliceOf(i);
    auto it = seen.find(sl);
    if (it == seen.end()) {
      it = seen.emplace(sl, int64_t(slices.size())).first;
      slices.push_back(sl);
      first.push_back(i);
      counts.push_back(0);
    }
    inverse[size_t(i)] = it->second;
    counts[size_t(it->second)]++;
  }
  std::vector<int64_t> order(slices.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted) std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slices[size_t(a)] < slices[size_t(b)]; });
  std::vector<int64_t> rank(order.size());
  for (size_t k = 0; k < order.size(); ++k) rank[size_t(order[k])] = int64_t(k);
  Shape yShape = shape;
  yShape[axis] = int64_t(slices.size());
  std::vector<double> y(static_cast<size_t>(countOf(yShape)));
  for (size_t k = 0; k < order.size(); ++k) {
    const auto &sl = slices[size_t(order[k])];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        y[size_t((o * int64_t(order.size()) + int64_t(k)) * inner + i)] = sl[size_t(o * inner + i)];
  }
  SF_ASSIGN(Tensor yt, Tensor::fromDoubles(x.type(), yShape, y));
  SF_TRY(ctx.setOutput(0, std::move(yt)));
  std::vector<int64_t> idx, inv, cnt;
  for (int64_t k : order) idx.push_back(first[size_t(k)]), cnt.push_back(counts[size_t(k)]);
  for (int64_t i = 0; i < len; ++i) inv.push_back(rank[size_t(inverse[size_t(i)])]);
  if (ctx.numOutputs() > 1) SF_TRY(ctx.setOutput(1, Tensor::fromInt64s(idx)));
  if (ctx.numOutputs() > 2) SF_TRY(ctx.setOutput(2, Tensor::fromInt64s(inv)));
  if (ctx.numOutputs() > 3) SF_TRY(ctx.setOutput(3, Tensor::fromInt64s(cnt)));
  return success();
}

Result<void> det(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) return errorf("input must be [..., M, M]");
  int64_t m = s.back(), mats = countOf(Shape(s.begin(), s.end() - 2));
  SF_ASSIGN(auto v, doubles(x));
  std::vector<double> out(static_cast<size_t>(mats));
  for (int64_t k = 0; k < mats; ++k) {
    std::vector<double> a(v.begin() + k * m * m, v.begin() + (k + 1) * m * m);
    double d = 1;
    for (int64_t c = 0; c < m; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::abs(a[size_t(r * m + c)]) > std::abs(a[size_t(p * m + c)])) p = r;
      if (a[size_t(p * m + c)] == 0) {
        d = 0;
        break;
      }
      if (p != c) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[size_t(p * m + j)], a[size_t(c * m + j)]);
        d = -d;
      }
      d *= a[size_t(c * m + c)];
      for (int64_t r = c + 1; r < m; ++r) {
        double f = a[size_t(r * m + c)] / a[size_t(c * m + c)];
        for (int64_t j = c; j < m; ++j) a[size_t(r * m + j)] -= f * a[size_t(c * m + j)];
      }
    }
    out[size_t(k)] = d;
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), Shape(s.begin(), s.end() - 2), out));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerIndexKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "GatherElements", keepingBound(gatherElements)));
  SF_TRY(setKernel(r, "ScatterElements", scatterElements));
  SF_TRY(setKernel(r, "Scatter", scatterElements));
  SF_TRY(setKernel(r, "GatherND", keepingBound(gatherND)));
  SF_TRY(setKernel(r, "ScatterND", scatterND));
  SF_TRY(setKernel(r, "Compress", compress));
  SF_TRY(setKernel(r, "NonZero", nonZero));
  SF_TRY(setKernel(r, "OneHot", oneHot));
  SF_TRY(setKernel(r, "EyeLike", eyeLike));
  SF_TRY(setKernel(r, "Trilu", trilu));
  SF_TRY(setKernel(r, "DepthToSpace", keepingBound([](EvalContext &c) { return depthSpace(c, true); })));
  SF_TRY(setKernel(r, "SpaceToDepth", keepingBound([](EvalContext &c) { return depthSpace(c, false); })));
  SF_TRY(setKernel(r, "ReverseSequence", reverseSequence));
  SF_TRY(setKernel(r, "TopK", topK));
  SF_TRY(setKernel(r, "NonMaxSuppression", nonMaxSuppression));
  SF_TRY(setKernel(r, "Unique", unique));
  SF_TRY(setKernel(r, "Det", det));
  return success();
}

} // namespace sf::eval::detail
