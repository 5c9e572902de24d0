// Kernels of onnxruntime's quantized contrib ops (com.microsoft; rules in src/ops/contrib.cpp),
// with onnxruntime 1.30's CPU semantics: MatMulNBits and GatherBlockQuantized (in double), and
// QLinearAdd, QLinearMul, QLinearSigmoid and QLinearLeakyRelu (in float, as onnxruntime rounds).
#include "contrib.h"
#include "conv_pool.h"
#include "quantized.h"

#include "../blas.h"
#include "../dnnl.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace sf::eval::detail {
namespace {

/// The [N, K] weights of a MatMulNBits, dequantized: element k of row n is (q - zero point) *
/// scale of its block (block k / block_size, or g_idx[k]); q's bits are read low bits first
/// from B [N, blocks, block_size * bits / 8]; the zero point is packed like B (uint8), or of the
/// scales' type, or 2^(bits - 1) when absent.
Result<std::vector<double>> dequantizeNBits(EvalContext &ctx, int64_t K, int64_t N, int64_t bits, int64_t block) {
  const int64_t blocks = (K + block - 1) / block, blob = block * bits / 8;
  const Tensor &b = ctx.input(1);
  auto bytes = checkedMul(N, blocks);
  if (bytes) bytes = checkedMul(*bytes, blob);
  if (!bytes) return errorf("N {} and K {} overflow", N, K);
  if (b.type() != ElementType::U8 || countOf(b.shape()) != *bytes)
    return errorf("B {} must be uint8 [{}, {}, {}] (N, K in blocks of {}, the bytes of a block)", shapeText(b.shape()), N,
                  blocks, blob, block);
  SF_ASSIGN(auto scales, doubles(ctx.input(2)));
  if (int64_t(scales.size()) != N * blocks)
    return errorf("scales {} must hold {} values (N x blocks)", shapeText(ctx.input(2).shape()), N * blocks);
  const int64_t mask = (int64_t(1) << bits) - 1, zpRow = (blocks * bits + 7) / 8;
  std::vector<double> zp;
  bool packedZp = false;
  if (ctx.hasInput(3)) {
    const Tensor &z = ctx.input(3);
    packedZp = z.type() == ElementType::U8;
    if (packedZp && countOf(z.shape()) != N * zpRow)
      return errorf("zero_points {} must hold {} bytes (N x {})", shapeText(z.shape()), N * zpRow, zpRow);
    if (!packedZp && countOf(z.shape()) != N * blocks)
      return errorf("zero_points {} must hold {} values (N x blocks)", shapeText(z.shape()), N * blocks);
    SF_ASSIGN(zp, doubles(z));
  }
  std::vector<int64_t> gIdx;
  if (ctx.hasInput(4)) {
    SF_ASSIGN(gIdx, ints(ctx.input(4)));
    if (int64_t(gIdx.size()) < K) return errorf("g_idx has {} values for K = {}", gIdx.size(), K);
    for (int64_t g : gIdx)
      if (g < 0 || g >= blocks) return errorf("g_idx value {} is outside 0..{}", g, blocks - 1);
  }
  const uint8_t *q = reinterpret_cast<const uint8_t *>(b.bytes().data());
  SF_TRY(ctx.admit(ElementType::F64, Shape{N, K}));
  std::vector<double> w(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t kb = gIdx.empty() ? k / block : gIdx[size_t(k)], bit = (k % block) * bits;
      const int64_t v = (q[size_t((n * blocks + k / block) * blob + bit / 8)] >> (bit % 8)) & mask;
      double z = double(int64_t(1) << (bits - 1));
      if (!zp.empty() && packedZp) {
        const int64_t zbit = kb * bits;
        z = double((int64_t(zp[size_t(n * zpRow + zbit / 8)]) >> (zbit % 8)) & mask);
      } else if (!zp.empty()) {
        z = zp[size_t(n * blocks + kb)];
      }
      w[size_t(n * K + k)] = (double(v) - z) * scales[size_t(n * blocks + kb)];
    }
  return w;
}

/// accuracy_level 4: onnxruntime quantizes A to int8 per row and per block of `block` along K
/// (symmetric: a scale of max|a| / 127 in float, each element rounded to the nearest step) and
/// multiplies those steps; the same values, dequantized.
void quantizeRowsToInt8(std::vector<double> &av, int64_t K, int64_t block) {
  for (size_t row = 0; row + size_t(K) <= av.size(); row += size_t(K))
    for (int64_t k0 = 0; k0 < K; k0 += block) {
      const int64_t k1 = std::min(K, k0 + block);
      float amax = 0;
      for (int64_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(float(av[row + size_t(k)])));
      const float scale = amax / 127.0f;
      for (int64_t k = k0; k < k1; ++k) {
        double &x = av[row + size_t(k)];
        x = scale == 0 ? 0.0 : double(std::round(float(x) / scale) * scale);
      }
    }
}

/// A MatMulNBits's weights dequantized to f32 [N, K], kept per thread for weights that are
/// constants of the graph (B, scales, zero points and g_idx), keyed by those tensors' identities
/// and dropped when B dies (its address may then name another tensor).
struct DequantizedEntry {
  std::weak_ptr<const Tensor> from;
  std::shared_ptr<const Tensor> weights;
};
thread_local std::map<std::vector<int64_t>, DequantizedEntry> dequantizedCache;

/// The f32 [N, K] weights of a MatMulNBits whose quantized inputs are constants: made once
/// (dequantizeNBits) and kept; none when one of them is computed in the run.
Result<std::shared_ptr<const Tensor>> constantWeights(EvalContext &ctx, int64_t K, int64_t N, int64_t bits,
                                                      int64_t block) {
  std::vector<int64_t> key{K, N, bits, block};
  for (size_t i = 1; i <= 4; ++i) {
    if (!ctx.hasInput(i)) {
      key.push_back(0);
      continue;
    }
    if (!ctx.inputIsConstant(i) || !ctx.inputShared(i)) return std::shared_ptr<const Tensor>();
    key.push_back(int64_t(reinterpret_cast<uintptr_t>(ctx.inputShared(i).get())));
  }
  auto it = dequantizedCache.find(key);
  if (it != dequantizedCache.end() && !it->second.from.expired()) return it->second.weights;
  std::erase_if(dequantizedCache, [](const auto &e) { return e.second.from.expired(); });
  if (dequantizedCache.size() >= 4096) dequantizedCache.clear();
  SF_ASSIGN(auto w, dequantizeNBits(ctx, K, N, bits, block));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::F32, Shape{N, K}, w));
  auto shared = std::make_shared<const Tensor>(std::move(t));
  dequantizedCache.insert_or_assign(key, DequantizedEntry{ctx.inputShared(1), shared});
  return shared;
}

