// Internal helpers shared by the tensor printer and the text format: number spellings that read
// back exactly, and quoted strings.
#pragma once

#include "shapeflow/support/result.h"

#include <string>
#include <string_view>

namespace sf::detail {

/// Shortest spelling that reads back to the same double; always has a '.', an exponent, or is
/// `inf`/`-inf`/`nan`, so that it cannot be mistaken for an integer.
std::string formatDouble(double v);
/// The same for a float32 value.
std::string formatFloat(float v);
/// A double attribute: the float32 spelling when the value is exactly a float32 (ONNX float
/// attributes are float32: 0.1f prints `0.1`), else the double spelling. Reads back to a double
/// that prints the same.
std::string formatAttrFloat(double v);
/// `"..."` with `\\`, `\"`, `\n`, `\t`, `\r` and `\xHH` for other bytes outside printable ASCII.
std::string quote(std::string_view s);
/// True when every char is in [A-Za-z0-9_.] and the string is not empty.
bool isBareName(std::string_view s);

} // namespace sf::detail
