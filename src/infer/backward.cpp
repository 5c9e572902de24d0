// The backward sweep: each node's refine rule, from the outputs to the inputs.
#include "backward.h"

#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

#include <unordered_map>

namespace sf {
namespace {

constexpr int kMaxSweepPasses = 4;

uint64_t keyOf(OutletId o) { return (uint64_t(o.node) << 32) | o.slot; }

/// The facts the sweep has refined so far, over the graph's own.
class Working {
public:
  explicit Working(const Graph &g) : g_(g) {}
  const Fact &at(OutletId o) const {
    auto it = refined_.find(keyOf(o));
    return it != refined_.end() ? it->second : g_.fact(o);
  }
  int64_t minRank(OutletId o) const {
    auto it = minRank_.find(keyOf(o));
    return it != minRank_.end() ? it->second : 0;
  }
  int64_t maxRank(OutletId o) const {
    auto it = maxRank_.find(keyOf(o));
    return it != maxRank_.end() ? it->second : -1;
  }
  void learnMinRank(OutletId o, int64_t r) {
    if (at(o).shape.rankIsStatic() || r <= minRank(o)) return;
    minRank_[keyOf(o)] = r;
    ++changes;
    settleRank(o);
  }
  void learnMaxRank(OutletId o, int64_t r) {
    if (at(o).shape.rankIsStatic() || r < 0 || (maxRank(o) >= 0 && r >= maxRank(o))) return;
    maxRank_[keyOf(o)] = r;
    ++changes;
    settleRank(o);
  }
  void learn(OutletId o, const Fact &learned) {
    const Fact &cur = at(o);
    auto merged = merge(cur, learned);
    // A contradiction is the forward rule's to report, with the node and shapes.
    if (!merged.ok() || *merged == cur) return;
    refined_[keyOf(o)] = std::move(*merged);
    ++changes;
  }
  size_t changes = 0;

private:
  /// The least and the most rank meet: the rank is known.
  void settleRank(OutletId o) {
    if (maxRank(o) >= 0 && minRank(o) == maxRank(o) && maxRank(o) <= kMaxRank) {
      Fact f;
      f.shape = PartialShape::dynamic(maxRank(o));
      learn(o, f);
    }
  }

public:

private:
  const Graph &g_;
  std::unordered_map<uint64_t, Fact> refined_;
  std::unordered_map<uint64_t, int64_t> minRank_; // outlets of unknown rank: the least it may be
  std::unordered_map<uint64_t, int64_t> maxRank_; // ... and the most
};

class SweepContext final : public RefineContext {
public:
  SweepContext(const Graph &g, const Node &n, Working &w) : g_(g), n_(n), w_(w) {}
  size_t numInputs() const override { return n_.inputs.size(); }
  bool hasInput(size_t i) const override {
    return i < n_.inputs.size() && n_.inputs[i].valid() && g_.contains(n_.inputs[i]);
  }
  const Fact &input(size_t i) const override {
    return hasInput(i) ? w_.at(n_.inputs[i]) : unknown_;
  }
  size_t numOutputs() const override { return n_.outputs.size(); }
  const Fact &output(size_t i) const override {
    return i < n_.outputs.size() ? w_.at({n_.id, uint32_t(i)}) : unknown_;
  }
  const Attributes &attrs() const override { return n_.attrs; }
  int64_t opset() const override { return n_.opsetVersion; }
  void refine(size_t i, const Fact &learned) override {
    if (hasInput(i)) w_.learn(n_.inputs[i], learned);
  }
  int64_t minRank(size_t i) const override { return hasInput(i) ? w_.minRank(n_.inputs[i]) : 0; }
  int64_t outputMinRank(size_t i) const override {
    return i < n_.outputs.size() ? w_.minRank({n_.id, uint32_t(i)}) : 0;
  }
  void refineMinRank(size_t i, int64_t r) override {
    if (hasInput(i)) w_.learnMinRank(n_.inputs[i], r);
  }
  int64_t outputMaxRank(size_t i) const override {
    return i < n_.outputs.size() ? w_.maxRank({n_.id, uint32_t(i)}) : -1;
  }
  void refineMaxRank(size_t i, int64_t r) override {
    if (hasInput(i)) w_.learnMaxRank(n_.inputs[i], r);
  }

private:
  const Graph &g_;
  const Node &n_;
  Working &w_;
  const Fact unknown_{};
};

} // namespace

std::vector<Fact> backwardSweep(const Graph &g, const OpRegistry &registry) {
  Working work(g);
  // What the graph's outputs declare: their element type and rank only. Runtimes do not hold
  // outputs to their declared dims (an exporter's traced [1,1000] is not a requirement that the
  // batch be 1).
  for (OutletId o : g.outputs)
    if (g.contains(o) && g.outlet(o).declared) {
      const Fact &d = *g.outlet(o).declared;
      Fact f;
      f.type = d.type;
      if (d.shape.rankIsStatic()) f.shape = PartialShape::dynamic(int64_t(d.shape.size()));
      work.learn(o, f);
    }
  auto order = g.topologicalOrder();
  // Passes until nothing more is learned: what a node learns of an input that an earlier node
  // also reads (x's rank from Gather(Shape(x), 2), read before the Sub that broadcasts x) reaches
  // that node in the next pass.
  for (int pass = 0; order.ok() && pass < kMaxSweepPasses; ++pass) {
    const size_t before = work.changes;
    for (auto it = order->rbegin(); it != order->rend(); ++it) {
      const Node &n = g.nodes[*it];
      if (n.removed || n.isParameter() || n.isConstant()) continue;
      const OpDef *def = registry.find(n.domain, n.opType);
      if (!def || !def->refine) continue;
      SweepContext ctx(g, n, work);
      (void)def->refine(ctx); // a rule's failure only means it learned nothing
    }
    if (work.changes == before) break;
  }
  std::vector<Fact> out;
  out.reserve(g.inputs.size());
  for (OutletId in : g.inputs) out.push_back(g.contains(in) ? work.at(in) : Fact{});
  return out;
}

bool refinesInput(const Fact &before, const Fact &after) {
  if (before.type == ElementType::Undefined && after.type != ElementType::Undefined) return true;
  if (!after.shape.rankIsStatic()) return false;
  if (!before.shape.rankIsStatic()) return true;
  if (before.shape.size() != after.shape.size()) return false;
  for (size_t i = 0; i < before.shape.size(); ++i)
    if (!before.shape[i].isStatic() && after.shape[i].isStatic()) return true;
  return false;
}

} // namespace sf
