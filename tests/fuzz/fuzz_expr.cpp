// libFuzzer harness: the dimension algebra and its parser. The fuzzer's bytes drive a random
// expression tree (tests/dim/expr_world.h) over bounded symbols; the canonical expression built
// from it must evaluate like the naive tree at points in range and lie within its bounds, the
// mirrored tree (commutative operands swapped) must give the same node, its printed form must
// parse back to it, and merge must be commutative. Leftover bytes go to the dim parser as text.
// Build and run: scripts/fuzz.sh.
#include "../dim/expr_world.h"

#include "shapeflow/dim/dimension.h"
#include "shapeflow/dim/parse.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// Stops the fuzzer with the property that failed (libFuzzer keeps the input).
[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "property violated: %s\n", what.c_str());
  std::abort();
}

struct Bytes {
  FuzzedDataProvider &p;
  int64_t between(int64_t lo, int64_t hi) { return p.ConsumeIntegralInRange<int64_t>(lo, hi); }
  bool chance(int percent) { return between(0, 99) < percent; }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sf;
  using namespace sf::test;
  auto context = makeExprContext(); // every input starts from nothing, and frees what it made
  ExprScope scope(context);
  FuzzedDataProvider provider(data, size);
  Bytes src{provider};
  ExprWorld world;
  TreeP t = world.random(src, int(src.between(0, 5)));
  auto e = ExprWorld::build(t);
  if (e.ok()) {
    Interval b = bounds(*e);
    for (int j = 0; j < 4; ++j) {
      Point p = world.randomPoint(src);
      auto want = ExprWorld::naive(t, p);
      if (!want) continue;
      if (!b.contains(*want))
        fail(ExprWorld::print(t) + " = " + std::to_string(*want) + " outside " + toString(b));
      auto got = evaluate(*e, [&](SymbolId s) -> std::optional<int64_t> {
        auto it = p.find(s); // a capped expression's fresh symbol has no value
        return it == p.end() ? std::nullopt : std::optional<int64_t>(it->second);
      });
      if (got.ok() && *got != *want)
        fail(ExprWorld::print(t) + " -> " + toString(*e) + " = " + std::to_string(*got) +
             ", the tree gives " + std::to_string(*want));
      // Evaluating the canonical form may overflow where the tree does not (A*C^26*(A//3) at
      // A = 0 multiplies C^26 first): it then has no value, which keeps facts loose, not wrong.
      if (!got.ok() && !(*e)->hasAnonymous &&
          got.error().message.find("overflow") == std::string::npos)
        fail(toString(*e) + ": " + got.error().message);
    }
    auto mirrored = ExprWorld::build(ExprWorld::mirror(t));
    if (!mirrored.ok() || *mirrored != *e) fail("mirror of " + ExprWorld::print(t) + " differs");
    if (!(*e)->hasAnonymous && !isConst(*e)) {
      auto parsed = parseDimension(toString(*e), world.table);
      if (!parsed.ok()) fail(toString(*e) + " does not parse: " + parsed.error().message);
      if (!parsed->isStatic() && parsed->expr() != simplifyClamps(*e))
        fail(toString(*e) + " parses back as " + parsed->toString());
    }
    Dimension d(*e), other = Dimension::fromInterval({src.between(0, 8), src.between(8, 20)});
    auto ab = Dimension::merge(d, other), ba = Dimension::merge(other, d);
    if (ab.has_value() != ba.has_value() || (ab && ab->interval() != ba->interval()))
      fail("merge of " + d.toString() + " and " + other.toString() + " is not commutative");
  }
  // The rest as text for the dim and shape parsers: anything may come, nothing may crash.
  std::string text = provider.ConsumeRemainingBytesAsString();
  (void)parseDimension(text, world.table);
  (void)parsePartialShape(text, world.table);
  return 0;
}
