// The static memory plan (lower/memory_plan.h).
#include "shapeflow/lower/memory_plan.h"

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

/// Sizes computed through float shape math (a detection model's resized image: floor(H *
/// min(800 / min(H, W), ...))) repeat that whole subexpression in every size: each such rounding
/// becomes a derived symbol of the plan (`_r0 = floor(H * ...)`, its range the expression's
/// bounds), so that offsets, which are maxima of sums of sizes, stay small. Sound: a plan valid
/// for every value of `_r0` in its range is valid for the values the expression takes.
class Abstraction {
public:
  explicit Abstraction(const Graph &g) : g_(g) {}

  Dimension apply(const Dimension &d) {
    if (d.isStatic() || !d.expr() || !hasRound(d.expr())) return d;
    auto r = replaceAtoms(d.expr(), [&](Expr x) -> Expr {
      if (x->kind != ExprKind::Round) return nullptr;
      return symbol(symbolFor(x));
    });
    if (!r.ok()) return d;
    return Dimension(*r, d.interval());
  }
  /// A derived symbol standing for an offset that is a maximum (`_o3 = max(_o1 + s1, s2)`), so
  /// that the offsets above it refer to it rather than repeat it: every expression of the plan
  /// stays small however deep slots stack.
  Dimension name(const Dimension &offset) {
    if (offset.isStatic() || !offset.expr() || offset.expr()->kind != ExprKind::Max) return offset;
    std::string n;
    do
      n = "_o" + std::to_string(nextOffset_++);
    while (g_.symbols.find(n));
    Interval r = offset.interval();
    SymbolId s = newSymbol(n, {std::max<int64_t>(r.lo, 0), r.hi});
    original_[s] = offset.expr();
    defs_.push_back({n, offset.expr()});
    return Dimension(symbol(s), offset.interval());
  }

  /// The expression a derived symbol stands for (null for other symbols).
  Expr original(SymbolId s) const {
    auto it = original_.find(s);
    return it == original_.end() ? nullptr : it->second;
  }
  const std::vector<std::pair<std::string, Expr>> &definitions() const { return defs_; }

private:
  /// The range of an expression over its symbols' ranges, tighter than its interval bounds:
  /// the union of its bounds over sub-boxes of those ranges (each split in up to 8 parts, at
  /// most 512 boxes). Sound: every value lies in some box.
  static Interval tightBounds(Expr e) {
    std::vector<SymbolId> syms = symbolsOf(e);
    Interval whole = e->bounds;
    if (syms.empty() || syms.size() > 3) return whole;
    for (SymbolId s : syms)
      if (symbolInfo(s).range.hi == kInf) return whole;
    int parts = syms.size() == 1 ? 64 : syms.size() == 2 ? 16 : 8;
    std::vector<std::vector<Interval>> pieces;
    for (SymbolId s : syms) {
      Interval r = symbolInfo(s).range;
      std::vector<Interval> p;
      int64_t span = r.hi - r.lo + 1, k = std::min<int64_t>(parts, span);
      for (int64_t i = 0; i < k; ++i)
        p.push_back({r.lo + span * i / k, r.lo + span * (i + 1) / k - 1});
      pieces.push_back(std::move(p));
    }
    Interval out{kInf, -kInf};
    std::vector<size_t> at(syms.size(), 0);
    while (true) {
      std::unordered_map<SymbolId, Expr> box;
      for (size_t i = 0; i < syms.size(); ++i)
        box[syms[i]] = symbol(newAnonymousSymbol(pieces[i][at[i]]));
      auto sub = substitute(e, [&](SymbolId s) -> Expr {
        auto it = box.find(s);
        return it == box.end() ? nullptr : it->second;
      });
      if (!sub.ok()) return whole;
      Interval b = (*sub)->bounds;
      out = {std::min(out.lo, b.lo), std::max(out.hi, b.hi)};
      size_t i = 0;
      while (i < syms.size() && ++at[i] == pieces[i].size())
        at[i++] = 0;
      if (i == syms.size()) break;
    }
    return out.intersect(whole);
  }

