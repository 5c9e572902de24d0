// Shared helpers for op rules.
#include "shapeflow/ops/helpers.h"

#include <set>

namespace sf {

Result<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return errorf("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

Result<std::vector<int64_t>> normalizeAxes(const std::vector<int64_t> &axes, int64_t rank) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    SF_ASSIGN(int64_t n, normalizeAxis(a, rank));
    if (!seen.insert(n).second) return errorf("axis {} is repeated", a);
    out.push_back(n);
  }
  return out;
}

std::optional<std::vector<int64_t>> constInts(const Fact &f, size_t budget) {
  // The value first: a small integer constant's elements were decoded once, into its fact.
  if (f.value && f.value->size() <= budget) {
    std::vector<int64_t> out;
    out.reserve(f.value->size());
    for (const auto &d : *f.value) {
      if (!d.isStatic()) break;
      out.push_back(d.length());
    }
    if (out.size() == f.value->size()) return out;
  }
  if (f.constant) {
    auto v = f.constant->toInt64s(budget);
    if (v.ok()) return *v;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> intsFromAttrOrInput(InferContext &ctx, const char *name,
                                                        size_t index, bool useInput) {
  if (useInput) {
    if (!ctx.hasInput(index)) return std::vector<int64_t>{};
    return constInts(ctx.input(index));
  }
  if (!ctx.attrs().has(name)) return std::vector<int64_t>{};
  auto v = ctx.attrs().getInts(name);
  if (!v.ok()) return std::nullopt;
  return *v;
}

std::optional<std::vector<double>> constFloats(const Fact &f, size_t budget) {
  if (f.constant) {
    auto v = f.constant->toDoubles(budget);
    if (v.ok()) return *v;
    return std::nullopt;
  }
  if (auto ints = constInts(f, budget)) return std::vector<double>(ints->begin(), ints->end());
  return std::nullopt;
}

std::optional<FloatPrec> precisionOf(ElementType t) {
  if (t == ElementType::F32) return FloatPrec::F32;
  if (t == ElementType::F64) return FloatPrec::F64;
  return std::nullopt;
}

/// The elements of a rank <= 1 fact as expressions: integer values, integral or symbolic float
/// values, or the numbers of a small float constant.
std::optional<std::vector<Expr>> valueExprs(const Fact &f, size_t budget) {
  std::vector<Expr> out;
  if (auto v = dimValues(f, budget)) {
    for (const Dimension &d : *v) {
      if (!d.expr()) return std::nullopt;
      out.push_back(d.expr());
    }
    return out;
  }
  auto p = precisionOf(f.type);
  if (!p || !f.constant || !f.shape.rankIsStatic() || f.shape.size() > 1) return std::nullopt;
  auto v = constFloats(f, budget);
  if (!v) return std::nullopt;
  for (double x : *v) {
    auto e = floatConstant(x, *p);
    if (!e.ok()) return std::nullopt;
    out.push_back(*e);
  }
  return out;
}

Result<void> expectOneElement(InferContext &ctx, const Fact &f, std::string_view what,
                              OneValue ranks) {
  if (!f.shape.rankIsStatic()) return success();
  for (const Dimension &d : f.shape.dims())
    if (!d.compatible(Dimension(1))) return errorf("{} must hold one element, got {}", what, f);
  int r = int(f.shape.size());
  auto shapeName = [](int n) {
    return n == 0 ? std::string("a scalar (rank 0)") : fmt::format("a tensor of rank {}", n);
  };
  if (r < ranks.minRank || (ranks.maxRank >= 0 && r > ranks.maxRank)) {
    if (ranks.minRank == ranks.maxRank)
      return errorf("{} must be {} of one element, got {}", what, shapeName(ranks.minRank), f);
    return errorf("{} must have rank {} to {}, got {}", what, ranks.minRank, ranks.maxRank, f);
  }
  if (ranks.specRank >= 0 && r != ranks.specRank)
    ctx.warn(fmt::format("{} should be {}, got {}; read as its one element", what,
                         shapeName(ranks.specRank), f));
  return success();
}

std::optional<Dimension> scalarDim(const Fact &f) {
  auto v = dimValues(f, 1);
  if (v && v->size() == 1) return (*v)[0];
  // A one-element tensor of rank >= 2 (a [1,1] size): its number, when known.
  auto n = constInts(f, 1);
  if (n && n->size() == 1) return Dimension::constantValue((*n)[0]);
  return std::nullopt;
}

std::string inputLabel(size_t i, const char *name) {
  return "input " + std::to_string(i) + " (" + name + ")";
}

Result<void> broadcastOnto(InferContext &ctx, PartialShape &target, size_t ic, const char *name) {
  const Fact &c = ctx.input(ic);
  if (!c.shape.rankIsStatic() || !target.rankIsStatic()) return success();
  auto fail = [&] {
    return errorf("{} {} does not broadcast to {}", inputLabel(ic, name), c, target);
  };
  if (c.shape.size() > target.size()) return fail();
  size_t off = target.size() - c.shape.size();
  for (size_t i = 0; i < c.shape.size(); ++i) {
    const Dimension &d = c.shape[i], t = target[off + i];
    if (d.isStatic() && d.length() == 1) continue;
    if (!d.interval().contains(1)) {
      auto m = ctx.mergeDims(d, t);
      if (!m.ok()) return fail();
      target[off + i] = *m;
    } else if (!d.compatible(t)) {
      // d may be 1 but cannot be t: it is 1.
      if (!ctx.mergeDims(d, Dimension(1)).ok()) return fail();
    }
  }
  return success();
}

/// The shape of numpy's matmul of `a` and `b` : K merged, batch dims broadcast,
/// a vector operand promoted to a matrix and its dim removed again.
Result<PartialShape> matmulShape(InferContext &ctx, const Fact &a, const Fact &b, size_t ia,
                                 size_t ib) {
  for (auto [f, i] : {std::pair{&a, ia}, std::pair{&b, ib}})
    if (f->shape.rankIsStatic() && f->shape.size() == 0)
      return errorf("input {} is a scalar, matrix product needs rank >= 1 ({})", i, *f);
  if (!a.shape.rankIsStatic() || !b.shape.rankIsStatic()) return PartialShape::dynamic();
  const std::vector<Dimension> &da = a.shape.dims(), &db = b.shape.dims();
  // A vector operand: a's gets a leading 1 (then dropped), b's a trailing 1 (then dropped).
  bool dropM = da.size() == 1, dropN = db.size() == 1;
  const Dimension &ka = da.back(), &kb = dropN ? db[0] : db[db.size() - 2];
  auto k = ctx.mergeDims(ka, kb);
  if (!k.ok()) return errorf("inner dimensions differ: {} vs {} ({} times {})", ka, kb, a, b);
  size_t na = dropM ? 0 : da.size() - 2, nb = dropN ? 0 : db.size() - 2;
  std::vector<Dimension> out;
  if (na == 0 || nb == 0) {
    // Batch dims on one side only (a matrix of weights): those, as they are.
    const std::vector<Dimension> &from = na ? da : db;
    size_t n = na ? na : nb;
    out.reserve(n + 2);
    for (size_t i = 0; i < n; ++i) out.push_back(ctx.symbols().resolve(from[i]));
  } else {
    PartialShape batchA(std::vector<Dimension>(da.begin(), da.begin() + ptrdiff_t(na)));
    PartialShape batchB(std::vector<Dimension>(db.begin(), db.begin() + ptrdiff_t(nb)));
    auto batch = ctx.broadcast(batchA, batchB);
    if (!batch.ok())
      return errorf("batch dimensions do not broadcast: {} ({} times {})", batch.error().message, a,
                    b);
    out = std::move(batch->dims());
    out.reserve(out.size() + 2);
  }
  if (!dropM) out.push_back(ctx.symbols().resolve(da[da.size() - 2]));
  if (!dropN) out.push_back(ctx.symbols().resolve(db.back()));
  return PartialShape(std::move(out));
}

Result<Dimension> windowOutputDim(const Dimension &in, int64_t kernel, int64_t stride,
                                  int64_t dilation, int64_t padBegin, int64_t padEnd,
                                  bool ceilMode) {
  if (stride <= 0) return errorf("stride must be positive, got {}", stride);
  if (dilation <= 0) return errorf("dilation must be positive, got {}", dilation);
  if (kernel <= 0) return errorf("kernel size must be positive, got {}", kernel);
  auto span = checkedMul(dilation, kernel - 1);
  auto pads = checkedAdd(padBegin, padEnd);
  if (!span || !pads) return makeError("window size overflows int64");
  auto window = checkedAdd(*span, 1);
  auto shift = window ? checkedSub(*pads, *window) : std::nullopt;
  if (!shift) return makeError("window size overflows int64");
  // numerator = in + shift; out = floor|ceil(numerator / stride) + 1
  if (in.isStatic()) {
    auto num = checkedAdd(in.length(), *shift);
    if (!num) return makeError("window size overflows int64");
    if (*num < 0)
      return errorf("window of {} (padded by {}) does not fit input dimension {}", *span + 1, *pads,
                    in);
  }
  // Build from the expression so the result stays symbolic: (in + shift)//stride + 1.
  Dimension num;
  if (in.expr()) {
    SF_ASSIGN(Expr e, add(in.expr(), constant(*shift)));
    num = Dimension(e, add(in.interval(), Interval::point(*shift)));
  } else {
    Interval r = add(in.interval(), Interval::point(*shift));
    num = Dimension::fromInterval({std::max<int64_t>(r.lo, 0), r.hi});
  }
  SF_ASSIGN(Dimension q, ceilMode ? num.ceilDiv(stride) : num.floorDiv(stride));
  return q + Dimension(1);
}

Result<Dimension> sameOutputDim(const Dimension &in, int64_t stride) {
  if (stride <= 0) return errorf("stride must be positive, got {}", stride);
  return in.ceilDiv(stride);
}

PartialShape shapeOfRank(int64_t r) {
  return r < 0 || r > kMaxRank ? PartialShape::dynamic() : PartialShape::dynamic(r);
}

std::string describe(const Fact &f) { return toString(f); }

Fact makeFact(ElementType t, PartialShape s) {
  Fact f;
  f.type = t;
  f.shape = std::move(s);
  return f;
}

Fact makeShapeValueFact(ElementType t, std::vector<Dimension> dims, bool scalar) {
  Fact f;
  f.type = t;
  f.shape = scalar ? PartialShape{} : PartialShape{Dimension(int64_t(dims.size()))};
  f.value = std::move(dims);
  return f;
}

Result<Dimension> productOf(const std::vector<Dimension> &dims) {
  Dimension n(1);
  for (const auto &d : dims) {
    SF_ASSIGN(n, n * d);
  }
  return n;
}

bool sameTensorShape(const PassThroughArgs &a, size_t i) {
  if (i >= a.inputs.size() || !a.inputs[i] || a.outputs.empty()) return false;
  const Fact &in = *a.inputs[i], &out = *a.outputs[0];
  return in.type == out.type && in.type != ElementType::Undefined && in.shape.equalEverywhere(out.shape);
}

PassThroughFn passInput(size_t i, bool whenSole) {
  return [i, whenSole](const PassThroughArgs &a) -> std::optional<size_t> {
    if (whenSole && a.inputs.size() != 1) return std::nullopt;
    return i;
  };
}

PassThroughFn passWhenSameShape() {
  return [](const PassThroughArgs &a) -> std::optional<size_t> {
    return sameTensorShape(a, 0) ? std::optional<size_t>(0) : std::nullopt;
  };
}

PassThroughFn passWhenSameType() {
  return [](const PassThroughArgs &a) -> std::optional<size_t> {
    if (a.inputs.empty() || !a.inputs[0] || a.outputs.empty()) return std::nullopt;
    return a.inputs[0]->type == a.outputs[0]->type && a.inputs[0]->type != ElementType::Undefined
               ? std::optional<size_t>(0)
               : std::nullopt;
  };
}

PassThroughFn passWhenOtherIs(double neutral, bool commutative) {
  return [neutral, commutative](const PassThroughArgs &a) -> std::optional<size_t> {
    if (a.inputs.size() != 2) return std::nullopt;
    auto allNeutral = [&](size_t i) {
      if (!a.inputs[i] || !a.inputs[i]->constant) return false;
      auto v = constFloats(*a.inputs[i]);
      if (!v || v->empty()) return false;
      for (double x : *v)
        if (x != neutral) return false;
      return true;
    };
    if (allNeutral(1) && sameTensorShape(a, 0)) return size_t(0);
    if (commutative && allNeutral(0) && sameTensorShape(a, 1)) return size_t(1);
    return std::nullopt;
  };
}

} // namespace sf
