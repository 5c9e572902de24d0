// One conformance test: see runner.h.
#include "runner.h"

#include "compare.h"
#include "onnx_reference.h"
#include "test_data.h"

#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/ops/op.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace sf::conformance {
namespace fs = std::filesystem;

const char *toString(Verdict v) {
  switch (v) {
  case Verdict::Pass: return "pass";
  case Verdict::Fail: return "fail";
  case Verdict::Imprecise: return "imprecise";
  case Verdict::Excluded: return "excluded";
  }
  return "?";
}

const std::string *Exclusions::find(const std::string &suite, const std::string &name,
                                    size_t output) const {
  std::string k = ":" + std::to_string(output);
  for (const std::string &key : {suite + "/" + name + k, name + k, suite + "/" + name, name}) {
    auto it = reasons.find(key);
    if (it != reasons.end()) return &it->second;
  }
  return nullptr;
}

bool Exclusions::lists(const std::string &suite, const std::string &name) const {
  for (const auto &[key, reason] : reasons) {
    std::string base = key.substr(0, key.find(':'));
    if (base == name || base == suite + "/" + name) return true;
  }
  return false;
}

bool loadExclusions(const fs::path &path, Exclusions &out, std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path.string() + ": cannot open";
    return false;
  }
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream ss(line);
    std::string name, reason, word;
    if (!(ss >> name)) continue;
    while (ss >> word) reason += (reason.empty() ? "" : " ") + word;
    if (reason.empty()) {
      error = path.string() + ":" + std::to_string(lineNo) + ": '" + name + "' has no reason";
      return false;
    }
    out.reasons[name] = reason;
  }
  return true;
}

nlohmann::json TestResult::toJson() const {
  return {{"suite", suite},
          {"name", name},
          {"verdict", int(verdict)},
          {"reason", reason},
          {"details", details},
          {"ops", std::vector<std::string>(ops.begin(), ops.end())},
          {"constantInputs", constantInputs},
          {"oursExact", oursExact},
          {"referenceRan", referenceRan},
          {"referenceExact", referenceExact},
          {"referenceWrong", referenceWrong},
          {"referenceNote", referenceNote},
          {"ms", ms}};
}

TestResult TestResult::fromJson(const nlohmann::json &j) {
  TestResult r;
  r.suite = j.at("suite");
  r.name = j.at("name");
  r.verdict = Verdict(j.at("verdict").get<int>());
  r.reason = j.at("reason");
  r.details = j.at("details").get<std::vector<std::string>>();
  auto ops = j.at("ops").get<std::vector<std::string>>();
  r.ops.insert(ops.begin(), ops.end());
  r.constantInputs = j.at("constantInputs").get<std::vector<std::string>>();
  r.oursExact = j.at("oursExact");
  r.referenceRan = j.at("referenceRan");
  r.referenceExact = j.at("referenceExact");
  r.referenceWrong = j.at("referenceWrong");
  r.referenceNote = j.at("referenceNote");
  r.ms = j.at("ms");
  return r;
}

void warmUp(const RunOptions &options) {
  (void)defaultRegistry();
  if (options.reference) warmUpReference();
}

