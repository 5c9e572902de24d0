// What every kernel family shares: typed reads of (possibly unaligned) tensor bytes, output
// tensors, element-type dispatch, broadcasting, attribute and axis helpers.
#pragma once

#include "shapeflow/eval/eval.h"
#include "shapeflow/support/checked.h"
#include "shapeflow/support/float16.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

namespace sf::eval::detail {

/// The elements of a tensor as T* (in place when aligned, else copied once).
template <class T> class Elements {
public:
  explicit Elements(const Tensor &t) {
    auto b = t.bytes();
    // Read as T only what holds T-sized elements, all of them: a kernel reading an input of
    // another type (a caller's mistake the rules did not catch) stops with an error, not a read
    // past the bytes.
    if (elementSize(t.type()) != sizeof(T) || (!t.hasData() && t.elementCount() > 0) ||
        b.size() != size_t(t.elementCount()) * sizeof(T))
      throw EvalContext::UnreadableInput(fmt::format("an input {}[{}]{} read as elements of {} bytes",
                                                     shortName(t.type()), fmt::join(t.shape(), ","),
                                                     t.hasData() ? "" : " without data", sizeof(T)));
    n_ = b.size() / sizeof(T);
    if (reinterpret_cast<uintptr_t>(b.data()) % alignof(T) == 0) {
      p_ = reinterpret_cast<const T *>(b.data());
    } else {
      copy_ = std::make_unique<T[]>(n_);
      if (n_) std::memcpy(copy_.get(), b.data(), n_ * sizeof(T));
      p_ = copy_.get();
    }
  }
  const T *data() const { return p_; }
  const T &operator[](size_t i) const { return p_[i]; }
  size_t size() const { return n_; }

private:
  const T *p_ = nullptr;
  size_t n_ = 0;
  std::unique_ptr<T[]> copy_;
};

/// Integer arithmetic as ONNX defines it: two's complement, wrapping (C++'s signed overflow is
/// undefined, so the operation runs in the unsigned type of at least the operands' width, where
/// promotion cannot bring a signed int back). Floating point passes through.
template <class T> using WrapType = std::make_unsigned_t<std::common_type_t<T, unsigned>>;
template <class T> T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return T(WrapType<T>(a) + WrapType<T>(b));
  else return T(a + b);
}
template <class T> T wrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return T(WrapType<T>(a) - WrapType<T>(b));
  else return T(a - b);
}
template <class T> T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return T(WrapType<T>(a) * WrapType<T>(b));
  else return T(a * b);
}

