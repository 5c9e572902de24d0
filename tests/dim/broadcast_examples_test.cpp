// Broadcast rules for elementwise operations (OpenVINO's): every numpy, PDPD and bidirectional
// example verbatim through broadcastShapes, including the failing ones, whose errors must name the
// clashing dims; then the dynamic rules documented in include/shapeflow/dim/broadcast.h, one test
// each.
#include "test_util.h"
#include <set>

namespace sf {
namespace {

using test::namesClash;

PartialShape S(std::initializer_list<int64_t> dims) { return PartialShape(Shape(dims)); }
const PartialShape kScalar = PartialShape{};

struct Example {
  const char *quote; // the line quoted
  PartialShape a, b;
  BroadcastSpec spec;
  std::optional<PartialShape> expected; // nullopt: "broadcast won't happen"
  const char *clashA = "";              // the clashing dims an error must name
  const char *clashB = "";
};

void check(const Example &e) {
  SCOPED_TRACE(e.quote);
  auto r = broadcastShapes(e.a, e.b, e.spec);
  if (e.expected) {
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, *e.expected);
    EXPECT_EQ(r->toString(), e.expected->toString());
  } else {
    ASSERT_FALSE(r.ok()) << "broadcast to " << r->toString();
    EXPECT_TRUE(namesClash(r.error().message, e.a, e.b, e.clashA, e.clashB));
  }
}

const BroadcastSpec kNumpy{BroadcastKind::Numpy, -1};
const BroadcastSpec kBidi{BroadcastKind::Bidirectional, -1};
BroadcastSpec pdpd(int64_t axis = -1) { return {BroadcastKind::Pdpd, axis}; }

// "Numpy examples"
TEST(NumpyBroadcast, Examples) {
  const Example examples[] = {
      {"A: Shape(,) -> scalar B: Shape(,) -> scalar Result: Shape(,) -> scalar", kScalar, kScalar,
       kNumpy, kScalar},
      {"A: Shape(2, 3) B: Shape(   1) Result: Shape(2, 3)", S({2, 3}), S({1}), kNumpy, S({2, 3})},
      {"A: Shape(   3) B: Shape(2, 3) Result: Shape(2, 3)", S({3}), S({2, 3}), kNumpy, S({2, 3})},
      {"A: Shape(2, 3, 5) B: Shape(,) -> scalar Result: Shape(2, 3, 5)", S({2, 3, 5}), kScalar,
       kNumpy, S({2, 3, 5})},
      {"A: Shape(2, 1, 5) B: Shape(1, 4, 5) Result: Shape(2, 4, 5)", S({2, 1, 5}), S({1, 4, 5}),
       kNumpy, S({2, 4, 5})},
      {"A: Shape(   6, 5) B: Shape(2, 1, 5) Result: Shape(2, 6, 5)", S({6, 5}), S({2, 1, 5}),
       kNumpy, S({2, 6, 5})},
      {"A: Shape(2, 1, 5) B: Shape(   4, 1) Result: Shape(2, 4, 5)", S({2, 1, 5}), S({4, 1}),
       kNumpy, S({2, 4, 5})},
      {"A: Shape(3, 2, 1, 4) B: Shape(      5, 4) Result: Shape(3, 2, 5, 4)", S({3, 2, 1, 4}),
       S({5, 4}), kNumpy, S({3, 2, 5, 4})},
      {"A: Shape(   1, 5, 3) B: Shape(5, 2, 1, 3) Result: Shape(5, 2, 5, 3)", S({1, 5, 3}),
       S({5, 2, 1, 3}), kNumpy, S({5, 2, 5, 3})},
      {"A: Shape(3) B: Shape(2) Result: broadcast won't happen due to dimensions mismatch", S({3}),
       S({2}), kNumpy, std::nullopt, "3", "2"},
      {"A: Shape(3, 1, 5) B: Shape(4, 4, 5) Result: broadcast won't happen due to dimensions "
       "mismatch on the leftmost axis",
       S({3, 1, 5}), S({4, 4, 5}), kNumpy, std::nullopt, "3", "4"},
  };
  for (const auto &e : examples) check(e);
}

// Numpy broadcasting is symmetric: every example holds with A and B swapped.
TEST(NumpyBroadcast, ExamplesSwapped) {
  const std::pair<PartialShape, PartialShape> pairs[] = {
      {S({2, 3}), S({1})},          {S({3}), S({2, 3})},       {S({2, 3, 5}), kScalar},
      {S({2, 1, 5}), S({1, 4, 5})}, {S({6, 5}), S({2, 1, 5})}, {S({2, 1, 5}), S({4, 1})},
      {S({3, 2, 1, 4}), S({5, 4})}, {S({1, 5, 3}), S({5, 2, 1, 3})}};
  for (const auto &[a, b] : pairs) {
    auto ab = broadcastShapes(a, b, kNumpy), ba = broadcastShapes(b, a, kNumpy);
    ASSERT_TRUE(ab.ok() && ba.ok()) << a.toString() << " " << b.toString();
    EXPECT_EQ(*ab, *ba) << a.toString() << " " << b.toString();
  }
  EXPECT_FALSE(broadcastShapes(S({2}), S({3}), kNumpy).ok());
  EXPECT_FALSE(broadcastShapes(S({4, 4, 5}), S({3, 1, 5}), kNumpy).ok());
}

// Numpy is the default spec.
TEST(NumpyBroadcast, IsTheDefault) {
  EXPECT_EQ(GET(broadcastShapes(S({2, 1, 5}), S({4, 1}))), S({2, 4, 5}));
  EXPECT_EQ(BroadcastSpec{}.kind, BroadcastKind::Numpy);
  EXPECT_EQ(BroadcastSpec{}.axis, -1);
}

// "PDPD examples"
TEST(PdpdBroadcast, Examples) {
  const PartialShape a = S({2, 3, 4, 5});
  const Example examples[] = {
      {"A: Shape(2, 3, 4, 5) B: Shape(   3, 4) with axis = 1 Result: Shape(2, 3, 4, 5)", a,
       S({3, 4}), pdpd(1), a},
      {"A: Shape(2, 3, 4, 5) B: Shape(   3, 1) with axis = 1 Result: Shape(2, 3, 4, 5)", a,
       S({3, 1}), pdpd(1), a},
      {"A: Shape(2, 3, 4, 5) B: Shape(      4, 5) with axis=-1(default) [...] Result: Shape(2, 3, "
       "4, 5)",
       a, S({4, 5}), pdpd(-1), a},
      {"A: Shape(2, 3, 4, 5) B: Shape(      4, 5) with [...] axis=2 Result: Shape(2, 3, 4, 5)", a,
       S({4, 5}), pdpd(2), a},
      {"A: Shape(2, 3, 4, 5) B: Shape(1, 3) with axis = 0 Result: Shape(2, 3, 4, 5)", a,
       S({1, 3}), pdpd(0), a},
      {"A: Shape(2, 3, 4, 5) B: Shape(,) Result: Shape(2, 3, 4, 5)", a, kScalar, pdpd(), a},
      {"A: Shape(2, 3, 4, 5) B: Shape(         5) with axis=-1(default) [...] Result: Shape(2, 3, "
       "4, 5)",
       a, S({5}), pdpd(-1), a},
      {"A: Shape(2, 3, 4, 5) B: Shape(         5) with [...] axis = 3 Result: Shape(2, 3, 4, 5)",
       a, S({5}), pdpd(3), a},
      // B's 7 meets A's 1: numpy would broadcast A onto B there, PDPD does not.
      {"A: Shape(8, 1, 6, 1) B: Shape(   7, 1, 5) with axis = 1 Result: broadcast won't happen "
       "due to dimensions mismatch, only B to A broadcast is supported for PDPD",
       S({8, 1, 6, 1}), S({7, 1, 5}), pdpd(1), std::nullopt, "1", "7"},
  };
  for (const auto &e : examples) check(e);
}

// The default spec's axis is -1, which for PDPD means rank(A) - rank(B).
TEST(PdpdBroadcast, DefaultAxisIsMinusOne) {
  BroadcastSpec spec;
  spec.kind = BroadcastKind::Pdpd;
  EXPECT_EQ(spec.axis, -1);
  EXPECT_EQ(GET(broadcastShapes(S({2, 3, 4, 5}), S({4, 5}), spec)), S({2, 3, 4, 5}));
  EXPECT_EQ(GET(broadcastShapes(S({2, 3, 4, 5}), S({5}), spec)), S({2, 3, 4, 5}));
  // rank(A) - rank(B) = 2 puts B = (3, 4) against A's (4, 5): a mismatch.
  EXPECT_FALSE(broadcastShapes(S({2, 3, 4, 5}), S({3, 4}), spec).ok());
}

// "5. The trailing dimensions of size 1 for input B will be ignored for the consideration of
//  subsequence, such as shape(B) = (3, 1) => (3)."
TEST(PdpdBroadcast, TrailingOnesOfBAreIgnored) {
  const PartialShape a = S({2, 3, 4, 5});
  EXPECT_EQ(GET(broadcastShapes(a, S({3, 1}), pdpd(1))), a); // 1 vs 4 is not compared
  EXPECT_EQ(GET(broadcastShapes(a, S({3, 1, 1}), pdpd(1))), a);
  EXPECT_EQ(GET(broadcastShapes(a, S({2, 3, 1}), pdpd(0))), a);
  EXPECT_EQ(GET(broadcastShapes(a, S({1, 1}), pdpd(0))), a);
  // Leading or inner 1s still take part (as "B broadcasts to A" 1s); a non-1 still must match.
  EXPECT_EQ(GET(broadcastShapes(a, S({1, 4}), pdpd(1))), a);
  EXPECT_FALSE(broadcastShapes(a, S({3, 2}), pdpd(1)).ok());
  // The default axis is computed from B's full rank (as OpenVINO does): (3, 1) lands on (4, 5).
  EXPECT_FALSE(broadcastShapes(a, S({3, 1}), pdpd(-1)).ok());
}

// Rule 5 also lets the ignored trailing 1s hang past A's end: B = (3, 1) "=> (3)" fits A = (2, 3)
// at axis 1 (OpenVINO checks only the trimmed length against A).
// Regression (was a bug, fixed): broadcastShapes([2,3], [3,1], PDPD axis=1) fails with "axis 1 is out of range": the range
// check uses rank(B) before the trailing 1s are dropped.
TEST(PdpdBroadcast, TrailingOnesMayPassTheEndOfA) {
  EXPECT_EQ(GET(broadcastShapes(S({2, 3}), S({3, 1}), pdpd(1))), S({2, 3}));
  EXPECT_EQ(GET(broadcastShapes(S({2, 3, 4, 5}), S({5, 1, 1}), pdpd(3))), S({2, 3, 4, 5}));
  EXPECT_FALSE(broadcastShapes(S({2, 3}), S({3, 2}), pdpd(1)).ok()); // a non-1 may not
}

// "1. First input tensor A is of any rank, second input B has rank smaller or equal to the first
//  input."  "4. ... Except (-1) for default value, no other negative values are allowed for axis."
TEST(PdpdBroadcast, RankAndAxisRestrictions) {
  EXPECT_FALSE(broadcastShapes(S({4, 5}), S({3, 4, 5}), pdpd()).ok());
  EXPECT_FALSE(broadcastShapes(S({2, 3, 4, 5}), S({4, 5}), pdpd(-2)).ok());
  EXPECT_FALSE(broadcastShapes(S({2, 3, 4, 5}), S({4, 5}), pdpd(3)).ok()); // runs off A's end
  EXPECT_FALSE(broadcastShapes(S({2, 3, 4, 5}), S({4, 5}), pdpd(7)).ok());
  EXPECT_EQ(GET(broadcastShapes(S({4, 5}), S({4, 5}), pdpd())), S({4, 5}));
}

// "Bidirectional examples"
TEST(BidirectionalBroadcast, Examples) {
  const Example examples[] = {
      {"A: Shape(5) B: Shape(1) Result: Shape(5)", S({5}), S({1}), kBidi, S({5})},
      {"A: Shape(2, 3) B: Shape(   3) Result: Shape(2, 3)", S({2, 3}), S({3}), kBidi, S({2, 3})},
      {"A: Shape(3, 1) B: Shape(3, 4) Result: Shape(3, 4)", S({3, 1}), S({3, 4}), kBidi,
       S({3, 4})},
      {"A: Shape(3, 4) B: Shape(,) -> scalar Result: Shape(3, 4)", S({3, 4}), kScalar, kBidi,
       S({3, 4})},
      // "Output shape may not be equal to target_shape if ... target_shape contains dimensions of
      // size 1, ... target_shape rank is smaller than the rank of input tensor."
      {"A: Shape(   3, 1) B: Shape(2, 1, 6) Result: Shape(2, 3, 6)", S({3, 1}), S({2, 1, 6}), kBidi,
       S({2, 3, 6})},
  };
  for (const auto &e : examples) check(e);
}

// "3. Two corresponding dimension must have the same value, or one of them is equal to 1."
TEST(BidirectionalBroadcast, MismatchFails) {
  Example e{"rule 3", S({3, 2}), S({3, 4}), kBidi, std::nullopt, "2", "4"};
  check(e);
}

// "None broadcast: 1. Input tensors dimensions must match. 2. No implicit broadcast rule is
//  applied."
TEST(NoBroadcast, RequiresEqualShapes) {
  const BroadcastSpec none{BroadcastKind::None, -1};
  EXPECT_EQ(GET(broadcastShapes(S({2, 3}), S({2, 3}), none)), S({2, 3}));
  EXPECT_EQ(GET(broadcastShapes(kScalar, kScalar, none)), kScalar);
  // The error names the clashing dims too (broadcast.h: "Errors name the clashing dims and both
  // shapes"); it did not at first.
  Example e{"None: no implicit broadcast", S({2, 3}), S({2, 1}), none, std::nullopt, "3", "1"};
  check(e);
  EXPECT_FALSE(broadcastShapes(S({2, 3}), S({3}), none).ok()); // no implicit rank extension
  EXPECT_FALSE(broadcastShapes(S({1}), S({5}), none).ok());
  EXPECT_FALSE(broadcastShapes(S({2, 3}), S({3, 2}), none).ok());
  // Partial shapes: equal means "can be equal"; the result is what both say.
  EXPECT_EQ(GET(broadcastShapes(PartialShape{2, -1}, S({2, 3}), none)), S({2, 3}));
  EXPECT_EQ(GET(broadcastShapes(PartialShape{{1, 8}, 3}, PartialShape{{4, 10}, 3}, none)),
            (PartialShape{{4, 8}, 3}));
  EXPECT_FALSE(broadcastShapes(PartialShape{{1, 3}, 3}, PartialShape{{4, 10}, 3}, none).ok());
}

// =============================================================================================
// The dynamic rules of broadcast.h, one test each.
// =============================================================================================

class BroadcastRules : public ::testing::Test {
protected:
  Dimension named(const std::string &name, Interval r = {0, kInf}) {
    return Dimension::symbol(table.named(name, r));
  }
  SymbolTable table;
};

// "`?` against 3 -> 3"  (rule: c (static, != 1) against d -> c; d must admit 1 or c)
TEST_F(BroadcastRules, DynamicAgainstStatic) {
  EXPECT_EQ(GET(broadcastDim(Dimension::dynamic(), Dimension(3))), Dimension(3));
  EXPECT_EQ(GET(broadcastDim(Dimension(3), Dimension::dynamic())), Dimension(3));
  EXPECT_EQ(GET(broadcastShapes(PartialShape{-1, 4}, S({3, 4}))), S({3, 4}));
}

// "1 against d -> d", e.g. `N` against 1 -> N
TEST_F(BroadcastRules, OneAgainstAnything) {
  Dimension n = named("N");
  EXPECT_EQ(GET(broadcastDim(n, Dimension(1))), n);
  EXPECT_EQ(GET(broadcastDim(Dimension(1), n)), n);
  EXPECT_EQ(GET(broadcastDim(Dimension(1), Dimension::dynamic())), Dimension::dynamic());
  EXPECT_EQ(GET(broadcastDim(Dimension(2, 5), Dimension(1))), Dimension(2, 5));
  EXPECT_EQ(GET(broadcastDim(Dimension(1), Dimension(0))), Dimension(0));
  EXPECT_EQ(GET(broadcastDim(Dimension(1), Dimension(1))), Dimension(1));
  EXPECT_EQ(GET(broadcastShapes(PartialShape{n, 1}, S({1, 7}))).toString(), "[N,7]");
}

// "equal dims (same expression) -> that dim": N against N -> N
TEST_F(BroadcastRules, SameSymbol) {
  Dimension n = named("N");
  EXPECT_EQ(GET(broadcastDim(n, n)), n);
  Dimension e = Dimension(GET(add(GET(mul(constant(2), n.expr())), constant(1))));
  EXPECT_EQ(GET(broadcastDim(e, e)), e);
  EXPECT_EQ(GET(broadcastShapes(PartialShape{n, 3}, PartialShape{n, 3})).toString(), "[N,3]");
}

// "d1 against d2, both may be 1 -> max(d1, d2) when both are >= 1 (the valid cases are 1, or
//  equal)": `N` against `M` -> max(N, M)
TEST_F(BroadcastRules, TwoSymbolsThatMayBeOne) {
  Dimension n = named("N", {1, kInf}), m = named("M", {1, kInf});
  Dimension r = GET(broadcastDim(n, m));
  EXPECT_EQ(r.expr(), GET(max(n.expr(), m.expr())));
  EXPECT_EQ(r.toString(), "max(N, M)");
  EXPECT_EQ(GET(broadcastDim(m, n)), r);
  // Exact on every valid case: N = 1, M = 1, or N == M.
  SymbolId sn = n.expr()->sym, sm = m.expr()->sym;
  for (int64_t v = 1; v < 6; ++v) {
    EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, 1}, {sm, v}})), v);
    EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, v}, {sm, 1}})), v);
    EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, v}, {sm, v}})), v);
  }
}

