// The geometry of scaled dot-product attention, shared by the attention ops' rules (ONNX's
// Attention, onnxruntime's fused attention ops) and kernels: batch, query and KV heads (grouped
// when fewer KV heads serve the query heads), query and key positions, past positions of a KV
// cache, head sizes; from 4-D inputs (B, H, S, D) or 3-D ones (B, S, H*D) with the head counts
// as attributes.
#pragma once

#include "shapeflow/ops/op.h"

#include <cstdint>
#include <vector>

namespace sf {

/// Which inputs of the op are Q, K and V.
struct AttentionLayout {
  size_t q = 0, k = 1, v = 2;
};

/// What the rule knows of the geometry (symbolic).
struct AttentionShape {
  bool known = false; // Q, K and V of known ranks
  int64_t rank = 0;   // 3 or 4 (0: not known)
  Dimension batch, qHeads, kvHeads, queries, keys, head, vHead;
  Dimension past = Dimension(0), total; // total = past + keys
};

/// Q, K and V's geometry, their shared dims merged (what the rule learns is recorded), the head
/// counts from the shapes (4-D) or the attributes q_num_heads and kv_num_heads (3-D, which must
/// divide the hidden sizes), the query heads a multiple of the KV heads.
Result<AttentionShape> attentionShape(InferContext &ctx, const AttentionLayout &layout);
/// A KV cache's past positions: inputs past_key (B, Hkv, P, D) and past_value (B, Hkv, P, Dv),
/// both or neither; `total` becomes P + keys.
Result<void> addPast(InferContext &ctx, AttentionShape &a, size_t pastKey, size_t pastValue);
/// Rotary positions known by their bounds (`Range(past, past + seq)`), when they reach them: the
/// largest must be a row of the caches `cache` (onnxruntime refuses a position past the last row).
Result<void> positionsWithinCache(InferContext &ctx, const Fact &positions, const Fact &cache);

/// The same geometry at run time, from the tensors' shapes.
struct AttentionGeometry {
  int64_t rank = 4;
  int64_t batch = 0, qHeads = 0, kvHeads = 0, queries = 0, keys = 0, past = 0, head = 0, vHead = 0;
  int64_t total() const { return past + keys; }
};

/// From Q, K, V (and past_key, past_value when given) shapes and the head-count attributes (0:
/// not given); an error naming the shapes where they do not fit together.
Result<AttentionGeometry> attentionGeometry(const Shape &q, const Shape &k, const Shape &v, const Shape *pastKey,
                                            const Shape *pastValue, int64_t qHeads, int64_t kvHeads);

} // namespace sf
