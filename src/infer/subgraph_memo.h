// The memo of one inference run's subgraph work (internal to the driver): body inferences keyed
// by the body and the facts it was given (formal inputs, then captured outer values), and whole
// control-flow rules keyed by the body that identifies their node and the node's input facts.
// Hashed; bounded so that a pathological model cannot make it hold without end.
#pragma once

#include "shapeflow/ir/fact.h"
#include "shapeflow/ir/graph.h"

#include <unordered_map>
#include <vector>

namespace sf {

class SubgraphMemo {
public:
  enum class Kind { Body, Rule };
  /// Past this many entries nothing new is kept (lookups still work).
  static constexpr size_t kMaxEntries = 4096;

  const std::vector<Fact> *find(Kind k, const Graph *body, const std::vector<Fact> &key) const;
  void add(Kind k, const Graph *body, std::vector<Fact> key, std::vector<Fact> outputs);
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

private:
  struct Key {
    Kind kind;
    const Graph *body;
    std::vector<Fact> facts;
    bool operator==(const Key &o) const {
      return kind == o.kind && body == o.body && facts == o.facts;
    }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const;
  };
  std::unordered_map<Key, std::vector<Fact>, KeyHash> entries_;
};

} // namespace sf
