// Combining hash values (the interned expressions', the facts', the reports' keys).
#pragma once

#include <cstddef>

namespace sf {

/// `h` combined with `v` (boost's hash_combine step, 64-bit constant).
inline size_t hashMix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

} // namespace sf
