// Kernels of onnxruntime's transformer contrib ops beside attention (rules in
// src/ops/contrib_transformer.cpp): MoE, a mixture of experts, computed as onnxruntime's CPU
// kernel does (f32 throughout, its routing and its order of accumulation).
#include "contrib.h"

#include "../blas.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sf::eval::detail {
namespace {

enum class Activation { Relu, Gelu, Silu, Identity, SwiGlu };

Result<Activation> activationOf(const std::string &name) {
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  if (name == "silu") return Activation::Silu;
  if (name == "identity") return Activation::Identity;
  if (name == "swiglu") return Activation::SwiGlu;
  return errorf("activation_type '{}' is not relu, gelu, silu, identity or swiglu", name);
}

float activate(float x, Activation a) {
  switch (a) {
  case Activation::Relu: return std::max(0.0f, x);
  case Activation::Gelu: return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
  case Activation::Silu: return x * (1.0f / (1.0f + std::exp(-x)));
  default: return x;
  }
}

struct SwiGlu {
  float alpha, beta, limit;
  /// Interleaved pairs (gate, linear): gate * sigmoid(alpha * gate) * (linear + beta), the gate
  /// capped at `limit` and the linear part clamped to [-limit, limit].
  float operator()(float gate, float linear) const {
    gate = std::min(gate, limit);
    linear = std::clamp(linear, -limit, limit);
    const float z = alpha * gate;
    const float sigmoid = z > 0 ? 1.0f / (1.0f + std::exp(-z)) : std::exp(z) / (1.0f + std::exp(z));
    return gate * sigmoid * (linear + beta);
  }
};

/// MoE(input [..., hidden], router_probs [tokens, experts], fc1 [experts, inter (x2 for
/// SwiGLU), hidden], fc1_bias, fc2 [experts, hidden, inter], fc2_bias): each token's router
/// logits through a softmax, its k most probable experts (ties to the higher index) weighted by
/// their probabilities (renormalised over the k with normalize_routing_weights); each expert's
/// tokens through fc1, the activation and fc2, added into the output in the experts' order.
Result<void> moe(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &router = ctx.input(1), &fc1 = ctx.input(2), &fc2 = ctx.input(4);
  if (x.type() != ElementType::F32) return errorf("this kernel takes f32 input, not {}", shortName(x.type()));
  if (ctx.hasInput(6) || ctx.hasInput(7)) return errorf("fc3 (separate gate weights) is not supported (as onnxruntime's CPU kernel)");
  SF_ASSIGN(int64_t k, ctx.attrs().getInt("k", 1));
  SF_ASSIGN(int64_t normalize, ctx.attrs().getInt("normalize_routing_weights", 0));
  SF_ASSIGN(std::string actName, ctx.attrs().getString("activation_type", "relu"));
  SF_ASSIGN(Activation act, activationOf(actName));
  SF_ASSIGN(int64_t fusion, ctx.attrs().getInt("swiglu_fusion", 0));
  if (act == Activation::SwiGlu && fusion != 1)
    return errorf("swiglu takes interleaved gate and linear rows (swiglu_fusion = 1), as onnxruntime's CPU kernel does");
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("activation_alpha", 1.0));
  SF_ASSIGN(double beta, ctx.attrs().getFloat("activation_beta", 0.0));
  SF_ASSIGN(double limit, ctx.attrs().getFloat("swiglu_limit", std::numeric_limits<double>::infinity()));
  const SwiGlu swiglu{float(alpha), float(beta), float(limit)};
  const Shape &s = x.shape();
  if (s.empty()) return errorf("input is a scalar");
  const int64_t hidden = s.back(), tokens = hidden > 0 ? countOf(s) / hidden : 0;
  if (router.shape().size() != 2 || router.shape()[0] != tokens)
    return errorf("router_probs {} is not [{}, experts]", shapeText(router.shape()), tokens);
  const int64_t experts = router.shape()[1];
  if (k < 1 || k > experts) return errorf("k {} is not in [1, {} experts]", k, experts);
  // The weights are read as fc1 [experts, inter (x2), hidden] and fc2 [experts, hidden, inter]
  // whatever their last two dims say (onnxruntime also takes the older [experts, hidden, inter]
  // and [experts, inter, hidden] shapes of the same buffers): only their sizes are checked.
  if (fc2.shape().size() != 3 || fc2.shape()[0] != experts || hidden <= 0 || (fc2.shape()[1] * fc2.shape()[2]) % hidden != 0)
    return errorf("fc2 {} is not [{}, {}, inter]", shapeText(fc2.shape()), experts, hidden);
  const int64_t inter = fc2.shape()[1] * fc2.shape()[2] / hidden, fc1Rows = act == Activation::SwiGlu ? 2 * inter : inter;
  if (fc1.shape().size() != 3 || fc1.shape()[0] != experts || fc1.shape()[1] * fc1.shape()[2] != fc1Rows * hidden)
    return errorf("fc1 {} is not [{}, {}, {}]", shapeText(fc1.shape()), experts, fc1Rows, hidden);
  for (auto [i, n] : {std::pair<size_t, int64_t>{3, fc1Rows}, std::pair<size_t, int64_t>{5, hidden}})
    if (ctx.hasInput(i) && ctx.input(i).shape() != Shape{experts, n})
      return errorf("input {} {} is not [{}, {}]", i, shapeText(ctx.input(i).shape()), experts, n);
  Elements<float> in(x), logits(router), w1(fc1), w2(fc2);
  std::optional<Elements<float>> b1, b2;
  if (ctx.hasInput(3)) b1.emplace(ctx.input(3));
  if (ctx.hasInput(5)) b2.emplace(ctx.input(5));