namespace {

/// Facts that the file declares for node outputs (value_info, graph outputs) are the answer, not
/// inference: forget them, in subgraphs too. Parameters and constants keep theirs.
void forgetDeclaredFacts(Graph &g) {
  for (Node &n : g.nodes) {
    if (n.removed) continue;
    for (auto &item : n.attrs) {
      Attribute &a = item.second;
      if (auto *sub = a.get<GraphPtr>(); sub && *sub) forgetDeclaredFacts(**sub);
      if (auto *subs = a.get<std::vector<GraphPtr>>())
        for (auto &s : *subs)
          if (s) forgetDeclaredFacts(*s);
    }
    if (n.isParameter() || n.isConstant()) continue;
    for (auto &o : n.outputs) {
      o.fact = Fact{};
      o.declared.reset();
    }
  }
}

bool fullyKnown(const Fact &f) {
  return f.type != ElementType::Undefined && f.shape.rankIsStatic() && f.shape.isStatic();
}

std::string opName(const Node &n) { return n.domain.empty() ? n.opType : n.domain + "." + n.opType; }

/// The ops to blame for a non-exact output: the first node, in topological order among the
/// output's ancestors, that has no rule, or loses precision from fully known inputs, or
/// disagrees with a fully known fact of ONNX's reference; else the output's producer.
std::pair<std::string, std::string> blame(const Graph &g, OutletId output,
                                          const ReferenceResult &ref) {
  const OpRegistry &reg = defaultRegistry();
  std::unordered_set<uint32_t> cone;
  std::vector<uint32_t> stack{output.node};
  while (!stack.empty()) {
    uint32_t id = stack.back();
    stack.pop_back();
    if (!cone.insert(id).second) continue;
    for (const OutletId &in : g.nodes[id].inputs)
      if (in.valid()) stack.push_back(in.node);
  }
  auto order = g.topologicalOrder();
  if (order.ok()) {
    for (uint32_t id : *order) {
      const Node &n = g.nodes[id];
      if (!cone.count(id) || n.isParameter() || n.isConstant()) continue;
      if (!reg.find(n.domain, n.opType))
        return {opName(n), "no shape rule for op '" + opName(n) + "' (node '" + n.name + "')"};
      bool inputsKnown = std::all_of(n.inputs.begin(), n.inputs.end(), [&](const OutletId &in) {
        return !in.valid() || fullyKnown(g.fact(in));
      });
      for (uint32_t slot = 0; slot < n.outputs.size(); ++slot) {
        const Outlet &o = n.outputs[slot];
        bool used = !o.successors.empty() ||
                    std::count(g.outputs.begin(), g.outputs.end(), OutletId{id, slot});
        if (o.name.empty() || !used) continue;
        auto r = ref.valueInfo.find(o.name);
        if (r != ref.valueInfo.end() && fullyKnown(r->second) &&
            (r->second.type != o.fact.type || r->second.shape != o.fact.shape))
          return {opName(n), "node '" + n.name + "' (" + opName(n) + ") output '" + o.name +
                                 "' is " + typeAndShape(o.fact) + ", ONNX infers " +
                                 typeAndShape(r->second)};
        if (inputsKnown && !fullyKnown(o.fact))
          return {opName(n), "node '" + n.name + "' (" + opName(n) + ") output '" + o.name +
                                 "' is " + typeAndShape(o.fact) + " from fully known inputs"};
      }
    }
  }
  const Node &p = g.nodes[output.node];
  return {opName(p), ""};
}


/// The index in `names` of the value's name, else `position` (when in range), else -1.
int matchName(const std::string &dataName, size_t position, const std::vector<std::string> &names) {
  if (!dataName.empty())
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == dataName) return int(i);
  return position < names.size() ? int(position) : -1;
}

bool usableAsConstant(const DataValue &v, size_t maxElements) {
  if (v.kind != DataValue::Kind::Tensor) return false;
  const DataTensor &t = v.tensors[0];
  ElementType type = elementTypeOf(t.dataType());
  if (type == ElementType::Undefined || type == ElementType::String || isComplex(type)) return false;
  if (t.dims().size() > 1) return false;
  auto n = onnx::elementCount(t.view);
  return n.ok() && size_t(*n) <= maxElements;
}

struct Loaded {
  onnx::ModelView model;
  std::vector<std::string> inputNames, outputNames;
  std::vector<const onnx::TypeView *> inputTypes;        // declared, by formal input index
  std::vector<std::optional<DataValue>> inputs, outputs; // by formal input / graph output index
  std::vector<std::string> notes;                        // quirks of the test data
};

/// Reads the model view and the test data; an error names what could not be read.
Result<Loaded> loadTest(const fs::path &dir) {
  Loaded l;
  SF_ASSIGN(l.model, onnx::readModelFile((dir / "model.onnx").string()));
  auto formals = formalInputs(l.model.graph);
  for (const auto *in : formals) {
    l.inputNames.emplace_back(in->name);
    l.inputTypes.push_back(&in->type);
  }
  for (const auto &out : l.model.graph.outputs) l.outputNames.emplace_back(out.name);
  l.inputs.resize(formals.size());
  l.outputs.resize(l.outputNames.size());
  fs::path data = dir / "test_data_set_0";
  if (!fs::is_directory(data)) return makeError("no test_data_set_0");
  auto inFiles = dataFiles(data, "input");
  for (size_t k = 0; k < inFiles.size(); ++k) {
    const onnx::TypeView *declared = k < formals.size() ? &formals[k]->type : nullptr;
    SF_ASSIGN(DataValue v, readDataValue(inFiles[k], declared));
    int i = matchName(v.name, k, l.inputNames);
    if (i < 0) return makeError(inFiles[k].filename().string() + ": the model has no such input");
    fixBfloat16(v, l.inputTypes[size_t(i)], "input '" + l.inputNames[size_t(i)] + "'", l.notes);
    l.inputs[size_t(i)] = std::move(v);
  }
  auto outFiles = dataFiles(data, "output");
  for (size_t k = 0; k < outFiles.size(); ++k) {
    const onnx::TypeView *declared = k < l.model.graph.outputs.size() ? &l.model.graph.outputs[k].type : nullptr;
    SF_ASSIGN(DataValue v, readDataValue(outFiles[k], declared));
    int i = matchName(v.name, k, l.outputNames);
    if (i < 0) return makeError(outFiles[k].filename().string() + ": the model has no such output");
    fixBfloat16(v, &l.model.graph.outputs[size_t(i)].type, "output '" + l.outputNames[size_t(i)] + "'", l.notes);
    l.outputs[size_t(i)] = std::move(v);
  }
  return l;
}

