// .npy reading and writing (eval/npy.h).
#include "shapeflow/eval/npy.h"

#include "shapeflow/support/checked.h"
#include "shapeflow/support/format.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace sf::eval {
namespace {

struct Descr {
  const char *text;
  ElementType type;
};

// Little-endian (`<`) or byte-order-free (`|`) descriptions; `=` is native, little-endian here.
constexpr Descr kDescrs[] = {
    {"b1", ElementType::Bool}, {"i1", ElementType::I8},   {"u1", ElementType::U8},
    {"i2", ElementType::I16},  {"u2", ElementType::U16},  {"i4", ElementType::I32},
    {"u4", ElementType::U32},  {"i8", ElementType::I64},  {"u8", ElementType::U64},
    {"f2", ElementType::F16},  {"f4", ElementType::F32},  {"f8", ElementType::F64},
    {"c8", ElementType::C64},  {"c16", ElementType::C128},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

/// The text after `'key':` up to the next top-level comma or the closing brace.
Result<std::string_view> field(std::string_view header, std::string_view key, std::string_view label) {
  std::string quoted = "'" + std::string(key) + "'";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return errorf("{}: the header has no '{}'", label, key);
  size_t colon = header.find(':', at + quoted.size());
  if (colon == std::string_view::npos) return errorf("{}: the header's '{}' has no value", label, key);
  size_t begin = colon + 1, end = begin;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) break;
  }
  return trim(header.substr(begin, end - begin + (header[end] == ')' ? 1 : 0)));
}

Result<ElementType> typeOf(std::string_view d, std::string_view label) {
  if (d.size() < 3 || (d.front() != '\'' && d.front() != '"'))
    return errorf("{}: 'descr' is {}, expected a quoted type such as '<f4'", label, d);
  std::string_view s = d.substr(1, d.size() - 2);
  if (s.empty() || (s[0] != '<' && s[0] != '|' && s[0] != '='))
    return errorf("{}: element type {} is not little-endian", label, d);
  std::string_view code = s.substr(1);
  for (const Descr &x : kDescrs)
    if (code == x.text) return x.type;
  return errorf("{}: element type {} is not one ONNX uses", label, d);
}

Result<Shape> shapeOf(std::string_view s, std::string_view label) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')')
    return errorf("{}: 'shape' is {}, expected a tuple", label, s);
  Shape out;
  std::string_view rest = s.substr(1, s.size() - 2);
  while (!trim(rest).empty()) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) return errorf("{}: 'shape' {} has an empty element", label, s);
    int64_t v = 0;
    for (char c : item) {
      if (c < '0' || c > '9') return errorf("{}: 'shape' {} has a non-integer element", label, s);
      if (v > (INT64_MAX - (c - '0')) / 10) return errorf("{}: 'shape' {} overflows", label, s);
      v = v * 10 + (c - '0');
    }
    out.push_back(v);
    if (out.size() > 64) return errorf("{}: 'shape' {} has more than 64 dims", label, s);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

const char *descrOf(ElementType t) {
  switch (t) {
  case ElementType::Bool: return "|b1";
  case ElementType::I8: return "|i1";
  case ElementType::U8: return "|u1";
  case ElementType::I16: return "<i2";
  case ElementType::U16: return "<u2";
  case ElementType::I32: return "<i4";
  case ElementType::U32: return "<u4";
  case ElementType::I64: return "<i8";
  case ElementType::U64: return "<u8";
  case ElementType::F16: return "<f2";
  case ElementType::F32: return "<f4";
  case ElementType::F64: return "<f8";
  case ElementType::C64: return "<c8";
  case ElementType::C128: return "<c16";
  default: return nullptr;
  }
}

} // namespace

Result<Tensor> parseNpy(std::string_view bytes, std::string_view label) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return errorf("{}: not a .npy file (no \\x93NUMPY magic)", label);
  unsigned major = uint8_t(bytes[6]);
  size_t headerLen = 0, headerAt = 0;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
    headerAt = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return errorf("{}: truncated header", label);
    headerLen = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8 | size_t(uint8_t(bytes[10])) << 16 |
                size_t(uint8_t(bytes[11])) << 24;
    headerAt = 12;
  } else {
    return errorf("{}: .npy format version {} is not supported (1, 2 or 3)", label, major);
  }
  if (headerLen > bytes.size() - headerAt)
    return errorf("{}: the header claims {} bytes, past the end of the file", label, headerLen);
  std::string_view header = bytes.substr(headerAt, headerLen);
  SF_ASSIGN(std::string_view descr, field(header, "descr", label));
  SF_ASSIGN(std::string_view order, field(header, "fortran_order", label));
  SF_ASSIGN(std::string_view shapeText, field(header, "shape", label));
  SF_ASSIGN(ElementType type, typeOf(descr, label));
  if (order != "False")
    return errorf("{}: Fortran-order arrays are not supported (save with numpy's C order)", label);
  SF_ASSIGN(Shape shape, shapeOf(shapeText, label));
  int64_t count = 1;
  for (int64_t d : shape) {
    auto c = checkedMul(count, d);
    if (!c) return errorf("{}: shape {} has more than 2^63 elements", label, shapeText);
    count = *c;
  }
  auto size = checkedMul(count, int64_t(elementSize(type)));
  std::string_view data = bytes.substr(headerAt + headerLen);
  if (!size || uint64_t(*size) != data.size())
    return errorf("{}: shape {} of {} needs {} bytes, the file has {}", label, shapeText,
                  shortName(type), size ? std::to_string(*size) : std::string("more than 2^63"),
                  data.size());
  std::vector<std::byte> out(data.size());
  if (!data.empty()) std::memcpy(out.data(), data.data(), data.size());
  if (type == ElementType::Bool)
    for (std::byte &b : out)
      if (uint8_t(b) > 1) return errorf("{}: a bool element is {}, not 0 or 1", label, int(b));
  return Tensor::fromBytes(type, shape, std::move(out));
}

Result<Tensor> readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errorf("{}: cannot open", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parseNpy(ss.str(), path);
}

Result<std::string> npyBytes(const Tensor &t) {
  const char *descr = descrOf(t.type());
  if (!descr) return errorf("a {} tensor has no .npy element type", shortName(t.type()));
  if (!t.hasData()) return errorf("a {} tensor without data cannot be written", shortName(t.type()));
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : i + 1 < t.shape().size() ? ", " : "");
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  // Padded with spaces and a newline so that the data starts at a multiple of 64 bytes.
  size_t fixed = header.size() + 1 + 64 <= 65535 ? 10 : 12; // version 1.0's length is 16 bits
  size_t total = fixed + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  if (fixed == 10) {
    out += char(1);
    out += char(0);
    out += char(header.size() & 0xff);
    out += char(header.size() >> 8);
  } else {
    out += char(2);
    out += char(0);
    for (int k = 0; k < 4; ++k) out += char((header.size() >> (8 * k)) & 0xff);
  }
  out += header;
  auto data = t.bytes();
  out.append(reinterpret_cast<const char *>(data.data()), data.size());
  return out;
}

Result<void> writeNpy(const std::string &path, const Tensor &t) {
  SF_ASSIGN(std::string bytes, npyBytes(t));
  std::ofstream out(path, std::ios::binary);
  if (!out) return errorf("{}: cannot write", path);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) return errorf("{}: write failed", path);
  return success();
}

} // namespace sf::eval
