// Attention over heads in f32, shared by the kernels of the attention family (Attention of
// opsets 23 and 24, GroupQueryAttention): the scores of a block of query rows against every key
// as one product, each row adjusted by its op's rule (masks, soft cap, causal limit), a softmax
// over the keys the rule keeps, and the weighted values as a second product, written straight
// into the output. The f64 loops of each kernel remain for the other element types.
#pragma once

#include "../blas.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace sf::eval::detail {

/// Heads of f32 elements: row t of head h of batch entry b starts at
/// b * batch + h * head + t * row, its elements contiguous.
struct F32Heads {
  float *data = nullptr;
  int64_t batch = 0, head = 0, row = 0;
  float *at(int64_t b, int64_t h, int64_t t) const { return data + b * batch + h * head + t * row; }
};

/// The sizes of one attention: batch, query heads, key/value heads (a divisor of the query
/// heads: each serves qHeads / kvHeads of them), query rows, keys, head sizes of Q/K and of V.
struct AttendSizes {
  int64_t batch = 0, qHeads = 0, kvHeads = 0, queries = 0, keys = 0, head = 0, vHead = 0;
  float scale = 1;
};

/// Which keys of a query row take part in its softmax: [start, end); the others weigh 0.
/// `sink`: one more logit, `sinkValue`, counted in the denominator only (a smooth softmax).
struct KeptKeys {
  int64_t start = 0, end = 0;
  bool sink = false;
  float sinkValue = 0;
};

/// Rotates pairs of x's first `rotary` features by angles whose cosines and sines are `cos` and
/// `sin` (rotary / 2 of each): halves apart, or neighbours when interleaved. `x` and `out` may be
/// the same.
template <class T>
void rotatePairs(const T *x, T *out, int64_t rotary, bool interleaved, const T *cos, const T *sin) {
  const int64_t half = rotary / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    const T x1 = x[a], x2 = x[b];
    out[a] = x1 * cos[i] - x2 * sin[i];
    out[b] = x2 * cos[i] + x1 * sin[i];
  }
}

/// The softmax of row[start, end) in place, with an optional sink in the denominator; the
/// row's other entries become 0 (a row keeping no key, or whose keys are all -inf, is all 0).
inline void softmaxKept(float *row, int64_t n, const KeptKeys &kept) {
  const int64_t start = std::max<int64_t>(kept.start, 0), end = std::min(kept.end, n);
  if (end <= start) {
    std::fill(row, row + n, 0.0f);
    return;
  }
  float top = kept.sink ? kept.sinkValue : -std::numeric_limits<float>::infinity();
  for (int64_t t = start; t < end; ++t) top = std::max(top, row[t]);
  if (top == -std::numeric_limits<float>::infinity()) { // every key masked out with -inf
    std::fill(row, row + n, 0.0f);
    return;
  }
  float sum = kept.sink ? std::exp(kept.sinkValue - top) : 0.0f;
  for (int64_t t = start; t < end; ++t) sum += (row[t] = std::exp(row[t] - top));
  const float inv = 1.0f / sum;
  for (int64_t t = start; t < end; ++t) row[t] *= inv;
  std::fill(row, row + start, 0.0f);
  std::fill(row + end, row + n, 0.0f);
}

/// y = softmax(scale * q k^T, adjusted) v for every batch entry and query head. Query rows go in
/// chunks of at most 64; `keysFor(b, end)` says how many leading keys the rows before `end` of
/// batch entry b can take part with (all `keys`, or fewer under a causal rule: the products
/// then skip the keys no row of the chunk reads). `adjust(b, h, s, scores, n)` receives query row
/// s's scaled scores against the first n of them (of its head's key/value head, h / (qHeads /
/// kvHeads)), may change them, and returns the keys that take part (within the n). One position
/// (a decode step) and a group of query heads per key/value head: the group's rows are one
/// product, each key read once for all of them.
template <class Adjust, class KeysFor>
void attendF32(const AttendSizes &z, const F32Heads &q, const F32Heads &k, const F32Heads &v, const F32Heads &y,
               Adjust &&adjust, KeysFor &&keysFor) {
  const int64_t group = z.qHeads / z.kvHeads, T = z.keys, S = z.queries;
  const bool byHeads = S == 1 && group > 1;
  const int64_t chunk = byHeads ? group : std::min<int64_t>(S, 64), blocks = byHeads ? 1 : group;
  const int64_t qStride = byHeads ? q.head : q.row, yStride = byHeads ? y.head : y.row;
  std::vector<float> p(size_t(std::max<int64_t>(chunk, 1) * std::max<int64_t>(T, 1)));
  for (int64_t b = 0; b < z.batch; ++b)
    for (int64_t kh = 0; kh < z.kvHeads; ++kh)
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t h0 = kh * group + blk;
        for (int64_t s0 = 0; s0 < (byHeads ? 1 : S); s0 += chunk) {
          const int64_t rows = byHeads ? group : std::min(chunk, S - s0);
          const int64_t n = std::clamp<int64_t>(byHeads ? T : keysFor(b, s0 + rows), 0, T);
          const float *qa = byHeads ? q.at(b, h0, 0) : q.at(b, h0, s0);
          float *out = byHeads ? y.at(b, h0, 0) : y.at(b, h0, s0);
          if (n > 0 && z.head > 0)
            sgemm(false, true, rows, n, z.head, z.scale, qa, qStride, k.at(b, kh, 0), k.row, 0.0f, p.data(), n);
          else
            std::fill(p.begin(), p.begin() + rows * n, 0.0f);
          for (int64_t r = 0; r < rows; ++r) {
            float *row = p.data() + r * n;
            softmaxKept(row, n, adjust(b, byHeads ? h0 + r : h0, byHeads ? 0 : s0 + r, row, n));
          }
          if (n > 0)
            sgemm(false, false, rows, z.vHead, n, 1.0f, p.data(), n, v.at(b, kh, 0), v.row, 0.0f, out, yStride);
          else
            for (int64_t r = 0; r < rows; ++r) std::fill(out + r * yStride, out + r * yStride + z.vHead, 0.0f);
        }
      }
}

/// Every key for every query row.
template <class Adjust>
void attendF32(const AttendSizes &z, const F32Heads &q, const F32Heads &k, const F32Heads &v, const F32Heads &y,
               Adjust &&adjust) {
  attendF32(z, q, k, v, y, std::forward<Adjust>(adjust), [&](int64_t, int64_t) { return z.keys; });
}

} // namespace sf::eval::detail
