// Test helper: compares a view from sf::onnx's wire reader with libonnx's generated-class parse
// of the same bytes, field by field (gtest expectations), recursing into subgraphs, and decodes
// tensor values both ways.
#pragma once

#include "shapeflow/onnx/wire.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace sf::onnx::test {

/// Counts of what a comparison covered, to report and to check that it did something.
struct CrossCheckStats {
  size_t models = 0, graphs = 0, nodes = 0, attributes = 0, tensors = 0, valuesDecoded = 0,
         valueInfos = 0, functions = 0;
};

void compareModel(const ::onnx::ModelProto &expected, const ModelView &actual,
                  CrossCheckStats &stats);
/// `model` supplies the directory for external data (a default one for lone tensor files).
void compareTensor(const ::onnx::TensorProto &expected, const TensorView &actual,
                   const ModelView &model, CrossCheckStats &stats);
void compareType(const ::onnx::TypeProto &expected, const TypeView &actual);

/// Reads `path` with both readers and compares; returns false (with a gtest failure) if either
/// reader fails.
bool crossCheckFile(const std::string &path, CrossCheckStats &stats);

} // namespace sf::onnx::test
