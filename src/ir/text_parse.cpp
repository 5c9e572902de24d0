// The text-form parser (text_parser.h): the file, tokens, declarations and graphs; facts and
// attribute values in text_parse_values.cpp.
#include "text_parser.h"

namespace sf::text_detail {

namespace {

constexpr int kMaxGraphDepth = 64;

bool isIdentStart(char c) { return std::isalpha(uint8_t(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(uint8_t(c)) || c == '_'; }

} // namespace

Result<Graph> TextParser::file() {
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

Result<std::string> TextParser::quoted() {
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
Result<std::string> TextParser::name(const char *what) {
  skip();
  if (peek() == '"') return quoted();
  size_t start = pos_;
  while (pos_ < s_.size() && isNameChar(s_[pos_])) ++pos_;
  if (pos_ == start) return fail(pos_, std::string("expected ") + what + found());
  return std::string(s_.substr(start, pos_ - start));
}

Result<int64_t> TextParser::integer(const char *what) {
  skip();
  size_t start = pos_;
  if (peek() == '-') ++pos_;
  while (pos_ < s_.size() && std::isdigit(uint8_t(s_[pos_]))) ++pos_;
  auto v = parseInt(s_.substr(start, pos_ - start));
  if (!v) return fail(start, std::string("expected ") + what);
  return *v;
}

  /// A number's spelling: `3`, `-2`, `0.5`, `1e-05`, `inf`, `-inf`, `nan`.
std::string_view TextParser::numberToken() {
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

Result<void> TextParser::symbolDecl(std::set<std::string> &declared) {
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

Result<void> TextParser::opsetDecl() {
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

Result<void> TextParser::param(Graph &g) {
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

  /// A node statement, `outs = op:version(inputs) {attrs} @name`: its node added to `g`, its
  /// inputs left in `pending` (names resolve once the whole body is read).
Result<void> TextParser::statement(Graph &g, std::vector<PendingNode> &pending) {
  skip();
  Statement st;
  st.start = pos_;
  SF_TRY(statementHead(st));
  SF_TRY(expect('('));
  PendingNode node;
  SF_TRY(statementInputs(node));
  skip();
  if (peek() == '{') {
    SF_ASSIGN(st.as, attrs());
  }
  st.nodeName = st.outs.empty() ? std::string() : st.outs[0].name;
  if (accept('@')) {
    SF_ASSIGN(st.nodeName, name("a node name"));
  }
  SF_ASSIGN(node.id, statementNode(g, st));
  pending.push_back(std::move(node));
  return success();
}

  /// A statement's outputs (each with its declared fact, if written), op type and version.
Result<void> TextParser::statementHead(Statement &st) {
  SF_ASSIGN(std::string first, name("an output name or an op type"));
  size_t p = skipFrom(pos_);
  bool noOutputs = p < s_.size() && s_[p] == '(';
  if (p < s_.size() && s_[p] == ':') {
    size_t q = skipFrom(p + 1);
    noOutputs = q < s_.size() && std::isdigit(uint8_t(s_[q]));
  }
  st.opAt = st.start;
  if (noOutputs) {
    st.opName = std::move(first);
  } else {
    st.outs.push_back({std::move(first), std::nullopt});
    for (;;) {
      if (accept(':')) {
        SF_ASSIGN(Fact f, fact());
        st.outs.back().fact = std::move(f);
      }
      if (!accept(',')) break;
      SF_ASSIGN(std::string n, name("an output name"));
      st.outs.push_back({std::move(n), std::nullopt});
    }
    SF_TRY(expect('='));
    skip();
    st.opAt = pos_;
    SF_ASSIGN(st.opName, name("an op type"));
  }
  if (accept(':')) {
    SF_ASSIGN(int64_t v, integer("an opset version"));
    if (v < 0 || v > INT32_MAX) return fail(st.opAt, "bad opset version");
    st.version = int(v);
  }
  return success();
}

  /// A statement's inputs, after its '(': names (empty for an absent one) with their positions.
Result<void> TextParser::statementInputs(PendingNode &node) {
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
  return success();
}

  /// The statement's node added to `g`: domain, opset version, a Constant's fact, the declared
  /// facts of its outputs; its id.
Result<uint32_t> TextParser::statementNode(Graph &g, Statement &st) {
  std::string domain, op = st.opName;
  if (auto dot = st.opName.rfind('.'); dot != std::string::npos) {
    domain = st.opName.substr(0, dot);
    op = st.opName.substr(dot + 1);
  }
  // `Parameter` and `Constant` without a domain are the IR's own nodes; spelled with the
  // default domain (`ai.onnx.Parameter`) they are ops of that name, as a model file may have.
  const bool irNode = domain.empty();
  domain = std::string(canonicalDomain(domain));
  if (op == "Parameter" && irNode)
    return fail(st.opAt, "a Parameter is declared in the graph's parameter list");
  std::vector<std::string> outNames;
  for (const Out &o : st.outs) outNames.push_back(o.name);
  auto id = g.addNode(op, std::move(st.nodeName), {}, std::move(outNames), std::move(st.as));
  if (!id.ok()) return fail(st.start, id.error().message);
  Node &n = g.nodes[*id];
  n.domain = std::move(domain);
  if (op == "Constant" && irNode) n.kind = NodeKind::Constant;
  if (st.version) n.opsetVersion = *st.version;
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
  for (size_t s = 0; s < st.outs.size(); ++s)
    if (st.outs[s].fact)
      n.outputs[s].declared = std::make_shared<const Fact>(std::move(*st.outs[s].fact));
  return *id;
}

Result<GraphPtr> TextParser::graphDef() {
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

} // namespace sf::text_detail

namespace sf {

Result<Graph> parseGraph(std::string_view text) { return text_detail::TextParser(text).file(); }

} // namespace sf