  // Routing: per expert, the (token, weight) pairs it serves, in token order.
  std::vector<std::vector<std::pair<int64_t, float>>> routes(static_cast<size_t>(experts));
  std::vector<float> prob(static_cast<size_t>(experts));
  std::vector<std::pair<float, int64_t>> order(static_cast<size_t>(experts));
  for (int64_t t = 0; t < tokens; ++t) {
    const float *l = logits.data() + t * experts;
    float top = l[0], sum = 0.0f;
    for (int64_t e = 1; e < experts; ++e) top = std::max(top, l[e]);
    for (int64_t e = 0; e < experts; ++e) {
      prob[size_t(e)] = std::exp(l[e] - top);
      sum += prob[size_t(e)];
    }
    for (int64_t e = 0; e < experts; ++e) order[size_t(e)] = {prob[size_t(e)] / sum, e};
    std::partial_sort(order.begin(), order.begin() + k, order.end(), std::greater<>());
    float kept = 0.0f;
    for (int64_t j = 0; j < k; ++j) kept += order[size_t(j)].first;
    for (int64_t j = 0; j < k; ++j) {
      const float w = normalize == 1 ? order[size_t(j)].first / kept : order[size_t(j)].first;
      if (w > 0.0f) routes[size_t(order[size_t(j)].second)].push_back({t, w});
    }
  }

  Output<float> o(ctx, ElementType::F32, s);
  SF_ASSIGN(float *y, o.makeForOverwrite());
  std::fill(y, y + tokens * hidden, 0.0f);
  std::vector<float> a, h, act1, out;
  for (int64_t e = 0; e < experts; ++e) {
    const auto &r = routes[size_t(e)];
    const int64_t m = int64_t(r.size());
    if (m == 0) continue;
    a.resize(size_t(m * hidden));
    for (int64_t i = 0; i < m; ++i) std::copy_n(in.data() + r[size_t(i)].first * hidden, hidden, a.data() + i * hidden);
    h.resize(size_t(m * fc1Rows));
    sgemm(false, true, m, fc1Rows, hidden, 1.0f, a.data(), hidden, w1.data() + e * fc1Rows * hidden, hidden, 0.0f,
          h.data(), fc1Rows);
    if (b1)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < fc1Rows; ++j) h[size_t(i * fc1Rows + j)] += (*b1)[size_t(e * fc1Rows + j)];
    act1.resize(size_t(m * inter));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < inter; ++j)
        act1[size_t(i * inter + j)] = act == Activation::SwiGlu
                                          ? swiglu(h[size_t(i * fc1Rows + 2 * j)], h[size_t(i * fc1Rows + 2 * j + 1)])
                                          : activate(h[size_t(i * fc1Rows + j)], act);
    out.resize(size_t(m * hidden));
    sgemm(false, true, m, hidden, inter, 1.0f, act1.data(), inter, w2.data() + e * hidden * inter, inter, 0.0f,
          out.data(), hidden);
    for (int64_t i = 0; i < m; ++i) {
      float *dst = y + r[size_t(i)].first * hidden;
      const float w = r[size_t(i)].second;
      for (int64_t j = 0; j < hidden; ++j) {
        float v = out[size_t(i * hidden + j)];
        if (b2) v += (*b2)[size_t(e * hidden + j)];
        dst[j] += w * v;
      }
    }
  }
  return o.finish(0);
}

} // namespace

Result<void> registerContribTransformerKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "MoE", moe, kMs));
  return success();
}

} // namespace sf::eval::detail
