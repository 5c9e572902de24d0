// Dimension and PartialShape: the seed-000 relations (merge, compatible, sameScheme, relaxes,
// refines, broadcastMerge) as tables over static, interval, dynamic and symbolic dims; lengths,
// bounds, element counts; printing and parsing round trips.
#include "test_util.h"

namespace sf {
namespace {

class DimTest : public ::testing::Test {
protected:
  Dimension named(const std::string &name, Interval r = {0, kInf}) {
    return Dimension::symbol(table.named(name, r));
  }
  Dimension parse(std::string_view text) { return GET(parseDimension(text, table)); }
  PartialShape shape(std::string_view text) { return GET(parsePartialShape(text, table)); }
  SymbolTable table;
  const Dimension dyn = Dimension::dynamic();
};

// ---------------------------------------------------------------------------------- merge
TEST_F(DimTest, MergeTable) {
  Dimension n = named("N"), s = named("S", {1, 8});
  Dimension twoSPlus1 = parse("2*S + 1"); // bounds [3, 17]
  struct Case {
    const char *what;
    Dimension a, b;
    std::optional<Dimension> expected;
  } cases[] = {
      {"3 & 3", 3, 3, Dimension(3)},
      {"3 & 4", 3, 4, std::nullopt},
      {"0 & 0", 0, 0, Dimension(0)},
      {"{1,5} & 4", Dimension(1, 5), 4, Dimension(4)},
      {"{1,5} & 5 (edge)", Dimension(1, 5), 5, Dimension(5)},
      {"{1,5} & 6", Dimension(1, 5), 6, std::nullopt},
      {"{0,1} & {1,2}", Dimension(0, 1), Dimension(1, 2), Dimension(1)},
      {"{4,7} & {5,10}", Dimension(4, 7), Dimension(5, 10), Dimension(5, 7)},
      {"{1,5} & {6,8}", Dimension(1, 5), Dimension(6, 8), std::nullopt},
      {"{2,inf} & {0,8}", Dimension(2, -1), Dimension(-1, 8), Dimension(2, 8)},
      {"{1,10} & {10,1}", Dimension(1, 10), Dimension(10, 1), Dimension(1, 10)},
      {"? & ?", dyn, dyn, dyn},
      {"? & 3", dyn, 3, Dimension(3)},
      {"3 & ?", 3, dyn, Dimension(3)},
      {"? & {1,8}", dyn, Dimension(1, 8), Dimension(1, 8)},
      {"N & 3: the constant wins", n, 3, Dimension(3)},
      {"3 & N", 3, n, Dimension(3)},
      {"N & ?: the name stays", n, dyn, n},
      {"? & N", dyn, n, n},
      {"N & N", n, n, n},
      {"S{1..8} & 9", s, 9, std::nullopt},
      {"S{1..8} & 8", s, 8, Dimension(8)},
      {"S{1..8} & {4,10}: named, narrowed", s, Dimension(4, 10), Dimension(s.expr(), {4, 8})},
      {"{4,10} & S{1..8}", Dimension(4, 10), s, Dimension(s.expr(), {4, 8})},
      {"2*S + 1 & {1,5}", twoSPlus1, Dimension(1, 5), Dimension(twoSPlus1.expr(), {3, 5})},
      {"2*S + 1 & {18,20}", twoSPlus1, Dimension(18, 20), std::nullopt},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(Dimension::merge(c.a, c.b), c.expected);
    if (c.expected) {
      EXPECT_TRUE(c.expected->refines(c.a));
      EXPECT_TRUE(c.expected->refines(c.b));
    }
  }
}

// "keeps the more informative expression (constant > named > anonymous)"
TEST_F(DimTest, MergeKeepsTheMoreInformativeExpression) {
  Dimension n = named("N");
  Dimension anon = Dimension::symbol(newAnonymousSymbol({2, 9}));
  auto merged = Dimension::merge(n, anon);
  ASSERT_TRUE(merged.has_value());
  Dimension m = *merged;
  EXPECT_EQ(m.expr(), n.expr());
  EXPECT_EQ(m.interval(), (Interval{2, 9}));
  EXPECT_EQ(Dimension::merge(anon, n), m);
  EXPECT_EQ(m.toString(), "N");
  // Two different names: either may stay, the interval is the intersection.
  Dimension a = named("A", {0, 10}), b = named("B", {5, 20});
  auto ab = Dimension::merge(a, b);
  ASSERT_TRUE(ab.has_value());
  EXPECT_TRUE(ab->expr() == a.expr() || ab->expr() == b.expr());
  EXPECT_EQ(ab->interval(), (Interval{5, 10}));
}

// ---------------------------------------------------------------------------------- compatible
TEST_F(DimTest, CompatibleTable) {
  Dimension n = named("N"), m = named("M"), s = named("S", {1, 8});
  struct Case {
    const char *what;
    Dimension a, b;
    bool expected;
  } cases[] = {
      {"3 ~ 3", 3, 3, true},
      {"3 ~ 4", 3, 4, false},
      {"? ~ 4", dyn, 4, true},
      {"? ~ ?", dyn, dyn, true},
      {"0 ~ ?", 0, dyn, true},
      {"{1,5} ~ 4", Dimension(1, 5), 4, true},
      {"{1,5} ~ {6,8}", Dimension(1, 5), Dimension(6, 8), false},
      {"{1,5} ~ {5,8}", Dimension(1, 5), Dimension(5, 8), true},
      {"{2,inf} ~ 1", Dimension(2, -1), 1, false},
      {"S{1..8} ~ 10", s, 10, false},
      {"S{1..8} ~ 8", s, 8, true},
      {"N ~ M", n, m, true},
      {"N ~ 0", n, 0, true},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(c.a.compatible(c.b), c.expected);
    EXPECT_EQ(c.b.compatible(c.a), c.expected); // symmetric
    EXPECT_EQ(Dimension::merge(c.a, c.b).has_value(), c.expected); // compatible iff merge works
  }
}

// ---------------------------------------------------------------------------------- sameScheme
// "Both static, or both dynamic." (Only the unambiguous cases: whether 3 and 4, or {1,8} and ?,
// share a scheme is left open by the header.)
TEST_F(DimTest, SameSchemeTable) {
  struct Case {
    const char *what;
    Dimension a, b;
    bool expected;
  } cases[] = {
      {"3 3", 3, 3, true},
      {"? ?", dyn, dyn, true},
      {"3 ?", 3, dyn, false},
      {"? 3", dyn, 3, false},
      {"{1,8} 3", Dimension(1, 8), 3, false},
      {"3 {1,8}", 3, Dimension(1, 8), false},
      {"{1,8} {1,8}", Dimension(1, 8), Dimension(1, 8), true},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(c.a.sameScheme(c.b), c.expected);
  }
}

// ---------------------------------------------------------------------------------- relaxes/refines
TEST_F(DimTest, RelaxesAndRefinesTable) {
  Dimension s = named("S", {1, 8});
  struct Case {
    const char *what;
    Dimension a, b;
    bool aRelaxesB;
  } cases[] = {
      {"? relaxes 3", dyn, 3, true},
      {"3 relaxes ?", 3, dyn, false},
      {"? relaxes ?", dyn, dyn, true},
      {"3 relaxes 3", 3, 3, true},
      {"3 relaxes 4", 3, 4, false},
      {"{1,8} relaxes {2,5}", Dimension(1, 8), Dimension(2, 5), true},
      {"{2,5} relaxes {1,8}", Dimension(2, 5), Dimension(1, 8), false},
      {"{1,8} relaxes 8", Dimension(1, 8), 8, true},
      {"{1,8} relaxes 9", Dimension(1, 8), 9, false},
      {"{1,8} relaxes {1,8}", Dimension(1, 8), Dimension(1, 8), true},
      {"? relaxes {2,inf}", dyn, Dimension(2, -1), true},
      {"{2,inf} relaxes ?", Dimension(2, -1), dyn, false},
      {"{4,6} relaxes {5,9}", Dimension(4, 6), Dimension(5, 9), false},
      {"S{1..8} relaxes {2,5}", s, Dimension(2, 5), true},
      {"{2,5} relaxes S{1..8}", Dimension(2, 5), s, false},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(c.a.relaxes(c.b), c.aRelaxesB);
    EXPECT_EQ(c.b.refines(c.a), c.aRelaxesB);
  }
}

// ---------------------------------------------------------------------------------- broadcastMerge
TEST_F(DimTest, BroadcastMergeTable) {
  Dimension n = named("N");
  struct Case {
    const char *what;
    Dimension a, b;
    std::optional<Dimension> expected;
  } cases[] = {
      {"1 3", 1, 3, Dimension(3)},
      {"3 1", 3, 1, Dimension(3)},
      {"3 3", 3, 3, Dimension(3)},
      {"3 4", 3, 4, std::nullopt},
      {"1 1", 1, 1, Dimension(1)},
      {"0 1", 0, 1, Dimension(0)},
      {"0 3", 0, 3, std::nullopt},
      {"? 3", dyn, 3, Dimension(3)},
      {"3 ?", 3, dyn, Dimension(3)},
      {"? 1", dyn, 1, dyn},
      {"1 ?", 1, dyn, dyn},
      {"{2,5} 3", Dimension(2, 5), 3, Dimension(3)},
      {"{4,8} 3", Dimension(4, 8), 3, std::nullopt},
      {"{0,1} 3", Dimension(0, 1), 3, Dimension(3)},
      {"{2,5} {4,8}", Dimension(2, 5), Dimension(4, 8), Dimension(4, 5)},
      {"{2,3} {5,8}", Dimension(2, 3), Dimension(5, 8), std::nullopt},
      {"{2,5} 1", Dimension(2, 5), 1, Dimension(2, 5)},
      {"N N", n, n, n},
      {"N 1", n, 1, n},
      {"1 N", 1, n, n},
      {"N 3", n, 3, Dimension(3)},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(Dimension::broadcastMerge(c.a, c.b), c.expected);
    EXPECT_EQ(Dimension::broadcastMerge(c.b, c.a), c.expected);
  }
  auto dd = Dimension::broadcastMerge(dyn, dyn);
  ASSERT_TRUE(dd.has_value());
  EXPECT_EQ(dd->interval(), dyn.interval());
}

// ---------------------------------------------------------------------------------- lengths
TEST_F(DimTest, StaticAndLength) {
  EXPECT_TRUE(Dimension(0).isStatic());
  EXPECT_EQ(GET(Dimension(0).getLength()), 0);
  EXPECT_EQ(GET(Dimension(7).getLength()), 7);
  EXPECT_TRUE(Dimension(7, 7).isStatic());
  EXPECT_FALSE(Dimension(7, 8).isStatic());
  EXPECT_TRUE(named("N").isDynamic());
  EXPECT_TRUE(named("One", {1, 1}).isStatic()); // a symbol with a one-point range is that value
  EXPECT_EQ(named("One", {1, 1}), Dimension(1));
}

TEST_F(DimTest, GetLengthErrorNamesTheDimension) {
  struct Case {
    Dimension d;
    const char *printed;
  } cases[] = {{dyn, "?"}, {Dimension(1, 8), "?{1..8}"}, {named("N"), "N"},
               {Dimension(2, -1), "?{2..}"}};
  for (const auto &c : cases) {
    auto r = c.d.getLength();
    ASSERT_FALSE(r.ok()) << c.printed;
    EXPECT_TRUE(test::hasToken(r.error().message, c.printed)) << r.error().message;
  }
}

TEST_F(DimTest, ToShapeErrorNamesTheShape) {
  PartialShape p{1, {1, 8}, 3};
  auto r = p.toShape();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("[1,?{1..8},3]"), std::string::npos) << r.error().message;