  static bool hasRound(Expr e) {
    if (e->kind == ExprKind::Round) return true;
    for (Expr o : e->ops)
      if (hasRound(o)) return true;
    return false;
  }
  SymbolId symbolFor(Expr round) {
    auto it = symbols_.find(round);
    if (it != symbols_.end()) return it->second;
    std::string name;
    do
      name = "_r" + std::to_string(next_++);
    while (g_.symbols.find(name));
    Interval r = tightBounds(round);
    SymbolId s = newSymbol(name, {std::max<int64_t>(r.lo, 0), r.hi});
    symbols_[round] = s;
    original_[s] = round;
    defs_.push_back({name, round});
    return s;
  }
  const Graph &g_;
  std::unordered_map<Expr, SymbolId> symbols_;
  std::unordered_map<SymbolId, Expr> original_;
  std::vector<std::pair<std::string, Expr>> defs_;
  int next_ = 0, nextOffset_ = 0;
};

/// The values a plan's placement is decided at: named symbols by the reference (else their
/// upper bound), anonymous ones at their upper bound, derived ones at their expression's value.
class Binding {
public:
  Binding(const Abstraction &abstraction, const std::map<std::string, int64_t> &given)
      : abstraction_(abstraction), given_(given) {}

  /// `d` at the binding; an error naming `what` when it has no value there.
  Result<int64_t> at(const Dimension &d, const std::string &what) {
    if (d.isStatic()) return d.length();
    if (d.expr()) {
      // The first symbol without a value: its name, or `anonymous` for an unnamed one.
      std::string missing;
      bool anonymous = false;
      std::function<std::optional<int64_t>(SymbolId)> lookup;
      lookup = [&](SymbolId s) -> std::optional<int64_t> {
        // A derived symbol once per binding: an offset's definition names those below it.
        if (auto m = memo_.find(s); m != memo_.end()) return m->second;
        if (Expr e = abstraction_.original(s)) {
          auto v = evaluate(e, lookup);
          return memo_[s] = v.ok() ? std::optional<int64_t>(*v) : std::nullopt;
        }
        const SymbolInfo &info = symbolInfo(s);
        if (!info.name.empty()) {
          auto it = given_.find(info.name);
          if (it != given_.end()) return it->second;
        }
        if (info.range.hi != kInf) {
          if (!info.name.empty()) used_[info.name] = info.range.hi;
          return info.range.hi;
        }
        if (missing.empty() && !anonymous) {
          missing = info.name;
          anonymous = info.name.empty();
        }
        return std::nullopt;
      };
      auto v = evaluate(d.expr(), lookup);
      if (v.ok()) return *v;
      if (anonymous)
        // An unnamed symbol: a count only the data gives, or an expression that grew past the
        // algebra's cap (dim/expr.h). There is no name to give --dim: the inputs' dims are.
        return errorf("{} has no upper bound for a size that depends on the data or on an "
                      "expression too large to keep (bound the inputs' dims: --dim NAME=LO..HI)",
                      what);
      if (!missing.empty())
        return errorf("{} has no upper bound for {} (bound it: --dim {}=LO..HI)", what,
                      missing, missing);
      return errorf("{}: {}", what, v.error().message);
    }
    if (d.hasUpperBound()) return d.maxLength();
    return errorf("{} has a size with no upper bound", what);
  }
  const std::map<std::string, int64_t> &used() const { return used_; }

private:
  const Abstraction &abstraction_;
  const std::map<std::string, int64_t> &given_;
  std::map<std::string, int64_t> used_;
  std::unordered_map<SymbolId, std::optional<int64_t>> memo_;
};

Result<Dimension> alignUp(const Dimension &bytes, int64_t align) {
  SF_ASSIGN(Dimension units, bytes.ceilDiv(align));
  return units * Dimension(align);
}

int64_t alignUp(int64_t v, int64_t align) { return (v + align - 1) / align * align; }

/// A slot to place: size at the reference, lifetime in op positions.
struct Item {
  int64_t size = 0;
  size_t first = 0, last = 0;
};

/// For each slot, the slots live at a common step with it.
std::vector<std::vector<size_t>> conflictsOf(const std::vector<Item> &items) {
  std::vector<size_t> byFirst(items.size());
  std::iota(byFirst.begin(), byFirst.end(), 0);
  std::sort(byFirst.begin(), byFirst.end(),
            [&](size_t a, size_t b) { return items[a].first < items[b].first; });
  std::vector<std::vector<size_t>> out(items.size());
  for (size_t a = 0; a < byFirst.size(); ++a)
    for (size_t b = a + 1; b < byFirst.size(); ++b) {
      size_t i = byFirst[a], j = byFirst[b];
      if (items[j].first > items[i].last) break;
      out[i].push_back(j);
      out[j].push_back(i);
    }
  return out;
}

