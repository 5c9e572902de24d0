// Control flow: If, Loop, Scan. Their bodies are graph-valued attributes; a value a body reads
// from an enclosing graph is an extra input of the owning node after its declared ones, and a
// Parameter with attribute "captured" inside the body (graph.h), so the number of declared inputs
// follows from the body's formal inputs.
//
// Soundness first: If joins the facts of its two branches by their hull (equal dims kept, other
// dims the interval union, different ranks an unknown rank), unless the condition is a known
// constant. Loop and Scan iterate body inference to a fixed point of the loop-carried facts
// (each round joins the body's outputs into them), relaxing what keeps changing after a few
// rounds. Bodies are inferred through a memo (subgraph.h) so that nested loops cost a body
// inference per distinct input facts, not one per enclosing round.
#include "subgraph.h"

#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include <algorithm>
#include <map>

namespace sf {

// ================================================================ hull

Dimension hullDim(const Dimension &a, const Dimension &b) {
  if (a == b) return a;
  Interval r = a.interval().hull(b.interval());
  if (a.expr() && a.expr() == b.expr() && !isConst(a.expr())) return Dimension(a.expr(), r);
  return Dimension::fromInterval(r);
}

PartialShape hullShape(const PartialShape &a, const PartialShape &b) {
  if (!a.rankIsStatic() || !b.rankIsStatic() || a.size() != b.size()) return PartialShape::dynamic();
  std::vector<Dimension> dims;
  dims.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) dims.push_back(hullDim(a[i], b[i]));
  return PartialShape(std::move(dims));
}

Result<Fact> hullFacts(const Fact &a, const Fact &b) {
  if (a.type != ElementType::Undefined && b.type != ElementType::Undefined && a.type != b.type)
    return makeError("element types differ (" + describe(a) + " vs " + describe(b) + ")");
  Fact out;
  out.type = a.type != ElementType::Undefined ? a.type : b.type;
  out.shape = hullShape(a.shape, b.shape);
  if (a.constant && b.constant && (a.constant == b.constant || *a.constant == *b.constant))
    out.constant = a.constant;
  auto va = dimValues(a), vb = dimValues(b);
  if (va && vb && va->size() == vb->size() && out.shape.rankIsStatic() && out.shape.size() <= 1) {
    std::vector<Dimension> v;
    v.reserve(va->size());
    for (size_t i = 0; i < va->size(); ++i) v.push_back(hullDim((*va)[i], (*vb)[i]));
    out.value = std::move(v);
  }
  return out;
}

// ================================================================ memo

namespace {

std::vector<Fact> resolvedAll(const std::vector<Fact> &facts, const SymbolTable &t) {
  std::vector<Fact> out;
  out.reserve(facts.size());
  for (const auto &f : facts) out.push_back(resolved(f, t));
  return out;
}

} // namespace

struct SubgraphMemo {
  enum class Kind { Body, Rule };
  struct Entry {
    Kind kind;
    const Graph *body;
    std::vector<Fact> inputs;
    std::vector<Fact> outputs;
  };
  // Bounds the memory a pathological model can make the memo hold; past it, nothing new is kept.
  static constexpr size_t kMaxEntries = 4096;

  SymbolTable *symbols = nullptr;
  std::vector<Entry> entries;

  const Entry *find(Kind k, const Graph *body, const std::vector<Fact> &inputs) const {
    for (const auto &e : entries)
      if (e.kind == k && e.body == body && e.inputs == inputs) return &e;
    return nullptr;
  }
  void add(Kind k, const Graph *body, std::vector<Fact> inputs, std::vector<Fact> outputs) {
    if (entries.size() < kMaxEntries)
      entries.push_back({k, body, std::move(inputs), std::move(outputs)});
  }
};

namespace {
thread_local SubgraphMemo *tMemo = nullptr;
} // namespace

