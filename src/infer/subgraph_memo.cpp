// SubgraphMemo: a hash map from (kind, body, facts) to the facts that came out.
#include "subgraph_memo.h"

namespace sf {

size_t SubgraphMemo::KeyHash::operator()(const Key &k) const {
  size_t h = std::hash<const void *>()(k.body) * 31 + size_t(k.kind);
  for (const Fact &f : k.facts)
    h = h * 1000003 ^ hashOf(f);
  return h;
}

const std::vector<Fact> *SubgraphMemo::find(Kind k, const Graph *body,
                                            const std::vector<Fact> &key) const {
  // A probe key holds a copy of the facts: lookups happen once per body inference, which
  // costs far more than the copy.
  auto it = entries_.find(Key{k, body, key});
  return it == entries_.end() ? nullptr : &it->second;
}

void SubgraphMemo::add(Kind k, const Graph *body, std::vector<Fact> key,
                       std::vector<Fact> outputs) {
  if (entries_.size() >= kMaxEntries) return;
  entries_.emplace(Key{k, body, std::move(key)}, std::move(outputs));
}

} // namespace sf