/// Gives a Parameter the test's input: its actual shape, or its values when small. Returns a
/// note when the test data contradicts the declared fact (an importer or test data problem).
std::optional<std::string> bindParameter(Fact &fact, const DataValue &v, bool asConstant,
                                         size_t maxElements, bool checkDeclared) {
  if (v.kind == DataValue::Kind::EmptyOptional || v.tensors.empty()) return std::nullopt;
  if (v.kind == DataValue::Kind::Sequence) {
    Fact e = elementFact(v.tensors);
    if (e.type == ElementType::Undefined) e.type = fact.type;
    fact = e;
    return std::nullopt;
  }
  const DataTensor &t = v.tensors[0];
  Check c;
  Fact declared = fact;
  declared.value.reset();
  declared.constant.reset();
  c = checkTensor(declared, t, CheckOptions{false});
  std::optional<std::string> note;
  if (checkDeclared && c.precision == Precision::Wrong) note = "declared " + c.summary();
  if (asConstant) {
    auto tensor = toTensor(t, maxElements);
    if (tensor.ok()) {
      fact = Fact::fromTensor(std::make_shared<const Tensor>(std::move(*tensor)));
      return note;
    }
  }
  fact.type = elementTypeOf(t.dataType());
  fact.shape = PartialShape(Shape(t.dims().begin(), t.dims().end()));
  fact.value.reset();
  fact.constant.reset();
  return note;
}

} // namespace