SubgraphMemoScope::SubgraphMemoScope(InferContext &ctx) : previous_(tMemo) {
  // A rule inferred inside another one's body runs on the same symbol table and joins its memo;
  // anything else (the outermost rule, or another run started from within) gets its own.
  if (tMemo && tMemo->symbols == &ctx.symbols()) return;
  own_ = std::make_unique<SubgraphMemo>();
  own_->symbols = &ctx.symbols();
  tMemo = own_.get();
}

SubgraphMemoScope::~SubgraphMemoScope() { tMemo = previous_; }

Result<std::vector<Fact>> inferBody(InferContext &ctx, const Graph &body,
                                    const std::vector<Fact> &formals, size_t expectOutputs) {
  if (expectOutputs != SIZE_MAX && body.outputs.size() != expectOutputs)
    return makeError("subgraph '" + body.name + "' has " + std::to_string(body.outputs.size()) +
                     " outputs, expected " + std::to_string(expectOutputs));
  SubgraphMemo *memo = tMemo && tMemo->symbols == &ctx.symbols() ? tMemo : nullptr;
  if (!memo) return ctx.inferSubgraph(body, formals);
  // The key: formal facts, then the facts of the captured outer values.
  std::vector<Fact> key = resolvedAll(formals, ctx.symbols());
  for (const OutletId &in : body.inputs) {
    if (!body.contains(in)) continue;
    const Node &p = body.nodes[in.node];
    if (!p.isCaptured()) continue;
    auto idx = p.attrs.getInt("captured");
    key.push_back(idx.ok() && *idx >= 0 ? ctx.input(size_t(*idx)) : Fact{});
  }
  if (const auto *hit = memo->find(SubgraphMemo::Kind::Body, &body, key))
    return resolvedAll(hit->outputs, ctx.symbols());
  SF_ASSIGN(std::vector<Fact> out, ctx.inferSubgraph(body, formals));
  memo->add(SubgraphMemo::Kind::Body, &body, std::move(key), out);
  return out;
}

Result<std::vector<Fact>> memoizedRule(InferContext &ctx, const Graph &body,
                                       const std::function<Result<std::vector<Fact>>()> &compute) {
  SubgraphMemo *memo = tMemo && tMemo->symbols == &ctx.symbols() ? tMemo : nullptr;
  if (!memo) return compute();
  std::vector<Fact> key;
  for (size_t i = 0; i < ctx.numInputs(); ++i) key.push_back(ctx.input(i));
  if (const auto *hit = memo->find(SubgraphMemo::Kind::Rule, &body, key))
    return resolvedAll(hit->outputs, ctx.symbols());
  SF_ASSIGN(std::vector<Fact> out, compute());
  memo->add(SubgraphMemo::Kind::Rule, &body, std::move(key), out);
  return out;
}

