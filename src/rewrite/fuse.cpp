// The executor's fusions (rewrite/rewrite.h): a convolution and its activation (Relu, Clip, SiLU,
// HardSwish) or its residual Add (and the Relu after it), GELU's five ops.
#include "shapeflow/ops/fused.h"
#include "shapeflow/rewrite/rewrite.h"

#include <cmath>
#include <limits>

namespace sf::rewrite {
namespace {

bool computes(const PassContext &ctx, const Node *n, Pointwise fn) {
  const OpDef *def = n ? recordOf(ctx, *n) : nullptr;
  return def && def->traits.pointwise == fn;
}

/// The input of a two-input node that is not `o` (invalid when neither is or both are).
OutletId otherInput(const Node &n, OutletId o) {
  if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return OutletId{};
  if (n.inputs[0] == o) return n.inputs[1];
  if (n.inputs[1] == o) return n.inputs[0];
  return OutletId{};
}

bool near(std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-6 * want; }

/// A Clip's bounds where they are constants and the lower is at most the upper: attributes
/// before opset 11 (an absent one is float's extreme), inputs from it (an absent one is no bound:
/// infinite).
std::optional<std::pair<double, double>> clipBounds(const Graph &g, const Node &clip) {
  const double big = std::numeric_limits<float>::max(), inf = std::numeric_limits<double>::infinity();
  double lo = -inf, hi = inf;
  if (clip.opsetVersion != 0 && clip.opsetVersion < 11) { // 0: the newest
    auto a = clip.attrs.getFloat("min", -big), b = clip.attrs.getFloat("max", big);
    if (!a.ok() || !b.ok()) return std::nullopt;
    lo = *a, hi = *b;
  } else {
    for (size_t k = 1; k < 3; ++k) {
      if (clip.inputs.size() <= k || !clip.inputs[k].valid()) continue;
      auto v = scalarConstant(g, clip.inputs[k]);
      if (!v) return std::nullopt;
      (k == 1 ? lo : hi) = *v;
    }
  }
  if (!(lo <= hi)) return std::nullopt;
  return std::pair{lo, hi};
}

} // namespace

Result<size_t> fuseConvActivation(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t fused = 0;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &conv = g.nodes[id];
    const OpDef *def = recordOf(ctx, conv);
    if (!def || !def->traits.takesActivation || conv.outputs.size() != 1) continue;
    const OutletId out{id, 0};
    bool isOutput = false;
    for (OutletId o : g.outputs) isOutput = isOutput || o == out;
    if (isOutput) continue;
    const auto &readers = conv.outputs[0].successors;
    Attributes attrs = conv.attrs;
    OutletId replaced, z;
    std::vector<uint32_t> dead;
    const Node *reader = readers.size() == 1 ? &g.nodes[readers[0].node] : nullptr;
    if (computes(ctx, reader, Pointwise::Add)) {
      // A residual connection: Add(conv, z) with z of the output's shape (no broadcast), then
      // perhaps a Relu that alone reads the sum.
      const OutletId other = otherInput(*reader, out);
      if (!other.valid() || !g.contains(other) || g.fact(other).type != g.fact(out).type ||
          !g.fact(other).shape.equalEverywhere(g.fact(out).shape) ||
          !g.fact(out).shape.equalEverywhere(reader->outputs[0].fact.shape))
        continue;
      z = other;
      replaced = {reader->id, 0};
      dead = {reader->id, id};
      const Node *relu = onlyReader(g, *reader);
      if (computes(ctx, relu, Pointwise::Relu) && relu->inputs.size() == 1) {
        attrs.set("activation", std::string("Relu"));
        replaced = {relu->id, 0};
        dead = {relu->id, reader->id, id};
      }
    } else if (readers.size() == 1 && readers[0].slot != 0) {
      continue;
    } else if (computes(ctx, reader, Pointwise::Relu) || computes(ctx, reader, Pointwise::HardSwish)) {
      attrs.set("activation", std::string(computes(ctx, reader, Pointwise::Relu) ? "Relu" : "HardSwish"));
      replaced = {reader->id, 0};
      dead = {reader->id, id};
    } else if (computes(ctx, reader, Pointwise::Clip) && clipBounds(g, *reader)) {
      auto [lo, hi] = *clipBounds(g, *reader);
      attrs.set("activation", std::string("Clip"));
      if (std::isfinite(lo)) attrs.set("min", lo); // absent: no bound
      if (std::isfinite(hi)) attrs.set("max", hi);
      replaced = {reader->id, 0};
      dead = {reader->id, id};
    } else if (readers.size() == 2) {
      // x * Sigmoid(x): the Sigmoid read only by the Mul, which reads the convolution too.
      for (int k = 0; k < 2 && !replaced.valid(); ++k) {
        const Node &sig = g.nodes[readers[k].node], &mul = g.nodes[readers[1 - k].node];
        if (!computes(ctx, &sig, Pointwise::Sigmoid) || !computes(ctx, &mul, Pointwise::Mul) ||
            onlyReader(g, sig) != &mul || otherInput(mul, out) != OutletId{sig.id, 0})
          continue;
        attrs.set("activation", std::string("Swish"));
        attrs.set("alpha", 1.0);
        replaced = {mul.id, 0};
        dead = {mul.id, sig.id, id};
      }
    }
    if (!replaced.valid()) continue;
    std::vector<OutletId> inputs(conv.inputs.begin(), conv.inputs.end());
    if (z.valid()) {
      inputs.resize(3); // an absent bias stays absent
      inputs.push_back(z);
    }
    SF_TRY(replaceWithNode(ctx, kShapeflowDomain, kFusedConv, 1, std::move(inputs), std::move(attrs), replaced,
                           dead));
    ++fused;
  }
  return fused;
}

