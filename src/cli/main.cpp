// The `shapeflow` command: `shapeflow infer MODEL [--input NAME=DIMS]... [--dim SYM=LO..HI]...
// [--json] [--out FILE.onnx]`. Exit status: 0 clean, 1 the model has errors (facts are still
// printed), 2 usage or I/O error.
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/export.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/report/report.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

namespace sf::cli {
namespace {

int runInfer(const std::string &path, const std::vector<std::string> &inputs,
             const std::vector<std::string> &dimBounds, bool json, const std::string &outPath) {
  auto fail = [](const std::string &message) {
    std::cerr << "shapeflow: " << message << "\n";
    return 2;
  };
  Diagnostics diags;
  auto g = onnx::loadGraphFile(path, diags);
  if (!g.ok()) return fail(g.error().message);
  InferOptions options;
  for (const auto &d : dimBounds) {
    auto b = parseDimBound(d);
    if (!b.ok()) return fail(b.error().message);
    options.dims.push_back(*b);
  }
  for (const auto &in : inputs) {
    auto s = parseInputShape(in);
    if (!s.ok()) return fail(s.error().message);
    options.inputs.push_back(*s);
  }
  if (auto r = applyInputs(*g, options); !r.ok()) return fail(r.error().message);
  Report report;
  report.model = path;
  report.stats = inferGraph(*g, diags, options);
  report.graph = &*g;
  report.diags = &diags;
  if (json)
    std::cout << jsonText(toJson(report), 1) << "\n";
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
