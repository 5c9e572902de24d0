// The inference checks itself (`shapeflow check`: every fact inference states must hold of every run): the model's
// input symbols are bound to sample values, the executor runs the model on random data of those
// sizes, and every tensor it computes, those inside If, Loop (every iteration) and Scan bodies
// included, must have the element type and shape the inference predicted: each dim's expression
// evaluated at the binding equals the actual size, and the actual size lies within the dim's
// bounds. Sizes the data decides (a NonZero's count) are bound from the run where they first
// appear in the main graph; dims of symbols no binding reaches are checked against their bounds.
#pragma once

#include "shapeflow/eval/eval.h"
#include "shapeflow/infer/domain.h"

#include <map>
#include <string>
#include <vector>

namespace sf::eval {

struct CheckOptions {
  /// Explicit samples (symbol name -> value); when empty, `samples` are drawn from what the
  /// inference learned of the inputs' sizes (inputDomain: ranges, solutions, conditions).
  std::vector<std::map<std::string, int64_t>> bindings;
  size_t samples = 4;
  uint64_t seed = 1;
  int64_t maxMemory = 0;
};

struct SampleOutcome {
  std::map<std::string, int64_t> binding;
  bool ran = false;
  std::string error;       // why the run stopped (sizes the model does not accept, a missing kernel)
  size_t tensors = 0;      // tensors compared with their facts
  std::vector<std::string> mismatches;
};

struct CheckResult {
  std::vector<SampleOutcome> samples;
  /// Samples asked for (the explicit bindings, or CheckOptions::samples): a check that ran
  /// fewer checked less than asked, and fails.
  size_t requested = 0;
  /// When fewer admissible bindings were drawn than asked: the requirement that refused the draws.
  std::string drawFailure;
  size_t ran() const {
    size_t n = 0;
    for (const auto &s : samples) n += s.ran;
    return n;
  }
  /// Every sample asked for ran, and no tensor disagreed with its fact.
  bool passed() const { return ran() == requested && mismatches() == 0; }
  size_t mismatches() const {
    size_t n = 0;
    for (const auto &s : samples) n += s.mismatches.size();
    return n;
  }
};

/// Checks `g` (inferred, with the facts of its bodies settled) against runs of the executor.
Result<CheckResult> checkInference(const Graph &g, const CheckOptions &options);

} // namespace sf::eval
