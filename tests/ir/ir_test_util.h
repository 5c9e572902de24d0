// Helpers shared by the ir tests: unwrapping Results inside a test.
#pragma once

#include "shapeflow/support/result.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace sf::irtest {

/// The value of a Result, or a test failure (gtest reports the exception and stops the test).
template <class T> T unwrap(Result<T> r, const char *what, const char *file, int line) {
  if (!r.ok()) {
    std::string msg = std::string(what) + " failed: " + r.error().message;
    ADD_FAILURE_AT(file, line) << msg;
    throw std::runtime_error(msg);
  }
  return std::move(r).value();
}
inline void unwrap(Result<void> r, const char *what, const char *file, int line) {
  if (!r.ok()) {
    std::string msg = std::string(what) + " failed: " + r.error().message;
    ADD_FAILURE_AT(file, line) << msg;
    throw std::runtime_error(msg);
  }
}

/// The error message of a Result that must have failed.
template <class T> std::string errorOf(const Result<T> &r) {
  if (r.ok()) return "<no error>";
  return r.error().message;
}

} // namespace sf::irtest

#define GET(expr) ::sf::irtest::unwrap((expr), #expr, __FILE__, __LINE__)
#define CHECK_OK(expr) ::sf::irtest::unwrap((expr), #expr, __FILE__, __LINE__)
