// Internal: the memory-aware execution order of the static memory plan (OrderPolicy::Memory;
// memory_order.cpp), decided at the plan's reference binding.
#pragma once

#include "plan_binding.h"

#include "shapeflow/ir/graph.h"

#include <cstdint>
#include <vector>

namespace sf::lower {

/// An execution order that lowers the live bytes: list scheduling that runs next, among the
/// nodes whose inputs are ready, the one that adds the fewest live bytes (its outputs' bytes
/// minus the bytes of the inputs it is the last reader of), ties in the model's order.
Result<std::vector<uint32_t>> memoryOrder(const Graph &g, Binding &binding);

} // namespace sf::lower