Result<size_t> fuseGelu(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t fused = 0;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node &erf = g.nodes[id];
    if (!computes(ctx, &erf, Pointwise::Erf) || erf.inputs.size() != 1 || !g.contains(erf.inputs[0])) continue;
    const Node &scale = g.nodes[erf.inputs[0].node];
    if (onlyReader(g, scale) != &erf || scale.inputs.size() != 2) continue;
    // x / sqrt 2, or x * sqrt(1/2).
    OutletId x;
    for (size_t k = 0; k < 2 && !x.valid(); ++k) {
      OutletId c = scale.inputs[1 - k];
      if ((computes(ctx, &scale, Pointwise::Div) && k == 0 && near(scalarConstant(g, c), std::sqrt(2.0))) ||
          (computes(ctx, &scale, Pointwise::Mul) && near(scalarConstant(g, c), std::sqrt(0.5))))
        x = scale.inputs[k];
    }
    if (!x.valid() || !g.contains(x) || g.fact(x).type != ElementType::F32) continue;
    const Node *add = onlyReader(g, erf);
    if (!computes(ctx, add, Pointwise::Add) || !near(scalarConstant(g, otherInput(*add, {erf.id, 0})), 1.0))
      continue;
    const Node *mul = onlyReader(g, *add);
    if (!computes(ctx, mul, Pointwise::Mul)) continue;
    OutletId m = otherInput(*mul, {add->id, 0});
    if (!m.valid()) continue;
    std::vector<uint32_t> dead{scale.id, erf.id, add->id, mul->id};
    OutletId result;
    if (m == x) { // (x a) 0.5
      const Node *half = onlyReader(g, *mul);
      if (!computes(ctx, half, Pointwise::Mul) || !near(scalarConstant(g, otherInput(*half, {mul->id, 0})), 0.5))
        continue;
      result = {half->id, 0};
      dead.push_back(half->id);
    } else { // (x 0.5) a
      const Node &h = g.nodes[m.node];
      if (!computes(ctx, &h, Pointwise::Mul) || onlyReader(g, h) != mul || !near(scalarConstant(g, otherInput(h, x)), 0.5))
        continue;
      result = {mul->id, 0};
      dead.push_back(h.id);
    }
    // The constants must not broadcast x to more dims (a [1,1] one would): Gelu keeps x's shape.
    if (!g.fact(x).shape.equalEverywhere(g.fact(result).shape)) continue;
    Attributes attrs;
    attrs.set("approximate", std::string("none"));
    SF_TRY(replaceWithNode(ctx, "", kGelu, kGeluOpset, {x}, std::move(attrs), result, dead));
    ++fused;
  }
  return fused;
}

