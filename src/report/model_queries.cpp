// Questions that take more than one inference of a model (model_queries.h).
#include "shapeflow/report/model_queries.h"

#include "shapeflow/dim/parse.h"
#include "shapeflow/report/report.h"
#include "shapeflow/support/format.h"

#include <set>

namespace sf {
namespace {

/// The inputs' shapes at a binding's concrete sizes, as `--input` gives them.
Result<std::vector<InputShape>> shapesAt(const Graph &g, const Binding &at) {
  ExprScope scope = g.enter();
  std::vector<InputShape> shapes;
  for (OutletId o : g.inputs) {
    const Outlet &in = g.outlet(o);
    if (g.nodes[o.node].isCaptured() || (in.fact.constant && in.fact.constant->hasData()) || !in.fact.shape.rankIsStatic())
      continue;
    std::vector<std::string> dims;
    for (const Dimension &d : in.fact.shape.dims()) {
      if (d.isStatic()) {
        dims.push_back(std::to_string(d.length()));
        continue;
      }
      auto v = evaluateByName(d, at);
      if (!v) return errorf("input '{}' ({}) has a size the row does not give", in.name, in.fact);
      dims.push_back(std::to_string(*v));
    }
    shapes.push_back({in.name, fmt::format("{}", fmt::join(dims, ","))});
  }
  return shapes;
}

/// `options` with each of `names` ranging from 0.
InferOptions fromZero(InferOptions options, const std::vector<std::string> &names) {
  for (const std::string &name : names) options.dims.push_back(DimBound{name, Interval{0, kInf}});
  return options;
}

/// `SYM=EXPR` over the contract's sizes.
Result<std::pair<std::string, Expr>> parseTie(const std::string &spec, Graph &g, const Contract &c) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return errorf("--tie expects SYM=EXPR, got '{}'", spec);
  ExprScope scope = g.enter();
  std::set<std::string> known;
  for (const Contract::Symbol &s : c.symbols) known.insert(s.name);
  std::string name = spec.substr(0, eq);
  if (!known.count(name)) return errorf("--tie {}: the model's inputs have no size named '{}'", spec, name);
  auto d = parseDimension(spec.substr(eq + 1), g.symbols);
  if (!d.ok()) return errorf("--tie {}: {}", spec, d.error().message);
  if (d->expr())
    for (SymbolId s : symbolsOf(d->expr()))
      if (!known.count(symbolInfo(s).name))
        return errorf("--tie {}: '{}' is not a size of the model's inputs", spec, symbolInfo(s).name);
  return std::pair{name, d->isStatic() ? constant(d->length()) : d->expr()};
}

/// Dims of the main graph's tensors that inference left unknown (`?`, or an unknown rank).
size_t unknownDims(const Graph &g) {
  ExprScope scope = g.enter();
  size_t n = 0;
  for (const Node &node : g.nodes) {
    if (!isNodeOutput(node)) continue;
    for (const Outlet &o : node.outputs) {
      if (!o.fact.shape.rankIsStatic()) {
        ++n;
        continue;
      }
      for (const Dimension &d : o.fact.shape.dims()) n += !d.isStatic() && !d.expr();
    }
  }
  return n;
}

} // namespace

Result<ContractedModel> inferWithContract(const InferModel &infer, const InferOptions &options, size_t probedNodes) {
  ContractBasis basis;
  size_t nodes = 0;
  SF_ASSIGN(InferredModel m, infer(options, [&](Graph &g) {
    basis = contractBasis(g);
    nodes = g.liveNodeCount();
  }));
  Contract c = makeContract(m.graph, m.diags, basis);
  if (nodes > probedNodes) return ContractedModel{std::move(m), std::move(c)};
  // A named size is assumed at least 1 while inferring; 0 is admitted where the model infers
  // with that size alone at 0 (the first step of a decoder: an empty cache), and as a range
  // from 0 leaves no dim unknown that the model knows from 1 (a slice from -S is all of T at
  // S = 0 and min(S, T) above: one dim covers both only as `?`, which hides what the model
  // needs of S).
  const Contract assumed = c;
  const size_t unknownAbove = unknownDims(m.graph);
  // The sizes inference solved from `names` (batch_x_heads == 4*batch): at 0 with them, not at
  // their assumed minimum of 1.
  auto withSolved = [&](std::vector<std::string> names) {
    std::optional<ExprScope> scope;
    if (assumed.context) scope.emplace(assumed.context);
    const size_t given = names.size();
    for (const Contract::Symbol &s : assumed.symbols) {
      if (!s.solvedFromAssumed) continue;
      for (SymbolId id : symbolsOf(s.solved))
        if (std::find(names.begin(), names.begin() + given, symbolInfo(id).name) != names.begin() + given) {
          names.push_back(s.name);
          break;
        }
    }
    return names;
  };
  auto infersFromZero = [&](const std::vector<std::string> &names, const std::function<void(Graph &)> &observe) {
    auto p = infer(fromZero(options, withSolved(names)), observe);
    bool ok = p.ok() && !p->diags.hasErrors() && unknownDims(p->graph) <= unknownAbove;
    return std::pair{ok, std::move(p)};
  };
  std::vector<std::string> lowered = admitZeroSizes(c, [&](const std::string &name) {
    InferOptions probe = fromZero(options, withSolved({name}));
    probe.dims.erase(probe.dims.begin() + ptrdiff_t(options.dims.size()));
    probe.dims.push_back(DimBound{name, Interval{0, 0}});
    auto p = infer(probe, {});
    return p.ok() && !p->diags.hasErrors() && infersFromZero({name}, {}).first;
  });
  if (lowered.empty()) return ContractedModel{std::move(m), std::move(c)};
  // Each alone at 0 infers; together they may not (no new tokens and an empty cache): the model
  // inferred again with all of them from 0 states what they need jointly (`S + P >= 1`), and
  // its facts hold at 0.
  ContractBasis joint;
  auto [jointOk, again] = infersFromZero(lowered, [&](Graph &g) { joint = contractBasis(g); });
  if (!jointOk) return ContractedModel{std::move(m), assumed};
  Contract jc = makeContract(again->graph, again->diags, joint);
  jc.assumedMinimum = c.assumedMinimum;
  return ContractedModel{std::move(*again), std::move(jc), lowered};
}

