// The reference to beat: ONNX's own C++ shape inference (Debian's libonnx, linked in-process as a
// test-only dependency) with data propagation on, run on the same model with the same inputs as
// shapeflow: declared output types and value_info removed, graph input shapes set from the test
// data, and the inputs used as constants added as initializers. Its facts are converted to IR
// facts (a dim_param or missing dim becomes a dynamic dim) so that the same checks judge both.
#pragma once

#include "test_data.h"

#include "shapeflow/ir/fact.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sf::conformance {

/// How a test feeds one graph input (not an initializer).
struct InputBinding {
  std::string name;
  const DataValue *data = nullptr;
  bool asConstant = false; // the tensor's values are given to inference as a constant
};

struct ReferenceResult {
  bool ran = false;
  std::string error;                                 // InferShapes raised, or load failed
  std::vector<std::optional<Fact>> outputs;          // per graph output (nullopt: no type)
  std::unordered_map<std::string, Fact> valueInfo;   // every inferred intermediate tensor
};

/// False when the harness was built without libonnx.
bool referenceAvailable();
/// Builds ONNX's schema registry (before forking workers, so that each does not build it again).
void warmUpReference();

ReferenceResult runReference(const std::string &modelPath, const std::vector<InputBinding> &inputs);

} // namespace sf::conformance
