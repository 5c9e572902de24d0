// Matrix products: MatMul (numpy semantics: batched with broadcast batch dims and the
// vector cases), MatMulInteger and QLinearMatMul (same shapes, other output types), Gemm
// (transA/transB, C unidirectionally broadcast to (M, N)) and Einsum (equation parsing with
// ellipsis and the implicit output). The contracted dims must agree: they are merged through the
// symbol table, so K learned in one product is known everywhere.
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"
#include "shapeflow/ops/refine.h"
#include "shared_rules.h"

#include <algorithm>
#include <map>

namespace sf {
namespace {


/// The common type of two inputs that must agree; an error naming both when they do not.
Result<ElementType> sameType(const Fact &a, const Fact &b) {
  if (a.type != kUnknownType && b.type != kUnknownType && a.type != b.type)
    return errorf("input types differ: {} vs {}", a, b);
  return a.type != kUnknownType ? a.type : b.type;
}

Result<Facts> inferMatMul(InferContext &ctx) {
  const Fact &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(ElementType t, sameType(a, b));
  SF_ASSIGN(PartialShape s, matmulShape(ctx, a, b, 0, 1));
  return factsOf(makeFact(t, std::move(s)));
}

/// A zero point must have the type of the tensor it belongs to.
Result<void> checkZeroPoint(InferContext &ctx, size_t data, size_t zp) {
  if (!ctx.hasInput(zp)) return success();
  const Fact &d = ctx.input(data), &z = ctx.input(zp);
  if (d.type != kUnknownType && z.type != kUnknownType && d.type != z.type)
    return errorf("input {} (zero point) has type {}, expected {} like input {} ({} vs {})", zp,
                  toString(z.type), toString(d.type), data, z, d);
  return success();
}

/// A scale must be a float tensor.
Result<void> checkScale(InferContext &ctx, size_t i) {
  const Fact &s = ctx.input(i);
  if (s.type != kUnknownType && !isFloat(s.type))
    return errorf("input {} (scale) must be a float tensor, got {}", i, s);
  return success();
}

Result<Facts> inferMatMulInteger(InferContext &ctx) {
  SF_TRY(checkZeroPoint(ctx, 0, 2));
  SF_TRY(checkZeroPoint(ctx, 1, 3));
  SF_ASSIGN(PartialShape s, matmulShape(ctx, ctx.input(0), ctx.input(1), 0, 1));
  return factsOf(makeFact(ElementType::I32, std::move(s)));
}

Result<Facts> inferQLinearMatMul(InferContext &ctx) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  SF_TRY(checkZeroPoint(ctx, 0, 2));
  SF_TRY(checkZeroPoint(ctx, 3, 5));
  for (size_t i : {1, 4, 6}) SF_TRY(checkScale(ctx, i));
  SF_ASSIGN(PartialShape s, matmulShape(ctx, ctx.input(0), ctx.input(3), 0, 3));
  return factsOf(makeFact(ctx.input(7).type, std::move(s)));
}

} // namespace

Result<Facts> inferGemm(InferContext &ctx) {
  const Fact &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(ElementType t, sameType(a, b));
  SF_ASSIGN(int64_t transA, ctx.attrs().getInt("transA", 0));
  SF_ASSIGN(int64_t transB, ctx.attrs().getInt("transB", 0));
  const char *names[] = {"A", "B"};
  for (size_t i = 0; i < 2; ++i) {
    const Fact &f = ctx.input(i);
    if (f.shape.rankIsStatic() && f.shape.size() != 2)
      return errorf("{} has rank {}, expected 2 ({})", inputLabel(i, names[i]), f.shape.size(), f);
  }
  Dimension m, n, ka, kb;
  if (a.shape.rankIsStatic()) {
    m = a.shape[transA ? 1 : 0];
    ka = a.shape[transA ? 0 : 1];
  }
  if (b.shape.rankIsStatic()) {
    kb = b.shape[transB ? 1 : 0];
    n = b.shape[transB ? 0 : 1];
  }
  if (!ctx.mergeDims(ka, kb).ok())
    return errorf("inner dimensions differ: {} vs {} ({}{} times {}{})", ka, kb, a,
                  (transA ? " transposed" : ""), b, (transB ? " transposed" : ""));
  PartialShape out{ctx.symbols().resolve(m), ctx.symbols().resolve(n)};
  if (ctx.hasInput(2)) {
    const Fact &c = ctx.input(2);
    if (c.type != kUnknownType && t != kUnknownType && c.type != t)
      return errorf("input types differ: {} vs {}", c, a);
    if (t == kUnknownType) t = c.type;
    SF_ASSIGN(int64_t bcast, ctx.attrs().getInt("broadcast", 1));
    if (ctx.opset() > 0 && ctx.opset() < 7 && bcast == 0 && c.shape.rankIsStatic()) {
      // Before opset 7, C has exactly the shape (M, N) unless broadcast = 1.
      if (!ctx.mergeShapes(c.shape, out).ok())
        return errorf("input 2 (C) {} must have shape {} when broadcast = 0", c, out);
    } else {
      SF_TRY(broadcastOnto(ctx, out, 2, "C"));
    }
    out = ctx.symbols().resolve(std::move(out));
  }
  return factsOf(makeFact(t, std::move(out)));
}

