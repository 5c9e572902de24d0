// Float shape math as expressions: construction and canonical forms, f32/f64 evaluation that
// matches the runtime's per-op rounding, sound bounds, integer ops refusing floats, printing and
// parsing back.
#include "shapeflow/dim/parse.h"
#include "test_util.h"

#include <cmath>
#include <random>

namespace sf {
namespace {

using test::evalAt;
using test::Point;

#define E(x) GET(x)

class FloatExprTest : public ::testing::Test {
protected:
  SymbolTable table;
  SymbolId h = table.named("H"), w = table.named("W");
  Expr H = symbol(h), W = symbol(w);
  static Expr f32(double v) { return E(floatConstant(v, FloatPrec::F32)); }
  static Expr op(FloatOp o, Expr a, Expr b, FloatPrec p = FloatPrec::F32) {
    return E(floatOp(o, a, b, p));
  }
  static Result<double> feval(Expr e, const Point &pt) {
    return evaluateFloat(e, [&](SymbolId s) -> std::optional<int64_t> {
      auto it = pt.find(s);
      if (it == pt.end()) return std::nullopt;
      return it->second;
    });
  }
  /// torchvision's detection transform, op by op as exported (Reciprocal, then Mul by the size
  /// constant): floor(H * min(800 * (1 / min(H, W)), 1333 * (1 / max(H, W)))).
  Expr resizedH() {
    Expr r1 = op(FloatOp::Mul, op(FloatOp::Div, constant(1), E(min(H, W))), f32(800));
    Expr r2 = op(FloatOp::Mul, op(FloatOp::Div, constant(1), E(max(H, W))), f32(1333));
    Expr scale = op(FloatOp::Min, r1, r2);
    return E(roundToInt(RoundMode::Floor, op(FloatOp::Mul, H, scale)));
  }
  static int64_t resizedHRef(int64_t hh, int64_t ww) {
    float r1 = (1.0f / float(std::min(hh, ww))) * 800.0f;
    float r2 = (1.0f / float(std::max(hh, ww))) * 1333.0f;
    float s = std::min(r1, r2);
    return int64_t(std::floor(float(hh) * s));
  }
};

TEST_F(FloatExprTest, ConstantsFoldAndIntegralOnesAreIntegers) {
  EXPECT_EQ(f32(2.0), constant(2));
  EXPECT_EQ(f32(-3.0), constant(-3));
  Expr half = f32(0.5);
  EXPECT_TRUE(half->isFloat);
  EXPECT_EQ(half->kind, ExprKind::FConst);
  EXPECT_EQ(toString(half), "0.5");
  // 0.1 in f32 is not 0.1 in f64: the two constants differ and each prints its shortest form.
  EXPECT_NE(f32(0.1), E(floatConstant(0.1, FloatPrec::F64)));
  EXPECT_EQ(toString(f32(0.1)), "0.1");
  EXPECT_EQ(toString(E(floatConstant(0.1, FloatPrec::F64))), "f64(0.1)");
  // Folding happens in the op's precision: 1/3 in f32, then * 3 rounds to exactly 1.
  EXPECT_EQ(op(FloatOp::Mul, op(FloatOp::Div, constant(1), constant(3)), constant(3)), constant(1));
  EXPECT_FALSE(floatConstant(std::nan(""), FloatPrec::F32).ok());
  EXPECT_FALSE(floatConstant(1e39, FloatPrec::F32).ok()); // overflows f32
  EXPECT_FALSE(floatOp(FloatOp::Div, H, constant(0), FloatPrec::F32).ok());
}

TEST_F(FloatExprTest, CanonicalFormTable) {
  struct Case {
    const char *what;
    Expr got;
    const char *printed;
  } cases[] = {
      {"integers stay integer arithmetic", op(FloatOp::Add, H, W), "H + W"},
      {"an exact integer division is the quotient", op(FloatOp::Div, E(mul(H, W)), W), "H"},
      {"an inexact one is a float node", op(FloatOp::Div, H, constant(3)), "H / 3"},
      {"x * 1.0 is x", op(FloatOp::Mul, op(FloatOp::Div, H, constant(3)), constant(1)), "H / 3"},
      {"commutative operands are sorted", op(FloatOp::Mul, f32(0.5), H), "H * 0.5"},
      {"floor(H / 32.0) is H//32 (exact below 2^24)",
       E(roundToInt(RoundMode::Floor, op(FloatOp::Div, H, constant(32)))), "H//32"},
      {"ceil(H / 32.0) * 32.0 is integer arithmetic",
       op(FloatOp::Mul, E(roundToInt(RoundMode::Ceil, op(FloatOp::Div, H, constant(32)))),
          constant(32)),
       "32*((H - 1)//32) + 32"},
      {"trunc of a non-negative value is floor",
       E(roundToInt(RoundMode::Trunc, op(FloatOp::Mul, H, f32(0.75)))), "floor(H * 0.75)"},
      {"trunc of a maybe-negative value stays trunc",
       E(roundToInt(RoundMode::Trunc, op(FloatOp::Mul, E(sub(constant(5), H)), f32(0.75)))),
       "trunc((-H + 5) * 0.75)"},
      {"min decided by bounds", op(FloatOp::Min, op(FloatOp::Div, E(min(H, constant(10))), constant(3)), f32(4.5)),
       "min(H, 10) / 3"},
      {"f64 inside f32", op(FloatOp::Mul, op(FloatOp::Div, H, constant(3), FloatPrec::F64), f32(0.5)),
       "0.5 * f64(H / 3)"},
      {"the detection transform", resizedH(),
       "floor(H * min(800 * (1 / min(H, W)), 1333 * (1 / max(H, W))))"},
  };
  for (const Case &c : cases) EXPECT_EQ(toString(c.got), c.printed) << c.what;
}

TEST_F(FloatExprTest, IntegerArithmeticRefusesFloats) {
  Expr third = op(FloatOp::Div, H, constant(3));
  EXPECT_FALSE(add(third, H).ok());
  EXPECT_FALSE(mul(H, third).ok());
  EXPECT_FALSE(floorDiv(third, 2).ok());
  EXPECT_FALSE(mod(third, 2).ok());
  EXPECT_FALSE(min(third, H).ok());
  EXPECT_FALSE(divExact(third, H).ok());
  EXPECT_FALSE(evalAt(third, {{h, 3}}).ok()); // a float has no integer value
  // The rounded value is an integer atom again.
  Expr fl = E(roundToInt(RoundMode::Floor, op(FloatOp::Mul, H, f32(1.5))));
  EXPECT_FALSE(fl->isFloat);
  EXPECT_EQ(toString(E(add(fl, constant(1)))), "floor(H * 1.5) + 1");
}

// The resize size against the same computation in f32, over a grid of sizes including the
// ones where 800 * (1/800) is not exactly 1 in f32 arithmetic.
TEST_F(FloatExprTest, DetectionResizeMatchesF32Arithmetic) {
  Expr e = resizedH();
  int checked = 0;
  for (int64_t hh = 1; hh <= 2000; hh += 7) {
    for (int64_t ww : {1, 17, 320, 448, 799, 800, 801, 1333, 1920}) {
      auto v = evalAt(e, {{h, hh}, {w, ww}});
      ASSERT_TRUE(v.ok());
      ASSERT_EQ(*v, resizedHRef(hh, ww)) << "H=" << hh << " W=" << ww;
      ASSERT_TRUE(e->bounds.contains(*v));
      ++checked;
    }
  }
  EXPECT_GT(checked, 2000);
}

// Bounds of random float expressions contain every value the runtime computes.
TEST_F(FloatExprTest, BoundsAreSound) {
  SymbolId a = newSymbol("A", {1, 300}), b = newSymbol("B", {1, 300});
  Expr A = symbol(a), B = symbol(b);
  std::mt19937 rng(7);
  std::vector<Expr> pool{A, B, f32(0.3), f32(2.5), constant(7), op(FloatOp::Div, A, B)};
  for (int i = 0; i < 300; ++i) {
    Expr x = pool[rng() % pool.size()], y = pool[rng() % pool.size()];
    auto o = FloatOp(rng() % 6);
    auto r = floatOp(o, x, y, rng() % 4 == 0 ? FloatPrec::F64 : FloatPrec::F32);
    if (!r.ok()) continue;
    if ((*r)->size < 20) pool.push_back(*r);
    for (int64_t va : {1, 2, 3, 150, 299, 300})
      for (int64_t vb : {1, 5, 77, 300}) {
        Point pt{{a, va}, {b, vb}};
        auto v = feval(*r, pt);
        if (!v.ok()) continue;
        if ((*r)->isFloat) {
          EXPECT_LE((*r)->flo, *v) << toString(*r);
          EXPECT_GE((*r)->fhi, *v) << toString(*r);
        }
        for (RoundMode m : {RoundMode::Floor, RoundMode::Ceil, RoundMode::Trunc, RoundMode::HalfEven}) {
          auto ri = roundToInt(m, *r);
          if (!ri.ok()) continue;
          auto iv = evalAt(*ri, pt);
          ASSERT_TRUE(iv.ok()) << toString(*ri);
          EXPECT_TRUE((*ri)->bounds.contains(*iv)) << toString(*ri);
        }
      }
  }
}

// floor(a / c) in f32 equals a // c for every integer a below 2^24 (the rule the canonical form
// uses), checked on a sample.
TEST_F(FloatExprTest, FloatQuotientFloorIsIntegerFloorBelow2To24) {
  std::mt19937 rng(3);
  for (int i = 0; i < 200000; ++i) {
    int64_t a = int64_t(rng() % (1u << 24)), c = 1 + int64_t(rng() % 5000);
    float q = float(a) / float(c);
    ASSERT_EQ(int64_t(std::floor(q)), a / c) << a << " / " << c;
    ASSERT_EQ(int64_t(std::ceil(q)), (a + c - 1) / c) << a << " / " << c;
  }
}

TEST_F(FloatExprTest, PrintsAndParsesBack) {
  std::vector<Expr> exprs{
      resizedH(),
      op(FloatOp::Div, H, constant(3)),
      op(FloatOp::Mul, op(FloatOp::Div, H, constant(3), FloatPrec::F64), f32(0.5)),
      E(roundToInt(RoundMode::HalfEven, op(FloatOp::Sub, f32(0.25), op(FloatOp::Div, W, H)))),
      E(roundToInt(RoundMode::Trunc, op(FloatOp::Mul, E(sub(constant(5), H)), f32(-0.75)))),
      E(add(E(mul(constant(2), E(roundToInt(RoundMode::Ceil, op(FloatOp::Mul, H, f32(1.1)))))), W)),
      f32(1e-5),
      E(floatConstant(1.0 / 3.0, FloatPrec::F64)),
  };
  for (Expr e : exprs) {
    std::string s = toString(e);
    auto d = parseDimension(s, table);
    ASSERT_TRUE(d.ok()) << s << ": " << d.error().message;
    EXPECT_EQ(d->expr(), e) << s << " read back as " << d->toString();
  }
  EXPECT_FALSE(parseDimension("floor(H / 2.5", table).ok());
  EXPECT_FALSE(parseDimension("(H / 2.5)//2", table).ok());
}

TEST_F(FloatExprTest, OperatorsOfOneLevelPrintFlatToTheLeft) {
  // (H / 3 - W) - 0.5 needs no parentheses; H - (W - 0.5) and (H - W) * 0.5 do.
  Expr chain = op(FloatOp::Sub, op(FloatOp::Sub, op(FloatOp::Div, H, constant(3)), W), f32(0.5));
  EXPECT_EQ(toString(E(roundToInt(RoundMode::Floor, chain))), "floor(H / 3 - W - 0.5)");
  Expr right = op(FloatOp::Sub, H, op(FloatOp::Sub, W, f32(0.5)));
  EXPECT_EQ(toString(E(roundToInt(RoundMode::Floor, right))), "floor(H - (W - 0.5))");
  Expr low = op(FloatOp::Mul, op(FloatOp::Sub, H, W), f32(0.5));
  EXPECT_EQ(toString(E(roundToInt(RoundMode::Floor, low))), "floor((H - W) * 0.5)");
  // Found by fuzz_text: a chain of 240 subtractions printed 240 parentheses deep, past the
  // text form's nesting limit (200), so the printed graph did not parse back.
  Expr e = op(FloatOp::Div, H, constant(3));
  for (int i = 0; i < 240; ++i)
    e = op(FloatOp::Sub, e, i % 2 ? W : H);
  Expr d = E(roundToInt(RoundMode::Floor, e));
  std::string text = toString(d);
  EXPECT_LT(std::count(text.begin(), text.end(), '('), 4);
  auto back = parseDimension(text, table);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->expr(), d);
}

TEST_F(FloatExprTest, SubstituteRebuildsFloatNodes) {
  Expr e = resizedH();
  auto r = substitute(e, [&](SymbolId s) -> Expr { return s == h ? constant(320) : nullptr; });
  ASSERT_TRUE(r.ok());
  auto v = evalAt(*r, {{w, 448}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, resizedHRef(320, 448));
  auto both = substitute(e, [&](SymbolId s) -> Expr { return constant(s == h ? 240 : 448); });
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both, constant(resizedHRef(240, 448)));
}

} // namespace
} // namespace sf

namespace sf {
namespace {
// H in [1, inf) times a scale in [0, 800]: the product's lower bound is 0 (0 times the open end
// is 0, not NaN), so floor(H * scale) >= 0 and sizes built on it keep their bounds.
TEST(FloatExprBounds, ZeroTimesOpenEndIsZero) {
  Expr H = symbol(newSymbol("H", {1, kInf}));
  Expr scale = GET(floatOp(FloatOp::Mul, GET(floatOp(FloatOp::Div, constant(1), H, FloatPrec::F32)),
                           constant(800), FloatPrec::F32));
  Expr size = GET(roundToInt(RoundMode::Floor, GET(floatOp(FloatOp::Mul, H, scale, FloatPrec::F32))));
  EXPECT_EQ(bounds(size).lo, 0);
  EXPECT_EQ(bounds(size).hi, kInf);
}
} // namespace
} // namespace sf