/// memcpy that copies nothing for n == 0, where an empty tensor's bytes may be null (memcpy
/// requires valid pointers even then).
inline void copyBytes(void *dst, const void *src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

inline int64_t countOf(const Shape &s) {
  int64_t c = 1;
  for (int64_t d : s) c *= d;
  return c;
}

/// The elements of dims [from, to) of `s`, for the loops over a tensor's dims before and after
/// an axis: 0 when any dim of `s` is 0. Such a tensor has no element, so the loops have nothing
/// to visit, while the product of its other dims would still count empty iterations (2^35 of
/// them for a rank-192 shape) or pass int64. Otherwise the product is at most the tensor's
/// element count, which was admitted.
inline int64_t dimsProduct(const Shape &s, size_t from, size_t to) {
  for (int64_t d : s)
    if (d == 0) return 0;
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

/// The sum of f(x[i]) over n values in double, in 8 partial sums: independent chains (a
/// normalisation's mean and variance, a softmax's denominator), not one addition waiting on the
/// last.
template <class T, class F> double laneSum(const T *x, int64_t n, F f) {
  double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) lanes[k] += f(double(x[i + k]));
  for (; i < n; ++i) lanes[0] += f(double(x[i]));
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

/// The largest of n values (at least one) in 16 partial maxima; a NaN is passed over, as
/// std::max(largest, NaN) does.
template <class T> T laneMax(const T *x, int64_t n) {
  T lanes[16];
  std::fill(lanes, lanes + 16, -std::numeric_limits<T>::infinity());
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) lanes[k] = x[i + k] > lanes[k] ? x[i + k] : lanes[k];
  for (; i < n; ++i) lanes[0] = x[i] > lanes[0] ? x[i] : lanes[0];
  T m = lanes[0];
  for (int k = 1; k < 16; ++k) m = lanes[k] > m ? lanes[k] : m;
  return m;
}

/// An output being written: typed elements, made a tensor by `finish`. `output`: which of the
/// node's outputs it is, for a kernel with several (EvalContext::allocate).
template <class T> class Output {
public:
  Output(EvalContext &ctx, ElementType type, Shape shape, std::optional<size_t> output = {})
      : ctx_(ctx), type_(type), shape_(std::move(shape)), output_(output) {}
  /// Zeroed elements.
  Result<T *> make() {
    SF_ASSIGN(T * p, makeForOverwrite());
    std::memset(static_cast<void *>(p), 0, size_t(countOf(shape_)) * sizeof(T));
    return p;
  }
  /// Uninitialised elements, for a kernel that writes every one of them. `inPlace`: the kernel
  /// writes element i only after reading element i of its inputs (and no other element of them
  /// after that), so the output may take a dying input's bytes (EvalContext::allocateForOverwrite).
  Result<T *> makeForOverwrite(bool inPlace = false) {
    SF_ASSIGN(buffer_, ctx_.allocateForOverwrite(type_, shape_, inPlace, output_));
    return reinterpret_cast<T *>(buffer_.get());
  }
  Result<void> finish(size_t i) {
    if (!buffer_) SF_TRY(make());
    size_t n = size_t(countOf(shape_)) * elementSize(type_);
    SF_ASSIGN(Tensor t, Tensor::view(type_, std::move(shape_), std::span<const std::byte>(buffer_.get(), n),
                                     std::shared_ptr<const void>(buffer_, buffer_.get())));
    return ctx_.setOutput(i, std::move(t));
  }

private:
  EvalContext &ctx_;
  ElementType type_;
  Shape shape_;
  std::optional<size_t> output_;
  std::shared_ptr<std::byte[]> buffer_;
};


/// A double as an element of T: as it is for floats; for integers NaN is 0 and the rest is
/// clamped to T's range (converting an out-of-range double is undefined behaviour), so that an
/// empty ReduceMax (-inf) gives T's lowest value, as ONNX says.
template <class T> T toElement(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return T(v);
  } else {
    if (v != v) return T(0);
    if (v <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(v);
  }
}

inline std::string shapeText(const Shape &s) { return toString(s); }

template <class T> struct Tag { using type = T; };

/// Calls f(Tag<T>{}) for the C++ type of a numeric element type (f16/bf16 are not here: the
/// kernels that take them convert through float).
template <class F> Result<void> dispatch(ElementType t, F &&f, bool withBool = true) {
  switch (t) {
  case ElementType::F32: return f(Tag<float>{});
  case ElementType::F64: return f(Tag<double>{});
  case ElementType::I64: return f(Tag<int64_t>{});
  case ElementType::I32: return f(Tag<int32_t>{});
  case ElementType::I16: return f(Tag<int16_t>{});
  case ElementType::I8: return f(Tag<int8_t>{});
  case ElementType::U8: return f(Tag<uint8_t>{});
  case ElementType::U16: return f(Tag<uint16_t>{});
  case ElementType::U32: return f(Tag<uint32_t>{});
  case ElementType::U64: return f(Tag<uint64_t>{});
  case ElementType::Bool:
    if (withBool) return f(Tag<bool>{});
    [[fallthrough]];
  default:
    return errorf("element type {} is not supported by this kernel", shortName(t));
  }
}

/// Calls f(Tag<T>{}) for f32 and f64.
template <class F> Result<void> dispatchFloat(ElementType t, F &&f) {
  if (t == ElementType::F32) return f(Tag<float>{});
  if (t == ElementType::F64) return f(Tag<double>{});
  return errorf("element type {} is not supported by this kernel (f32, f64)", shortName(t));
}

/// The shape of per-row statistics (a normalisation's mean, inverse deviation): `x` with the
/// dims from `axis` on set to 1.
inline Shape statsShape(const Shape &x, size_t axis) {
  Shape s = x;
  for (size_t d = axis; d < s.size(); ++d) s[d] = 1;
  return s;
}

/// NumPy broadcasting of several shapes.
inline Result<Shape> broadcastAll(const std::vector<Shape> &shapes) {
  size_t rank = 0;
  for (const Shape &s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape &s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[rank - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o != 1) {
        std::string text;
        for (const Shape &x : shapes) text += (text.empty() ? "" : " and ") + shapeText(x);
        return errorf("shapes {} do not broadcast", text);
      }
      o = d;
    }
  return out;
}

/// Element strides of `s` seen as `out` (0 along broadcast dims).
inline std::vector<int64_t> broadcastStrides(const Shape &s, const Shape &out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = s.size(); i-- > 0;) {
    size_t o = out.size() - s.size() + i;
    st[o] = s[i] == 1 ? 0 : stride;
    stride *= s[i];
  }
  return st;
}