namespace {

// ---- Einsum ----

/// One term of an equation: letters, and where the ellipsis stands (npos when absent).
struct EinsumTerm {
  std::string letters;
  size_t ellipsisAt = std::string::npos;
};

Result<EinsumTerm> parseTerm(std::string_view text) {
  EinsumTerm t;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '.') {
      if (text.substr(i, 3) != "..." || t.ellipsisAt != std::string::npos)
        return errorf("bad ellipsis in einsum term '{}'", text);
      t.ellipsisAt = t.letters.size();
      i += 3;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)))
      return errorf("bad character '{}' in einsum term '{}'", c, text);
    t.letters += c;
    ++i;
  }
  return t;
}

struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  std::optional<EinsumTerm> output; // nullopt: implicit mode
};

Result<EinsumEquation> parseEquation(const std::string &raw) {
  std::string eq;
  for (char c : raw)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  EinsumEquation out;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    SF_ASSIGN(EinsumTerm t, parseTerm(std::string_view(lhs).substr(start, comma == std::string::npos
                                                                               ? std::string::npos
                                                                               : comma - start)));
    out.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos || rhs.find(',') != std::string::npos)
      return errorf("bad einsum output '{}'", rhs);
    SF_ASSIGN(EinsumTerm t, parseTerm(rhs));
    out.output = std::move(t);
  }
  return out;
}

/// The inputs' common element type (unknown when none is known).
Result<ElementType> einsumType(InferContext &ctx) {
  ElementType type = kUnknownType;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Fact &f = ctx.input(i);
    if (f.type != kUnknownType && type != kUnknownType && f.type != type)
      return errorf("input types differ: {} vs {}", ctx.input(0), f);
    if (type == kUnknownType) type = f.type;
  }
  return type;
}

/// What the input terms say of the letters.
struct EinsumLetters {
  std::map<char, Dimension> dims; // letter -> its dim (broadcast across inputs)
  std::map<char, int> counts;     // letter -> occurrences over all input terms
  PartialShape ellipsis{};        // broadcast of every input's ellipsis dims
  bool anyEllipsis = false;
};

/// Each letter's dim in input i's term (`nEll` axes under its ellipsis); repeated letters within
/// one term are a diagonal, their dims equal.
Result<std::map<char, Dimension>> termDims(InferContext &ctx, const EinsumTerm &t, const Fact &f,
                                           size_t i, size_t nEll) {
  bool hasEllipsis = t.ellipsisAt != std::string::npos;
  std::map<char, Dimension> own;
  for (size_t j = 0, axis = 0; j < t.letters.size(); ++j, ++axis) {
    if (hasEllipsis && j == t.ellipsisAt) axis += nEll;
    char c = t.letters[j];
    Dimension d = f.shape[axis];
    if (auto it = own.find(c); it != own.end()) {
      auto m = ctx.mergeDims(it->second, d);
      if (!m.ok())
        return errorf("input {} repeats '{}' on axes of different sizes {} and {} ({})", i, c,
                      it->second, d, f);
      it->second = *m;
    } else {
      own.emplace(c, d);
    }
  }
  return own;
}

