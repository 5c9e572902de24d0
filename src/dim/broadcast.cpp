// Broadcasting rules on partial shapes (see broadcast.h for the dynamic cases).
#include "shapeflow/dim/broadcast.h"

#include "shapeflow/dim/symbol_table.h"

#include <algorithm>
#include <vector>

namespace sf {
namespace {
Error clash(const Dimension &a, const Dimension &b) {
  return makeError("dimensions " + a.toString() + " and " + b.toString() + " cannot be broadcast");
}
bool canBeOne(const Dimension &d) { return d.interval().contains(1); }

/// The dims `e` broadcasts together, when it is a broadcast's value: `max(x, y)*min(x, y, 1)`
/// (0 when any is 0, else their largest), or `max(x, y, ...)` of dims that are each at least 1;
/// else `e` alone. Nested broadcasts are flattened.
void broadcastLeaves(Expr e, std::vector<Expr> &out) {
  auto self = [&] { out.push_back(e); };
  if (e->kind == ExprKind::Max) {
    for (Expr x : e->ops)
      if (x->bounds.lo < 1) return self();
    for (Expr x : e->ops) broadcastLeaves(x, out);
    return;
  }
  if (e->kind != ExprKind::Mul || e->ops.size() != 2) return self();
  Expr mn = e->ops[0], mx = e->ops[1];
  if (mn->kind != ExprKind::Min) std::swap(mn, mx);
  if (mn->kind != ExprKind::Min || mx->kind != ExprKind::Max) return self();
  // The dims: the minimum's (but 1), and the maximum's that are at least 1 (a dim of at least 1
  // drops out of min(..., 1)). They are the broadcast's when the engine writes min(dims, 1)
  // and max(dims) as the two factors (max(x, max(y, 0)) is max(x, y) for a size x).
  std::vector<Expr> dims;
  bool one = false;
  for (Expr x : mn->ops) {
    if (x->kind == ExprKind::Const && x->value == 1 && !one) one = true;
    else dims.push_back(x);
  }
  for (Expr x : mx->ops)
    if (x->bounds.lo >= 1 && std::find(dims.begin(), dims.end(), x) == dims.end()) dims.push_back(x);
  if (!one || dims.empty()) return self();
  Expr top = dims.front(), low = constant(1);
  for (size_t i = 0; i < dims.size(); ++i) {
    auto hi = i ? max(top, dims[i]) : Result<Expr>(top);
    auto lo = min(low, dims[i]);
    if (!hi.ok() || !lo.ok()) return self();
    top = *hi, low = *lo;
  }
  if (top != mx || low != mn) return self();
  for (Expr x : dims) broadcastLeaves(x, out);
}

/// Whether every dim `a` broadcasts together is among those of `b`: then, wherever the two
/// broadcast, the result is `b` (broadcasting is associative, commutative and idempotent).
bool broadcastAbsorbs(const Dimension &b, const Dimension &a) {
  if (!a.expr() || !b.expr()) return false;
  std::vector<Expr> la, lb;
  broadcastLeaves(a.expr(), la), broadcastLeaves(b.expr(), lb);
  for (Expr x : la)
    if (std::find(lb.begin(), lb.end(), x) == lb.end()) return false;
  return true;
}
} // namespace

Result<Dimension> broadcastDim(const Dimension &a, const Dimension &b, SymbolTable *table) {
  if (a.expr() && a.expr() == b.expr()) {
    auto m = Dimension::merge(a, b);
    if (!m) return clash(a, b);
    return *m;
  }
  if (a.isStatic() && a.length() == 1) return b;
  if (b.isStatic() && b.length() == 1) return a;
  if (a.isStatic() || b.isStatic()) {
    const Dimension &c = a.isStatic() ? a : b;
    const Dimension &d = a.isStatic() ? b : a;
    if (d.isStatic() && d.length() != c.length()) return clash(a, b);
    if (!d.interval().contains(c.length()) && !canBeOne(d)) return clash(a, b);
    if (table && !canBeOne(d)) SF_TRY(table->equate(d, c));
    else if (table) table->require(Condition::Broadcast, d, c);
    return c;
  }
  bool a1 = canBeOne(a), b1 = canBeOne(b);
  if (!a1 && !b1) {
    auto m = Dimension::merge(a, b);
    if (!m) return clash(a, b);
    if (table) SF_TRY(table->equate(a, b));
    return *m;
  }
  // One side cannot be 1: the result is that side (the other is 1 or equal to it).
  if (table) table->require(Condition::Broadcast, a, b);
  if (!a1) return a;
  if (!b1) return b;
  // One already broadcasts the other's dims (a mask broadcast against what it made).
  if (broadcastAbsorbs(b, a)) return b;
  if (broadcastAbsorbs(a, b)) return a;
  // Both may be 1. The valid pairs are (1, d), (d, 1) and (d, d), so the result is max(a, b),
  // except that 1 against 0 gives 0: when either may be 0, max(a, b) * min(a, b, 1) is exact.
  SF_ASSIGN(Dimension m, Dimension::max(a, b));
  if (a.minLength() >= 1 && b.minLength() >= 1) return m;
  SF_ASSIGN(Dimension lo, Dimension::min(a, b));
  SF_ASSIGN(lo, Dimension::min(lo, Dimension(1)));
  return m * lo;
}

namespace {
Error shapeClash(const Error &e, size_t axis, const PartialShape &a, const PartialShape &b) {
  return makeError(e.message + " at output axis " + std::to_string(axis) + " (" + a.toString() +
                   " vs " + b.toString() + ")");
}

Result<PartialShape> broadcastNumpy(const PartialShape &a, const PartialShape &b,
                                    SymbolTable *table) {
  if (!a.rankIsStatic() || !b.rankIsStatic()) return PartialShape::dynamic();
  size_t ra = a.size(), rb = b.size(), r = std::max(ra, rb);
  std::vector<Dimension> out(r);
  for (size_t i = 0; i < r; ++i) {
    Dimension da = i < r - ra ? Dimension(1) : a[i - (r - ra)];
    Dimension db = i < r - rb ? Dimension(1) : b[i - (r - rb)];
    auto d = broadcastDim(da, db, table);
    if (!d.ok()) return shapeClash(d.error(), i, a, b);
    out[i] = *d;
  }
  return PartialShape(std::move(out));
}

Result<PartialShape> broadcastPdpd(const PartialShape &a, const PartialShape &b, int64_t axis,
                                   SymbolTable *table) {
  if (!a.rankIsStatic()) return PartialShape::dynamic();
  if (!b.rankIsStatic()) return a;
  int64_t ra = int64_t(a.size()), rb = int64_t(b.size());
  if (rb > ra)
    return makeError("PDPD broadcast needs rank(B) <= rank(A) (" + a.toString() + " vs " +
                     b.toString() + ")");
  if (axis == -1) axis = ra - rb;
  // Trailing 1s of B are ignored when matching B as a subsequence of A, so they may run past
  // the end of A: (3, 1) counts as (3).
  int64_t used = rb;
  while (used > 0 && b[used - 1].isStatic() && b[used - 1].length() == 1) --used;
  if (axis < 0 || axis + used > ra)
    return makeError("PDPD broadcast axis " + std::to_string(axis) + " is out of range for " +
                     a.toString() + " and " + b.toString());
  PartialShape out = a;
  for (int64_t i = 0; i < used; ++i) {
    const Dimension &da = a[axis + i], &db = b[i];
    if (db.isStatic() && db.length() == 1) continue;
    if (da.isStatic() && da.length() == 1 && !(db.isStatic() && db.length() == 1)) {
      if (db.isStatic() || !canBeOne(db))
        return makeError("dimensions " + da.toString() + " and " + db.toString() +
                         " cannot be broadcast at axis " + std::to_string(axis + i) +
                         ": PDPD broadcasts only B onto A (" + a.toString() + " vs " +
                         b.toString() + ")");
      continue;
    }
    if (!da.compatible(db) && !canBeOne(db))
      return makeError("dimensions " + da.toString() + " and " + db.toString() +
                       " cannot be broadcast at axis " + std::to_string(axis + i) + " (" +
                       a.toString() + " vs " + b.toString() + ")");
    if (!canBeOne(db)) {
      auto m = Dimension::merge(da, db);
      if (m) out[axis + i] = *m;
      if (table) SF_TRY(table->equate(da, db));
    }
  }
  return out;
}
} // namespace

Result<PartialShape> broadcastShapes(const PartialShape &a, const PartialShape &b,
                                     BroadcastSpec spec, SymbolTable *table) {
  switch (spec.kind) {
  case BroadcastKind::None: {
    if (a.rankIsStatic() && b.rankIsStatic() && a.size() != b.size())
      return makeError("shapes must be equal without broadcasting: ranks differ (" + a.toString() +
                       " vs " + b.toString() + ")");
    auto m = PartialShape::merge(a, b);
    if (!m) {
      for (size_t i = 0; i < a.size(); ++i)
        if (!a[i].compatible(b[i]))
          return makeError("dimensions " + a[i].toString() + " and " + b[i].toString() +
                           " at axis " + std::to_string(i) +
                           " must be equal without broadcasting (" + a.toString() + " vs " +
                           b.toString() + ")");
      return makeError("shapes must be equal without broadcasting (" + a.toString() + " vs " +
                       b.toString() + ")");
    }
    if (table && a.rankIsStatic() && b.rankIsStatic())
      for (size_t i = 0; i < a.size(); ++i) SF_TRY(table->equate(a[i], b[i]));
    return *m;
  }
  case BroadcastKind::Numpy:
  case BroadcastKind::Bidirectional: return broadcastNumpy(a, b, table);
  case BroadcastKind::Pdpd: return broadcastPdpd(a, b, spec.axis, table);
  }
  return makeError("unknown broadcast kind");
}

} // namespace sf
