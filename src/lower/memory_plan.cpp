// The static memory plan (lower/memory_plan.h).
#include "shapeflow/lower/memory_plan.h"

#include "memory_order.h"
#include "placement.h"
#include "plan_binding.h"

#include "shapeflow/ops/op.h"
#include "shapeflow/support/checked.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>
#include <unordered_map>

namespace sf::lower {

int64_t liveLowerBound(const std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> &slots,
                       size_t steps) {
  std::vector<int64_t> delta(steps + 1, 0);
  for (const auto &[size, life] : slots) {
    delta[life.first] += size;
    delta[std::min(life.second + 1, steps)] -= size;
  }
  int64_t live = 0, best = 0;
  for (size_t i = 0; i < steps; ++i) {
    live += delta[i];
    best = std::max(best, live);
  }
  return best;
}

namespace {

Result<Dimension> alignUp(const Dimension &bytes, int64_t align) {
  SF_ASSIGN(Dimension units, bytes.ceilDiv(align));
  return units * Dimension(align);
}

/// Tree nodes an offset's expression may have before it is replaced by a constant bound.
inline constexpr uint32_t kOffsetBudget = 16384;

/// The largest of several expressions, leaving out those another is at least for every value
/// of the symbols (by the bounds of their difference).
thread_local size_t tBounded = 0; // maxima replaced by a constant bound, in this plan

/// An expression as a constant plus monomials with coefficients.
struct Terms {
  int64_t constant = 0;
  std::map<Expr, int64_t> coefs;
};

Terms termsOf(Expr e) {
  Terms t;
  if (e->kind == ExprKind::Const) {
    t.constant = e->value;
  } else if (e->kind == ExprKind::Add) {
    t.constant = e->value;
    for (size_t i = 0; i < e->ops.size(); ++i)
      t.coefs[e->ops[i]] += e->coefs[i];
  } else {
    t.coefs[e] = 1;
  }
  return t;
}

/// max(t1, ..., tk) <= common + (t1 - common) + ... + (tk - common), when each difference is
/// non-negative for every binding: `common` takes, per monomial, the smallest coefficient the
/// terms share (and the smallest constant). None when a difference may be negative.
std::optional<Dimension> commonPlusRest(const std::vector<Dimension> &terms) {
  std::vector<Terms> ts;
  for (const Dimension &d : terms) {
    if (!d.expr()) return std::nullopt;
    ts.push_back(termsOf(d.expr()));
  }
  Terms common;
  common.constant = ts[0].constant;
  for (const Terms &t : ts)
    common.constant = std::min(common.constant, t.constant);
  for (const auto &[m, c] : ts[0].coefs) {
    int64_t least = c;
    for (const Terms &t : ts) {
      auto it = t.coefs.find(m);
      least = std::min(least, it == t.coefs.end() ? 0 : it->second);
    }
    if (least > 0) common.coefs[m] = least;
  }
  ExprSum total;
  if (!total.add(constant(common.constant)).ok()) return std::nullopt;
  for (const auto &[m, c] : common.coefs)
    if (!total.add(m, c).ok()) return std::nullopt;
  for (const Terms &t : ts) {
    ExprSum rest;
    if (!rest.add(constant(t.constant - common.constant)).ok()) return std::nullopt;
    for (const auto &[m, c] : t.coefs) {
      auto it = common.coefs.find(m);
      int64_t k = c - (it == common.coefs.end() ? 0 : it->second);
      if (k && !rest.add(m, k).ok()) return std::nullopt;
    }
    auto r = rest.result();
    if (!r.ok() || (*r)->bounds.lo < 0) return std::nullopt;
    if (!total.add(*r).ok()) return std::nullopt;
  }
  auto e = total.result();
  if (!e.ok()) return std::nullopt;
  return Dimension(*e);
}

Result<Dimension> maxOf(std::vector<Dimension> terms) {
  std::vector<Dimension> kept;
  for (size_t i = 0; i < terms.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < terms.size() && !dominated; ++j) {
      if (i == j) continue;
      // j is not at least i everywhere when its largest value is below i's smallest.
      if (terms[j].hasUpperBound() && terms[j].maxLength() < terms[i].minLength()) continue;
      auto diff = terms[j] - terms[i];
      if (!diff.ok() || diff->minLength() < 0) continue;
      // j >= i everywhere; of two equal ones keep the first.
      dominated = !(diff->isStatic() && diff->length() == 0) || j < i;
    }
    if (!dominated) kept.push_back(terms[i]);
  }
  if (kept.empty()) return Dimension(0);
  // The maximum's size is about the sum of its terms': past the budget it is not built.
  uint64_t size = 1;
  bool expressions = true;
  for (const Dimension &t : kept) {
    if (t.isStatic()) continue;
    expressions = expressions && t.expr() && !t.expr()->hasAnonymous;
    if (t.expr()) size += t.expr()->size;
  }
  Dimension m = kept[0];
  if (expressions && size <= kOffsetBudget)
    for (size_t i = 1; i < kept.size(); ++i) {
      SF_ASSIGN(m, Dimension::max(m, kept[i]));
    }
  else
    m = Dimension(); // too large: bounded below
  // An offset above offsets above offsets repeats their expressions: past a size, the maximum
  // is replaced by something at least as large for every binding and small: what the terms
  // have in common plus the sum of what each adds to it (each of those non-negative), else a
  // constant (the top of the terms' bounds). Sound either way, and the plan's verifier checks
  // it like the rest.
  if (!m.isStatic() && (!m.expr() || m.expr()->hasAnonymous || m.expr()->size > kOffsetBudget)) {
    ++tBounded;
    auto sum = commonPlusRest(kept);
    if (sum && sum->expr() && !sum->expr()->hasAnonymous && sum->expr()->size <= kOffsetBudget)
      return *sum;
    int64_t top = 0;
    for (const Dimension &t : kept) {
      if (!t.hasUpperBound()) return makeError("a buffer's end has no upper bound");
      top = std::max(top, t.maxLength());
    }
    return Dimension(top);
  }
  return m;
}

struct Placed {
  std::vector<Slot> slots;
  Dimension peak = Dimension(0);
  Dimension lowerBound = Dimension(0);
  int64_t shapeBytes = 0;
};

class Planner {
public:
  Planner(const PlanOptions &o, Binding &b, Abstraction &a,
          const std::vector<std::map<std::string, int64_t>> &judged)
      : options_(o), binding_(b), abstraction_(a), judged_(judged) {}

