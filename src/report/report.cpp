// Text and JSON reports of a graph's inferred facts.
#include "shapeflow/report/report.h"

#include "shapeflow/report/json_writer.h"

#include "shapeflow/dim/expr.h"
#include "shapeflow/report/names.h"

#include <algorithm>
#include <iomanip>

namespace sf {
namespace {

std::string producerName(const Graph &, const Node &n) { return n.name; }

std::string exprText(const Dimension &d, const PrintNames *names = nullptr) {
  if (d.expr() && names && names->namesAnonymousOf(d.expr())) return toString(d.expr(), *names);
  if (!d.expr() || d.expr()->hasAnonymous) return "?";
  return toString(d.expr());
}

/// The symbols of a report: the named ones and the anonymous input dims it names.
std::vector<std::pair<std::string, Interval>> reportSymbols(const Graph &g, const ReportNames *names) {
  auto syms = g.symbols.namedSymbols();
  if (names)
    for (const auto &[name, s] : names->inputDims) syms.push_back({name, g.symbols.resolve(Dimension::symbol(s)).interval()});
  return syms;
}

} // namespace

std::string jsonText(const nlohmann::json &j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool isNodeOutput(const Node &n) {
  if (n.removed || n.isParameter()) return false;
  return !(n.isConstant() && n.attrs.has("initializer"));
}

std::vector<std::string> tensorLines(const Graph &g) {
  ExprScope scope = g.enter();
  std::vector<std::string> out;
  for (const Node &n : g.nodes) {
    if (!isNodeOutput(n)) continue;
    for (const Outlet &o : n.outputs)
      if (!o.name.empty()) out.push_back(o.name + ": " + toString(o.fact));
  }
  return out;
}

std::vector<std::string> diagnosticLines(const Diagnostics &diags) {
  std::vector<std::string> out;
  for (const Diagnostic &d : diags.list())
    out.push_back(std::string(toString(d.severity)) + ": " + format(d));
  return out;
}

nlohmann::json dimJson(const Dimension &d) {
  DimTexts none;
  return dimJson(d, none);
}

namespace {

/// `expr`'s text, printed once per report.
const std::string &exprTextOnce(const Dimension &d, DimTexts &texts, const PrintNames *names) {
  auto [it, fresh] = texts.exprs.try_emplace(d.expr());
  if (fresh) it->second = exprText(d, names);
  return it->second;
}

void writeDimObject(JsonWriter &w, const Dimension &d, DimTexts &texts, const PrintNames *names) {
  w.beginObject().key("expr");
  if (!d.expr())
    w.value("?");
  else
    w.value(exprTextOnce(d, texts, names));
  w.key("min");
  if (d.minLength() == -kInf)
    w.null();
  else
    w.value(d.minLength());
  w.key("max");
  if (d.hasUpperBound())
    w.value(d.maxLength());
  else
    w.null();
  w.endObject();
}

} // namespace

void writeDimJson(JsonWriter &w, const Dimension &d, DimTexts &texts, const PrintNames *names) {
  if (d.isStatic()) {
    w.value(d.length());
    return;
  }
  // A symbolic dim's object is written once per depth and then copied (a model's tensors share
  // a few dims: the 100,000-node graph's listing is 300,000 of them).
  auto [it, fresh] = texts.objects.try_emplace(DimTexts::Object{d.expr(), d.minLength(), d.maxLength(), w.depth(), w.indent()});
  if (fresh) {
    JsonWriter once(it->second, w.indent(), w.depth());
    writeDimObject(once, d, texts, names);
  }
  w.raw(it->second);
}

void writeSymbolsJson(JsonWriter &w, const Graph &g) { writeSymbolsJson(w, g.symbols.namedSymbols()); }

void writeSymbolsJson(JsonWriter &w, const std::vector<std::pair<std::string, Interval>> &symbols) {
  w.key("symbols").beginObject();
  for (const auto &[name, range] : symbols) {
    w.key(name).beginObject().key("min").value(range.lo).key("max");
    if (range.hi == kInf)
      w.null();
    else
      w.value(range.hi);
    w.endObject();
  }
  w.endObject();
}

nlohmann::json dimJson(const Dimension &d, DimTexts &texts, const PrintNames *names) {
  if (d.isStatic()) return d.length();
  nlohmann::json j;
  j["expr"] = d.expr() ? exprTextOnce(d, texts, names) : std::string("?");
  j["min"] = d.minLength() == -kInf ? nlohmann::json(nullptr) : nlohmann::json(d.minLength());
  j["max"] = d.hasUpperBound() ? nlohmann::json(d.maxLength()) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json toJson(const Report &r) {
  const Graph &g = *r.graph;
  ExprScope scope = g.enter();
  DimTexts texts; // a dim shared by many tensors is printed once
  std::optional<ReportNames> names;
  if (r.names) names = nameDerivedSizes(g);
  const PrintNames *pn = names ? &names->print : nullptr;
  nlohmann::json j;
  j["model"] = r.model;
  nlohmann::json syms = nlohmann::json::object();
  for (const auto &[name, range] : reportSymbols(g, names ? &*names : nullptr)) {
    syms[name] = {{"min", range.lo},
                  {"max", range.hi == kInf ? nlohmann::json(nullptr) : nlohmann::json(range.hi)}};
  }
  j["symbols"] = syms;
  if (names && !names->definitions.empty()) {
    nlohmann::json defs = nlohmann::json::object();
    for (const auto &d : names->definitions) defs[d.name] = d.text;
    j["definitions"] = defs;
  }
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const OutletId &o : g.inputs)
    inputs.push_back(g.nodes[o.node].outputs[o.slot].name);
  for (const OutletId &o : g.outputs)
    outputs.push_back(g.nodes[o.node].outputs[o.slot].name);
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  nlohmann::json inputValues = nlohmann::json::object(); // values given with --value
  for (const OutletId &o : g.inputs) {
    const Outlet &in = g.outlet(o);
    if (!in.fact.value) continue;
    nlohmann::json v = nlohmann::json::array();
    for (const auto &d : *in.fact.value) v.push_back(dimJson(d, texts, pn));
    inputValues[in.name] = v;
  }
  if (!inputValues.empty()) j["input_values"] = inputValues;
  nlohmann::json tensors = nlohmann::json::object();
  for (const Node &n : g.nodes) {
    if (!isNodeOutput(n)) continue;
    for (const Outlet &o : n.outputs) {
      if (o.name.empty()) continue;
      nlohmann::json t;
      const Fact &f = o.fact;
      t["dtype"] = f.type == ElementType::Undefined ? nlohmann::json(nullptr)
                                                    : nlohmann::json(longName(f.type));
      if (f.shape.rankIsStatic()) {
        nlohmann::json s = nlohmann::json::array();
        for (const auto &d : f.shape.dims())
          s.push_back(dimJson(d, texts, pn));
        t["shape"] = s;
      } else {
        t["shape"] = nullptr;
      }
      if (f.value) {
        nlohmann::json v = nlohmann::json::array();
        for (const auto &d : *f.value)
          v.push_back(dimJson(d, texts, pn));
        t["value"] = v;
      }
      t["producer"] = producerName(g, n);
      t["op"] = n.opType;
      tensors[o.name] = t;
    }
  }
  j["tensors"] = tensors;
  nlohmann::json diags = nlohmann::json::array();
  for (const Diagnostic &d : r.diags->list()) {
    diags.push_back({{"severity", toString(d.severity)},
                     {"node", d.node},
                     {"op", d.op},
                     {"message", d.message}});
  }
  j["diagnostics"] = diags;
  return j;
}

void writeJson(const Report &r, std::ostream &os, int indent) {
  const Graph &g = *r.graph;
  ExprScope scope = g.enter();
  DimTexts texts;
  std::optional<ReportNames> names;
  if (r.names) names = nameDerivedSizes(g);
  const PrintNames *pn = names ? &names->print : nullptr;
  std::string s;
  JsonWriter w(s, indent);
  auto drain = [&] {
    os.write(s.data(), std::streamsize(s.size()));
    s.clear();
  };
  // Top-level members in the order nlohmann::json prints them (sorted); tensors in node order,
  // dims and symbols as the other streamed reports write them.
  w.beginObject();
  if (names && !names->definitions.empty()) {
    w.key("definitions").beginObject();
    for (const auto &d : names->definitions) w.key(d.name).value(d.text);
    w.endObject();
  }
  w.key("diagnostics").beginArray();
  for (const Diagnostic &d : r.diags->list()) {
    w.beginObject().key("message").value(d.message).key("node").value(d.node).key("op").value(d.op);
    w.key("severity").value(toString(d.severity)).endObject();
  }
  w.endArray();
  w.key("inputs").beginArray();
  for (const OutletId &o : g.inputs) w.value(g.outlet(o).name);
  w.endArray();
  bool anyValue = false;
  for (const OutletId &o : g.inputs) anyValue = anyValue || g.outlet(o).fact.value.has_value();
  if (anyValue) { // values given with --value
    w.key("input_values").beginObject();
    for (const OutletId &o : g.inputs) {
      const Outlet &in = g.outlet(o);
      if (!in.fact.value) continue;
      w.key(in.name).beginArray();
      for (const auto &d : *in.fact.value) writeDimJson(w, d, texts, pn);
      w.endArray();
    }
    w.endObject();
  }
  w.key("model").value(r.model);
  w.key("outputs").beginArray();
  for (const OutletId &o : g.outputs) w.value(g.outlet(o).name);
  w.endArray();
  writeSymbolsJson(w, reportSymbols(g, names ? &*names : nullptr));
  w.key("tensors").beginObject();
  auto dim = [&](const Dimension &d) { writeDimJson(w, d, texts, pn); };
  for (const Node &n : g.nodes) {
    if (!isNodeOutput(n)) continue;
    for (const Outlet &o : n.outputs) {
      if (o.name.empty()) continue;
      const Fact &f = o.fact;
      w.key(o.name).beginObject().key("dtype");
      if (f.type == ElementType::Undefined) w.null();
      else w.value(longName(f.type));
      w.key("op").value(n.opType).key("producer").value(producerName(g, n)).key("shape");
      if (f.shape.rankIsStatic()) {
        w.beginArray();
        for (const auto &d : f.shape.dims()) dim(d);
        w.endArray();
      } else {
        w.null();
      }
      if (f.value) {
        w.key("value").beginArray();
        for (const auto &d : *f.value) dim(d);
        w.endArray();
      }
      w.endObject();
      if (s.size() > (1 << 16)) drain();
    }
  }
  w.endObject();
  w.endObject();
  drain();
}

void printText(const Report &r, std::ostream &os) {
  const Graph &g = *r.graph;
  ExprScope scope = g.enter();
  std::optional<ReportNames> names;
  if (r.names) names = nameDerivedSizes(g);
  const PrintNames *pn = names ? &names->print : nullptr;
  os << "model: " << r.model << "\n";
  auto syms = reportSymbols(g, names ? &*names : nullptr);
  if (!syms.empty()) {
    os << "symbols:";
    for (const auto &[name, range] : syms) {
      os << " " << name;
      if (range.lo != 0 || range.hi != kInf) os << "{" << toString(range) << "}";
    }
    os << "\n";
  }
  if (names && !names->definitions.empty()) {
    os << "sizes:\n";
    for (const auto &d : names->definitions) os << "  " << d.name << " = " << d.text << "\n";
  }
  os << "inputs:\n";
  for (const OutletId &o : g.inputs) {
    const Outlet &out = g.nodes[o.node].outputs[o.slot];
    os << "  " << out.name << ": " << toString(out.fact, pn) << "\n";
  }
  size_t width = 0;
  for (const Node &n : g.nodes)
    if (isNodeOutput(n))
      for (const Outlet &o : n.outputs)
        width = std::max(width, o.name.size());
  width = std::min<size_t>(width, 48);
  os << "tensors:\n";
  for (const Node &n : g.nodes) {
    if (!isNodeOutput(n)) continue;
    for (const Outlet &o : n.outputs) {
      if (o.name.empty()) continue;
      os << "  " << std::left << std::setw(int(width)) << o.name << "  " << toString(o.fact, pn)
         << "    # " << n.opType << "\n";
    }
  }
  os << "outputs:\n";
  for (const OutletId &o : g.outputs) {
    const Outlet &out = g.nodes[o.node].outputs[o.slot];
    os << "  " << out.name << ": " << toString(out.fact, pn) << "\n";
  }
  size_t errors = r.diags->errorCount(), warnings = 0;
  for (const std::string &line : diagnosticLines(*r.diags))
    os << line << "\n";
  size_t assumptions = 0;
  for (const Diagnostic &d : r.diags->list()) {
    warnings += d.severity == Severity::Warning;
    assumptions += d.severity == Severity::Assumption;
  }
  os << r.stats.nodes << " nodes, " << errors << " errors, " << warnings << " warnings";
  if (assumptions) os << ", " << assumptions << " assumptions";
  if (exprCapHits()) os << ", " << exprCapHits() << " expressions capped to fresh symbols";
  os << "\n";
}

} // namespace sf
