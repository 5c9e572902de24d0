// Table for support/pool_length.h: pooling output lengths at the edges where the window overhangs
// the input, as onnxruntime 1.30 computed them (1-D MaxPool, every row run), and the overflow and
// invalid-argument cases.
#include "shapeflow/support/pool_length.h"

#include <gtest/gtest.h>

#include <limits>

namespace sf {
namespace {

struct Row {
  int64_t in, ext, stride, padBegin, padEnd;
  bool ceil;
  std::optional<int64_t> expected;
};

TEST(PooledLength, Table) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Row rows[] = {
      {224, 3, 2, 1, 1, false, 112},     // resnet's stem pool
      {112, 3, 2, 1, 1, false, 56},
      {4, 3, 2, 0, 0, true, 2},          // ONNX maxpool_2d_ceil
      {2, 1, 2, 0, 0, true, 1},          // ceil: a last window starting in the padding is dropped
      {5, 2, 2, 1, 1, true, 3},
      {1, 2, 2, 0, 0, false, 1},         // overhang 1 < stride: one output from the valid part
      {1, 2, 3, 0, 0, false, 1},
      {2, 3, 2, 0, 0, false, 1},
      {2, 3, 2, 0, 0, true, 1},
      {1, 3, 3, 0, 0, false, 1},
      {1, 2, 1, 0, 0, false, 0},         // overhang of a whole stride: an empty axis
      {1, 3, 2, 0, 0, false, 0},
      {1, 4, 2, 0, 0, false, 0},         // overhang 3: truncates to 0 windows past the first
      {1, 4, 2, 0, 0, true, 0},
      {1, 4, 2, 1, 1, false, 1},
      {1, 3, 1, 0, 0, false, std::nullopt}, // negative: the window does not fit
      {1, 4, 1, 0, 0, true, std::nullopt},
      {kMax, 1, 1, 1, 0, false, std::nullopt}, // overflow
      {kMax - 10, 1, 100, 0, 0, true, (kMax - 11) / 100 + 1}, // ceil near the top, no overflow
      {kMax - 10, 1, 100, 20, -20, true, std::nullopt},        // in + pads overflows
      {5, 0, 1, 0, 0, false, std::nullopt},    // invalid window or stride
      {5, 2, 0, 0, 0, false, std::nullopt},
  };
  for (const Row &r : rows)
    EXPECT_EQ(pooledLength(r.in, r.ext, r.stride, r.padBegin, r.padEnd, r.ceil), r.expected)
        << "in " << r.in << " window " << r.ext << " stride " << r.stride << " pads " << r.padBegin
        << "," << r.padEnd << " ceil " << r.ceil;
}

} // namespace
} // namespace sf
