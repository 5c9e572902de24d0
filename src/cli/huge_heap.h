// The `shapeflow` executable's heap in huge pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace sf::cli {

/// Where the executable is linked with tcmalloc (gperftools' headers found at build time): its
/// memory from then on comes from a region the kernel is asked to back with 2 MB pages
/// (madvise MADV_HUGEPAGE; without transparent huge pages, ordinary pages as before); not where
/// the address space is limited (ulimit -v), which a 4 GB reservation would eat into. Elsewhere
/// it does nothing. For executables only: a library leaves the allocator to its host program.
void useHugePageHeap();

/// The next piece of `size` bytes aligned to `alignment` (a power of 2; 0 is 1) of the region
/// [`next`, `end`), and `next` moved past it; nothing (and `next` unchanged) where it does not
/// fit or the alignment is not a power of 2.
std::optional<uintptr_t> carve(uintptr_t &next, uintptr_t end, size_t size, size_t alignment);

} // namespace sf::cli
