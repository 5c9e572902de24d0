// `shapeflow._core`: the extension under the Python package `shapeflow` (pybind11). It wraps the
// library and the shared report code and has no logic of its own: load (a path, bytes, or
// anything with SerializeToString, such as onnx.ModelProto), infer with the options of
// `shapeflow infer` (inputs, dims, values), and read the facts as objects (Tensor, Dim,
// Diagnostic) or as the CLI's JSON; stats, plan, memory, contract, lower, why, check and run as
// their subcommands compute them; the command line itself. Every library error is raised as
// shapeflow.Error. The typed objects and the drop-in functions are the package's Python layer.
#include "app.h"
#include "common.h"
#include "dim.h"
#include "shapeflow/cost/stats.h"
#include "shapeflow/eval/eval.h"
#include "shapeflow/eval/check.h"
#include "shapeflow/eval/session.h"
#include "shapeflow/infer/domain.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/lower/bounds.h"
#include "shapeflow/lower/buffers.h"
#include "shapeflow/lower/memory_plan.h"
#include "shapeflow/lower/shape_values.h"
#include "shapeflow/onnx/export.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/json_writer.h"
#include "shapeflow/report/lower_report.h"
#include "shapeflow/report/names.h"
#include "shapeflow/report/run_report.h"
#include "shapeflow/report/why.h"
#include "shapeflow/report/plan_report.h"
#include "shapeflow/report/report.h"
#include "shapeflow/report/contract.h"
#include "shapeflow/report/model_queries.h"
#include "shapeflow/report/range_plans.h"
#include "shapeflow/report/simplify_report.h"
#include "shapeflow/report/stats_report.h"
#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/sniff.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <fstream>
#include <list>
#include <mutex>
#include <limits>
#include <memory>
#include <sstream>

namespace sf::python {
namespace {

/// The facts of one tensor.
struct TensorFacts {
  py::str name, dtype, producer, op;
  py::object shape, value;
  py::str repr() const {
    return py::str("Tensor({!r}, {}, {!r})").format(name, dtype, shape);
  }
};

/// A tensor's facts as a Tensor object (`dtype` empty when unknown).
TensorFacts tensorFacts(const StatePtr &s, const std::string &name, const Fact &f, const std::string &producer,
                        const std::string &op) {
  TensorFacts tf;
  tf.name = text(name);
  tf.dtype = text(f.type == ElementType::Undefined ? "" : longName(f.type));
  tf.producer = text(producer);
  tf.op = text(op);
  tf.shape = f.shape.rankIsStatic() ? dimList(s, f.shape.dims()) : py::none();
  tf.value = f.value ? dimList(s, *f.value) : py::none();
  return tf;
}

struct DiagnosticObject {
  py::str severity, node, op, message, text;
};

/// The InferOptions of the keyword arguments: inputs {name: [dim, ...] | "N,3,H,W"},
/// dims {symbol: (lo, hi) | n | "1..64"}, values {name: [int | str, ...] | "1,N"}.
std::string dimsText(const py::handle &v) {
  if (py::isinstance<py::str>(v)) return py::cast<std::string>(v);
  std::string text = "[";
  bool first = true;
  for (const auto &e : v) {
    text += first ? "" : ",";
    first = false;
    if (e.is_none()) text += "?";
    else text += py::cast<std::string>(py::str(e));
  }
  return text + "]";
}

InferOptions inferOptions(const py::object &inputs, const py::object &dims, const py::object &values) {
  InferOptions o;
  if (!inputs.is_none())
    for (const auto &[k, v] : py::cast<py::dict>(inputs))
      o.inputs.push_back({py::cast<std::string>(k), dimsText(v)});
  if (!dims.is_none())
    for (const auto &[k, v] : py::cast<py::dict>(dims)) {
      std::string name = py::cast<std::string>(k), spec;
      if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
        auto t = py::cast<py::sequence>(v);
        if (t.size() != 2) throw Error("dims['" + name + "'] must be (lo, hi)");
        spec = (t[0].is_none() ? std::string("0") : py::cast<std::string>(py::str(t[0]))) + ".." +
               (t[1].is_none() ? std::string() : py::cast<std::string>(py::str(t[1])));
      } else {
        spec = py::cast<std::string>(py::str(v));
      }
      o.dims.push_back(take(parseDimBound(name + "=" + spec)));
    }
  if (!values.is_none())
    for (const auto &[k, v] : py::cast<py::dict>(values)) {
      std::string text = py::isinstance<py::int_>(v) ? py::cast<std::string>(py::str(v)) : dimsText(v);
      o.values.push_back({py::cast<std::string>(k), text});
    }
  return o;
}

/// An inference, as the Python object `Inference`.
struct Inference {
  StatePtr state;