Result<size_t> batchNormAsConv(PassContext &ctx) {
  Graph &g = ctx.graph;
  size_t rewritten = 0;
  const size_t count = g.nodes.size();
  for (uint32_t id = 0; id < count; ++id) {
    const Node &bn = g.nodes[id];
    if (bn.removed || bn.kind != NodeKind::Op || !bn.domain.empty() || bn.opType != "BatchNormalization") continue;
    // Opsets 9 on (no is_test or spatial attributes), inference: one output.
    if ((bn.opsetVersion != 0 && bn.opsetVersion < 9) || bn.inputs.size() != 5 || bn.outputs.size() != 1) continue;
    auto training = bn.attrs.getInt("training_mode", 0);
    auto eps = bn.attrs.getFloat("epsilon", 1e-5);
    if (!training.ok() || *training != 0 || !eps.ok()) continue;
    if (!bn.inputs[0].valid() || !g.contains(bn.inputs[0])) continue;
    const Fact &x = g.fact(bn.inputs[0]);
    if (x.type != ElementType::F32 || !x.shape.rankIsStatic() || x.shape.size() != 4 || !x.shape[1].isStatic()) continue;
    const int64_t c = x.shape[1].length();
    if (c <= 0) continue;
    std::vector<std::vector<double>> p;
    for (size_t k = 1; k < 5; ++k) {
      const OutletId in = bn.inputs[k];
      if (!in.valid() || !g.contains(in) || !g.nodes[in.node].isConstant()) break;
      const TensorPtr &t = g.fact(in).constant;
      if (!t || !t->hasData() || t->type() != ElementType::F32 || t->elementCount() != c) break;
      auto v = t->toDoubles(size_t(c));
      if (!v.ok()) break;
      p.push_back(std::move(*v));
    }
    if (p.size() != 4) continue;
    // As the BatchNormalization kernel computes them: the factor and shift in double, then f32.
    std::vector<double> w(static_cast<size_t>(c)), b(static_cast<size_t>(c));
    for (size_t k = 0; k < size_t(c); ++k) {
      const double f = p[0][k] / std::sqrt(p[3][k] + *eps);
      w[k] = double(float(f)), b[k] = double(float(p[1][k] - p[2][k] * f));
    }
    SF_ASSIGN(Tensor wt, Tensor::fromDoubles(ElementType::F32, {c, 1, 1, 1}, w));
    SF_ASSIGN(Tensor bt, Tensor::fromDoubles(ElementType::F32, {c}, b));
    const std::string stem = g.outlet({id, 0}).name;
    SF_ASSIGN(OutletId wo, g.addConstant(freshName(g, stem + "_scale"), std::move(wt)));
    SF_ASSIGN(OutletId bo, g.addConstant(freshName(g, stem + "_shift"), std::move(bt)));
    const Node &n = g.nodes[id]; // addConstant may have added nodes: read the node again
    Attributes attrs;
    attrs.set("group", c);
    attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
    std::vector<uint32_t> dead{id};
    SF_TRY(replaceWithNode(ctx, "", "Conv", 11, {n.inputs[0], wo, bo}, std::move(attrs), {id, 0}, dead));
    ++rewritten;
  }
  return rewritten;
}

std::vector<Pass> executionPasses() {
  return {{"batchnorm-as-conv", batchNormAsConv},
          {"fuse-conv-activation", fuseConvActivation},
          {"fuse-gelu", fuseGelu}};
}

} // namespace sf::rewrite
