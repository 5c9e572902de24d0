// The text-form parser (text_parser.h), continued: facts (element type, shape, value) and
// attribute values (numbers, strings, tensors, types, graphs, lists).
#include "text_parser.h"

#include "shapeflow/dim/parse.h"

namespace sf::text_detail {

namespace {

std::string_view trim(std::string_view t) {
  while (!t.empty() && std::isspace(uint8_t(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(uint8_t(t.back()))) t.remove_suffix(1);
  return t;
}

/// The dim parser is recursive: hostile nesting must not reach it.
constexpr int kMaxDimNesting = 200;

bool nestedTooDeeply(std::string_view t) {
  int depth = 0;
  for (char c : t) {
    if (c == '(' && ++depth > kMaxDimNesting) return true;
    if (c == ')') --depth;
  }
  return false;
}

/// An element of a fact's value: like a dim, but it may be negative (`-1`, `1 - N`, `?{-4..}`).
Result<Dimension> parseValueElement(std::string_view t, SymbolTable &table) {
  t = trim(t);
  if (auto v = parseInt(t)) return Dimension::constantValue(*v);
  if (t == "?") return Dimension::dynamic();
  if (t.size() >= 3 && t.substr(0, 2) == "?{" && t.back() == '}') {
    std::string_view inner = t.substr(2, t.size() - 3);
    auto dots = inner.find("..");
    if (dots == std::string_view::npos) return makeError("expected '..' in '" + std::string(t) + "'");
    std::string_view lo = trim(inner.substr(0, dots)), hi = trim(inner.substr(dots + 2));
    auto l = lo.empty() ? std::optional<int64_t>(-kInf) : parseInt(lo);
    auto h = hi.empty() ? std::optional<int64_t>(kInf) : parseInt(hi);
    if (!l || !h || *l > *h) return makeError("bad interval '" + std::string(t) + "'");
    return Dimension::fromInterval({*l, *h});
  }
  // The dim parser makes tensor dims, which are clamped to >= 0 (so `1 - N` would become 0).
  // Parse the expression shifted far up and shift it back to keep its exact form and bounds.
  constexpr int64_t kShift = int64_t(1) << 62;
  auto shifted = parseDimension("(" + std::string(t) + ") + " + std::to_string(kShift), table);
  if (shifted.ok() && shifted->expr()) {
    auto e = sub(shifted->expr(), constant(kShift));
    if (e.ok()) return Dimension(*e, Interval{-kInf, kInf});
  }
  return parseDimension(t, table);
}

} // namespace

Error TextParser::dimError(size_t start, const std::string &text, const Error &e) const {
  // The dim parser says `cannot parse '<text>' at column K: what`.
  const std::string &m = e.message;
  auto c = m.find("at column ");
  if (c != std::string::npos) {
    size_t k = 0, i = c + 10;
    while (i < m.size() && std::isdigit(uint8_t(m[i]))) k = k * 10 + size_t(m[i++] - '0');
    auto colon = m.find(": ", i);
    std::string what = colon == std::string::npos ? m : m.substr(colon + 2);
    return fail(start + (k ? k - 1 : 0), "in '" + text + "': " + what);
  }
  return fail(start, m);
}

Result<PartialShape> TextParser::shape() {
  skip();
  size_t start = pos_;
  if (peek() != '[') return fail(pos_, "expected '[' (a shape)" + found());
  auto close = s_.find(']', pos_);
  if (close == std::string_view::npos) return fail(start, "unterminated shape");
  std::string text(s_.substr(start, close + 1 - start));
  if (nestedTooDeeply(text)) return fail(start, "a dimension is nested too deeply");
  auto p = parsePartialShape(text, *table_);
  if (!p.ok()) return dimError(start, text, p.error());
  pos_ = close + 1;
  return *p;
}

Result<ElementType> TextParser::elementType() {
  skip();
  size_t at = pos_;
  if (peek() == '?') {
    ++pos_;
    return ElementType::Undefined;
  }
  while (pos_ < s_.size() && std::isalnum(uint8_t(s_[pos_]))) ++pos_;
  std::string_view word = s_.substr(at, pos_ - at);
  auto t = parseElementType(word);
  if (!t || word == "undefined")
    return fail(at, word.empty() ? "expected an element type" + found()
                                 : "unknown element type '" + std::string(word) + "'");
  return *t;
}

Result<std::vector<Dimension>> TextParser::valueList() {
  size_t start = pos_;
  ++pos_; // '['
  std::vector<Dimension> out;
  int depth = 0;
  size_t elemStart = pos_;
  for (; pos_ < s_.size(); ++pos_) {
    char c = s_[pos_];
    if (c == '(' || c == '{') ++depth;
    else if ((c == ')' || c == '}') && depth > 0) --depth;
    else if (depth == 0 && (c == ',' || c == ']')) {
      std::string_view elem = s_.substr(elemStart, pos_ - elemStart);
      if (c == ']' && out.empty() && trim(elem).empty()) {
        ++pos_;
        return out;
      }
      size_t at = skipFrom(elemStart);
      if (trim(elem).empty()) return fail(at, "expected a value element");
      if (nestedTooDeeply(elem)) return fail(at, "a value element is nested too deeply");
      auto d = parseValueElement(elem, *table_);
      if (!d.ok()) return fail(at, "bad value element: " + d.error().message);
      out.push_back(*d);
      elemStart = pos_ + 1;
      if (c == ']') {
        ++pos_;
        return out;
      }
    } else if (c == '\n') {
      break;
    }
  }
  return fail(start, "unterminated value list");
}

Result<Fact> TextParser::fact() {
  Fact f;
  SF_ASSIGN(f.type, elementType());
  SF_ASSIGN(f.shape, shape());
  size_t p = skipFrom(pos_);
  if (p < s_.size() && s_[p] == '=') {
    size_t q = skipFrom(p + 1);
    if (q < s_.size() && s_[q] == '[') {
      pos_ = q;
      SF_ASSIGN(auto v, valueList());
      // As many elements as the shape has (a value is of rank 0 or 1).
      if (f.shape.rankIsStatic() && f.shape.size() <= 1) {
        const Dimension n = f.shape.size() == 0 ? Dimension(1) : f.shape[0];
        if (n.isStatic() && n.length() != int64_t(v.size()))
          return fail(q, fmt::format("the value has {} elements for a shape of {}", v.size(), n.length()));
      }
      f.value = std::move(v);
    }
  }
  return f;
}

Result<Tensor> TextParser::tensorLiteral(ElementType t) {
  skip();
  size_t start = pos_;
  if (!accept('[')) return fail(pos_, "expected '[' (a tensor shape)" + found());
  Shape shape;
  if (!accept(']')) {
    for (;;) {
      SF_ASSIGN(int64_t d, integer("a static dimension"));
      if (d < 0) return fail(pos_, "negative dimension in a tensor shape");
      shape.push_back(d);
      if (accept(',')) continue;
      SF_TRY(expect(']'));
      break;
    }
  }
  skip();
  size_t dataAt = pos_;
  if (accept('<')) {
    SF_ASSIGN(int64_t n, integer("an element count"));
    skip();
    if (!atWord("elements")) return fail(pos_, "expected 'elements'");
    pos_ += 8;
    SF_TRY(expect('>'));
    auto r = Tensor::withoutData(t, shape);
    if (!r.ok()) return fail(start, r.error().message);
    if (r->elementCount() != n)
      return fail(dataAt, "tensor of shape " + toString(shape) + " has " +
                              std::to_string(r->elementCount()) + " elements, not " +
                              std::to_string(n));
    return r;
  }
  std::vector<std::string> elems;
  bool quotedElems = false, bareElems = false;
  auto element = [&]() -> Result<void> {
    skip();
    if (peek() == '"') {
      SF_ASSIGN(std::string s, quoted());
      elems.push_back(std::move(s));
      quotedElems = true;
      return success();
    }
    size_t b = pos_;
    while (pos_ < s_.size() && (isNameChar(s_[pos_]) || s_[pos_] == '-' || s_[pos_] == '+'))
      ++pos_;
    if (pos_ == b) return fail(pos_, "expected a tensor element" + found());
    elems.emplace_back(s_.substr(b, pos_ - b));
    bareElems = true;
    return success();
  };
  if (accept('[')) {
    if (!accept(']')) {
      for (;;) {
        SF_TRY(element());
        if (accept(',')) continue;
        SF_TRY(expect(']'));
        break;
      }
    }
  } else if (shape.empty()) {
    SF_TRY(element());
  } else {
    return fail(pos_, "expected '[' (the elements) or '<N elements>'" + found());
  }
  if (t == ElementType::String ? bareElems : quotedElems)
    return fail(dataAt, t == ElementType::String ? "string elements must be quoted"
                                                 : "numeric elements must not be quoted");
  auto r = Tensor::fromText(t, shape, elems);
  if (!r.ok()) return fail(dataAt, r.error().message);
  return r;
}

Result<Attribute> TextParser::attrValue(bool inList) {
  skip();
  size_t at = pos_;
  char c = peek();
  if (c == '"') {
    SF_ASSIGN(std::string s, quoted());
    return Attribute(std::move(s));
  }
  if (c == '[') {
    if (inList) return fail(at, "lists of lists are not attribute values");
    return list();
  }
  if (atWord("graph")) {
    SF_ASSIGN(GraphPtr g, graphDef());
    return Attribute(std::move(g));
  }
  if (atWord("type")) {
    pos_ += 4;
    SF_ASSIGN(Fact f, fact());
    return Attribute(TypePtr(std::make_shared<const Fact>(std::move(f))));
  }
  if (std::isalpha(uint8_t(c))) {
    size_t e = pos_;
    while (e < s_.size() && std::isalnum(uint8_t(s_[e]))) ++e;
    std::string_view word = s_.substr(pos_, e - pos_);
    auto t = parseElementType(word);
    if (t && skipFrom(e) < s_.size() && s_[skipFrom(e)] == '[') {
      if (*t == ElementType::Undefined) return fail(at, "a tensor needs an element type");
      pos_ = e;
      SF_ASSIGN(Tensor tensor, tensorLiteral(*t));
      return Attribute(std::move(tensor));
    }
  }
  if (std::isdigit(uint8_t(c)) || c == '-' || c == '+' || c == '.' || std::isalpha(uint8_t(c))) {
    std::string_view tok = numberToken();
    bool isFloat = tok.find_first_of(".eEin") != std::string_view::npos;
    if (!isFloat) {
      auto v = parseInt(tok[0] == '+' ? tok.substr(1) : tok);
      if (!v) return fail(at, "bad integer '" + std::string(tok) + "'");
      return Attribute(*v);
    }
    double v;
    std::string_view body = tok[0] == '+' ? tok.substr(1) : tok;
    auto r = std::from_chars(body.data(), body.data() + body.size(), v);
    if (r.ec != std::errc() || r.ptr != body.data() + body.size())
      return fail(at, "bad number '" + std::string(tok) + "'");
    return Attribute(v);
  }
  return fail(at, "expected an attribute value" + found());
}

Result<Attribute> TextParser::list() {
  size_t at = pos_;
  ++pos_; // '['
  if (accept(']')) return Attribute(std::vector<int64_t>{});
  std::vector<Attribute> items;
  for (;;) {
    SF_ASSIGN(Attribute a, attrValue(true));
    items.push_back(std::move(a));
    if (accept(',')) continue;
    SF_TRY(expect(']'));
    break;
  }
  auto all = [&](auto pred) { return std::all_of(items.begin(), items.end(), pred); };
  auto is = [](AttributeKind k) { return [k](const Attribute &a) { return a.kind() == k; }; };
  if (all(is(AttributeKind::Int))) {
    std::vector<int64_t> v;
    for (auto &a : items) v.push_back(*a.get<int64_t>());
    return Attribute(std::move(v));
  }
  if (all([](const Attribute &a) {
        return a.kind() == AttributeKind::Int || a.kind() == AttributeKind::Float;
      })) {
    std::vector<double> v;
    for (auto &a : items)
      v.push_back(a.kind() == AttributeKind::Int ? double(*a.get<int64_t>()) : *a.get<double>());
    return Attribute(std::move(v));
  }
  if (all(is(AttributeKind::String))) {
    std::vector<std::string> v;
    for (auto &a : items) v.push_back(std::move(*a.get<std::string>()));
    return Attribute(std::move(v));
  }
  if (all(is(AttributeKind::Tensor))) {
    std::vector<TensorPtr> v;
    for (auto &a : items) v.push_back(*a.get<TensorPtr>());
    return Attribute(std::move(v));
  }
  if (all(is(AttributeKind::Graph))) {
    std::vector<GraphPtr> v;
    for (auto &a : items) v.push_back(*a.get<GraphPtr>());
    return Attribute(std::move(v));
  }
  if (all(is(AttributeKind::Type))) {
    std::vector<Fact> v;
    for (auto &a : items)
      v.push_back(**a.get<TypePtr>());
    return Attribute(std::move(v));
  }
  return fail(at, "a list mixes kinds of values");
}

Result<Attributes> TextParser::attrs() {
  Attributes out;
  SF_TRY(expect('{'));
  if (accept('}')) return out;
  for (;;) {
    skip();
    size_t at = pos_;
    SF_ASSIGN(std::string n, name("an attribute name"));
    SF_TRY(expect('='));
    SF_ASSIGN(Attribute a, attrValue(false));
    if (out.has(n)) return fail(at, "attribute '" + n + "' is given twice");
    out.set(std::move(n), std::move(a));
    if (accept(',')) continue;
    SF_TRY(expect('}'));
    return out;
  }
}

} // namespace sf::text_detail
