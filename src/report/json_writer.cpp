// The streaming JSON writer (report/json_writer.h).
#include "shapeflow/report/json_writer.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace sf {

namespace {

/// At s[i], a byte of 0x80 or more: {bytes, valid}. A valid UTF-8 sequence gives its length;
/// an invalid one the length of its maximal subpart (the longest prefix that could start a
/// valid sequence, at least one byte), which is replaced by one U+FFFD (Unicode's recommended
/// practice, what nlohmann::json's replacing dump does).
std::pair<size_t, bool> utf8Sequence(std::string_view s, size_t i) {
  uint8_t c = uint8_t(s[i]);
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF; // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return {1, false};
  }
  for (size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return {k, false};
    uint8_t b = uint8_t(s[i + k]);
    bool ok = k == 1 ? b >= lo && b <= hi : b >= 0x80 && b <= 0xBF;
    if (!ok) return {k, false};
  }
  return {need + 1, true};
}

} // namespace

std::string validUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (uint8_t(s[i]) < 0x80) {
      out += s[i++];
      continue;
    }
    auto [n, valid] = utf8Sequence(s, i);
    if (valid) out.append(s.substr(i, n));
    else out += "\xEF\xBF\xBD"; // U+FFFD
    i += n;
  }
  return out;
}

namespace {

/// Bytes a JSON string holds as they are: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> plainBytes() {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[size_t(c)] = c != '"' && c != '\\';
  return t;
}
constexpr std::array<bool, 256> kPlain = plainBytes();

} // namespace

void appendJsonString(std::string &out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    // A run of characters that need no escaping (a whole name, nearly always), appended at once.
    size_t run = i;
    while (run < s.size() && kPlain[uint8_t(s[run])]) ++run;
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
      if (i == s.size()) break;
    }
    unsigned char c = uint8_t(s[i]);
    if (c >= 0x80) {
      auto [n, valid] = utf8Sequence(s, i);
      if (valid)
        out.append(s.substr(i, n));
      else
        out += "\xEF\xBF\xBD"; // U+FFFD
      i += n;
      continue;
    }
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
    ++i;
  }
  out += '"';
}

void JsonWriter::newline(size_t depth) {
  if (indent_ <= 0) return;
  out_ += '\n';
  out_.append(depth * size_t(indent_), ' ');
}

void JsonWriter::separate() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    newline(first_.size());
  }
}

JsonWriter &JsonWriter::beginObject() {
  separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter &JsonWriter::close(char c) {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline(first_.size());
  out_ += c;
  return *this;
}

JsonWriter &JsonWriter::endObject() { return close('}'); }

JsonWriter &JsonWriter::beginArray() {
  separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter &JsonWriter::endArray() { return close(']'); }

JsonWriter &JsonWriter::key(std::string_view k) {
  separate();
  appendJsonString(out_, k);
  out_ += indent_ > 0 ? ": " : ":";
  afterKey_ = true;
  return *this;
}

JsonWriter &JsonWriter::value(int64_t v) {
  separate();
  fmt::format_int text(v);
  out_.append(text.data(), text.size());
  return *this;
}

JsonWriter &JsonWriter::value(uint64_t v) {
  separate();
  fmt::format_int text(v);
  out_.append(text.data(), text.size());
  return *this;
}

JsonWriter &JsonWriter::value(double v) {
  separate();
  if (!std::isfinite(v))
    out_ += "null";
  else
    fmt::format_to(std::back_inserter(out_), "{}", v);
  return *this;
}

JsonWriter &JsonWriter::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter &JsonWriter::value(std::string_view s) {
  separate();
  appendJsonString(out_, s);
  return *this;
}

JsonWriter &JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

JsonWriter &JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  return *this;
}

} // namespace sf
