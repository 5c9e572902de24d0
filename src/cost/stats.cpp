// Per-node and whole-model statistics (cost/stats.h): a walk over the graph and its bodies that
// asks each op's cost function for its arithmetic and computes elements, bytes, parameters and
// traffic from the facts. Every sum is checked Dimension arithmetic: symbolic where the facts are.
#include "shapeflow/cost/stats.h"

#include "shapeflow/cost/device.h"

#include "shapeflow/ops/helpers.h"

#include <set>
#include <unordered_map>

namespace sf {

Result<void> Counts::add(const Counts &o, const Dimension &times) {
  auto acc = [&](Dimension &into, const Dimension &v) -> Result<void> {
    SF_ASSIGN(Dimension scaled, v * times);
    SF_ASSIGN(into, into + scaled);
    return success();
  };
  SF_TRY(acc(macs, o.macs));
  SF_TRY(acc(flops, o.flops));
  for (size_t k = 0; k < kFlopKinds; ++k)
    SF_TRY(acc(flopsByKind[k], o.flopsByKind[k]));
  SF_TRY(acc(readBytes, o.readBytes));
  SF_TRY(acc(writeBytes, o.writeBytes));
  SF_TRY(acc(timeNs, o.timeNs));
  return success();
}

Dimension bytesOf(const Fact &f) {
  size_t size = f.type == ElementType::Undefined ? 0 : elementSize(f.type);
  if (size == 0) return Dimension::dynamic();
  auto b = elementsOf(f) * Dimension(int64_t(size));
  return b.ok() ? *b : Dimension::dynamic();
}

namespace {

/// Counts summed over many nodes, each expression made once at the end (DimensionSum): a
/// running Counts::add would form every partial sum.
class CountsSum {
public:
  Result<void> add(const Counts &c, const Dimension &times = Dimension(1)) {
    if (times.isStatic()) return addScaled(c, times.length());
    Counts scaled;
    SF_TRY(scaled.add(c, times));
    return addScaled(scaled, 1);
  }
  Result<Counts> value() const {
    Counts c;
    SF_ASSIGN(c.macs, macs_.value());
    SF_ASSIGN(c.flops, flops_.value());
    for (size_t k = 0; k < kFlopKinds; ++k) {
      SF_ASSIGN(c.flopsByKind[k], kinds_[k].value());
    }
    SF_ASSIGN(c.readBytes, read_.value());
    SF_ASSIGN(c.writeBytes, write_.value());
    SF_ASSIGN(c.timeNs, time_.value());
    return c;
  }

private:
  Result<void> addScaled(const Counts &c, int64_t k) {
    SF_TRY(macs_.add(c.macs, k));
    SF_TRY(flops_.add(c.flops, k));
    for (size_t i = 0; i < kFlopKinds; ++i)
      SF_TRY(kinds_[i].add(c.flopsByKind[i], k));
    SF_TRY(read_.add(c.readBytes, k));
    SF_TRY(write_.add(c.writeBytes, k));
    SF_TRY(time_.add(c.timeNs, k));
    return success();
  }
  DimensionSum macs_, flops_, read_, write_, time_;
  std::array<DimensionSum, kFlopKinds> kinds_;
};

/// Parameters in the model-card sense: weights, stored as float or 8-bit integer initializers.
bool isWeightType(ElementType t) {
  return isFloat(t) || t == ElementType::I8 || t == ElementType::U8;
}

/// Every count unknown (an op without a cost function).
Counts unknownCounts() {
  Counts c;
  c.macs = c.flops = Dimension::dynamic();
  for (auto &k : c.flopsByKind)
    k = Dimension::dynamic();
  return c;
}

Dimension maxOf(const Dimension &a, const Dimension &b) {
  auto m = Dimension::max(a, b);
  return m.ok() ? *m : Dimension::dynamic();
}

/// The larger of two branches, count by count.
Counts maxCounts(const Counts &a, const Counts &b) {
  Counts m;
  m.macs = maxOf(a.macs, b.macs);
  m.flops = maxOf(a.flops, b.flops);
  for (size_t k = 0; k < kFlopKinds; ++k)
    m.flopsByKind[k] = maxOf(a.flopsByKind[k], b.flopsByKind[k]);
  m.readBytes = maxOf(a.readBytes, b.readBytes);
  m.writeBytes = maxOf(a.writeBytes, b.writeBytes);
  m.timeNs = maxOf(a.timeNs, b.timeNs);
  return m;
}

class Walker {
public:
  Walker(const OpRegistry &registry, const Device *device, ModelStats &out)
      : registry_(registry), device_(device), out_(out) {}

