// Naming derived sizes and anonymous input dims for a readable report (report/names.h).
#include "shapeflow/report/names.h"

#include "shapeflow/support/format.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace sf {
namespace {

bool isLeaf(Expr e) { return e->kind == ExprKind::Const || e->kind == ExprKind::Sym; }

/// Every distinct subexpression of `e` (itself included), in a deterministic order (depth
/// first, as the canonical form orders operands): the names chosen must not depend on where
/// the nodes happen to live in memory.
void collect(Expr e, std::unordered_set<Expr> &seen, std::vector<Expr> &out) {
  if (!seen.insert(e).second) return;
  out.push_back(e);
  for (Expr c : e->ops) collect(c, seen, out);
}
std::vector<Expr> subexpressions(Expr e) {
  std::unordered_set<Expr> seen;
  std::vector<Expr> out;
  collect(e, seen, out);
  return out;
}

/// The names `e` prints directly (not those inside another name's definition), in print order;
/// `root` itself is looked into even when named (a definition's right-hand side).
void directNames(Expr e, const PrintNames &names, Expr root, std::vector<Expr> &out) {
  if (e != root && names.exprs.count(e)) {
    out.push_back(e);
    return;
  }
  for (Expr c : e->ops) directNames(c, names, root, out);
}

/// c when `e` is c times `x` (two sums with the same monomials, every coefficient and the
/// constant scaled by the same integer c > 1).
std::optional<int64_t> multipleOf(Expr e, Expr x) {
  if (e->kind != ExprKind::Add || x->kind != ExprKind::Add || e->ops != x->ops || x->coefs.empty()) return std::nullopt;
  if (x->coefs[0] == 0 || e->coefs[0] % x->coefs[0] != 0) return std::nullopt;
  int64_t c = e->coefs[0] / x->coefs[0];
  if (c <= 1) return std::nullopt;
  for (size_t i = 0; i < e->coefs.size(); ++i)
    if (e->coefs[i] != c * x->coefs[i]) return std::nullopt;
  if (e->value != c * x->value) return std::nullopt;
  return c;
}

/// One naming of a graph's derived sizes: the names taken, the dims a report prints (`roots`)
/// and the names chosen so far (placeholders until they are numbered).
struct Namer {
  const Graph &g;
  const NamingOptions &o;
  ReportNames out;
  PrintNames &names = out.print;
  std::set<std::string> taken;
  std::vector<Expr> roots;
  std::unordered_map<Expr, size_t> plainLength;
  PrintNames plain;
  const std::string placeholder = "R00"; // as long as the names it stands for

  Namer(const Graph &graph, const NamingOptions &options) : g(graph), o(options) {
    for (const auto &[name, range] : g.symbols.namedSymbols()) taken.insert(name);
  }