  Report report(bool names = true) const {
    return Report{state->source.label(), &state->graph, &state->diags, state->stats, names};
  }
  py::object json(bool names) const {
    ExprScope scope = state->graph.enter();
    return toPython(toJson(report(names)));
  }
  py::str listing(bool names) const {
    std::ostringstream os;
    printText(report(names), os);
    return text(os.str());
  }
  py::dict tensors() const {
    ExprScope scope = state->graph.enter();
    nlohmann::json j = toJson(report(false));
    py::dict out;
    for (const auto &[name, t] : j["tensors"].items()) {
      auto id = state->graph.findOutlet(name);
      if (!id) continue;
      TensorFacts tf = tensorFacts(state, name, state->graph.fact(*id), t.value("producer", ""), t.value("op", ""));
      tf.dtype = text(t["dtype"].is_null() ? "" : t["dtype"].get<std::string>());
      py::str key = tf.name;
      out[key] = py::cast(std::move(tf));
    }
    return out;
  }
  std::vector<DiagnosticObject> diagnostics(bool errorsOnly) const {
    std::vector<DiagnosticObject> out;
    for (const Diagnostic &d : state->diags.list()) {
      if (errorsOnly && d.severity != Severity::Error) continue;
      out.push_back({text(toString(d.severity)), text(d.node), text(d.op), text(d.message), text(format(d))});
    }
    return out;
  }
  /// The facts as ONNX writes them in value_info: for every graph input and every tensor a node
  /// computes, (name, kind 'input' | 'tensor', elem_type (ONNX's number, 0 unknown), dims or None
  /// when the rank is unknown, path); a dim is an int, an expression's text (the whole
  /// expression, its anonymous input dims named as reports name them: `x_d2`), or None where
  /// only an interval is known. `path` locates a subgraph's tensors: [(first output of the node
  /// that holds it, attribute name, index among the attribute's graphs)], empty for the model's.
  py::list valueInfos() const {
    const Graph &g = state->graph;
    ExprScope scope = g.enter();
    NamingOptions whole; // no derived size named: every dim printed in full
    whole.minLength = whole.maxLength = std::numeric_limits<size_t>::max();
    ReportNames names = nameDerivedSizes(g, whole);
    py::list out;
    addValueInfos(g, names.print, py::list(), out);
    return out;
  }
  static py::object valueInfoDim(const Dimension &d, const PrintNames &print) {
    if (d.isStatic()) return py::int_(d.length());
    if (!d.expr()) return py::none();
    std::string t = d.toString(&print);
    if (t.empty() || t.find('?') != std::string::npos) return py::none();
    return text(t);
  }
  static void addValueInfos(const Graph &g, const PrintNames &print, const py::list &path, py::list &out) {
    auto add = [&](const std::string &name, const char *kind, const Fact &f) {
      py::object dims = py::none();
      if (f.shape.rankIsStatic()) {
        py::list l;
        for (const Dimension &d : f.shape.dims()) l.append(valueInfoDim(d, print));
        dims = l;
      }
      out.append(py::make_tuple(text(name), kind, int(f.type), dims, path));
    };
    for (OutletId o : g.inputs)
      if (!g.outlet(o).fact.isUnknown()) add(g.outlet(o).name, "input", g.outlet(o).fact);
    for (const Node &n : g.nodes) {
      if (n.removed || n.isParameter()) continue;
      for (uint32_t k = 0; k < n.outputs.size(); ++k) {
        const Outlet &o = n.outputs[k];
        // Sequences and optionals have no tensor type to write (their facts are their elements').
        if (!o.name.empty() && !o.fact.isUnknown() && holdsTensor(g, {n.id, k}, defaultRegistry()))
          add(o.name, "tensor", o.fact);
      }
      if (n.outputs.empty() || n.outputs[0].name.empty()) continue;
      for (const auto &[attr, value] : n.attrs) {
        std::vector<GraphPtr> bodies;
        if (auto *one = value.get<GraphPtr>()) bodies.push_back(*one);
        if (auto *many = value.get<std::vector<GraphPtr>>()) bodies = *many;
        for (size_t i = 0; i < bodies.size(); ++i) {
          if (!bodies[i]) continue;
          py::list inner; // a new list (py::list(path) would refer to the same one)
          for (const py::handle &step : path) inner.append(step);
          inner.append(py::make_tuple(text(n.outputs[0].name), text(attr), i));
          addValueInfos(*bodies[i], print, inner, out);
        }
      }
    }
  }
  /// What `shapeflow why MODEL SPEC` prints.
  py::str why(const std::string &spec) const {
    std::ostringstream os;
    take(explainDim(state->graph, state->diags, spec, os));
    return text(os.str());
  }
  /// What `shapeflow lower --stage STAGE --json` prints.
  py::object lower(const std::string &stage) const {
    if (stage != "shapes" && stage != "bounds" && stage != "buffers")
      throw Error("stage must be 'shapes', 'bounds' or 'buffers', not '" + stage + "'");
    const Graph &g = state->graph;
    auto program = take(lower::lowerShapes(g));
    ExprScope scope = g.enter();
    LowerReport report{state->source.label(), &g, &program, nullptr, nullptr};
    if (stage == "shapes") return fromJsonText(shapesJsonText(report));
    if (stage == "bounds") {
      auto bounds = take(lower::computeBounds(g));
      report.bounds = &bounds;
      return fromJsonText(boundsJsonText(report));
    }
    auto plan = take(lower::planBuffers(program));
    report.plan = &plan;
    return fromJsonText(buffersJsonText(report));
  }
  py::bytes annotated() const {
    std::string bytes = state->source.bytes ? take(onnx::annotatedModelBuffer(*state->source.bytes, state->graph))
                                            : take(onnx::annotatedModel(state->source.path, state->graph));
    return py::bytes(bytes);
  }
  /// `at`: one {symbol: size}, or a list of them (a row of the totals each, as several `--at`
  /// give; the rankings at them merged).
  py::object stats(const py::object &at, bool svg) const {
    auto s = take(computeStats(state->graph));
    ExprScope scope = state->graph.enter();
    StatsReport r;
    r.model = state->source.label();
    r.graph = &state->graph;
    r.stats = &s;
    if (py::isinstance<py::list>(at) || py::isinstance<py::tuple>(at)) {
      for (const py::handle &item : at) {
        auto row = item.cast<std::map<std::string, int64_t>>();
        take(checkNamesSymbols(state->graph, row));
        for (const auto &[k, v] : row) r.at[k] = v;
        r.rows.push_back(std::move(row));
      }
    } else if (!at.is_none()) {
      r.at = at.cast<std::map<std::string, int64_t>>();
      take(checkNamesSymbols(state->graph, r.at));
    }
    if (svg) return text(statsSvg(r));
    return fromJsonText(statsJsonText(r));
  }
  py::object plan(int64_t align, const std::string &order, bool callerOwnedIO,
                  const std::map<std::string, int64_t> &reference, const std::map<std::string, int64_t> &at,
                  bool svg) const {
    if (order != "model" && order != "memory") throw Error("order must be 'model' or 'memory', not '" + order + "'");
    lower::PlanOptions o;
    o.align = align;
    o.callerOwnedIO = callerOwnedIO;
    o.order = order == "memory" ? lower::OrderPolicy::Memory : lower::OrderPolicy::Model;
    o.reference = reference;
    take(checkNamesSymbols(state->graph, reference));
    take(checkNamesSymbols(state->graph, at));
    auto p = take(lower::planMemory(state->graph, o));
    PlanReport r;
    r.model = state->source.label();
    r.graph = &state->graph;
    r.plan = &p;
    r.at = at;
    if (svg) return text(planSvg(r));
    return fromJsonText(planJsonText(r));
  }
};

/// The sessions Model.run prepared, by what they were prepared for (the inputs' names, types and
/// shapes, and the dims given): the most recent few, so that a loop over inputs of one size
/// loads, infers and prepares the model once. A session is shared with the runs using it; runs
/// do not change it (each has its own arena), so they may overlap.
struct PreparedSessions {
  static constexpr size_t kKeep = 4;
  std::mutex mutex;
  std::list<std::pair<std::string, std::shared_ptr<const eval::Session>>> recent; // most recent first
  size_t prepared = 0; // sessions made so far (a repeated size makes none)