  /// Appends the statistics of every node of `g` (which runs `runs` times per model run) and
  /// returns the counts of one run of `g`.
  Result<Counts> walk(const Graph &g, const std::string &path, const Dimension &runs, int depth) {
    if (depth > 64) return makeError("subgraphs nested deeper than 64");
    CountsSum total;
    for (const Node &n : g.nodes) {
      if (n.removed || n.isParameter() || n.isConstant()) continue;
      SF_ASSIGN(Counts c, node(g, n, path, runs, depth));
      SF_TRY(total.add(c));
    }
    return total.value();
  }

  /// The per-op-type totals, made once every node has been seen.
  Result<void> finishOpTypes() {
    for (auto &[op, sum] : opSums_) {
      SF_ASSIGN(out_.byOpType[op].counts, sum.value());
    }
    return success();
  }

private:
  /// Statistics of one node (appended), and its counts per run of its graph, bodies included.
  Result<Counts> node(const Graph &g, const Node &n, const std::string &path, const Dimension &runs,
                      int depth) {
    NodeStats s;
    s.name = n.name;
    s.op = n.domain.empty() ? n.opType : n.domain + "." + n.opType;
    s.path = path;
    s.runs = runs;
    std::vector<const Fact *> ins, outs;
    DimensionSum inElems, inBytes, outElems, outBytes; // a Concat may read dozens of tensors
    for (const OutletId &o : n.inputs) {
      if (!g.contains(o)) {
        ins.push_back(nullptr);
        continue;
      }
      const Fact &f = g.fact(o);
      ins.push_back(&f);
      const auto &[e, b] = sizes(f);
      SF_TRY(inElems.add(e));
      SF_TRY(inBytes.add(b));
      const Node &producer = g.nodes[o.node];
      if (producer.isConstant() && producer.attrs.has("initializer") && f.shape.isStatic()) {
        if (e.isStatic()) s.paramElems += e.length();
        if (b.isStatic()) s.paramBytes += b.length();
        if (isWeightType(f.type) && seen_.insert({&g, o.node}).second) {
          if (e.isStatic()) out_.params += e.length();
          if (b.isStatic()) out_.paramBytes += b.length();
        }
      }
    }
    for (const Outlet &o : n.outputs) {
      outs.push_back(&o.fact);
      const auto &[e, b] = sizes(o.fact);
      SF_TRY(outElems.add(e));
      SF_TRY(outBytes.add(b));
    }
    SF_ASSIGN(s.inElems, inElems.value());
    SF_ASSIGN(s.inBytes, inBytes.value());
    SF_ASSIGN(s.outElems, outElems.value());
    SF_ASSIGN(s.outBytes, outBytes.value());

    const OpDef *def = registry_.find(n.domain, n.opType);
    Counts own;
    if (!def || !def->cost) {
      s.modeled = false;
      own = unknownCounts();
    } else {
      CostContext ctx(ins, outs, n.attrs, n.opsetVersion);
      auto cost = def->cost(ctx);
      if (!cost.ok()) {
        s.modeled = false;
        own = unknownCounts();
      } else {
        own.macs = cost->macs;
        own.flopsByKind = cost->flops;
        SF_ASSIGN(own.flops, cost->totalFlops());
      }
    }
    const OpTraits traits = def ? def->traits : OpTraits{};
    if (!traits.view) {
      own.readBytes = traits.metadataOnly ? Dimension(0) : s.inBytes;
      own.writeBytes = s.outBytes;
    }
    if (device_) {
      auto rf = s.modeled ? roofline(own, *device_) : Result<Roofline>(makeError("not modeled"));
      own.timeNs = rf.ok() ? rf->timeNs : Dimension::dynamic();
    }
    s.counts = own;
    size_t index = out_.nodes.size();
    out_.nodes.push_back(s);
    SF_TRY(record(s.op, own, runs));

    // Bodies, as often as they run per run of this node.
    if (traits.bodies == BodyRuns::None) return own;
    std::string inner = path.empty() ? n.name : path + "/" + n.name;
    Counts withBodies = own;
    if (traits.bodies == BodyRuns::OneBranch) {
      SF_ASSIGN(GraphPtr thenB, n.attrs.getGraph("then_branch"));
      SF_ASSIGN(GraphPtr elseB, n.attrs.getGraph("else_branch"));
      SF_ASSIGN(Counts a, walk(*thenB, inner + "/then_branch", runs, depth + 1));
      SF_ASSIGN(Counts b, walk(*elseB, inner + "/else_branch", runs, depth + 1));
      SF_TRY(withBodies.add(maxCounts(a, b)));
      out_.nodes[index].note = "one branch runs: each count is the larger of the two branches'";
      return withBodies;
    }
    SF_ASSIGN(GraphPtr body, n.attrs.getGraph("body"));
    auto [times, note] = bodyRuns(n, g, *body, traits.bodies);
    SF_ASSIGN(Dimension bodyRuns, runs * times);
    SF_ASSIGN(Counts b, walk(*body, inner + "/body", bodyRuns, depth + 1));
    SF_TRY(withBodies.add(b, times));
    out_.nodes[index].note = note;
    return withBodies;
  }