/// MatMulNBits with f32 A and constant weights, below accuracy_level 4: A times the weights
/// dequantized once to f32 (as onnxruntime's CPU kernel computes in f32), on oneDNN's matmul
/// (the weights packed once) or sgemm. False where the case is not this one.
Result<bool> matMulNBitsF32(EvalContext &ctx, int64_t K, int64_t N, int64_t bits, int64_t block) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t accuracy, ctx.attrs().getInt("accuracy_level", 0));
  if (a.type() != ElementType::F32 || accuracy == 4) return false;
  if (ctx.hasInput(5) && ctx.input(5).type() != ElementType::F32) return false;
  SF_ASSIGN(auto w, constantWeights(ctx, K, N, bits, block));
  if (!w) return false;
  std::optional<Elements<float>> bias;
  if (ctx.hasInput(5)) {
    if (ctx.input(5).elementCount() != N) return errorf("bias has {} values, not N = {}", ctx.input(5).elementCount(), N);
    bias.emplace(ctx.input(5));
  }
  const int64_t M = countOf(a.shape()) / K;
  Shape out = a.shape();
  out.back() = N;
  Elements<float> x(a), wv(*w);
  Output<float> o(ctx, ElementType::F32, out);
  SF_ASSIGN(float *p, o.makeForOverwrite());
  if (M > 0 && !dnnlMatMul(M, K, N, x.data(), wv.data(), true, w, bias ? bias->data() : nullptr, p)) {
    sgemm(false, true, M, N, K, 1.0f, x.data(), K, wv.data(), K, 0.0f, p, N);
    if (bias)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) p[m * N + n] += (*bias)[size_t(n)];
  }
  SF_TRY(o.finish(0));
  return true;
}

