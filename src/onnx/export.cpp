// Annotated model export (see export.h for the merge trick).
#include "shapeflow/onnx/export.h"

#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/wire.h"
#include "wire_reader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <algorithm>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace sf::onnx {
namespace {

using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

using detail::kLen;
using detail::kVarint;
using detail::WireType;
uint32_t tag(int field, WireType w) { return uint32_t(field << 3) | uint32_t(w); }

/// Serialises a message built by `body` as a length-delimited field (the graph wrapper: once).
template <class Body> void writeMessage(CodedOutputStream &out, int field, Body body) {
  std::string bytes;
  {
    StringOutputStream s(&bytes);
    CodedOutputStream inner(&s);
    body(inner);
  }
  out.WriteTag(tag(field, kLen));
  out.WriteVarint32(uint32_t(bytes.size()));
  out.WriteString(bytes);
}

/// Bytes of a length-delimited field (one-byte tag) whose body has `body` bytes.
size_t lenField(size_t body) { return 1 + CodedOutputStream::VarintSize64(body) + body; }

void writeLenTag(CodedOutputStream &out, int field, size_t body) {
  out.WriteTag(tag(field, kLen));
  out.WriteVarint64(body);
}

/// One value_info (GraphProto field 13) for `name`, written directly: every nested message's
/// size is computed first, so that nothing is serialised twice or into a temporary buffer.
/// `names` holds the printed symbolic dims (reused from one call to the next).
void writeValueInfo(CodedOutputStream &out, const std::string &name, const Fact &f,
                    std::vector<std::string> &names) {
  const bool ranked = f.shape.rankIsStatic();
  const size_t rank = f.shape.size();
  names.resize(rank);
  // DimensionProto bodies: dim_value (field 1) or dim_param (field 2), or empty (unknown).
  auto dimBody = [&](size_t i) -> size_t {
    const Dimension &d = f.shape.dims()[i];
    if (d.isStatic()) return 1 + CodedOutputStream::VarintSize64(uint64_t(d.length()));
    if (d.isNamedExpr()) return lenField(names[i].size());
    return 0;
  };
  size_t shapeBody = 0;
  for (size_t i = 0; i < rank; ++i) {
    const Dimension &d = f.shape.dims()[i];
    names[i] = !d.isStatic() && d.isNamedExpr() ? toString(d.expr()) : std::string();
    shapeBody += lenField(dimBody(i));
  }
  const bool typed = f.type != ElementType::Undefined;
  size_t tensorBody = (typed ? 1 + CodedOutputStream::VarintSize64(uint64_t(f.type)) : 0) +
                      (ranked ? lenField(shapeBody) : 0);
  size_t typeBody = lenField(tensorBody);
  size_t viBody = lenField(name.size()) + lenField(typeBody);

  writeLenTag(out, 13, viBody);
  writeLenTag(out, 1, name.size()); // ValueInfoProto.name
  out.WriteString(name);
  writeLenTag(out, 2, typeBody);   // ValueInfoProto.type
  writeLenTag(out, 1, tensorBody); // TypeProto.tensor_type
  if (typed) {
    out.WriteTag(tag(1, kVarint)); // elem_type
    out.WriteVarint64(uint64_t(f.type));
  }
  if (!ranked) return;
  writeLenTag(out, 2, shapeBody); // shape
  for (size_t i = 0; i < rank; ++i) {
    const Dimension &d = f.shape.dims()[i];
    writeLenTag(out, 1, dimBody(i)); // TensorShapeProto.dim
    if (d.isStatic()) {
      out.WriteTag(tag(1, kVarint));
      out.WriteVarint64(uint64_t(d.length()));
    } else if (d.isNamedExpr()) {
      writeLenTag(out, 2, names[i].size());
      out.WriteString(names[i]);
    }
  }
}

/// True when `bytes` is a sequence of well-formed protobuf fields that includes ModelProto.graph
/// (field 7): a top-level scan, without parsing the fields' contents.
bool looksLikeModel(std::string_view bytes) {
  bool graph = false;
  return detail::forEachTopLevelField(bytes, [&](uint32_t field, std::string_view) { graph = graph || field == 7; }) &&
         graph;
}


/// The annotation: a second ModelProto.graph field holding value_info for every inferred tensor.
std::string annotationTail(const Graph &g) {
  ExprScope scope = g.enter();
  std::string tail;
  {
    StringOutputStream s(&tail);
    CodedOutputStream out(&s);
    std::vector<std::string> names;
    writeMessage(out, 7, [&](CodedOutputStream &graph) {
      for (const Node &n : g.nodes) {
        if (n.removed || n.isParameter() || n.isConstant()) continue;
        for (const Outlet &o : n.outputs) {
          // `declared`: the file has a value_info (or graph output) of that name already.
          if (o.name.empty() || o.declared || o.fact.isUnknown()) continue;
          writeValueInfo(graph, o.name, o.fact, names);
        }
      }
    });
  }
  return tail;
}

} // namespace

Result<void> writeAnnotatedModel(std::string_view original, const Graph &g, std::ostream &os,
                                 std::string_view label) {
  if (!looksLikeModel(original)) return errorf("{}: not an ONNX model (protobuf)", label);
  std::string tail = annotationTail(g);
  os.write(original.data(), std::streamsize(original.size()));
  os.write(tail.data(), std::streamsize(tail.size()));
  if (!os) return errorf("{}: writing the annotated model failed", label);
  return success();
}

Result<void> writeAnnotatedModel(const MappedFile &original, const Graph &g, std::ostream &os) {
  std::string_view bytes = original.bytes();
  if (!looksLikeModel(bytes)) return errorf("{}: not an ONNX model (protobuf)", original.path());
  std::string tail = annotationTail(g);
  // In pieces, each dropped from this mapping once written: the copy never holds the whole
  // file's pages (they stay in the kernel's cache, not in the process).
  constexpr size_t kPiece = size_t(8) << 20;
  for (size_t at = 0; at < bytes.size() && os; at += kPiece) {
    size_t n = std::min(kPiece, bytes.size() - at);
    os.write(bytes.data() + at, std::streamsize(n));
    original.release(at, n);
  }
  os.write(tail.data(), std::streamsize(tail.size()));
  if (!os) return errorf("{}: writing the annotated model failed", original.path());
  return success();
}

Result<std::string> annotatedModelBuffer(std::string_view original, const Graph &g, std::string_view label) {
  std::ostringstream os;
  SF_TRY(writeAnnotatedModel(original, g, os, label));
  return std::move(os).str();
}

Result<std::string> annotatedModel(const std::string &path, const Graph &g) {
  SF_ASSIGN(auto file, MappedFile::open(path));
  return annotatedModelBuffer(file->bytes(), g, path);
}

} // namespace sf::onnx
