// The text-form printer (see docs/TEXT_FORMAT.md).
#include "shapeflow/ir/text.h"

#include "format_util.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

namespace sf {
namespace {

bool isKeyword(std::string_view s) {
  return s == "graph" || s == "return" || s == "symbol" || s == "opset";
}

} // namespace

std::string printName(std::string_view s) {
  return detail::isBareName(s) && !isKeyword(s) ? std::string(s) : detail::quote(s);
}

namespace {

bool skipsOpset(const Node &n) { return n.isParameter() || n.isConstant(); }

/// Most frequent opset version per domain over every node that carries one (ties: the higher).
void countOpsets(const Graph &g, std::map<std::string, std::map<int, size_t>> &counts) {
  for (const Node &n : g.nodes) {
    if (n.removed) continue;
    if (!skipsOpset(n)) ++counts[n.domain][n.opsetVersion];
    for (const auto &[attrName, attr] : n.attrs) {
      if (const GraphPtr *p = attr.get<GraphPtr>(); p && *p) countOpsets(**p, counts);
      if (const auto *ps = attr.get<std::vector<GraphPtr>>())
        for (const auto &p : *ps)
          if (p) countOpsets(*p, counts);
    }
  }
}

/// Printed names of outlets: their own, or a made-up one for an unnamed outlet that is read.
class OutletNames {
public:
  explicit OutletNames(const Graph &g) : g_(g) {
    for (const Node &n : g.nodes)
      for (const Outlet &o : n.outputs)
        if (!o.name.empty()) taken_.insert(o.name);
    // Made-up names are stored as strings owned by `made_`; make them before printing so that
    // definitions and uses agree.
    for (const Node &n : g.nodes) {
      if (n.removed) continue;
      for (uint32_t s = 0; s < n.outputs.size(); ++s)
        if (n.outputs[s].name.empty() && used(OutletId{n.id, s})) of(OutletId{n.id, s});
    }
    for (OutletId o : g.outputs) of(o);
  }

  std::string of(OutletId o) {
    if (!g_.contains(o)) return "<missing>";
    const std::string &own = g_.outlet(o).name;
    if (!own.empty()) return own;
    auto it = made_.find(key(o));
    if (it != made_.end()) return it->second;
    std::string s = "%" + std::to_string(o.node) + "." + std::to_string(o.slot);
    while (taken_.count(s)) s += "_";
    made_[key(o)] = s;
    return s;
  }

  /// The made-up name of an outlet, if it has one.
  const std::string *made(OutletId o) const {
    auto it = made_.find(key(o));
    return it != made_.end() ? &it->second : nullptr;
  }

private:
  static uint64_t key(OutletId o) { return (uint64_t(o.node) << 32) | o.slot; }
  bool used(OutletId o) const {
    return !g_.outlet(o).successors.empty() ||
           std::find(g_.outputs.begin(), g_.outputs.end(), o) != g_.outputs.end();
  }

  const Graph &g_;
  std::set<std::string_view> taken_;
  std::unordered_map<uint64_t, std::string> made_;
};

class Printer {
public:
  explicit Printer(const PrintOptions &options) : opt_(options) {}

  std::string run(const Graph &g) {
    std::map<std::string, std::map<int, size_t>> counts;
    countOpsets(g, counts);
    for (const auto &[domain, byVersion] : counts) {
      int best = 0;
      size_t bestCount = 0;
      for (const auto &[v, c] : byVersion)
        if (c >= bestCount) best = v, bestCount = c;
      if (best != 0) opsets_[domain] = best;
    }
    std::string body;
    graph(g, 0, body);
    body += "\n";
    std::string head = symbolLines(g);
    for (const auto &[domain, v] : opsets_)
      // A domain that starts with a digit is quoted: it would read as the version.
      head += "opset " +
              (domain.empty()                       ? std::string()
               : std::isdigit(uint8_t(domain[0])) ? detail::quote(domain) + " "
                                                    : printName(domain) + " ") +
              std::to_string(v) + "\n";
    return head + body;
  }

private:
  // ---- symbols: remember which named symbols the text mentions, and in which order ----
  void noteDim(const Dimension &d) {
    Expr e = d.expr();
    if (!e || e->hasAnonymous || isConst(e)) return;
    for (SymbolId s : symbolsOf(e)) {
      const std::string &n = symbolInfo(s).name;
      auto [it, fresh] = ids_.emplace(n, s);
      if (!fresh) it->second = std::min(it->second, s);
    }
    // The parser meets names in textual order.
    std::string text = d.toString();
    for (size_t i = 0; i < text.size();) {
      if (std::isalpha(uint8_t(text[i])) || text[i] == '_') {
        size_t j = i;
        while (j < text.size() && (std::isalnum(uint8_t(text[j])) || text[j] == '_')) ++j;
        std::string word = text.substr(i, j - i);
        bool call = j < text.size() && text[j] == '(';
        if (!call && seen_.insert(word).second) firstSeen_.push_back(word);
        i = j;
      } else {
        ++i;
      }
    }
  }

