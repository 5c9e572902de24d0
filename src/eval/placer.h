// Internal: the run's arena as the executor keeps it (which of its bytes hold tensors still
// alive) and each node's placer, which gives the node's kernel its outputs' planned places
// (placer.cpp; the executor in executor.cpp).
#pragma once

#include "shapeflow/eval/arena.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace sf::eval::detail {

/// The run's arena (eval/arena.h) and which of its bytes hold tensors still alive: a place is
/// given only where no live tensor's bytes are, except an input dying at the node for a kernel
/// that writes in place. The account is the executor's own (values it still holds), not the
/// plan's: a plan that disagrees with the run costs heap memory, not a wrong result.
struct Arena {
  const ArenaLayout &layout;
  std::shared_ptr<std::byte[]> memory;
  struct Live {
    int64_t begin, end;
    OutletId of;
  };
  std::vector<Live> live;
  ArenaUse use;

  /// The bytes' offset in the arena (none: they are not in it).
  std::optional<int64_t> offsetOf(const std::byte *p) const;
  /// Its tensors' bytes in the arena are alive (as `o`).
  void hold(OutletId o, const Value &v);
  /// The bytes held as `o` are not alive any more.
  void drop(OutletId o);

  /// The arena of `bytes`: the last one this thread used when nothing holds it any more.
  static std::shared_ptr<std::byte[]> acquire(int64_t bytes);
};

/// One node's places: its outputs' planned offsets, each given once.
class NodePlacer : public Placer {
public:
  NodePlacer(Arena &arena, const Graph &g, const Node &n, std::vector<OutletId> dying)
      : arena_(arena), g_(g), node_(n), places_(arena.layout.places[n.id]), given_(places_.size(), false),
        dying_(std::move(dying)) {}
  /// It gave these bytes to this node's kernel.
  bool gave(const std::byte *p) const { return std::find(gave_.begin(), gave_.end(), p) != gave_.end(); }

  std::shared_ptr<std::byte[]> place(int64_t bytes, bool inPlace, std::optional<size_t> output) override;

private:
  std::vector<const std::byte *> gave_;
  Arena &arena_;
  const Graph &g_;
  const Node &node_;
  const std::vector<std::optional<Placement>> &places_;
  std::vector<bool> given_;
  std::vector<OutletId> dying_;
};

} // namespace sf::eval::detail
