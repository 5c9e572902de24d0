// Writing an annotated model: the original file with value_info filled in for every inferred
// tensor (symbolic dims as dim_param), so that Netron and onnxruntime see the facts.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <string>

namespace sf::onnx {

/// Bytes of the annotated model. Protobuf merges a repeated occurrence of an embedded message,
/// so the annotation is the original bytes followed by a second ModelProto.graph field that
/// holds only value_info entries: weights are never decoded or copied through a parser.
/// Tensors that already have a value_info, graph inputs, outputs and initializers are skipped.
Result<std::string> annotatedModel(const std::string &path, const Graph &g);

} // namespace sf::onnx