  std::string fact(const Fact &f) {
    if (f.shape.rankIsStatic())
      for (const auto &d : f.shape.dims()) noteDim(d);
    if (f.value)
      for (const auto &d : *f.value) noteDim(d);
    return toString(f);
  }

  /// `symbol` lines: every symbol with a range, and, when the parser would otherwise create the
  /// remaining ones in another relative order than their ids (which decides the canonical order
  /// of terms), every symbol the text mentions, in id order.
  std::string symbolLines(const Graph &g) {
    struct Decl {
      std::string name;
      SymbolId id;
      Interval range;
    };
    auto table = g.symbols.namedSymbols();
    std::map<std::string, Interval> tableRange(table.begin(), table.end());
    auto rangeOf = [&](const std::string &name, SymbolId id) {
      auto it = tableRange.find(name);
      return it != tableRange.end() ? it->second : symbolInfo(id).range;
    };
    auto isDefault = [](Interval r) { return r.lo == 0 && r.hi == kInf; };
    std::vector<Decl> ranged, plain;
    for (const auto &[name, id] : ids_) {
      Interval r = rangeOf(name, id);
      (isDefault(r) ? plain : ranged).push_back({name, id, r});
    }
    for (const auto &[name, r] : table) {
      if (ids_.count(name) || isDefault(r)) continue;
      auto id = g.symbols.find(name);
      ranged.push_back({name, id ? *id : SymbolId(0), r});
    }
    auto byId = [](const Decl &a, const Decl &b) { return a.id < b.id; };
    std::sort(ranged.begin(), ranged.end(), byId);
    // Would the parser create symbols in id order if only the ranged ones were declared?
    std::vector<SymbolId> sequence;
    std::set<std::string> declared;
    for (const Decl &d : ranged) sequence.push_back(d.id), declared.insert(d.name);
    for (const std::string &name : firstSeen_) {
      auto it = ids_.find(name);
      if (it != ids_.end() && !declared.count(name)) sequence.push_back(it->second);
    }
    std::vector<Decl> decls = ranged;
    if (!std::is_sorted(sequence.begin(), sequence.end())) {
      decls.insert(decls.end(), plain.begin(), plain.end());
      std::sort(decls.begin(), decls.end(), byId);
    }
    std::string out;
    for (const Decl &d : decls) {
      out += "symbol " + d.name;
      if (!isDefault(d.range)) {
        out += " " + std::to_string(d.range.lo) + "..";
        if (d.range.hi != kInf) out += std::to_string(d.range.hi);
      }
      out += "\n";
    }
    return out;
  }

  // ---- values ----
  std::string tensor(const TensorPtr &t) {
    if (!t) return "null";
    return toString(*t, opt_.maxTensorElements);
  }

  std::string attrValue(const Attribute &a, int indent) {
    auto list = [](const auto &items, auto &&one) {
      std::string s = "[";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + one(items[i]);
      return s + "]";
    };
    switch (a.kind()) {
    case AttributeKind::Int: return std::to_string(*a.get<int64_t>());
    case AttributeKind::Float: return detail::formatAttrFloat(*a.get<double>());
    case AttributeKind::String: return detail::quote(*a.get<std::string>());
    case AttributeKind::Ints:
      return list(*a.get<std::vector<int64_t>>(), [](int64_t v) { return std::to_string(v); });
    case AttributeKind::Floats:
      return list(*a.get<std::vector<double>>(), [](double v) { return detail::formatAttrFloat(v); });
    case AttributeKind::Strings:
      return list(*a.get<std::vector<std::string>>(),
                  [](const std::string &v) { return detail::quote(v); });
    case AttributeKind::Tensor: return tensor(*a.get<TensorPtr>());
    case AttributeKind::Tensors:
      return list(*a.get<std::vector<TensorPtr>>(), [&](const TensorPtr &t) { return tensor(t); });
    case AttributeKind::Graph: {
      std::string s;
      const GraphPtr &g = *a.get<GraphPtr>();
      if (g) graph(*g, indent + 2, s);
      else s = "null";
      return s;
    }
    case AttributeKind::Graphs:
      return list(*a.get<std::vector<GraphPtr>>(), [&](const GraphPtr &g) {
        std::string s;
        if (g) graph(*g, indent + 2, s);
        else s = "null";
        return s;
      });
    case AttributeKind::Type: {
      const TypePtr &t = *a.get<TypePtr>();
      return "type " + (t ? fact(*t) : fact(Fact{}));
    }
    case AttributeKind::Types:
      return list(*a.get<std::vector<Fact>>(), [&](const Fact &f) { return "type " + fact(f); });
    }
    return "null";
  }