/// Adds input i's term `t` (of fact `f`) to the letters.
Result<void> addInputTerm(InferContext &ctx, EinsumLetters &l, const EinsumTerm &t, const Fact &f,
                          size_t i, const std::string &equation) {
  bool hasEllipsis = t.ellipsisAt != std::string::npos;
  l.anyEllipsis |= hasEllipsis;
  for (char c : t.letters) ++l.counts[c];
  if (!f.shape.rankIsStatic()) {
    if (hasEllipsis) l.ellipsis = PartialShape::dynamic();
    // Without an ellipsis the rank is known; the dims are not.
    for (char c : t.letters) l.dims.emplace(c, Dimension());
    return success();
  }
  size_t rank = f.shape.size();
  if (rank < t.letters.size() || (!hasEllipsis && rank != t.letters.size()))
    return errorf("input {} has rank {} but its term in '{}' names {} axes ({})", i, rank,
                  equation, t.letters.size(), f);
  size_t nEll = rank - t.letters.size();
  SF_ASSIGN(auto own, termDims(ctx, t, f, i, nEll));
  for (auto &[c, d] : own) {
    auto it = l.dims.find(c);
    if (it == l.dims.end()) {
      l.dims.emplace(c, d);
      continue;
    }
    auto b = broadcastDim(it->second, d, &ctx.symbols());
    if (!b.ok())
      return errorf("dimension '{}' of input {} is {}, elsewhere {} ({})", c, i, d, it->second,
                    f);
    it->second = *b;
  }
  if (hasEllipsis) {
    PartialShape e(std::vector<Dimension>(f.shape.dims().begin() + t.ellipsisAt,
                                          f.shape.dims().begin() + t.ellipsisAt + nEll));
    auto b = ctx.broadcast(l.ellipsis, e);
    if (!b.ok()) return errorf("ellipsis dimensions do not broadcast: {}", b.error().message);
    l.ellipsis = *b;
  }
  return success();
}

/// The output term: the equation's (checked), or in implicit mode the one it implies.
Result<EinsumTerm> outputTerm(const EinsumEquation &eq, const EinsumLetters &l,
                              const std::string &equation) {
  EinsumTerm out;
  if (eq.output) {
    out = *eq.output;
    if (out.ellipsisAt != std::string::npos && !l.anyEllipsis)
      out.ellipsisAt = std::string::npos; // an ellipsis of rank 0
    for (size_t j = 0; j < out.letters.size(); ++j) {
      char c = out.letters[j];
      if (!l.counts.count(c))
        return errorf("output label '{}' of '{}' is not in any input", c, equation);
      if (out.letters.find(c) != j)
        return errorf("output label '{}' of '{}' is repeated", c, equation);
    }
  } else {
    // Implicit mode: the ellipsis dims, then the letters used once, in alphabetical (ASCII) order.
    for (auto &[c, n] : l.counts)
      if (n == 1) out.letters += c;
    if (l.anyEllipsis) out.ellipsisAt = 0;
  }
  return out;
}

Result<Facts> inferEinsum(InferContext &ctx) {
  SF_ASSIGN(std::string equation, ctx.attrs().getString("equation"));
  SF_ASSIGN(EinsumEquation eq, parseEquation(equation));
  if (eq.inputs.size() != ctx.numInputs())
    return errorf("equation '{}' has {} input terms for {} inputs", equation, eq.inputs.size(),
                  ctx.numInputs());
  SF_ASSIGN(ElementType type, einsumType(ctx));

  EinsumLetters letters;
  for (size_t i = 0; i < eq.inputs.size(); ++i)
    SF_TRY(addInputTerm(ctx, letters, eq.inputs[i], ctx.input(i), i, equation));

  SF_ASSIGN(EinsumTerm out, outputTerm(eq, letters, equation));
  bool withEllipsis = out.ellipsisAt != std::string::npos;
  if (withEllipsis && !letters.ellipsis.rankIsStatic())
    return factsOf(makeFact(type, PartialShape::dynamic()));
  std::vector<Dimension> shape;
  for (size_t j = 0; j <= out.letters.size(); ++j) {
    if (withEllipsis && j == out.ellipsisAt)
      for (const Dimension &d : letters.ellipsis.dims()) shape.push_back(d);
    if (j < out.letters.size()) shape.push_back(letters.dims[out.letters[j]]);
  }
  return factsOf(makeFact(type, ctx.symbols().resolve(PartialShape(std::move(shape)))));
}

// ---- costs ----

