// The `shapeflow` command: `shapeflow infer MODEL [--input NAME=DIMS]... [--dim SYM=LO..HI]...
// [--json] [--out FILE.onnx]`. Exit status: 0 clean, 1 the model has errors (facts are still
// printed), 2 usage or I/O error.
#include "report.h"

#include "shapeflow/dim/parse.h"
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/onnx/export.h"
#include "shapeflow/onnx/import.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

namespace sf::cli {
namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<Graph> loadAny(const std::string &path, Diagnostics &diags) {
  if (endsWith(path, ".onnx")) return onnx::loadModelFile(path, diags);
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // A text-form graph starts with printable text; anything else is taken as ONNX protobuf.
  bool binary = false;
  for (size_t i = 0; i < std::min<size_t>(text.size(), 64); ++i)
    if (text[i] == 0 || (uint8_t(text[i]) < 9)) binary = true;
  if (binary) return onnx::loadModelFile(path, diags);
  auto g = parseGraph(text);
  if (!g.ok()) return makeError(path + ": " + g.error().message);
  return g;
}

/// --dim N=1..64
Result<void> applyDimBound(Graph &g, const std::string &spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos) return makeError("--dim expects SYM=LO..HI, got '" + spec + "'");
  std::string name = spec.substr(0, eq), range = spec.substr(eq + 1);
  auto dots = range.find("..");
  Interval r{0, kInf};
  try {
    if (dots == std::string::npos) {
      r.lo = r.hi = std::stoll(range);
    } else {
      std::string lo = range.substr(0, dots), hi = range.substr(dots + 2);
      r.lo = lo.empty() ? 0 : std::stoll(lo);
      r.hi = hi.empty() ? kInf : std::stoll(hi);
    }
  } catch (const std::exception &) {
    return makeError("--dim expects SYM=LO..HI with integers, got '" + spec + "'");
  }
  if (r.lo < 0 || r.lo > r.hi) return makeError("--dim " + spec + ": empty or negative range");
  SF_TRY(g.symbols.setRange(name, r));
  return success();
}

/// --input x=1,3,224,224 | x=N,3,H,W | x=[1..8,3,?,?] | sr=[]
Result<void> applyInput(Graph &g, const std::string &spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos) return makeError("--input expects NAME=DIMS, got '" + spec + "'");
  std::string name = spec.substr(0, eq), dims = spec.substr(eq + 1);
  if (dims.empty() || dims[0] != '[') dims = "[" + dims + "]";
  SF_ASSIGN(PartialShape shape, parsePartialShape(dims, g.symbols));
  for (const OutletId &o : g.inputs) {
    Outlet &out = g.nodes[o.node].outputs[o.slot];
    if (out.name != name) continue;
    const PartialShape &declared = out.fact.shape;
    if (declared.rankIsStatic() && shape.rankIsStatic() && declared.size() != shape.size())
      return makeError("--input " + spec + ": input '" + name + "' has rank " +
                       std::to_string(declared.size()) + " (" + declared.toString() + ")");
    out.fact.shape = shape;
    return success();
  }
  std::string names;
  for (const OutletId &o : g.inputs) names += " " + g.nodes[o.node].outputs[o.slot].name;
  return makeError("--input " + spec + ": the graph has no input '" + name + "' (inputs:" + names +
                   ")");
}

int runInfer(const std::string &path, const std::vector<std::string> &inputs,
             const std::vector<std::string> &dimBounds, bool json, const std::string &outPath) {
  Diagnostics diags;
  auto g = loadAny(path, diags);
  if (!g.ok()) {
    std::cerr << "shapeflow: " << g.error().message << "\n";
    return 2;
  }
  for (const auto &d : dimBounds) {
    auto r = applyDimBound(*g, d);
    if (!r.ok()) {
      std::cerr << "shapeflow: " << r.error().message << "\n";
      return 2;
    }
  }
  for (const auto &in : inputs) {
    auto r = applyInput(*g, in);
    if (!r.ok()) {
      std::cerr << "shapeflow: " << r.error().message << "\n";
      return 2;
    }
  }
  Report report;
  report.model = path;
  report.stats = inferGraph(*g, diags);
  report.graph = &*g;
  report.diags = &diags;
  if (json) std::cout << toJson(report).dump(1) << "\n";
  else printText(report, std::cout);
  if (!outPath.empty()) {
    auto bytes = onnx::annotatedModel(path, *g);
    std::ofstream out(outPath, std::ios::binary);
    if (!bytes.ok() || !out.write(bytes->data(), std::streamsize(bytes->size()))) {
      std::cerr << "shapeflow: cannot write " << outPath << ": "
                << (bytes.ok() ? std::string("I/O error") : bytes.error().message) << "\n";
      return 2;
    }
  }
  return diags.hasErrors() ? 1 : 0;
}

} // namespace
} // namespace sf::cli

int main(int argc, char **argv) {
  CLI::App app{"shapeflow: element types, shapes (numbers, symbolic expressions, intervals) and "
               "shape values of every tensor of a neural network, before it runs"};
  app.require_subcommand(1);
  CLI::App *infer = app.add_subcommand("infer", "infer and print the facts of every tensor");
  std::string model;
  std::vector<std::string> inputs, dims;
  bool json = false;
  std::string outPath;
  infer->add_option("MODEL", model, "an .onnx model or a text-form graph")->required();
  infer->add_option("--input", inputs,
                    "override an input's shape: x=1,3,224,224 | x=N,3,H,W | x=[1..8,3,?,?] | s=[]");
  infer->add_option("--dim", dims, "bound a symbol: N=1..64");
  infer->add_flag("--json", json, "print one JSON object");
  infer->add_option("--out", outPath, "write the .onnx model annotated with value_info");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    return sf::cli::runInfer(model, inputs, dims, json, outPath);
  } catch (const std::exception &e) {
    std::cerr << "shapeflow: internal error: " << e.what() << "\n";
    return 2;
  }
}
