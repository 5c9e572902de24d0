// Annotated model export (see export.h for the merge trick).
#include "shapeflow/onnx/export.h"

#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/wire.h"
#include "wire_reader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unordered_set>

namespace sf::onnx {
namespace {

using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

using detail::kLen;
using detail::kVarint;
using detail::WireType;
uint32_t tag(int field, WireType w) { return uint32_t(field << 3) | uint32_t(w); }

/// Serialises a message built by `body` as a length-delimited field.
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

void writeString(CodedOutputStream &out, int field, const std::string &s) {
  out.WriteTag(tag(field, kLen));
  out.WriteVarint32(uint32_t(s.size()));
  out.WriteString(s);
}

void writeDim(CodedOutputStream &out, const Dimension &d) {
  writeMessage(out, 1, [&](CodedOutputStream &dim) {
    if (d.isStatic()) {
      dim.WriteTag(tag(1, kVarint));
      dim.WriteVarint64(uint64_t(d.length()));
    } else if (d.isNamedExpr()) {
      writeString(dim, 2, toString(d.expr()));
    }
  });
}

void writeValueInfo(CodedOutputStream &out, const std::string &name, const Fact &f) {
  writeMessage(out, 13, [&](CodedOutputStream &vi) {
    writeString(vi, 1, name);
    writeMessage(vi, 2, [&](CodedOutputStream &type) {
      writeMessage(type, 1, [&](CodedOutputStream &tensor) {
        if (f.type != ElementType::Undefined) {
          tensor.WriteTag(tag(1, kVarint));
          tensor.WriteVarint64(uint64_t(f.type));
        }
        if (f.shape.rankIsStatic()) {
          writeMessage(tensor, 2, [&](CodedOutputStream &shape) {
            for (const auto &d : f.shape.dims()) writeDim(shape, d);
          });
        }
      });
    });
  });
}

} // namespace

Result<std::string> annotatedModelBuffer(std::string_view original, const Graph &g, std::string_view label) {
  ExprScope scope = g.enter();
  SF_ASSIGN(ModelView model, readModelBuffer(original, {}, label));
  std::unordered_set<std::string> skip;
  for (const auto &vi : model.graph.valueInfo) skip.insert(std::string(vi.name));
  for (const auto &vi : model.graph.inputs) skip.insert(std::string(vi.name));
  for (const auto &vi : model.graph.outputs) skip.insert(std::string(vi.name));
  for (const auto &t : model.graph.initializers) skip.insert(std::string(t.name));
  std::string tail;
  {
    StringOutputStream s(&tail);
    CodedOutputStream out(&s);
    writeMessage(out, 7, [&](CodedOutputStream &graph) {
      for (const Node &n : g.nodes) {
        if (n.removed || n.isParameter() || n.isConstant()) continue;
        for (const Outlet &o : n.outputs) {
          if (o.name.empty() || skip.count(o.name) || o.fact.isUnknown()) continue;
          writeValueInfo(graph, o.name, o.fact);
        }
      }
    });
  }
  std::string bytes;
  bytes.reserve(original.size() + tail.size());
  bytes.append(original);
  bytes.append(tail);
  return bytes;
}

Result<std::string> annotatedModel(const std::string &path, const Graph &g) {
  SF_ASSIGN(auto file, MappedFile::open(path));
  return annotatedModelBuffer(file->bytes(), g, path);
}

} // namespace sf::onnx
