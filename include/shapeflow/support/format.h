// Error text built with fmt: `return errorf("axis {} is out of range for rank {}", axis, rank);`
// Types with a printed form (dims, shapes, facts) get a formatter through SF_FORMAT_AS_STRING
// beside their declaration, so that messages name them in the printed syntax.
#pragma once

#include "shapeflow/support/result.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace sf {

/// An Error whose message is `fmt::format(f, args...)`.
template <class... A> Error errorf(fmt::format_string<A...> f, A &&...args) {
  return Error{fmt::format(f, std::forward<A>(args)...)};
}

} // namespace sf

/// Formats `Type` as the string `expr` gives for a value `v` of it.
#define SF_FORMAT_AS_STRING(Type, expr)                                                            \
  template <> struct fmt::formatter<Type> : fmt::formatter<std::string_view> {                     \
    auto format(const Type &v, fmt::format_context &ctx) const {                                   \
      const std::string s_ = (expr);                                                               \
      return fmt::formatter<std::string_view>::format(std::string_view(s_), ctx);                  \
    }                                                                                              \
  }
