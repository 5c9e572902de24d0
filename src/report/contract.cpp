// The input contract (see contract.h).
#include "shapeflow/report/contract.h"

#include "shapeflow/infer/infer.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace sf {
namespace {

bool mentionsSymbol(const Expr &e, SymbolId s) {
  for (SymbolId x : symbolsOf(e))
    if (x == s) return true;
  return false;
}

std::string rangeText(const std::string &name, Interval r) {
  if (r.lo == r.hi) return name + " == " + std::to_string(r.lo);
  if (r.hi == kInf) return name + " >= " + std::to_string(r.lo);
  return std::to_string(r.lo) + " <= " + name + " <= " + std::to_string(r.hi);
}

} // namespace

ContractBasis contractBasis(const Graph &g) {
  ExprScope scope = g.enter();
  ContractBasis b;
  for (OutletId o : g.inputs) {
    const Outlet &in = g.outlet(o);
    if (!in.fact.shape.rankIsStatic()) continue;
    for (size_t axis = 0; axis < in.fact.shape.size(); ++axis)
      if (in.fact.shape[axis].isStatic())
        b.fixed.push_back({in.name, axis, in.fact.shape[axis].length()});
  }
  for (SymbolId s : namedInputSymbols(g)) b.symbols.push_back(symbolInfo(s).name);
  return b;
}

Contract makeContract(const Graph &g, const Diagnostics &diags, const ContractBasis &basis) {
  ExprScope scope = g.enter();
  Contract c;
  c.context = g.context;
  c.fixed = basis.fixed;
  const std::vector<std::string> &names = basis.symbols;
  std::set<std::string> seen(names.begin(), names.end());
  for (const std::string &name : names) {
    auto id = g.symbols.find(name);
    if (!id) continue;
    Expr e = g.symbols.resolveSymbol(*id);
    Contract::Symbol s{name, bounds(e), "", nullptr};
    if (!(isSymbol(e) && symbolInfo(e->sym).name == name)) s.equals = toString(e), s.solved = e;
    s.solvedFromAssumed = s.solved && g.symbols.defaultRange().lo > 0 && !g.symbols.rangeGiven(name);
    if (!s.solved && s.range.lo == g.symbols.defaultRange().lo && s.range.lo > 0 && !g.symbols.rangeGiven(name))
      c.assumedMinimum.push_back(name);
    c.symbols.push_back(std::move(s));
  }
  for (const SymbolRequirement &r : g.symbols.requirements())
    if (seen.count(r.symbol)) c.requirements.push_back(r);
  for (const Diagnostic &d : diags.list())
    if (d.severity == Severity::Error) c.errors.push_back(d);
  return c;
}

bool Contract::tiedByRequirement(const std::string &name) const {
  std::optional<ExprScope> scope;
  if (context) scope.emplace(context);
  for (const SymbolRequirement &r : requirements)
    if ((r.kind == Condition::Equal || r.kind == Condition::Broadcast) && r.a && r.b)
      for (auto [side, other] : {std::pair{r.a, r.b}, std::pair{r.b, r.a}})
        if (isSymbol(side) && symbolInfo(side->sym).name == name && !mentionsSymbol(other, side->sym)) return true;
  return false;
}

std::map<std::string, int64_t> Contract::tied(std::map<std::string, int64_t> b) const {
  std::optional<ExprScope> scope;
  if (context) scope.emplace(context);
  auto exprAt = [&](const Expr &e) { return evaluateByName(e, b); };
  for (size_t round = 0; round <= symbols.size(); ++round) {
    bool changed = false;
    for (const Symbol &s : symbols)
      if (s.solved && !b.count(s.name))
        if (auto v = exprAt(s.solved)) b[s.name] = *v, changed = true;
    for (const SymbolRequirement &r : requirements) {
      if ((r.kind != Condition::Equal && r.kind != Condition::Broadcast) || !r.a || !r.b) continue;
      for (auto [side, other] : {std::pair{r.a, r.b}, std::pair{r.b, r.a}}) {
        if (!isSymbol(side) || symbolInfo(side->sym).name.empty() || b.count(symbolInfo(side->sym).name) ||
            mentionsSymbol(other, side->sym))
          continue;
        if (auto v = exprAt(other); v && *v >= 0) {
          b[symbolInfo(side->sym).name] = *v, changed = true;
          break;
        }
      }
    }
    if (!changed) break;
  }
  return b;
}

