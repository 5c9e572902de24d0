// Control flow: If, Loop, Scan. Their bodies are graph-valued attributes; a value a body reads
// from an enclosing graph is an extra input of the owning node after its declared ones, and a
// Parameter with attribute "captured" inside the body (graph.h), so the number of declared inputs
// follows from the body's formal inputs.
//
// Soundness first: If joins the facts of its two branches by their hull (equal dims kept, other
// dims the interval union, different ranks an unknown rank), unless the condition is a known
// constant. Loop and Scan iterate body inference to a fixed point of the loop-carried facts
// (each round joins the body's outputs into them), relaxing what keeps changing after a few
// rounds. Bodies are inferred through the run's memo (InferContext::inferBody) so that nested
// loops cost a body inference per distinct input facts, not one per enclosing round.
#include "shapeflow/ir/graph.h"
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include <algorithm>
#include <map>

namespace sf {

Result<const Graph *> bodyAttr(InferContext &ctx, const std::string &name) {
  SF_ASSIGN(GraphPtr g, ctx.attrs().getGraph(name));
  if (!g) return errorf("attribute '{}' holds no graph", name);
  return static_cast<const Graph *>(g.get());
}

namespace {


std::string str(size_t v) { return std::to_string(v); }

/// Name of a body's formal input i (for messages).
std::string inputName(const Graph &body, size_t i) {
  size_t k = 0;
  for (const OutletId &in : body.inputs) {
    if (!body.contains(in) || body.nodes[in.node].isCaptured()) continue;
    if (k++ == i) return body.outlet(in).name;
  }
  return "#" + str(i);
}

/// Requires one element of the given type (If's and Loop's condition, Loop's M: "a single
/// element", any rank), when known.
Result<void> requireOneValue(InferContext &ctx, const Fact &f, ElementType t, const char *what) {
  if (f.type != ElementType::Undefined && f.type != t)
    return errorf("{} must be {}, got {}", what, shortName(t), f);
  return expectOneElement(ctx, f, what, {});
}

/// `carried` after a round that did not settle: what changed (between `before` and `after`) is
/// relaxed to unknown; `all` relaxes every shape and value. The element type is kept: the
/// rounds never change a known one (hullFacts fails instead).
Fact relax(const Fact &before, const Fact &after, bool all) {
  Fact r = after;
  if (all || !before.shape.rankIsStatic() || !after.shape.rankIsStatic() ||
      before.shape.size() != after.shape.size()) {
    r.shape = PartialShape::dynamic();
  } else {
    for (size_t i = 0; i < r.shape.size(); ++i)
      if (before.shape[i] != after.shape[i]) r.shape[i] = Dimension::dynamic();
  }
  if (all || before.value != after.value) r.value.reset();
  if (all || !(before.constant == after.constant ||
               (before.constant && after.constant && *before.constant == *after.constant)))
    r.constant.reset();
  return r;
}

// Rounds of plain joins before what changes is relaxed, and the round after which everything is.
constexpr int kJoinRounds = 3;
constexpr int kMaxRounds = 8;

/// Infers `body` with formals = prefix + carried + suffix; body output j feeds carried[j] (when
/// feeds[j]) for the next round, joined with what it held. Repeats until the carried facts stop
/// changing; returns the body's outputs for the final (covering) carried facts.
Result<Facts> fixedPoint(InferContext &ctx, const Graph &body, const Facts &prefix, Facts &carried,
                         const Facts &suffix, const std::vector<bool> &feeds, size_t nOutputs) {
  for (int round = 0;; ++round) {
    Facts formals = prefix;
    formals.insert(formals.end(), carried.begin(), carried.end());
    formals.insert(formals.end(), suffix.begin(), suffix.end());
    SF_ASSIGN(Facts out, ctx.inferBody(body, formals, nOutputs));
    Facts next = carried;
    for (size_t j = 0; j < carried.size(); ++j) {
      if (!feeds[j]) continue;
      auto h = hull(carried[j], out[j]);
      if (!h.ok())
        return errorf("body input '{}' is {} but the body returns {} for it (output {})",
                      inputName(body, prefix.size() + j), carried[j], out[j], j);
      next[j] = std::move(*h);
    }
    if (next == carried) {
      ctx.settle(body, formals);
      return out;
    }
    if (round >= kJoinRounds)
      for (size_t j = 0; j < carried.size(); ++j)
        next[j] = relax(carried[j], next[j], round >= kMaxRounds);
    carried = std::move(next);
  }
}

PartialShape prepend(const Dimension &d, const PartialShape &s) {
  if (!s.rankIsStatic()) return PartialShape::dynamic();
  std::vector<Dimension> dims{d};
  dims.insert(dims.end(), s.dims().begin(), s.dims().end());
  return PartialShape(std::move(dims));
}

PartialShape insertAxis(const PartialShape &s, int64_t axis, const Dimension &d) {
  if (!s.rankIsStatic()) return PartialShape::dynamic();
  std::vector<Dimension> dims = s.dims();
  dims.insert(dims.begin() + axis, d);
  return PartialShape(std::move(dims));
}

PartialShape removeAxis(const PartialShape &s, int64_t axis) {
  if (!s.rankIsStatic()) return PartialShape::dynamic();
  std::vector<Dimension> dims = s.dims();
  dims.erase(dims.begin() + axis);
  return PartialShape(std::move(dims));
}

/// A fact without contents (a loop's element facts describe every iteration, not one).
Fact shapeOnly(const Fact &f) { return makeFact(f.type, f.shape); }

// ---------------------------------------------------------------- Loop induction
/// For each loop-carried value (carried[1 + j]), the shape after `trips` rounds when every dim
/// changes by a constant per round: the body is inferred once with each dim of the initial
/// shape replaced by a fresh symbol k, and an output dim k + c (c constant, the same whatever k
/// is) gives initial + c * trips. nullopt where that does not hold.
std::vector<std::optional<PartialShape>> inductionShapes(InferContext &ctx, const Graph &body,
                                                         const Fact &iter, const Facts &carried,
                                                         const Dimension &trips, size_t nCarried) {
  std::vector<std::optional<PartialShape>> grown(nCarried);
  Facts formals{iter, carried[0]};
  std::vector<std::vector<SymbolId>> probes(nCarried);
  for (size_t j = 0; j < nCarried; ++j) {
    const Fact &init = ctx.input(2 + j);
    Fact probe = makeFact(init.type, PartialShape::dynamic());
    if (init.shape.rankIsStatic()) {
      std::vector<Dimension> dims;
      // Each probe at least the initial dim's least value: a dim that never shrinks (a step of
      // 0 or more, checked below) stays there in every round, and a slice of its last row is
      // one row, not min(k, 1).
      for (size_t i = 0; i < init.shape.size(); ++i) {
        probes[j].push_back(ctx.symbols().fresh(Interval{std::max<int64_t>(init.shape[i].minLength(), 0), kInf}));
        dims.push_back(Dimension::symbol(probes[j].back()));
      }
      probe.shape = PartialShape(std::move(dims));
    }
    formals.push_back(probe);
  }
  auto out = ctx.inferBody(body, formals, body.outputs.size());
  if (!out.ok()) return grown;
  for (size_t j = 0; j < nCarried; ++j) {
    const PartialShape &init = ctx.input(2 + j).shape;
    const PartialShape &got = (*out)[1 + j].shape;
    if (!init.rankIsStatic() || !got.rankIsStatic() || got.size() != init.size()) continue;
    std::vector<Dimension> dims;
    for (size_t i = 0; i < init.size(); ++i) {
      Dimension k = ctx.symbols().resolve(Dimension::symbol(probes[j][i]));
      Dimension o = ctx.symbols().resolve(got[i]);
      if (!k.expr() || !o.expr() || !init[i].expr()) break;
      auto step = sub(o.expr(), k.expr());
      if (!step.ok() || !isConst(*step)) break;
      if ((*step)->value < 0 && init[i].minLength() > 0) break; // the probe's least value may not hold
      auto total = mul(*step, trips.expr());
      auto final = total.ok() ? add(init[i].expr(), *total) : total;
      if (!final.ok()) break;
      Dimension d(*final);
      if (d.maxLength() < 0) break;
      dims.push_back(d.nonNegative());
    }
    if (dims.size() == init.size()) grown[j] = PartialShape(std::move(dims));
  }
  return grown;
}

// ---------------------------------------------------------------- If
Result<Facts> inferIf(InferContext &ctx) {
  SF_ASSIGN(const Graph *thenBody, bodyAttr(ctx, "then_branch"));
  SF_ASSIGN(const Graph *elseBody, bodyAttr(ctx, "else_branch"));
  const Fact &cond = ctx.input(0);
  if (!ctx.hasInput(0)) return makeError("the condition (input 0) is missing");
  SF_TRY(requireOneValue(ctx, cond, ElementType::Bool, "the condition (input 0)"));
  size_t n = ctx.numOutputs();
  if (thenBody->outputs.size() != n)
    return errorf("then_branch '{}' has {} outputs, the node has {}", thenBody->name,
                  thenBody->outputs.size(), n);
  if (elseBody->outputs.size() != n)
    return errorf("else_branch '{}' has {} outputs, the node has {}", elseBody->name,
                  elseBody->outputs.size(), n);
  return ctx.memoized(*thenBody, [&]() -> Result<Facts> {
    auto c = constInts(cond);
    if (c && c->size() == 1) return ctx.inferBodyFinal((*c)[0] ? *thenBody : *elseBody, {}, n);
    SF_ASSIGN(Facts a, ctx.inferBodyFinal(*thenBody, {}, n));
    SF_ASSIGN(Facts b, ctx.inferBodyFinal(*elseBody, {}, n));
    Facts out;
    // A dim the branches disagree on is one of the two in any run: a fresh symbol within their
    // hull (`if_0`), so that what follows stays symbolic in it (NMS's kept boxes, or 0 when the
    // guarded branch returns an empty tensor). Dims that are the same pair of expressions in
    // several outputs share one symbol: both come from the branch the run takes.
    std::map<std::pair<Expr, Expr>, Dimension> minted;
    for (size_t i = 0; i < n; ++i) {
      auto h = hull(a[i], b[i]);
      if (!h.ok())
        return errorf("output {} is {} in then_branch but {} in else_branch", i, a[i], b[i]);
      const PartialShape &sa = a[i].shape, &sb = b[i].shape;
      if (sa.rankIsStatic() && sb.rankIsStatic() && sa.size() != sb.size())
        ctx.warn(fmt::format("output {} is {} in then_branch but {} in else_branch: its rank is "
                             "unknown, and what reads it usually works for one branch only",
                             i, a[i], b[i]));
      if (h->shape.rankIsStatic() && sa.rankIsStatic() && sb.rankIsStatic() &&
          sa.size() == h->shape.size() && sb.size() == h->shape.size()) {
        std::vector<Dimension> dims = h->shape.dims();
        for (size_t j = 0; j < dims.size(); ++j) {
          if (dims[j].expr() || dims[j].isStatic()) continue;
          Expr ea = sa[j].expr(), eb = sb[j].expr();
          if (ea && eb) {
            auto [it, fresh] = minted.try_emplace({ea, eb});
            if (fresh) {
              it->second = ctx.freshDim("if", dims[j].interval());
              ctx.assume(fmt::format("output {} axis {} is {} in then_branch and {} in else_branch, "
                                     "and the condition is not known: taken as {}, a size within "
                                     "both", i, j, sa[j], sb[j], it->second));
            }
            dims[j] = it->second;
          } else {
            dims[j] = ctx.freshDim("if", dims[j].interval());
            ctx.assume(fmt::format("output {} axis {} differs between the branches ({} and {}) and "
                                   "the condition is not known: taken as {}", i, j, sa[j], sb[j], dims[j]));
          }
        }
        h->shape = PartialShape(std::move(dims));
      }
      out.push_back(std::move(*h));
    }
    return out;
  });
}

// ---------------------------------------------------------------- Loop
/// How many loop-carried values and scan outputs a Loop's body makes.
struct LoopCounts {
  size_t nCarried, nScan;
};

/// The body's counts, checked against the node's inputs and outputs.
Result<LoopCounts> loopCounts(InferContext &ctx, const Graph *body) {
  size_t formals = body->formalInputCount();
  if (formals < 2)
    return errorf("body '{}' has {} inputs, expected at least 2 (iteration number, condition)",
                  body->name, formals);
  size_t nCarried = formals - 2;
  if (body->outputs.size() < 1 + nCarried)
    return errorf(
        "body '{}' has {} outputs, expected at least {} (condition and loop-carried values)",
        body->name, body->outputs.size(), 1 + nCarried);
  size_t nScan = body->outputs.size() - 1 - nCarried;
  if (ctx.numInputs() < 2 + nCarried)
    return errorf("the body takes {} loop-carried values but the node has {} inputs", nCarried,
                  ctx.numInputs());
  if (ctx.numOutputs() > nCarried + nScan)
    return errorf(
        "the node has {} outputs, the body makes {} loop-carried values and {} scan outputs",
        ctx.numOutputs(), nCarried, nScan);
  return LoopCounts{nCarried, nScan};
}

Result<Facts> inferLoop(InferContext &ctx) {
  SF_ASSIGN(const Graph *body, bodyAttr(ctx, "body"));
  SF_ASSIGN(LoopCounts counts, loopCounts(ctx, body));
  const size_t nCarried = counts.nCarried, nScan = counts.nScan;
  bool hasM = ctx.hasInput(0), hasCond = ctx.hasInput(1);
  if (hasM)
    SF_TRY(requireOneValue(ctx, ctx.input(0), ElementType::I64, "the trip count M (input 0)"));
  if (hasCond)
    SF_TRY(requireOneValue(ctx, ctx.input(1), ElementType::Bool, "the condition (input 1)"));

  return ctx.memoized(*body, [&]() -> Result<Facts> {
    // The trip count when nothing stops the loop early: max(M, 0).
    std::optional<Dimension> m;
    if (hasM)
      if (auto v = scalarDim(ctx.input(0))) {
        SF_ASSIGN(Dimension t, Dimension::max(*v, Dimension(0)));
        m = t;
      }
    auto c0 = hasCond ? constInts(ctx.input(1)) : std::nullopt;
    bool startsFalse = c0 && c0->size() == 1 && (*c0)[0] == 0;
    int64_t maxTrips = startsFalse ? 0 : m ? m->maxLength() : kInf;

    // Formals: the iteration number (in [0, trips)), the condition, the loop-carried values.
    Fact iter = makeShapeValueFact(
        ElementType::I64,
        {Dimension::fromInterval({0, maxTrips == kInf ? kInf : std::max<int64_t>(maxTrips - 1, 0)})},
        true);
    Facts carried{makeFact(ElementType::Bool, PartialShape{})};
    if (hasCond)
      if (auto v = dimValues(ctx.input(1)); v && v->size() == 1) carried[0].value = *v;
    for (size_t j = 0; j < nCarried; ++j)
      carried.push_back(ctx.input(2 + j));
    std::vector<bool> feeds(carried.size(), true);
    // Without a condition input the body's condition output is ignored.
    feeds[0] = hasCond;
    SF_ASSIGN(Facts out, fixedPoint(ctx, *body, {iter}, carried, {}, feeds, body->outputs.size()));

    // The condition can stop the loop early unless it is true in every round.
    auto always = constInts(carried[0]);
    bool canStop = hasCond && !(always && always->size() == 1 && (*always)[0] != 0);
    Dimension trips;
    if (startsFalse)
      trips = Dimension(0);
    else if (m && !canStop)
      trips = *m;
    else
      trips = ctx.freshDim("loop_iters", {0, maxTrips});

    Facts result;
    for (size_t j = 0; j < nCarried; ++j) {
      if (trips.maxLength() == 0)
        result.push_back(ctx.input(2 + j));
      else if (trips.minLength() >= 1)
        result.push_back(out[1 + j]);
      else
        result.push_back(carried[1 + j]);
    }
    // Loop-carried tensors that grow by a fixed amount per round (results appended with Concat,
    // as torchvision's keypoint and mask heads do, or a tf.while_loop's accumulator): the final
    // dim is initial + step * trips, the trip count known or the loop's own count of rounds.
    if (!startsFalse && trips.expr() && nCarried > 0) {
      auto grown = inductionShapes(ctx, *body, iter, carried, trips, nCarried);
      for (size_t j = 0; j < nCarried; ++j)
        if (grown[j]) result[j].shape = *grown[j];
    }
    for (size_t k = 0; k < nScan; ++k) {
      const Fact &e = out[1 + nCarried + k];
      result.push_back(makeFact(e.type, prepend(trips, e.shape)));
    }
    return result;
  });
}

// ---------------------------------------------------------------- Scan
/// A Scan node's counts and axes: N states, M scan inputs, K scan outputs; opset 8's batched
/// form has a leading sequence_lens input (inputs from `first` on).
struct ScanLayout {
  size_t M, N, K, first;
  bool batched;
  std::vector<int64_t> inAxes, outAxes;
};

Result<ScanLayout> scanLayout(InferContext &ctx, const Graph *body) {
  SF_ASSIGN(int64_t nScanIn, ctx.attrs().getInt("num_scan_inputs"));
  size_t formals = body->formalInputCount();
  if (nScanIn < 1 || size_t(nScanIn) > formals)
    return errorf("num_scan_inputs is {} but the body has {} inputs", nScanIn, formals);
  size_t M = size_t(nScanIn), N = formals - M;
  if (body->outputs.size() < N)
    return errorf("body '{}' has {} outputs, expected at least {} (the state variables)",
                  body->name, body->outputs.size(), N);
  size_t K = body->outputs.size() - N;
  // Opset 8: a leading sequence_lens input, and every input and output has a batch axis 0 with
  // the scan axis 1.
  bool batched = ctx.opset() > 0 && ctx.opset() < 9;
  size_t first = batched ? 1 : 0;
  if (ctx.numInputs() < first + N + M)
    return errorf("the body takes {} states and {} scan inputs but the node has {} inputs", N, M,
                  ctx.numInputs());
  if (ctx.numOutputs() > N + K)
    return errorf("the node has {} outputs, the body makes {}", ctx.numOutputs(), N + K);
  std::vector<int64_t> inAxes(M, 0), outAxes(K, 0);
  if (!batched) {
    SF_ASSIGN(inAxes, ctx.attrs().getInts("scan_input_axes", inAxes));
    SF_ASSIGN(outAxes, ctx.attrs().getInts("scan_output_axes", outAxes));
    if (inAxes.size() != M)
      return errorf("scan_input_axes has {} entries, expected {}", inAxes.size(), M);
    if (outAxes.size() != K)
      return errorf("scan_output_axes has {} entries, expected {}", outAxes.size(), K);
    for (const char *a : {"scan_input_directions", "scan_output_directions"}) {
      SF_ASSIGN(auto dirs, ctx.attrs().getInts(a, {}));
      size_t want = a[5] == 'i' ? M : K;
      if (!dirs.empty() && dirs.size() != want)
        return errorf("{} has {} entries, expected {}", a, dirs.size(), want);
    }
  }
  return ScanLayout{M, N, K, first, batched, std::move(inAxes), std::move(outAxes)};
}

/// The batch (opset 8) and the scan length, shared by every input that has them.
struct ScanSizes {
  std::optional<Dimension> batch, length;
};

/// Merges `d`, input `input`'s `what`, into `acc` (the first one seen sets it).
Result<void> joinScanSize(InferContext &ctx, std::optional<Dimension> &acc, const Dimension &d,
                          const std::string &what, size_t input) {
  if (!acc) {
    acc = d;
    return success();
  }
  auto m = ctx.mergeDims(*acc, d);
  if (!m.ok())
    return errorf("input {} has {} {}, other inputs {} ({})", input, what, d, acc->toString(),
                  ctx.input(input));
  acc = *m;
  return success();
}

/// The state inputs as the body sees them (without their batch axis when batched).
Result<Facts> scanStates(InferContext &ctx, const ScanLayout &l, ScanSizes &sizes) {
  Facts states;
  for (size_t j = 0; j < l.N; ++j) {
    size_t i = l.first + j;
    Fact s = ctx.input(i);
    if (l.batched && s.shape.rankIsStatic()) {
      if (s.shape.size() < 1) return errorf("state input {} has no batch axis ({})", i, s);
      SF_TRY(joinScanSize(ctx, sizes.batch, s.shape[0], "batch size", i));
      s = makeFact(s.type, removeAxis(s.shape, 0));
    }
    states.push_back(s);
  }
  return states;
}

/// One element of each scan input, as the body sees it (without the scan and batch axes).
Result<Facts> scanElements(InferContext &ctx, const ScanLayout &l, ScanSizes &sizes) {
  Facts elements;
  for (size_t j = 0; j < l.M; ++j) {
    size_t i = l.first + l.N + j;
    const Fact &x = ctx.input(i);
    Fact e = makeFact(x.type, PartialShape::dynamic());
    if (x.shape.rankIsStatic()) {
      int64_t r = int64_t(x.shape.size());
      int64_t axis = 1;
      if (l.batched) {
        if (r < 2) return errorf("scan input {} needs batch and scan axes ({})", i, x);
        SF_TRY(joinScanSize(ctx, sizes.batch, x.shape[0], "batch size", i));
      } else {
        auto a = normalizeAxis(l.inAxes[j], r);
        if (!a.ok()) return errorf("scan_input_axes[{}]: {} ({})", j, a.error().message, x);
        axis = *a;
      }
      SF_TRY(joinScanSize(ctx, sizes.length, x.shape[axis], "scan length", i));
      PartialShape s = removeAxis(x.shape, axis);
      e.shape = l.batched ? removeAxis(s, 0) : s;
    }
    elements.push_back(e);
  }
  return elements;
}

/// The node's outputs from the body's: the final states, then the scan outputs stacked along
/// their axis (L long), each with the batch B in front when batched.
Result<Facts> scanResults(const ScanLayout &l, const Facts &initial, const Facts &states,
                          const Facts &out, const Dimension &L, const Dimension &B) {
  Facts result;
  for (size_t j = 0; j < l.N; ++j) {
    Fact f = L.maxLength() == 0 ? initial[j] : L.minLength() >= 1 ? out[j] : states[j];
    if (l.batched) f = makeFact(f.type, prepend(B, f.shape));
    result.push_back(f);
  }
  for (size_t k = 0; k < l.K; ++k) {
    const Fact &e = out[l.N + k];
    Fact f = makeFact(e.type, PartialShape::dynamic());
    if (e.shape.rankIsStatic()) {
      if (l.batched) {
        f.shape = prepend(B, prepend(L, e.shape));
      } else {
        auto a = normalizeAxis(l.outAxes[k], int64_t(e.shape.size()) + 1);
        if (!a.ok())
          return errorf("scan_output_axes[{}]: {} (body output {})", k, a.error().message, e);
        f.shape = insertAxis(e.shape, *a, L);
      }
    }
    result.push_back(shapeOnly(f));
  }
  return result;
}

Result<Facts> inferScan(InferContext &ctx) {
  SF_ASSIGN(const Graph *body, bodyAttr(ctx, "body"));
  SF_ASSIGN(const ScanLayout l, scanLayout(ctx, body));

  return ctx.memoized(*body, [&]() -> Result<Facts> {
    ScanSizes sizes;
    SF_ASSIGN(Facts states, scanStates(ctx, l, sizes));
    SF_ASSIGN(Facts elements, scanElements(ctx, l, sizes));
    if (l.batched && ctx.hasInput(0)) {
      const Fact &lens = ctx.input(0);
      if (lens.shape.rankIsStatic() && lens.shape.size() != 1)
        return errorf("sequence_lens (input 0) must be 1-D, got {}", lens);
      if (lens.shape.rankIsStatic()) SF_TRY(joinScanSize(ctx, sizes.batch, lens.shape[0], "batch size", 0));
    }
    Dimension L = sizes.length ? ctx.symbols().resolve(*sizes.length) : Dimension::dynamic();

    std::vector<bool> feeds(l.N, true);
    Facts initial = states;
    SF_ASSIGN(Facts out, fixedPoint(ctx, *body, {}, states, elements, feeds, l.N + l.K));

    Dimension B = sizes.batch ? ctx.symbols().resolve(*sizes.batch) : Dimension::dynamic();
    return scanResults(l, initial, states, out, L, B);
  });
}

} // namespace

void registerControlFlowOps(OpRegistry &r) {
  // The ops themselves compute nothing: their bodies' costs count, as often as they run.
  r.add({.name = "If",
         .infer = inferIf,
         .traits = {.bodies = BodyRuns::OneBranch, .outputKind = OutputKind::Unknown},
         .cost = costNone});
  r.add({.name = "Loop",
         .infer = inferLoop,
         .traits = {.bodies = BodyRuns::TripCount, .outputKind = OutputKind::Unknown},
         .cost = costNone});
  r.add({.name = "Scan",
         .infer = inferScan,
         .traits = {.bodies = BodyRuns::ScanLength},
         .cost = costNone});
}

} // namespace sf
