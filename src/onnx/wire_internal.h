// Internal: what the reader (wire.cpp, wire_values.cpp) and the value decoders (wire_decode.cpp)
// share: the storage behind a ModelView, and which TensorProto field carries the values of each
// type.
#pragma once

#include "shapeflow/onnx/mapped_file.h"
#include "shapeflow/onnx/wire.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sf::onnx {

struct ModelStorage {
  std::shared_ptr<MappedFile> file; // null when read from a caller's buffer
  std::string_view bytes;           // the model's bytes (in `file` or the caller's buffer)
  ReadLimits limits;                // what it was read with (NodeDecoder goes on with them)
  size_t nodesRead = 0;             // nodes counted against limits.maxNodes by the reader
  std::mutex mutex;                 // guards `external`
  std::unordered_map<std::string, std::shared_ptr<MappedFile>> external; // by canonical path
};

namespace detail {

/// TensorProto field numbers of the value fields.
enum TensorField : uint32_t {
  kFloatData = 4,
  kInt32Data = 5,
  kStringData = 6,
  kInt64Data = 7,
  kRawData = 9,
  kDoubleData = 10,
  kUInt64Data = 11,
};

const char *tensorFieldName(uint32_t field);
/// The typed field that carries values of `dataType` when there is no raw_data (0 if none).
uint32_t typedFieldFor(int32_t dataType);
/// How many entries of that field `elements` values take: 2 per COMPLEX value, one entry per
/// 2 INT4 or 4 INT2 values (each int32_data entry holds one packed byte). nullopt on overflow.
std::optional<int64_t> typedEntries(int32_t dataType, int64_t elements);
/// "[2,3]"
std::string formatDims(const std::vector<int64_t> &dims);

} // namespace detail
} // namespace sf::onnx
