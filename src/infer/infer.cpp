// The forward inference driver.
#include "shapeflow/infer/infer.h"

#include "backward.h"
#include "subgraph_memo.h"

#include "shapeflow/ops/helpers.h"
#include "shapeflow/support/small_vec.h"

#include <map>
#include <tuple>
#include <unordered_set>

namespace sf {
namespace {

/// What one inference run shares across its nodes and the subgraphs inferred inside them.
struct Run {
  const OpRegistry &registry;
  SymbolTable &symbols;
  const InferOptions &options;
  /// Body and rule results, for the control-flow node being inferred at the top level (and
  /// everything nested in it); cleared after it, as nothing else can hit them.
  SubgraphMemo memo;
  size_t bodyInferences = 0, memoHits = 0;
  /// Fresh symbols minted per (graph, node, k-th mint of the rule, stem, range): see freshDim.
  using FreshKey = std::tuple<const Graph *, uint32_t, int, std::string, int64_t, int64_t>;
  std::map<FreshKey, SymbolId> fresh;
};

/// `settling`: the graph is the model's own (or a body inferred in place by settle), not a copy:
/// its control-flow nodes settle their bodies in place too.
InferStats inferIn(Run &run, Graph &g, const Graph *origin, Diagnostics &diags, int depth,
                   bool settling);

/// A graph input's unknown or interval dims become anonymous symbols with the same range, so
/// each has an identity: `Shape(x)[0]` fed back into a Reshape target is the same dim as x's own
/// dim 0 and cancels exactly ("an interval {1, 8} is an anonymous symbol ranged
/// [1, 8]").
PartialShape identifyAnonymous(const PartialShape &s, SymbolTable &symbols) {
  if (!s.rankIsStatic()) return s;
  std::vector<Dimension> dims;
  dims.reserve(s.size());
  bool changed = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const Dimension &d = s[i];
    if (d.isStatic() || d.expr()) {
      dims.push_back(d);
      continue;
    }
    dims.push_back(Dimension::symbol(symbols.fresh(d.interval())));
    changed = true;
  }
  return changed ? PartialShape(std::move(dims)) : s;
}

std::vector<Fact> resolvedAll(const std::vector<Fact> &facts, const SymbolTable &t) {
  std::vector<Fact> out;
  out.reserve(facts.size());
  for (const auto &f : facts)
    out.push_back(resolved(f, t));
  return out;
}

class NodeContext final : public InferContext {
public:
  NodeContext(Run &run, Graph &g, const Graph *origin, const Node &n, Diagnostics &diags, int depth,
              bool settling)
      : run_(run), origin_(origin), n_(n), diags_(diags), depth_(depth), settling_(settling) {
    // The producers' facts as they are (no copy) unless symbols were bound since: then a
    // resolved copy, kept in resolved_ (reserved, so the pointers stay valid).
    SymbolTable &symbols = run.symbols;
    inputs_.reserve(n.inputs.size());
    if (symbols.hasBindings()) resolved_.reserve(n.inputs.size());
    for (const OutletId &o : n.inputs) {
      if (!o.valid() || o.node >= g.nodes.size() || o.slot >= g.nodes[o.node].outputs.size()) {
        inputs_.push_back(nullptr);
        continue;
      }
      const Fact &f = g.nodes[o.node].outputs[o.slot].fact;
      if (!symbols.hasBindings()) {
        inputs_.push_back(&f);
      } else {
        resolved_.push_back(resolved(f, symbols));
        inputs_.push_back(&resolved_.back());
      }
    }
  }
  size_t numInputs() const override { return inputs_.size(); }
  bool hasInput(size_t i) const override { return i < inputs_.size() && inputs_[i]; }
  const Fact &input(size_t i) const override {
    static const Fact unknown;
    return hasInput(i) ? *inputs_[i] : unknown;
  }
  size_t numOutputs() const override { return n_.outputs.size(); }
  const Attributes &attrs() const override { return n_.attrs; }
  int64_t opset() const override { return n_.opsetVersion; }
  const std::string &nodeName() const override { return n_.name; }
  SymbolTable &symbols() override { return run_.symbols; }
  void warn(std::string message) override { diags_.warning(n_.name, n_.opType, std::move(message)); }
  void assume(std::string message) override {
    diags_.assumption(n_.name, n_.opType, std::move(message));
  }