Result<InferredModel> inferAdmittingZero(const InferModel &infer, const InferOptions &options,
                                         std::vector<std::string> *admitted) {
  SF_ASSIGN(ContractedModel m, inferWithContract(infer, options, kProbedNodes));
  std::vector<std::string> names;
  for (const std::string &name : m.contract.assumedMinimum)
    for (const Contract::Symbol &s : m.contract.symbols)
      if (s.name == name && s.range.lo == 0) names.push_back(name);
  if (admitted) *admitted = names;
  if (names.empty()) return std::move(m.model);
  // Where inferWithContract inferred the model again with these sizes from 0, that is the model.
  InferredModel again = std::move(m.model);
  if (m.fromZero != names) {
    SF_ASSIGN(again, infer(fromZero(options, names), {}));
  }
  again.diags.add({Severity::Note, "", "",
                   fmt::format("{} inferred from 0: the model infers with {} at 0 and meets every requirement "
                               "there (shapeflow contract)",
                               fmt::join(names, ", "), names.size() == 1 ? "it" : "each alone")});
  return again;
}

InferOptions withEmptySizes(InferOptions options, const std::vector<Binding> &bindings) {
  std::set<std::string> ranged;
  for (const DimBound &d : options.dims) ranged.insert(d.symbol);
  for (const Binding &b : bindings)
    for (const auto &[name, v] : b)
      if (v == 0 && ranged.insert(name).second) options.dims.push_back(DimBound{name, Interval{0, kInf}});
  return options;
}

Result<MemoryReport> modelMemory(const InferModel &infer, const InferOptions &base, const MemoryRequest &request,
                                 const std::string &label) {
  // A size of 0 in a row (an empty cache) is inferred from 0.
  SF_ASSIGN(ContractedModel m, inferWithContract(infer, withEmptySizes(base, request.at)));
  MemoryOptions options;
  options.at = request.at;
  options.fitSymbol = request.fitSymbol;
  options.budget = request.budget;
  options.fitPart = request.fitPart;
  options.align = request.align;
  for (const std::string &spec : request.ties) {
    SF_ASSIGN(auto tie, parseTie(spec, m.model.graph, m.contract));
    options.ties.push_back(std::move(tie));
  }
  if (m.model.diags.hasErrors()) {
    std::string first;
    for (const Diagnostic &d : m.model.diags.list())
      if (d.severity == Severity::Error && first.empty()) first = format(d);
    return errorf("the model has errors at these sizes: {}", first);
  }
  // A row the symbolic parts give no number for: the model inferred again at the row's sizes.
  options.inferAt = [&](const Binding &at) -> Result<Graph> {
    InferOptions concrete = base;
    concrete.dims.clear();
    SF_ASSIGN(auto shapes, shapesAt(m.model.graph, at));
    std::vector<std::string> given;
    for (InputShape &s : shapes) given.push_back(s.name + "=" + s.dims), concrete.inputs.push_back(std::move(s));
    SF_ASSIGN(InferredModel c, infer(concrete, {}));
    if (c.diags.hasErrors()) return errorf("the model has errors at the sizes {}", fmt::join(given, " "));
    return std::move(c.graph);
  };
  return memoryReport(m.model.graph, m.contract, label, options);
}

} // namespace sf
