// The ONNX importer: translates a wire-level ModelView into the graph IR and stops there.
// Graph inputs become Parameters (a dim_param becomes the symbol of that name, an empty dim an
// anonymous symbol, a dim_value a number); initializers and Constant nodes become Constants
// holding lazily decoded tensors; subgraph attributes become IR graphs whose outer reads are made
// explicit; nodes carry the opset version of their domain.
#pragma once

#include "shapeflow/ir/graph.h"
#include "shapeflow/onnx/wire.h"
#include "shapeflow/support/diagnostic.h"

#include <string>

namespace sf::onnx {

struct ImportOptions {
  /// Initializers up to this many elements are decoded at import (shape math needs them);
  /// larger tensors stay views of the file.
  size_t decodeBudget = kValueBudget;
  /// Larger tensors stored in typed fields (float_data, int64_data, ...), which cannot be viewed
  /// in place, are decoded too: the executor needs every constant's elements.
  bool decodeLarge = false;
};

/// Errors that make the model unusable (dangling names, duplicate outputs, cycles) fail the
/// import; softer problems become warnings in `diags`.
Result<Graph> importModel(const ModelView &model, Diagnostics &diags,
                          const ImportOptions &options = {});

/// Reads and imports a model file.
Result<Graph> loadModelFile(const std::string &path, Diagnostics &diags,
                            const ImportOptions &options = {});

/// An ONNX model, or a text-form graph (docs/TEXT_FORMAT.md), told apart by their first bytes
/// (not the file's name): what a front end is given. Anything else (JSON, an image, an archive,
/// a directory) is an error saying what it looks like, then the reader's detail.
Result<Graph> loadGraphFile(const std::string &path, Diagnostics &diags, const ImportOptions &options = {});

/// The same from bytes in memory (ONNX protobuf or the text form, told apart by their first
/// bytes); `label` starts error messages. The graph's large constants view `bytes`: the caller
/// keeps them alive as long as the graph.
Result<Graph> loadGraphBuffer(std::string_view bytes, Diagnostics &diags, std::string_view label = "<memory>",
                              const ImportOptions &options = {});

} // namespace sf::onnx