/// MatMulNBits (A [..., K], B quantized to `bits` in blocks along K): A times the dequantized
/// weights transposed, plus bias: [..., N]; with accuracy_level 4, A first quantized to int8 as
/// onnxruntime does. f32 with constant weights below accuracy level 4 in f32 (matMulNBitsF32),
/// the rest in double.
Result<void> matMulNBits(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(int64_t K, ctx.attrs().getInt("K"));
  SF_ASSIGN(int64_t N, ctx.attrs().getInt("N"));
  SF_ASSIGN(int64_t bits, ctx.attrs().getInt("bits", 4));
  SF_ASSIGN(int64_t block, ctx.attrs().getInt("block_size"));
  if (bits != 2 && bits != 4 && bits != 8) return errorf("bits is {}; 2, 4 or 8 expected", bits);
  if (block != 16 && block != 32 && block != 64 && block != 128 && block != 256)
    return errorf("block_size {} is not 16, 32, 64, 128 or 256 (what onnxruntime runs)", block);
  if (K <= 0 || N <= 0 || K > (int64_t(1) << 40) || N > (int64_t(1) << 40))
    return errorf("K ({}) and N ({}) must be positive sizes", K, N);
  if (a.shape().empty() || a.shape().back() != K) return errorf("A {} must end in K = {}", shapeText(a.shape()), K);
  SF_ASSIGN(bool done, matMulNBitsF32(ctx, K, N, bits, block));
  if (done) return success();
  SF_ASSIGN(auto w, dequantizeNBits(ctx, K, N, bits, block));
  std::vector<double> bias;
  if (ctx.hasInput(5)) {
    SF_ASSIGN(bias, hiddenParam(ctx, 5, N, "bias"));
  }
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(int64_t accuracy, ctx.attrs().getInt("accuracy_level", 0));
  if (accuracy == 4) quantizeRowsToInt8(av, K, block);
  const int64_t M = countOf(a.shape()) / K;
  Shape out = a.shape();
  out.back() = N;
  SF_TRY(ctx.admit(ElementType::F64, out));
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = bias.empty() ? 0.0 : bias[size_t(n)];
      const double *x = &av[size_t(m * K)], *wn = &w[size_t(n * K)];
      for (int64_t k = 0; k < K; ++k) acc += x[k] * wn[k];
      y[size_t(m * N + n)] = acc;
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(a.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// GatherBlockQuantized (com.microsoft): rows of quantized data gathered along axis 0 and
/// dequantized along the last axis in blocks: (q - zero_point) * scale. uint8 data packs 8/bits
/// values in each byte of its last axis (low bits first), the zero points likewise per row
/// (absent: 2^(bits - 1)); int4/uint4 data holds one value per element (absent zero point: 0).
/// The output takes the scales' type. onnxruntime's restriction kept: gather_axis 0, the
/// quantized axis the last.
Result<void> gatherBlockQuantized(EvalContext &ctx) {
  const Tensor &data = ctx.input(0), &indices = ctx.input(1), &scales = ctx.input(2);
  SF_ASSIGN(int64_t gatherAxis, ctx.attrs().getInt("gather_axis", 0));
  SF_ASSIGN(int64_t quantizeAxis, ctx.attrs().getInt("quantize_axis", 1));
  SF_ASSIGN(int64_t block, ctx.attrs().getInt("block_size", 128));
  SF_ASSIGN(int64_t bits, ctx.attrs().getInt("bits", 4));
  const Shape &ds = data.shape();
  const int64_t r = int64_t(ds.size());
  if (r < 2 || gatherAxis != 0 || (quantizeAxis != r - 1 && quantizeAxis != -1))
    return errorf("data {} with gather_axis {} and quantize_axis {}: this kernel gathers along 0 and "
                  "dequantizes along the last axis", shapeText(ds), gatherAxis, quantizeAxis);
  const bool packed = data.type() == ElementType::U8;
  if (packed ? (bits != 2 && bits != 4 && bits != 8) : bits != 4) return errorf("bits {} for {} data", bits, data.type());
  if (block < 16 || (block & (block - 1)) != 0) return errorf("block_size {} is not a power of 2 of at least 16", block);
  const int64_t comp = packed ? 8 / bits : 1, mask = (int64_t(1) << bits) - 1;
  const int64_t rowsOf = ds[0], stored = ds.back(), K = stored * comp, blocks = (K + block - 1) / block;
  int64_t inner = 1; // rows of the last axis within one gathered slice
  for (int64_t i = 1; i + 1 < r; ++i) inner *= ds[size_t(i)];
  if (scales.shape().size() != size_t(r) || scales.shape().back() != blocks)
    return errorf("scales {} must be {} with {} blocks in its last dim", shapeText(scales.shape()), shapeText(ds), blocks);
  SF_ASSIGN(auto q, ints(data));
  SF_ASSIGN(auto sc, doubles(scales));
  SF_ASSIGN(auto idx, ints(indices));
  std::vector<int64_t> zp;
  const int64_t zpRow = packed ? (blocks + comp - 1) / comp : blocks; // zero points per row, stored
  if (ctx.hasInput(3)) {
    SF_ASSIGN(zp, ints(ctx.input(3)));
    if (int64_t(zp.size()) != rowsOf * inner * zpRow)
      return errorf("zero_points {} for {} rows of {} blocks", shapeText(ctx.input(3).shape()), rowsOf * inner, blocks);
  }
  const int64_t defaultZp = packed ? int64_t(1) << (bits - 1) : 0;
  Shape out;
  for (int64_t d : indices.shape()) out.push_back(d);
  for (int64_t i = 1; i < r; ++i) out.push_back(ds[size_t(i)]);
  out.back() = K;
  SF_TRY(ctx.admit(scales.type(), out));
  std::vector<double> y;
  y.reserve(size_t(countOf(out)));
  for (int64_t i : idx) {
    if (i < -rowsOf || i >= rowsOf) return errorf("index {} is out of range for {} rows", i, rowsOf);
    const int64_t row = i < 0 ? i + rowsOf : i;
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t line = row * inner + j;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t stored1 = q[size_t(line * stored + k / comp)];
        const int64_t v = packed ? (stored1 >> (bits * (k % comp))) & mask : stored1;
        const int64_t b = k / block;
        int64_t z = defaultZp;
        if (!zp.empty()) {
          const int64_t zs = zp[size_t(line * zpRow + b / comp)];
          z = packed ? (zs >> (bits * (b % comp))) & mask : zs;
        }
        y.push_back(double(v - z) * sc[size_t(line * blocks + b)]);
      }
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(scales.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// A quantized tensor's scale and zero point (inputs `scaleAt`, `zeroAt`; the zero point 0 when
/// absent), per tensor.
Result<std::pair<float, float>> quantParams(EvalContext &ctx, size_t scaleAt, size_t zeroAt) {
  SF_ASSIGN(auto scale, doubles(ctx.input(scaleAt)));
  std::vector<double> zero{0.0};
  if (ctx.hasInput(zeroAt)) {
    SF_ASSIGN(zero, doubles(ctx.input(zeroAt)));
  }
  if (scale.size() != 1 || zero.size() != 1) return errorf("per-axis scales or zero points are not run by this kernel");
  return std::pair{float(scale[0]), float(zero[0])};
}

/// `v` quantized to `t` (u8, i8) in float as onnxruntime does: rounded to nearest even, plus the
/// zero point, saturated.
Result<double> quantizeFloat(float v, float zero, ElementType t) {
  SF_ASSIGN(auto range, quantRange(t));
  return std::clamp(double(std::nearbyint(v) + zero), range.first, range.second);
}

/// QLinearAdd and QLinearMul (com.microsoft): A (scale, zero point) and B, broadcast, into C's
/// scale and zero point, computed in float from the scale ratios as onnxruntime's kernels do.
Result<void> qlinearBinary(EvalContext &ctx, bool multiply) {
  const Tensor &a = ctx.input(0), &b = ctx.input(3);
  if (a.type() != b.type()) return errorf("A is {} and B {}", shortName(a.type()), shortName(b.type()));
  SF_ASSIGN(auto pa, quantParams(ctx, 1, 2));
  SF_ASSIGN(auto pb, quantParams(ctx, 4, 5));
  SF_ASSIGN(auto pc, quantParams(ctx, 6, 7));
  SF_ASSIGN(Shape out, broadcastAll({a.shape(), b.shape()}));
  SF_TRY(ctx.admit(a.type(), out));
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto bv, doubles(b));
  std::vector<double> y(size_t(countOf(out)));
  const float ratioA = pa.first / pc.first, ratioB = pb.first / pc.first, ratioMul = pa.first * pb.first / pc.first;
  Result<void> status = success();
  forEachBroadcast<2>(out, {broadcastStrides(a.shape(), out), broadcastStrides(b.shape(), out)},
                      [&](int64_t o, const std::array<int64_t, 2> &off) {
                        const float x = float(av[size_t(off[0])]) - pa.second, z = float(bv[size_t(off[1])]) - pb.second;
                        const float r = multiply ? x * z * ratioMul : x * ratioA + z * ratioB;
                        auto q = quantizeFloat(r, pc.second, a.type());
                        if (!q.ok()) status = q.takeError();
                        else y[size_t(o)] = *q;
                      });
  SF_TRY(std::move(status));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(a.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// The values of `type` (u8, i8) mapped as onnxruntime's lookup tables map them: dequantized
/// with `from` (scale, zero point), `f` in float, quantized with `to`. Indexed by value - lowest.
Result<std::vector<double>> lookupTable(std::pair<float, float> from, std::pair<float, float> to, ElementType type,
                                       const std::function<float(float)> &f) {
  SF_ASSIGN(auto range, quantRange(type));
  std::vector<double> table(256);
  for (int v = int(range.first); v <= int(range.second); ++v) {
    const float y = f((float(v) - from.second) * from.first);
    SF_ASSIGN(table[size_t(v - int(range.first))], quantizeFloat(y / to.first, to.second, type));
  }
  return table;
}

/// `xv` (values of `type`) through a lookup table.
void applyTable(std::vector<double> &xv, const std::vector<double> &table, ElementType type) {
  const int lowest = type == ElementType::I8 ? -128 : 0;
  for (double &v : xv) v = table[size_t(int(v) - lowest)];
}

/// QLinearSigmoid and QLinearLeakyRelu (com.microsoft): X (scale, zero point) to Y's, element by
/// element through a table of the 256 values as onnxruntime builds it (dequantized, `f` in float,
/// quantized).
Result<void> qlinearUnary(EvalContext &ctx, const std::function<float(float)> &f) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto px, quantParams(ctx, 1, 2));
  SF_ASSIGN(auto py, quantParams(ctx, 3, 4));
  SF_ASSIGN(auto table, lookupTable(px, py, x.type(), f));
  SF_ASSIGN(auto xv, doubles(x));
  applyTable(xv, table, x.type());
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), x.shape(), xv));
  return ctx.setOutput(0, std::move(t));
}

