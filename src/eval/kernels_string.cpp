// String ops: StringNormalizer (stop words removed, case changed). Cast to and from strings is
// Cast's own (kernels_elementwise.cpp).
#include "kernel_util.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace sf::eval::detail {
namespace {

/// ASCII case mapping: the `locale` attribute is not consulted (ONNX leaves it to the runtime;
/// letters outside ASCII keep their case).
std::string withCase(std::string s, bool upper) {
  for (char &c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x80) c = char(upper ? std::toupper(u) : std::tolower(u));
  }
  return s;
}

Result<void> stringNormalizer(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  if (!x.isString()) return errorf("X is {}, not str", shortName(x.type()));
  const Shape &shape = x.shape();
  bool twoDim = shape.size() == 2;
  if (!(shape.size() == 1 || (twoDim && shape[0] == 1)))
    return errorf("X has shape {}; [C] or [1, C] expected", shapeText(shape));
  SF_ASSIGN(std::string action, ctx.attrs().getString("case_change_action", "NONE"));
  SF_ASSIGN(int64_t caseSensitive, ctx.attrs().getInt("is_case_sensitive", 0));
  std::vector<std::string> stopwords;
  if (ctx.attrs().has("stopwords")) {
    SF_ASSIGN(stopwords, ctx.attrs().getStrings("stopwords"));
  }
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return errorf("case_change_action is '{}'; NONE, LOWER or UPPER expected", action);
  std::set<std::string> stop;
  for (const auto &w : stopwords) stop.insert(caseSensitive ? w : withCase(w, false));
  std::vector<std::string> out;
  for (const std::string &s : x.strings()) {
    if (stop.count(caseSensitive ? s : withCase(s, false))) continue;
    out.push_back(action == "NONE" ? s : withCase(s, action == "UPPER"));
  }
  // Everything dropped: one empty string, keeping the rank.
  if (out.empty()) out.push_back("");
  Shape outShape = twoDim ? Shape{1, int64_t(out.size())} : Shape{int64_t(out.size())};
  SF_ASSIGN(Tensor t, Tensor::fromStrings(outShape, std::move(out)));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerStrings(OpRegistry &r) {
  SF_TRY(setKernel(r, "StringNormalizer", stringNormalizer));
  return success();
}

} // namespace sf::eval::detail
