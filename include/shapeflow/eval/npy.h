// NumPy's .npy files (format versions 1.0, 2.0 and 3.0), the inputs and outputs of `shapeflow
// run`: little-endian, C order, the element types ONNX uses that NumPy has (bool, int8..int64,
// uint8..uint64, float16/32/64, complex64/128). Written here: the format is a short header and the
// packed elements, smaller than a dependency (README "Dependencies").
#pragma once

#include "shapeflow/ir/tensor.h"
#include "shapeflow/support/result.h"

#include <string>
#include <string_view>

namespace sf::eval {

/// Parses a .npy file's bytes. Errors name what is wrong (`label: ...`); the shape must account
/// for exactly the bytes that follow the header (nothing is allocated that the file claims).
Result<Tensor> parseNpy(std::string_view bytes, std::string_view label = "<memory>");
/// Reads a .npy file.
Result<Tensor> readNpy(const std::string &path);
/// The .npy bytes of a tensor (version 1.0, or 2.0 when the header needs it).
Result<std::string> npyBytes(const Tensor &t);
Result<void> writeNpy(const std::string &path, const Tensor &t);

} // namespace sf::eval