/// `x` requantized from `from` to `to` (the identity where they are equal, as onnxruntime copies).
Result<std::vector<double>> requantized(const Tensor &x, std::pair<float, float> from, std::pair<float, float> to) {
  SF_ASSIGN(auto xv, doubles(x));
  if (from == to) return xv;
  SF_ASSIGN(auto table, lookupTable(from, to, x.type(), [](float v) { return v; }));
  applyTable(xv, table, x.type());
  return xv;
}

/// QLinearConcat (com.microsoft): Y's scale and zero point, then (X, scale, zero point) per
/// input; each X requantized to Y's parameters, then concatenated along `axis`.
Result<void> qlinearConcat(EvalContext &ctx) {
  const size_t n = ctx.numInputs();
  if (n < 5 || (n - 2) % 3 != 0) return errorf("{} inputs: Y's scale and zero point, then triples", n);
  SF_ASSIGN(auto py, quantParams(ctx, 0, 1));
  const Tensor &first = ctx.input(2);
  const ElementType type = first.type();
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis"));
  const size_t rank = first.shape().size();
  SF_ASSIGN(size_t axis, normAxis(axisAttr, rank));
  Shape out = first.shape();
  out[axis] = 0;
  for (size_t i = 2; i < n; i += 3) {
    const Shape &s = ctx.input(i).shape();
    if (ctx.input(i).type() != type || s.size() != rank) return errorf("input {} is {}", i, shapeText(s));
    for (size_t d = 0; d < rank; ++d)
      if (d != axis && s[d] != out[d]) return errorf("input {} is {}, input 2 {}", i, shapeText(s), shapeText(first.shape()));
    auto sum = checkedAdd(out[axis], s[axis]);
    if (!sum) return errorf("the concatenated axis overflows");
    out[axis] = *sum;
  }
  SF_TRY(ctx.admit(type, out));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= out[d];
  for (size_t d = axis + 1; d < rank; ++d) inner *= out[d];
  std::vector<double> y(size_t(countOf(out)));
  int64_t at = 0; // the first index along the axis of the current input
  for (size_t i = 2; i < n; i += 3) {
    const Tensor &x = ctx.input(i);
    SF_ASSIGN(auto px, quantParams(ctx, i + 1, i + 2));
    SF_ASSIGN(auto xv, requantized(x, px, py));
    const int64_t len = x.shape()[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(xv.begin() + o * len * inner, len * inner, y.begin() + (o * out[axis] + at) * inner);
    at += len;
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(type, out, y));
  return ctx.setOutput(0, std::move(t));
}

/// QLinearWhere (com.microsoft): condition, X (scale, zero point), Y (scale, zero point), Z's
/// scale and zero point: X and Y requantized to Z's, then picked as Where picks.
Result<void> qlinearWhere(EvalContext &ctx) {
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(4);
  if (c.type() != ElementType::Bool || x.type() != y.type()) return errorf("condition {}, X {}, Y {}", shortName(c.type()), shortName(x.type()), shortName(y.type()));
  SF_ASSIGN(auto pz, quantParams(ctx, 7, 8));
  SF_ASSIGN(auto px, quantParams(ctx, 2, 3));
  SF_ASSIGN(auto py, quantParams(ctx, 5, 6));
  SF_ASSIGN(auto xv, requantized(x, px, pz));
  SF_ASSIGN(auto yv, requantized(y, py, pz));
  SF_ASSIGN(auto cv, doubles(c));
  SF_ASSIGN(Shape out, broadcastAll({c.shape(), x.shape(), y.shape()}));
  SF_TRY(ctx.admit(x.type(), out));
  std::vector<double> z(size_t(countOf(out)));
  forEachBroadcast<3>(out, {broadcastStrides(c.shape(), out), broadcastStrides(x.shape(), out), broadcastStrides(y.shape(), out)},
                      [&](int64_t o, const std::array<int64_t, 3> &off) {
                        z[size_t(o)] = cv[size_t(off[0])] != 0 ? xv[size_t(off[1])] : yv[size_t(off[2])];
                      });
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, z));
  return ctx.setOutput(0, std::move(t));
}