// "... max(d1, d2)*min(d1, d2, 1) when either may be 0 (numpy broadcasts 1 against 0 to 0)".
// (The first version of the rule said max(d1, d2) here, which claims one element where numpy's
// (1,) against (0,) gives an empty tensor; found by this test, fixed in the implementation.)
TEST_F(BroadcastRules, TwoSymbolsThatMayBeOneAgainstZero) {
  Dimension n = named("N"), m = named("M");
  Dimension r = GET(broadcastDim(n, m));
  SymbolId sn = n.expr()->sym, sm = m.expr()->sym;
  ASSERT_TRUE(r.expr());
  EXPECT_TRUE(r.interval().contains(0));
  EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, 1}, {sm, 0}})), 0);
  EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, 0}, {sm, 1}})), 0);
  // Exact on every valid case, 0 included.
  for (int64_t v = 0; v < 6; ++v) {
    EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, 1}, {sm, v}})), v);
    EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, v}, {sm, 1}})), v);
    EXPECT_EQ(GET(test::evalAt(r.expr(), {{sn, v}, {sm, v}})), v);
  }
  EXPECT_EQ(GET(broadcastDim(m, n)), r);
  // Concretely: numpy's rule gives 0 for 1 against 0.
  EXPECT_EQ(GET(broadcastDim(Dimension(1), Dimension(0))), Dimension(0));
  // Nothing is recorded: either may be 1.
  EXPECT_EQ(GET(broadcastDim(n, m, &table)), r);
  EXPECT_NE(table.resolve(n), table.resolve(m));
}

