// Result<T>: a value or an error message. Every fallible operation in shapeflow returns one;
// nothing throws across the library boundary and nothing aborts on bad input.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace sf {

/// An error: a message written for a person, in the printed syntax of shapes and dims.
struct Error {
  std::string message;
};

inline Error makeError(std::string message) { return Error{std::move(message)}; }

template <class T> class [[nodiscard]] Result {
public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}
  template <class U, class = std::enable_if_t<std::is_convertible_v<U, T> &&
                                              !std::is_same_v<std::decay_t<U>, Error> &&
                                              !std::is_same_v<std::decay_t<U>, T>>>
  Result(U &&value) : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T &value() & { assert(ok()); return std::get<0>(v_); }
  const T &value() const & { assert(ok()); return std::get<0>(v_); }
  T &&value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  const Error &error() const { assert(!ok()); return std::get<1>(v_); }
  Error &&takeError() { assert(!ok()); return std::get<1>(std::move(v_)); }
  T valueOr(T other) const { return ok() ? std::get<0>(v_) : std::move(other); }

private:
  std::variant<T, Error> v_;
};

template <> class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error error) : e_(std::move(error)) {}
  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error &error() const { assert(!ok()); return *e_; }
  Error &&takeError() { assert(!ok()); return std::move(*e_); }

private:
  std::optional<Error> e_;
};

inline Result<void> success() { return Result<void>(); }

} // namespace sf

#define SF_CONCAT_INNER(a, b) a##b
#define SF_CONCAT(a, b) SF_CONCAT_INNER(a, b)

/// SF_TRY(expr): evaluate a Result<void> (or any Result) and return its error if it failed.
#define SF_TRY(expr)                                                                               \
  do {                                                                                             \
    auto &&sf_try_result_ = (expr);                                                                \
    if (!sf_try_result_.ok()) return ::sf::Error(sf_try_result_.takeError());                      \
  } while (0)

/// SF_ASSIGN(decl, expr): `SF_ASSIGN(auto x, f());` declares x from a Result or returns its error.
#define SF_ASSIGN(decl, expr) SF_ASSIGN_IMPL(SF_CONCAT(sf_assign_tmp_, __LINE__), decl, expr)
#define SF_ASSIGN_IMPL(tmp, decl, expr)                                                            \
  auto tmp = (expr);                                                                               \
  if (!tmp.ok()) return ::sf::Error(tmp.takeError());                                              \
  decl = std::move(tmp).value()
