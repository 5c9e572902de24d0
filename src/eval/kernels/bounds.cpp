// The bounds kernels prove of their float outputs (bounds.h).
#include "bounds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <utility>
#include <vector>

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

namespace {

/// `compute()`, kept per constant weights tensor and kind of gain (`keep`), so that a run does
/// not read the weights once more.
template <class F>
double keptGain(const std::shared_ptr<const Tensor> &weights, bool keep, bool transposed, F compute) {
  thread_local std::map<std::pair<const Tensor *, bool>, std::pair<std::weak_ptr<const Tensor>, double>> kept;
  const std::pair<const Tensor *, bool> key{weights.get(), transposed};
  if (keep && weights)
    if (auto it = kept.find(key); it != kept.end() && !it->second.first.expired()) return it->second.second;
  double gain = compute();
  if (keep && weights) {
    if (kept.size() > 4096) std::erase_if(kept, [](const auto &e) { return e.second.first.expired(); });
    kept[key] = {weights, gain};
  }
  return gain;
}

/// The larger of `gain` and the sum `s` (infinite where `s` is not finite).
double largerGain(double gain, double s) {
  return std::isfinite(s) ? std::max(gain, s) : std::numeric_limits<double>::infinity();
}

} // namespace

double weightGain(const std::shared_ptr<const Tensor> &weights, bool keep, const float *w, int64_t m,
                  int64_t perOut) {
  return keptGain(weights, keep, false, [&] {
    double gain = 0;
    for (int64_t o = 0; o < m; ++o) {
      double s = 0;
      for (int64_t i = 0; i < perOut; ++i) s += std::fabs(double(w[o * perOut + i]));
      gain = largerGain(gain, s);
    }
    return gain;
  });
}

double transposedWeightGain(const std::shared_ptr<const Tensor> &weights, bool keep, const float *w, int64_t group,
                            int64_t cg, int64_t mg, int64_t taps) {
  return keptGain(weights, keep, true, [&] {
    std::vector<double> sums(size_t(group * mg), 0.0); // by output channel
    for (int64_t gi = 0; gi < group; ++gi)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t mm = 0; mm < mg; ++mm) {
          const float *row = w + ((gi * cg + ci) * mg + mm) * taps;
          double &s = sums[size_t(gi * mg + mm)];
          for (int64_t t = 0; t < taps; ++t) s += std::fabs(double(row[t]));
        }
    double gain = 0;
    for (double s : sums) gain = largerGain(gain, s);
    return gain;
  });
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
