// Strides, flat indices and strided copies of a tensor's bytes, for the kernels that move elements.
// Used by the shape ops (Transpose, Slice), the array ops (Expand, Tile, Pad, ...) and indexing.
#pragma once

#include "../kernel_util.h"

#include <vector>

namespace sf::eval::detail {

/// Unravels a flat index into `idx` for shape `s`.
inline void unravel(int64_t flat, const Shape &s, std::vector<int64_t> &idx) {
  idx.resize(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
}

/// Kernels that move elements as bytes refuse string tensors (whose elements are not bytes).
inline Result<void> requireBytes(const Tensor &t) {
  if (t.isString()) return errorf("string tensors are not supported by this kernel");
  return success();
}

/// `n` elements of T from `src`, `step` elements apart (negative: backwards), to `dst`.
template <class T> void copyStrided(std::byte *dst, const std::byte *src, int64_t n, int64_t step) {
  for (int64_t j = 0; j < n; ++j) {
    T v;
    copyBytes(&v, src + static_cast<ptrdiff_t>(j * step) * ptrdiff_t(sizeof(T)), sizeof(T));
    copyBytes(dst + size_t(j) * sizeof(T), &v, sizeof(T));
  }
}

/// Copies elements of `elem` bytes from `src` (shape `in`) to a new layout given by a
/// per-output-dim source stride: row by row along the last output dim (one copy where the
/// row is contiguous in the source, typed loads otherwise).
inline void gatherStrided(std::byte *dst, const std::byte *src, size_t elem, const Shape &out,
                          const std::vector<int64_t> &srcStride) {
  int64_t total = countOf(out);
  size_t r = out.size();
  if (total == 0) return;
  if (r == 0) {
    copyBytes(dst, src, elem);
    return;
  }
  const int64_t inner = out[r - 1], step = srcStride[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < total; o += inner) {
    // off may be negative (a slice with a negative step runs backwards from its start).
    const std::byte *from = src + static_cast<ptrdiff_t>(off) * static_cast<ptrdiff_t>(elem);
    std::byte *to = dst + size_t(o) * elem;
    if (step == 1) copyBytes(to, from, size_t(inner) * elem);
    else if (elem == 4) copyStrided<uint32_t>(to, from, inner, step);
    else if (elem == 8) copyStrided<uint64_t>(to, from, inner, step);
    else if (elem == 2) copyStrided<uint16_t>(to, from, inner, step);
    else if (elem == 1) copyStrided<uint8_t>(to, from, inner, step);
    else
      for (int64_t j = 0; j < inner; ++j)
        copyBytes(to + size_t(j) * elem, from + static_cast<ptrdiff_t>(j * step) * ptrdiff_t(elem), elem);
    for (size_t d = r - 1; d-- > 0;) {
      idx[d]++;
      off += srcStride[d];
      if (idx[d] < out[d]) break;
      off -= srcStride[d] * out[d];
      idx[d] = 0;
    }
  }
}

} // namespace sf::eval::detail