/// Calls f(outIndex, offsets) for every element of `out`, offsets[k] the element of input k.
template <size_t K, class F>
void forEachBroadcast(const Shape &out, const std::array<std::vector<int64_t>, K> &strides, F &&f) {
  int64_t total = countOf(out);
  if (total == 0) return;
  size_t r = out.size();
  std::vector<int64_t> idx(r, 0);
  std::array<int64_t, K> off{};
  int64_t inner = r ? out[r - 1] : 1;
  std::array<int64_t, K> innerStride{};
  for (size_t k = 0; k < K; ++k) innerStride[k] = r ? strides[k][r - 1] : 0;
  for (int64_t o = 0; o < total; o += inner) {
    std::array<int64_t, K> cur = off;
    for (int64_t j = 0; j < inner; ++j) {
      f(o + j, cur);
      for (size_t k = 0; k < K; ++k) cur[k] += innerStride[k];
    }
    // Advance the outer index (all but the last dim).
    for (size_t d = r >= 1 ? r - 1 : 0; d-- > 0;) {
      idx[d]++;
      for (size_t k = 0; k < K; ++k) off[k] += strides[k][d];
      if (idx[d] < out[d]) break;
      for (size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

/// An axis attribute or value in [-rank, rank) made non-negative.
inline Result<size_t> normAxis(int64_t axis, size_t rank, std::string_view what = "axis") {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r) return errorf("{} {} is out of range for rank {}", what, axis, rank);
  return size_t(axis < 0 ? axis + r : axis);
}

/// Integer elements of a small tensor (shape inputs: axes, starts, pads, ...).
inline Result<std::vector<int64_t>> ints(const Tensor &t) {
  return t.toInt64s(size_t(std::max<int64_t>(t.elementCount(), 0)));
}

/// Elements of any numeric tensor as doubles (scalars such as Clip's min).
inline Result<std::vector<double>> doubles(const Tensor &t) {
  return t.toDoubles(size_t(std::max<int64_t>(t.elementCount(), 0)));
}

/// `a` converted to `to` as Cast does (truncating floats to integers, numbers to and from text).
Result<Tensor> castTensor(EvalContext &ctx, const Tensor &a, ElementType to);

/// x/2 (1 + erf(x / sqrt 2)) of an f32 tensor in one pass (oneDNN's gelu_erf where the build has
/// it) as output 0: the executor's fold of the five ops torch exports GELU as.
Result<void> fusedGelu(EvalContext &ctx, const Tensor &x);
/// The parts joined along `axis` (same type, same dims elsewhere; at least one part).
Result<Tensor> concatTensors(EvalContext &ctx, const std::vector<const Tensor *> &parts, size_t axis);
/// `a` cut along `axis` into pieces of `sizes` (which must add up to the axis): piece k is the
/// node's output k (`eachAnOutput`, Split) or all are elements of output 0 (a sequence).
Result<std::vector<Tensor>> splitTensor(EvalContext &ctx, const Tensor &a, size_t axis,
                                        const std::vector<int64_t> &sizes, bool eachAnOutput);

/// The kernels of each ops family, one function per file of src/eval/kernels/ (named after the
/// family's file in src/ops/), each setting the kernels of the ops that family registers.
Result<void> registerArrayOpsKernels(OpRegistry &r);
Result<void> registerAttentionKernels(OpRegistry &r);
Result<void> registerContribKernels(OpRegistry &r);
/// Contrib ops whose kernels wrap standard ones (FusedConv, FusedGemm): after
/// every other family.
Result<void> registerContribKernelsOnStandardOnes(OpRegistry &r);
Result<void> registerControlFlowKernels(OpRegistry &r);
Result<void> registerConvPoolKernels(OpRegistry &r);
Result<void> registerConvPoolQuantizedKernels(OpRegistry &r);
Result<void> registerConvTransposeKernels(OpRegistry &r);
Result<void> registerElementwiseKernels(OpRegistry &r);
Result<void> registerElementwiseUnaryKernels(OpRegistry &r);
Result<void> registerFusedKernels(OpRegistry &r);
Result<void> registerIndexKernels(OpRegistry &r);
Result<void> registerMatMulKernels(OpRegistry &r);
Result<void> registerMiscKernels(OpRegistry &r);
Result<void> registerNormKernels(OpRegistry &r);
Result<void> registerReduceKernels(OpRegistry &r);
Result<void> registerResizeKernels(OpRegistry &r);
Result<void> registerRnnKernels(OpRegistry &r);
Result<void> registerSequenceKernels(OpRegistry &r);
Result<void> registerShapeOpsKernels(OpRegistry &r);
Result<void> registerTrainingKernels(OpRegistry &r);

/// Sets a kernel on a registered op (an error if the op is not registered: a typo here).
Result<void> setKernel(OpRegistry &r, std::string_view name, KernelFn k, std::string_view domain = "");
/// A kernel that reads sequences and optionals among its inputs (EvalContext::value).
Result<void> setSequenceKernel(OpRegistry &r, std::string_view name, KernelFn k);

} // namespace sf::eval::detail
