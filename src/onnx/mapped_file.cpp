// Read-only mmap of a file (POSIX), with the error messages the ONNX reader passes on.
#include "shapeflow/onnx/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sf::onnx {

namespace {

std::string systemError(const std::string &path, const char *what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

// Closes the descriptor on every path out of open(); the mapping outlives it.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

} // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string &path, Access access) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return makeError(systemError(path, "cannot open"));
  FdCloser closer{fd};

  struct stat st;
  if (::fstat(fd, &st) != 0) return makeError(systemError(path, "cannot stat"));
  if (!S_ISREG(st.st_mode)) return makeError(path + ": not a regular file");
  if (st.st_size < 0) return makeError(path + ": negative file size");

  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) return std::shared_ptr<MappedFile>(new MappedFile(path, nullptr, 0));

  void *data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return makeError(systemError(path, "cannot map"));
  std::shared_ptr<MappedFile> file(new MappedFile(path, data, size));
  if (access != Access::Normal) file->advise(access);
  return file;
}

void MappedFile::advise(Access access) const {
  if (!data_) return;
  int advice = access == Access::Random       ? MADV_RANDOM
               : access == Access::Sequential ? MADV_SEQUENTIAL
                                              : MADV_NORMAL;
  ::madvise(data_, size_, advice); // only a hint: if it fails, nothing that matters changes
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

} // namespace sf::onnx
