// Read-only mmap of a file (POSIX), with the error messages the ONNX reader passes on.
#include "shapeflow/onnx/mapped_file.h"

#include <algorithm>
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

void MappedFile::release(uint64_t offset, uint64_t size) const {
  if (!data_ || offset >= size_) return;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t end = offset + std::min(size, size_ - offset);
  uint64_t first = (offset + page - 1) / page * page; // whole pages inside the range only
  uint64_t last = end == size_ ? end : end / page * page;
  if (last <= first) return;
  // A private read-only mapping never holds changed pages, so dropping them loses nothing.
  ::madvise(static_cast<char *>(data_) + first, last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

} // namespace sf::onnx