/// Einsum: a product of its inputs summed over the letters the output drops: for each output
/// element, one MAC per combination of the dropped letters (a second input and later ones each
/// multiply once more); a single input only adds.
Result<OpCost> costEinsum(const CostContext &ctx) {
  OpCost c;
  SF_ASSIGN(std::string equation, ctx.attrs().getString("equation"));
  SF_ASSIGN(EinsumEquation eq, parseEquation(equation));
  std::map<char, Dimension> size;
  std::map<char, int> uses;
  for (size_t i = 0; i < eq.inputs.size() && i < ctx.numInputs(); ++i) {
    const EinsumTerm &t = eq.inputs[i];
    const PartialShape &s = ctx.input(i).shape;
    for (size_t k = 0; k < t.letters.size(); ++k) {
      ++uses[t.letters[k]];
      if (!s.rankIsStatic()) continue;
      // Letters after the ellipsis count from the end.
      size_t axis = t.ellipsisAt == std::string::npos || k < t.ellipsisAt
                        ? k
                        : s.size() - (t.letters.size() - k);
      if (axis < s.size() && !size.count(t.letters[k])) size[t.letters[k]] = s[axis];
    }
  }
  std::string kept;
  if (eq.output)
    kept = eq.output->letters;
  else
    for (const auto &[letter, n] : uses)
      if (n == 1) kept += letter;
  Dimension dropped(1);
  for (const auto &[letter, n] : uses) {
    if (kept.find(letter) != std::string::npos) continue;
    auto it = size.find(letter);
    SF_ASSIGN(dropped, dropped * (it == size.end() ? Dimension::dynamic() : it->second));
  }
  SF_ASSIGN(Dimension per, times(elementsOf(ctx.output(0)), dropped));
  if (ctx.numInputs() <= 1) {
    SF_TRY(c.add(FlopKind::Add, per));
  } else {
    SF_ASSIGN(Dimension macs, times(per, Dimension(int64_t(ctx.numInputs()) - 1)));
    SF_TRY(c.addMacs(macs));
  }
  return c;
}

} // namespace

Result<OpCost> costMatMul(const CostContext &ctx) {
  // Output [..., M, N] from [..., M, K] x [..., K, N]: one MAC per output element and per K.
  OpCost c;
  const PartialShape &a = ctx.input(0).shape;
  Dimension k = a.rankIsStatic() && a.size() > 0 ? a[a.size() - 1] : Dimension::dynamic();
  SF_ASSIGN(Dimension macs, times(elementsOf(ctx.output(0)), k));
  SF_TRY(c.addMacs(macs));
  return c;
}

Result<OpCost> costGemm(const CostContext &ctx) {
  // Y = alpha * A' B' + beta * C: M*N*K MACs; C adds once per output element, a scale other
  // than 1 multiplies once per output element.
  OpCost c;
  const PartialShape &a = ctx.input(0).shape;
  int64_t transA = ctx.attrs().getInt("transA", 0).valueOr(0);
  Dimension k = a.rankIsStatic() && a.size() == 2 ? a[transA ? 0 : 1] : Dimension::dynamic();
  Dimension out = elementsOf(ctx.output(0));
  SF_ASSIGN(Dimension macs, times(out, k));
  SF_TRY(c.addMacs(macs));
  if (ctx.attrs().getFloat("alpha", 1.0).valueOr(1.0) != 1.0) SF_TRY(c.add(FlopKind::Mul, out));
  if (ctx.hasInput(2)) {
    SF_TRY(c.add(FlopKind::Add, out));
    if (ctx.attrs().getFloat("beta", 1.0).valueOr(1.0) != 1.0) SF_TRY(c.add(FlopKind::Mul, out));
  }
  return c;
}

namespace {
/// QLinearMatMul: the integer product, then one requantisation (a multiply and an add) per
/// output element.
Result<OpCost> costQLinearMatMul(const CostContext &ctx) {
  SF_ASSIGN(OpCost c, costMatMul(ctx));
  Dimension out = elementsOf(ctx.output(0));
  SF_TRY(c.add(FlopKind::Mul, out));
  SF_TRY(c.add(FlopKind::Add, out));
  return c;
}
} // namespace

void registerMatmulOps(OpRegistry &r) {
  r.add({.name = "MatMul", .infer = inferMatMul, .refine = refineMatMul(), .cost = costMatMul});
  r.add({.name = "MatMulInteger", .infer = inferMatMulInteger, .cost = costMatMul});
  r.add({.name = "QLinearMatMul", .infer = inferQLinearMatMul, .cost = costQLinearMatMul});
  r.add({.name = "Gemm", .infer = inferGemm, .refine = refineGemm(), .cost = costGemm});
  r.add({.name = "Einsum", .infer = inferEinsum, .cost = costEinsum});
}

} // namespace sf
