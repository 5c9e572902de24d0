// What the static memory plan (lower/memory_plan.h) decides its placement at: derived symbols
// for the float shape math that sizes repeat (Abstraction), and the values every symbol takes at
// the reference binding (Binding).
#pragma once

#include "shapeflow/dim/dimension.h"
#include "shapeflow/dim/expr.h"
#include "shapeflow/ir/graph.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sf::lower {

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

} // namespace sf::lower
