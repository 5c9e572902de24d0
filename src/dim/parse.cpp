// Recursive-descent parser for the printed form of dims and shapes (the inverse of toString).
#include "shapeflow/dim/parse.h"

#include <cctype>
#include <cstdlib>
#include <utility>

namespace sf {
namespace {

class Parser {
public:
  Parser(std::string_view text, SymbolTable &table) : s_(text), table_(table) {}

  Result<Dimension> parseDimOnly() {
    SF_ASSIGN(Dimension d, dim());
    skip();
    if (pos_ != s_.size()) return fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return d;
  }

  Result<PartialShape> parseShapeOnly() {
    skip();
    if (!eat('[')) return fail("expected '['");
    skip();
    if (eatWord("...")) {
      skip();
      if (!eat(']')) return fail("expected ']'");
      return finishShape(PartialShape::dynamic());
    }
    std::vector<Dimension> dims;
    skip();
    if (!eat(']')) {
      for (;;) {
        SF_ASSIGN(Dimension d, dim());
        dims.push_back(d);
        skip();
        if (eat(']')) break;
        if (!eat(',')) return fail("expected ',' or ']'");
      }
    }
    return finishShape(PartialShape(std::move(dims)));
  }

private:
  Result<PartialShape> finishShape(PartialShape p) {
    skip();
    if (pos_ != s_.size()) return fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return p;
  }

  // dim := '?' range? | range | expr
  Result<Dimension> dim() {
    skip();
    if (peek() == '?') {
      ++pos_;
      if (peek() == '{') {
        SF_ASSIGN(Interval r, braced());
        return Dimension::fromInterval(r);
      }
      return Dimension::dynamic();
    }
    if (peek() == '{') {
      SF_ASSIGN(Interval r, braced());
      return Dimension::fromInterval(r);
    }
    // `1..8` (a bare interval) or an expression.
    size_t save = pos_;
    if (std::isdigit(uint8_t(peek()))) {
      SF_ASSIGN(int64_t lo, number());
      if (s_.substr(pos_, 2) == "..") {
        pos_ += 2;
        int64_t hi = kInf;
        if (std::isdigit(uint8_t(peek()))) {
          SF_ASSIGN(hi, number());
        }
        if (hi < lo) return fail("empty interval");
        return Dimension::fromInterval({lo, hi});
      }
      pos_ = save;
    }
    SF_ASSIGN(Expr e, expr());
    if (isConst(e) && e->value < 0) return fail("negative dimension");
    return Dimension(e);
  }

  Result<Interval> braced() {
    if (!eat('{')) return fail("expected '{'");
    skip();
    SF_ASSIGN(int64_t lo, number());
    skip();
    if (s_.substr(pos_, 2) != "..") return fail("expected '..'");
    pos_ += 2;
    skip();
    int64_t hi = kInf;
    if (std::isdigit(uint8_t(peek()))) {
      SF_ASSIGN(hi, number());
    }
    skip();
    if (!eat('}')) return fail("expected '}'");
    if (hi < lo) return fail("empty interval");
    return Interval{lo, hi};
  }

  /// `a op b`: integer arithmetic, or float arithmetic in the current precision when either
  /// side is a float (and always for `/`).
  Result<Expr> arith(FloatOp op, Expr a, Expr b) {
    if (op != FloatOp::Div && !a->isFloat && !b->isFloat) return integerArith(op, a, b);
    auto r = floatOp(op, a, b, prec_);
    if (!r.ok()) return fail(r.error().message);
    return r;
  }

  // expr := term (('+' | '-') term)*
  Result<Expr> expr() {
    SF_ASSIGN(Expr acc, term());
    for (;;) {
      skip();
      if (eat('+')) {
        SF_ASSIGN(Expr t, term());
        SF_ASSIGN(acc, arith(FloatOp::Add, acc, t));
      } else if (eat('-')) {
        SF_ASSIGN(Expr t, term());
        SF_ASSIGN(acc, arith(FloatOp::Sub, acc, t));
      } else {
        return acc;
      }
    }
  }

  // term := unary (('*' | '/' | '//' | '%') unary)*
  Result<Expr> term() {
    SF_ASSIGN(Expr acc, unary());
    for (;;) {
      skip();
      if (s_.substr(pos_, 2) == "//") {
        pos_ += 2;
        SF_ASSIGN(Expr t, unary());
        auto q = floorDivExpr(acc, t);
        if (!q.ok()) return fail(q.error().message);
        acc = *q;
      } else if (eat('*')) {
        SF_ASSIGN(Expr t, unary());
        SF_ASSIGN(acc, arith(FloatOp::Mul, acc, t));
      } else if (eat('/')) {
        SF_ASSIGN(Expr t, unary());
        SF_ASSIGN(acc, arith(FloatOp::Div, acc, t));
      } else if (eat('%')) {
        SF_ASSIGN(Expr t, unary());
        if (!isConst(t) || t->value <= 0) return fail("modulo needs a positive constant");
        SF_ASSIGN(acc, mod(acc, t->value));
      } else {
        return acc;
      }
    }
  }

