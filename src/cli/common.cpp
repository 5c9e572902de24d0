// What the subcommands share (cli/common.h).
#include "common.h"

#include <chrono>

#include <set>

#include "shapeflow/support/format.h"

#include <iostream>

namespace sf::cli {

int fail(const std::string &message) {
  std::cerr << "shapeflow: " << message << "\n";
  return 2;
}

void printErrors(const Diagnostics &diags) {
  for (const Diagnostic &d : diags.list())
    if (d.severity == Severity::Error) std::cerr << "error: " << format(d) << "\n";
}

int failAfterErrors(const Diagnostics &diags, const std::string &stage, const std::string &message) {
  printErrors(diags);
  std::cerr << "shapeflow: the model has errors (above), so no " << stage << " was made (" << message << ")\n";
  return 1;
}

void ModelArgs::add(CLI::App *cmd, bool withShapes) {
  cmd->add_option("MODEL", path, "an .onnx model or a text-form graph")->required();
  if (withShapes) {
    cmd->add_option("--input", inputs,
                    "override an input's shape: x=1,3,224,224 | x=N,3,H,W | x=[1..8,3,?,?] | s=[]");
    cmd->add_option("--value", values, "the elements of an integer input: k=3 | shape=1,N,64");
  }
  cmd->add_option("--dim", dims, "bound a symbol: N=1..64");
  cmd->add_flag("--strict", strict,
                "every assumption inference makes (a named dim is at least 1, a computed Reshape "
                "entry is not 0, an If's unknown branch) is an error: exit 1");
  cmd->add_option("--backward", backward,
                  "backward inference (facts from the ops reading an input back to it): auto "
                  "(where an input's rank or element type is unknown), always, off")
      ->check(CLI::IsMember({"auto", "always", "off"}));
}

Result<InferOptions> ModelArgs::options() const {
  InferOptions o;
  for (const auto &d : dims) {
    SF_ASSIGN(DimBound b, parseDimBound(d));
    o.dims.push_back(b);
  }
  for (const auto &in : inputs) {
    SF_ASSIGN(InputShape s, parseInputShape(in));
    o.inputs.push_back(s);
  }
  for (const auto &v : values) {
    SF_ASSIGN(InputValue s, parseInputValue(v));
    o.values.push_back(s);
  }
  o.backward = backward == "always" ? Backward::Always : backward == "off" ? Backward::Off : Backward::Auto;
  return o;
}

Result<std::unique_ptr<Inferred>> loadAndInfer(const ModelArgs &a, const onnx::ImportOptions &import,
                                               const std::function<void(Graph &)> &beforeInference) {
  auto m = std::make_unique<Inferred>();
  SF_ASSIGN(m->graph, onnx::loadGraphFile(a.path, m->diags, import));
  SF_ASSIGN(InferOptions options, a.options());
  SF_TRY(applyInputs(m->graph, options, &m->diags));
  if (beforeInference) beforeInference(m->graph);
  m->stats = inferGraph(m->graph, m->diags, options);
  if (a.strict) m->diags.promoteAssumptions();
  return m;
}

ModelArgs withEmptySizes(ModelArgs model, const std::vector<Binding> &bindings) {
  auto options = model.options();
  if (!options.ok()) return model; // the error is reported where the options are read
  size_t given = options->dims.size();
  InferOptions widened = sf::withEmptySizes(*options, bindings);
  for (size_t i = given; i < widened.dims.size(); ++i) model.dims.push_back(widened.dims[i].symbol + "=0..");
  return model;
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

InferModel fileModel(const std::string &path, const onnx::ImportOptions &import, PhaseTimes *times) {
  return [path, import, times](const InferOptions &o, const std::function<void(Graph &)> &before) -> Result<InferredModel> {
    InferredModel m;
    const double start = nowMs();
    SF_ASSIGN(m.graph, onnx::loadGraphFile(path, m.diags, import));
    const double loaded = nowMs();
    SF_TRY(applyInputs(m.graph, o, &m.diags));
    if (before) before(m.graph);
    m.stats = inferGraph(m.graph, m.diags, o);
    if (times) {
      times->loadMs += loaded - start;
      times->inferMs += nowMs() - loaded;
      ++times->loads;
    }
    return m;
  };
}

Result<std::unique_ptr<Inferred>> loadForBindings(const ModelArgs &a, const std::vector<Binding> &bindings,
                                                  const char *flag, Contract *contract) {
  ContractBasis basis;
  SF_ASSIGN(auto m, loadAndInfer(withEmptySizes(a, bindings), {}, [&](Graph &g) { basis = contractBasis(g); }));
  Contract c = makeContract(m->graph, m->diags, basis);
  for (const Binding &b : bindings) {
    if (b.empty()) continue;
    std::vector<std::pair<std::string, int64_t>> list(b.begin(), b.end());
    if (auto broken = c.check(list)) {
      std::string given;
      for (const auto &[k, v] : b) given += fmt::format("{}{}={}", given.empty() ? "" : ",", k, v);
      return errorf("{} {}: the sizes break the model's contract: {}", flag, given, *broken);
    }
  }
  if (contract) *contract = std::move(c);
  return m;
}

Result<Binding> parseBinding(const std::string &spec) {
  Binding b;
  size_t at = 0;
  for (;;) {
    size_t comma = spec.find(',', at);
    std::string item = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    auto d = parseDimBound(item);
    if (!d.ok() || d->range.lo != d->range.hi) return errorf("--at expects SYM=V[,SYM=V...], got '{}'", spec);
    b[d->symbol] = d->range.lo;
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return b;
}

Result<Binding> mergedBindings(const std::vector<std::string> &specs) {
  Binding all;
  for (const auto &spec : specs) {
    SF_ASSIGN(Binding b, parseBinding(spec));
    for (const auto &[k, v] : b) all[k] = v;
  }
  return all;
}

} // namespace sf::cli