  std::shared_ptr<const eval::Session> find(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = recent.begin(); it != recent.end(); ++it)
      if (it->first == key) {
        recent.splice(recent.begin(), recent, it);
        return it->second;
      }
    return nullptr;
  }
  void keep(const std::string &key, std::shared_ptr<const eval::Session> s) {
    std::lock_guard<std::mutex> lock(mutex);
    ++prepared;
    recent.emplace_front(key, std::move(s));
    if (recent.size() > kKeep) recent.pop_back();
  }
};

/// A loaded model: inference and running start from it.
struct Model {
  Source source;
  std::shared_ptr<PreparedSessions> sessions = std::make_shared<PreparedSessions>();

  Inference infer(const py::object &inputs, const py::object &dims, const py::object &values) const {
    InferOptions o = inferOptions(inputs, dims, values);
    auto s = std::make_shared<State>();
    s->source = source;
    {
      py::gil_scoped_release release;
      // Named sizes the model runs at 0 (an empty cache) are inferred from 0, as the CLI does.
      InferredModel m = take(inferAdmittingZero(inferModel(), o));
      s->graph = std::move(m.graph);
      s->diags = std::move(m.diags);
      s->stats = m.stats;
    }
    return Inference{s};
  }

  py::dict run(const py::dict &inputs, int64_t maxMemory, const py::object &dims) const;

