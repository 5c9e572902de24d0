// What a user says about a model's inputs before inference (`--input x=N,3,H,W`, `--dim N=1..64`
// on the command line; the same through the library and the Python module).
#include "shapeflow/infer/infer.h"

#include "shapeflow/dim/parse.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace sf {
namespace {

std::optional<int64_t> parseInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

} // namespace

Result<InputShape> parseInputShape(const std::string &spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return errorf("--input expects NAME=DIMS, got '{}'", spec);
  return InputShape{spec.substr(0, eq), spec.substr(eq + 1)};
}

Result<InputValue> parseInputValue(const std::string &spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return errorf("--value expects NAME=ELEMENTS, got '{}'", spec);
  return InputValue{spec.substr(0, eq), spec.substr(eq + 1)};
}

Result<DimBound> parseDimBound(const std::string &spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return errorf("--dim expects SYM=LO..HI, got '{}'", spec);
  std::string name = spec.substr(0, eq), range = spec.substr(eq + 1);
  auto dots = range.find("..");
  Interval r{0, kInf};
  auto bad = [&] { return errorf("--dim expects SYM=LO..HI with integers, got '{}'", spec); };
  if (dots == std::string::npos) {
    auto v = parseInt(range);
    if (!v) return bad();
    r.lo = r.hi = *v;
  } else {
    std::string_view lo = std::string_view(range).substr(0, dots),
                     hi = std::string_view(range).substr(dots + 2);
    auto l = lo.empty() ? std::optional<int64_t>(0) : parseInt(lo);
    auto h = hi.empty() ? std::optional<int64_t>(kInf) : parseInt(hi);
    if (!l || !h) return bad();
    r = {*l, *h};
  }
  if (r.lo < 0 || r.lo > r.hi) return errorf("--dim {}: empty or negative range", spec);
  return DimBound{name, r};
}

namespace {

Outlet *findInput(Graph &g, const std::string &name) {
  for (const OutletId &o : g.inputs)
    if (g.outlet(o).name == name) return &g.outlet(o);
  return nullptr;
}

std::string inputNames(const Graph &g) {
  std::string names;
  for (const OutletId &o : g.inputs) names += " " + g.outlet(o).name;
  return names;
}

/// The value of an integer input: each element parsed as a dim; the shape must agree.
Result<void> applyValue(Graph &g, const InputValue &in) {
  Outlet *target = findInput(g, in.name);
  if (!target)
    return errorf("--value {}={}: the graph has no input '{}' (inputs:{})", in.name, in.elements, in.name,
                  inputNames(g));
  Fact &f = target->fact;
  if (f.type != ElementType::Undefined && !isInteger(f.type))
    return errorf("--value {}={}: input '{}' is {}, not an integer tensor", in.name, in.elements, in.name, f);
  // Elements split at top-level commas; a negative integer (a Reshape target's -1) is a value,
  // everything else a dim.
  std::string_view text = in.elements;
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  std::vector<Dimension> value;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && (text[i] == '(' || text[i] == '{')) ++depth;
    if (i < text.size() && (text[i] == ')' || text[i] == '}')) --depth;
    if (i < text.size() && (text[i] != ',' || depth > 0)) continue;
    std::string_view e = text.substr(start, i - start);
    while (!e.empty() && e.front() == ' ') e.remove_prefix(1);
    while (!e.empty() && e.back() == ' ') e.remove_suffix(1);
    start = i + 1;
    if (e.empty() && text.empty()) break;
    if (auto v = parseInt(e); v && *v < 0) {
      value.push_back(Dimension::constantValue(*v));
      continue;
    }
    auto d = parseDimension(e, g.symbols);
    if (!d.ok()) return errorf("--value {}={}: {}", in.name, in.elements, d.error().message);
    value.push_back(*d);
  }
  // `k=3` for a scalar input, `k=[3]` or `k=3` for a one-element vector.
  bool scalar = f.shape.rankIsStatic() && f.shape.size() == 0;
  if (f.shape.rankIsStatic() && f.shape.size() > 1)
    return errorf("--value {}={}: input '{}' is {}; values are for rank 0 or 1", in.name, in.elements, in.name, f);
  if (scalar && value.size() != 1)
    return errorf("--value {}={}: input '{}' is a scalar ({})", in.name, in.elements, in.name, f);
  if (!scalar) {
    Dimension len(int64_t(value.size()));
    if (f.shape.rankIsStatic()) {
      auto m = Dimension::merge(f.shape[0], len);
      if (!m)
        return errorf("--value {}={}: {} elements for input '{}' ({})", in.name, in.elements, value.size(), in.name, f);
      f.shape = PartialShape({*m});
    } else {
      f.shape = PartialShape({len});
    }
  }
  if (f.type == ElementType::Undefined) f.type = ElementType::I64;
  f.value = std::move(value);
  return success();
}

} // namespace

/// The axes where `given` admits sizes other than the static dims `declared` states.
std::vector<size_t> contradictedAxes(const PartialShape &declared, const PartialShape &given) {
  std::vector<size_t> axes;
  if (!declared.rankIsStatic() || !given.rankIsStatic() || declared.size() != given.size()) return axes;
  for (size_t i = 0; i < declared.size(); ++i) {
    const Dimension &d = declared[i], &x = given[i];
    if (d.isStatic() && !(x.isStatic() && x.length() == d.length())) axes.push_back(i);
  }
  return axes;
}

static std::string namedSizesText(const Graph &g, const std::vector<std::string> &names) {
  if (!names.empty()) return fmt::format("the inputs' named sizes: {}", fmt::join(names, ", "));
  std::string inputs;
  for (const OutletId &o : g.inputs)
    if (!g.nodes[o.node].isCaptured())
      inputs += fmt::format("{}{}: {}", inputs.empty() ? "" : ", ", g.outlet(o).name, g.outlet(o).fact);
  return "the inputs have no named sizes: " + inputs;
}