/// What both quantized poolings read: X ([N, C, spatial...], or [N, spatial..., C] with
/// channels_last), X's and Y's scale and zero point, and X's type's range.
struct QuantizedPool {
  bool last = false;
  std::pair<float, float> x, y;
  std::pair<double, double> range;
};

Result<QuantizedPool> quantizedPool(EvalContext &ctx) {
  if (ctx.input(0).shape().size() < 3) return errorf("X is {}", shapeText(ctx.input(0).shape()));
  QuantizedPool q;
  SF_ASSIGN(int64_t last, ctx.attrs().getInt("channels_last", 0));
  q.last = last != 0;
  SF_ASSIGN(q.x, quantParams(ctx, 1, 2));
  SF_ASSIGN(q.y, quantParams(ctx, 3, 4));
  SF_ASSIGN(q.range, quantRange(ctx.input(0).type()));
  return q;
}

/// QLinearGlobalAveragePool (com.microsoft): per image and channel the sum of X less its zero
/// point, times x_scale / (y_scale * positions) in float, rounded to nearest even, plus Y's zero
/// point, saturated (onnxruntime's MLAS kernel, which refuses a scale below 2^-32 or from 256 on
/// and images of 2^24 positions or more). channels_last: X [N, spatial..., C].
Result<void> qlinearGlobalAveragePool(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  SF_ASSIGN(const QuantizedPool q, quantizedPool(ctx));
  const bool last = q.last;
  const auto &px = q.x, &py = q.y;
  const auto &range = q.range;
  const int64_t n = s[0], c = last ? s.back() : s[1];
  int64_t hw = 1; // the positions: every dim but the batch and the channels
  for (size_t d = 1; d < s.size(); ++d)
    if (d != (last ? s.size() - 1 : 1)) hw *= s[d];
  if (hw >= (int64_t(1) << 24)) return errorf("an image of {} positions (onnxruntime takes fewer than 2^24)", hw);
  const float scale = px.first / (py.first * float(hw));
  if (!(scale >= 0x1.0p-32f && scale < 256.0f))
    return errorf("x_scale / (y_scale * positions) = {} is outside [2^-32, 256), which onnxruntime refuses", scale);
  Shape out(s.size(), 1);
  out[0] = n;
  out[last ? s.size() - 1 : 1] = c;
  SF_ASSIGN(auto xv, doubles(x));
  std::vector<double> y(size_t(n * c));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      int64_t sum = 0;
      for (int64_t p = 0; p < hw; ++p)
        sum += int64_t(xv[size_t(last ? (b * hw + p) * c + ch : (b * c + ch) * hw + p)]);
      const float v = float(sum - int64_t(px.second) * hw) * scale;
      y[size_t(b * c + ch)] = std::clamp(double(std::nearbyint(v)) + py.second, range.first, range.second);
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// QLinearAveragePool (com.microsoft): X dequantized to float, AveragePool's windows summed in
/// float and divided by the count of their elements in X (with count_include_pad, by the whole
/// window's, ceil_mode's overhang included, as onnxruntime's kernel divides), quantized as
/// onnxruntime's kernel does: nearbyint(y / y_scale + zero point), saturated. channels_last: X
/// [N, spatial..., C].
Result<void> qlinearAveragePool(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  SF_ASSIGN(const QuantizedPool q, quantizedPool(ctx));
  const bool last = q.last;
  const auto &px = q.x, &py = q.y;
  const auto &range = q.range;
  SF_ASSIGN(auto kernel, ctx.attrs().getInts("kernel_shape"));
  SF_ASSIGN(int64_t ceilMode, ctx.attrs().getInt("ceil_mode", 0));
  SF_ASSIGN(int64_t countPad, ctx.attrs().getInt("count_include_pad", 0));
  Shape plain = s; // X as channels first
  if (last) std::rotate(plain.begin() + 1, plain.end() - 1, plain.end());
  SF_ASSIGN(Window w, windowOf(ctx, plain, kernel, ceilMode != 0, true));
  const int64_t n = plain[0], c = plain[1], inSize = countOf(w.in), outSize = countOf(w.out);
  Shape out{n, c};
  out.insert(out.end(), w.out.begin(), w.out.end());
  SF_TRY(ctx.admit(x.type(), out));
  SF_ASSIGN(auto xv, doubles(x));
  // Element (image b, channel ch, position p) of X and of Y, in either layout.
  auto at = [&](int64_t b, int64_t ch, int64_t p, int64_t size) {
    return size_t(last ? (b * size + p) * c + ch : (b * c + ch) * size + p);
  };
  std::vector<double> y(size_t(countOf(out)));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      forEachPosition(w, [&](int64_t po, const std::vector<int64_t> &pos) {
        float sum = 0;
        int64_t count = 0;
        forEachTap(w, pos, [&](int64_t off, int64_t) {
          if (off < 0) return;
          sum += px.first * float(int(xv[at(b, ch, off, inSize)]) - int(px.second));
          ++count;
        });
        const int64_t denom = countPad ? countOf(w.kernel) : count;
        const float v = denom ? sum / float(denom) : 0.0f;
        y[at(b, ch, po, outSize)] = std::clamp(double(std::nearbyint(v / py.first + py.second)), range.first, range.second);
      });
  if (last) std::rotate(out.begin() + 1, out.begin() + 2, out.end());
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), out, y));
  return ctx.setOutput(0, std::move(t));
}