  PartialShape q = shape("[N,3]");
  auto rq = q.toShape();
  ASSERT_FALSE(rq.ok());
  EXPECT_NE(rq.error().message.find("[N,3]"), std::string::npos) << rq.error().message;

  auto rd = PartialShape::dynamic().toShape();
  ASSERT_FALSE(rd.ok());
  EXPECT_NE(rd.error().message.find("[...]"), std::string::npos) << rd.error().message;

  EXPECT_EQ(GET(PartialShape({2, 3}).toShape()), (Shape{2, 3}));
}

TEST_F(DimTest, MinAndMaxShape) {
  PartialShape p{{1, 8}, 3, dyn, {2, -1}};
  EXPECT_EQ(p.minShape(), (Shape{1, 3, 0, 2}));
  EXPECT_EQ(p.maxShape(), (Shape{8, 3, kInf, kInf}));
  table.named("S", {1, 8});
  PartialShape q = shape("[S,2*S + 1,(S - 1)//2 + 1]");
  EXPECT_EQ(q.minShape(), (Shape{1, 3, 1}));
  EXPECT_EQ(q.maxShape(), (Shape{8, 17, 4}));
  EXPECT_EQ(PartialShape{}.minShape(), Shape{});
  EXPECT_EQ(PartialShape{}.maxShape(), Shape{});
}

// ---------------------------------------------------------------------------------- elementCount
TEST_F(DimTest, ElementCount) {
  EXPECT_EQ(GET(PartialShape({2, 3, 4}).elementCount()), Dimension(24));
  EXPECT_EQ(GET(PartialShape{}.elementCount()), Dimension(1));
  EXPECT_EQ(GET(PartialShape({1, 3, 0, 0}).elementCount()), Dimension(0));
  EXPECT_EQ(GET(PartialShape({{1, 8}, 3}).elementCount()).interval(), (Interval{3, 24}));
  EXPECT_TRUE(GET(PartialShape::dynamic().elementCount()).isDynamic());
  EXPECT_TRUE(GET(PartialShape::dynamic(2).elementCount()).isDynamic());

  // Symbolic product, printed in canonical order (symbols in order of creation).
  Dimension n = named("N"), h = named("H"), w = named("W");
  Dimension c = GET(PartialShape({n, 3, h, w}).elementCount());
  EXPECT_EQ(c.toString(), "3*N*H*W");
  EXPECT_EQ(c, GET(PartialShape({w, h, 3, n}).elementCount())); // order of dims does not matter
  EXPECT_EQ(c.expr(), parse("3*N*H*W").expr());
  EXPECT_EQ(GET(PartialShape({n, 0, h}).elementCount()), Dimension(0));
  Dimension s = named("S", {1, 8});
  EXPECT_EQ(GET(PartialShape({s, s, 2}).elementCount()).interval(), (Interval{2, 128}));
}

TEST_F(DimTest, ElementCountOverflowIsAnError) {
  const int64_t big = int64_t(1) << 32;
  EXPECT_FALSE(PartialShape({big, big}).elementCount().ok());
  EXPECT_FALSE(elementCount(Shape{big, big}).ok());
  EXPECT_EQ(GET(elementCount(Shape{big, big / 2 - 1})), big * (big / 2 - 1));
  EXPECT_FALSE(elementCount(Shape{2, -3}).ok());
  // A symbolic coefficient overflows too.
  Dimension n = named("N");
  EXPECT_FALSE(PartialShape({n, int64_t(1) << 62, 4}).elementCount().ok());
}

// ---------------------------------------------------------------------------------- arithmetic
TEST_F(DimTest, ArithmeticTable) {
  Dimension n = named("N"), m = named("M"), h = named("H"), t = named("T");
  Dimension s100 = named("P", {1, 100});
  struct Case {
    const char *what;
    Result<Dimension> got;
    std::string printed;
    Interval range;
  } cases[] = {
      {"2 + 3", Dimension(2) + Dimension(3), "5", {5, 5}},
      {"7 - 3", Dimension(7) - Dimension(3), "4", {4, 4}},
      {"6 * 7", Dimension(6) * Dimension(7), "42", {42, 42}},
      {"{1,8} + {2,3}", Dimension(1, 8) + Dimension(2, 3), "?{3..11}", {3, 11}},
      {"{1,8} * {2,3}", Dimension(1, 8) * Dimension(2, 3), "?{2..24}", {2, 24}},
      {"? + 1", dyn + Dimension(1), "?{1..}", {1, kInf}},
      {"? * 0", dyn * Dimension(0), "0", {0, 0}},
      {"{1,8} // 2", Dimension(1, 8).floorDiv(2), "?{0..4}", {0, 4}},
      {"{1,8} ceil/ 2", Dimension(1, 8).ceilDiv(2), "?{1..4}", {1, 4}},
      {"N + 1 - N", GET(n + Dimension(1)) - n, "1", {1, 1}},
      {"N * 3", n * Dimension(3), "3*N", {0, kInf}},
      {"N + M", n + m, "N + M", {0, kInf}},
      {"M + N", m + n, "N + M", {0, kInf}},
      {"N * M", n * m, "N*M", {0, kInf}},
      {"2*N // 2", GET(n * Dimension(2)).floorDiv(2), "N", {0, kInf}},
      {"H ceil/ 2", h.ceilDiv(2), "(H - 1)//2 + 1", {0, kInf}},
      {"min(T, 512)", Dimension::min(t, Dimension(512)), "min(T, 512)", {0, 512}},
      {"max(T, 512)", Dimension::max(t, Dimension(512)), "max(T, 512)", {512, kInf}},
      {"min(P{1..100}, 512)", Dimension::min(s100, Dimension(512)), "P", {1, 100}},
      {"max(P{1..100}, 512)", Dimension::max(s100, Dimension(512)), "512", {512, 512}},
      {"min({1,8}, 5)", Dimension::min(Dimension(1, 8), Dimension(5)), "?{1..5}", {1, 5}},
      {"N*M // M", GET(n * m).floorDiv(m), "N", {0, kInf}},
      {"12 // 5 (dim)", Dimension(12).floorDiv(Dimension(5)), "2", {2, 2}},
  };
  for (auto &c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_TRUE(c.got.ok()) << c.got.error().message;
    EXPECT_EQ(c.got->toString(), c.printed);
    EXPECT_EQ(c.got->interval(), c.range);
  }
}

TEST_F(DimTest, ArithmeticErrors) {
  const int64_t huge = kInf - 1;
  EXPECT_FALSE((Dimension(huge) + Dimension(2)).ok());
  EXPECT_FALSE((Dimension(int64_t(1) << 62) * Dimension(4)).ok());
  EXPECT_FALSE(Dimension(5).floorDiv(0).ok());
  EXPECT_FALSE(Dimension(5).floorDiv(-2).ok());
  EXPECT_FALSE(Dimension(5).ceilDiv(0).ok());
  EXPECT_FALSE(Dimension(5).floorDiv(Dimension(0)).ok());
  Dimension n = named("N");
  EXPECT_FALSE((GET(n * Dimension(int64_t(1) << 62)) * Dimension(4)).ok());
}

// ---------------------------------------------------------------------------------- PartialShape
TEST_F(DimTest, PartialShapeRelations) {
  const PartialShape any = PartialShape::dynamic();
  PartialShape a{1, dyn, 3}, b{1, 4, 3}, c{1, 2}, d{1, {2, 6}, 3}, e{1, {7, 9}, 3};
  EXPECT_TRUE(a.compatible(b));
  EXPECT_TRUE(b.compatible(a));
  EXPECT_FALSE(b.compatible(c)); // rank
  EXPECT_TRUE(any.compatible(c));
  EXPECT_TRUE(c.compatible(any));
  EXPECT_FALSE(d.compatible(e));
  EXPECT_EQ(PartialShape::merge(a, b), b);
  EXPECT_EQ(PartialShape::merge(a, d), d);
  EXPECT_EQ(PartialShape::merge(b, d), b);
  EXPECT_EQ(PartialShape::merge(any, c), c);
  EXPECT_EQ(PartialShape::merge(c, any), c);
  EXPECT_EQ(PartialShape::merge(any, any), any);
  EXPECT_FALSE(PartialShape::merge(b, c).has_value());
  EXPECT_FALSE(PartialShape::merge(d, e).has_value());
  PartialShape dst = a;
  EXPECT_TRUE(PartialShape::mergeInto(dst, d));
  EXPECT_EQ(dst, d);
  EXPECT_TRUE(PartialShape::mergeInto(dst, b));
  EXPECT_EQ(dst, b);

  EXPECT_TRUE(any.relaxes(b));
  EXPECT_FALSE(b.relaxes(any));
  EXPECT_TRUE(a.relaxes(b));
  EXPECT_TRUE(a.relaxes(d));
  EXPECT_TRUE(d.relaxes(b));
  EXPECT_FALSE(b.relaxes(a));
  EXPECT_FALSE(a.relaxes(c));
  EXPECT_TRUE(b.refines(a));
  EXPECT_TRUE(b.refines(any));
  EXPECT_FALSE(a.refines(b));

  EXPECT_TRUE(any.sameScheme(any));
  EXPECT_FALSE(any.sameScheme(c));
  EXPECT_TRUE(a.sameScheme(PartialShape{1, dyn, 3}));
  EXPECT_FALSE(a.sameScheme(b));
  EXPECT_FALSE(b.sameScheme(c));
  EXPECT_TRUE(PartialShape{}.sameScheme(PartialShape{}));
}

// ---------------------------------------------------------------------------------- printing
TEST_F(DimTest, PrintingTable) {
  table.named("S", {1, 8});
  Dimension anon8 = Dimension::symbol(newAnonymousSymbol({1, 8}));
  Dimension anon = Dimension::symbol(newAnonymousSymbol());
  struct Case {
    Dimension d;
    const char *printed;
  } cases[] = {
      {Dimension(3), "3"},
      {Dimension(0), "0"},
      {dyn, "?"},
      {Dimension(1, 8), "?{1..8}"},
      {Dimension(2, -1), "?{2..}"},
      {Dimension(-1, 8), "?{0..8}"},
      {named("N"), "N"},
      {parse("2*S + 1"), "2*S + 1"},
      {parse("(H - 1)//2 + 1"), "(H - 1)//2 + 1"},
      {parse("min(T, 512)"), "min(T, 512)"},
      {anon8, "?{1..8}"}, // an anonymous symbol prints as ? with its range
      {anon, "?"},
      {GET(anon8 + Dimension(1)), "?{2..9}"},
  };
  for (const auto &c : cases) EXPECT_EQ(c.d.toString(), c.printed);
  EXPECT_EQ(toString(Dimension(1, 8)), "?{1..8}");
  EXPECT_EQ(Rank(3).toString(), "3");
  EXPECT_EQ(Rank::dynamic().toString(), "?");
}

TEST_F(DimTest, ShapePrinting) {
  EXPECT_EQ(PartialShape::dynamic().toString(), "[...]");
  EXPECT_EQ(PartialShape{}.toString(), "[]");
  EXPECT_EQ(toString(PartialShape{1, dyn, {1, 8}}), "[1,?,?{1..8}]");
  EXPECT_EQ(toString(Shape{}), "[]");
  EXPECT_EQ(toString(Shape{2, 0, 7}), "[2,0,7]");
}

// ---------------------------------------------------------------------------------- parsing
TEST_F(DimTest, ShapeRoundTrips) {
  for (const char *text : {"[N,3,(H - 1)//2 + 1,?,?{1..8}]", "[]", "[...]", "[1,3,400,400]",
                           "[?{2..},?{0..8}]", "[3*N*H*W]", "[min(T, 512),2*S + 1]",
                           "[N % 4,N//2,max(N, M)]"}) {
    PartialShape p = shape(text);
    EXPECT_EQ(p.toString(), text);
    EXPECT_EQ(shape(p.toString()).toString(), text); // and once more
  }
  EXPECT_FALSE(shape("[...]").rankIsStatic());
  EXPECT_EQ(shape("[]"), PartialShape{});
  EXPECT_EQ(shape("[1,3,400,400]"), (PartialShape{1, 3, 400, 400}));
  EXPECT_EQ(shape("[?,?{1..8}]"), (PartialShape{dyn, {1, 8}}));
}

TEST_F(DimTest, DimRoundTrips) {
  for (const char *text : {"?{2..}", "min(T, 512)", "2*S + 1", "3", "0", "N", "?", "?{1..8}",
                           "(H - 1)//2 + 1", "max(N, M)", "N % 4", "3*N*H*W", "N*W", "N - 1",
                           "2*(N % 4)"})
    EXPECT_EQ(parse(text).toString(), text);
}

TEST_F(DimTest, ParseAlternativeSpellings) {
  struct Case {
    const char *text, *printed;
  } cases[] = {
      {"{1..8}", "?{1..8}"},         {"1..8", "?{1..8}"},
      {"{2..}", "?{2..}"},           {"( H-1 )//2+1", "(H - 1)//2 + 1"},
      {"min(512, T)", "min(T, 512)"}, {"1 + 2*S", "2*S + 1"},
      {"S*2 + 1", "2*S + 1"},        {"(H + 2 - 3)//2 + 1", "(H - 1)//2 + 1"},
      {"W*H*3*N", "3*N*H*W"},        {"N + 1 - N", "1"},
      {" 7 ", "7"},
  };
  parse("N"), parse("H"), parse("W"); // fix the creation order: N, H, W
  for (const auto &c : cases) EXPECT_EQ(parse(c.text).toString(), c.printed) << c.text;
}

TEST_F(DimTest, ParsedNamesAreTheTablesSymbols) {
  PartialShape p = shape("[N,N,M]");
  EXPECT_EQ(p[0], p[1]);
  EXPECT_NE(p[0], p[2]);
  ASSERT_TRUE(table.find("N").has_value());
  EXPECT_EQ(p[0].expr(), symbol(*table.find("N")));
  // A range set before use shows in the bounds.
  ASSERT_TRUE(table.bound("S", {1, 8}).ok());
  EXPECT_EQ(parse("2*S + 1").interval(), (Interval{3, 17}));
  // The parsed expression is the canonical one.
  Expr h = symbol(table.named("H"));
  Expr expected = GET(add(GET(floorDiv(GET(sub(h, constant(1))), 2)), constant(1)));
  EXPECT_EQ(parse("(H - 1)//2 + 1").expr(), expected);
  EXPECT_EQ(parse("ceil_unused + 0").toString(), "ceil_unused");
}

TEST_F(DimTest, ParseErrors) {
  for (const char *text : {"", "[N,", "[N 3]", "2*", "N %", "N % M", "[1,2", "foo(3)", "?{",
                           "?{1..", "?{a..b}", "99999999999999999999", "[1,,2]", "(N", "N)",
                           "[...", "min(N", "3 4"}) {
    auto d = parseDimension(text, table);
    auto s = parsePartialShape(text, table);
    EXPECT_FALSE(d.ok() && s.ok()) << "accepted '" << text << "'";
    if (!d.ok()) {
      EXPECT_FALSE(d.error().message.empty());
    }
  }
  EXPECT_FALSE(parsePartialShape("N", table).ok()); // a dim is not a shape
  EXPECT_FALSE(parseDimension("[N]", table).ok());  // and a shape is not a dim
}

} // namespace
} // namespace sf
