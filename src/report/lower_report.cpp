// The lowering report (report/lower_report.h): the three stages as text and JSON.
#include "shapeflow/report/lower_report.h"

#include "shapeflow/ir/text.h"
#include "shapeflow/report/json_writer.h"
#include "shapeflow/report/report.h"
#include "shapeflow/report/stats_report.h"
#include "shapeflow/support/format.h"

#include <algorithm>

namespace sf {

using namespace lower;

namespace {

/// Prints expressions of a program: named symbols by name, anonymous ones by the element of the
/// shape value that holds them (`%t.shape[2]`).
class Printer {
public:
  explicit Printer(const ShapeProgram &p) : p_(p) {}

  std::string expr(Expr e) const {
    return toString(e, [&](SymbolId s) -> std::string {
      auto it = p_.symbols.find(s);
      if (it == p_.symbols.end()) return "?";
      return p_.values[it->second.value].name + "[" + std::to_string(it->second.index) + "]";
    });
  }
  std::string dim(const Dimension &d) const {
    if (d.isStatic()) return std::to_string(d.length());
    if (!d.expr()) return d.toString();
    return expr(d.expr());
  }
  std::string dims(const PartialShape &s) const {
    if (!s.rankIsStatic()) return "[...]";
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i)
      out += (i ? ", " : "") + dim(s[i]);
    return out + "]";
  }
  std::string symbolName(SymbolId s) const {
    const SymbolInfo &info = symbolInfo(s);
    if (!info.name.empty()) return info.name;
    return "_" + std::to_string(s);
  }

private:
  const ShapeProgram &p_;
};

std::string tensorName(const Outlet &o) { return valueName(o.name); }

std::string join(const std::vector<std::string> &v, const char *sep = ", ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? sep : "") + v[i];
  return out;
}

// ------------------------------------------------------------------------------- stage 1

void shapeGraph(const LowerReport &r, const LoweredGraph &lg, const std::string &indent,
                const std::string &header, std::vector<std::string> &out) {
  const Graph &g = *lg.graph;
  const ShapeProgram &p = *r.program;
  Printer pr(p);
  std::vector<std::string> params, results;
  for (OutletId in : g.inputs)
    params.push_back(tensorName(g.outlet(in)) + ": " + toString(g.fact(in)));
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    results.push_back(tensorName(g.outlet(g.outputs[i])) + ": " + toString(g.fact(g.outputs[i])));
    if (i < lg.outputShapes.size() && lg.outputShapes[i])
      results.push_back(p.values[*lg.outputShapes[i]].name);
  }
  out.push_back(indent + header + "(" + join(params) + ") -> (" + join(results) + ") {");
  std::string in = indent + "  ";
  auto defines = [&](const ShapeValue &v) {
    std::vector<std::string> parts;
    for (const auto &[sym, i] : v.defines)
      if (!symbolInfo(sym).name.empty())
        parts.push_back(symbolInfo(sym).name + " = " + v.name + "[" + std::to_string(i) + "]");
    return parts.empty() ? std::string() : "    // " + join(parts);
  };
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (i >= lg.inputShapes.size() || !lg.inputShapes[i]) continue;
    const ShapeValue &v = p.values[*lg.inputShapes[i]];
    if (v.source != ShapeSource::Actual || v.path != lg.path ||
        v.tensor != g.outlet(g.inputs[i]).name)
      continue;
    out.push_back(in + v.name + " = ActualShapeOf " + tensorName(g.outlet(g.inputs[i])) + " : " +
                  pr.dims(v.shape) + defines(v));
  }
  for (const LoweredOp &op : lg.ops) {
    const Node &n = g.nodes[op.node];
    for (size_t k = 0; k < op.outputShapes.size(); ++k) {
      if (op.modes[k] != ShapeMode::Compute) continue;
      const ShapeValue &v = p.values[*op.outputShapes[k]];
      std::vector<std::string> from;
      for (size_t f : v.from)
        from.push_back(p.values[f].name);
      out.push_back(in + v.name + " = compute " + pr.dims(v.shape) +
                    (from.empty() ? "" : " from " + join(from)));
    }
    std::vector<std::string> outs, ins, shapeArgs, outShapeArgs, types, notes;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      outs.push_back(n.outputs[k].name.empty() ? "_" : tensorName(n.outputs[k]));
      types.push_back(toString(n.outputs[k].fact));
      if (k >= op.modes.size()) continue;
      const auto &v = op.outputShapes[k];
      switch (op.modes[k]) {
      case ShapeMode::Result:
        outs.push_back(p.values[*v].name);
        if (auto d = defines(p.values[*v]); !d.empty()) notes.push_back(d.substr(7));
        break;
      case ShapeMode::Compute:
        outShapeArgs.push_back(p.values[*v].name);
        break;
      case ShapeMode::Reuse:
        notes.push_back("shape " + p.values[*v].name);
        break;
      case ShapeMode::Static:
        break;
      }
    }
    for (OutletId i : n.inputs)
      ins.push_back(g.contains(i) ? tensorName(g.outlet(i)) : "\"\"");
    for (const auto &v : op.inputShapes)
      if (v) shapeArgs.push_back(p.values[*v].name);
    std::string op_ = n.domain.empty() ? n.opType : n.domain + "." + n.opType;
    std::string line = in + join(outs) + " = " + op_ + "(" + join(ins) + ")";
    if (!shapeArgs.empty() || !outShapeArgs.empty()) line += "[" + join(shapeArgs) + "]";
    if (!outShapeArgs.empty()) line += "[" + join(outShapeArgs) + "]";
    line += " : " + join(types);
    std::string comment = notes.empty() ? "" : "    // " + join(notes, "; ");
    if (op.bodies.empty()) {
      out.push_back(line + comment);
      continue;
    }
    out.push_back(line + " {" + comment);
    for (const auto &[name, body] : op.bodies)
      shapeGraph(r, body, in + "  ", name, out);
    out.push_back(in + "}");
  }
  std::vector<std::string> rets;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    rets.push_back(tensorName(g.outlet(g.outputs[i])));
    if (i < lg.outputShapes.size() && lg.outputShapes[i])
      rets.push_back(p.values[*lg.outputShapes[i]].name);
  }
  out.push_back(in + "return" + (rets.empty() ? "" : " " + join(rets)));
  out.push_back(indent + "}");
}

