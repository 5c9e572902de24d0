// What a run of the executor and a check of the inference report (`shapeflow run`, `shapeflow
// check`, Python's Model.run and Model.check): the same JSON document and text for every front
// end.
#pragma once

#include "shapeflow/eval/check.h"
#include "shapeflow/eval/session.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <ostream>
#include <string>

namespace sf {

struct RunReport {
  std::string model;
  const eval::Session *session = nullptr;
  const eval::RunResult *result = nullptr;
  double ms = 0;                    // the first run
  std::optional<double> medianMs;   // of the repeated runs
  int repeat = 0, threads = 1;
  /// Time per op over `profileRuns` runs (null: not profiled).
  const std::map<std::string, eval::OpTime> *profile = nullptr;
  double profileRuns = 1;
  /// Where each output is written as .npy (empty: not written).
  std::string outDir;
};

/// The run's document: nodes run, peak, times, the arena's use, the profile, and per output its
/// type, shape, min, max, mean (a sequence's per element) and file. Writes the .npy files.
Result<nlohmann::json> runJson(const RunReport &r);
/// The document as text.
void printRun(const nlohmann::json &j, std::ostream &os);
/// The file an output of this name is written to.
std::string outputFileName(const std::string &name);

/// The check's document: samples asked and run, each with its binding, tensors compared and
/// mismatches; whether it passed.
nlohmann::json checkJson(const std::string &model, const eval::CheckResult &r);
void printCheck(const eval::CheckResult &r, std::ostream &os);

} // namespace sf
