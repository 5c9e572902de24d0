// Random expression trees over a few bounded symbols, built into canonical expressions and
// evaluated naively (plain checked integer math on the tree): the oracle of the algebra's
// property tests (tests/dim/property_test.cpp) and of its fuzz harness (tests/fuzz/fuzz_expr.cpp).
// `Source` is anything with `between(lo, hi)` (inclusive) and `chance(percent)`.
#pragma once

#include "shapeflow/dim/expr.h"
#include "shapeflow/dim/symbol_table.h"
#include "shapeflow/support/checked.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sf::test {

/// Values of symbols.
using Point = std::map<SymbolId, int64_t>;

struct Tree {
  enum Op { Const, Sym, Add, Sub, Mul, FloorDiv, Mod, Min, Max } op;
  int64_t value = 0; // Const: the value; FloorDiv/Mod: the divisor
  SymbolId sym = 0;
  std::shared_ptr<Tree> l, r;
};
using TreeP = std::shared_ptr<Tree>;

struct ExprWorld {
  SymbolTable table;
  std::vector<SymbolId> symbols;
  ExprWorld() {
    symbols.push_back(table.named("A", {0, 5}));
    symbols.push_back(table.named("B", {1, 4}));
    symbols.push_back(table.named("C", {2, 7}));
    symbols.push_back(table.named("D", {0, 3}));
    symbols.push_back(table.named("E"));
  }

  template <class Source> TreeP random(Source &rng, int depth) {
    auto t = std::make_shared<Tree>();
    if (depth == 0 || rng.chance(25)) {
      if (rng.chance(35)) {
        t->op = Tree::Const;
        t->value = rng.between(-4, 9);
      } else {
        t->op = Tree::Sym;
        t->sym = symbols[size_t(rng.between(0, int64_t(symbols.size()) - 1))];
      }
      return t;
    }
    t->op = Tree::Op(rng.between(Tree::Add, Tree::Max));
    t->l = random(rng, depth - 1);
    if (t->op == Tree::FloorDiv || t->op == Tree::Mod)
      t->value = rng.between(1, 5);
    else
      t->r = random(rng, depth - 1);
    return t;
  }

  /// The same tree with the operands of every commutative op swapped.
  static TreeP mirror(const TreeP &t) {
    if (!t->l) return t;
    auto m = std::make_shared<Tree>(*t);
    m->l = mirror(t->l);
    m->r = t->r ? mirror(t->r) : nullptr;
    if (m->r &&
        (t->op == Tree::Add || t->op == Tree::Mul || t->op == Tree::Min || t->op == Tree::Max))
      std::swap(m->l, m->r);
    return m;
  }

  static Result<Expr> build(const TreeP &t) {
    switch (t->op) {
    case Tree::Const:
      return constant(t->value);
    case Tree::Sym:
      return symbol(t->sym);
    default:
      break;
    }
    SF_ASSIGN(Expr l, build(t->l));
    switch (t->op) {
    case Tree::FloorDiv:
      return floorDiv(l, t->value);
    case Tree::Mod:
      return mod(l, t->value);
    default:
      break;
    }
    SF_ASSIGN(Expr r, build(t->r));
    switch (t->op) {
    case Tree::Add:
      return add(l, r);
    case Tree::Sub:
      return sub(l, r);
    case Tree::Mul:
      return mul(l, r);
    case Tree::Min:
      return min(l, r);
    case Tree::Max:
      return max(l, r);
    default:
      return makeError("bad tree");
    }
  }

  /// Plain checked integer math on the tree itself.
  static std::optional<int64_t> naive(const TreeP &t, const Point &p) {
    switch (t->op) {
    case Tree::Const:
      return t->value;
    case Tree::Sym:
      return p.at(t->sym);
    default:
      break;
    }
    auto l = naive(t->l, p);
    if (!l) return std::nullopt;
    if (t->op == Tree::FloorDiv) return checkedFloorDiv(*l, t->value);
    if (t->op == Tree::Mod) return checkedMod(*l, t->value);
    auto r = naive(t->r, p);
    if (!r) return std::nullopt;
    switch (t->op) {
    case Tree::Add:
      return checkedAdd(*l, *r);
    case Tree::Sub:
      return checkedSub(*l, *r);
    case Tree::Mul:
      return checkedMul(*l, *r);
    case Tree::Min:
      return std::min(*l, *r);
    case Tree::Max:
      return std::max(*l, *r);
    default:
      return std::nullopt;
    }
  }

  static std::string print(const TreeP &t) {
    switch (t->op) {
    case Tree::Const:
      return std::to_string(t->value);
    case Tree::Sym:
      return symbolInfo(t->sym).name;
    case Tree::FloorDiv:
      return "(" + print(t->l) + ")//" + std::to_string(t->value);
    case Tree::Mod:
      return "(" + print(t->l) + ") % " + std::to_string(t->value);
    case Tree::Min:
      return "min(" + print(t->l) + ", " + print(t->r) + ")";
    case Tree::Max:
      return "max(" + print(t->l) + ", " + print(t->r) + ")";
    default:
      break;
    }
    const char *op = t->op == Tree::Add ? " + " : t->op == Tree::Sub ? " - " : "*";
    return "(" + print(t->l) + op + print(t->r) + ")";
  }

  template <class Source> Point randomPoint(Source &rng) {
    Point p;
    for (SymbolId s : symbols) {
      Interval r = symbolInfo(s).range;
      p[s] = rng.between(r.lo, std::min(r.hi, std::max(r.lo, int64_t(12))));
    }
    return p;
  }
};

} // namespace sf::test