// ------------------------------------------------------------------------------- stage 3

std::string bytesText(const Printer &pr, const Buffer &b) {
  std::string s;
  if (b.bytes.isStatic())
    s = humanCount(double(b.bytes.length()), "B");
  else
    s = (b.bytes.expr() && !b.bytes.expr()->hasAnonymous ? pr.expr(b.bytes.expr())
                                                         : b.bytes.toString()) +
        " B";
  if (!b.bytes.isStatic())
    s += b.upperBytes ? ", at most " + humanCount(double(*b.upperBytes), "B") : ", unbounded";
  return s;
}

void bufferGraph(const LowerReport &r, const BufferPlan &plan, const std::string &indent,
                 const std::string &header, std::vector<std::string> &out) {
  const Graph &g = *plan.graph;
  Printer pr(*r.program);
  std::vector<std::string> params, results, constants;
  for (const Buffer &b : plan.buffers) {
    if (b.owner == Owner::Constant) constants.push_back(b.name);
  }
  for (OutletId in : g.inputs)
    params.push_back(tensorName(g.outlet(in)) + ": " + toString(g.fact(in)));
  // The caller's buffers the graph writes: its outputs and their shape values, in the order of
  // the outputs.
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    results.push_back(tensorName(g.outlet(g.outputs[i])));
    if (i < plan.outputShapes.size() && plan.outputShapes[i])
      results.push_back(plan.buffers[*plan.outputShapes[i]].name);
  }
  out.push_back(indent + header + "(" + join(params) + ") -> (" + join(results) + ") {" +
                (constants.empty() ? "" : "    // constants outside the arena: " +
                                              std::to_string(constants.size())));
  std::string in = indent + "  ";
  auto name = [&](size_t b) { return plan.buffers[b].name; };
  auto names = [&](const std::vector<size_t> &bs, bool shapes) {
    std::vector<std::string> v;
    for (size_t b : bs)
      if (plan.buffers[b].shapeValue == shapes) v.push_back(name(b));
    return v;
  };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    for (size_t b : s.allocs) {
      const Buffer &buf = plan.buffers[b];
      out.push_back(in + buf.name + " = alloc " + toString(Fact::known(buf.type, buf.shape)) +
                    "    // " + bytesText(pr, buf));
    }
    std::string line;
    switch (s.kind) {
    case StepKind::ShapeOf:
      line = name(s.writes[0]) + " = ActualShapeOf " + name(s.reads[0]);
      break;
    case StepKind::ShapeCompute: {
      line = "compute " + name(s.writes[0]);
      auto from = names(s.reads, true);
      if (!from.empty()) line += " from " + join(from);
      break;
    }
    case StepKind::Op: {
      const Node &n = g.nodes[s.node];
      std::vector<std::string> writes;
      for (size_t b : s.writes) {
        const Buffer &buf = plan.buffers[b];
        if (buf.shapeValue) continue;
        std::string w = buf.name;
        if (buf.aliasOf)
          w += " = " + name(*buf.aliasOf) + " (" + toString(buf.reuse) + ")";
        else if (buf.owner == Owner::Caller)
          w += " (caller)";
        writes.push_back(w);
      }
      std::vector<std::string> ins;
      for (OutletId i : n.inputs)
        ins.push_back(g.contains(i) ? tensorName(g.outlet(i)) : "\"\"");
      line = (n.domain.empty() ? n.opType : n.domain + "." + n.opType) + "(" + join(ins) +
             " -> " + join(writes) + ")";
      std::vector<std::string> shapes, outShapes;
      for (size_t b : s.reads)
        if (plan.buffers[b].shapeValue &&
            std::find(s.outShapes.begin(), s.outShapes.end(), b) == s.outShapes.end())
          shapes.push_back(name(b));
      for (size_t b : s.outShapes)
        outShapes.push_back(name(b));
      if (!shapes.empty() || !outShapes.empty()) line += "[" + join(shapes) + "]";
      if (!outShapes.empty()) line += "[" + join(outShapes) + "]";
      break;
    }
    }
    if (s.bodies.empty()) {
      out.push_back(in + line);
    } else {
      out.push_back(in + line + " {");
      for (const auto &[bodyName, body] : s.bodies)
        bufferGraph(r, body, in + "  ", bodyName, out);
      out.push_back(in + "}");
    }
    for (size_t b : s.frees)
      out.push_back(in + "dealloc " + name(b));
  }
  out.push_back(in + "return");
  out.push_back(indent + "}");
}

