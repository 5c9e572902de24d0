// The executable's heap in 2 MB pages where the kernel gives them (huge_heap.h).
#include "huge_heap.h"

namespace sf::cli {

std::optional<uintptr_t> carve(uintptr_t &next, uintptr_t end, size_t size, size_t alignment) {
  if (alignment == 0) alignment = 1;
  if (alignment & (alignment - 1)) return std::nullopt;
  const uintptr_t at = (next + alignment - 1) & ~uintptr_t(alignment - 1);
  if (at < next || at > end || size > end - at) return std::nullopt;
  next = at + size;
  return at;
}

} // namespace sf::cli

#if defined(SF_HUGE_HEAP) && defined(__linux__)
#include <gperftools/malloc_extension.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <new>

namespace sf::cli {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;
/// Address space reserved at the first request, inaccessible (no memory, no commit charge) until
/// a piece is handed out; past it, tcmalloc's own allocator.
constexpr size_t kReserve = size_t(4) << 30;

/// tcmalloc asks its system allocator for spans of at least 1 MB and carves objects out of them.
/// This one hands out consecutive pieces of one reserved region marked MADV_HUGEPAGE, so that the
/// kernel backs the heap with 2 MB pages: a 100,000-node graph's 50 MB of heap is then about 25
/// page faults instead of 12,500, the first touch of each 4 KB page being a third of a fresh
/// load's time. The region is made readable and writable 2 MB at a time as pieces are handed out,
/// so the process is charged for what it uses (under strict overcommit too). tcmalloc calls Alloc under its own lock.
class HugePageHeap final : public SysAllocator {
public:
  explicit HugePageHeap(SysAllocator *next) : next_(next) {}

  void *Alloc(size_t size, size_t *actualSize, size_t alignment) override {
    if (!reserved_ && !reserve()) return next_->Alloc(size, actualSize, alignment);
    uintptr_t next = next_free_;
    auto at = carve(next, end_, size, alignment);
    if (!at) return next_->Alloc(size, actualSize, alignment);
    // Made accessible in whole 2 MB pages: a huge page is only faulted in where its whole range is
    // one readable and writable mapping.
    if (next > accessible_) {
      const uintptr_t upTo = std::min(end_, (next + kHugePage - 1) / kHugePage * kHugePage);
      if (mprotect(reinterpret_cast<void *>(accessible_), upTo - accessible_, PROT_READ | PROT_WRITE) != 0)
        return next_->Alloc(size, actualSize, alignment);
      accessible_ = upTo;
    }
    next_free_ = next;
    if (actualSize) *actualSize = size;
    return reinterpret_cast<void *>(*at);
  }

private:
  bool reserve() {
    reserved_ = true;
    // A limit on the address space (ulimit -v) is the user's budget for real mappings (a model's
    // file among them): not spent on a reservation.
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) return false;
    void *p = mmap(nullptr, kReserve + kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    uintptr_t start = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) / kHugePage * kHugePage;
    madvise(reinterpret_cast<void *>(start), kReserve, MADV_HUGEPAGE); // advice: ignored without THP
    next_free_ = accessible_ = start;
    end_ = start + kReserve;
    return true;
  }

  SysAllocator *next_;
  bool reserved_ = false;
  uintptr_t next_free_ = 0, accessible_ = 0, end_ = 0;
};

} // namespace

void useHugePageHeap() {
  MallocExtension *m = MallocExtension::instance();
  SysAllocator *current = m ? m->GetSystemAllocator() : nullptr;
  if (!current) return;
  // Never destroyed: tcmalloc may still grow its heap while static objects are destroyed at exit.
  alignas(HugePageHeap) static unsigned char storage[sizeof(HugePageHeap)];
  m->SetSystemAllocator(new (storage) HugePageHeap(current));
}

} // namespace sf::cli

#else

namespace sf::cli {
void useHugePageHeap() {}
} // namespace sf::cli

#endif