/// QLinearSoftmax (com.microsoft), as onnxruntime 1.30's kernel computes it: a table of
/// exp((i - 255 + shift) * x_scale) in float for the 256 values (shift keeping a row's sum in
/// float's range; X's zero point cancels out), each row shifted so that its maximum reads the
/// table's last entry, y = nearbyint(e * floor(1 / y_scale) / sum) + Y's zero point (u8
/// saturated at 255; i8 wrapped from 256 on, as that kernel does). Attribute `opset` < 13: rows
/// are every dim from `axis` on (default 1); else the one axis (default -1).
Result<void> qlinearSoftmax(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  const Shape &s = x.shape();
  const bool isSigned = x.type() == ElementType::I8;
  if (!isSigned && x.type() != ElementType::U8) return errorf("X is {}", shortName(x.type()));
  SF_ASSIGN(int64_t opset, ctx.attrs().getInt("opset"));
  SF_ASSIGN(int64_t axisAttr, ctx.attrs().getInt("axis", opset < 13 ? 1 : -1));
  SF_ASSIGN(size_t axis, normAxis(axisAttr, s.size()));
  SF_ASSIGN(auto xs, doubles(ctx.input(1)));
  SF_ASSIGN(auto ys, doubles(ctx.input(3)));
  double yzp = 0;
  if (ctx.hasInput(4)) {
    SF_ASSIGN(auto z, doubles(ctx.input(4)));
    if (!z.empty()) yzp = z[0];
  }
  if (xs.empty() || ys.empty()) return errorf("a scale without elements");
  SF_ASSIGN(auto xv, doubles(x));
  std::vector<double> y(xv.size());
  if (xv.empty()) {
    SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), s, y));
    return ctx.setOutput(0, std::move(t));
  }
  // Rows: `len` elements `stride` apart, `count` of them.
  int64_t len = s[axis], stride = 1, before = 1;
  for (size_t d = axis + 1; d < s.size(); ++d) stride *= s[d];
  for (size_t d = 0; d < axis; ++d) before *= s[d];
  if (opset < 13) len *= stride, stride = 1;
  const float xScale = float(xs[0]), yScale = std::floor(1.0f / float(ys[0]));
  double shift = std::log(double(std::numeric_limits<float>::max()) / double(len));
  shift = std::max(0.0, shift - 5.0) / double(xScale);
  float table[256];
  for (int i = 0; i < 256; ++i)
    table[uint8_t(isSigned ? i - 128 : i)] = float(std::exp((double(i) - 255 + shift) * double(xScale)));
  const int64_t rowsPerBlock = opset < 13 ? 1 : stride, blocks = int64_t(xv.size()) / (len * rowsPerBlock);
  (void)before;
  for (int64_t bl = 0; bl < blocks; ++bl)
    for (int64_t r = 0; r < rowsPerBlock; ++r) {
      const int64_t base = bl * len * rowsPerBlock + r;
      auto elem = [&](int64_t k) { return size_t(base + k * stride); };
      int xmax = int(xv[elem(0)]);
      for (int64_t k = 1; k < len; ++k) xmax = std::max(xmax, int(xv[elem(k)]));
      // The table entry of each element: value + 255 - max (u8), uint8(127 - max + value) (i8).
      auto entry = [&](int64_t k) {
        const int v = int(xv[elem(k)]);
        return isSigned ? table[uint8_t(127 - xmax + v)] : table[255 - xmax + v];
      };
      float sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += entry(k);
      if (sum == 0) continue; // onnxruntime leaves such a row unwritten (a zero here)
      for (int64_t k = 0; k < len; ++k) {
        const int32_t q = int32_t(std::nearbyint((entry(k) * yScale) / sum)) + int32_t(yzp);
        y[elem(k)] = isSigned ? double(q > 255 ? int8_t(-1) : int8_t(q)) : double(q > 255 ? 255 : uint8_t(q));
      }
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), s, y));
  return ctx.setOutput(0, std::move(t));
}

