// The text-form parser (see docs/TEXT_FORMAT.md): recursive descent over characters; dims and
// shapes go to the dim parser. Every error carries line:column.
#include "shapeflow/ir/text.h"

#include "shapeflow/dim/parse.h"

#include <charconv>
#include <map>
#include <set>

namespace sf {
namespace {

constexpr int kMaxGraphDepth = 64;

bool isNameChar(char c) { return std::isalnum(uint8_t(c)) || c == '_' || c == '.'; }
bool isIdentStart(char c) { return std::isalpha(uint8_t(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(uint8_t(c)) || c == '_'; }

std::string_view trim(std::string_view t) {
  while (!t.empty() && std::isspace(uint8_t(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(uint8_t(t.back()))) t.remove_suffix(1);
  return t;
}

std::optional<int64_t> parseInt(std::string_view t) {
  int64_t v;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size() || t.empty()) return std::nullopt;
  return v;
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

struct PendingInput {
  std::string name; // "" for an absent input
  size_t pos;
};
struct PendingNode {
  uint32_t id;
  std::vector<PendingInput> inputs;
};

class TextParser {
public:
  explicit TextParser(std::string_view text) : s_(text) {}

  Result<Graph> file() {
    Graph root;
    root.context = makeExprContext();
    ExprScope scope(root.context);
    table_ = &root.symbols;
    std::set<std::string> declared;
    for (;;) {
      skip();
      if (atWord("symbol")) {
        SF_TRY(symbolDecl(declared));
      } else if (atWord("opset")) {
        SF_TRY(opsetDecl());
      } else {
        break;
      }
    }
    skip();
    if (!atWord("graph")) return fail(pos_, "expected 'graph'");
    SF_ASSIGN(GraphPtr g, graphDef());
    skip();
    if (pos_ != s_.size()) return fail(pos_, "unexpected text after the graph");
    SymbolTable symbols = std::move(root.symbols);
    std::shared_ptr<ExprContext> context = root.context;
    root = std::move(*g);
    root.symbols = std::move(symbols);
    root.context = std::move(context);
    auto ok = root.verify();
    if (!ok.ok()) return makeError("invalid graph: " + ok.error().message);
    return root;
  }

private:
  // ---- characters ----
  Error fail(size_t at, const std::string &what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') ++line, col = 1;
      else ++col;
    }
    return makeError(std::to_string(line) + ":" + std::to_string(col) + ": " + what);
  }
  size_t skipFrom(size_t p) const {
    while (p < s_.size()) {
      if (std::isspace(uint8_t(s_[p]))) {
        ++p;
      } else if (s_[p] == '#') {
        while (p < s_.size() && s_[p] != '\n') ++p;
      } else {
        break;
      }
    }
    return p;
  }
  void skip() { pos_ = skipFrom(pos_); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool accept(char c) {
    skip();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  Result<void> expect(char c) {
    if (accept(c)) return success();
    return fail(pos_, std::string("expected '") + c + "'" + found());
  }
  std::string found() const {
    if (pos_ >= s_.size()) return ", found the end of the text";
    return std::string(", found '") + s_[pos_] + "'";
  }
  bool atWord(std::string_view w) {
    skip();
    return s_.substr(pos_, w.size()) == w &&
           (pos_ + w.size() == s_.size() || !isNameChar(s_[pos_ + w.size()]));
  }

  // ---- tokens ----
  Result<std::string> quoted() {
    size_t start = pos_;
    ++pos_; // the opening quote
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\n') return fail(start, "unterminated string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case 'x': {
        int v = 0;
        for (int k = 0; k < 2; ++k) {
          char h = pos_ < s_.size() ? s_[pos_] : '\0';
          if (!std::isxdigit(uint8_t(h))) return fail(pos_, "expected two hex digits after \\x");
          v = v * 16 + (std::isdigit(uint8_t(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++pos_;
        }
        out += char(v);
        break;
      }
      default: return fail(pos_ - 2, std::string("unknown escape '\\") + e + "'");
      }
    }
    if (pos_ >= s_.size()) return fail(start, "unterminated string");
    ++pos_;
    return out;
  }

  /// A bare name ([A-Za-z0-9_.]+) or a quoted one.
  Result<std::string> name(const char *what) {
    skip();
    if (peek() == '"') return quoted();
    size_t start = pos_;
    while (pos_ < s_.size() && isNameChar(s_[pos_])) ++pos_;
    if (pos_ == start) return fail(pos_, std::string("expected ") + what + found());
    return std::string(s_.substr(start, pos_ - start));
  }

  Result<int64_t> integer(const char *what) {
    skip();
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(uint8_t(s_[pos_]))) ++pos_;
    auto v = parseInt(s_.substr(start, pos_ - start));
    if (!v) return fail(start, std::string("expected ") + what);
    return *v;
  }

  /// A number's spelling: `3`, `-2`, `0.5`, `1e-05`, `inf`, `-inf`, `nan`.
  std::string_view numberToken() {
    size_t start = pos_;
    if (peek() == '-' || peek() == '+') ++pos_;
    if (std::isalpha(uint8_t(peek()))) {
      while (pos_ < s_.size() && std::isalpha(uint8_t(s_[pos_]))) ++pos_;
    } else {
      while (pos_ < s_.size()) {
        char c = s_[pos_];
        bool sign = (c == '-' || c == '+') && pos_ > start &&
                    (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E');
        if (!(std::isdigit(uint8_t(c)) || c == '.' || c == 'e' || c == 'E' || sign)) break;
        ++pos_;
      }
    }
    return s_.substr(start, pos_ - start);
  }

  // ---- declarations ----
  Result<void> symbolDecl(std::set<std::string> &declared) {
    pos_ += 6; // "symbol"
    skip();
    size_t at = pos_;
    if (!isIdentStart(peek())) return fail(pos_, "expected a symbol name" + found());
    while (pos_ < s_.size() && isIdentChar(s_[pos_])) ++pos_;
    std::string sym(s_.substr(at, pos_ - at));
    if (!declared.insert(sym).second) return fail(at, "symbol " + sym + " is declared twice");
    skip();
    if (std::isdigit(uint8_t(peek())) || peek() == '-') {
      size_t rangeAt = pos_;
      SF_ASSIGN(int64_t lo, integer("a range"));
      int64_t hi = lo;
      if (s_.substr(pos_, 2) == "..") {
        pos_ += 2;
        hi = kInf;
        if (std::isdigit(uint8_t(peek())) || peek() == '-') {
          SF_ASSIGN(hi, integer("the end of the range"));
        }
      }
      if (lo > hi) return fail(rangeAt, "empty range");
      auto r = table_->bound(sym, Interval{lo, hi});
      if (!r.ok()) return fail(rangeAt, r.error().message);
    } else {
      table_->named(sym);
    }
    return success();
  }

  Result<void> opsetDecl() {
    size_t at = pos_;
    pos_ += 5; // "opset"
    skip();
    std::string domain;
    if (!std::isdigit(uint8_t(peek()))) {
      SF_ASSIGN(domain, name("a domain"));
    }
    SF_ASSIGN(int64_t v, integer("an opset version"));
    if (v < 0 || v > INT32_MAX) return fail(at, "bad opset version");
    if (!opsets_.emplace(domain, int(v)).second)
      return fail(at, "opset of domain '" + domain + "' is declared twice");
    return success();
  }

  // ---- facts ----
  Error dimError(size_t start, const std::string &text, const Error &e) const {
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

  Result<PartialShape> shape() {
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

  Result<ElementType> elementType() {
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

  Result<std::vector<Dimension>> valueList() {
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

  Result<Fact> fact() {
    Fact f;
    SF_ASSIGN(f.type, elementType());
    SF_ASSIGN(f.shape, shape());
    size_t p = skipFrom(pos_);
    if (p < s_.size() && s_[p] == '=') {
      size_t q = skipFrom(p + 1);
      if (q < s_.size() && s_[q] == '[') {
        pos_ = q;
        SF_ASSIGN(auto v, valueList());
        f.value = std::move(v);
      }
    }
    return f;
  }

  // ---- attribute values ----
  Result<Tensor> tensorLiteral(ElementType t) {
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

  Result<Attribute> attrValue(bool inList) {
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

  Result<Attribute> list() {
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

  Result<Attributes> attrs() {
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

  // ---- graphs ----
  Result<void> param(Graph &g) {
    skip();
    size_t at = pos_;
    SF_ASSIGN(std::string pname, name("a parameter name"));
    SF_TRY(expect(':'));
    SF_ASSIGN(Fact f, fact());
    Attributes a;
    skip();
    if (peek() == '{') {
      SF_ASSIGN(a, attrs());
    }
    std::string nodeName = pname;
    if (accept('@')) {
      SF_ASSIGN(nodeName, name("a node name"));
    }
    auto o = g.addParameter(pname, std::move(f));
    if (!o.ok()) return fail(at, o.error().message);
    g.nodes[o->node].name = std::move(nodeName);
    g.nodes[o->node].attrs = std::move(a);
    return success();
  }

  Result<void> statement(Graph &g, std::vector<PendingNode> &pending) {
    skip();
    size_t start = pos_;
    SF_ASSIGN(std::string first, name("an output name or an op type"));
    size_t p = skipFrom(pos_);
    bool noOutputs = p < s_.size() && s_[p] == '(';
    if (p < s_.size() && s_[p] == ':') {
      size_t q = skipFrom(p + 1);
      noOutputs = q < s_.size() && std::isdigit(uint8_t(s_[q]));
    }
    struct Out {
      std::string name;
      std::optional<Fact> fact;
    };
    std::vector<Out> outs;
    std::string opName;
    size_t opAt = start;
    if (noOutputs) {
      opName = std::move(first);
    } else {
      outs.push_back({std::move(first), std::nullopt});
      for (;;) {
        if (accept(':')) {
          SF_ASSIGN(Fact f, fact());
          outs.back().fact = std::move(f);
        }
        if (!accept(',')) break;
        SF_ASSIGN(std::string n, name("an output name"));
        outs.push_back({std::move(n), std::nullopt});
      }
      SF_TRY(expect('='));
      skip();
      opAt = pos_;
      SF_ASSIGN(opName, name("an op type"));
    }
    std::optional<int> version;
    if (accept(':')) {
      SF_ASSIGN(int64_t v, integer("an opset version"));
      if (v < 0 || v > INT32_MAX) return fail(opAt, "bad opset version");
      version = int(v);
    }
    SF_TRY(expect('('));
    PendingNode node;
    if (!accept(')')) {
      for (;;) {
        skip();
        size_t at = pos_;
        std::string in;
        if (peek() != ',' && peek() != ')') {
          SF_ASSIGN(in, name("an input name"));
        }
        node.inputs.push_back({std::move(in), at});
        if (accept(',')) continue;
        SF_TRY(expect(')'));
        break;
      }
    }
    Attributes as;
    skip();
    if (peek() == '{') {
      SF_ASSIGN(as, attrs());
    }
    std::string nodeName = outs.empty() ? std::string() : outs[0].name;
    if (accept('@')) {
      SF_ASSIGN(nodeName, name("a node name"));
    }
    std::string domain, op = opName;
    if (auto dot = opName.rfind('.'); dot != std::string::npos) {
      domain = opName.substr(0, dot);
      op = opName.substr(dot + 1);
    }
    // `Parameter` and `Constant` without a domain are the IR's own nodes; spelled with the
    // default domain (`ai.onnx.Parameter`) they are ops of that name, as a model file may have.
    const bool irNode = domain.empty();
    domain = std::string(canonicalDomain(domain));
    if (op == "Parameter" && irNode)
      return fail(opAt, "a Parameter is declared in the graph's parameter list");
    std::vector<std::string> outNames;
    for (const Out &o : outs) outNames.push_back(o.name);
    auto id = g.addNode(op, std::move(nodeName), {}, std::move(outNames), std::move(as));
    if (!id.ok()) return fail(start, id.error().message);
    Node &n = g.nodes[*id];
    n.domain = std::move(domain);
    if (op == "Constant" && irNode) n.kind = NodeKind::Constant;
    if (version) n.opsetVersion = *version;
    else if (!n.isConstant()) {
      auto it = opsets_.find(n.domain);
      n.opsetVersion = it != opsets_.end() ? it->second : 0;
    }
    TensorPtr constant;
    if (n.isConstant() && !n.outputs.empty()) {
      if (auto t = n.attrs.getTensor("value"); t.ok()) {
        constant = *t;
        n.outputs[0].fact = Fact::fromTensor(constant);
      }
    }
    for (size_t s = 0; s < outs.size(); ++s)
      if (outs[s].fact)
        n.outputs[s].declared = std::make_shared<const Fact>(std::move(*outs[s].fact));
    node.id = *id;
    pending.push_back(std::move(node));
    return success();
  }

  Result<GraphPtr> graphDef() {
    if (++depth_ > kMaxGraphDepth) return fail(pos_, "graphs nested too deeply");
    pos_ += 5; // "graph"
    auto g = std::make_shared<Graph>();
    SF_ASSIGN(g->name, name("a graph name"));
    SF_TRY(expect('('));
    if (!accept(')')) {
      for (;;) {
        SF_TRY(param(*g));
        if (accept(',')) continue;
        SF_TRY(expect(')'));
        break;
      }
    }
    SF_TRY(expect('{'));
    std::vector<PendingNode> pending;
    std::vector<PendingInput> returns;
    for (;;) {
      if (accept('}')) break;
      if (pos_ >= s_.size()) return fail(pos_, "expected '}' (end of graph '" + g->name + "')");
      if (atWord("return")) {
        pos_ += 6;
        if (!accept('}')) {
          for (;;) {
            skip();
            size_t at = pos_;
            SF_ASSIGN(std::string n, name("an output name"));
            returns.push_back({std::move(n), at});
            if (accept(',')) continue;
            SF_TRY(expect('}'));
            break;
          }
        }
        break;
      }
      SF_TRY(statement(*g, pending));
    }
    // Names resolve once the whole body is known: a node may read an outlet defined below.
    auto resolve = [&](const PendingInput &in) -> Result<OutletId> {
      if (in.name.empty()) return OutletId::invalid();
      auto o = g->findOutlet(in.name);
      if (!o) return fail(in.pos, "unknown name '" + in.name + "' in graph '" + g->name + "'");
      return *o;
    };
    for (const PendingNode &n : pending) {
      for (const PendingInput &in : n.inputs) {
        SF_ASSIGN(OutletId o, resolve(in));
        auto r = g->addInput(n.id, o);
        if (!r.ok()) return fail(in.pos, r.error().message);
      }
    }
    for (const PendingInput &out : returns) {
      if (out.name.empty()) return fail(out.pos, "a graph output needs a name");
      SF_ASSIGN(OutletId o, resolve(out));
      g->outputs.push_back(o);
    }
    --depth_;
    return g;
  }

  std::string_view s_;
  size_t pos_ = 0;
  SymbolTable *table_ = nullptr;
  std::map<std::string, int> opsets_;
  int depth_ = 0;
};

} // namespace

Result<Graph> parseGraph(std::string_view text) { return TextParser(text).file(); }

} // namespace sf
