// OpCost arithmetic and the cost-function factories shared by the op families (ops/cost.h).
#include "shapeflow/ops/cost.h"

namespace sf {

const char *toString(FlopKind k) {
  switch (k) {
  case FlopKind::Add:
    return "add";
  case FlopKind::Mul:
    return "mul";
  case FlopKind::Div:
    return "div";
  case FlopKind::Special:
    return "special";
  case FlopKind::Compare:
    return "compare";
  case FlopKind::Other:
    return "other";
  }
  return "?";
}

Result<void> OpCost::add(FlopKind k, const Dimension &count) {
  SF_ASSIGN(flops[size_t(k)], flops[size_t(k)] + count);
  return success();
}

Result<void> OpCost::addMacs(const Dimension &count) {
  SF_ASSIGN(macs, macs + count);
  return success();
}

Result<Dimension> OpCost::totalFlops() const {
  Dimension total(0);
  for (const Dimension &d : flops) {
    SF_ASSIGN(total, total + d);
  }
  return total;
}

const Fact &CostContext::input(size_t i) const {
  static const Fact unknown;
  return hasInput(i) ? *inputs_[i] : unknown;
}

const Fact &CostContext::output(size_t i) const {
  static const Fact unknown;
  return i < outputs_.size() && outputs_[i] ? *outputs_[i] : unknown;
}

Dimension elementsOf(const Fact &f) {
  if (!f.shape.rankIsStatic()) return Dimension::dynamic();
  auto n = f.shape.elementCount();
  return n.ok() ? *n : Dimension::dynamic();
}

Result<Dimension> times(const Dimension &a, const Dimension &b) { return a * b; }

Result<Dimension> productOf(const PartialShape &s, size_t from, size_t to) {
  if (!s.rankIsStatic()) return Dimension::dynamic();
  Dimension p(1);
  for (size_t i = from; i < to && i < s.size(); ++i) {
    SF_ASSIGN(p, p * s[i]);
  }
  return p;
}

Result<OpCost> costNone(const CostContext &) { return OpCost{}; }

CostFn costPerOutput(FlopKind k, int64_t n) {
  return [k, n](const CostContext &ctx) -> Result<OpCost> {
    OpCost c;
    SF_ASSIGN(Dimension count, times(elementsOf(ctx.output(0)), Dimension(n)));
    SF_TRY(c.add(k, count));
    return c;
  };
}

CostFn costPerInput(FlopKind k, int64_t n, size_t index) {
  return [k, n, index](const CostContext &ctx) -> Result<OpCost> {
    OpCost c;
    SF_ASSIGN(Dimension count, times(elementsOf(ctx.input(index)), Dimension(n)));
    SF_TRY(c.add(k, count));
    return c;
  };
}

CostFn costMacsPerOutput(int64_t n) {
  return [n](const CostContext &ctx) -> Result<OpCost> {
    OpCost c;
    SF_ASSIGN(Dimension count, times(elementsOf(ctx.output(0)), Dimension(n)));
    SF_TRY(c.addMacs(count));
    return c;
  };
}

CostFn costVariadic(FlopKind k, int64_t extra, FlopKind extraKind) {
  return [k, extra, extraKind](const CostContext &ctx) -> Result<OpCost> {
    OpCost c;
    Dimension out = elementsOf(ctx.output(0));
    int64_t ops = ctx.numInputs() > 1 ? int64_t(ctx.numInputs()) - 1 : 0;
    SF_ASSIGN(Dimension n, times(out, Dimension(ops)));
    SF_TRY(c.add(k, n));
    if (extra) {
      SF_ASSIGN(Dimension e, times(out, Dimension(extra)));
      SF_TRY(c.add(extraKind, e));
    }
    return c;
  };
}

CostFn costIfInput(size_t index, CostFn cost) {
  return [index, cost](const CostContext &ctx) -> Result<OpCost> {
    if (!ctx.hasInput(index)) return OpCost{};
    return cost(ctx);
  };
}

CostFn costSum(std::vector<CostFn> parts) {
  return [parts](const CostContext &ctx) -> Result<OpCost> {
    OpCost total;
    for (const CostFn &p : parts) {
      SF_ASSIGN(OpCost c, p(ctx));
      SF_TRY(total.addMacs(c.macs));
      for (size_t k = 0; k < kFlopKinds; ++k)
        SF_TRY(total.add(FlopKind(k), c.flops[k]));
    }
    return total;
  };
}

} // namespace sf