// "d against a broadcast that already holds d -> that broadcast": a mask broadcast against
// the scores it shaped stays one expression instead of nesting (an encoder-decoder step's
// mask slice made a wall of nested max*min and then an unknown dim).
TEST_F(BroadcastRules, BroadcastAgainstWhatItAlreadyHolds) {
  Dimension n = named("N"), m = named("M"), k = named("K");
  Dimension r = GET(broadcastDim(n, m));
  EXPECT_EQ(GET(broadcastDim(n, r)), r);
  EXPECT_EQ(GET(broadcastDim(r, m)), r);
  EXPECT_EQ(GET(broadcastDim(GET(broadcastDim(n, r)), r)), r);
  Dimension r3 = GET(broadcastDim(r, k));
  EXPECT_EQ(GET(broadcastDim(n, r3)), r3);
  EXPECT_EQ(GET(broadcastDim(r3, r)), r3);
  EXPECT_NE(GET(broadcastDim(k, r)).expr(), r.expr()); // K is not among N, M: a new broadcast
  // Exact on every valid triple: numpy's broadcast of N, M, K, 0 included.
  SymbolId sn = n.expr()->sym, sm = m.expr()->sym, sk = k.expr()->sym;
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t c = 0; c < 4; ++c) {
        std::set<int64_t> notOne;
        for (int64_t v : {a, b, c})
          if (v != 1) notOne.insert(v);
        if (notOne.size() > 1) continue; // not broadcastable
        int64_t want = notOne.empty() ? 1 : *notOne.begin();
        EXPECT_EQ(GET(test::evalAt(GET(broadcastDim(n, r3)).expr(), {{sn, a}, {sm, b}, {sk, c}})), want);
      }
  // A dim of at least 1 drops out of the minimum (min(S, M, 1) is min(M, 1)): still found.
  Dimension s1 = named("S", {1, kInf});
  Dimension s1m = GET(broadcastDim(s1, m));
  EXPECT_EQ(GET(broadcastDim(s1, s1m)), s1m);
  EXPECT_EQ(GET(broadcastDim(s1m, m)), s1m);
  // Dims of at least 1 broadcast to their max, and the same absorption holds.
  Dimension p = named("P", {1, kInf}), q = named("Q", {1, kInf});
  Dimension pq = GET(broadcastDim(p, q));
  EXPECT_EQ(GET(broadcastDim(p, pq)), pq);
}