  /// The slots of one graph's plan, placed (`main`: the top graph, whose inputs and outputs may
  /// be the caller's; `depth`: how deep in subgraphs).
  Result<Placed> place(const BufferPlan &plan, bool main, int depth);

private:
  friend struct Placing;
  const PlanOptions &options_;
  Binding &binding_;
  Abstraction &abstraction_;
  /// Other bindings the placement is judged at (its order of slots kept there).
  const std::vector<std::map<std::string, int64_t>> &judged_;
};

/// One graph's placement (Planner::place): the op positions of its steps, which buffers own a
/// slot, and the slots as they are placed.
struct Placing {
  Planner &planner;
  const PlanOptions &options_;
  Binding &binding_;
  Abstraction &abstraction_;
  const BufferPlan &plan;
  std::vector<size_t> pos; // per step: its op position
  size_t ops = 0, last = 0;
  Placed out;
  std::vector<std::optional<size_t>> slotOf; // per buffer: the slot it owns
  size_t owners = 0;                         // slots that own memory (the first ones)
  std::vector<Item> items;                   // the owners at the reference
  std::vector<std::vector<int64_t>> alsoAt;  // their sizes at the planner's other bindings

  Placing(Planner &p, const BufferPlan &bp)
      : planner(p), options_(p.options_), binding_(p.binding_), abstraction_(p.abstraction_),
        plan(bp) {}

  /// A size as the plan holds it: an expression of named symbols, else (a size that depends on
  /// the data with no name, or that has no expression) its upper bound, which every run fits.
  Dimension sized(const Dimension &bytes) {
    if (bytes.isStatic() || (bytes.expr() && !bytes.expr()->hasAnonymous))
      return abstraction_.apply(bytes);
    if (bytes.hasUpperBound()) return Dimension(bytes.maxLength());
    return bytes; // no bound: the binding reports it
  }