  Result<Facts> inferBody(const Graph &body, const Facts &formals, size_t expectOutputs) override {
    if (expectOutputs != SIZE_MAX && body.outputs.size() != expectOutputs)
      return errorf("subgraph '{}' has {} outputs, expected {}", body.name, body.outputs.size(),
                    expectOutputs);
    // The key: formal facts, then the facts of the captured outer values.
    std::vector<Fact> key = resolvedAll(formals, run_.symbols);
    for (const OutletId &in : body.inputs) {
      if (!body.contains(in)) continue;
      const Node &p = body.nodes[in.node];
      if (!p.isCaptured()) continue;
      auto idx = p.attrs.getInt("captured");
      key.push_back(idx.ok() && *idx >= 0 ? input(size_t(*idx)) : Fact{});
    }
    if (const auto *hit = run_.memo.find(SubgraphMemo::Kind::Body, &body, key)) {
      ++run_.memoHits;
      return resolvedAll(*hit, run_.symbols);
    }
    ++run_.bodyInferences;
    Graph copy = body;
    SF_ASSIGN(Facts out, inferBodyGraph(copy, body, formals, false));
    run_.memo.add(SubgraphMemo::Kind::Body, &body, std::move(key), out);
    return out;
  }

  Result<Facts> memoized(const Graph &body,
                         const std::function<Result<Facts>()> &compute) override {
    std::vector<Fact> key;
    key.reserve(numInputs());
    for (size_t i = 0; i < numInputs(); ++i)
      key.push_back(input(i));
    // While settling, the rule runs (its bodies settle as it goes) even when the memo knows it.
    if (const auto *hit =
            settling_ ? nullptr : run_.memo.find(SubgraphMemo::Kind::Rule, &body, key)) {
      ++run_.memoHits;
      return resolvedAll(*hit, run_.symbols);
    }
    SF_ASSIGN(Facts out, compute());
    run_.memo.add(SubgraphMemo::Kind::Rule, &body, std::move(key), out);
    return out;
  }

  void settle(const Graph &body, const Facts &formals) override {
    if (!settling_) return;
    // The body's facts are written into the model's own graph (bodies are the node's attributes;
    // nothing else reads them while its rule runs). Errors were reported by the rounds before.
    (void)inferBodyGraph(const_cast<Graph &>(body), body, formals, true);
  }

  Result<Facts> inferBodyFinal(const Graph &body, const Facts &formals,
                               size_t expectOutputs) override {
    if (!settling_) return inferBody(body, formals, expectOutputs);
    if (expectOutputs != SIZE_MAX && body.outputs.size() != expectOutputs)
      return errorf("subgraph '{}' has {} outputs, expected {}", body.name, body.outputs.size(),
                    expectOutputs);
    ++run_.bodyInferences;
    return inferBodyGraph(const_cast<Graph &>(body), body, formals, true);
  }

