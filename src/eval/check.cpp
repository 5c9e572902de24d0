// The self-check of the inference (eval/check.h).
#include "shapeflow/eval/check.h"

#include "shapeflow/support/format.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

namespace sf::eval {
namespace {

/// A symbol's value at the sample's binding (nullopt where the binding does not say).
using Lookup = std::function<std::optional<int64_t>(SymbolId)>;

/// The shape of a graph input at the binding; the error says why it has none.
Result<Shape> inputShape(const Outlet &in, const Lookup &lookup) {
  if (!in.fact.shape.rankIsStatic() || in.fact.type == ElementType::Undefined)
    return errorf("input '{}' is {}: its rank or type is unknown", in.name, in.fact);
  Shape shape;
  for (const Dimension &d : in.fact.shape.dims()) {
    if (d.isStatic()) {
      shape.push_back(d.length());
      continue;
    }
    auto v = d.expr() ? evaluate(d.expr(), lookup) : Result<int64_t>(makeError("no expression"));
    if (!v.ok()) return errorf("input '{}' ({}): a dim is not bound", in.name, in.fact);
    shape.push_back(*v);
  }
  return shape;
}

/// Nothing is made past the memory budget (an input of 10^9 elements stops the sample).
Result<void> withinBudget(const Outlet &in, const Shape &shape, int64_t maxMemory) {
  int64_t elements = 1;
  for (int64_t d : shape) elements = d > 0 && elements > (int64_t(1) << 40) / d ? (int64_t(1) << 40) : elements * d;
  int64_t budget = maxMemory > 0 ? maxMemory : int64_t(1) << 30;
  if (elements * int64_t(std::max<size_t>(elementSize(in.fact.type), 8)) > budget)
    return errorf("input '{}' of shape {} is larger than the memory budget", in.name, toString(shape));
  return success();
}

/// The elements of a graph input: floats random; integers 0 (a valid token id, type id or
/// index) and 1 where the name says mask; bools true.
Result<Tensor> sampleInput(const Outlet &in, const Shape &shape, const Lookup &lookup, uint64_t seed) {
  if (in.fact.value && !isFloat(in.fact.type)) {
    // A declared value (`k: i64[1] = [?{2..9}]`): each element where its fact says, at the
    // binding, else the lowest value its bounds allow.
    std::vector<double> v;
    for (const Dimension &d : *in.fact.value) {
      auto e = d.isStatic() ? Result<int64_t>(d.length())
               : d.expr() ? evaluate(d.expr(), lookup) : Result<int64_t>(makeError(""));
      v.push_back(double(e.ok() ? *e : d.minLength()));
    }
    return Tensor::fromDoubles(in.fact.type, shape, v);
  }
  if (isFloat(in.fact.type)) return randomTensor(in.fact.type, shape, seed);
  std::string lower = in.name;
  for (char &c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  double fill = in.fact.type == ElementType::Bool || lower.find("mask") != std::string::npos ? 1 : 0;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return Tensor::fromDoubles(in.fact.type, shape, std::vector<double>(static_cast<size_t>(count), fill));
}

/// Inputs of the bound sizes, random elements, for sample k; the error says why there are none.
Result<std::map<std::string, Tensor>> sampleInputs(const Graph &g, const CheckOptions &options, size_t k,
                                                   const Lookup &lookup) {
  std::map<std::string, Tensor> inputs;
  for (OutletId o : g.inputs) {
    const Outlet &in = g.outlet(o);
    if (in.fact.constant && in.fact.constant->hasData()) continue;
    SF_ASSIGN(Shape shape, inputShape(in, lookup));
    SF_TRY(withinBudget(in, shape, options.maxMemory));
    auto t = sampleInput(in, shape, lookup, options.seed + k * 131 + inputs.size());
    if (!t.ok()) return makeError(t.error().message);
    inputs[in.name] = std::move(*t);
  }
  return inputs;
}

/// Compares a tensor the run made with its inferred fact, noting a mismatch in `out`; a bare
/// symbol no input binds, in the main graph, is bound in `values` from the run.
void compareWithFact(const Graph &g, const Node &n, size_t slot, const Tensor &t, SampleOutcome &out,
                     std::map<SymbolId, int64_t> &values, const Lookup &lookup) {
  const Fact &f = n.outputs[slot].fact;
  bool main = n.id < g.nodes.size() && &g.nodes[n.id] == &n;
  ++out.tensors;
  auto mismatch = [&](const std::string &why) {
    if (out.mismatches.size() < 50)
      out.mismatches.push_back(fmt::format("node '{}' ({}) output {} ('{}'): inferred {}, actual {}{}: {}",
                                           n.name, n.opType, slot, n.outputs[slot].name, f,
                                           shortName(t.type()), toString(t.shape()), why));
  };
  if (f.type != ElementType::Undefined && f.type != t.type()) return mismatch("element types differ");
  if (!f.shape.rankIsStatic()) return;
  if (f.shape.size() != t.shape().size()) return mismatch("ranks differ");
  for (size_t i = 0; i < t.shape().size(); ++i) {
    const Dimension &d = f.shape[i];
    int64_t v = t.shape()[i];
    if (d.isStatic()) {
      if (d.length() != v) return mismatch(fmt::format("dim {} is {}, not {}", i, v, d.length()));
      continue;
    }
    if (v < d.minLength() || (d.hasUpperBound() && v > d.maxLength()))
      return mismatch(fmt::format("dim {} is {}, outside {}", i, v, toString(d.interval())));
    if (!d.expr()) continue;
    // A bare symbol no input binds, in the main graph: the data decides it; bound here.
    if (main && d.expr()->kind == ExprKind::Sym && !values.count(d.expr()->sym) &&
        !lookup(d.expr()->sym)) {
      values[d.expr()->sym] = v;
      continue;
    }
    bool unbound = false;
    auto e = evaluate(d.expr(), [&](SymbolId s) -> std::optional<int64_t> {
      if (auto it = values.find(s); it != values.end()) return it->second;
      auto x = lookup(s);
      if (!x) unbound = true;
      return x;
    });
    if (unbound) continue; // bounds checked above
    if (!e.ok()) continue;
    if (*e != v) return mismatch(fmt::format("dim {} is {}, {} gives {}", i, v, d, *e));
  }
}

/// Whether every graph input at the binding has a shape within the memory budget.
bool inputsFit(const Graph &g, const CheckOptions &options, const Lookup &lookup) {
  for (OutletId o : g.inputs) {
    const Outlet &in = g.outlet(o);
    if (in.fact.constant && in.fact.constant->hasData()) continue;
    auto shape = inputShape(in, lookup);
    if (shape.ok() && !withinBudget(in, *shape, options.maxMemory).ok()) return false;
  }
  return true;
}

/// A drawn binding whose inputs exceed the memory budget (a video model's N x T x H x W drawn up
/// to 64 above each minimum), its free sizes halved towards their minimums until they fit, where
/// the smaller binding still meets the model's requirements; else the binding as it was (the
/// sample then stops and counts as not run).
Binding fittedToBudget(const Graph &g, const CheckOptions &options, const InputDomain &domain, Binding b) {
  auto fits = [&](const Binding &x) {
    return inputsFit(g, options, [&](SymbolId s) { return domain.valueAt(x, s); });
  };
  if (fits(b)) return b;
  Binding smaller = b;
  for (int round = 0; round < 16; ++round) {
    bool moved = false;
    for (const InputDomain::Symbol &sym : domain.symbols) {
      auto it = smaller.find(sym.key);
      if (sym.solved || it == smaller.end() || it->second <= sym.range.lo) continue;
      it->second = sym.range.lo + (it->second - sym.range.lo) / 2;
      moved = true;
    }
    if (!moved) break;
    if (!domain.breaks(smaller) && fits(smaller)) return smaller;
  }
  return b;
}

} // namespace

Result<CheckResult> checkInference(const Graph &g, const CheckOptions &options) {
  ExprScope scope = g.enter();
  CheckResult result;
  const InputDomain domain = inputDomain(g);
  std::vector<Binding> bindings(options.bindings.begin(), options.bindings.end());
  if (bindings.empty()) {
    auto drawn = domain.draw(std::max<size_t>(options.samples, 1), options.seed);
    bindings = std::move(drawn.bindings);
    for (Binding &b : bindings) b = fittedToBudget(g, options, domain, std::move(b));
    result.requested = std::max<size_t>(options.samples, 1);
    result.drawFailure = std::move(drawn.why);
  } else {
    result.requested = bindings.size();
    for (const Binding &b : bindings) SF_TRY(domain.knows(b));
  }
  for (size_t k = 0; k < bindings.size(); ++k) {
    SampleOutcome out;
    out.binding = bindings[k];
    Lookup lookup = [&](SymbolId s) { return domain.valueAt(out.binding, s); };
    if (auto broken = domain.breaks(out.binding)) {
      out.error = "the sizes break a requirement of the model: " + *broken;
      result.samples.push_back(std::move(out));
      continue;
    }
    std::map<SymbolId, int64_t> values; // sizes the data decides, bound from the run
    auto inputs = sampleInputs(g, options, k, lookup);
    if (inputs.ok()) {
      RunOptions ro;
      ro.maxMemory = options.maxMemory;
      ro.observe = [&](const Node &n, size_t slot, const Tensor &t) {
        compareWithFact(g, n, slot, t, out, values, lookup);
      };
      auto r = run(g, *inputs, ro);
      if (r.ok()) out.ran = true;
      else out.error = r.error().message;
    } else {
      out.error = inputs.error().message;
    }
    result.samples.push_back(std::move(out));
  }
  return result;
}

} // namespace sf::eval
