// What a file given as a model looks like (see sniff.h).
#include "shapeflow/onnx/sniff.h"

#include <array>
#include <cstdint>

namespace sf::onnx {
namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// Bytes a text-form graph or JSON may hold in its first 64: printable text and whitespace.
bool looksText(std::string_view head) {
  for (size_t i = 0; i < std::min<size_t>(head.size(), 64); ++i) {
    auto c = uint8_t(head[i]);
    if (c == 0 || c < 9 || (c > 13 && c < 32 && c != 27)) return false;
  }
  return true;
}

/// The first token after whitespace and `//` comment lines.
std::string_view firstToken(std::string_view s) {
  for (;;) {
    size_t i = s.find_first_not_of(" \t\r\n");
    if (i == std::string_view::npos) return {};
    s.remove_prefix(i);
    if (!startsWith(s, "//")) break;
    size_t nl = s.find('\n');
    if (nl == std::string_view::npos) return {};
    s.remove_prefix(nl + 1);
  }
  return s;
}

/// Whether a varint at the start of `s` is the tag of a field a ModelProto has, with its wire
/// type: ir_version, producer_name, producer_version, domain, model_version, doc_string,
/// graph, opset_import, metadata_props, training_info, functions.
bool startsLikeModelProto(std::string_view s) {
  uint64_t tag = 0;
  for (size_t i = 0, shift = 0; i < std::min<size_t>(s.size(), 5); ++i, shift += 7) {
    tag |= uint64_t(uint8_t(s[i]) & 0x7f) << shift;
    if (!(uint8_t(s[i]) & 0x80)) {
      uint64_t field = tag >> 3, wire = tag & 7;
      if (field == 1 || field == 5) return wire == 0;
      return wire == 2 && (field == 2 || field == 3 || field == 4 || field == 6 || field == 7 || field == 8 ||
                           field == 14 || field == 20 || field == 25);
    }
  }
  return false;
}

} // namespace

Sniffed sniffModelBytes(std::string_view head) {
  if (head.empty()) return {FileKind::Other, "an empty file"};
  struct Magic {
    std::string_view bytes;
    size_t at;
    const char *what;
  };
  static const std::array<Magic, 9> kMagic{{
      {"\x89PNG", 0, "a PNG image"},
      {"\xff\xd8\xff", 0, "a JPEG image"},
      {"PK\x03\x04", 0, "a zip archive (PyTorch checkpoints and .npz files are)"},
      {"\x7f" "ELF", 0, "an executable (ELF)"},
      {"\x1f\x8b", 0, "gzip-compressed data"},
      {"\x93NUMPY", 0, "a NumPy array (.npy)"},
      {"TFL3", 4, "a TensorFlow Lite model"},
      {"\x89HDF", 0, "an HDF5 file (a Keras .h5 model?)"},
      {"%PDF", 0, "a PDF document"},
  }};
  for (const Magic &m : kMagic)
    if (head.size() >= m.at + m.bytes.size() && head.substr(m.at, m.bytes.size()) == m.bytes)
      return {FileKind::Other, m.what};
  if (looksText(head)) {
    std::string_view t = firstToken(head);
    if (startsWith(t, "graph") || startsWith(t, "opset")) return {FileKind::TextGraph, "a text-form graph"};
    if (startsWith(t, "{") || startsWith(t, "[")) return {FileKind::Other, "JSON"};
    if (startsWith(t, "<")) return {FileKind::Other, "XML or HTML"};
    // Short protobuf models can be printable (a model of a few names); take those as ONNX.
    if (startsLikeModelProto(head)) return {FileKind::Onnx, "an ONNX model"};
    return {FileKind::Other, "text (a text-form graph starts with 'graph NAME(...)')"};
  }
  if (startsLikeModelProto(head)) return {FileKind::Onnx, "an ONNX model"};
  return {FileKind::Other, "binary data that does not start like an ONNX model"};
}

std::string notAModel(std::string_view path, const Sniffed &s, std::string_view detail) {
  std::string m = std::string(path) + ": neither an ONNX model nor a text-form graph (it looks like " +
                  s.looksLike + ")";
  if (!detail.empty()) m += ": " + std::string(detail);
  return m;
}

} // namespace sf::onnx