  Dimension freshDim(std::string_view stem, Interval range) override {
    if (range.isPoint()) return Dimension(range.lo);
    // The same node of the same body, minting its k-th symbol with the same stem and range,
    // gets the name it got the first time: a body settled in place after its rounds on copies
    // names its data-dependent sizes as they were named.
    Run::FreshKey key{origin_, n_.id, minted_++, std::string(stem), range.lo, range.hi};
    if (auto it = run_.fresh.find(key); it != run_.fresh.end())
      return Dimension::symbol(it->second);
    Dimension d = InferContext::freshDim(stem, range);
    if (d.expr() && isSymbol(d.expr())) run_.fresh.emplace(std::move(key), d.expr()->sym);
    return d;
  }

private:
  /// Infers `copy` (the body itself when settling in place, else a shallow copy of it: inference
  /// writes facts into the copy's own nodes only, and nested bodies, shared with `body` and never
  /// written, keep their identity, which the memo keys on; a deep clone would copy every nested
  /// body again at every level and every round) from the facts of its formal inputs.
  Result<Facts> inferBodyGraph(Graph &copy, const Graph &body, const Facts &formals, bool inPlace) {
    if (depth_ + 1 > run_.options.maxSubgraphDepth)
      return errorf("subgraphs nested deeper than {}", run_.options.maxSubgraphDepth);
    // Formal inputs take the caller's facts (merged with what the body declares); captured
    // Parameters take the owning node's extra input they name.
    size_t formalIndex = 0;
    for (const OutletId &in : copy.inputs) {
      Node &p = copy.nodes[in.node];
      Fact &f = p.outputs[0].fact;
      if (p.isCaptured()) {
        auto idx = p.attrs.getInt("captured");
        if (!idx.ok() || !hasInput(size_t(*idx)))
          return errorf(
              "subgraph '{}': captured value '{}' has no matching input on the owning node",
              body.name, p.outputs[0].name);
        f = input(size_t(*idx));
        continue;
      }
      if (formalIndex < formals.size()) {
        const Fact &given = formals[formalIndex];
        Fact merged = given;
        if (merged.type == ElementType::Undefined) merged.type = f.type;
        if (!merged.shape.rankIsStatic()) merged.shape = f.shape;
        f = merged;
      }
      ++formalIndex;
    }
    Diagnostics inner;
    inferIn(run_, copy, &body, inner, depth_ + 1, inPlace);
    for (const auto &d : inner.list()) {
      Diagnostic nd = d;
      nd.message = "in subgraph '" + body.name + "': " + format(d);
      nd.node = n_.name;
      nd.op = n_.opType;
      // A body inferred in several rounds (a loop's fixed point) says the same thing each time.
      bool seen = false;
      for (const auto &e : diags_.list())
        if (e.severity == nd.severity && e.node == nd.node && e.op == nd.op &&
            e.message == nd.message) {
          seen = true;
          break;
        }
      if (!seen) diags_.add(nd);
    }
    Facts out;
    out.reserve(copy.outputs.size());
    for (const OutletId &o : copy.outputs) out.push_back(copy.fact(o));
    return out;
  }

  Run &run_;
  const Graph *origin_; // the graph the node belongs to (not the copy being inferred)
  int minted_ = 0;
  const Node &n_;
  Diagnostics &diags_;
  int depth_;
  bool settling_;
  SmallVec<const Fact *, 6> inputs_;
  std::vector<Fact> resolved_;
};

std::string inputSummary(const NodeContext &ctx) {
  std::string s;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (i) s += ", ";
    s += ctx.hasInput(i) ? describe(ctx.input(i)) : "-";
  }
  return s;
}

/// A fact the file declared for an output (value_info) that contradicts the inferred one is
/// worth a warning: the file or a rule is wrong. Different symbols are not a contradiction.
void checkDeclared(const Node &n, size_t slot, const Fact &inferred, const SymbolTable &symbols,
                   Diagnostics &diags) {
  const Fact *declared = n.outputs[slot].declared.get();
  if (!declared || declared->isUnknown()) return;
  std::string why;
  if (declared->type != ElementType::Undefined && inferred.type != ElementType::Undefined &&
      declared->type != inferred.type)
    why = "element type";
  else if (declared->shape.rankIsStatic() && inferred.shape.rankIsStatic() &&
           !symbols.resolve(declared->shape).compatible(inferred.shape))
    why = "shape";
  if (why.empty()) return;
  diags.warning(
      n.name, n.opType,
      fmt::format("output {} ('{}') is declared {} in the model but inferred {} ({} differs)", slot,
                  n.outputs[slot].name, *declared, inferred, why));
}

/// A tensor whose static dims multiply (in elements or in bytes) past 2^63 - 1 cannot exist, and
/// every size computed from it would wrap: the message saying so, else nothing.
std::optional<std::string> sizeOverflow(const Fact &f) {
  if (!f.shape.rankIsStatic()) return std::nullopt;
  int64_t elements = 1;
  bool overflow = false;
  for (const Dimension &d : f.shape.dims()) {
    if (!d.isStatic()) continue;
    if (d.length() == 0) return std::nullopt; // an empty tensor
    if (auto p = checkedMul(elements, d.length()))
      elements = *p;
    else
      overflow = true;
  }
  if (overflow) return fmt::format("{} has more than 2^63 elements", f);
  size_t bytes = f.type == ElementType::Undefined ? 1 : elementSize(f.type);
  if (bytes > 1 && !checkedMul(elements, int64_t(bytes)))
    return fmt::format("{} has {} elements, more than 2^63 bytes", f, elements);
  return std::nullopt;
}

constexpr size_t kPrefetchAhead = 6;

