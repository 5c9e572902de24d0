// Behaviour of Result<T>, Result<void>, SF_TRY and SF_ASSIGN: errors propagate unchanged, the
// expression is evaluated once, values are moved (move-only types work).
#include "shapeflow/support/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace sf {
namespace {

Result<int> parsePositive(int v) {
  if (v <= 0) return makeError("not positive: " + std::to_string(v));
  return v;
}

Result<void> checkEven(int v) {
  if (v % 2) return makeError("odd: " + std::to_string(v));
  return success();
}

TEST(Result, ValueAndError) {
  Result<int> ok = 42;
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(bool(ok));
  EXPECT_EQ(ok.value(), 42);
  EXPECT_EQ(*ok, 42);
  EXPECT_EQ(ok.valueOr(7), 42);

  Result<int> bad = makeError("boom");
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(bool(bad));
  EXPECT_EQ(bad.error().message, "boom");
  EXPECT_EQ(bad.valueOr(7), 7);
  EXPECT_EQ(bad.takeError().message, "boom");
}

TEST(Result, ConvertingConstructor) {
  Result<std::string> s = "text"; // const char* converts to T
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "text");
  EXPECT_EQ(s->size(), 4u);
  Result<int64_t> wide = 3; // int converts to int64_t
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(*wide, 3);
}

// The explicit bool conversion tells success, not the value: a Result<bool> holding false is ok.
TEST(Result, BoolConversionIsSuccessNotValue) {
  Result<bool> r = false;
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(bool(r));
  EXPECT_FALSE(*r);
}

TEST(Result, VoidResult) {
  Result<void> ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(success().ok());
  Result<void> bad = makeError("nope");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "nope");
  EXPECT_EQ(bad.takeError().message, "nope");
}

TEST(Result, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 5);
}

TEST(Result, MutableAccess) {
  Result<std::vector<int>> r = std::vector<int>{1, 2};
  r->push_back(3);
  (*r)[0] = 9;
  EXPECT_EQ(*r, (std::vector<int>{9, 2, 3}));
}

// ---- SF_TRY ----
Result<int> tryVoid(int v, int *reached) {
  SF_TRY(checkEven(v));
  ++*reached;
  return v / 2;
}

Result<std::string> tryValue(int v, int *reached) {
  SF_TRY(parsePositive(v)); // a Result<int> works too; its value is dropped
  ++*reached;
  return std::string("fine");
}

Result<void> tryInVoidFunction(int v) {
  SF_TRY(checkEven(v));
  SF_TRY(parsePositive(v));
  return success();
}

TEST(SfTry, PassesThroughOnSuccess) {
  int reached = 0;
  auto r = tryVoid(4, &reached);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 2);
  EXPECT_EQ(reached, 1);
}

TEST(SfTry, ReturnsTheErrorUnchanged) {
  int reached = 0;
  auto r = tryVoid(3, &reached);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "odd: 3");
  EXPECT_EQ(reached, 0);

  auto s = tryValue(-2, &reached);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "not positive: -2");
  EXPECT_EQ(reached, 0);
  ASSERT_TRUE(tryValue(2, &reached).ok());
  EXPECT_EQ(reached, 1);
}

TEST(SfTry, WorksInResultVoidFunctions) {
  EXPECT_TRUE(tryInVoidFunction(4).ok());
  EXPECT_EQ(tryInVoidFunction(3).error().message, "odd: 3");
  EXPECT_EQ(tryInVoidFunction(-4).error().message, "not positive: -4");
}

int gCalls = 0;
Result<int> counted(int v) {
  ++gCalls;
  return parsePositive(v);
}

Result<int> tryCounted(int v) {
  SF_TRY(counted(v));
  return 0;
}

TEST(SfTry, EvaluatesTheExpressionOnce) {
  gCalls = 0;
  (void)tryCounted(1);
  EXPECT_EQ(gCalls, 1);
  gCalls = 0;
  (void)tryCounted(-1);
  EXPECT_EQ(gCalls, 1);
}

// An if without braces around SF_TRY must still parse as one statement.
Result<int> tryInIf(bool check, int v) {
  if (check)
    SF_TRY(checkEven(v));
  else
    return -1;
  return v;
}

TEST(SfTry, IsASingleStatement) {
  EXPECT_EQ(*tryInIf(true, 2), 2);
  EXPECT_FALSE(tryInIf(true, 3).ok());
  EXPECT_EQ(*tryInIf(false, 3), -1);
}

// ---- SF_ASSIGN ----
Result<int> sumOfTwo(int a, int b) {
  SF_ASSIGN(int x, parsePositive(a));
  SF_ASSIGN(auto y, parsePositive(b)); // two on different lines: distinct temporaries
  return x + y;
}

TEST(SfAssign, DeclaresFromValue) {
  auto r = sumOfTwo(2, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 5);
}

TEST(SfAssign, ReturnsFirstError) {
  EXPECT_EQ(sumOfTwo(-1, 3).error().message, "not positive: -1");
  EXPECT_EQ(sumOfTwo(1, -3).error().message, "not positive: -3");
  EXPECT_EQ(sumOfTwo(-1, -3).error().message, "not positive: -1");
}

Result<int> assignExisting(int a) {
  int x = 100;
  SF_ASSIGN(x, parsePositive(a)); // assigns to an existing variable
  return x;
}

TEST(SfAssign, AssignsToExistingVariable) {
  EXPECT_EQ(*assignExisting(7), 7);
  EXPECT_FALSE(assignExisting(0).ok());
}

Result<std::unique_ptr<int>> makeBox(int v) {
  if (v < 0) return makeError("negative box");
  return std::make_unique<int>(v);
}

Result<int> unbox(int v) {
  SF_ASSIGN(std::unique_ptr<int> p, makeBox(v)); // moves a move-only value
  return *p + 1;
}

TEST(SfAssign, MovesMoveOnlyValues) {
  EXPECT_EQ(*unbox(4), 5);
  EXPECT_EQ(unbox(-4).error().message, "negative box");
}

Result<void> assignInVoid(int v, int *out) {
  SF_ASSIGN(*out, parsePositive(v));
  return success();
}

TEST(SfAssign, WorksInResultVoidFunctions) {
  int out = 0;
  EXPECT_TRUE(assignInVoid(6, &out).ok());
  EXPECT_EQ(out, 6);
  auto r = assignInVoid(-6, &out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "not positive: -6");
  EXPECT_EQ(out, 6);
}

Result<int> assignCounted(int v) {
  SF_ASSIGN(int x, counted(v));
  return x;
}

TEST(SfAssign, EvaluatesTheExpressionOnce) {
  gCalls = 0;
  (void)assignCounted(3);
  EXPECT_EQ(gCalls, 1);
  gCalls = 0;
  (void)assignCounted(-3);
  EXPECT_EQ(gCalls, 1);
}

} // namespace
} // namespace sf