Result<const Graph *> bodyAttr(InferContext &ctx, const std::string &name) {
  SF_ASSIGN(GraphPtr g, ctx.attrs().getGraph(name));
  if (!g) return makeError("attribute '" + name + "' holds no graph");
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

/// Requires a scalar (or one-element 1-D) input of the given type, when known.
Result<void> requireScalar(const Fact &f, ElementType t, const char *what) {
  if (f.type != ElementType::Undefined && f.type != t)
    return makeError(std::string(what) + " must be " + shortName(t) + ", got " + describe(f));
  if (f.shape.rankIsStatic()) {
    bool ok = f.shape.size() == 0 || (f.shape.size() == 1 && f.shape[0].compatible(Dimension(1)));
    if (!ok) return makeError(std::string(what) + " must be a single element, got " + describe(f));
  }
  return success();
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
    SF_ASSIGN(Facts out, inferBody(ctx, body, formals, nOutputs));
    Facts next = carried;
    for (size_t j = 0; j < carried.size(); ++j) {
      if (!feeds[j]) continue;
      auto h = hullFacts(carried[j], out[j]);
      if (!h.ok())
        return makeError("body input '" + inputName(body, prefix.size() + j) + "' is " +
                         describe(carried[j]) + " but the body returns " + describe(out[j]) +
                         " for it (output " + str(j) + ")");
      next[j] = std::move(*h);
    }
    if (next == carried) return out;
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
      for (size_t i = 0; i < init.shape.size(); ++i) {
        probes[j].push_back(ctx.symbols().fresh());
        dims.push_back(Dimension::symbol(probes[j].back()));
      }
      probe.shape = PartialShape(std::move(dims));
    }
    formals.push_back(probe);
  }
  auto out = inferBody(ctx, body, formals, body.outputs.size());
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
  SubgraphMemoScope scope(ctx);
  SF_ASSIGN(const Graph *thenBody, bodyAttr(ctx, "then_branch"));
  SF_ASSIGN(const Graph *elseBody, bodyAttr(ctx, "else_branch"));
  const Fact &cond = ctx.input(0);
  if (!ctx.hasInput(0)) return makeError("the condition (input 0) is missing");
  SF_TRY(requireScalar(cond, ElementType::Bool, "the condition (input 0)"));
  size_t n = ctx.numOutputs();
  if (thenBody->outputs.size() != n)
    return makeError("then_branch '" + thenBody->name + "' has " + str(thenBody->outputs.size()) +
                     " outputs, the node has " + str(n));
  if (elseBody->outputs.size() != n)
    return makeError("else_branch '" + elseBody->name + "' has " + str(elseBody->outputs.size()) +
                     " outputs, the node has " + str(n));
  return memoizedRule(ctx, *thenBody, [&]() -> Result<Facts> {
    auto c = constInts(cond);
    if (c && c->size() == 1) return inferBody(ctx, (*c)[0] ? *thenBody : *elseBody, {}, n);
    SF_ASSIGN(Facts a, inferBody(ctx, *thenBody, {}, n));
    SF_ASSIGN(Facts b, inferBody(ctx, *elseBody, {}, n));
    Facts out;
    // A dim the branches disagree on is one of the two in any run: a fresh symbol within their
    // hull (`if_0`), so that what follows stays symbolic in it (NMS's kept boxes, or 0 when the
    // guarded branch returns an empty tensor). Dims that are the same pair of expressions in
    // several outputs share one symbol: both come from the branch the run takes.
    std::map<std::pair<Expr, Expr>, Dimension> minted;
    for (size_t i = 0; i < n; ++i) {
      auto h = hullFacts(a[i], b[i]);
      if (!h.ok())
        return makeError("output " + str(i) + " is " + describe(a[i]) + " in then_branch but " +
                         describe(b[i]) + " in else_branch");
      const PartialShape &sa = a[i].shape, &sb = b[i].shape;
      if (h->shape.rankIsStatic() && sa.rankIsStatic() && sb.rankIsStatic() &&
          sa.size() == h->shape.size() && sb.size() == h->shape.size()) {
        std::vector<Dimension> dims = h->shape.dims();
        for (size_t j = 0; j < dims.size(); ++j) {
          if (dims[j].expr() || dims[j].isStatic()) continue;
          Expr ea = sa[j].expr(), eb = sb[j].expr();
          if (ea && eb) {
            auto [it, fresh] = minted.try_emplace({ea, eb});
            if (fresh) it->second = ctx.freshDim("if", dims[j].interval());
            dims[j] = it->second;
          } else {
            dims[j] = ctx.freshDim("if", dims[j].interval());
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
Result<Facts> inferLoop(InferContext &ctx) {
  SubgraphMemoScope scope(ctx);
  SF_ASSIGN(const Graph *body, bodyAttr(ctx, "body"));
  size_t formals = body->formalInputCount();
  if (formals < 2)
    return makeError("body '" + body->name + "' has " + str(formals) +
                     " inputs, expected at least 2 (iteration number, condition)");
  size_t nCarried = formals - 2;
  if (body->outputs.size() < 1 + nCarried)
    return makeError("body '" + body->name + "' has " + str(body->outputs.size()) +
                     " outputs, expected at least " + str(1 + nCarried) +
                     " (condition and loop-carried values)");
  size_t nScan = body->outputs.size() - 1 - nCarried;
  if (ctx.numInputs() < 2 + nCarried)
    return makeError("the body takes " + str(nCarried) + " loop-carried values but the node has " +
                     str(ctx.numInputs()) + " inputs");
  if (ctx.numOutputs() > nCarried + nScan)
    return makeError("the node has " + str(ctx.numOutputs()) + " outputs, the body makes " +
                     str(nCarried) + " loop-carried values and " + str(nScan) + " scan outputs");
  bool hasM = ctx.hasInput(0), hasCond = ctx.hasInput(1);
  if (hasM) SF_TRY(requireScalar(ctx.input(0), ElementType::I64, "the trip count M (input 0)"));
  if (hasCond) SF_TRY(requireScalar(ctx.input(1), ElementType::Bool, "the condition (input 1)"));

  return memoizedRule(ctx, *body, [&]() -> Result<Facts> {
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
    for (size_t j = 0; j < nCarried; ++j) carried.push_back(ctx.input(2 + j));
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
    // as torchvision's keypoint and mask heads do): with a known trip count, the final dim is
    // initial + step * trips.
    if (!startsFalse && m && !canStop && trips.expr() && nCarried > 0) {
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
Result<Facts> inferScan(InferContext &ctx) {
  SubgraphMemoScope scope(ctx);
  SF_ASSIGN(const Graph *body, bodyAttr(ctx, "body"));
  SF_ASSIGN(int64_t nScanIn, ctx.attrs().getInt("num_scan_inputs"));
  size_t formals = body->formalInputCount();
  if (nScanIn < 1 || size_t(nScanIn) > formals)
    return makeError("num_scan_inputs is " + std::to_string(nScanIn) + " but the body has " +
                     str(formals) + " inputs");
  size_t M = size_t(nScanIn), N = formals - M;
  if (body->outputs.size() < N)
    return makeError("body '" + body->name + "' has " + str(body->outputs.size()) +
                     " outputs, expected at least " + str(N) + " (the state variables)");
  size_t K = body->outputs.size() - N;
  // Opset 8: a leading sequence_lens input, and every input and output has a batch axis 0 with
  // the scan axis 1.
  bool batched = ctx.opset() > 0 && ctx.opset() < 9;
  size_t first = batched ? 1 : 0;
  if (ctx.numInputs() < first + N + M)
    return makeError("the body takes " + str(N) + " states and " + str(M) +
                     " scan inputs but the node has " + str(ctx.numInputs()) + " inputs");
  if (ctx.numOutputs() > N + K)
    return makeError("the node has " + str(ctx.numOutputs()) + " outputs, the body makes " +
                     str(N + K));
  std::vector<int64_t> inAxes(M, 0), outAxes(K, 0);
  if (!batched) {
    SF_ASSIGN(inAxes, ctx.attrs().getInts("scan_input_axes", inAxes));
    SF_ASSIGN(outAxes, ctx.attrs().getInts("scan_output_axes", outAxes));
    if (inAxes.size() != M)
      return makeError("scan_input_axes has " + str(inAxes.size()) + " entries, expected " + str(M));
    if (outAxes.size() != K)
      return makeError("scan_output_axes has " + str(outAxes.size()) + " entries, expected " +
                       str(K));
    for (const char *a : {"scan_input_directions", "scan_output_directions"}) {
      SF_ASSIGN(auto dirs, ctx.attrs().getInts(a, {}));
      size_t want = a[5] == 'i' ? M : K;
      if (!dirs.empty() && dirs.size() != want)
        return makeError(std::string(a) + " has " + str(dirs.size()) + " entries, expected " +
                         str(want));
    }
  }

  return memoizedRule(ctx, *body, [&]() -> Result<Facts> {
    // The batch (opset 8) and the scan length, shared by every input that has them.
    std::optional<Dimension> batch, length;
    auto join = [&](std::optional<Dimension> &acc, const Dimension &d, const std::string &what,
                    size_t input) -> Result<void> {
      if (!acc) {
        acc = d;
        return success();
      }
      auto m = ctx.mergeDims(*acc, d);
      if (!m.ok())
        return makeError("input " + str(input) + " has " + what + " " + d.toString() +
                         ", other inputs " + acc->toString() + " (" + describe(ctx.input(input)) +
                         ")");
      acc = *m;
      return success();
    };
    Facts states, elements;
    for (size_t j = 0; j < N; ++j) {
      size_t i = first + j;
      Fact s = ctx.input(i);
      if (batched && s.shape.rankIsStatic()) {
        if (s.shape.size() < 1)
          return makeError("state input " + str(i) + " has no batch axis (" + describe(s) + ")");
        SF_TRY(join(batch, s.shape[0], "batch size", i));
        s = makeFact(s.type, removeAxis(s.shape, 0));
      }
      states.push_back(s);
    }
    for (size_t j = 0; j < M; ++j) {
      size_t i = first + N + j;
      const Fact &x = ctx.input(i);
      Fact e = makeFact(x.type, PartialShape::dynamic());
      if (x.shape.rankIsStatic()) {
        int64_t r = int64_t(x.shape.size());
        int64_t axis = 1;
        if (batched) {
          if (r < 2)
            return makeError("scan input " + str(i) + " needs batch and scan axes (" + describe(x) +
                             ")");
          SF_TRY(join(batch, x.shape[0], "batch size", i));
        } else {
          auto a = normalizeAxis(inAxes[j], r);
          if (!a.ok())
            return makeError("scan_input_axes[" + str(j) + "]: " + a.error().message + " (" +
                             describe(x) + ")");
          axis = *a;
        }
        SF_TRY(join(length, x.shape[axis], "scan length", i));
        PartialShape s = removeAxis(x.shape, axis);
        e.shape = batched ? removeAxis(s, 0) : s;
      }
      elements.push_back(e);
    }
    if (batched && ctx.hasInput(0)) {
      const Fact &lens = ctx.input(0);
      if (lens.shape.rankIsStatic() && lens.shape.size() != 1)
        return makeError("sequence_lens (input 0) must be 1-D, got " + describe(lens));
      if (lens.shape.rankIsStatic()) SF_TRY(join(batch, lens.shape[0], "batch size", 0));
    }
    Dimension L = length ? ctx.symbols().resolve(*length) : Dimension::dynamic();

    std::vector<bool> feeds(N, true);
    Facts initial = states;
    SF_ASSIGN(Facts out, fixedPoint(ctx, *body, {}, states, elements, feeds, N + K));

    Facts result;
    Dimension B = batch ? ctx.symbols().resolve(*batch) : Dimension::dynamic();
    for (size_t j = 0; j < N; ++j) {
      Fact f = L.maxLength() == 0 ? initial[j] : L.minLength() >= 1 ? out[j] : states[j];
      if (batched) f = makeFact(f.type, prepend(B, f.shape));
      result.push_back(f);
    }
    for (size_t k = 0; k < K; ++k) {
      const Fact &e = out[N + k];
      Fact f = makeFact(e.type, PartialShape::dynamic());
      if (e.shape.rankIsStatic()) {
        if (batched) {
          f.shape = prepend(B, prepend(L, e.shape));
        } else {
          auto a = normalizeAxis(outAxes[k], int64_t(e.shape.size()) + 1);
          if (!a.ok())
            return makeError("scan_output_axes[" + str(k) + "]: " + a.error().message +
                             " (body output " + describe(e) + ")");
          f.shape = insertAxis(e.shape, *a, L);
        }
      }
      result.push_back(shapeOnly(f));
    }
    return result;
  });
}

} // namespace

void registerControlFlowOps(OpRegistry &r) {
  r.add({"If", "", inferIf});
  r.add({"Loop", "", inferLoop});
  r.add({"Scan", "", inferScan});
}

} // namespace sf