void writeDimJson(JsonWriter &w, const Dimension &d, const Printer &pr) {
  if (d.isStatic()) {
    w.value(d.length());
    return;
  }
  w.beginObject().key("expr").value(d.expr() ? pr.expr(d.expr()) : std::string("?"));
  w.key("min").value(d.minLength()).key("max");
  if (d.hasUpperBound())
    w.value(d.maxLength());
  else
    w.null();
  w.endObject();
}

void writeHeader(JsonWriter &w, const LowerReport &r, const char *stage) {
  w.key("model").value(r.model);
  w.key("stage").value(stage);
  writeSymbolsJson(w, *r.graph);
}

void writeShapeGraph(JsonWriter &w, const LowerReport &r, const LoweredGraph &lg) {
  const Graph &g = *lg.graph;
  const ShapeProgram &p = *r.program;
  auto valueOrNull = [&](const std::optional<size_t> &v) {
    if (v)
      w.value(p.values[*v].name);
    else
      w.null();
  };
  w.beginObject();
  w.key("path").value(lg.path);
  w.key("inputs").beginArray();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    w.beginObject().key("tensor").value(g.outlet(g.inputs[i]).name).key("shape_value");
    valueOrNull(i < lg.inputShapes.size() ? lg.inputShapes[i] : std::nullopt);
    w.endObject();
  }
  w.endArray();
  w.key("ops").beginArray();
  for (const LoweredOp &op : lg.ops) {
    const Node &n = g.nodes[op.node];
    w.beginObject();
    w.key("node").value(n.name);
    w.key("op").value(n.domain.empty() ? n.opType : n.domain + "." + n.opType);
    w.key("shape_args").beginArray();
    for (const auto &v : op.inputShapes)
      valueOrNull(v);
    w.endArray();
    w.key("outputs").beginArray();
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      w.beginObject().key("tensor").value(n.outputs[k].name);
      w.key("shape_value");
      valueOrNull(k < op.outputShapes.size() ? op.outputShapes[k] : std::nullopt);
      w.key("mode").value(k < op.modes.size() ? toString(op.modes[k]) : "static");
      w.endObject();
    }
    w.endArray();
    if (!op.bodies.empty()) {
      w.key("bodies").beginObject();
      for (const auto &[name, body] : op.bodies) {
        w.key(name);
        writeShapeGraph(w, r, body);
      }
      w.endObject();
    }
    w.endObject();
  }
  w.endArray();
  w.key("outputs").beginArray();
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    w.beginObject().key("tensor").value(g.outlet(g.outputs[i]).name).key("shape_value");
    valueOrNull(i < lg.outputShapes.size() ? lg.outputShapes[i] : std::nullopt);
    w.endObject();
  }
  w.endArray();
  w.endObject();
}