  /// Op positions of steps: a step that is not an op takes the next op's position.
  void positions() {
    pos.assign(plan.steps.size(), 0);
    for (size_t i = 0; i < plan.steps.size(); ++i)
      if (plan.steps[i].kind == StepKind::Op) ++ops;
    {
      size_t seen = 0;
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        pos[i] = std::min(seen, ops ? ops - 1 : 0);
        if (plan.steps[i].kind == StepKind::Op) ++seen;
      }
    }
    last = ops ? ops - 1 : 0;
  }

  /// Which buffers own memory here, and each group's lifetime (views and in-place outputs
  /// share their root's slot): a slot for each owner.
  Result<void> ownerSlots(bool main) {
    slotOf.assign(plan.buffers.size(), std::nullopt);
    std::vector<size_t> firstStep(plan.buffers.size(), 0), lastStep(plan.buffers.size(), 0);
    std::vector<bool> output(plan.buffers.size(), false);
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const Buffer &buf = plan.buffers[b];
      size_t r = rootOf(plan, b);
      size_t end = std::max(buf.alloc, buf.lastUse.value_or(buf.alloc));
      lastStep[r] = std::max(lastStep[r], end);
      if (buf.owner == Owner::Caller && buf.alloc > 0) output[r] = true;
    }
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const Buffer &buf = plan.buffers[b];
      if (buf.shapeValue) {
        if (auto u = binding_.at(buf.bytes, buf.name); u.ok()) out.shapeBytes += *u;
        continue;
      }
      if (buf.aliasOf || buf.owner == Owner::Constant) continue;
      bool io = buf.owner == Owner::Caller;
      if (io && (options_.callerOwnedIO || !main)) continue;
      Slot s;
      s.tensor = buf.tensor;
      s.bytes = sized(buf.bytes);
      SF_ASSIGN(s.size, alignUp(s.bytes, options_.align));
      s.first = pos[buf.alloc];
      s.last = output[b] ? last : pos[lastStep[b]];
      if (io && buf.alloc == 0 && !output[b]) s.first = 0;
      slotOf[b] = out.slots.size();
      out.slots.push_back(std::move(s));
    }
    return success();
  }

  /// A slot holds every tensor that shares it: a view's or an in-place output's size is its
  /// root's where the model is valid, but the expressions may differ elsewhere in the domain
  /// (a broadcast the model only runs with equal dims), so the slot takes the largest.
  Result<void> widenShared() {
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const Buffer &buf = plan.buffers[b];
      if (!buf.aliasOf || buf.shapeValue || !slotOf[*buf.aliasOf]) continue;
      Slot &root = out.slots[*slotOf[*buf.aliasOf]];
      Dimension bytes = sized(buf.bytes);
      auto diff = bytes - root.bytes;
      if (diff.ok() && diff->hasUpperBound() && diff->maxLength() <= 0) continue;
      SF_ASSIGN(Dimension aligned, alignUp(bytes, options_.align));
      SF_ASSIGN(root.size, Dimension::max(root.size, aligned));
    }
    return success();
  }

  /// Bodies: each one's arena, live during its op's step.
  Result<void> bodySlots(int depth) {
    for (size_t i = 0; i < plan.steps.size(); ++i)
      for (const auto &[name, body] : plan.steps[i].bodies) {
        SF_ASSIGN(Placed inner, planner.place(body, false, depth + 1));
        out.shapeBytes += inner.shapeBytes;
        if (inner.peak.isStatic() && inner.peak.length() == 0) continue;
        Slot s;
        const Node &n = plan.graph->nodes[plan.steps[i].node];
        s.tensor = n.name + "/" + name;
        s.bytes = inner.peak;
        SF_ASSIGN(s.size, alignUp(inner.peak, options_.align));
        s.first = s.last = pos[i];
        s.body = true;
        out.slots.push_back(std::move(s));
      }
    owners = out.slots.size();
    return success();
  }

  /// The owners' sizes and lifetimes at the reference, for the placement.
  Result<void> referenceItems() {
    items.resize(owners);
    for (size_t i = 0; i < owners; ++i) {
      SF_ASSIGN(items[i].size, binding_.at(out.slots[i].size, "tensor " + out.slots[i].tensor));
      // A size that is 0 at the reference but not everywhere still takes room there, so that the
      // placement puts it strictly below or above every slot it lives with: that order is what
      // the offsets' expressions keep at the other bindings.
      const Dimension &size = out.slots[i].size;
      if (items[i].size == 0 && !(size.isStatic() && size.length() == 0))
        items[i].size = options_.align;
      items[i].first = out.slots[i].first;
      items[i].last = out.slots[i].last;
    }
    // The sizes at the other bindings the placement is judged at; none where a size has no value
    // at one of them (the placement is then judged at the reference alone).
    for (const auto &values : planner.judged_) {
      Binding there(abstraction_, values);
      std::vector<int64_t> sizes(owners);
      for (size_t i = 0; i < owners; ++i) {
        auto v = there.at(out.slots[i].size, out.slots[i].tensor);
        if (!v.ok()) {
          alsoAt.clear();
          return success();
        }
        sizes[i] = *v;
      }
      alsoAt.push_back(std::move(sizes));
    }
    return success();
  }

  /// The placement at the reference, then each owner's offset as an expression (above the
  /// slots it conflicts with that lie below it), then the peak.
  Result<void> offsets() {
    std::vector<int64_t> at = placeGreedy(items, options_.align, ops, alsoAt);
    // Offsets as expressions: above the slots it conflicts with that lie below it.
    std::vector<size_t> byOffset(owners);
    std::iota(byOffset.begin(), byOffset.end(), 0);
    std::stable_sort(byOffset.begin(), byOffset.end(),
                     [&](size_t a, size_t b) { return at[a] < at[b]; });
    std::vector<bool> done(owners, false);
    const std::vector<std::vector<size_t>> conflicts = conflictsOf(items);
    const size_t words = (owners + 63) / 64;
    std::vector<std::vector<uint64_t>> belowBits(owners, std::vector<uint64_t>(words, 0));
    std::vector<uint64_t> covered(words), anyBelow(words, 0);
    auto has = [](const std::vector<uint64_t> &bits, size_t j) {
      return (bits[j / 64] >> (j % 64)) & 1;
    };
    for (size_t i : byOffset) {
      Slot &s = out.slots[i];
      std::vector<size_t> below;
      for (size_t j : conflicts[i])
        if (done[j] && at[j] < at[i]) below.push_back(j);
      std::sort(below.begin(), below.end());
      // Only the direct ones: a slot below another of the list is covered by it (its end is at
      // most that one's offset, for every binding).
      std::fill(covered.begin(), covered.end(), 0);
      for (size_t k : below)
        for (size_t w = 0; w < words; ++w)
          covered[w] |= belowBits[k][w];
      std::vector<Dimension> ends;
      for (size_t j : below) {
        belowBits[i][j / 64] |= uint64_t(1) << (j % 64);
        anyBelow[j / 64] |= uint64_t(1) << (j % 64);
        if (has(covered, j)) continue;
        SF_ASSIGN(Dimension e, out.slots[j].offset + out.slots[j].size);
        ends.push_back(e);
      }
      s.above = std::move(below);
      // Sizes are multiples of the alignment, so are sums and maxima of them: the offset needs no
      // rounding. A maximum becomes a derived symbol of the plan.
      SF_ASSIGN(Dimension off, maxOf(ends));
      s.offset = abstraction_.name(off);
      done[i] = true;
    }
    // The peak: the largest end among the slots no other slot lies on.
    std::vector<Dimension> ends;
    for (size_t i = 0; i < owners; ++i) {
      if (has(anyBelow, i)) continue;
      SF_ASSIGN(Dimension e, out.slots[i].offset + out.slots[i].size);
      ends.push_back(e);
    }
    SF_ASSIGN(out.peak, maxOf(ends));
    return success();
  }

  /// The lower bound: the bytes live at each step, the largest. Only the steps where a maximal
  /// set of slots is live need a sum: where a slot ends after another began since the last such
  /// step (the maximal cliques of an interval graph).
  Result<void> lowerBound() {
    std::vector<bool> ends_(ops + 1, false), starts(ops + 1, false);
    for (size_t i = 0; i < owners; ++i) {
      ends_[items[i].last] = true;
      starts[items[i].first] = true;
    }
    std::vector<Dimension> live;
    bool fresh = false;
    for (size_t step = 0; step < ops; ++step) {
      fresh = fresh || starts[step];
      if (!ends_[step] || !fresh) continue;
      fresh = false;
      DimensionSum sum;
      for (size_t i = 0; i < owners; ++i)
        if (items[i].first <= step && step <= items[i].last) SF_TRY(sum.add(out.slots[i].size));
      SF_ASSIGN(Dimension v, sum.value());
      live.push_back(v);
    }
    SF_ASSIGN(out.lowerBound, maxOf(live));
    return success();
  }

  /// Tensors that share a slot: listed with their own size and lifetime, at their root's offset.
  Result<void> sharingSlots() {
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const Buffer &buf = plan.buffers[b];
      if (!buf.aliasOf || buf.shapeValue || !slotOf[*buf.aliasOf]) continue;
      Slot s;
      s.tensor = buf.tensor;
      s.bytes = sized(buf.bytes);
      SF_ASSIGN(s.size, alignUp(s.bytes, options_.align));
      s.offset = out.slots[*slotOf[*buf.aliasOf]].offset;
      s.first = pos[buf.alloc];
      s.last = pos[std::max(buf.alloc, buf.lastUse.value_or(buf.alloc))];
      if (buf.owner == Owner::Caller) s.last = last;
      s.sharesWith = *slotOf[*buf.aliasOf];
      s.reuse = buf.reuse;
      out.slots.push_back(std::move(s));
    }
    return success();
  }
};