/// An input whose element type the op's ONNX schema does not accept at the node's opset (Sqrt of
/// an int64 tensor): an error naming it and what the schema accepts (onnxruntime refuses to load
/// such a model). Unknown types, opsets past the schemas known, and sequences pass.
void checkInputTypes(const OpDef &def, const Node &n, const NodeContext &ctx, const Graph &g,
                     const OpRegistry &registry, Diagnostics &diags) {
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ElementType t = n.inputs[i].valid() ? ctx.input(i).type : ElementType::Undefined;
    if (t == ElementType::Undefined) continue;
    auto mask = acceptedInputTypes(def, n.opsetVersion, i);
    if (!mask || (*mask >> unsigned(t)) & 1u || !holdsTensor(g, n.inputs[i], registry)) continue;
    std::vector<std::string> accepted;
    for (unsigned k = 1; k <= unsigned(kMaxElementType); ++k)
      if ((*mask >> k) & 1u) accepted.push_back(shortName(ElementType(k)));
    diags.error(n.name, n.opType,
                fmt::format("input {} is {}: the op's schema at opset {} accepts {}", i, shortName(t),
                            n.opsetVersion, accepted.empty() ? std::string("none") : fmt::format("{}", fmt::join(accepted, ", "))));
  }
}

void prefetchNode(const Node &n) {
  __builtin_prefetch(n.inputs.data());
  const char *out = reinterpret_cast<const char *>(n.outputs.data());
  for (size_t b = 0; b < n.outputs.size() * sizeof(Outlet); b += 64) __builtin_prefetch(out + b, 1);
  if (!n.attrs.empty()) __builtin_prefetch(&*n.attrs.begin());
}

