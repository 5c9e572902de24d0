// Tables for support/checked.h: overflow at the int64 edges is reported (never wrapped), floor
// division and modulo follow Python's sign conventions, saturating helpers keep kInf sticky.
#include "shapeflow/support/checked.h"

#include <gtest/gtest.h>

#include <random>

namespace sf {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr std::optional<int64_t> kOverflow = std::nullopt;

struct BinCase {
  int64_t a, b;
  std::optional<int64_t> expected; // nullopt: overflow (or division by zero)
};

std::string describe(const char *op, const BinCase &c) {
  return std::string(op) + "(" + std::to_string(c.a) + ", " + std::to_string(c.b) + ")";
}

TEST(Checked, AddTable) {
  const BinCase cases[] = {
      {0, 0, 0},
      {1, 2, 3},
      {-5, 3, -2},
      {kMax, 0, kMax},
      {kMax, 1, kOverflow},
      {kMax, kMax, kOverflow},
      {kMax - 1, 1, kMax},
      {kMin, 0, kMin},
      {kMin, -1, kOverflow},
      {-1, kMin, kOverflow},
      {kMin, kMin, kOverflow},
      {kMin, kMax, -1},
      {kMax, kMin, -1},
      {kMin + 1, -1, kMin},
  };
  for (const auto &c : cases) EXPECT_EQ(checkedAdd(c.a, c.b), c.expected) << describe("add", c);
}

TEST(Checked, SubTable) {
  const BinCase cases[] = {
      {0, 0, 0},
      {5, 7, -2},
      {kMin, 1, kOverflow},
      {kMin, 0, kMin},
      {kMin, -1, kMin + 1},
      {0, kMin, kOverflow}, // -INT64_MIN is not representable
      {-1, kMin, kMax},
      {kMax, -1, kOverflow},
      {kMax, kMax, 0},
      {kMin, kMin, 0},
      {kMax, kMin, kOverflow},
      {kMin, kMax, kOverflow},
      {0, kMax, kMin + 1},
  };
  for (const auto &c : cases) EXPECT_EQ(checkedSub(c.a, c.b), c.expected) << describe("sub", c);
}

TEST(Checked, MulTable) {
  const int64_t two32 = int64_t(1) << 32, two31 = int64_t(1) << 31;
  const BinCase cases[] = {
      {0, kMax, 0},
      {kMin, 0, 0},
      {kMin, 1, kMin},
      {kMin, -1, kOverflow},
      {-1, kMin, kOverflow},
      {kMax, -1, -kMax},
      {kMax, 2, kOverflow},
      {two32, two31, kOverflow},            // 2^63
      {-two32, two31, kMin},                // -2^63 fits exactly
      {two32, two31 - 1, (two31 - 1) << 32},
      {3037000499, 3037000499, 9223372030926249001}, // largest square that fits
      {3037000500, 3037000500, kOverflow},
      {-3037000500, 3037000500, kOverflow},
      {kMax / 2 + 1, 2, kOverflow},
      {kMax / 2, 2, kMax - 1},
  };
  for (const auto &c : cases) EXPECT_EQ(checkedMul(c.a, c.b), c.expected) << describe("mul", c);
}

// Python: a // b rounds toward negative infinity.
TEST(Checked, FloorDivTable) {
  const BinCase cases[] = {
      {7, 2, 3},
      {-7, 2, -4},
      {7, -2, -4},
      {-7, -2, 3},
      {6, -2, -3},
      {-6, 2, -3},
      {0, -3, 0},
      {-1, 3, -1},
      {1, -3, -1},
      {5, 0, kOverflow}, // division by zero
      {0, 0, kOverflow},
      {kMin, -1, kOverflow}, // the one quotient that does not fit
      {kMin, 1, kMin},
      {kMin, 2, kMin / 2},
      {kMax, -1, -kMax},
      {kMin, kMax, -2},
      {kMax, kMin, -1},
      {kMin, kMin, 1},
      {kMin, 3, -3074457345618258603},
      {kMin, -3, 3074457345618258602},
      {kMax, -3, -3074457345618258603},
      {-1, kMax, -1},
  };
  for (const auto &c : cases)
    EXPECT_EQ(checkedFloorDiv(c.a, c.b), c.expected) << describe("floorDiv", c);
}

// Python: a % b has the sign of b.
TEST(Checked, ModTable) {
  const BinCase cases[] = {
      {7, 2, 1},
      {-7, 2, 1},
      {7, -2, -1},
      {-7, -2, -1},
      {6, -3, 0},
      {-6, 3, 0},
      {0, 5, 0},
      {5, 0, kOverflow}, // modulo by zero
      {kMin, -1, 0},     // the remainder exists even though the quotient overflows
      {kMax, -1, 0},
      {kMin, 2, 0},
      {kMin, 3, 1},
      {kMin, -3, -2},
      {kMin, 7, 6},
      {kMax, kMin, -1},
      {kMin, kMax, 9223372036854775806},
      {kMin, kMin, 0},
      {kMax, -3, -2},
      {-1, kMax, 9223372036854775806},
  };
  for (const auto &c : cases) EXPECT_EQ(checkedMod(c.a, c.b), c.expected) << describe("mod", c);
}

TEST(Checked, FloorDivUncheckedMatchesChecked) {
  EXPECT_EQ(floorDivUnchecked(-7, 2), -4);
  EXPECT_EQ(floorDivUnchecked(7, -2), -4);
  EXPECT_EQ(floorDivUnchecked(kMin, 1), kMin);
}

// a == (a // b) * b + a % b and 0 <= |a % b| < |b| with the sign of b, against 128-bit math.
TEST(Checked, DivModIdentityRandom) {
  std::mt19937_64 rng(0x5eed0001);
  auto pick = [&]() -> int64_t {
    switch (rng() % 4) {
    case 0: return int64_t(rng());                          // anywhere
    case 1: return int64_t(rng() % 41) - 20;                 // small
    case 2: return kMin + int64_t(rng() % 8);                // near the bottom
    default: return kMax - int64_t(rng() % 8);               // near the top
    }
  };
  for (int i = 0; i < 20000; ++i) {
    int64_t a = pick(), b = pick();
    if (b == 0) continue;
    __int128 A = a, B = b;
    __int128 q = A / B;
    if ((A % B != 0) && ((A < 0) != (B < 0))) --q;
    __int128 r = A - q * B;
    auto cq = checkedFloorDiv(a, b);
    auto cr = checkedMod(a, b);
    bool fits = q >= kMin && q <= kMax;
    ASSERT_EQ(cq.has_value(), fits) << a << " // " << b;
    if (fits) {
      ASSERT_EQ(*cq, int64_t(q)) << a << " // " << b;
    }
    ASSERT_TRUE(cr.has_value()) << a << " % " << b;
    ASSERT_EQ(*cr, int64_t(r)) << a << " % " << b;

    __int128 s = A + B, d = A - B, p = A * B; // |a*b| < 2^126: no 128-bit overflow
    auto inRange = [](__int128 v) { return v >= kMin && v <= kMax; };
    ASSERT_EQ(checkedAdd(a, b).has_value(), inRange(s)) << a << " + " << b;
    if (inRange(s)) {
      ASSERT_EQ(*checkedAdd(a, b), int64_t(s));
    }
    ASSERT_EQ(checkedSub(a, b).has_value(), inRange(d)) << a << " - " << b;
    if (inRange(d)) {
      ASSERT_EQ(*checkedSub(a, b), int64_t(d));
    }
    ASSERT_EQ(checkedMul(a, b).has_value(), inRange(p)) << a << " * " << b;
    if (inRange(p)) {
      ASSERT_EQ(*checkedMul(a, b), int64_t(p));
    }
  }
}

TEST(Saturating, AddTable) {
  struct Case {
    int64_t a, b, expected;
  } cases[] = {
      {3, 4, 7},
      {-3, -4, -7},
      {kInf, 5, kInf},            // an open end stays open
      {5, kInf, kInf},
      {kInf, -5, kInf},
      {-kInf, 5, -kInf},
      {-kInf, -kInf, -kInf},
      {kInf, kInf, kInf},
      {kInf - 1, 1, kInf},        // reaching kInf exactly is "unbounded"
      {kInf - 1, 2, kInf},        // past it clamps instead of failing
      {kInf - 10, 3, kInf - 7},   // below it stays exact
      {-kInf + 1, -1, -kInf},
      {-kInf + 1, -5, -kInf},
      {kMin, 0, -kInf},           // clamped into [-kInf, kInf]
      {kMin + 5, -10, -kInf},
  };
  for (const auto &c : cases)
    EXPECT_EQ(satAdd(c.a, c.b), c.expected) << "satAdd(" << c.a << ", " << c.b << ")";
}

TEST(Saturating, MulTable) {
  const int64_t two32 = int64_t(1) << 32;
  struct Case {
    int64_t a, b, expected;
  } cases[] = {
      {3, -4, -12},
      {0, kInf, 0}, // 0 * unbounded is 0: an empty tensor stays empty
      {kInf, 0, 0},
      {-kInf, 0, 0},
      {kInf, 1, kInf},
      {kInf, 2, kInf},
      {kInf, -1, -kInf},
      {-kInf, -kInf, kInf},
      {-kInf, 3, -kInf},
      {two32, two32, kInf},
      {-two32, two32, -kInf},
      {-two32, -two32, kInf},
      {kInf / 2, 2, kInf - 1},
      {kInf / 2 + 1, 2, kInf},
      {kMin, 1, -kInf},
  };
  for (const auto &c : cases)
    EXPECT_EQ(satMul(c.a, c.b), c.expected) << "satMul(" << c.a << ", " << c.b << ")";
}

TEST(Saturating, RandomMatchesClampedExactMath) {
  std::mt19937_64 rng(0x5eed0002);
  auto clamp = [](__int128 v) -> int64_t { return v >= kInf ? kInf : v <= -kInf ? -kInf : int64_t(v); };
  for (int i = 0; i < 20000; ++i) {
    // finite operands strictly inside (-kInf, kInf)
    auto pick = [&]() {
      int64_t m = int64_t(rng() >> (1 + rng() % 63)); // in [0, 2^63)
      return (rng() & 1) ? m : -m;
    };
    int64_t a = pick(), b = pick();
    if (a == kInf || a == -kInf || b == kInf || b == -kInf) continue;
    ASSERT_EQ(satAdd(a, b), clamp(__int128(a) + b)) << a << " +sat " << b;
    ASSERT_EQ(satMul(a, b), clamp(__int128(a) * b)) << a << " *sat " << b;
  }
}

} // namespace
} // namespace sf
