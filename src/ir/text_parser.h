// Internal: the text-form parser (see docs/TEXT_FORMAT.md): recursive descent over characters;
// dims and shapes go to the dim parser. Every error carries line:column. Its methods are split
// by what they read: the file, tokens, declarations and graphs in text_parse.cpp; facts and
// attribute values in text_parse_values.cpp.
#pragma once

#include "shapeflow/ir/text.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sf::text_detail {

inline bool isNameChar(char c) { return std::isalnum(uint8_t(c)) || c == '_' || c == '.'; }

inline std::optional<int64_t> parseInt(std::string_view t) {
  int64_t v;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size() || t.empty()) return std::nullopt;
  return v;
}

struct PendingInput {
  std::string name; // "" for an absent input
  size_t pos;
};
struct PendingNode {
  uint32_t id;
  std::vector<PendingInput> inputs;
};

class TextParser {
public:
  explicit TextParser(std::string_view text) : s_(text) {}

  Result<Graph> file();

private:
  // ---- characters ----
  Error fail(size_t at, const std::string &what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') ++line, col = 1;
      else ++col;
    }
    return makeError(std::to_string(line) + ":" + std::to_string(col) + ": " + what);
  }
  size_t skipFrom(size_t p) const {
    while (p < s_.size()) {
      if (std::isspace(uint8_t(s_[p]))) {
        ++p;
      } else if (s_[p] == '#') {
        while (p < s_.size() && s_[p] != '\n') ++p;
      } else {
        break;
      }
    }
    return p;
  }
  void skip() { pos_ = skipFrom(pos_); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool accept(char c) {
    skip();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  Result<void> expect(char c) {
    if (accept(c)) return success();
    return fail(pos_, std::string("expected '") + c + "'" + found());
  }
  std::string found() const {
    if (pos_ >= s_.size()) return ", found the end of the text";
    return std::string(", found '") + s_[pos_] + "'";
  }
  bool atWord(std::string_view w) {
    skip();
    return s_.substr(pos_, w.size()) == w &&
           (pos_ + w.size() == s_.size() || !isNameChar(s_[pos_ + w.size()]));
  }

  // ---- tokens ----
  Result<std::string> quoted();
  Result<std::string> name(const char *what);
  Result<int64_t> integer(const char *what);
  std::string_view numberToken();

  // ---- declarations ----
  Result<void> symbolDecl(std::set<std::string> &declared);
  Result<void> opsetDecl();

  // ---- facts (text_parse_values.cpp) ----
  Error dimError(size_t start, const std::string &text, const Error &e) const;
  Result<PartialShape> shape();
  Result<ElementType> elementType();
  Result<std::vector<Dimension>> valueList();
  Result<Fact> fact();

  // ---- attribute values (text_parse_values.cpp) ----
  Result<Tensor> tensorLiteral(ElementType t);
  Result<Attribute> attrValue(bool inList);
  Result<Attribute> list();
  Result<Attributes> attrs();

  // ---- graphs ----
  Result<void> param(Graph &g);
  /// An output of a node statement: its name and the fact written for it, if any.
  struct Out {
    std::string name;
    std::optional<Fact> fact;
  };
  /// A node statement as read, before its node is added.
  struct Statement {
    size_t start = 0, opAt = 0; // where the statement and its op type begin
    std::vector<Out> outs;
    std::string opName;
    std::optional<int> version;
    Attributes as;
    std::string nodeName;
  };
  Result<void> statement(Graph &g, std::vector<PendingNode> &pending);
  Result<void> statementHead(Statement &st);
  Result<void> statementInputs(PendingNode &node);
  Result<uint32_t> statementNode(Graph &g, Statement &st);
  Result<GraphPtr> graphDef();

  std::string_view s_;
  size_t pos_ = 0;
  SymbolTable *table_ = nullptr;
  std::map<std::string, int> opsets_;
  int depth_ = 0;
};

} // namespace sf::text_detail