std::vector<std::string> admitZeroSizes(Contract &c, const std::function<bool(const std::string &)> &infersAtZero) {
  std::vector<std::string> lowered;
  if (!c.errors.empty()) return lowered;
  std::optional<ExprScope> scope;
  if (c.context) scope.emplace(c.context);
  const Contract original = c;
  // Every requirement that mentions the symbol must hold with the symbol at 0, the others free
  // at their minimum and a few above it and the sizes the requirements tie to them following
  // them (a mask length of P + S); a requirement that divides by the symbol has no answer at 0,
  // not a yes. Only where the others' sizes meet it with the symbol at 1 does 0 decide.
  auto holdsAtZero = [&](const std::string &name) {
    // The contract with the symbol from 0 and only the requirements that mention it (the others
    // do not change with it).
    Contract widened = original;
    for (Contract::Symbol &s : widened.symbols) {
      if (s.name == name) s.range.lo = 0;
      // A size inference solved (T == S + P, batch_x_heads == 4*batch) has the range its
      // solution took from the others' assumed minimums (T >= 2), and its own minimum of 1 is an
      // assumption too: the joint inference from 0 states what it needs.
      if (s.solvedFromAssumed) s.range.lo = 0;
    }
    widened.requirements.clear();
    for (const SymbolRequirement &r : original.requirements) {
      bool mentions = false;
      for (const Expr &e : {r.a, r.b})
        if (e)
          for (SymbolId id : symbolsOf(e)) mentions |= symbolInfo(id).name == name;
      if (mentions) widened.requirements.push_back(r);
    }
    for (int64_t above : {0, 1, 6}) {
      auto at = [&](int64_t v) {
        std::map<std::string, int64_t> free;
        for (const Contract::Symbol &s : original.symbols)
          if (!s.solved && (s.name == name || !original.tiedByRequirement(s.name)))
            free[s.name] = s.name == name ? v : s.range.lo + above;
        auto full = original.tied(free);
        for (const Contract::Symbol &s : original.symbols) // a tie that did not decide: free too
          if (!s.solved && !full.count(s.name)) full[s.name] = s.range.lo + above;
        full = original.tied(std::move(full));
        return std::vector<std::pair<std::string, int64_t>>(full.begin(), full.end());
      };
      if (!widened.broken(at(1), Contract::Undecided::Breaks) && widened.broken(at(0), Contract::Undecided::Breaks))
        return false;
    }
    return true;
  };
  for (const std::string &name : original.assumedMinimum)
    if (holdsAtZero(name) && infersAtZero(name))
      for (Contract::Symbol &s : c.symbols)
        if (s.name == name) s.range.lo = 0, lowered.push_back(name);
  return lowered;
}

std::vector<std::string> Contract::summary() const {
  std::vector<std::string> lines;
  for (const Fixed &f : fixed)
    lines.push_back(fmt::format("{}[{}] == {} (declared)", f.input, f.axis, f.value));
  for (const Symbol &s : symbols)
    lines.push_back(s.equals.empty() ? rangeText(s.name, s.range) : s.name + " == " + s.equals);
  for (const SymbolRequirement &r : requirements)
    if (r.kind != Condition::None && std::find(lines.begin(), lines.end(), r.text) == lines.end())
      lines.push_back(r.text);
  return lines;
}

std::optional<std::string> Contract::check(
    const std::vector<std::pair<std::string, int64_t>> &binding) const {
  return broken(binding, Undecided::Holds);
}