  Result<Expr> unary() {
    skip();
    if (eat('-')) {
      SF_ASSIGN(Expr t, unary());
      if (t->isFloat) return arith(FloatOp::Mul, t, constant(-1));
      return neg(t);
    }
    return primary();
  }

  Result<Expr> primary() {
    skip();
    char c = peek();
    if (std::isdigit(uint8_t(c))) {
      size_t start = pos_;
      SF_ASSIGN(int64_t v, number());
      bool fraction = peek() == '.' && pos_ + 1 < s_.size() && std::isdigit(uint8_t(s_[pos_ + 1]));
      if (fraction || peek() == 'e' || peek() == 'E') {
        // A float literal: read again as a double, in the current precision.
        std::string text(s_.substr(start, 64)); // a literal is short; strtod needs a C string
        char *end = nullptr;
        double d = std::strtod(text.c_str(), &end);
        pos_ = start + size_t(end - text.c_str());
        auto f = floatConstant(d, prec_);
        if (!f.ok()) return fail(f.error().message);
        return f;
      }
      return constant(v);
    }
    if (eat('(')) {
      SF_ASSIGN(Expr e, expr());
      skip();
      if (!eat(')')) return fail("expected ')'");
      return e;
    }
    if (std::isalpha(uint8_t(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(uint8_t(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      std::string name(s_.substr(start, pos_ - start));
      skip();
      if ((name == "min" || name == "max") && eat('(')) {
        SF_ASSIGN(Expr acc, expr());
        skip();
        while (eat(',')) {
          SF_ASSIGN(Expr t, expr());
          SF_ASSIGN(acc, arith(name == "min" ? FloatOp::Min : FloatOp::Max, acc, t));
          skip();
        }
        if (!eat(')')) return fail("expected ')'");
        return acc;
      }
      // floor(..) and its kind read their argument in f32 (the printer's convention);
      // f32(..) / f64(..) set the precision of the float arithmetic inside.
      static const std::pair<const char *, RoundMode> kRounds[] = {
          {"floor", RoundMode::Floor}, {"ceil", RoundMode::Ceil},
          {"trunc", RoundMode::Trunc}, {"round", RoundMode::HalfEven}};
      for (auto [fname, mode] : kRounds) {
        if (name != fname || peek() != '(') continue;
        ++pos_;
        SF_ASSIGN(Expr inner, inPrecision(FloatPrec::F32));
        auto r = roundToInt(mode, inner);
        if (!r.ok()) return fail(r.error().message);
        return r;
      }
      if ((name == "f32" || name == "f64") && eat('('))
        return inPrecision(name == "f32" ? FloatPrec::F32 : FloatPrec::F64);
      return symbol(table_.named(name));
    }
    return fail(c ? "unexpected '" + std::string(1, c) + "'" : "unexpected end");
  }

  /// The rest of a parenthesised expression (after its '(') read in precision `p`.
  Result<Expr> inPrecision(FloatPrec p) {
    FloatPrec saved = prec_;
    prec_ = p;
    auto e = expr();
    prec_ = saved;
    if (!e.ok()) return e;
    skip();
    if (!eat(')')) return fail("expected ')'");
    return e;
  }

  Result<int64_t> number() {
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(uint8_t(s_[pos_]))) {
      auto m = checkedMul(v, 10);
      auto a = m ? checkedAdd(*m, s_[pos_] - '0') : std::nullopt;
      if (!a) return fail("number too large");
      v = *a;
      ++pos_;
    }
    if (pos_ == start) return fail("expected a number");
    return v;
  }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eatWord(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(uint8_t(s_[pos_]))) ++pos_;
  }
  Error fail(const std::string &what) const {
    return makeError("cannot parse '" + std::string(s_) + "' at column " +
                     std::to_string(pos_ + 1) + ": " + what);
  }

  std::string_view s_;
  size_t pos_ = 0;
  SymbolTable &table_;
  FloatPrec prec_ = FloatPrec::F32;
};

} // namespace

Result<Dimension> parseDimension(std::string_view text, SymbolTable &table) {
  return Parser(text, table).parseDimOnly();
}

Result<PartialShape> parsePartialShape(std::string_view text, SymbolTable &table) {
  return Parser(text, table).parseShapeOnly();
}

} // namespace sf