/// Places slots in the given order, each into the smallest gap that holds it among the already
/// placed slots live at the same time (else on top of them); offsets at the reference.
std::vector<int64_t> placeInOrder(const std::vector<Item> &items, const std::vector<size_t> &order,
                                  int64_t align, const std::vector<std::vector<size_t>> &conflicts) {
  std::vector<int64_t> offset(items.size(), -1);
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (size_t i : order) {
    busy.clear();
    for (size_t j : conflicts[i])
      if (offset[j] >= 0) busy.push_back({offset[j], offset[j] + items[j].size});
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, bestGap = -1, cursor = 0;
    for (const auto &[b, e] : busy) {
      int64_t start = alignUp(cursor, align);
      if (b > start && b - start >= items[i].size && (bestGap < 0 || b - start < bestGap)) {
        best = start;
        bestGap = b - start;
      }
      cursor = std::max(cursor, e);
    }
    offset[i] = best >= 0 ? best : alignUp(cursor, align);
  }
  return offset;
}

int64_t peakOf(const std::vector<Item> &items, const std::vector<int64_t> &offset) {
  int64_t peak = 0;
  for (size_t i = 0; i < items.size(); ++i)
    peak = std::max(peak, offset[i] + items[i].size);
  return peak;
}

/// The work (placements times the slots and pairs each looks at) the searches after the first
/// orders may spend, whatever the machine's load: about 150 ms and 100 ms more on the 2-core
/// development machine (10 ns a unit) for the largest dev models (retinanet's 742 slots).
inline constexpr uint64_t kGreedyWork = 15'000'000;
inline constexpr uint64_t kNoiseWork = 9'000'000;