Result<Placed> Planner::place(const BufferPlan &plan, bool main, int depth) {
  if (depth > 64) return makeError("subgraphs nested deeper than 64");
  Placing p(*this, plan);
  p.positions();
  SF_TRY(p.ownerSlots(main));
  SF_TRY(p.widenShared());
  SF_TRY(p.bodySlots(depth));
  SF_TRY(p.referenceItems());
  SF_TRY(p.offsets());
  SF_TRY(p.lowerBound());
  SF_TRY(p.sharingSlots());
  return std::move(p.out);
}

struct Planned {
  size_t bounded = 0;
  ShapeProgram program;
  BufferPlan buffers;
  Placed placed;
  std::vector<uint32_t> opIds;
};

Result<Planned> planIn(const Graph &g, const std::vector<uint32_t> &order,
                       const PlanOptions &options, Binding &binding, Abstraction &abstraction,
                       const std::vector<std::map<std::string, int64_t>> &judged) {
  Planned p;
  tBounded = 0;
  SF_ASSIGN(p.program, lowerShapes(g, &order));
  SF_ASSIGN(p.buffers, planBuffers(p.program));
  Planner planner(options, binding, abstraction, judged);
  SF_ASSIGN(p.placed, planner.place(p.buffers, true, 0));
  for (const Step &s : p.buffers.steps)
    if (s.kind == StepKind::Op) p.opIds.push_back(s.node);
  p.bounded = tBounded;
  return p;
}

} // namespace