void writeBufferPlan(JsonWriter &w, const LowerReport &r, const BufferPlan &plan) {
  const Graph &g = *plan.graph;
  Printer pr(*r.program);
  w.beginObject();
  w.key("path").value(plan.path);
  w.key("buffers").beginArray();
  for (const Buffer &b : plan.buffers) {
    w.beginObject();
    w.key("name").value(b.name);
    w.key("kind").value(b.shapeValue ? "shape" : "tensor");
    w.key("dtype").value(toString(b.type));
    w.key("shape").beginArray();
    if (b.shape.rankIsStatic())
      for (const Dimension &d : b.shape.dims())
        writeDimJson(w, d, pr);
    w.endArray();
    w.key("bytes"), writeDimJson(w, b.bytes, pr);
    w.key("upper_bytes");
    if (b.upperBytes)
      w.value(*b.upperBytes);
    else
      w.null();
    w.key("owner").value(toString(b.owner));
    w.key("alias");
    if (b.aliasOf)
      w.value(plan.buffers[*b.aliasOf].name);
    else
      w.null();
    w.key("reuse").value(toString(b.reuse));
    w.key("alloc").value(uint64_t(b.alloc));
    w.key("last_use");
    if (b.lastUse)
      w.value(uint64_t(*b.lastUse));
    else
      w.null();
    w.endObject();
  }
  w.endArray();
  w.key("steps").beginArray();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    auto list = [&](const char *key, const std::vector<size_t> &bs) {
      w.key(key).beginArray();
      for (size_t b : bs)
        w.value(plan.buffers[b].name);
      w.endArray();
    };
    w.beginObject();
    w.key("index").value(uint64_t(i));
    w.key("kind").value(toString(s.kind));
    const Node &n = g.nodes[s.node];
    w.key("node").value(n.name);
    w.key("op").value(s.kind == StepKind::ShapeOf ? std::string("ActualShapeOf")
                      : s.kind == StepKind::ShapeCompute
                          ? std::string("ShapeCompute")
                          : (n.domain.empty() ? n.opType : n.domain + "." + n.opType));
    list("reads", s.reads);
    list("writes", s.writes);
    list("allocs", s.allocs);
    list("frees", s.frees);
    if (!s.bodies.empty()) {
      w.key("bodies").beginObject();
      for (const auto &[name, body] : s.bodies) {
        w.key(name);
        writeBufferPlan(w, r, body);
      }
      w.endObject();
    }
    w.endObject();
  }
  w.endArray();
  w.endObject();
}

} // namespace

std::vector<std::string> shapeLines(const LowerReport &r) {
  ExprScope scope = r.graph->enter();
  std::vector<std::string> out;
  shapeGraph(r, r.program->main, "", "func @main", out);
  return out;
}

std::vector<std::string> boundLines(const LowerReport &r) {
  ExprScope scope = r.graph->enter();
  const BoundsReport &b = *r.bounds;
  std::vector<std::string> out;
  for (const TensorBound &t : b.tensors) {
    std::string line = valueName(t.name) + (t.path.empty() ? "" : " in " + t.path) + ": " +
                       toString(*t.fact);
    if (!t.upper) {
      out.push_back(line + "  <=  ? (rank unknown)");
      continue;
    }
    if (t.fact->shape.isStatic()) {
      out.push_back(line);
      continue;
    }
    std::string upper = std::string(toString(t.fact->type)) + "[";
    for (size_t i = 0; i < t.upper->size(); ++i)
      upper += (i ? "," : "") + ((*t.upper)[i] ? std::to_string(*(*t.upper)[i]) : "?");
    upper += "]";
    out.push_back(line + "  <=  " + upper +
                  (t.upperBytes ? " (" + humanCount(double(*t.upperBytes), "B") + ")" : ""));
  }
  if (b.missing.empty()) {
    out.push_back("every tensor has an upper bound");
    return out;
  }
  out.push_back(fmt::format("{} tensor{} without an upper bound; to bound them:", b.unbounded,
                            b.unbounded == 1 ? " is" : "s are"));
  for (const MissingBound &m : b.missing) {
    std::string count =
        fmt::format("{} tensor{}, e.g. {}", m.tensors, m.tensors == 1 ? "" : "s", valueName(m.example));
    if (m.input)
      out.push_back(fmt::format("  bound {} (--dim {}=LO..HI): {}", m.symbol, m.symbol, count));
    else if (!m.symbols.empty())
      out.push_back(fmt::format("  {} {} on the data ({} '{}'): {}", join(m.symbols),
                                m.symbols.size() == 1 ? "depends" : "depend", m.op, m.node, count));
    else
      out.push_back(fmt::format("  sizes with no bound from {} '{}': {}", m.op, m.node, count));
  }
  return out;
}