/// The best of several greedy placements (TFLite's greedy by size and by breadth, and orders by
/// lifetime): each is fast, none is best on every graph.
std::vector<int64_t> placeGreedy(const std::vector<Item> &items, int64_t align, size_t steps) {
  size_t n = items.size();
  const std::vector<std::vector<size_t>> conflicts = conflictsOf(items);
  std::vector<size_t> base(n);
  std::iota(base.begin(), base.end(), 0);
  auto life = [&](size_t i) { return items[i].last - items[i].first + 1; };
  std::vector<std::vector<size_t>> orders;
  auto sorted = [&](auto less) {
    std::vector<size_t> o = base;
    std::stable_sort(o.begin(), o.end(), less);
    orders.push_back(std::move(o));
  };
  // By size, ties: the longer-lived first, then the shorter-lived first.
  sorted([&](size_t a, size_t b) {
    if (items[a].size != items[b].size) return items[a].size > items[b].size;
    return life(a) > life(b);
  });
  sorted([&](size_t a, size_t b) {
    if (items[a].size != items[b].size) return items[a].size > items[b].size;
    return items[a].first < items[b].first;
  });
  // By lifetime, then size; by area (size times lifetime).
  sorted([&](size_t a, size_t b) {
    if (life(a) != life(b)) return life(a) > life(b);
    return items[a].size > items[b].size;
  });
  sorted([&](size_t a, size_t b) {
    double x = double(items[a].size) * double(life(a)), y = double(items[b].size) * double(life(b));
    if (x != y) return x > y;
    return items[a].first < items[b].first;
  });
  // By breadth: the steps with the most live bytes first, each one's slots by size.
  {
    std::vector<int64_t> live(steps + 1, 0);
    for (const Item &it : items)
      for (size_t t = it.first; t <= it.last && t < live.size(); ++t)
        live[t] += it.size;
    std::vector<size_t> stepOrder(live.size());
    std::iota(stepOrder.begin(), stepOrder.end(), 0);
    std::stable_sort(stepOrder.begin(), stepOrder.end(),
                     [&](size_t a, size_t b) { return live[a] > live[b]; });
    std::vector<bool> taken(n, false);
    std::vector<size_t> o;
    for (size_t t : stepOrder) {
      std::vector<size_t> here;
      for (size_t i = 0; i < n; ++i)
        if (!taken[i] && items[i].first <= t && t <= items[i].last) here.push_back(i);
      std::stable_sort(here.begin(), here.end(),
                       [&](size_t a, size_t b) { return items[a].size > items[b].size; });
      for (size_t i : here) {
        taken[i] = true;
        o.push_back(i);
      }
    }
    for (size_t i = 0; i < n; ++i)
      if (!taken[i]) o.push_back(i);
    orders.push_back(std::move(o));
  }
  std::vector<int64_t> best;
  std::vector<size_t> bestOrder;
  int64_t bestPeak = -1;
  for (const auto &o : orders) {
    auto off = placeInOrder(items, o, align, conflicts);
    int64_t p = peakOf(items, off);
    if (bestPeak < 0 || p < bestPeak) {
      bestPeak = p;
      best = std::move(off);
      bestOrder = o;
    }
  }
  // Above the lower bound: more orders, by size with reproducible noise (which breaks ties and
  // near-ties differently each time), for a bounded time.
  std::vector<std::pair<int64_t, std::pair<size_t, size_t>>> lives;
  for (const Item &it : items)
    lives.push_back({alignUp(it.size, align), {it.first, it.last}});
  int64_t bound = liveLowerBound(lives, steps + 1);
  // The search is bounded by work, not time, so that the same model and options give the same
  // plan on any machine however loaded: a placement costs a look at every slot and at each
  // pair of slots alive together.
  uint64_t perPlacement = n;
  for (const auto &c : conflicts) perPlacement += c.size();
  uint64_t work = 0;
  auto spend = [&](uint64_t budget) {
    if (work > budget) return false;
    work += perPlacement;
    return true;
  };
  // Iterated greedy: a slot that ends at the peak goes earlier in the order, and the order is
  // kept when the peak does not rise (so that the search drifts across equal plans).
  {
    std::vector<size_t> order = bestOrder;
    std::vector<int64_t> cur = best;
    uint64_t pick = 0x9e3779b9;
    for (int round = 0; round < 4000 && bestPeak > bound; ++round) {
      if (!spend(kGreedyWork)) break;
      int64_t peak = peakOf(items, cur);
      std::vector<size_t> top;
      for (size_t i = 0; i < n; ++i)
        if (cur[i] + items[i].size == peak) top.push_back(i);
      pick = pick * 6364136223846793005ull + 1442695040888963407ull;
      size_t b = top[(pick >> 33) % top.size()];
      auto at = std::find(order.begin(), order.end(), b);
      size_t pos = size_t(at - order.begin());
      if (pos == 0) continue;
      std::vector<size_t> next = order;
      next.erase(next.begin() + long(pos));
      size_t to = size_t((pick >> 13) % pos); // somewhere earlier
      next.insert(next.begin() + long(to), b);
      auto off = placeInOrder(items, next, align, conflicts);
      int64_t p = peakOf(items, off);
      if (p <= peak) {
        order = std::move(next);
        cur = off;
        if (p < bestPeak) {
          bestPeak = p;
          best = std::move(off);
        }
      }
    }
  }
  uint64_t state = 0x1234567;
  for (int round = 0; round < 256 && bestPeak > bound; ++round) {
    if (!spend(kGreedyWork + kNoiseWork)) break;
    std::vector<double> key(n);
    for (size_t i = 0; i < n; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      double noise = double(state >> 11) / double(1ull << 53); // [0, 1)
      key[i] = double(items[i].size) * (1.0 + 0.25 * noise * double(round % 4 + 1) / 4.0);
    }
    std::vector<size_t> o = base;
    std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
    auto off = placeInOrder(items, o, align, conflicts);
    int64_t p = peakOf(items, off);
    if (p < bestPeak) {
      bestPeak = p;
      best = std::move(off);
    }
  }
  return best;
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
  Planner(const PlanOptions &o, Binding &b, Abstraction &a)
      : options_(o), binding_(b), abstraction_(a) {}

  /// The slots of one graph's plan, placed; `ops` is the number of op steps (positions).
  Result<Placed> place(const BufferPlan &plan, bool main, int depth) {
    if (depth > 64) return makeError("subgraphs nested deeper than 64");
    // Op positions of steps: a step that is not an op takes the next op's position.
    std::vector<size_t> pos(plan.steps.size(), 0);
    size_t ops = 0;
    for (size_t i = 0; i < plan.steps.size(); ++i)
      if (plan.steps[i].kind == StepKind::Op) ++ops;
    {
      size_t seen = 0;
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        pos[i] = std::min(seen, ops ? ops - 1 : 0);
        if (plan.steps[i].kind == StepKind::Op) ++seen;
      }
    }
    const size_t last = ops ? ops - 1 : 0;
    Placed out;
    // Which buffers own memory here, and each group's lifetime (views and in-place outputs
    // share their root's slot).
    std::vector<std::optional<size_t>> slotOf(plan.buffers.size());
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
    // A slot holds every tensor that shares it: a view's or an in-place output's size is its
    // root's where the model is valid, but the expressions may differ elsewhere in the domain
    // (a broadcast the model only runs with equal dims), so the slot takes the largest.
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
    // Bodies: each one's arena, live during its op's step.
    for (size_t i = 0; i < plan.steps.size(); ++i)
      for (const auto &[name, body] : plan.steps[i].bodies) {
        SF_ASSIGN(Placed inner, place(body, false, depth + 1));
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
    size_t owners = out.slots.size();
    // The placement, at the reference.
    std::vector<Item> items(owners);
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
    std::vector<int64_t> at = placeGreedy(items, options_.align, ops);
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
    // The lower bound: the bytes live at each step, the largest. Only the steps where a maximal
    // set of slots is live need a sum: where a slot ends after another began since the last such
    // step (the maximal cliques of an interval graph).
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
    // Tensors that share a slot: listed with their own size and lifetime, at their root's offset.
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
    return out;
  }

private:
  /// A size as the plan holds it: an expression of named symbols, else (a size that depends on
  /// the data with no name, or that has no expression) its upper bound, which every run fits.
  Dimension sized(const Dimension &bytes) {
    if (bytes.isStatic() || (bytes.expr() && !bytes.expr()->hasAnonymous))
      return abstraction_.apply(bytes);
    if (bytes.hasUpperBound()) return Dimension(bytes.maxLength());
    return bytes; // no bound: the binding reports it
  }

  const PlanOptions &options_;
  Binding &binding_;
  Abstraction &abstraction_;
};

