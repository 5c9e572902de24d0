// A streaming JSON writer: appends to a string as it goes, with no document tree. The statistics
// of a large model are hundreds of thousands of values; building nlohmann::json objects for them
// (a std::map per object) and dumping them cost several times the analysis, so the reports that
// must be fast write their text through this, and nlohmann::json parses that text where a tree
// is wanted (the library API, tests). Strings are escaped and bytes that are not UTF-8 are
// replaced by U+FFFD, as jsonText() does; doubles print in their shortest exact form; a
// non-finite double is null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sf {

class JsonWriter {
public:
  /// `indent` > 0: one member per line, indented that many spaces per level (as
  /// nlohmann::json::dump(indent) prints); 0: one line.
  explicit JsonWriter(std::string &out, int indent = 0) : out_(out), indent_(indent) {}
  /// A writer of one value as it would be written `depth` containers deep (after a key or a
  /// separator), so that a value repeated many times can be written once and then as raw text.
  JsonWriter(std::string &out, int indent, size_t depth)
      : out_(out), indent_(indent), first_(depth, uint8_t(0)), afterKey_(true) {}

  /// Containers open now.
  size_t depth() const { return first_.size(); }
  int indent() const { return indent_; }

  JsonWriter &beginObject();
  JsonWriter &endObject();
  JsonWriter &beginArray();
  JsonWriter &endArray();
  /// The key of the next member of the current object.
  JsonWriter &key(std::string_view k);
  JsonWriter &value(int64_t v);
  JsonWriter &value(uint64_t v);
  JsonWriter &value(int v) { return value(int64_t(v)); }
  JsonWriter &value(double v);
  JsonWriter &value(bool v);
  JsonWriter &value(std::string_view s);
  JsonWriter &value(const char *s) { return value(std::string_view(s)); }
  JsonWriter &null();
  /// Text that is already JSON (a value), written as it is.
  JsonWriter &raw(std::string_view json);

private:
  void separate();
  void newline(size_t depth);
  JsonWriter &close(char c);
  std::string &out_;
  int indent_;
  std::vector<uint8_t> first_; // per open container: no member written yet
  bool afterKey_ = false;
};

/// `s` with every byte sequence that is not UTF-8 replaced by U+FFFD (names and messages come
/// from model files; a front end that needs text, such as Python's str, gets valid text).
std::string validUtf8(std::string_view s);

/// `s` as a JSON string literal (quotes included), appended to `out`.
void appendJsonString(std::string &out, std::string_view s);

} // namespace sf