TestResult runTest(const fs::path &dir, const std::string &suite, const Exclusions &exclusions,
                   const RunOptions &options) {
  auto t0 = std::chrono::steady_clock::now();
  TestResult r;
  r.suite = suite;
  r.name = dir.filename().string();
  auto finish = [&]() -> TestResult {
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  auto loaded = loadTest(dir);
  if (!loaded.ok()) {
    r.verdict = Verdict::Fail;
    r.reason = "load: " + loaded.error().message;
    r.ops.insert("(load)");
    return finish();
  }
  Loaded &l = *loaded;
  Diagnostics diags;
  auto imported = onnx::importModel(l.model, diags);
  if (!imported.ok()) {
    r.verdict = Verdict::Fail;
    r.reason = "import: " + imported.error().message;
    r.ops.insert("(import)");
    return finish();
  }
  Graph &g = *imported;
  ExprScope exprScope = g.enter(); // the model's expressions, for everything below
  forgetDeclaredFacts(g);

  // Inputs: actual shapes; small tensors as constants (for shape inputs of Reshape, Expand, ...).
  std::vector<InputBinding> bindings;
  std::vector<std::string> inputProblems;
  for (size_t i = 0; i < l.inputNames.size(); ++i) {
    if (!l.inputs[i]) continue;
    bool tensorInput = l.inputTypes[i]->kind == onnx::TypeView::Tensor;
    InputBinding b{l.inputNames[i], &*l.inputs[i],
                   tensorInput && usableAsConstant(*l.inputs[i], options.constantMaxElements)};
    // Named dims are assumed >= 1 (README, "Assumptions"); a test that feeds 0 for one runs as a
    // user would run it, with --dim NAME=0.. .
    admitZeroDims(g, b.name, l.inputTypes[i], *b.data, l.notes);
    for (const OutletId &o : g.inputs) {
      Outlet &out = g.outlet(o);
      if (out.name != b.name) continue;
      out.fact.shape = g.symbols.resolve(out.fact.shape);
      auto quirk = contradictsDeclared(l.inputTypes[i], *b.data);
      if (quirk) l.notes.push_back("test data quirk: input '" + b.name + "': " + *quirk);
      auto note = bindParameter(out.fact, *b.data, b.asConstant, options.constantMaxElements, !quirk);
      if (note) inputProblems.push_back("input '" + b.name + "': " + *note);
      if (b.asConstant && out.fact.constant) r.constantInputs.push_back(b.name);
    }
    bindings.push_back(b);
  }

  for (const auto &n : l.notes) r.details.push_back(n);
  InferStats stats = inferGraph(g, diags);
  std::vector<const Diagnostic *> errors;
  for (const auto &d : diags.list()) {
    if (d.severity == Severity::Error) errors.push_back(&d);
    if (d.severity != Severity::Note) r.details.push_back(std::string(sf::toString(d.severity)) + ": " + format(d));
  }

  ReferenceResult ref;
  if (options.reference && referenceAvailable()) ref = runReference((dir / "model.onnx").string(), bindings);
  r.referenceRan = ref.ran;

  // Judge every output, ours and ONNX's.
  Check ours, theirs;
  std::vector<std::string> badOutputs; // one line per non-exact output
  std::vector<std::string> excuses;    // reasons of listed outputs that are imprecise in sizes only
  bool allExcused = true;
  std::optional<OutletId> firstBad;
  size_t compared = 0;
  for (size_t k = 0; k < g.outputs.size() && k < l.outputs.size(); ++k) {
    if (!l.outputs[k]) continue;
    ++compared;
    const std::string label = "output " + std::to_string(k) + " '" + l.outputNames[k] + "'";
    Check c = checkValue(g.fact(g.outputs[k]), *l.outputs[k]);
    if (c.precision != Precision::Exact) {
      if (!firstBad) firstBad = g.outputs[k];
      badOutputs.push_back(label + ": " + c.summary());
      const std::string *why = exclusions.find(suite, r.name, k);
      if (why && c.precision == Precision::Imprecise && !c.looseTypeOrRank) excuses.push_back(*why);
      else allExcused = false;
    }
    ours.merge(c);
    if (ref.ran) {
      const auto &rf = k < ref.outputs.size() ? ref.outputs[k] : std::nullopt;
      Check rc = rf ? checkValue(*rf, *l.outputs[k], CheckOptions{false}) : Check{};
      if (!rf) rc.add(Precision::Imprecise, "no type inferred");
      if (rc.precision != Precision::Exact) rc.notes = {label + ": " + rc.summary()};
      theirs.merge(rc);
    }
  }
  if (compared == 0) ours.add(Precision::Wrong, "no expected outputs to compare with");
  for (const auto &n : badOutputs) r.details.push_back(n);
  r.oursExact = ours.precision == Precision::Exact && errors.empty() && inputProblems.empty();
  if (ref.ran) {
    r.referenceExact = theirs.precision == Precision::Exact;
    r.referenceWrong = theirs.precision == Precision::Wrong;
    r.referenceNote = ref.error.empty() ? theirs.summary() : ref.error + "; " + theirs.summary();
    if (!r.referenceNote.empty()) r.details.push_back("ONNX: " + r.referenceNote);
  }
  for (const auto &op : stats.opsWithoutRule) r.details.push_back("no rule: " + op);

  // The verdict.
  bool excluded = allExcused && !excuses.empty();
  if (!inputProblems.empty()) {
    r.verdict = Verdict::Fail;
    r.reason = inputProblems[0];
    r.ops.insert("(import)");
  } else if (!errors.empty()) {
    r.verdict = Verdict::Fail;
    r.reason = "inference error: " + format(*errors[0]);
    for (const auto *e : errors) r.ops.insert(e->op.empty() ? "(graph)" : e->op);
  } else if (ours.precision == Precision::Exact) {
    r.verdict = Verdict::Pass;
  } else {
    if (ours.precision == Precision::Wrong) r.verdict = Verdict::Fail;
    else if (excluded && !r.referenceExact) r.verdict = Verdict::Excluded;
    else r.verdict = Verdict::Imprecise;
    r.reason = badOutputs.empty() ? ours.summary() : badOutputs[0];
    if (badOutputs.size() > 1)
      r.reason += " (+" + std::to_string(badOutputs.size() - 1) + " more outputs)";
    if (firstBad) {
      auto [op, why] = blame(g, *firstBad, ref);
      r.ops.insert(op);
      if (!why.empty()) r.details.push_back("blame: " + why);
      if (!why.empty() && why.rfind("no shape rule", 0) == 0) r.reason = why + "; " + r.reason;
    }
    if (r.verdict == Verdict::Excluded) r.reason = "value-dependent, bounds ok: " + excuses[0];
    else if (excluded && r.referenceExact)
      r.reason += " [listed in exclusions.txt, but ONNX infers it exactly]";
  }
  return finish();
}

} // namespace sf::conformance
