// One conformance test: load an ONNX backend test model, feed inference the test's inputs (their
// actual shapes; small tensors as constants), infer, and judge every graph output against the
// test's expected outputs; the same for ONNX's reference inference. See README.md.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf::conformance {

enum class Verdict { Pass, Fail, Imprecise, Excluded };
const char *toString(Verdict v);

/// Outputs that may legitimately stay non-static (sizes that depend on input values), with
/// reasons. A key is `test`, `suite/test` (every output of the test) or either followed by `:K`
/// (graph output K only).
struct Exclusions {
  std::map<std::string, std::string> reasons;
  /// The reason when output `output` of the test is listed, else null.
  const std::string *find(const std::string &suite, const std::string &name, size_t output) const;
  /// Some output of the test is listed.
  bool lists(const std::string &suite, const std::string &name) const;
};
/// Reads `name  reason...` lines ('#' starts a comment).
bool loadExclusions(const std::filesystem::path &path, Exclusions &out, std::string &error);

struct RunOptions {
  bool reference = true;       // also run ONNX's shape inference
  size_t constantMaxElements = 64;
};

struct TestResult {
  std::string suite, name;
  Verdict verdict = Verdict::Fail;
  std::string reason;               // one line, for non-pass verdicts
  std::vector<std::string> details; // per-output notes, diagnostics (for --verbose)
  std::set<std::string> ops;        // ops blamed for a non-pass verdict ("(load)", "(import)")
  std::vector<std::string> constantInputs;
  bool oursExact = false;
  bool referenceRan = false, referenceExact = false, referenceWrong = false;
  std::string referenceNote; // why ONNX is not exact, or what it got wrong
  double ms = 0;

  nlohmann::json toJson() const;
  static TestResult fromJson(const nlohmann::json &j);
};

/// Runs the test in `dir` (a folder with model.onnx and test_data_set_0).
TestResult runTest(const std::filesystem::path &dir, const std::string &suite,
                   const Exclusions &exclusions, const RunOptions &options);

/// Builds what every test would otherwise build again (op registry, ONNX schemas): call before
/// forking workers.
void warmUp(const RunOptions &options);

} // namespace sf::conformance