  /// How many times a Loop's, Scan's or SequenceMap's body runs per run of the node.
  std::pair<Dimension, std::string> bodyRuns(const Node &n, const Graph &g, const Graph &body,
                                             BodyRuns kind) {
    auto inputFact = [&](size_t i) -> const Fact * {
      return i < n.inputs.size() && g.contains(n.inputs[i]) ? &g.fact(n.inputs[i]) : nullptr;
    };
    size_t formals = body.formalInputCount();
    if (kind == BodyRuns::TripCount) {
      // A scan output's leading dim is the trip count; else M (at most, when the condition can
      // stop the loop early).
      size_t carried = formals >= 2 ? formals - 2 : 0;
      for (size_t k = carried; k < n.outputs.size(); ++k) {
        const PartialShape &s = n.outputs[k].fact.shape;
        if (s.rankIsStatic() && s.size() > 0) return {s[0], "the body runs its trip count times"};
      }
      if (const Fact *m = inputFact(0)) {
        if (auto v = scalarDim(*m)) {
          auto trips = Dimension::max(*v, Dimension(0));
          if (trips.ok()) {
            bool cond = n.inputs.size() > 1 && n.inputs[1].valid();
            return {trips->nonNegative(), cond ? "the body runs at most M times (the condition "
                                                 "may stop it earlier): M is counted"
                                               : "the body runs M times"};
          }
        }
      }
      return {Dimension::dynamic(), "the trip count is not known"};
    }
    if (kind == BodyRuns::ScanLength) {
      int64_t scans = n.attrs.getInt("num_scan_inputs", 1).valueOr(1);
      bool batched = n.opsetVersion > 0 && n.opsetVersion < 9;
      size_t first = (batched ? 1 : 0) + (formals >= size_t(scans) ? formals - size_t(scans) : 0);
      int64_t axis = batched ? 1 : 0;
      if (auto axes = n.attrs.getInts("scan_input_axes"); axes.ok() && !axes->empty())
        axis = (*axes)[0];
      if (const Fact *x = inputFact(first); x && x->shape.rankIsStatic()) {
        int64_t r = int64_t(x->shape.size());
        if (axis < 0) axis += r;
        if (axis >= 0 && axis < r)
          return {x->shape[size_t(axis)], "the body runs once per scan step"};
      }
      return {Dimension::dynamic(), "the scan length is not known"};
    }
    return {Dimension::dynamic(), "the body runs once per sequence element (a count not known)"};
  }

  /// Elements and bytes of a fact, made once per tensor (a tensor is an output once and an
  /// input as often as it is read: a DenseNet block's features feed every later layer).
  const std::pair<Dimension, Dimension> &sizes(const Fact &f) {
    auto [it, fresh] = sizes_.try_emplace(&f);
    if (fresh) it->second = {elementsOf(f), bytesOf(f)};
    return it->second;
  }

  Result<void> record(const std::string &op, const Counts &c, const Dimension &runs) {
    ++out_.byOpType[op].count;
    return opSums_[op].add(c, runs);
  }

  const OpRegistry &registry_;
  const Device *device_;
  ModelStats &out_;
  std::set<std::pair<const Graph *, uint32_t>> seen_; // initializers counted as parameters
  std::map<std::string, CountsSum> opSums_;
  std::unordered_map<const Fact *, std::pair<Dimension, Dimension>> sizes_;
};

} // namespace

Result<ModelStats> computeStats(const Graph &g, const StatsOptions &options) {
  ExprScope scope = g.enter();
  ModelStats out;
  Walker w(options.registry ? *options.registry : defaultRegistry(), options.device, out);
  SF_ASSIGN(out.total, w.walk(g, "", Dimension(1), 0));
  SF_TRY(w.finishOpTypes());
  for (const NodeStats &n : out.nodes)
    if (!n.modeled) {
      out.notes.push_back("no cost model for " + n.op + " (node '" + n.name +
                          "'): its counts are unknown");
      break;
    }
  return out;
}

} // namespace sf