  /// One inference of this model, loaded afresh (model_queries.h).
  InferModel inferModel(const onnx::ImportOptions &import = {}) const {
    Source src = source;
    return [src, import](const InferOptions &o, const std::function<void(Graph &)> &before) -> Result<InferredModel> {
      InferredModel m;
      m.graph = loadGraph(src, m.diags, import);
      SF_TRY(applyInputs(m.graph, o, &m.diags));
      if (before) before(m.graph);
      m.stats = inferGraph(m.graph, m.diags, o);
      return m;
    };
  }

  /// The graph's inputs (`outputs`: its outputs) as the model declares them, before inference.
  std::vector<TensorFacts> declared(bool outputs) const {
    auto s = std::make_shared<State>();
    s->source = source;
    s->graph = loadGraph(source, s->diags);
    ExprScope scope = s->graph.enter();
    std::vector<TensorFacts> out;
    for (OutletId o : outputs ? s->graph.outputs : s->graph.inputs) {
      const Outlet &outlet = s->graph.outlet(o);
      if (!outputs && outlet.fact.constant && outlet.fact.constant->hasData()) continue; // a weight
      out.push_back(tensorFacts(s, outlet.name, outlet.fact, "", ""));
    }
    return out;
  }

  /// What `shapeflow check --json` prints: the inference checked against runs at sample sizes
  /// (`at`: explicit samples, else `samples` drawn from what the model admits).
  py::object check(size_t samples, const std::vector<std::map<std::string, int64_t>> &at, int64_t maxMemory,
                   const py::object &dims) const {
    eval::CheckOptions co;
    co.samples = samples;
    co.maxMemory = maxMemory;
    co.bindings = at;
    InferOptions o = withEmptySizes(inferOptions(py::none(), dims, py::none()), co.bindings);
    nlohmann::json j;
    {
      py::gil_scoped_release release;
      InferredModel m = take(inferModel(onnx::ImportOptions{.decodeLarge = true})(o, {}));
      j = checkJson(source.label(), take(eval::checkInference(m.graph, co)));
    }
    return toPython(j);
  }