/// QGemm (com.microsoft): alpha (A - a_zero_point)(B - b_zero_point) + C in integers (A [M, K], B
/// [K, N], each transposed by transA/transB; b's scale and zero point per tensor or per column;
/// C i32 broadcast onto [M, N]), then times alpha * a_scale * b_scale (/ y_scale) in float:
/// quantized to Y's zero point's type, or f32 where y_scale is absent.
Result<void> qgemm(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(3);
  if (a.shape().size() != 2 || b.shape().size() != 2) return errorf("A is {} and B {}", shapeText(a.shape()), shapeText(b.shape()));
  SF_ASSIGN(int64_t transA, ctx.attrs().getInt("transA", 0));
  SF_ASSIGN(int64_t transB, ctx.attrs().getInt("transB", 0));
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 1.0));
  const int64_t M = a.shape()[transA ? 1 : 0], K = a.shape()[transA ? 0 : 1];
  const int64_t N = b.shape()[transB ? 0 : 1], Kb = b.shape()[transB ? 1 : 0];
  if (K != Kb) return errorf("A {} and B {} differ in K", shapeText(a.shape()), shapeText(b.shape()));
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto bv, doubles(b));
  SF_ASSIGN(auto aScale, doubles(ctx.input(1)));
  SF_ASSIGN(auto aZero, optionalDoubles(ctx, 2));
  SF_ASSIGN(auto bScale, doubles(ctx.input(4)));
  SF_ASSIGN(auto bZero, optionalDoubles(ctx, 5));
  if (aScale.size() != 1 || (aZero.size() > 1)) return errorf("A's scale and zero point must be one value each");
  auto perColumn = [&](const std::vector<double> &v, const char *what) -> Result<void> {
    if (v.size() > 1 && int64_t(v.size()) != N) return errorf("{} has {} values for N = {}", what, v.size(), N);
    return success();
  };
  SF_TRY(perColumn(bScale, "b_scale"));
  SF_TRY(perColumn(bZero, "b_zero_point"));
  if (bScale.empty()) return errorf("b_scale is empty");
  const Shape out{M, N};
  std::vector<double> acc(size_t(M * N), 0.0);
  if (ctx.hasInput(6)) {
    const Tensor &c = ctx.input(6);
    if (c.type() != ElementType::I32) return errorf("C is {}, not i32", shortName(c.type()));
    SF_ASSIGN(Shape both, broadcastAll({c.shape(), out}));
    if (both != out) return errorf("C {} does not broadcast onto [{}, {}]", shapeText(c.shape()), M, N);
    SF_ASSIGN(auto cv, doubles(c));
    forEachBroadcast<1>(out, {broadcastStrides(c.shape(), out)},
                        [&](int64_t o, const std::array<int64_t, 1> &off) { acc[size_t(o)] = cv[size_t(off[0])]; });
  }
  const double za = aZero.empty() ? 0.0 : aZero[0];
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < N; ++j) {
      const double zb = bZero.empty() ? 0.0 : bZero[bZero.size() == 1 ? 0 : size_t(j)];
      double sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += (av[size_t(transA ? k * M + m : m * K + k)] - za) * (bv[size_t(transB ? j * K + k : k * N + j)] - zb);
      acc[size_t(m * N + j)] += sum;
    }
  const bool quantized = ctx.hasInput(7);
  float yScale = 1.0f;
  double yZero = 0;
  ElementType outType = ElementType::F32;
  if (quantized) {
    SF_ASSIGN(auto ys, doubles(ctx.input(7)));
    if (ys.size() != 1) return errorf("y_scale must be one value");
    yScale = float(ys[0]);
    outType = ElementType::U8;
    if (ctx.hasInput(8)) {
      outType = ctx.input(8).type();
      SF_ASSIGN(auto yz, doubles(ctx.input(8)));
      if (yz.size() != 1) return errorf("y_zero_point must be one value");
      yZero = yz[0];
    }
  }
  std::pair<double, double> range{0.0, 0.0};
  if (quantized) {
    SF_ASSIGN(range, quantRange(outType));
  }
  SF_TRY(ctx.admit(outType, out));
  std::vector<double> y(acc.size());
  for (int64_t j = 0; j < N; ++j) {
    float scale = float(alpha) * float(aScale[0]) * float(bScale[bScale.size() == 1 ? 0 : size_t(j)]);
    if (quantized) scale /= yScale;
    for (int64_t m = 0; m < M; ++m) {
      const float v = float(acc[size_t(m * N + j)]) * scale;
      y[size_t(m * N + j)] = quantized ? std::clamp(double(std::nearbyint(v)) + yZero, range.first, range.second) : double(v);
    }
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(outType, out, y));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerContribQuantizedKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "MatMulNBits", matMulNBits, kMs));
  SF_TRY(setKernel(r, "GatherBlockQuantized", gatherBlockQuantized, kMs));
  SF_TRY(setKernel(r, "QLinearConcat", qlinearConcat, kMs));
  SF_TRY(setKernel(r, "QLinearWhere", qlinearWhere, kMs));
  SF_TRY(setKernel(r, "QLinearGlobalAveragePool", qlinearGlobalAveragePool, kMs));
  SF_TRY(setKernel(r, "QLinearAveragePool", qlinearAveragePool, kMs));
  SF_TRY(setKernel(r, "QLinearSoftmax", qlinearSoftmax, kMs));
  SF_TRY(setKernel(r, "QGemm", qgemm, kMs));
  SF_TRY(setKernel(r, "QLinearAdd", [](EvalContext &c) { return qlinearBinary(c, false); }, kMs));
  SF_TRY(setKernel(r, "QLinearMul", [](EvalContext &c) { return qlinearBinary(c, true); }, kMs));
  SF_TRY(setKernel(r, "QLinearSigmoid", [](EvalContext &c) {
    return qlinearUnary(c, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
  }, kMs));
  SF_TRY(setKernel(r, "QLinearLeakyRelu", [](EvalContext &c) -> Result<void> {
    SF_ASSIGN(double alpha, c.attrs().getFloat("alpha", 0.01));
    const float a = float(alpha);
    return qlinearUnary(c, [a](float v) { return v >= 0 ? v : a * v; });
  }, kMs));
  return success();
}

} // namespace sf::eval::detail