// "d1 against d2, one cannot be 1 -> that one (the other is 1 or equal to it)"
TEST_F(BroadcastRules, OneSideCannotBeOne) {
  Dimension n = named("N"), t = named("T", {2, 9});
  EXPECT_EQ(GET(broadcastDim(n, t)), t);
  EXPECT_EQ(GET(broadcastDim(t, n)), t);
  EXPECT_EQ(GET(broadcastDim(Dimension::dynamic(), t)), t);
  EXPECT_EQ(GET(broadcastDim(Dimension(0, 4), Dimension(3, 8))), Dimension(3, 8));
  // Nothing to record: N may still be 1.
  EXPECT_EQ(GET(broadcastDim(n, t, &table)), t);
  EXPECT_EQ(table.resolve(n), n);
}

// "dynamic rank on either side -> dynamic rank"
TEST_F(BroadcastRules, DynamicRank) {
  const PartialShape dyn = PartialShape::dynamic();
  for (BroadcastSpec spec : {kNumpy, kBidi}) {
    EXPECT_EQ(GET(broadcastShapes(dyn, S({2, 3}), spec)), dyn);
    EXPECT_EQ(GET(broadcastShapes(S({2, 3}), dyn, spec)), dyn);
    EXPECT_EQ(GET(broadcastShapes(dyn, dyn, spec)), dyn);
    EXPECT_EQ(GET(broadcastShapes(dyn, kScalar, spec)), dyn);
  }
  // PDPD: the output is A's shape, so an unknown A gives an unknown rank; an unknown B may keep A.
  EXPECT_EQ(GET(broadcastShapes(dyn, S({2, 3}), pdpd())), dyn);
  EXPECT_TRUE(GET(broadcastShapes(S({2, 3}), dyn, pdpd())).relaxes(S({2, 3})));
}

