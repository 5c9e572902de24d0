// The bounds kernels prove of their float outputs (bounds.h).
#include "bounds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <utility>

namespace sf::eval::detail {

float asBound(double b) {
  return b < double(std::numeric_limits<float>::max()) / 4 ? float(b) : EvalContext::kUnbounded;
}

float boundOfSum(float a, float b) { return asBound((double(a) + double(b)) * (1 + 1e-6)); }

KernelFn keepingBound(KernelFn k) {
  return [k = std::move(k)](EvalContext &ctx) -> Result<void> {
    SF_TRY(k(ctx));
    if (ctx.hasInput(0) && ctx.input(0).elementCount() > 0) ctx.setOutputBound(0, ctx.inputBound(0));
    return success();
  };
}

KernelFn keepingBoundEach(KernelFn k) {
  return [k = std::move(k)](EvalContext &ctx) -> Result<void> {
    SF_TRY(k(ctx));
    if (ctx.hasInput(0) && ctx.input(0).elementCount() > 0)
      for (size_t i = 0; i < ctx.numOutputs(); ++i) ctx.setOutputBound(i, ctx.inputBound(0));
    return success();
  };
}

KernelFn keepingLargestBound(KernelFn k) {
  return [k = std::move(k)](EvalContext &ctx) -> Result<void> {
    SF_TRY(k(ctx));
    float most = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      if (ctx.hasInput(i) && ctx.input(i).elementCount() > 0) most = std::max(most, ctx.inputBound(i));
    ctx.setOutputBound(0, most); // kUnbounded (infinity) where one input is
    return success();
  };
}

// On the bits: without the sign, a float's order is its bits' as an integer, and infinity and NaN
// are above every finite value (an integer maximum the compiler vectorises, which a float one
// with NaN in mind is not).
float measuredBound(const float *x, int64_t count) {
  int32_t most = 0;
  for (int64_t i = 0; i < count; ++i) {
    int32_t v;
    std::memcpy(&v, x + i, 4);
    v &= 0x7fffffff;
    most = v > most ? v : most;
  }
  if (most >= 0x7f800000) return EvalContext::kUnbounded;
  float bound;
  std::memcpy(&bound, &most, 4);
  return bound;
}

double weightGain(const std::shared_ptr<const Tensor> &weights, bool keep, const float *w, int64_t m,
                  int64_t perOut) {
  thread_local std::unordered_map<const Tensor *, std::pair<std::weak_ptr<const Tensor>, double>> kept;
  if (keep && weights)
    if (auto it = kept.find(weights.get()); it != kept.end() && !it->second.first.expired()) return it->second.second;
  double gain = 0;
  for (int64_t o = 0; o < m; ++o) {
    double s = 0;
    for (int64_t i = 0; i < perOut; ++i) s += std::fabs(double(w[o * perOut + i]));
    gain = std::isfinite(s) ? std::max(gain, s) : std::numeric_limits<double>::infinity();
  }
  if (keep && weights) {
    if (kept.size() > 4096) std::erase_if(kept, [](const auto &e) { return e.second.first.expired(); });
    kept[weights.get()] = {weights, gain};
  }
  return gain;
}

float convBound(float xBound, double gain, const float *b, int64_t m) {
  double biasMax = 0;
  for (int64_t i = 0; b && i < m; ++i) {
    if (!std::isfinite(b[i])) return EvalContext::kUnbounded;
    biasMax = std::max(biasMax, double(std::fabs(b[i])));
  }
  return asBound((double(xBound) * gain + biasMax) * (1 + 1e-5)); // the rounding of float sums
}

} // namespace sf::eval::detail