  /// `base`, or `base_2`, `base_3` ... if it is taken; taken from now on.
  std::string fresh(std::string base) {
    std::string name = base;
    for (int k = 2; taken.count(name); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  }

  /// Anonymous input dims: `x_d2`.
  void nameInputDims() {
    for (OutletId in : g.inputs) {
      const Outlet &o2 = g.outlet(in);
      if (!o2.fact.shape.rankIsStatic()) continue;
      for (size_t i = 0; i < o2.fact.shape.size(); ++i) {
        const Dimension &d = o2.fact.shape[i];
        if (!d.expr() || !isSymbol(d.expr()) || !symbolInfo(d.expr()->sym).name.empty()) continue;
        SymbolId s = d.expr()->sym;
        if (names.symbols.count(s)) continue;
        std::string name = fresh(o2.name + "_d" + std::to_string(i));
        names.symbols[s] = name;
        out.inputDims.push_back({name, s});
      }
    }
  }

  /// The dims a report prints, each expression once, in the order they first appear.
  void collectRoots() {
    std::unordered_set<Expr> seen;
    auto add = [&](Expr e) {
      if (e && !isLeaf(e) && !e->isFloat && names.namesAnonymousOf(e) && seen.insert(e).second) roots.push_back(e);
    };
    auto addDim = [&](const Dimension &d) {
      if (!d.isStatic()) add(d.expr());
    };
    if (!o.roots.empty()) {
      for (Expr e : o.roots) add(e);
      return;
    }
    for (const Node &n : g.nodes) {
      if (n.removed) continue;
      for (const Outlet &out2 : n.outputs) {
        if (out2.fact.shape.rankIsStatic())
          for (const Dimension &d : out2.fact.shape.dims()) addDim(d);
        if (out2.fact.value)
          for (const Dimension &d : *out2.fact.value) addDim(d);
      }
    }
  }

  /// A subexpression a name may stand for.
  bool nameable(Expr e) const { return !e->isFloat && !isLeaf(e) && names.namesAnonymousOf(e); }

  /// The length of `e` printed without names for derived sizes.
  size_t lengthOf(Expr e) {
    auto [it, isNew] = plainLength.try_emplace(e, 0);
    if (isNew) it->second = toString(e, plain).size();
    return it->second;
  }

  /// Long subexpressions that two or more dims share.
  void nameShared() {
    plain.symbols = names.symbols;
    std::unordered_map<Expr, size_t> uses;
    std::vector<Expr> order; // first appearance
    for (Expr r : roots) {
      for (Expr e : subexpressions(r))
        if (nameable(e) && uses[e]++ == 0) order.push_back(e);
    }
    // Smallest first, so that a part already named shortens what contains it: `floor(H * ...)`
    // becomes R1, and `floor(H * ...) - 1` then prints as the short `R1 - 1`, not a name.
    std::stable_sort(order.begin(), order.end(), [](Expr a, Expr b) { return a->size < b->size; });
    for (Expr e : order)
      if (uses[e] >= 2 && lengthOf(e) >= o.minLength && toString(e, names).size() >= o.minLength)
        names.exprs[e] = placeholder;
  }

  /// A name printed in one place only stands for nothing shared: inline it again.
  void prune() {
    for (bool changed = true; changed;) {
      changed = false;
      std::unordered_map<Expr, std::set<size_t>> where;
      size_t item = 0;
      for (Expr r : roots) {
        std::vector<Expr> used;
        if (names.exprs.count(r)) used.push_back(r);
        else directNames(r, names, nullptr, used);
        for (Expr u : used) where[u].insert(item);
        ++item;
      }
      for (const auto &[e, name] : names.exprs) {
        std::vector<Expr> used;
        directNames(e, names, e, used);
        for (Expr u : used) where[u].insert(item);
        ++item;
      }
      for (auto it = names.exprs.begin(); it != names.exprs.end();) {
        if (where[it->first].size() < 2) {
          it = names.exprs.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
  }

  /// A dim (or a definition) still too long: its longest part named, until it fits.
  void shorten(Expr item, bool isDefinition) {
    auto text = [&] { return isDefinition ? definitionText(item, names) : toString(item, names); };
    std::vector<Expr> added;
    for (int round = 0; round < 8 && text().size() > o.maxLength; ++round) {
      Expr best = nullptr;
      size_t bestLength = 0, now = text().size();
      for (Expr e : subexpressions(item)) {
        if (e == item || names.exprs.count(e) || !nameable(e)) continue;
        size_t len = toString(e, names).size();
        if (len >= 12 && len < now && (len > bestLength || (len == bestLength && compareExpr(e, best) < 0)))
          best = e, bestLength = len;
      }
      if (!best) break;
      names.exprs[best] = placeholder;
      added.push_back(best);
    }
    if (text().size() <= o.maxLength) return;
    // Naming parts does not bring it under the limit (a sum of many counts): take them back;
    // the dim itself is named and its definition holds the length, once.
    for (Expr e : added) names.exprs.erase(e);
    if (!isDefinition) names.exprs[item] = placeholder;
  }

  /// Dims (then definitions) still too long: name their longest part, until they fit.
  void shortenAll() {
    for (Expr r : roots)
      if (!names.exprs.count(r)) shorten(r, false);
    for (size_t guard = 0; guard < 4; ++guard) {
      std::vector<Expr> defs;
      for (const auto &[e, n] : names.exprs) defs.push_back(e);
      std::sort(defs.begin(), defs.end(), [](Expr a, Expr b) { return compareExpr(a, b) < 0; });
      size_t before = names.exprs.size();
      for (Expr d : defs) shorten(d, true);
      if (names.exprs.size() == before) break;
    }
  }

  /// Numbers in the order a reader meets the names: in the dims, then inside definitions; the
  /// named expressions in that order.
  std::vector<Expr> number() {
    std::vector<Expr> numbered;
    std::unordered_set<Expr> done;
    auto meet = [&](Expr e, Expr root) {
      std::vector<Expr> used;
      if (e != root && names.exprs.count(e)) used.push_back(e);
      else directNames(e, names, root, used);
      for (Expr u : used)
        if (done.insert(u).second) numbered.push_back(u);
    };
    for (Expr r : roots) meet(r, nullptr);
    for (size_t i = 0; i < numbered.size(); ++i) meet(numbered[i], numbered[i]);
    std::vector<Expr> unseen; // names no dim shows (cannot happen after pruning)
    for (const auto &[e, n] : names.exprs)
      if (!done.count(e)) unseen.push_back(e);
    std::sort(unseen.begin(), unseen.end(), [](Expr a, Expr b) { return compareExpr(a, b) < 0; });
    numbered.insert(numbered.end(), unseen.begin(), unseen.end());
    for (size_t i = 0; i < numbered.size(); ++i) names.exprs[numbered[i]] = fresh("R" + std::to_string(i + 1));
    return numbered;
  }

  /// Definitions, each after the ones it uses; a sum that is a multiple of another named sum is
  /// defined as that.
  void define(const std::vector<Expr> &numbered) {
    std::unordered_set<Expr> placed;
    std::function<void(Expr)> place = [&](Expr e) {
      if (placed.count(e)) return;
      placed.insert(e);
      std::vector<Expr> used;
      directNames(e, names, e, used);
      for (Expr u : used) place(u);
      out.definitions.push_back({names.exprs[e], e, definitionText(e, names)});
    };
    for (Expr e : numbered) place(e);
    // A sum that is a multiple of another named sum is defined as that: `R2 = 4*R1`.
    for (auto &def : out.definitions) {
      if (def.expr->kind != ExprKind::Add) continue;
      for (const auto &other : out.definitions) {
        if (&other == &def) break;
        if (auto c = multipleOf(def.expr, other.expr)) {
          def.text = std::to_string(*c) + "*" + other.name;
          break;
        }
      }
    }
  }
};

} // namespace

std::vector<std::string> definitionLines(const ReportNames &names, size_t maxText) {
  std::vector<std::string> lines;
  for (const auto &d : names.definitions) {
    std::string text = d.text;
    if (text.size() > maxText && (d.expr->kind == ExprKind::Max || d.expr->kind == ExprKind::Min))
      text = fmt::format("the {} of {} expressions, {} characters in all (--json)",
                         d.expr->kind == ExprKind::Max ? "largest" : "smallest", d.expr->ops.size(), text.size());
    else if (text.size() > maxText)
      text = fmt::format("an expression of {} characters (--json)", text.size());
    lines.push_back(d.name + " = " + text);
  }
  return lines;
}

NamedTexts nameForPrinting(const Graph &g, const std::vector<Dimension> &dims, size_t maxLength) {
  NamingOptions naming;
  naming.maxLength = maxLength;
  for (const Dimension &d : dims)
    if (!d.isStatic() && d.expr()) naming.roots.push_back(d.expr());
  ReportNames names = nameDerivedSizes(g, naming);
  return NamedTexts{std::move(names.print), definitionLines(names)};
}

std::string NamedTexts::text(const Dimension &d) const {
  if (d.isStatic()) return std::to_string(d.length());
  return d.expr() ? toString(d.expr(), print) : d.toString();
}

ReportNames nameDerivedSizes(const Graph &g, const NamingOptions &o) {
  Namer namer(g, o);
  namer.nameInputDims();
  namer.collectRoots();
  if (namer.roots.empty()) return std::move(namer.out);
  namer.nameShared();
  namer.prune();
  namer.shortenAll();
  std::vector<Expr> numbered = namer.number();
  namer.define(numbered);
  return std::move(namer.out);
}

} // namespace sf
