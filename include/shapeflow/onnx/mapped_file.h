// A read-only memory mapping of a whole file. The ONNX reader keeps views (string_views) into
// one of these instead of copying, so that weights a reader never asks for are never read.
#pragma once

#include "shapeflow/support/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sf::onnx {

class MappedFile {
public:
  /// How the pages will be touched: passed to madvise. `Random` keeps the kernel from reading
  /// ahead into weight bytes a metadata-only reader never looks at.
  enum class Access { Normal, Random, Sequential };

  /// Maps `path` read-only. Errors name the path and the system's reason. Only regular files are
  /// accepted (not directories, FIFOs or devices). An empty file gives an empty mapping.
  static Result<std::shared_ptr<MappedFile>> open(const std::string &path,
                                                  Access access = Access::Normal);

  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// Changes the access hint, e.g. back to Normal once the metadata has been read, so that a
  /// later pass over the weights gets the kernel's read-ahead again.
  void advise(Access access) const;

  /// Drops the whole pages inside [offset, offset + size) from this process's memory (the file
  /// and the kernel's cache keep them; reading them again faults them back in). For a pass that
  /// reads a large file once.
  void release(uint64_t offset, uint64_t size) const;

  std::string_view bytes() const { return {static_cast<const char *>(data_), size_}; }
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }

private:
  MappedFile(std::string path, void *data, uint64_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  void *data_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace sf::onnx
