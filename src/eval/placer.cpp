// The run's arena as the executor keeps it and each node's placer (placer.h).
#include "placer.h"

#include "shapeflow/support/format.h"

#include <cstdlib>

namespace sf::eval::detail {

std::optional<int64_t> Arena::offsetOf(const std::byte *p) const {
  const std::byte *base = memory.get();
  if (!p || p < base || p >= base + layout.bytes) return std::nullopt;
  return int64_t(p - base);
}

void Arena::hold(OutletId o, const Value &v) {
  auto add = [&](const Tensor &t) {
    if (auto at = offsetOf(t.bytes().data()))
      live.push_back({*at, *at + int64_t(t.bytes().size()), o});
  };
  if (v.isTensor()) add(*v.tensor());
  for (const auto &e : v.elements()) add(*e);
}

void Arena::drop(OutletId o) {
  std::erase_if(live, [&](const Live &l) { return l.of == o; });
}

std::shared_ptr<std::byte[]> Arena::acquire(int64_t bytes) {
  thread_local std::shared_ptr<std::byte[]> kept;
  thread_local int64_t keptBytes = 0;
  if (kept && kept.use_count() == 1 && keptBytes >= bytes) return kept;
  kept.reset();
  constexpr size_t kAlign = 64;
  size_t rounded = (size_t(std::max<int64_t>(bytes, 1)) + kAlign - 1) / kAlign * kAlign;
  auto *p = static_cast<std::byte *>(std::aligned_alloc(kAlign, rounded));
  if (!p) return nullptr;
  kept = std::shared_ptr<std::byte[]>(p, [](std::byte *q) { std::free(q); });
  keptBytes = bytes;
  return kept;
}

std::shared_ptr<std::byte[]> NodePlacer::place(int64_t bytes, bool inPlace, std::optional<size_t> output) {
  for (size_t k = 0; k < places_.size(); ++k) {
    if (output && k != *output) continue;
    const auto &p = places_[k];
    if (!p || given_[k] || p->bytes < bytes || (p->inPlace && !inPlace)) continue;
    int64_t begin = p->offset, end = p->offset + bytes;
    bool over = false; // a dying input's bytes
    for (const Arena::Live &l : arena_.live) {
      if (l.end <= begin || end <= l.begin) continue;
      // Over a dying input only from its first byte and within it: element i then lands on
      // the input's element i, which the kernel has read.
      bool overwritable = p->inPlace && l.begin == begin && end <= l.end &&
                          std::find(dying_.begin(), dying_.end(), l.of) != dying_.end();
      if (!overwritable) {
        if (arena_.use.refused.size() < 5)
          arena_.use.refused.push_back(fmt::format(
              "output {} of node '{}' ({}) over '{}', still alive", k, node_.name, node_.opType,
              g_.outlet(l.of).name));
        ++arena_.use.conflicts;
        return nullptr;
      }
      over = true;
    }
    given_[k] = true;
    gave_.push_back(arena_.memory.get() + begin);
    // Alive from now (the node's other allocations must not overlap it); the executor puts
    // what the kernel made in its place once it returns.
    arena_.live.push_back({begin, end, OutletId{node_.id, uint32_t(k)}});
    ++arena_.use.placed;
    if (over) ++arena_.use.inPlace;
    return std::shared_ptr<std::byte[]>(arena_.memory, arena_.memory.get() + begin);
  }
  return nullptr;
}

} // namespace sf::eval::detail