// "interval {2,5} against 3 -> 3"
TEST_F(BroadcastRules, IntervalAgainstStatic) {
  EXPECT_EQ(GET(broadcastDim(Dimension(2, 5), Dimension(3))), Dimension(3));
  EXPECT_EQ(GET(broadcastDim(Dimension(3), Dimension(2, 5))), Dimension(3));
  // An interval that may be 1 admits any static: {0,1} against 3 -> 3.
  EXPECT_EQ(GET(broadcastDim(Dimension(0, 1), Dimension(3))), Dimension(3));
  // "if d cannot be 1 then d == c": {4,8} is neither 1 nor 3.
  auto r = broadcastDim(Dimension(4, 8), Dimension(3));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(test::hasToken(r.error().message, "?{4..8}")) << r.error().message;
  EXPECT_TRUE(test::hasToken(r.error().message, "3")) << r.error().message;
}

// A symbol that cannot be 1 against a static: the table learns its value.
TEST_F(BroadcastRules, SymbolThatCannotBeOneLearnsTheStatic) {
  Dimension s = named("S", {2, 10});
  EXPECT_EQ(GET(broadcastDim(s, Dimension(3), &table)), Dimension(3));
  EXPECT_EQ(table.resolve(s), Dimension(3));
  // N may be 1: nothing to learn.
  Dimension n = named("N");
  EXPECT_EQ(GET(broadcastDim(n, Dimension(3), &table)), Dimension(3));
  EXPECT_EQ(table.resolve(n), n);
}

