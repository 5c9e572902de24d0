// What a user says about a model's inputs before inference (`--input x=N,3,H,W`, `--dim N=1..64`
// on the command line; the same through the library and the Python module).
#include "shapeflow/infer/infer.h"

#include "shapeflow/dim/parse.h"

#include <charconv>

namespace sf {
namespace {

std::optional<int64_t> parseInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

} // namespace

Result<InputShape> parseInputShape(const std::string &spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return errorf("--input expects NAME=DIMS, got '{}'", spec);
  return InputShape{spec.substr(0, eq), spec.substr(eq + 1)};
}

Result<DimBound> parseDimBound(const std::string &spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return errorf("--dim expects SYM=LO..HI, got '{}'", spec);
  std::string name = spec.substr(0, eq), range = spec.substr(eq + 1);
  auto dots = range.find("..");
  Interval r{0, kInf};
  auto bad = [&] { return errorf("--dim expects SYM=LO..HI with integers, got '{}'", spec); };
  if (dots == std::string::npos) {
    auto v = parseInt(range);
    if (!v) return bad();
    r.lo = r.hi = *v;
  } else {
    std::string_view lo = std::string_view(range).substr(0, dots),
                     hi = std::string_view(range).substr(dots + 2);
    auto l = lo.empty() ? std::optional<int64_t>(0) : parseInt(lo);
    auto h = hi.empty() ? std::optional<int64_t>(kInf) : parseInt(hi);
    if (!l || !h) return bad();
    r = {*l, *h};
  }
  if (r.lo < 0 || r.lo > r.hi) return errorf("--dim {}: empty or negative range", spec);
  return DimBound{name, r};
}

Result<void> applyInputs(Graph &g, const InferOptions &options) {
  ExprScope scope = g.enter();
  for (const DimBound &d : options.dims)
    SF_TRY(g.symbols.setRange(d.symbol, d.range));
  for (const InputShape &in : options.inputs) {
    Outlet *target = nullptr;
    for (const OutletId &o : g.inputs)
      if (g.outlet(o).name == in.name) target = &g.outlet(o);
    if (!target) {
      std::string names;
      for (const OutletId &o : g.inputs)
        names += " " + g.outlet(o).name;
      return errorf("--input {}={}: the graph has no input '{}' (inputs:{})", in.name, in.dims,
                    in.name, names);
    }
    std::string dims = in.dims;
    if (dims.empty() || dims[0] != '[') dims = "[" + dims + "]";
    auto shape = parsePartialShape(dims, g.symbols);
    if (!shape.ok()) return shape.takeError();
    const PartialShape &declared = target->fact.shape;
    if (declared.rankIsStatic() && shape->rankIsStatic() && declared.size() != shape->size())
      return errorf("--input {}={}: input '{}' has rank {} ({})", in.name, in.dims, in.name,
                    declared.size(), declared);
    target->fact.shape = std::move(*shape);
  }
  return success();
}

} // namespace sf
