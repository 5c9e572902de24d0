// Per-node and whole-model statistics (cost/stats.h): a walk over the graph and its bodies that
// asks each op's cost function for its arithmetic and computes elements, bytes, parameters and
// traffic from the facts. Every sum is checked Dimension arithmetic: symbolic where the facts are.
#include "shapeflow/cost/stats.h"

#include "shapeflow/cost/device.h"

#include "shapeflow/ops/helpers.h"
#include "shapeflow/support/format.h"

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

/// Limits of a sum's expression over a graph (a model's total has a term per distinct size:
/// hundreds in a detection model): larger than inference's (kMaxExprSize, kMaxTerms), since a
/// total is made once per report; past them the total is a bounded unknown.
inline constexpr uint32_t kTotalMaxSize = 1u << 16, kTotalMaxTerms = 4096;

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
    SF_ASSIGN(c.macs, macs_.value(kTotalMaxSize, kTotalMaxTerms));
    SF_ASSIGN(c.flops, flops_.value(kTotalMaxSize, kTotalMaxTerms));
    for (size_t k = 0; k < kFlopKinds; ++k) {
      SF_ASSIGN(c.flopsByKind[k], kinds_[k].value(kTotalMaxSize, kTotalMaxTerms));
    }
    SF_ASSIGN(c.readBytes, read_.value(kTotalMaxSize, kTotalMaxTerms));
    SF_ASSIGN(c.writeBytes, write_.value(kTotalMaxSize, kTotalMaxTerms));
    SF_ASSIGN(c.timeNs, time_.value(kTotalMaxSize, kTotalMaxTerms));
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

/// `d` when it is an expression of named symbols, else its lower bound.
Dimension knownPart(const Dimension &d) {
  if (d.isStatic() || (d.expr() && !d.expr()->hasAnonymous)) return d;
  return Dimension(std::max<int64_t>(d.minLength(), 0));
}

Counts knownPart(const Counts &c) {
  Counts k;
  k.macs = knownPart(c.macs);
  k.flops = knownPart(c.flops);
  for (size_t i = 0; i < kFlopKinds; ++i)
    k.flopsByKind[i] = knownPart(c.flopsByKind[i]);
  k.readBytes = knownPart(c.readBytes);
  k.writeBytes = knownPart(c.writeBytes);
  k.timeNs = knownPart(c.timeNs);
  return k;
}

/// The counts of a graph or node, and their known part (ModelStats::totalKnown).
struct Both {
  Counts all, known;
};

class Walker {
public:
  Walker(const OpRegistry &registry, const Device *device, ModelStats &out)
      : registry_(registry), device_(device), out_(out) {}

  /// Appends the statistics of every node of `g` (which runs `runs` times per model run) and
  /// returns the counts of one run of `g`.
  Result<Both> walk(const Graph &g, const std::string &path, const Dimension &runs, int depth) {
    if (depth > 64) return makeError("subgraphs nested deeper than 64");
    CountsSum total, known;
    for (const Node &n : g.nodes) {
      if (n.removed || n.isParameter() || n.isConstant()) continue;
      SF_ASSIGN(Both c, node(g, n, path, runs, depth));
      SF_TRY(total.add(c.all));
      SF_TRY(known.add(c.known));

    }
    Both b;
    SF_ASSIGN(b.all, total.value());
    SF_ASSIGN(b.known, known.value());
    return b;
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
  Result<Both> node(const Graph &g, const Node &n, const std::string &path, const Dimension &runs,
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
    Both withBodies{own, knownPart(own)};
    if (traits.bodies == BodyRuns::None) return withBodies;
    std::string inner = path.empty() ? n.name : path + "/" + n.name;
    if (traits.bodies == BodyRuns::OneBranch) {
      SF_ASSIGN(GraphPtr thenB, n.attrs.getGraph("then_branch"));
      SF_ASSIGN(GraphPtr elseB, n.attrs.getGraph("else_branch"));
      SF_ASSIGN(Both a, walk(*thenB, inner + "/then_branch", runs, depth + 1));
      SF_ASSIGN(Both b, walk(*elseB, inner + "/else_branch", runs, depth + 1));
      SF_TRY(withBodies.all.add(maxCounts(a.all, b.all)));
      SF_TRY(withBodies.known.add(maxCounts(a.known, b.known)));
      out_.nodes[index].note = "one branch runs: each count is the larger of the two branches'";
      return withBodies;
    }
    SF_ASSIGN(GraphPtr body, n.attrs.getGraph("body"));
    auto [times, note] = bodyRuns(n, g, *body, traits.bodies);
    SF_ASSIGN(Dimension bodyRuns, runs * times);
    SF_ASSIGN(Both b, walk(*body, inner + "/body", bodyRuns, depth + 1));
    SF_TRY(withBodies.all.add(b.all, times));
    SF_TRY(withBodies.known.add(b.known, knownPart(times)));
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
  SF_ASSIGN(Both total, w.walk(g, "", Dimension(1), 0));
  out.total = total.all;
  out.totalKnown = total.known;
  SF_TRY(w.finishOpTypes());
  for (const NodeStats &n : out.nodes)
    if (!n.modeled) {
      out.notes.push_back("no cost model for " + n.op + " (node '" + n.name +
                          "'): its counts are unknown");
      break;
    }
  // Nodes whose counts are not expressions (sizes that depend on the data with no bound named,
  // an unknown rank, an op without a cost model): the total is then not one either.
  std::vector<std::string> unknown;
  size_t count = 0;
  for (const NodeStats &n : out.nodes) {
    bool known = true;
    for (const Dimension *d : {&n.counts.macs, &n.counts.flops, &n.counts.readBytes,
                               &n.counts.writeBytes, &n.runs})
      known &= d->isStatic() || (d->expr() && !d->expr()->hasAnonymous);
    if (known) continue;
    if (++count <= 5)
      unknown.push_back("'" + n.name + "' (" + n.op + (n.path.empty() ? "" : " in " + n.path) + ")");
  }
  if (count) {
    std::string list;
    for (const std::string &u : unknown)
      list += (list.empty() ? "" : ", ") + u;
    if (count > unknown.size()) list += fmt::format(" and {} more", count - unknown.size());
    out.notes.push_back(fmt::format(
        "{} node{} {} counts that are not expressions of the inputs (their sizes, or how often "
        "they run, depend on the data or are unknown): {}; total_known is the total with those "
        "at their lower bounds",
        count, count == 1 ? "" : "s", count == 1 ? "has" : "have", list));
  }
  return out;
}

} // namespace sf