  std::string attrs(const Attributes &as, int indent) {
    if (as.empty()) return "";
    std::string s = " {";
    bool first = true;
    for (const auto &[name, a] : as) {
      s += (first ? "" : ", ") + printName(name) + " = " + attrValue(a, indent);
      first = false;
    }
    return s + "}";
  }

  // ---- graphs ----
  void graph(const Graph &g, int indent, std::string &out) {
    OutletNames names(g);
    std::string pad(size_t(indent) + 2, ' ');
    out += "graph " + printName(g.name) + "(";
    std::set<uint32_t> params = graphInputs(g, indent, names, out);
    out += ") {\n";
    for (const Node &n : g.nodes) {
      if (n.removed || (n.isParameter() && params.count(n.id))) continue;
      out += pad;
      node(n, indent, names, out);
      out += "\n";
    }
    out += pad + "return";
    for (size_t k = 0; k < g.outputs.size(); ++k)
      out += (k ? ", " : " ") + printName(names.of(g.outputs[k]));
    out += "\n" + std::string(size_t(indent), ' ') + "}";
  }

  /// The graph's inputs, each with its fact and its Parameter's attributes; the Parameters.
  std::set<uint32_t> graphInputs(const Graph &g, int indent, OutletNames &names, std::string &out) {
    std::set<uint32_t> params;
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      OutletId o = g.inputs[k];
      if (k) out += ", ";
      if (!g.contains(o)) {
        out += "\"<missing>\": ?[...]";
        continue;
      }
      const Node &p = g.nodes[o.node];
      params.insert(o.node);
      std::string outName = names.of(o);
      out += printName(outName) + ": " + fact(g.outlet(o).fact) + attrs(p.attrs, indent + 2);
      if (p.name != outName) out += " @" + printName(p.name);
    }
    return params;
  }

  /// A node's line: its outputs (with their facts), op, inputs, attributes and name.
  void node(const Node &n, int indent, OutletNames &names, std::string &out) {
    std::string firstName;
    for (uint32_t s = 0; s < n.outputs.size(); ++s) {
      const std::string *made = names.made(OutletId{n.id, s});
      std::string name = made ? *made : n.outputs[s].name;
      if (s == 0) firstName = name;
      out += (s ? ", " : "") + (name.empty() ? std::string("\"\"") : printName(name));
      if (opt_.facts) {
        // The inferred fact; before inference, what the graph declared.
        const Outlet &ol = n.outputs[s];
        out += ": " + fact(ol.fact.isUnknown() && ol.declared ? *ol.declared : ol.fact);
      }
    }
    if (!n.outputs.empty()) out += " = ";
    // An op a model names like one of the IR's own nodes spells its domain out, so that it
    // parses back as an op.
    std::string op = n.opNamedLikeIrNode() ? "ai.onnx." + n.opType
                     : n.domain.empty()    ? n.opType
                                           : n.domain + "." + n.opType;
    out += printName(op);
    int defaultVersion = 0;
    if (!skipsOpset(n)) {
      auto it = opsets_.find(n.domain);
      if (it != opsets_.end()) defaultVersion = it->second;
    }
    if (n.opsetVersion != defaultVersion) out += ":" + std::to_string(n.opsetVersion);
    out += "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (i) out += ", ";
      OutletId in = n.inputs[i];
      if (!in.valid()) {
        if (n.inputs.size() == 1) out += "\"\"";
        continue;
      }
      out += printName(names.of(in));
    }
    out += ")" + attrs(n.attrs, indent + 2);
    if (n.name != firstName) out += " @" + printName(n.name);
  }

  const PrintOptions &opt_;
  std::map<std::string, int> opsets_;
  std::map<std::string, SymbolId> ids_;
  std::set<std::string> seen_;
  std::vector<std::string> firstSeen_;
};

} // namespace

std::string printGraph(const Graph &g, const PrintOptions &options) {
  ExprScope scope = g.enter();
  return Printer(options).run(g);
}

} // namespace sf
