// What the subcommands share (cli/common.h).
#include "common.h"

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

/// A size of 0 in a binding (an empty KV cache) for a size the model takes to be at least 1 and
/// no --dim ranges: the model is inferred with that size from 0, as `--dim SYM=0..` would.
ModelArgs withEmptySizes(ModelArgs model, const std::vector<Binding> &bindings) {
  std::set<std::string> ranged;
  for (const std::string &spec : model.dims)
    if (auto d = parseDimBound(spec); d.ok()) ranged.insert(d->symbol);
  for (const Binding &b : bindings)
    for (const auto &[name, v] : b)
      if (v == 0 && ranged.insert(name).second) model.dims.push_back(name + "=0..");
  return model;
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
