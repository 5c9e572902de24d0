// What a file given as a model looks like from its first bytes: an ONNX model (a protobuf
// ModelProto), a text-form graph, or something else (JSON, an image, an archive, ...), so that a
// wrong file is named for what it is before the reader's detail.
#pragma once

#include <string>
#include <string_view>

namespace sf::onnx {

enum class FileKind { Onnx, TextGraph, Other };

struct Sniffed {
  FileKind kind = FileKind::Other;
  /// For Other, and for bytes that may still be a protobuf: what the bytes look like ("JSON",
  /// "a PNG image", "a zip archive (PyTorch checkpoints and .npz files are)", "text", "binary
  /// data that does not start like an ONNX model").
  std::string looksLike;
};

/// Told from the first bytes (64 are enough). Protobuf bytes whose first field is one a
/// ModelProto has are taken as ONNX; other binary bytes are Other.
Sniffed sniffModelBytes(std::string_view head);

/// "PATH: neither an ONNX model nor a text-form graph (it looks like L): DETAIL".
std::string notAModel(std::string_view path, const Sniffed &s, std::string_view detail);

} // namespace sf::onnx
