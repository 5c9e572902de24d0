// Helpers shared by the dim tests: unwrapping Results inside a test, building symbols, evaluating
// a dimension at a point.
#pragma once

#include "shapeflow/dim/broadcast.h"
#include "shapeflow/dim/expr.h"
#include "shapeflow/dim/parse.h"
#include "shapeflow/dim/partial_shape.h"
#include "shapeflow/dim/symbol_table.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <ostream>
#include <stdexcept>
#include <string>

namespace sf {
// gtest prints these in failure messages through ADL.
inline void PrintTo(const Dimension &d, std::ostream *os) {
  *os << d.toString() << " " << toString(d.interval())
      << (d.expr() ? " expr " + toString(d.expr()) : std::string(" no expr"));
}
inline void PrintTo(const PartialShape &s, std::ostream *os) { *os << s.toString(); }
inline void PrintTo(const Interval &i, std::ostream *os) { *os << toString(i); }
inline void PrintTo(Expr e, std::ostream *os) { *os << (e ? toString(e) : std::string("null")); }
} // namespace sf

namespace sf::test {

/// The value of a Result, or a test failure (gtest reports the exception and stops the test).
template <class T> T unwrap(Result<T> r, const char *what, const char *file, int line) {
  if (!r.ok()) {
    std::string msg = std::string(what) + " failed: " + r.error().message;
    ADD_FAILURE_AT(file, line) << msg;
    throw std::runtime_error(msg);
  }
  return std::move(r).value();
}
#define GET(expr) ::sf::test::unwrap((expr), #expr, __FILE__, __LINE__)

/// Every occurrence of `needle` removed from `s`.
inline std::string erase(std::string s, const std::string &needle) {
  if (needle.empty()) return s;
  for (size_t p; (p = s.find(needle)) != std::string::npos;) s.erase(p, needle.size());
  return s;
}

/// `token` occurs in `s` not glued to a letter, digit or `_` on either side.
inline bool hasToken(const std::string &s, const std::string &token) {
  auto word = [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; };
  for (size_t p = s.find(token); p != std::string::npos; p = s.find(token, p + 1)) {
    bool before = p > 0 && word(s[p - 1]) && word(token.front());
    bool after = p + token.size() < s.size() && word(s[p + token.size()]) && word(token.back());
    if (!before && !after) return true;
  }
  return false;
}

/// An error "names the clashing dims": with both printed shapes cut out of the message, the two
/// dims are still mentioned (so it is not only the shapes that mention them).
inline ::testing::AssertionResult namesClash(const std::string &message, const PartialShape &a,
                                             const PartialShape &b, const std::string &da,
                                             const std::string &db) {
  std::string rest = erase(erase(message, a.toString()), b.toString());
  if (!hasToken(rest, da) || !hasToken(rest, db))
    return ::testing::AssertionFailure()
           << "message does not name the clashing dims " << da << " and " << db << ": \""
           << message << "\"";
  if (message.find(a.toString()) == std::string::npos ||
      message.find(b.toString()) == std::string::npos)
    return ::testing::AssertionFailure()
           << "message does not name both shapes " << a.toString() << " and " << b.toString()
           << ": \"" << message << "\"";
  return ::testing::AssertionSuccess();
}

using Point = std::map<SymbolId, int64_t>;

inline Result<int64_t> evalAt(Expr e, const Point &p) {
  return evaluate(e, [&](SymbolId s) -> std::optional<int64_t> {
    auto it = p.find(s);
    if (it == p.end()) return std::nullopt;
    return it->second;
  });
}

} // namespace sf::test