/// Bytes an op step allocates and frees (at the reference), for the memory-aware order.
struct NodeBytes {
  int64_t out = 0;
};

/// An execution order that lowers the live bytes: list scheduling that runs next, among the
/// nodes whose inputs are ready, the one that adds the fewest live bytes (its outputs' bytes
/// minus the bytes of the inputs it is the last reader of), ties in the model's order.
Result<std::vector<uint32_t>> memoryOrder(const Graph &g, Binding &binding) {
  size_t n = g.nodes.size();
  std::vector<int64_t> bytes(n, 0); // per node: its outputs' bytes
  std::vector<size_t> pending(n, 0);
  std::vector<std::vector<uint32_t>> users(n);
  std::unordered_map<const Fact *, int64_t> remaining; // readers left per tensor
  for (const Node &nd : g.nodes) {
    if (nd.removed) continue;
    for (const Outlet &o : nd.outputs) {
      size_t size = o.fact.type == ElementType::Undefined ? 0 : elementSize(o.fact.type);
      auto count = o.fact.shape.elementCount();
      int64_t v = 0;
      if (count.ok() && size) {
        auto b = *count * Dimension(int64_t(size));
        if (b.ok()) {
          auto at = binding.at(*b, o.name);
          if (at.ok()) v = *at;
        }
      }
      bytes[nd.id] += v;
    }
    std::set<uint32_t> producers;
    for (OutletId in : nd.inputs)
      if (g.contains(in)) {
        producers.insert(in.node);
        ++remaining[&g.fact(in)];
      }
    pending[nd.id] = producers.size();
    for (uint32_t p : producers)
      users[p].push_back(nd.id);
  }
  auto freed = [&](const Node &nd) {
    int64_t f = 0;
    std::set<const Fact *> seen;
    for (OutletId in : nd.inputs) {
      if (!g.contains(in)) continue;
      const Fact *fact = &g.fact(in);
      if (!seen.insert(fact).second) continue;
      const Node &p = g.nodes[in.node];
      if (p.isParameter() || p.isConstant()) continue;
      int64_t uses = 0;
      for (OutletId again : nd.inputs)
        uses += g.contains(again) && &g.fact(again) == fact;
      if (remaining[fact] == uses) {
        size_t size = fact->type == ElementType::Undefined ? 0 : elementSize(fact->type);
        auto count = fact->shape.elementCount();
        if (count.ok() && size) {
          auto b = *count * Dimension(int64_t(size));
          if (b.ok())
            if (auto at = binding.at(*b, "a tensor"); at.ok()) f += *at;
        }
      }
    }
    return f;
  };
  std::set<uint32_t> ready;
  for (const Node &nd : g.nodes)
    if (!nd.removed && pending[nd.id] == 0) ready.insert(nd.id);
  std::vector<uint32_t> order;
  while (!ready.empty()) {
    uint32_t best = *ready.begin();
    int64_t bestScore = 0;
    bool first = true;
    for (uint32_t id : ready) {
      const Node &nd = g.nodes[id];
      // Parameters and constants first: they cost nothing.
      int64_t score = nd.isParameter() || nd.isConstant() ? INT64_MIN : bytes[id] - freed(nd);
      if (first || score < bestScore) {
        best = id;
        bestScore = score;
        first = false;
      }
    }
    ready.erase(best);
    order.push_back(best);
    const Node &nd = g.nodes[best];
    for (OutletId in : nd.inputs)
      if (g.contains(in)) --remaining[&g.fact(in)];
    for (uint32_t u : users[best])
      if (--pending[u] == 0) ready.insert(u);
  }
  size_t live = 0;
  for (const Node &nd : g.nodes)
    live += !nd.removed;
  if (order.size() != live) return makeError("the graph has a cycle: no order runs every node");
  return order;
}