InferStats inferIn(Run &run, Graph &g, const Graph *origin, Diagnostics &diags, int depth,
                   bool settling) {
  // Conditions met inside a body hold only where it runs (SymbolTable::setRecordConditions).
  struct ConditionsGuard {
    SymbolTable &t;
    bool was;
    ~ConditionsGuard() { t.setRecordConditions(was); }
  } conditions{run.symbols, run.symbols.setRecordConditions(depth == 0)};
  InferStats stats;
  SymbolTable &symbols = run.symbols;
  std::unordered_set<std::string> reported;
  bool warnedOpset = false;
  auto inferNode = [&](Node &n) {
    if (n.removed) return;
    ++stats.nodes;
    if (n.isParameter()) {
      if (depth == 0)
        for (auto &o : n.outputs) {
          o.fact.shape = identifyAnonymous(o.fact.shape, symbols);
          if (auto over = sizeOverflow(o.fact))
            diags.error(n.name, n.opType, fmt::format("input '{}': {}", o.name, *over));
        }
      return;
    }
    // A Constant's fact was made with it (Graph::addConstant).
    if (n.isConstant() && n.attrs.has("value")) return;
    if (n.domain.empty() && n.opsetVersion > kNewestOpset && !warnedOpset) {
      warnedOpset = true;
      diags.warning("", "",
                    fmt::format("the model imports opset {} of the default domain; shapeflow knows "
                                "opsets up to {} and applies their rules",
                                n.opsetVersion, kNewestOpset));
    }
    const OpDef *def = run.registry.find(n.domain, n.opType);
    if (!def || !def->infer) {
      ++stats.withoutRule;
      std::string label = n.domain.empty() ? n.opType : n.domain + "." + n.opType;
      if (reported.insert(label).second) {
        stats.opsWithoutRule.push_back(label);
        diags.warning(n.name, n.opType,
                      "no shape rule for op '" + label +
                          "': its outputs are left unknown (reported once per op type)");
      }
      // What the file declares is all there is.
      for (auto &o : n.outputs)
        if (o.declared) o.fact = *o.declared;
      return;
    }
    NodeContext ctx(run, g, origin, n, diags, depth, settling);
    // The symbol table's origin is this node while its rule runs (restored on every exit: a
    // subgraph's node runs inside its owner's rule).
    struct OriginGuard {
      SymbolTable &t;
      std::pair<const std::string *, const std::string *> outer;
      ~OriginGuard() { t.setOrigin(outer.first, outer.second); }
    } guard{run.symbols, run.symbols.origin()};
    run.symbols.setOrigin(&n.name, &n.opType);
    auto facts = def->infer(ctx);
    // After the rule: where it refuses a type itself, its message says more.
    if (facts.ok() && !def->inputTypes.empty() && n.domain.empty())
      checkInputTypes(*def, n, ctx, g, run.registry, diags);
    if (facts.ok() && def->values) def->values(ctx, *facts);
    if (facts.ok() && def->traits.movesElements && !facts->empty() && ctx.numInputs() > 0) {
      Fact &o = (*facts)[0];
      const Fact &in = ctx.input(0);
      if (!o.elements && in.elements && isInteger(o.type)) {
        o.elements = in.elements;
        if (in.elements->reached && !def->traits.keepsElements)
          o.elements = std::make_shared<const ElementBounds>(
              ElementBounds{in.elements->lo, in.elements->hi, false});
      }
    }
    if (depth == 0 && !run.memo.empty()) run.memo.clear();
    if (!facts.ok()) {
      ++stats.failed;
      diags.error(n.name, n.opType, facts.error().message + " (inputs: " + inputSummary(ctx) + ")");
      for (auto &o : n.outputs) o.fact = Fact{};
      return;
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      Fact inferred = i < facts->size() ? std::move((*facts)[i]) : Fact{};
      checkDeclared(n, i, inferred, symbols, diags);
      if (auto over = sizeOverflow(inferred)) {
        ++stats.failed;
        diags.error(n.name, n.opType,
                    fmt::format("output {} ('{}'): {}", i, n.outputs[i].name, *over));
      }
      n.outputs[i].fact = std::move(inferred);
    }
  };

  // Nodes in id order as long as that is a topological order (importers keep the file's order,
  // which ONNX requires to be one): no separate pass over the graph to sort it first. Nodes a
  // few places ahead are prefetched: on graphs larger than the cache, fetching each node's
  // inputs, outputs and attributes (heap blocks the loader made) one miss after another is
  // where the time goes otherwise.
  const size_t count = g.nodes.size();
  uint32_t id = 0;
  for (; id < count; ++id) {
    if (id + kPrefetchAhead < count) prefetchNode(g.nodes[id + kPrefetchAhead]);
    Node &n = g.nodes[id];
    if (n.removed) continue;
    bool ready = true;
    for (const OutletId &in : n.inputs)
      if (in.valid() && (in.node >= id || g.nodes[in.node].removed ||
                         in.slot >= g.nodes[in.node].outputs.size())) {
        ready = false;
        break;
      }
    if (!ready) break;
    inferNode(n);
  }
  if (id < count) {
    // Out of order (or a dangling input, or a cycle, which topologicalOrder reports): the rest
    // in a topological order. Nodes before `id` are done and read only nodes before them.
    auto order = g.topologicalOrder();
    if (!order.ok()) {
      diags.error("", "", order.error().message);
      return stats;
    }
    const std::vector<uint32_t> &ids = *order;
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k + kPrefetchAhead < ids.size()) prefetchNode(g.nodes[ids[k + kPrefetchAhead]]);
      if (ids[k] >= id) inferNode(g.nodes[ids[k]]);
    }
  }
  if (symbols.hasBindings())
    for (auto &n : g.nodes)
      for (auto &o : n.outputs) o.fact = resolved(o.fact, symbols);

  return stats;
}

} // namespace

namespace {

/// A graph input whose rank or element type is unknown: what the backward rules can help with.
bool incomplete(const Fact &f) {
  return f.type == ElementType::Undefined || !f.shape.rankIsStatic();
}

/// `declared` with what the backward sweep found: its element type when unknown, its rank when
/// unknown (the dims the sweep did not fix stay unknown, to become anonymous symbols), its
/// static dims where `declared` has none. Only numbers and types carry over: the sweep's
/// expressions are in the symbols of the round that found them.
Fact applyRefinement(const Fact &declared, const Fact &found) {
  Fact out = declared;
  if (out.type == ElementType::Undefined) out.type = found.type;
  if (!found.shape.rankIsStatic()) return out;
  if (!out.shape.rankIsStatic()) {
    std::vector<Dimension> dims;
    for (const Dimension &d : found.shape.dims())
      dims.push_back(d.isStatic() ? Dimension(d.length()) : Dimension());
    out.shape = PartialShape(std::move(dims));
    return out;
  }
  if (out.shape.size() != found.shape.size()) return out;
  // Only where the declaration names nothing: a named dim the rules fix (N == 3) stays N, so
  // that the forward pass records the requirement with the node behind it.
  for (size_t i = 0; i < out.shape.size(); ++i) {
    const Dimension &d = out.shape[i];
    const bool unnamed = !d.expr() || d.expr()->hasAnonymous;
    if (unnamed && !d.isStatic() && found.shape[i].isStatic() &&
        d.interval().contains(found.shape[i].length()))
      out.shape[i] = Dimension(found.shape[i].length());
  }
  return out;
}

} // namespace