  /// `shapeflow simplify`: the simplified model's bytes and the report (its JSON).
  py::tuple simplify(const py::object &inputs, const py::object &dims, const py::object &values,
                     int64_t foldLimit) const {
    InferOptions o = inferOptions(inputs, dims, values);
    std::string bytes;
    nlohmann::json report;
    {
      py::gil_scoped_release release;
      InferredModel m = take(inferAdmittingZero(inferModel(onnx::ImportOptions{.decodeLarge = true}), o));
      if (m.diags.hasErrors()) {
        std::string errors;
        for (const Diagnostic &d : m.diags.list())
          if (d.severity == Severity::Error) errors += "\n  " + format(d);
        throw Error("not simplified: the model has errors:" + errors);
      }
      SimplifyOptions so;
      so.foldLimit = foldLimit;
      SimplifyReport r = take(simplifyGraph(m.graph, so));
      r.model = source.label();
      std::shared_ptr<onnx::MappedFile> file;
      std::string_view original;
      if (source.bytes) original = *source.bytes;
      else {
        file = take(onnx::MappedFile::open(source.path));
        original = file->bytes();
      }
      if (onnx::sniffModelBytes(original.substr(0, 64)).kind != onnx::FileKind::Onnx) original = {};
      std::ostringstream os;
      take(writeSimplified(m.graph, original, os, r));
      bytes = std::move(os).str();
      report = simplifyJson(r);
    }
    return py::make_tuple(py::bytes(bytes), toPython(report));
  }

  /// What `shapeflow contract --json` prints: the input sizes the model accepts.
  py::object contract(const py::object &inputs, const py::object &dims, const py::object &values) const {
    InferOptions o = inferOptions(inputs, dims, values);
    nlohmann::json j;
    {
      py::gil_scoped_release release;
      ContractedModel m = take(inferWithContract(inferModel(), o));
      j = contractJson(m.contract, source.label());
    }
    return toPython(j);
  }

  /// What `shapeflow plan --max-ratio --json` prints: plans per range of the sizes.
  py::object planRanges(double maxRatio, size_t maxRanges, int64_t align, const std::string &order,
                        bool callerOwnedIO, const py::object &inputs, const py::object &dims,
                        const py::object &values) const {
    if (order != "model" && order != "memory") throw Error("order must be 'model' or 'memory', not '" + order + "'");
    if (!(maxRatio >= 1)) throw Error("max_ratio must be at least 1");
    if (maxRanges < 1) throw Error("max_ranges must be at least 1");
    InferOptions o = inferOptions(inputs, dims, values);
    lower::PlanOptions p;
    p.align = align;
    p.callerOwnedIO = callerOwnedIO;
    p.order = order == "memory" ? lower::OrderPolicy::Memory : lower::OrderPolicy::Model;
    nlohmann::json j;
    {
      py::gil_scoped_release release;
      j = rangePlansJson(take(planByRanges(inferModel(), o, p, {maxRatio, maxRanges})), source.label(), maxRatio);
    }
    return toPython(j);
  }

  /// What `shapeflow memory --json` prints: the parts of memory at rows of sizes, and a fit.
  py::object memory(const std::vector<std::map<std::string, int64_t>> &at, const std::vector<std::string> &ties,
                    const py::object &fit, const py::object &forSymbol, const std::string &part,
                    const py::object &inputs, const py::object &dims, const py::object &values, int64_t align) const {
    InferOptions o = inferOptions(inputs, dims, values);
    MemoryRequest request;
    request.at.assign(at.begin(), at.end());
    request.ties = ties;
    request.align = align;
    if (fit.is_none() != forSymbol.is_none()) throw Error("fit and for_ go together");
    if (!fit.is_none()) {
      request.budget = py::isinstance<py::str>(fit) ? take(parseBytes(py::cast<std::string>(fit))) : py::cast<int64_t>(fit);
      request.fitSymbol = py::cast<std::string>(forSymbol);
      auto p = memoryPartNamed(part);
      if (!p) throw Error("part: one of weights, kv_cache, activations, io, total, not '" + part + "'");
      request.fitPart = *p;
    }
    nlohmann::json j;
    {
      py::gil_scoped_release release;
      j = memoryJson(take(modelMemory(inferModel(), o, request, source.label())));
    }
    return toPython(j);
  }
};

ElementType typeOf(const py::dtype &dt) {
  char kind = dt.kind();
  size_t size = size_t(dt.itemsize());
  if (kind == 'f') return size == 2 ? ElementType::F16 : size == 4 ? ElementType::F32 : ElementType::F64;
  if (kind == 'b') return ElementType::Bool;
  if (kind == 'i') return size == 1 ? ElementType::I8 : size == 2 ? ElementType::I16 : size == 4 ? ElementType::I32 : ElementType::I64;
  if (kind == 'u') return size == 1 ? ElementType::U8 : size == 2 ? ElementType::U16 : size == 4 ? ElementType::U32 : ElementType::U64;
  throw Error("numpy dtype " + py::cast<std::string>(py::str(py::object(dt))) + " is not an ONNX element type");
}

