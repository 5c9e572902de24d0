// Tables for support/window.h: auto_pad's padding and the output length along one axis.
// Conv, the pools and ConvTranspose, with strides, dilations, odd and even padding totals.
#include "shapeflow/support/window.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace sf {
namespace {

TEST(Window, AutoPadSpellings) {
  EXPECT_EQ(parseAutoPad("NOTSET"), AutoPad::NotSet);
  EXPECT_EQ(parseAutoPad(""), AutoPad::NotSet);
  EXPECT_EQ(parseAutoPad("SAME_UPPER"), AutoPad::SameUpper);
  EXPECT_EQ(parseAutoPad("SAME_LOWER"), AutoPad::SameLower);
  EXPECT_EQ(parseAutoPad("VALID"), AutoPad::Valid);
  EXPECT_EQ(parseAutoPad("same_upper"), std::nullopt);
  EXPECT_EQ(parseAutoPad("SAME"), std::nullopt);
  EXPECT_TRUE(isSamePadding(AutoPad::SameUpper));
  EXPECT_TRUE(isSamePadding(AutoPad::SameLower));
  EXPECT_FALSE(isSamePadding(AutoPad::NotSet));
  EXPECT_FALSE(isSamePadding(AutoPad::Valid));
}

TEST(Window, SamePaddingSplit) {
  struct Row {
    int64_t total;
    AutoPad p;
    int64_t begin, end;
  };
  const Row rows[] = {
      {0, AutoPad::SameUpper, 0, 0}, {4, AutoPad::SameUpper, 2, 2}, {4, AutoPad::SameLower, 2, 2},
      {1, AutoPad::SameUpper, 0, 1}, {1, AutoPad::SameLower, 1, 0}, {5, AutoPad::SameUpper, 2, 3},
      {5, AutoPad::SameLower, 3, 2}, {3, AutoPad::NotSet, 1, 2}, // as SAME_UPPER
  };
  for (const Row &r : rows) {
    PadPair p = splitSamePadding(r.total, r.p);
    EXPECT_EQ(p.begin, r.begin) << "total " << r.total << " auto_pad " << int(r.p);
    EXPECT_EQ(p.end, r.end) << "total " << r.total << " auto_pad " << int(r.p);
  }
  EXPECT_EQ(windowExtent(3, 1), 3);
  EXPECT_EQ(windowExtent(3, 2), 5);
  EXPECT_EQ(windowExtent(1, 4), 1);
  EXPECT_EQ(sameOutputLength(0, 2), 0);
  EXPECT_EQ(sameOutputLength(1, 2), 1);
  EXPECT_EQ(sameOutputLength(10, 2), 5);
  EXPECT_EQ(sameOutputLength(11, 2), 6);
  EXPECT_EQ(sameOutputLength(7, 1), 7);
}

TEST(Window, ConvolutionAndPoolAxes) {
  struct Row {
    int64_t in, kernel, stride, dilation, padBegin, padEnd;
    AutoPad autoPad;
    bool pool, ceil;
    int64_t begin, end, out;
  };
  constexpr auto U = AutoPad::SameUpper, L = AutoPad::SameLower, V = AutoPad::Valid, N = AutoPad::NotSet;
  const Row rows[] = {
      {5, 3, 1, 1, 0, 0, U, false, false, 1, 1, 5},   // even total 2
      {5, 4, 1, 1, 0, 0, U, false, false, 1, 2, 5},   // odd total 3: the extra pad at the end
      {5, 4, 1, 1, 0, 0, L, false, false, 2, 1, 5},   // ... at the beginning
      {11, 3, 2, 1, 0, 0, U, false, false, 1, 1, 6},  // stride 2, even total
      {10, 3, 2, 1, 0, 0, U, false, false, 0, 1, 5},  // stride 2, odd total
      {10, 3, 2, 1, 0, 0, L, false, false, 1, 0, 5},
      {7, 3, 1, 2, 0, 0, U, false, false, 2, 2, 7},   // dilation 2: extent 5
      {7, 3, 1, 2, 0, 0, L, false, false, 2, 2, 7},
      {8, 3, 2, 2, 0, 0, U, false, false, 1, 2, 4},   // stride 2 and dilation 2, odd total 3
      {8, 3, 2, 2, 0, 0, L, false, false, 2, 1, 4},
      {9, 1, 3, 1, 0, 0, U, false, false, 0, 0, 3},   // no padding needed: total clamped at 0
      {9, 3, 2, 1, 4, 4, U, false, false, 1, 1, 5},   // SAME ignores the given pads
      {5, 3, 1, 1, 1, 1, V, false, false, 0, 0, 3},   // VALID drops the given pads
      {6, 3, 2, 2, 0, 0, V, false, false, 0, 0, 1},
      {5, 3, 1, 1, 1, 1, N, false, false, 1, 1, 5},   // NOTSET keeps them
      {7, 3, 2, 1, 1, 2, N, false, false, 1, 2, 4},   // (7 + 3 - 3) / 2 + 1
      {7, 3, 1, 2, 0, 0, N, false, false, 0, 0, 3},   // dilation 2, no pads
      {9, 3, 2, 2, 2, 1, N, false, false, 2, 1, 4},   // (9 + 3 - 5) / 2 + 1
      {2, 3, 1, 1, 0, 0, N, false, false, 0, 0, -1},  // a convolution's window must fit
      {1, 2, 2, 1, 0, 0, N, true, false, 0, 0, 1},    // a pool's may overhang by less than a stride
      {4, 3, 2, 1, 0, 0, N, true, true, 0, 0, 2},     // ceil_mode
      {1, 3, 1, 1, 0, 0, N, true, false, 0, 0, -1},   // not even a partial window
      {5, 2, 2, 1, 0, 0, U, true, true, 0, 1, 3},     // SAME in a pool: ceil(5 / 2)
  };
  for (const Row &r : rows) {
    WindowAxis a = windowAxis(r.in, r.kernel, r.stride, r.dilation, r.padBegin, r.padEnd, r.autoPad, r.pool, r.ceil);
    std::string where = "in " + std::to_string(r.in) + " kernel " + std::to_string(r.kernel) + " stride " +
                        std::to_string(r.stride) + " dilation " + std::to_string(r.dilation) + " pads " +
                        std::to_string(r.padBegin) + "," + std::to_string(r.padEnd) + " auto_pad " +
                        std::to_string(int(r.autoPad)) + (r.pool ? " pool" : "") + (r.ceil ? " ceil" : "");
    EXPECT_EQ(a.padBegin, r.begin) << where;
    EXPECT_EQ(a.padEnd, r.end) << where;
    EXPECT_EQ(a.out, r.out) << where;
  }
}

TEST(Window, TransposedAxes) {
  struct Row {
    int64_t in, kernel, stride, dilation, padBegin, padEnd, outputPadding;
    AutoPad autoPad;
    std::optional<int64_t> outputLength;
    int64_t begin, out;
  };
  constexpr auto U = AutoPad::SameUpper, L = AutoPad::SameLower, V = AutoPad::Valid, N = AutoPad::NotSet;
  const Row rows[] = {
      {3, 3, 2, 1, 0, 0, 0, N, std::nullopt, 0, 7},  // 2 * (3 - 1) + 3
      {3, 3, 2, 1, 1, 1, 0, N, std::nullopt, 1, 5},  // pads cut from it
      {3, 3, 2, 1, 1, 1, 1, N, std::nullopt, 1, 6},  // output_padding adds to it
      {3, 3, 2, 1, 1, 1, 0, V, std::nullopt, 0, 7},  // VALID: no pads
      {3, 3, 1, 2, 0, 0, 0, N, std::nullopt, 0, 7},  // dilation 2: extent 5
      {3, 3, 2, 1, 0, 0, 0, U, std::nullopt, 0, 6},  // SAME: 3 * 2, odd total 1 at the end
      {3, 3, 2, 1, 0, 0, 0, L, std::nullopt, 1, 6},  // ... at the beginning
      {4, 4, 2, 1, 0, 0, 0, U, std::nullopt, 1, 8},  // even total 2
      {3, 3, 2, 1, 0, 0, 0, N, 5, 1, 5},             // output_shape: total 2
      {3, 3, 2, 1, 0, 0, 0, N, 6, 1, 6},             // odd total: at the start without auto_pad
      {3, 3, 2, 1, 0, 0, 0, U, 6, 0, 6},             // ... at the end with SAME_UPPER
      {3, 3, 2, 1, 0, 0, 0, N, 8, 0, 8},             // total -1 (longer than the full 7): the end
      {3, 3, 2, 1, 0, 0, 0, N, 10, -1, 10},          // total -3: floor division, -1 at the start
      {3, 3, 2, 1, 0, 0, 0, L, 6, 1, 6},
      {1, 1, 1, 1, 1, 1, 0, N, std::nullopt, 1, -1}, // pads larger than the output
  };
  for (const Row &r : rows) {
    WindowAxis a = transposedWindowAxis(r.in, r.kernel, r.stride, r.dilation, r.padBegin, r.padEnd,
                                        r.outputPadding, r.autoPad, r.outputLength);
    std::string where = "in " + std::to_string(r.in) + " kernel " + std::to_string(r.kernel) + " stride " +
                        std::to_string(r.stride) + " dilation " + std::to_string(r.dilation) + " auto_pad " +
                        std::to_string(int(r.autoPad)) + " output " + std::to_string(r.outputLength.value_or(-1));
    EXPECT_EQ(a.padBegin, r.begin) << where;
    EXPECT_EQ(a.out, r.out) << where;
  }
}

} // namespace
} // namespace sf