namespace {

/// The plan with its placement decided at `options.reference`, judged there and at `judged`.
Result<MemoryPlan> planAt(const Graph &g, const PlanOptions &options,
                          const std::vector<std::map<std::string, int64_t>> &judged = {});

} // namespace

std::map<std::string, Interval> namedSymbols(const MemoryPlan &p) {
  std::map<std::string, Interval> out;
  std::set<std::string> derived;
  for (const auto &[name, def] : p.derived)
    derived.insert(name);
  for (const Slot &s : p.slots)
    if (s.size.expr())
      for (SymbolId id : symbolsOf(s.size.expr())) {
        const SymbolInfo &info = symbolInfo(id);
        if (!info.name.empty() && !derived.count(info.name) && info.range.hi != kInf)
          out[info.name] = info.range;
      }
  return out;
}

std::optional<double> peakOverLowerBound(const MemoryPlan &p, const std::map<std::string, int64_t> &values) {
  // Only the values given and upper bounds: the plan's own reference is not a binding here.
  MemoryPlan unreferenced;
  unreferenced.derived = p.derived;
  PlanValues eval(unreferenced, values);
  std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> lives;
  for (const Slot &s : p.slots) {
    if (s.sharesWith) continue;
    auto size = eval(s.size);
    if (!size) return std::nullopt;
    lives.push_back({*size, {s.first, s.last}});
  }
  auto peak = eval(p.peak);
  int64_t lb = liveLowerBound(lives, p.order.size());
  if (!peak || lb <= 0) return std::nullopt;
  return double(*peak) / double(lb);
}

