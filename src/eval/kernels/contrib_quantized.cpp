// Kernels of onnxruntime's quantized contrib ops (com.microsoft; rules in src/ops/contrib.cpp),
// with onnxruntime 1.30's CPU semantics: MatMulNBits and GatherBlockQuantized (in double), and
// QLinearAdd, QLinearMul, QLinearSigmoid and QLinearLeakyRelu (in float, as onnxruntime rounds).
#include "contrib.h"
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

/// QLinearSigmoid and QLinearLeakyRelu (com.microsoft): X (scale, zero point) to Y's, element by
/// element through a table of the 256 values as onnxruntime builds it (dequantized, `f` in float,
/// quantized).
Result<void> qlinearUnary(EvalContext &ctx, const std::function<float(float)> &f) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto px, quantParams(ctx, 1, 2));
  SF_ASSIGN(auto py, quantParams(ctx, 3, 4));
  SF_ASSIGN(auto range, quantRange(x.type()));
  std::vector<double> table(256);
  for (int v = int(range.first); v <= int(range.second); ++v) {
    const float y = f((float(v) - px.second) * px.first);
    SF_ASSIGN(table[size_t(v - int(range.first))], quantizeFloat(y / py.first, py.second, x.type()));
  }
  SF_ASSIGN(auto xv, doubles(x));
  for (double &v : xv) v = table[size_t(int(v) - int(range.first))];
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(x.type(), x.shape(), xv));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerContribQuantizedKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "MatMulNBits", matMulNBits, kMs));
  SF_TRY(setKernel(r, "GatherBlockQuantized", gatherBlockQuantized, kMs));
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
