// Test helper: a tiny protobuf encoder and ONNX message builders, to write models byte by byte
// (packed or unpacked fields, unknown fields, defects) without generated classes.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace sf::onnx::test {

struct Proto {
  std::string bytes;

  Proto &rawVarint(uint64_t v) {
    while (v >= 0x80) {
      bytes += static_cast<char>(v | 0x80);
      v >>= 7;
    }
    bytes += static_cast<char>(v);
    return *this;
  }
  Proto &tag(uint32_t field, uint32_t wireType) {
    return rawVarint(uint64_t(field) << 3 | wireType);
  }
  Proto &varint(uint32_t field, uint64_t v) { return tag(field, 0).rawVarint(v); }
  Proto &sint(uint32_t field, int64_t v) { return varint(field, static_cast<uint64_t>(v)); }
  Proto &fixed32(uint32_t field, uint32_t v) {
    tag(field, 5);
    bytes.append(reinterpret_cast<const char *>(&v), 4);
    return *this;
  }
  Proto &f32(uint32_t field, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return fixed32(field, bits);
  }
  Proto &fixed64(uint32_t field, uint64_t v) {
    tag(field, 1);
    bytes.append(reinterpret_cast<const char *>(&v), 8);
    return *this;
  }
  Proto &str(uint32_t field, std::string_view s) {
    tag(field, 2).rawVarint(s.size());
    bytes.append(s);
    return *this;
  }
  Proto &msg(uint32_t field, const Proto &m) { return str(field, m.bytes); }
  Proto &packed(uint32_t field, std::initializer_list<int64_t> values) {
    Proto p;
    for (int64_t v : values)
      p.rawVarint(static_cast<uint64_t>(v));
    return str(field, p.bytes);
  }
  Proto &packedFloats(uint32_t field, std::initializer_list<float> values) {
    std::string s;
    for (float v : values)
      s.append(reinterpret_cast<const char *>(&v), 4);
    return str(field, s);
  }
  Proto &packedDoubles(uint32_t field, std::initializer_list<double> values) {
    std::string s;
    for (double v : values)
      s.append(reinterpret_cast<const char *>(&v), 8);
    return str(field, s);
  }
  Proto &raw(std::string_view s) {
    bytes.append(s);
    return *this;
  }
  Proto &append(const Proto &p) { return raw(p.bytes); }
};

template <class T> std::string rawOf(std::initializer_list<T> values) {
  std::string s;
  for (T v : values)
    s.append(reinterpret_cast<const char *>(&v), sizeof(T));
  return s;
}

// ---- ONNX builders (field numbers of onnx.proto) ----

inline Proto tensorHeader(std::string_view name, int32_t dataType,
                          std::initializer_list<int64_t> dims) {
  Proto t;
  for (int64_t d : dims)
    t.sint(1, d);
  t.varint(2, static_cast<uint64_t>(dataType));
  if (!name.empty()) t.str(8, name);
  return t;
}

inline Proto rawTensor(std::string_view name, int32_t dataType, std::initializer_list<int64_t> dims,
                       std::string_view raw) {
  return tensorHeader(name, dataType, dims).str(9, raw);
}

/// A dim spec: a number >= 0, "" for unknown, or a symbol.
struct Dim {
  Dim(int64_t v) : value(v), isValue(true) {}
  Dim(const char *p) : param(p) {}
  int64_t value = 0;
  bool isValue = false;
  std::string param;
};

inline Proto tensorType(int32_t elemType, std::initializer_list<Dim> dims, bool withShape = true) {
  Proto tt;
  tt.varint(1, static_cast<uint64_t>(elemType));
  if (withShape) {
    Proto shape;
    for (const Dim &d : dims) {
      Proto dim;
      if (d.isValue)
        dim.sint(1, d.value);
      else if (!d.param.empty())
        dim.str(2, d.param);
      shape.msg(1, dim);
    }
    tt.msg(2, shape);
  }
  return Proto().msg(1, tt);
}

inline Proto valueInfo(std::string_view name, const Proto &type) {
  return Proto().str(1, name).msg(2, type);
}

inline Proto attrInts(std::string_view name, std::initializer_list<int64_t> values,
                      bool packed = false) {
  Proto a;
  a.str(1, name).varint(20, 7);
  if (packed)
    a.packed(8, values);
  else
    for (int64_t v : values)
      a.sint(8, v);
  return a;
}
inline Proto attrInt(std::string_view name, int64_t v) {
  return Proto().str(1, name).varint(20, 2).sint(3, v);
}
inline Proto attrFloat(std::string_view name, float v) {
  return Proto().str(1, name).varint(20, 1).f32(2, v);
}
inline Proto attrString(std::string_view name, std::string_view v) {
  return Proto().str(1, name).varint(20, 3).str(4, v);
}
inline Proto attrGraph(std::string_view name, const Proto &graph) {
  return Proto().str(1, name).varint(20, 5).msg(6, graph);
}
inline Proto attrTensor(std::string_view name, const Proto &tensor) {
  return Proto().str(1, name).varint(20, 4).msg(5, tensor);
}

inline Proto node(std::string_view op, std::initializer_list<std::string_view> inputs,
                  std::initializer_list<std::string_view> outputs, std::string_view name = {},
                  std::initializer_list<Proto> attrs = {}) {
  Proto n;
  for (auto i : inputs)
    n.str(1, i);
  for (auto o : outputs)
    n.str(2, o);
  if (!name.empty()) n.str(3, name);
  n.str(4, op);
  for (const Proto &a : attrs)
    n.msg(5, a);
  return n;
}

inline Proto model(const Proto &graph, int64_t opset = 17) {
  Proto m;
  m.varint(1, 8).str(2, "proto_writer").str(3, "1.0");
  m.msg(8, Proto().str(1, "").sint(2, opset));
  m.msg(7, graph);
  return m;
}

} // namespace sf::onnx::test