Result<MemoryPlan> planMemory(const Graph &g, const PlanOptions &options) {
  if (options.align <= 0 || (options.align & (options.align - 1)) != 0)
    return errorf("the alignment must be a power of two, not {}", options.align);
  SF_ASSIGN(MemoryPlan best, planAt(g, options));
  if (!best.symbolic || !options.reference.empty()) return best;
  // Decided at the upper bounds, a plan is as good as the lower bound there; at the small end
  // of the domain its order of slots may be worse. Where it is more than 5% above the lower
  // bound at the lower or middle binding (or one of the caller's), plans decided there are tried
  // too, and the one whose worst ratio over those bindings is least is kept.
  ExprScope scope = g.enter();
  std::vector<std::map<std::string, int64_t>> judge = options.judgeAt, tries;
  if (judge.empty()) {
    std::map<std::string, Interval> named = namedSymbols(best);
    if (named.empty()) return best;
    std::map<std::string, int64_t> lo, mid, hi;
    for (const auto &[name, r] : named) {
      lo[name] = r.lo;
      mid[name] = r.lo + (r.hi - r.lo) / 2;
      hi[name] = r.hi;
    }
    judge = {lo, mid, hi};
    tries = {mid, lo};
  } else {
    tries = judge;
  }
  auto worst = [&](const MemoryPlan &p) {
    double w = 1;
    for (const auto &b : judge) {
      auto r = peakOverLowerBound(p, b);
      w = std::max(w, r ? *r : 1e9);
    }
    return w;
  };
  double bestWorst = worst(best);
  if (bestWorst <= options.retryAbove) return best;
  // First placements judged at every one of those bindings (the order of slots a placement
  // makes is kept at all of them), decided at the upper bounds and then at each reference;
  // where none is within the goal, placements judged at their reference alone too.
  std::vector<std::map<std::string, int64_t>> references = {options.reference};
  references.insert(references.end(), tries.begin(), tries.end());
  for (bool judged : {true, false})
    for (size_t k = judged ? 0 : 1; k < references.size(); ++k) {
      if (bestWorst <= (judged ? 1.0 : options.retryAbove)) break;
      PlanOptions o = options;
      o.reference = references[k];
      auto p = judged ? planAt(g, o, judge) : planAt(g, o);
      if (!p.ok()) continue;
      double w = worst(*p);
      if (w < bestWorst) {
        bestWorst = w;
        best = std::move(*p);
      }
    }
  return best;
}

