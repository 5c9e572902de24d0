// How a dim was derived (see why.h).
#include "shapeflow/report/why.h"

#include "shapeflow/support/format.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace sf {
namespace {

constexpr size_t kMaxSteps = 60; // a derivation is a chain, but a long graph makes it long

std::set<SymbolId> symbolsOfDim(const Dimension &d) {
  std::set<SymbolId> out;
  if (d.expr() && !d.isStatic())
    for (SymbolId s : symbolsOf(d.expr())) out.insert(s);
  return out;
}

std::set<SymbolId> symbolsOfFact(const Fact &f) {
  std::set<SymbolId> out;
  if (f.shape.rankIsStatic())
    for (const Dimension &d : f.shape.dims()) out.merge(symbolsOfDim(d));
  if (f.value)
    for (const Dimension &d : *f.value) out.merge(symbolsOfDim(d));
  return out;
}

bool shares(const std::set<SymbolId> &a, const std::set<SymbolId> &b) {
  for (SymbolId s : a)
    if (b.count(s)) return true;
  return false;
}

struct Explainer {
  const Graph &g;
  const Diagnostics &diags;
  std::ostream &os;
  std::set<uint32_t> shown;
  size_t steps = 0;

  const Diagnostic *errorOf(const Node &n) const {
    for (const Diagnostic &d : diags.list())
      if (d.severity == Severity::Error && d.node == n.name) return &d;
    return nullptr;
  }

  /// The producers of `o` back to the inputs, following the inputs whose facts carry `symbols`
  /// (all non-constant inputs when `symbols` is empty: a number comes from the data path).
  void chain(OutletId o, const std::set<SymbolId> &symbols, int indent,
             std::optional<int64_t> number = std::nullopt) {
    std::string pad(size_t(indent), ' ');
    while (steps++ < kMaxSteps) {
      const Node &n = g.nodes[o.node];
      const Outlet &out = g.outlet(o);
      if (n.isParameter()) {
        os << pad << "'" << out.name << "' is a graph input: " << toString(out.fact) << "\n";
        return;
      }
      if (n.isConstant()) {
        os << pad << "'" << out.name << "' is a constant: " << toString(out.fact) << "\n";
        return;
      }
      if (!shown.insert(o.node).second) {
        os << pad << "'" << out.name << "' (shown above)\n";
        return;
      }
      os << pad << "'" << out.name << "' = " << toString(out.fact) << "    # node '" << n.name
         << "' (" << n.opType << ")\n";
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (!n.inputs[i].valid()) continue;
        const Outlet &in = g.outlet(n.inputs[i]);
        os << pad << "    input " << i << " '" << in.name << "': " << toString(in.fact) << "\n";
      }
      if (const Diagnostic *e = errorOf(n)) {
        os << pad << "    error: " << e->message << "\n";
        // A conflict: each input's derivation, side by side.
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          if (!n.inputs[i].valid() || g.nodes[n.inputs[i].node].isConstant()) continue;
          os << pad << "  derivation of input " << i << ":\n";
          chain(n.inputs[i], symbolsOfFact(g.outlet(n.inputs[i]).fact), indent + 4);
        }
        return;
      }
      // The next step: the input that carries the symbols (the first, when several do), else
      // the first input that is not a constant.
      std::optional<OutletId> next;
      if (number) {
        // A number: the input whose shape holds it (a weight's size, say), constants first.
        auto holds = [&](OutletId in) {
          const Fact &f = g.outlet(in).fact;
          if (!f.shape.rankIsStatic()) return false;
          for (const Dimension &d : f.shape.dims())
            if (d.isStatic() && d.length() == *number) return true;
          return false;
        };
        for (bool constants : {true, false})
          for (OutletId in : n.inputs)
            if (!next && in.valid() && g.nodes[in.node].isConstant() == constants && holds(in)) next = in;
        if (next && g.nodes[next->node].isConstant()) {
          const Outlet &w = g.outlet(*next);
          os << pad << "'" << w.name << "' is a constant: " << toString(w.fact) << "\n";
          return;
        }
      }
      for (OutletId in : n.inputs) {
        if (next) break;
        if (!in.valid() || g.nodes[in.node].isConstant()) continue;
        if (symbols.empty() || shares(symbolsOfFact(g.outlet(in).fact), symbols)) {
          next = in;
          break;
        }
      }
      if (!next) {
        os << pad << "  (from constants and attributes only)\n";
        return;
      }
      o = *next;
    }
    os << pad << "... (stopped after " << kMaxSteps << " steps)\n";
  }
};

} // namespace

Result<void> explainDim(const Graph &g, const Diagnostics &diags, const std::string &spec,
                        std::ostream &os) {
  ExprScope scope = g.enter();
  std::string name = spec;
  std::optional<int64_t> axis;
  if (!spec.empty() && spec.back() == ']') {
    size_t open = spec.rfind('[');
    if (open == std::string::npos) return errorf("'{}': expected TENSOR or TENSOR[AXIS]", spec);
    name = spec.substr(0, open);
    std::string a = spec.substr(open + 1, spec.size() - open - 2);
    try {
      size_t used = 0;
      axis = std::stoll(a, &used);
      if (used != a.size()) throw std::invalid_argument(a);
    } catch (const std::exception &) {
      return errorf("'{}': the axis '{}' is not a number", spec, a);
    }
  }
  auto o = g.findOutlet(name);
  if (!o) return errorf("no tensor named '{}'", name);
  const Fact &f = g.outlet(*o).fact;
  std::set<SymbolId> symbols;
  std::optional<int64_t> number;
  if (axis) {
    if (!f.shape.rankIsStatic())
      return errorf("'{}' has an unknown rank ({}): no axis {}", name, toString(f), *axis);
    int64_t r = int64_t(f.shape.size()), k = *axis < 0 ? *axis + r : *axis;
    if (k < 0 || k >= r) return errorf("'{}' has rank {} ({}): no axis {}", name, r, toString(f), *axis);
    const Dimension &d = f.shape[size_t(k)];
    os << name << "[" << k << "] = " << toString(d) << "\n";
    symbols = symbolsOfDim(d);
    if (d.isStatic()) number = d.length();
  } else {
    os << name << " = " << toString(f) << "\n";
    symbols = symbolsOfFact(f);
  }
  os << "derivation (from the tensor back to the inputs):\n";
  Explainer e{g, diags, os, {}, 0};
  e.chain(*o, symbols, 2, number);
  // What inference required of those symbols, and where.
  std::set<std::string> names;
  for (SymbolId s : symbols)
    if (!symbolInfo(s).name.empty()) names.insert(symbolInfo(s).name);
  bool header = false;
  auto mentions = [&](const SymbolRequirement &r) {
    if (names.count(r.symbol)) return true;
    // `W == H` recorded on W explains a dim that reads H.
    std::string word;
    for (char ch : r.text + " ") {
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
        word += ch;
      } else {
        if (names.count(word)) return true;
        word.clear();
      }
    }
    return false;
  };
  for (const SymbolRequirement &r : g.symbols.requirements()) {
    if (!mentions(r)) continue;
    if (!header) os << "requirements on its symbols:\n", header = true;
    os << "  " << r.text << "    # node '" << r.node << "' (" << r.op << ")\n";
  }
  return success();
}

} // namespace sf