// "d1 against d2, neither can be 1 -> d1 == d2 (recorded when a SymbolTable is given)":
// {2,5} against {4,8} -> {4,5}
TEST_F(BroadcastRules, NeitherCanBeOne) {
  Dimension r = GET(broadcastDim(Dimension(2, 5), Dimension(4, 8)));
  EXPECT_EQ(r.interval(), (Interval{4, 5}));
  EXPECT_EQ(r, Dimension(4, 5));
  EXPECT_EQ(GET(broadcastDim(Dimension(4, 8), Dimension(2, 5))), Dimension(4, 5));
  // Disjoint and neither can be 1: a clash.
  auto bad = broadcastDim(Dimension(2, 3), Dimension(5, 8));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(test::hasToken(bad.error().message, "?{2..3}")) << bad.error().message;
  EXPECT_TRUE(test::hasToken(bad.error().message, "?{5..8}")) << bad.error().message;
}

// ... and with a SymbolTable the two symbols get equated.
TEST_F(BroadcastRules, NeitherCanBeOneEquatesSymbols) {
  Dimension a = named("A", {2, 5}), b = named("B", {4, 8});
  Dimension r = GET(broadcastDim(a, b, &table));
  EXPECT_EQ(r.interval(), (Interval{4, 5}));
  Dimension ra = table.resolve(a), rb = table.resolve(b);
  ASSERT_TRUE(ra.expr());
  EXPECT_EQ(ra.expr(), rb.expr());
  EXPECT_EQ(ra, rb);
  EXPECT_EQ(ra.interval(), (Interval{4, 5})); // the range narrowed to the intersection
  EXPECT_EQ(bounds(table.resolveSymbol(a.expr()->sym)), (Interval{4, 5}));
  EXPECT_EQ(table.resolve(r).expr(), ra.expr());
  // Through shapes too.
  Dimension c = named("C", {2, 9}), d = named("D", {3, 7});
  PartialShape out = GET(broadcastShapes(PartialShape{c, 1}, PartialShape{d, 6}, kNumpy, &table));
  EXPECT_EQ(table.resolve(c).expr(), table.resolve(d).expr());
  EXPECT_EQ(table.resolve(out)[0].interval(), (Interval{3, 7}));
  EXPECT_EQ(out[1], Dimension(6));
}

// Errors name the clashing dims and both shapes -- symbolic ones too.
TEST_F(BroadcastRules, ErrorsNameDimsAndShapes) {
  Dimension n = named("N", {2, 4});
  PartialShape a{n, 3}, b{Dimension(5), 3};
  auto r = broadcastShapes(a, b);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(namesClash(r.error().message, a, b, "N", "5"));

  PartialShape c{2, 3, 4}, d{7, 1, 4};
  auto r2 = broadcastShapes(c, d);
  ASSERT_FALSE(r2.ok());
  EXPECT_TRUE(namesClash(r2.error().message, c, d, "2", "7"));
}

} // namespace
} // namespace sf