struct Planned {
  size_t bounded = 0;
  ShapeProgram program;
  BufferPlan buffers;
  Placed placed;
  std::vector<uint32_t> opIds;
};

Result<Planned> planIn(const Graph &g, const std::vector<uint32_t> &order,
                       const PlanOptions &options, Binding &binding, Abstraction &abstraction) {
  Planned p;
  tBounded = 0;
  SF_ASSIGN(p.program, lowerShapes(g, &order));
  SF_ASSIGN(p.buffers, planBuffers(p.program));
  Planner planner(options, binding, abstraction);
  SF_ASSIGN(p.placed, planner.place(p.buffers, true, 0));
  for (const Step &s : p.buffers.steps)
    if (s.kind == StepKind::Op) p.opIds.push_back(s.node);
  p.bounded = tBounded;
  return p;
}

} // namespace

namespace {

Result<MemoryPlan> planAt(const Graph &g, const PlanOptions &options);

/// A plan's peak over the live-bytes lower bound of its order, at a binding of the named symbols
/// (the others at their upper bounds). None where it does not evaluate.
std::optional<double> ratioAt(const MemoryPlan &p, const Graph &g,
                              const std::map<std::string, int64_t> &values) {
  (void)g;
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

/// The named symbols the plan's sizes use, with their ranges.
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

} // namespace

Result<MemoryPlan> planMemory(const Graph &g, const PlanOptions &options) {
  if (options.align <= 0 || (options.align & (options.align - 1)) != 0)
    return errorf("the alignment must be a power of two, not {}", options.align);
  SF_ASSIGN(MemoryPlan best, planAt(g, options));
  if (!best.symbolic || !options.reference.empty()) return best;
  // Decided at the upper bounds, a plan is as good as the lower bound there; at the small end
  // of the domain its order of slots may be worse. Where it is more than 5% above the lower
  // bound at the lower or middle binding, plans decided there are tried too, and the one whose
  // worst ratio over the three bindings is least is kept.
  ExprScope scope = g.enter();
  std::map<std::string, Interval> named = namedSymbols(best);
  if (named.empty()) return best;
  std::map<std::string, int64_t> lo, mid, hi;
  for (const auto &[name, r] : named) {
    lo[name] = r.lo;
    mid[name] = r.lo + (r.hi - r.lo) / 2;
    hi[name] = r.hi;
  }
  auto worst = [&](const MemoryPlan &p) {
    double w = 1;
    for (const auto *b : {&lo, &mid, &hi}) {
      auto r = ratioAt(p, g, *b);
      w = std::max(w, r ? *r : 1e9);
    }
    return w;
  };
  double bestWorst = worst(best);
  if (bestWorst <= 1.05) return best;
  for (const auto *b : {&mid, &lo}) {
    PlanOptions o = options;
    o.reference = *b;
    auto p = planAt(g, o);
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

Result<MemoryPlan> planAt(const Graph &g, const PlanOptions &options) {
  ExprScope scope = g.enter();
  // Offsets are maxima of sums of sizes, made once per plan: larger than inference's limits.
  ExprLimitScope limits(1u << 16, 4096);
  Abstraction abstraction(g);
  Binding binding(abstraction, options.reference);
  SF_ASSIGN(std::vector<uint32_t> modelOrder, g.topologicalOrder());
  SF_ASSIGN(Planned model, planIn(g, modelOrder, options, binding, abstraction));
  Planned chosen = std::move(model);
  Dimension modelBound = chosen.placed.lowerBound;
  if (options.order == OrderPolicy::Memory) {
    SF_ASSIGN(std::vector<uint32_t> order, memoryOrder(g, binding));
    SF_ASSIGN(Planned other, planIn(g, order, options, binding, abstraction));
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