InferStats inferGraph(Graph &g, Diagnostics &diags, const InferOptions &options) {
  ExprScope scope = g.enter();
  const OpRegistry &registry = options.registry ? *options.registry : defaultRegistry();
  // The importer's default: a dimension the model names is a size of at least 1.
  if (g.symbols.defaultRange().lo >= 1) {
    std::vector<std::string> named;
    for (SymbolId s : namedInputSymbols(g)) {
      const std::string &name = symbolInfo(s).name;
      if (!g.symbols.rangeGiven(name) && symbolInfo(s).range.lo == g.symbols.defaultRange().lo)
        named.push_back(name);
    }
    if (!named.empty())
      diags.assumption("", "", fmt::format("the named input dims {} are sizes of at least {} (--dim "
                                           "{}=0.. allows empty tensors)",
                                           fmt::join(named, ", "), g.symbols.defaultRange().lo,
                                           named[0]));
  }
  auto forward = [&](Diagnostics &into) {
    Run run{registry, g.symbols, options, {}, 0, 0, {}};
    InferStats stats = inferIn(run, g, &g, into, 0, true);
    stats.bodyInferences = run.bodyInferences;
    stats.memoHits = run.memoHits;
    return stats;
  };
  bool solve = options.backward == Backward::Always;
  if (options.backward == Backward::Auto)
    for (OutletId in : g.inputs)
      if (g.contains(in) && incomplete(g.fact(in))) solve = true;
  if (!solve) return forward(diags);

  // Backward inference : forward, then every backward rule from the outputs to the
  // inputs; where that tells more of a graph input (its rank, type, a static dim), forward again
  // from the inputs as refined, on the symbol table as it was before, until nothing more comes.
  const SymbolTable table = g.symbols;
  std::vector<Fact> declared, current;
  for (OutletId in : g.inputs) declared.push_back(g.contains(in) ? g.fact(in) : Fact{});
  current = declared;
  Diagnostics round;
  InferStats stats = forward(round);
  for (int k = 0; k < kMaxBackwardRounds; ++k) {
    std::vector<Fact> found = backwardSweep(g, registry);
    bool more = false;
    for (size_t i = 0; i < found.size(); ++i) {
      Fact next = applyRefinement(current[i], found[i]);
      if (refinesInput(current[i], next)) {
        current[i] = std::move(next);
        more = true;
      }
    }
    if (!more) break;
    g.symbols = table;
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (g.contains(g.inputs[i])) g.fact(g.inputs[i]) = current[i];
    round = Diagnostics{};
    stats = forward(round);
  }
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (current[i] != declared[i]) {
      diags.add({Severity::Note, "", "",
                 fmt::format("input '{}' is declared {}; the rules of the ops reading it give {} "
                             "(backward inference)",
                             g.outlet(g.inputs[i]).name, declared[i], current[i])});
    }
  for (const Diagnostic &d : round.list()) diags.add(d);
  return stats;
}

Result<Facts> inferNodeFacts(Graph &g, uint32_t id, const OpRegistry *registry) {
  ExprScope scope = g.enter();
  const OpRegistry &reg = registry ? *registry : defaultRegistry();
  if (id >= g.nodes.size() || g.nodes[id].removed) return errorf("node {} does not exist", id);
  const Node &n = g.nodes[id];
  const OpDef *def = reg.find(n.domain, n.opType);
  if (!def || !def->infer) return errorf("{}: no shape rule", g.nodeLabel(id));
  InferOptions options;
  // On a copy of the symbol table: what the rule learns is not kept.
  SymbolTable symbols = g.symbols;
  Run run{reg, symbols, options, {}, 0, 0, {}};
  Diagnostics diags;
  NodeContext ctx(run, g, &g, n, diags, 0, false);
  auto facts = def->infer(ctx);
  if (!facts.ok()) return errorf("{}: {}", g.nodeLabel(id), facts.error().message);
  if (def->values) def->values(ctx, *facts);
  return facts;
}

} // namespace sf