namespace {

Result<MemoryPlan> planAt(const Graph &g, const PlanOptions &options,
                          const std::vector<std::map<std::string, int64_t>> &judged) {
  ExprScope scope = g.enter();
  // Offsets are maxima of sums of sizes, made once per plan: larger than inference's limits.
  ExprLimitScope limits(1u << 16, 4096);
  Abstraction abstraction(g);
  Binding binding(abstraction, options.reference);
  SF_ASSIGN(std::vector<uint32_t> modelOrder, g.topologicalOrder());
  SF_ASSIGN(Planned model, planIn(g, modelOrder, options, binding, abstraction, judged));
  Planned chosen = std::move(model);
  Dimension modelBound = chosen.placed.lowerBound;
  if (options.order == OrderPolicy::Memory) {
    SF_ASSIGN(std::vector<uint32_t> order, memoryOrder(g, binding));
    SF_ASSIGN(Planned other, planIn(g, order, options, binding, abstraction, judged));
    // Lower than the model's order at the reference, and never higher at the ends and the
    // middle of the named symbols' ranges (an order chosen at one binding may be worse at
    // another).
    SF_ASSIGN(int64_t a, binding.at(other.placed.lowerBound, "the lower bound"));
    SF_ASSIGN(int64_t b, binding.at(modelBound, "the lower bound"));
    bool better = a < b;
    std::map<std::string, Interval> named;
    for (const Dimension *d : {&modelBound, &other.placed.lowerBound})
      if (d->expr())
        for (SymbolId id : symbolsOf(d->expr())) {
          const SymbolInfo &info = symbolInfo(id);
          if (!info.name.empty() && !abstraction.original(id) && info.range.hi != kInf)
            named[info.name] = info.range;
        }
    for (int k = 0; k < 3 && better && !named.empty(); ++k) {
      std::map<std::string, int64_t> values;
      for (const auto &[name, r] : named)
        values[name] = k == 0 ? r.lo : k == 1 ? r.lo + (r.hi - r.lo) / 2 : r.hi;
      Binding there(abstraction, values);
      auto x = there.at(other.placed.lowerBound, "the lower bound");
      auto y = there.at(modelBound, "the lower bound");
      better = x.ok() && y.ok() && *x <= *y;
    }
    if (better) chosen = std::move(other);
  }
  MemoryPlan out;
  out.align = options.align;
  for (uint32_t id : chosen.opIds) {
    out.orderIds.push_back(id);
    out.order.push_back(g.nodes[id].name);
  }
  out.slots = std::move(chosen.placed.slots);
  out.peak = chosen.placed.peak;
  out.lowerBound = chosen.placed.lowerBound;
  out.lowerBoundModelOrder = modelBound;
  out.shapeValueBytes = chosen.placed.shapeBytes;
  out.boundedOffsets = chosen.bounded;
  for (const Slot &s : out.slots)
    out.symbolic = out.symbolic || !s.size.isStatic();
  out.reference = binding.used();
  for (const auto &[name, e] : abstraction.definitions())
    out.derived.push_back({name, Dimension(e)});
  for (const auto &[name, v] : options.reference)
    out.reference[name] = v;
  return out;
}

} // namespace

PlanValues::PlanValues(const MemoryPlan &plan, std::map<std::string, int64_t> at)
    : plan_(plan), at_(std::move(at)) {
  for (const auto &[name, def] : plan.derived)
    derived_[name] = &def;
}

std::optional<int64_t> PlanValues::operator()(const Dimension &d) {
  if (d.isStatic()) return d.length();
  if (!d.expr() || d.expr()->hasAnonymous) {
    if (d.hasUpperBound()) return d.maxLength();
    return std::nullopt;
  }
  auto v = evaluate(d.expr(), [this](SymbolId s) { return symbol(s); });
  if (!v.ok()) return std::nullopt;
  return *v;
}

std::optional<int64_t> PlanValues::symbol(SymbolId s) {
  if (auto m = memo_.find(s); m != memo_.end()) return m->second;
  const SymbolInfo &info = symbolInfo(s);
  if (auto d = derived_.find(info.name); d != derived_.end() && d->second->expr()) {
    memo_[s] = std::nullopt; // a cycle evaluates to nothing
    auto v = evaluate(d->second->expr(), [this](SymbolId t) { return symbol(t); });
    return memo_[s] = v.ok() ? std::optional<int64_t>(*v) : std::nullopt;
  }
  if (auto it = at_.find(info.name); it != at_.end()) return it->second;
  if (auto it = plan_.reference.find(info.name); it != plan_.reference.end()) return it->second;
  if (info.range.hi != kInf) return info.range.hi;
  return std::nullopt;
}

} // namespace sf::lower
