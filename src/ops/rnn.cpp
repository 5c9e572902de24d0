// Recurrent layers: RNN, GRU, LSTM. One rule for the three (they differ by their gate count:
// 1, 3, 4, and LSTM's cell state and peepholes). Dimensions are read from every input that has
// them and merged: seq_length and batch_size from X (layout 0: [seq, batch, input], layout 1
// (opset 14): [batch, seq, input]), num_directions from `direction` and the weights, hidden_size
// from the attribute or the weights (R is [num_dir, gates*hidden, hidden]).
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"

namespace sf {
namespace {

/// What distinguishes the three cells for the rule: RNN has 1 gate, GRU 3, LSTM 4 and a cell
/// state (input 6 and output 2) and peepholes (input 7).
struct Cell {
  int64_t gates;
  bool lstm;
};

/// Merges the dims of one input, when its rank is known, with the expected ones (an expected dim
/// may be unknown); the error names the input and both shapes.
class DimChecker {
public:
  explicit DimChecker(InferContext &ctx) : ctx_(ctx) {}

  Result<void> check(size_t i, const char *name, std::vector<Dimension *> dims) {
    if (!ctx_.hasInput(i)) return success();
    const Fact &f = ctx_.input(i);
    if (!f.shape.rankIsStatic()) return success();
    if (f.shape.size() != dims.size())
      return errorf("input {} ({}) has rank {}, expected {} ({})", int64_t(i), name,
                    int64_t(f.shape.size()), int64_t(dims.size()), f);
    for (size_t k = 0; k < dims.size(); ++k) {
      auto m = ctx_.mergeDims(*dims[k], f.shape[k]);
      if (!m.ok())
        return errorf("input {} ({}) has {} at axis {}, expected {} ({})", int64_t(i), name,
                      f.shape[k], int64_t(k), dims[k]->toString(), f);
      *dims[k] = *m;
    }
    return success();
  }

private:
  InferContext &ctx_;
};

/// The number of directions the `direction` attribute names.
Result<int64_t> directionCount(InferContext &ctx) {
  SF_ASSIGN(std::string direction, ctx.attrs().getString("direction", "forward"));
  if (direction == "forward" || direction == "reverse") return int64_t(1);
  if (direction == "bidirectional") return int64_t(2);
  return errorf("direction '{}' is not one of forward, reverse, bidirectional", direction);
}

/// The `layout` attribute (opset 14), 0 before it.
Result<int64_t> recurrentLayout(InferContext &ctx) {
  int64_t layout = 0;
  if (ctx.opset() == 0 || ctx.opset() >= 14) {
    SF_ASSIGN(layout, ctx.attrs().getInt("layout", 0));
  }
  if (layout != 0 && layout != 1) return errorf("layout must be 0 or 1, got {}", layout);
  return layout;
}

/// Element type: every float input shares X's; sequence_lens is i32.
Result<ElementType> recurrentType(InferContext &ctx) {
  ElementType t = ElementType::Undefined;
  for (size_t i : {0, 1, 2, 3, 5, 6, 7}) {
    if (!ctx.hasInput(i)) continue;
    ElementType ti = ctx.input(i).type;
    if (ti == ElementType::Undefined) continue;
    if (t != ElementType::Undefined && ti != t)
      return errorf("input {} is {}, expected element type {} like X", int64_t(i), ctx.input(i),
                    shortName(t));
    t = ti;
  }
  if (ctx.hasInput(4)) {
    ElementType tl = ctx.input(4).type;
    if (tl != ElementType::Undefined && tl != ElementType::I32)
      return errorf("sequence_lens (input 4) must be i32, got {}", ctx.input(4));
  }
  return t;
}

/// The hidden size from the attribute, else from R's last axis (unknown when neither says).
Result<Dimension> hiddenSize(InferContext &ctx) {
  if (ctx.attrs().has("hidden_size")) {
    SF_ASSIGN(int64_t h, ctx.attrs().getInt("hidden_size"));
    if (h <= 0) return errorf("hidden_size must be positive, got {}", h);
    return Dimension(h);
  }
  if (ctx.hasInput(2) && ctx.input(2).shape.rankIsStatic() && ctx.input(2).shape.size() == 3)
    return ctx.input(2).shape[2];
  return Dimension();
}

Result<Facts> recurrentWith(InferContext &ctx, Cell cell) {
  int64_t gates = cell.gates;
  SF_ASSIGN(int64_t numDir, directionCount(ctx));
  SF_ASSIGN(int64_t layout, recurrentLayout(ctx));
  SF_ASSIGN(ElementType t, recurrentType(ctx));

  Dimension seq, batch, input;
  Dimension dir(numDir);
  SF_ASSIGN(Dimension hidden, hiddenSize(ctx));

  DimChecker c(ctx);
  if (layout == 0)
    SF_TRY(c.check(0, "X", {&seq, &batch, &input}));
  else
    SF_TRY(c.check(0, "X", {&batch, &seq, &input}));
  // W: [num_dir, gates*hidden, input]; R: [num_dir, gates*hidden, hidden].
  SF_ASSIGN(Dimension gh, Dimension(gates) * hidden);
  SF_TRY(c.check(1, "W", {&dir, &gh, &input}));
  SF_TRY(c.check(2, "R", {&dir, &gh, &hidden}));
  SF_ASSIGN(Dimension bias, Dimension(2 * gates) * hidden);
  SF_TRY(c.check(3, "B", {&dir, &bias}));
  SF_TRY(c.check(4, "sequence_lens", {&batch}));
  const char *stateNames[] = {"initial_h", "initial_c"};
  for (size_t i = 5; i <= (cell.lstm ? 6u : 5u); ++i) {
    if (layout == 0)
      SF_TRY(c.check(i, stateNames[i - 5], {&dir, &batch, &hidden}));
    else
      SF_TRY(c.check(i, stateNames[i - 5], {&batch, &dir, &hidden}));
  }
  if (cell.lstm) {
    SF_ASSIGN(Dimension peep, Dimension(3) * hidden);
    SF_TRY(c.check(7, "P", {&dir, &peep}));
  }
  // W's rows (and B's) are gates*hidden: they tell the hidden size when nothing else does.
  for (const Dimension *rows : {&gh, &bias}) {
    if (hidden.isStatic() || !rows->isStatic()) continue;
    int64_t per = rows == &gh ? gates : 2 * gates;
    size_t i = rows == &gh ? 1 : 3;
    if (rows->length() % per != 0)
      return errorf("{} (input {}) has {} rows, not a multiple of {} ({})", i == 1 ? "W" : "B",
                    int64_t(i), rows->length(), per, ctx.input(i));
    SF_ASSIGN(hidden, ctx.mergeDims(hidden, Dimension(rows->length() / per)));
  }
  // What later inputs taught the symbol table reaches the dims read earlier.
  const SymbolTable &sy = ctx.symbols();
  seq = sy.resolve(seq), batch = sy.resolve(batch), hidden = sy.resolve(hidden);

  PartialShape y = layout == 0 ? PartialShape{seq, dir, batch, hidden}
                               : PartialShape{batch, seq, dir, hidden};
  PartialShape state = layout == 0 ? PartialShape{dir, batch, hidden}
                                   : PartialShape{batch, dir, hidden};
  Facts out{makeFact(t, y), makeFact(t, state)};
  if (cell.lstm) out.push_back(makeFact(t, state));
  return out;
}

InferFn inferRecurrent(Cell cell) {
  return [cell](InferContext &ctx) { return recurrentWith(ctx, cell); };
}

/// A recurrent layer, per time step and batch row: the gate products W x + R h are
/// dir * gates * hidden * (input + hidden) MACs; the biases two adds per gate unit, the gates'
/// activations one special function each; the state update per hidden unit 3 multiplies, an
/// add and a tanh (LSTM: c = f*c + i*g, h = o*tanh(c)) or 3 multiplies and 2 adds (GRU).
CostFn costRecurrent(Cell cell) {
  return [cell](const CostContext &ctx) -> Result<OpCost> {
    OpCost c;
    const PartialShape &x = ctx.input(0).shape;
    Dimension steps = Dimension::dynamic();
    if (x.rankIsStatic() && x.size() == 3) {
      SF_ASSIGN(steps, times(x[0], x[1])); // seq * batch, in either layout
    }
    SF_ASSIGN(Dimension perStep, elementsOf(ctx.input(1)) + elementsOf(ctx.input(2)));
    SF_ASSIGN(Dimension macs, times(steps, perStep));
    SF_TRY(c.addMacs(macs));
    // Gate units per step: W's first two dims (dir, gates * hidden).
    const PartialShape &w = ctx.input(1).shape;
    Dimension units = Dimension::dynamic();
    if (w.rankIsStatic() && w.size() == 3) { SF_ASSIGN(units, times(w[0], w[1])); }
    SF_ASSIGN(Dimension gateOps, times(steps, units));
    if (ctx.hasInput(3)) {
      SF_ASSIGN(Dimension biasAdds, times(gateOps, Dimension(2)));
      SF_TRY(c.add(FlopKind::Add, biasAdds));
    }
    SF_TRY(c.add(FlopKind::Special, gateOps));
    if (cell.gates > 1) {
      SF_ASSIGN(Dimension hiddenOps, gateOps.floorDiv(cell.gates));
      SF_ASSIGN(Dimension muls, times(hiddenOps, Dimension(3)));
      SF_TRY(c.add(FlopKind::Mul, muls));
      SF_ASSIGN(Dimension adds, times(hiddenOps, Dimension(cell.lstm ? 1 : 2)));
      SF_TRY(c.add(FlopKind::Add, adds));
      if (cell.lstm) SF_TRY(c.add(FlopKind::Special, hiddenOps));
    }
    return c;
  };
}

} // namespace

void registerRnnOps(OpRegistry &r) {
  const Cell rnn{.gates = 1, .lstm = false}, gru{.gates = 3, .lstm = false},
      lstm{.gates = 4, .lstm = true};
  r.add({.name = "RNN", .infer = inferRecurrent(rnn), .refine = refineRecurrent(), .cost = costRecurrent(rnn)});
  r.add({.name = "GRU", .infer = inferRecurrent(gru), .refine = refineRecurrent(), .cost = costRecurrent(gru)});
  r.add({.name = "LSTM", .infer = inferRecurrent(lstm), .refine = refineRecurrent(), .cost = costRecurrent(lstm)});
}

} // namespace sf
