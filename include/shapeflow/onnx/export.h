// Writing an annotated model: the original file with value_info filled in for every inferred
// tensor (symbolic dims as dim_param), so that Netron and onnxruntime see the facts.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/support/result.h"

#include <iosfwd>
#include <string>
#include <string_view>

namespace sf::onnx {

class MappedFile;

/// Writes the annotated model to `os`. Protobuf merges a repeated occurrence of an embedded
/// message, so the annotation is the original bytes followed by a second ModelProto.graph field
/// that holds only value_info entries: weights are never decoded or copied through a parser, and
/// the file is not parsed again (outlets the file declared, `Outlet::declared`, are skipped, as
/// are graph inputs and constants). `original` must be the ONNX protobuf `g` was imported from
/// (checked: well-formed top-level fields with a graph); `label` starts error messages.
Result<void> writeAnnotatedModel(std::string_view original, const Graph &g, std::ostream &os,
                                 std::string_view label = "<memory>");
/// The same from a mapped file (its path starts errors), written in pieces that are dropped from
/// the mapping once written, so that the copy does not hold the whole file in memory.
Result<void> writeAnnotatedModel(const MappedFile &original, const Graph &g, std::ostream &os);
/// The same as bytes.
Result<std::string> annotatedModelBuffer(std::string_view original, const Graph &g,
                                         std::string_view label = "<memory>");
/// The same for the model file at `path` (mapped, not read into memory).
Result<std::string> annotatedModel(const std::string &path, const Graph &g);

} // namespace sf::onnx