py::dtype dtypeOf(ElementType t) {
  switch (t) {
  case ElementType::F16: return py::dtype("float16");
  case ElementType::F32: return py::dtype("float32");
  case ElementType::F64: return py::dtype("float64");
  case ElementType::Bool: return py::dtype("bool");
  case ElementType::I8: return py::dtype("int8");
  case ElementType::I16: return py::dtype("int16");
  case ElementType::I32: return py::dtype("int32");
  case ElementType::I64: return py::dtype("int64");
  case ElementType::U8: return py::dtype("uint8");
  case ElementType::U16: return py::dtype("uint16");
  case ElementType::U32: return py::dtype("uint32");
  case ElementType::U64: return py::dtype("uint64");
  default: throw Error(std::string("element type ") + shortName(t) + " has no numpy dtype");
  }
}

py::object arrayOf(const Tensor &t) {
  if (t.isString()) {
    py::list l;
    for (const auto &s : t.strings()) l.append(text(s));
    return py::module_::import("numpy").attr("array")(l, "object").attr("reshape")(py::cast(t.shape()));
  }
  py::array a(dtypeOf(t.type()), std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  if (!t.bytes().empty()) std::memcpy(a.mutable_data(), t.bytes().data(), t.bytes().size());
  return a;
}

py::object valueOf(const Value &v) {
  if (v.isTensor()) return arrayOf(*v);
  if (v.isSequence()) {
    py::list l;
    for (const auto &e : v.elements()) l.append(arrayOf(*e));
    return l;
  }
  return py::none();
}

py::dict Model::run(const py::dict &inputs, int64_t maxMemory, const py::object &dims) const {
  InferOptions options = inferOptions(py::none(), dims, py::none());
  std::map<std::string, Tensor> tensors;
  for (const auto &[k, v] : inputs) {
    auto a = py::array::ensure(v, py::array::c_style);
    if (!a) throw Error("input '" + py::cast<std::string>(k) + "' is not an array");
    ElementType t = typeOf(a.dtype());
    Shape shape(a.shape(), a.shape() + a.ndim());
    std::vector<std::byte> bytes(size_t(a.nbytes()));
    if (!bytes.empty()) std::memcpy(bytes.data(), a.data(), bytes.size());
    tensors[py::cast<std::string>(k)] = take(Tensor::fromBytes(t, std::move(shape), std::move(bytes)));
  }
  // What a session is prepared for: the inputs' types and sizes (not their elements: the fold
  // and the arena depend on the sizes alone) and the dims given.
  std::string key = dims.is_none() ? std::string() : py::cast<std::string>(py::repr(dims));
  for (const auto &[name, t] : tensors) key += fmt::format("\n{}:{}[{}]", name, shortName(t.type()), fmt::join(t.shape(), ","));
  eval::RunResult result;
  {
    py::gil_scoped_release release;
    std::map<std::string, Value> feeds;
    for (const auto &[name, t] : tensors) feeds.emplace(name, Value(std::make_shared<const Tensor>(t)));
    std::shared_ptr<const eval::Session> session = sessions->find(key);
    if (!session) {
      Diagnostics diags;
      Graph g = loadGraph(source, diags, onnx::ImportOptions{.decodeLarge = true});
      take(applyInputs(g, options, &diags));
      // Sizes of 0 in the data (an empty KV cache) admitted as `shapeflow run` admits them.
      std::map<std::string, Shape> shapes;
      for (const auto &[name, t] : tensors) shapes[name] = t.shape();
      admitEmptySizes(g, shapes);
      inferGraph(g, diags, options);
      // Prepared as `shapeflow run` prepares it: the executor's rewrites, the arena at these sizes.
      session = take(eval::prepareSession(std::move(g), feeds));
      sessions->keep(key, session);
    }
    eval::RunOptions o;
    o.maxMemory = maxMemory;
    result = take(eval::run(*session->plan, feeds, o));
  }
  py::dict out;
  for (size_t i = 0; i < result.outputs.size(); ++i) out[text(result.outputNames[i])] = valueOf(result.outputs[i]);
  return out;
}

Model load(const py::object &src) {
  Source s;
  if (py::hasattr(src, "SerializeToString")) {
    s.bytes = std::make_shared<const std::string>(py::cast<std::string>(py::bytes(src.attr("SerializeToString")())));
  } else if (py::isinstance<py::bytes>(src) || py::isinstance<py::bytearray>(src) ||
             py::isinstance<py::memoryview>(src)) {
    py::bytes b = py::module_::import("builtins").attr("bytes")(src);
    s.bytes = std::make_shared<const std::string>(py::cast<std::string>(b));
  } else {
    s.path = py::cast<std::string>(py::str(py::module_::import("os").attr("fspath")(src)));
    std::ifstream probe(s.path, std::ios::binary);
    if (!probe) throw Error(s.path + ": cannot open");
  }
  // Read now, so that a file that is not a model is an error of load().
  Diagnostics diags;
  {
    py::gil_scoped_release release;
    loadGraph(s, diags);
  }
  return Model{s};
}

} // namespace
} // namespace sf::python

