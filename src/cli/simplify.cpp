// `shapeflow simplify`: a smaller model that stays dynamic, rewritten from the facts.
#include "common.h"

#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/sniff.h"
#include "shapeflow/report/simplify_report.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace sf::cli {
namespace {

struct SimplifyArgs {
  ModelArgs model;
  std::string outPath;
  bool json = false, externalData = false;
  int64_t foldLimit = int64_t(1) << 20;
};

/// The model's own bytes when it is an ONNX file (its top-level fields are kept), empty for a
/// text-form graph.
Result<std::shared_ptr<onnx::MappedFile>> originalOf(const std::string &path) {
  SF_ASSIGN(auto file, onnx::MappedFile::open(path));
  if (onnx::sniffModelBytes(file->bytes().substr(0, 64)).kind != onnx::FileKind::Onnx) return nullptr;
  return file;
}

/// Writes into temporary files renamed over the outputs at the end (OUT may name the model).
int writeOutputs(const SimplifyArgs &a, const Graph &g, SimplifyReport &r) {
  auto original = originalOf(a.model.path);
  if (!original.ok()) return fail("cannot read " + a.model.path + ": " + original.error().message);
  std::string tmp = a.outPath + ".shapeflow-tmp", dataTmp = a.outPath + ".data.shapeflow-tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  std::ofstream data;
  if (a.externalData) data.open(dataTmp, std::ios::binary | std::ios::trunc);
  if (!out || (a.externalData && !data)) return fail("cannot write " + a.outPath);
  const std::string location = std::filesystem::path(a.outPath).filename().string() + ".data";
  auto written = writeSimplified(g, *original ? (*original)->bytes() : std::string_view(), out, r,
                                 a.externalData ? &data : nullptr, location);
  out.close();
  if (a.externalData) data.close();
  std::error_code ec;
  if (written.ok() && out && (!a.externalData || data)) {
    std::filesystem::rename(tmp, a.outPath, ec);
    if (!ec && a.externalData) std::filesystem::rename(dataTmp, a.outPath + ".data", ec);
  }
  if (!written.ok() || !out || ec) {
    std::filesystem::remove(tmp, ec);
    std::filesystem::remove(dataTmp, ec);
    return fail("cannot write " + a.outPath + ": " + (!written.ok() ? written.error().message : std::string("I/O error")));
  }
  return 0;
}

int runSimplify(const SimplifyArgs &a) {
  auto options = a.model.options();
  if (!options.ok()) return fail(options.error().message);
  // Every constant's elements (folding reads them, the writer writes them); named sizes the
  // model runs at 0 inferred from 0, so that no rewrite assumes a size of at least 1.
  auto m = inferAdmittingZero(fileModel(a.model.path, onnx::ImportOptions{.decodeLarge = true}), *options);
  if (!m.ok()) return fail(m.error().message);
  InferredModel &r = *m;
  if (a.model.strict) r.diags.promoteAssumptions();
  if (r.diags.hasErrors()) {
    printErrors(r.diags);
    std::cerr << "shapeflow: not simplified: the model has errors\n";
    return 1;
  }
  SimplifyOptions so;
  so.foldLimit = a.foldLimit;
  auto report = simplifyGraph(r.graph, so);
  if (!report.ok()) return fail("simplify: " + report.error().message);
  report->model = a.model.path;
  report->output = a.outPath;
  // A protobuf message cannot exceed 2 GB: larger weights go to external data whatever was asked.
  SimplifyArgs out = a;
  out.externalData = a.externalData || report->after.weightBytes > int64_t(1800) << 20;
  if (int rc = writeOutputs(out, r.graph, *report)) return rc;
  if (a.json) std::cout << simplifyJson(*report).dump(1) << "\n";
  else printSimplify(*report, std::cout);
  return 0;
}

} // namespace

Command addSimplify(CLI::App &app) {
  auto args = std::make_shared<SimplifyArgs>();
  CLI::App *cmd = app.add_subcommand(
      "simplify", "a smaller equivalent model that stays dynamic: constants and shape computations folded from "
                  "the facts, no-op nodes and dead nodes removed, identical nodes merged");
  args->model.add(cmd);
  cmd->add_option("-o,--out", args->outPath, "the simplified .onnx model to write")->required();
  cmd->add_flag("--json", args->json, "print the report as one JSON object");
  cmd->add_flag("--external-data", args->externalData,
                "write tensors of 1 KiB or more to OUT.data (ONNX external data; always when the weights are over 1.8 GB)");
  cmd->add_option("--fold-limit", args->foldLimit,
                  "bytes a folded constant may have (default 1 MiB; a larger one is folded only when no "
                  "larger than what its node reads)");
  return {cmd, [args] { return runSimplify(*args); }};
}

} // namespace sf::cli