std::optional<std::string> Contract::broken(const std::vector<std::pair<std::string, int64_t>> &binding,
                                            Undecided undecided) const {
  std::map<std::string, int64_t> value(binding.begin(), binding.end());
  for (const Fixed &f : fixed) {
    auto it = value.find(f.input + "[" + std::to_string(f.axis) + "]");
    if (it != value.end() && it->second != f.value)
      return fmt::format("{}[{}] == {} (declared), given {}", f.input, f.axis, f.value, it->second);
  }
  std::optional<ExprScope> scope;
  if (context) scope.emplace(context);
  auto given = [&](SymbolId id) -> std::optional<int64_t> {
    auto v = value.find(symbolInfo(id).name);
    if (v == value.end()) return std::nullopt;
    return v->second;
  };
  for (const Symbol &s : symbols) {
    auto it = value.find(s.name);
    if (it == value.end()) continue;
    if (!s.range.contains(it->second))
      return fmt::format("{}, given {} = {}", rangeText(s.name, s.range), s.name, it->second);
    if (!s.solved) continue;
    auto want = evaluate(s.solved, given);
    if (want.ok() && *want != it->second)
      return fmt::format("{} == {} = {}, given {} = {}", s.name, s.equals, *want, s.name, it->second);
  }
  // Conditions, where the sizes given decide both sides (a solved symbol evaluates to its
  // solution).
  std::function<std::optional<int64_t>(SymbolId)> lookup = [&](SymbolId id) -> std::optional<int64_t> {
    if (auto v = given(id)) return v;
    const std::string &name = symbolInfo(id).name;
    for (const Symbol &s : symbols)
      if (s.name == name && s.solved) {
        auto e = evaluate(s.solved, lookup);
        if (e.ok()) return *e;
      }
    return std::nullopt;
  };
  for (const SymbolRequirement &r : requirements) {
    if (r.kind == Condition::None || !r.a || !r.b) continue;
    bool unbound = false;
    std::function<std::optional<int64_t>(SymbolId)> bound = [&](SymbolId id) {
      auto v = lookup(id);
      unbound |= !v;
      return v;
    };
    auto va = evaluate(r.a, bound), vb = evaluate(r.b, bound);
    if (undecided != Undecided::Holds && !unbound && (!va.ok() || !vb.ok()))
      return fmt::format("{} (undecided at the sizes given), node '{}' ({})", r.text, r.node, r.op);
    if (undecided != Undecided::OnlyItBreaks && va.ok() && vb.ok() && !r.holds(*va, *vb))
      return fmt::format("{} ({} and {} given), node '{}' ({})", r.text, *va, *vb, r.node, r.op);
  }
  return std::nullopt;
}

void printContract(const Contract &c, const std::string &model, std::ostream &os) {
  os << "model: " << model << "\n";
  if (!c.errors.empty()) {
    os << "no input sizes are accepted: inference fails at these sizes\n";
    for (const Diagnostic &d : c.errors) os << "  error: " << format(d) << "\n";
  }
  os << "accepts:\n";
  auto lines = c.summary();
  if (lines.empty()) os << "  any sizes\n";
  for (const std::string &l : lines) os << "  " << l << "\n";
  if (!c.requirements.empty()) {
    os << "because (in the order inference met them):\n";
    for (const SymbolRequirement &r : c.requirements)
      os << "  " << r.text << "    # node '" << r.node << "' (" << r.op << ")\n";
  }
}

nlohmann::json contractJson(const Contract &c, const std::string &model) {
  using nlohmann::json;
  json j;
  j["model"] = model;
  json fixed = json::array();
  for (const auto &f : c.fixed) fixed.push_back({{"input", f.input}, {"axis", f.axis}, {"value", f.value}});
  j["declared"] = fixed;
  json syms = json::array();
  for (const auto &s : c.symbols) {
    json o{{"name", s.name}, {"min", s.range.lo}};
    o["max"] = s.range.hi == kInf ? json(nullptr) : json(s.range.hi);
    o["equals"] = s.equals.empty() ? json(nullptr) : json(s.equals);
    syms.push_back(o);
  }
  j["symbols"] = syms;
  json reqs = json::array();
  // A condition keeps its two sides, so that a reader can check sizes against it.
  static const char *const kKinds[] = {nullptr, "broadcast", "equal", "divides", "at_least", "at_most"};
  for (const auto &r : c.requirements) {
    json o{{"requirement", r.text}, {"symbol", r.symbol}, {"node", r.node}, {"op", r.op}};
    const bool cond = r.kind != Condition::None && r.a && r.b;
    o["condition"] = cond ? json(kKinds[size_t(r.kind)]) : json(nullptr);
    o["lhs"] = cond ? json(toString(r.a)) : json(nullptr);
    o["rhs"] = cond ? json(toString(r.b)) : json(nullptr);
    reqs.push_back(o);
  }
  j["requirements"] = reqs;
  json errs = json::array();
  for (const auto &d : c.errors) errs.push_back({{"node", d.node}, {"op", d.op}, {"message", d.message}});
  j["errors"] = errs;
  j["summary"] = c.summary();
  return j;
}

