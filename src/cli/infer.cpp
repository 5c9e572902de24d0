// `shapeflow infer`: the facts of every tensor, as a listing or JSON, and the model annotated
// with them (--out).
#include "common.h"

#include "shapeflow/onnx/export.h"
#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/report/report.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace sf::cli {
namespace {

/// The model's bytes through a mapping (no parse, no copy in memory), then the annotation, into
/// a temporary file renamed over `outPath` at the end: `--out` may name the model itself.
int writeAnnotated(const std::string &modelPath, const Graph &g, const std::string &outPath) {
  auto file = onnx::MappedFile::open(modelPath);
  if (!file.ok()) return fail("cannot write " + outPath + ": " + file.error().message);
  std::string tmp = outPath + ".shapeflow-tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return fail("cannot write " + outPath + ": cannot open " + tmp);
  auto written = onnx::writeAnnotatedModel(**file, g, out);
  out.close();
  std::error_code ec;
  if (written.ok() && out) std::filesystem::rename(tmp, outPath, ec);
  if (!written.ok() || !out || ec) {
    std::filesystem::remove(tmp, ec);
    return fail("cannot write " + outPath + ": " +
                (!written.ok() ? written.error().message : std::string("I/O error")));
  }
  return 0;
}

struct InferArgs {
  ModelArgs model;
  bool json = false, noNames = false, timings = false;
  std::string outPath;
};

int runInfer(const InferArgs &a) {
  // Named sizes the model runs at 0 (an empty cache) are inferred from 0.
  auto options = a.model.options();
  if (!options.ok()) return fail(options.error().message);
  const double start = nowMs();
  PhaseTimes times;
  auto m = inferAdmittingZero(fileModel(a.model.path, {}, &times), *options);
  if (!m.ok()) return fail(m.error().message);
  InferredModel &r = *m;
  if (a.model.strict) r.diags.promoteAssumptions();
  const double reportStart = nowMs();
  Report report{a.model.path, &r.graph, &r.diags, r.stats, !a.noNames};
  if (a.json) {
    writeJson(report, std::cout, 1);
    std::cout << "\n";
  } else {
    printText(report, std::cout);
  }
  std::cout.flush();
  const double reported = nowMs();
  if (!a.outPath.empty())
    if (int rc = writeAnnotated(a.model.path, r.graph, a.outPath)) return rc;
  if (a.timings) {
    const double end = nowMs();
    std::cerr << fmt::format("timings: load {:.1f} ms ({} load{}), inference {:.1f} ms, the rest of the "
                             "contract {:.1f} ms, report {:.1f} ms, --out {:.1f} ms\n",
                             times.loadMs, times.loads, times.loads == 1 ? "" : "s", times.inferMs,
                             (reportStart - start) - times.loadMs - times.inferMs, reported - reportStart,
                             end - reported);
  }
  return r.diags.hasErrors() ? 1 : 0;
}

} // namespace

Command addInfer(CLI::App &app) {
  auto args = std::make_shared<InferArgs>();
  CLI::App *cmd = app.add_subcommand("infer", "infer and print the facts of every tensor");
  args->model.add(cmd);
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--out", args->outPath, "write the .onnx model annotated with value_info");
  cmd->add_flag("--timings", args->timings,
                "print to stderr the milliseconds of each phase: loading the model (every load: a small "
                "model is inferred again to find which sizes may be 0), inference, the report, --out");
  cmd->add_flag("--no-names", args->noNames,
                "print every dim expanded (no R1 = ... for repeated sizes, ? for unnamed input dims)");
  return {cmd, [args] { return runInfer(*args); }};
}

} // namespace sf::cli