namespace py = pybind11;

/// `python -m shapeflow ARGS`: the command line, in this process. argv[0] names the command.
int commandLine(const std::vector<std::string> &args) {
  std::vector<const char *> argv{"shapeflow"};
  for (const std::string &a : args) argv.push_back(a.c_str());
  py::gil_scoped_release release;
  return sf::cli::runCommandLine(int(argv.size()), argv.data());
}

PYBIND11_MODULE(_core, m) {
  using namespace sf::python;
  m.doc() = "Static shape inference for neural networks (ONNX): the facts of every tensor, "
            "symbolic where the input sizes are.";
  py::register_exception<Error>(m, "Error");
  m.attr("Error").attr("__doc__") = "An error of shapeflow: a model it cannot read, options that do not fit the "
                                    "model, a question the facts cannot answer.";
  m.attr("__version__") = sf::cli::version();
  m.def("command_line", &commandLine, py::arg("args"),
        "Runs the shapeflow command line with these arguments (after the command name); the exit status.");

  bindDim(m);

  py::class_<TensorFacts>(m, "Tensor", "What inference knows of one tensor.")
      .def_readonly("name", &TensorFacts::name)
      .def_readonly("dtype", &TensorFacts::dtype, "numpy-style name ('float32'); '' when unknown")
      .def_readonly("shape", &TensorFacts::shape, "list of int | Dim; None when the rank is unknown")
      .def_readonly("value", &TensorFacts::value, "the elements of a small integer tensor (int | Dim), or None")
      .def_readonly("producer", &TensorFacts::producer)
      .def_readonly("op", &TensorFacts::op)
      .def("__repr__", &TensorFacts::repr);

  py::class_<DiagnosticObject>(m, "Diagnostic", "An error, warning, assumption or note of inference, with its node and op.")
      .def_readonly("severity", &DiagnosticObject::severity)
      .def_readonly("node", &DiagnosticObject::node)
      .def_readonly("op", &DiagnosticObject::op)
      .def_readonly("message", &DiagnosticObject::message)
      .def("__str__", [](const DiagnosticObject &d) { return py::str("{}: {}").format(d.severity, d.text); })
      .def("__repr__", [](const DiagnosticObject &d) { return py::str("Diagnostic({}: {})").format(d.severity, d.text); });

  py::class_<Inference>(m, "Inference", "The facts of one inference.")
      .def_property_readonly("tensors", &Inference::tensors, "{name: Tensor} for every tensor a node computes")
      .def_property_readonly("diagnostics", [](const Inference &i) { return i.diagnostics(false); })
      .def_property_readonly("errors", [](const Inference &i) { return i.diagnostics(true); })
      .def("json", &Inference::json, py::arg("names") = true,
           "The object `shapeflow infer --json` prints (names=False: `--no-names`, every dim expanded).")
      .def("text", &Inference::listing, py::arg("names") = true, "The listing `shapeflow infer` prints.")
      .def("value_infos", &Inference::valueInfos,
           "[(name, 'input' | 'tensor', elem_type, dims | None, path)] with dims of int | expression text | None; "
           "path: [(node's first output, attribute, index)] to a subgraph, [] for the model's graph.")
      .def("why", &Inference::why, py::arg("spec"), "What `shapeflow why MODEL TENSOR[AXIS]` prints.")
      .def("lower", &Inference::lower, py::arg("stage") = "shapes",
           "The object `shapeflow lower --stage STAGE --json` prints.")
      .def("annotated_model", &Inference::annotated,
           "The model with a value_info for every inferred tensor, as bytes (onnx.load_from_string reads it).")
      .def("stats", &Inference::stats, py::arg("at") = py::none(), py::arg("svg") = false,
           "The object `shapeflow stats --json` prints; `at` a {symbol: size} (`--at`), or a list of them "
           "(several `--at`: `rows`, the totals at each).")
      .def("plan", &Inference::plan, py::arg("align") = 64, py::arg("order") = "model",
           py::arg("caller_owned_io") = false, py::arg("reference") = std::map<std::string, int64_t>{},
           py::arg("at") = std::map<std::string, int64_t>{}, py::arg("svg") = false,
           "The object `shapeflow plan --json` prints (svg=True: the picture `--svg` draws).");

  py::class_<Model>(m, "Model", "A loaded model.")
      .def("infer", &Model::infer, py::arg("inputs") = py::none(), py::arg("dims") = py::none(),
           py::arg("values") = py::none(),
           "Infers every tensor's facts: inputs={'x': ['N', 3, 'H', 'W']}, dims={'N': (1, 64)}, "
           "values={'k': [3]}.")
      .def("contract", &Model::contract, py::arg("inputs") = py::none(), py::arg("dims") = py::none(),
           py::arg("values") = py::none(),
           "The input sizes the model accepts, with the node behind each requirement: the object "
           "`shapeflow contract --json` prints.")
      .def("memory", &Model::memory, py::arg("at") = std::vector<std::map<std::string, int64_t>>{},
           py::arg("ties") = std::vector<std::string>{}, py::arg("fit") = py::none(), py::arg("for_") = py::none(),
           py::arg("part") = "total", py::arg("inputs") = py::none(), py::arg("dims") = py::none(),
           py::arg("values") = py::none(), py::arg("align") = 64,
           "What `shapeflow memory --json` prints: weights, KV cache, activations, inputs and outputs at each "
           "binding of `at` (a list of {symbol: size}), `ties` (['T=P+S']), and with fit (bytes or '8GiB') and "
           "for_ (a symbol) the largest size whose `part` fits.")
      .def("plan_ranges", &Model::planRanges, py::arg("max_ratio") = 1.05, py::arg("max_ranges") = 8,
           py::arg("align") = 64, py::arg("order") = "model", py::arg("caller_owned_io") = false,
           py::arg("inputs") = py::none(), py::arg("dims") = py::none(), py::arg("values") = py::none(),
           "What `shapeflow plan --max-ratio --json` prints: memory plans per range of the sizes, each within "
           "max_ratio of the lower bound at the sizes the model admits in its range.")
      .def_property_readonly("inputs", [](const Model &m) { return m.declared(false); },
                             "The graph's inputs as the model declares them (weights left out).")
      .def_property_readonly("outputs", [](const Model &m) { return m.declared(true); },
                             "The graph's outputs as the model declares them.")
      .def("check", &Model::check, py::arg("samples") = 4,
           py::arg("at") = std::vector<std::map<std::string, int64_t>>{}, py::arg("max_memory") = 0,
           py::arg("dims") = py::none(), "The object `shapeflow check --json` prints.")
      .def("simplify", &Model::simplify, py::arg("inputs") = py::none(), py::arg("dims") = py::none(),
           py::arg("values") = py::none(), py::arg("fold_limit") = int64_t(1) << 20,
           "`shapeflow simplify`: (the simplified model's bytes, the report `--json` prints).")
      .def("run", &Model::run, py::arg("inputs"), py::arg("max_memory") = 0, py::arg("dims") = py::none(),
           "Runs the model on numpy arrays with the reference executor; {output name: array}. The model is "
           "prepared once for each set of input sizes (the last 4 kept): a loop at one size prepares it once.")
      .def_property_readonly("prepared_runs", [](const Model &m) { return m.sessions->prepared; },
                             "How many times run() has prepared the model (once per new set of input sizes).");

  m.def("load", &load, py::arg("model"),
        "Loads a model: a path, bytes, or an object with SerializeToString (onnx.ModelProto).");
}