std::optional<int64_t> evaluateByName(Expr e, const std::map<std::string, int64_t> &at) {
  auto v = evaluate(e, [&](SymbolId s) -> std::optional<int64_t> {
    auto it = at.find(symbolInfo(s).name);
    if (it == at.end()) return std::nullopt;
    return it->second;
  });
  if (!v.ok()) return std::nullopt;
  return *v;
}

std::optional<int64_t> evaluateByName(const Dimension &d, const std::map<std::string, int64_t> &at) {
  if (d.isStatic()) return d.length();
  return d.expr() ? evaluateByName(d.expr(), at) : std::nullopt;
}

ShownAt shownAt(const Contract &c, const std::map<std::string, int64_t> &given, const std::set<std::string> &leave,
                bool fillTied) {
  ShownAt r;
  for (const Contract::Symbol &s : c.symbols) r.order.push_back(s.name);
  r.at = c.tied(given);
  for (const std::string &name : r.order)
    if (given.count(name)) r.given.push_back(name);
  for (const auto &[name, v] : given)
    if (std::find(r.order.begin(), r.order.end(), name) == r.order.end()) r.given.push_back(name);
  for (const auto &[name, v] : r.at)
    if (!given.count(name)) r.tied.push_back(name);
  // In the inputs' order, each symbol the sizes so far leave open, then what it ties: first
  // the ones no requirement ties to others, then (fillTied) those whose ties stayed undecided.
  for (bool tiedPass : {false, true}) {
    if (tiedPass && !fillTied) break;
    for (const Contract::Symbol &s : c.symbols) {
      if (r.at.count(s.name) || leave.count(s.name) || (!tiedPass && c.tiedByRequirement(s.name))) continue;
      bool bounded = s.range.hi != kInf;
      r.at[s.name] = bounded ? s.range.hi : s.range.lo;
      (bounded ? r.upper : r.smallest).push_back(s.name);
      auto before = r.at;
      r.at = c.tied(std::move(r.at));
      for (const auto &[name, v] : r.at)
        if (!before.count(name)) r.tied.push_back(name);
    }
  }
  std::vector<std::pair<std::string, int64_t>> list(r.at.begin(), r.at.end());
  r.broken = c.check(list);
  return r;
}

std::string ShownAt::text() const {
  std::vector<std::string> values, how;
  for (const std::string &k : order)
    if (auto it = at.find(k); it != at.end()) values.push_back(fmt::format("{}={}", k, it->second));
  for (const auto &[k, v] : at)
    if (std::find(order.begin(), order.end(), k) == order.end()) values.push_back(fmt::format("{}={}", k, v));
  auto part = [&](const std::vector<std::string> &names, const char *what) {
    if (!names.empty()) how.push_back(fmt::format("{} {}", fmt::join(names, ", "), what));
  };
  part(given, "given");
  part(upper, "at the upper end of the range");
  part(smallest, "at the smallest size admitted, as nothing bounds it: choose with --at or --dim");
  part(tied, "tied to the others by the model");
  std::string s = fmt::format("{}", fmt::join(values, ", "));
  if (!how.empty()) s += fmt::format(" ({})", fmt::join(how, "; "));
  if (broken) s += fmt::format(" [these sizes break the model's contract: {}]", *broken);
  return s;
}

} // namespace sf