std::vector<std::string> bufferLines(const LowerReport &r) {
  ExprScope scope = r.graph->enter();
  std::vector<std::string> out;
  bufferGraph(r, *r.plan, "", "func @main", out);
  return out;
}

std::string shapesJsonText(const LowerReport &r, int indent) {
  ExprScope scope = r.graph->enter();
  const ShapeProgram &p = *r.program;
  Printer pr(p);
  std::string s;
  JsonWriter w(s, indent);
  w.beginObject();
  writeHeader(w, r, "shapes");
  w.key("shape_values").beginArray();
  for (const ShapeValue &v : p.values) {
    w.beginObject();
    w.key("name").value(v.name);
    w.key("tensor").value(v.tensor);
    if (!v.path.empty()) w.key("path").value(v.path);
    w.key("source").value(toString(v.source));
    w.key("dims");
    if (v.shape.rankIsStatic()) {
      w.beginArray();
      for (const Dimension &d : v.shape.dims())
        writeDimJson(w, d, pr);
      w.endArray();
    } else {
      w.null();
    }
    w.key("from").beginArray();
    for (size_t f : v.from)
      w.value(p.values[f].name);
    w.endArray();
    w.key("defines").beginObject();
    for (const auto &[sym, i] : v.defines)
      w.key(pr.symbolName(sym)).value(uint64_t(i));
    w.endObject();
    w.endObject();
  }
  w.endArray();
  w.key("graph");
  writeShapeGraph(w, r, p.main);
  w.endObject();
  return s;
}

std::string boundsJsonText(const LowerReport &r, int indent) {
  ExprScope scope = r.graph->enter();
  const BoundsReport &b = *r.bounds;
  DimTexts texts;
  std::string s;
  JsonWriter w(s, indent);
  w.beginObject();
  writeHeader(w, r, "bounds");
  w.key("tensors").beginObject();
  for (const TensorBound &t : b.tensors) {
    w.key(t.name).beginObject();
    if (!t.path.empty()) w.key("path").value(t.path);
    w.key("dtype");
    if (t.fact->type == ElementType::Undefined)
      w.null();
    else
      w.value(toString(t.fact->type));
    w.key("shape");
    if (t.fact->shape.rankIsStatic()) {
      w.beginArray();
      for (const Dimension &d : t.fact->shape.dims())
        writeDimJson(w, d, texts);
      w.endArray();
    } else {
      w.null();
    }
    w.key("upper_shape");
    if (t.upper) {
      w.beginArray();
      for (const auto &u : *t.upper)
        if (u)
          w.value(*u);
        else
          w.null();
      w.endArray();
    } else {
      w.null();
    }
    w.key("upper_bytes");
    if (t.upperBytes)
      w.value(*t.upperBytes);
    else
      w.null();
    w.endObject();
  }
  w.endObject();
  w.key("unbounded").value(uint64_t(b.unbounded));
  w.key("missing_bounds").beginArray();
  for (const MissingBound &m : b.missing) {
    w.beginObject();
    w.key("symbol");
    if (m.symbol.empty())
      w.null();
    else
      w.value(m.symbol);
    w.key("kind").value(m.input ? "input" : "data");
    if (!m.input) {
      w.key("symbols").beginArray();
      for (const std::string &name : m.symbols)
        w.value(name);
      w.endArray();
    }
    if (!m.input) w.key("node").value(m.node).key("op").value(m.op);
    w.key("tensors").value(uint64_t(m.tensors));
    w.key("example").value(m.example);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return s;
}

std::string buffersJsonText(const LowerReport &r, int indent) {
  ExprScope scope = r.graph->enter();
  std::string s;
  JsonWriter w(s, indent);
  w.beginObject();
  writeHeader(w, r, "buffers");
  w.key("plan");
  writeBufferPlan(w, r, *r.plan);
  w.endObject();
  return s;
}

} // namespace sf
