// Writing an annotated model: the original file with value_info filled in for every inferred
// tensor (symbolic dims as dim_param), so that Netron and onnxruntime see the facts.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <string>
#include <string_view>

namespace sf::onnx {

/// Bytes of the annotated model. Protobuf merges a repeated occurrence of an embedded message,
/// so the annotation is the original bytes followed by a second ModelProto.graph field that
/// holds only value_info entries: weights are never decoded or copied through a parser.
/// Tensors that already have a value_info, graph inputs, outputs and initializers are skipped.
Result<std::string> annotatedModel(const std::string &path, const Graph &g);
/// The same for a model whose bytes are in memory (`original`: the ONNX protobuf `g` was
/// imported from; `label` starts error messages).
Result<std::string> annotatedModelBuffer(std::string_view original, const Graph &g,
                                         std::string_view label = "<memory>");

} // namespace sf::onnx