std::vector<SymbolId> namedInputSymbols(const Graph &g) {
  ExprScope scope = g.enter();
  std::vector<SymbolId> out;
  std::set<std::string> seen;
  for (const OutletId &o : g.inputs) {
    const Fact &f = g.outlet(o).fact;
    if (!f.shape.rankIsStatic()) continue;
    for (const Dimension &d : f.shape.dims()) {
      if (d.isStatic() || !d.expr()) continue;
      for (SymbolId s : symbolsOf(d.expr()))
        if (!symbolInfo(s).name.empty() && seen.insert(symbolInfo(s).name).second) out.push_back(s);
    }
  }
  return out;
}

std::vector<std::string> admitEmptySizes(Graph &g, const std::map<std::string, Shape> &shapes) {
  ExprScope scope = g.enter();
  std::vector<std::string> widened;
  for (const OutletId &o : g.inputs) {
    const Outlet &in = g.outlet(o);
    auto it = shapes.find(in.name);
    if (it == shapes.end() || !in.fact.shape.rankIsStatic() || in.fact.shape.size() != it->second.size()) continue;
    for (size_t i = 0; i < it->second.size(); ++i) {
      const Dimension &d = in.fact.shape[i];
      if (it->second[i] != 0 || d.isStatic() || !d.expr() || !isSymbol(d.expr())) continue;
      const SymbolId s = d.expr()->sym;
      const std::string &name = symbolInfo(s).name;
      if (name.empty() || g.symbols.rangeGiven(name) || symbolInfo(s).range.lo < 1) continue;
      if (std::find(widened.begin(), widened.end(), name) != widened.end()) continue;
      if (g.symbols.setRange(name, Interval{0, symbolInfo(s).range.hi}).ok()) widened.push_back(name);
    }
  }
  return widened;
}

Result<void> applyInputs(Graph &g, const InferOptions &options, Diagnostics *diags) {
  ExprScope scope = g.enter();
  for (const DimBound &d : options.dims)
    SF_TRY(g.symbols.setRange(d.symbol, d.range));
  for (const InputShape &in : options.inputs) {
    Outlet *target = nullptr;
    for (const OutletId &o : g.inputs)
      if (g.outlet(o).name == in.name) target = &g.outlet(o);
    if (!target) {
      std::string names;
      for (const OutletId &o : g.inputs)
        names += " " + g.outlet(o).name;
      return errorf("--input {}={}: the graph has no input '{}' (inputs:{})", in.name, in.dims,
                    in.name, names);
    }
    std::string dims = in.dims;
    if (dims.empty() || dims[0] != '[') dims = "[" + dims + "]";
    auto shape = parsePartialShape(dims, g.symbols);
    if (!shape.ok()) return shape.takeError();
    const PartialShape &declared = target->fact.shape;
    if (declared.rankIsStatic() && shape->rankIsStatic() && declared.size() != shape->size())
      return errorf("--input {}={}: input '{}' has rank {} ({})", in.name, in.dims, in.name,
                    declared.size(), declared);
    if (auto axes = contradictedAxes(declared, *shape); diags && !axes.empty()) {
      std::string which;
      for (size_t a : axes)
        which += fmt::format("{}axis {} ({} declared, {} given)", which.empty() ? "" : ", ", a,
                             declared[a], (*shape)[a]);
      diags->warning("", "",
                     fmt::format("--input {}={}: input '{}' is declared {}; the given shape differs "
                                 "at {}: runtimes such as onnxruntime reject inputs whose sizes "
                                 "contradict the model's declared dims (facts below are for the "
                                 "given shape)",
                                 in.name, in.dims, in.name, target->fact, which));
    }
    target->fact.shape = std::move(*shape);
  }
  for (const InputValue &v : options.values) SF_TRY(applyValue(g, v));
  // A range for a size no input has is a mistake (a misspelt or stale name), not a no-op.
  if (!options.dims.empty()) {
    std::vector<std::string> known; // in the order the inputs name them
    auto add = [&](SymbolId s) {
      const std::string &name = symbolInfo(s).name;
      if (!name.empty() && std::find(known.begin(), known.end(), name) == known.end()) known.push_back(name);
    };
    for (SymbolId s : namedInputSymbols(g)) add(s);
    for (const OutletId &o : g.inputs)
      if (const auto &v = g.outlet(o).fact.value)
        for (const Dimension &d : *v)
          if (d.expr())
            for (SymbolId s : symbolsOf(d.expr())) add(s);
    // Sizes the model's declared types name inside it (an op without a rule whose output is
    // declared f16[N,16,P,Q]) are bounded the same way: a plan asks for their bounds.
    std::vector<std::string> declared = known;
    for (const Node &n : g.nodes)
      for (const Outlet &out : n.outputs)
        for (const Fact *f : {&out.fact, out.declared.get()})
          if (f && f->shape.rankIsStatic())
            for (const Dimension &d : f->shape.dims())
              if (d.expr() && !d.isStatic())
                for (SymbolId s : symbolsOf(d.expr()))
                  if (const std::string &name = symbolInfo(s).name;
                      !name.empty() && std::find(declared.begin(), declared.end(), name) == declared.end())
                    declared.push_back(name);
    for (const DimBound &d : options.dims)
      if (std::find(declared.begin(), declared.end(), d.symbol) == declared.end())
        return errorf("a range is given for '{}' ({}), but no input of the model has a size named '{}' ({})",
                      d.symbol, toString(d.range), d.symbol, namedSizesText(g, known));
  }
  return success();
}

} // namespace sf
