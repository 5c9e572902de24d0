// Kernels of the products (src/ops/matmul.cpp): MatMul, Gemm, MatMulInteger, QLinearMatMul, Einsum,
// and com.microsoft's FusedMatMul and integer products to float (MatMulIntegerToFloat,
// DynamicQuantizeMatMul).
// f32 products with constant weights on oneDNN, other f32 products on sgemm (OpenBLAS where the
// build has it); other types in loops; the integer and quantized products exactly in doubles;
// Einsum by direct summation over every label.
#include "../blas.h"
#include "../dnnl.h"
#include "../kernel_util.h"
#include "quantized.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

namespace sf::eval::detail {
namespace {

/// NumPy matmul's geometry: 1-D operands promoted, batch dims broadcast; A's and B's matrix
/// offsets (in matrices) for each batch index.
struct MatMulGeometry {
  int64_t m = 0, k = 0, n = 0;
  Shape batch, out;
  std::vector<int64_t> sta, stb;
  /// B is one matrix for every batch index and A has all of them, in order: the batch folds into
  /// A's rows (one product of batch*m rows, B packed once).
  bool foldsIntoRows = false;
  std::pair<int64_t, int64_t> offsets(int64_t bi) const {
    int64_t offA = 0, offB = 0, rest = bi;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t i = rest % batch[d];
      rest /= batch[d];
      offA += i * sta[d], offB += i * stb[d];
    }
    return {offA, offB};
  }
};

Result<MatMulGeometry> matmulGeometry(Shape sa, Shape sb) {
  if (sa.empty() || sb.empty()) return errorf("MatMul of a scalar");
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA) sa.insert(sa.begin(), 1);
  if (vecB) sb.push_back(1);
  MatMulGeometry g;
  g.m = sa[sa.size() - 2], g.k = sa.back(), g.n = sb.back();
  if (sb[sb.size() - 2] != g.k) return errorf("A has {} columns, B {} rows", g.k, sb[sb.size() - 2]);
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  SF_ASSIGN(g.batch, broadcastAll({ba, bb}));
  g.sta = broadcastStrides(ba, g.batch), g.stb = broadcastStrides(bb, g.batch);
  g.foldsIntoRows = ba == g.batch && std::all_of(g.stb.begin(), g.stb.end(), [](int64_t s) { return s == 0; });
  g.out = g.batch;
  if (!vecA) g.out.push_back(g.m);
  if (!vecB) g.out.push_back(g.n);
  return g;
}

Result<void> matmul(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  if (a.type() != b.type()) return errorf("A is {} and B is {}", shortName(a.type()), shortName(b.type()));
  SF_ASSIGN(MatMulGeometry g, matmulGeometry(a.shape(), b.shape()));
  const int64_t m = g.m, k = g.k, n = g.n, batches = countOf(g.batch);
  const Shape &out = g.out;
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("MatMul of bool");
    } else {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
      Elements<T> x(a), y(b);
      Output<T> o(ctx, a.type(), out);
      SF_ASSIGN(T *p, o.makeForOverwrite());
      if constexpr (std::is_same_v<T, float>) {
        // A constant B (a layer's weights) on oneDNN, packed once and kept: sgemm packs B again
        // on every call, as long as the product itself when A has few rows (a transformer's tokens).
        if (b.shape().size() == 2 && (g.foldsIntoRows || batches == 1) && ctx.inputIsConstant(1) &&
            dnnlMatMul(batches * m, k, n, x.data(), y.data(), false, ctx.inputShared(1), nullptr, p))
          return o.finish(0);
        if (g.foldsIntoRows) {
          sgemm(false, false, batches * m, n, k, 1.0f, x.data(), k, y.data(), n, 0.0f, p, n);
          return o.finish(0);
        }
        for (int64_t bi = 0; bi < batches; ++bi) {
          auto [offA, offB] = g.offsets(bi);
          sgemm(false, false, m, n, k, 1.0f, x.data() + offA * m * k, k, y.data() + offB * k * n, n, 0.0f,
                p + bi * m * n, n);
        }
        return o.finish(0);
      }
      std::vector<Acc> row(static_cast<size_t>(n));
      for (int64_t bi = 0; bi < batches; ++bi) {
        auto [offA, offB] = g.offsets(bi);
        const T *pa = x.data() + offA * m * k, *pb = y.data() + offB * k * n;
        T *pc = p + bi * m * n;
        for (int64_t i = 0; i < m; ++i) {
          std::fill(row.begin(), row.end(), Acc(0));
          for (int64_t kk = 0; kk < k; ++kk) {
            Acc av = Acc(pa[i * k + kk]);
            const T *br = pb + kk * n;
            for (int64_t j = 0; j < n; ++j) row[size_t(j)] = wrapAdd(row[size_t(j)], wrapMul(av, Acc(br[j])));
          }
          for (int64_t j = 0; j < n; ++j) pc[i * n + j] = T(row[size_t(j)]);
        }
      }
      return o.finish(0);
    }
  }, false);
}

Result<void> gemm(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(int64_t ta, ctx.attrs().getInt("transA", 0));
  SF_ASSIGN(int64_t tb, ctx.attrs().getInt("transB", 0));
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 1.0));
  SF_ASSIGN(double beta, ctx.attrs().getFloat("beta", 1.0));
  if (a.shape().size() != 2 || b.shape().size() != 2) return errorf("A and B must be matrices");
  int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  int64_t kb = tb ? b.shape()[1] : b.shape()[0], n = tb ? b.shape()[0] : b.shape()[1];
  if (k != kb) return errorf("A has {} columns, B {} rows (after transposes)", k, kb);
  Shape out{m, n};
  return dispatch(a.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return errorf("Gemm of bool");
    } else {
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      Elements<T> x(a), y(b);
      Output<T> o(ctx, a.type(), out);
      SF_ASSIGN(T *p, o.makeForOverwrite());
      std::vector<int64_t> cst;
      std::optional<Elements<T>> c;
      if (ctx.hasInput(2)) {
        SF_ASSIGN(Shape bc, broadcastAll({ctx.input(2).shape(), out}));
        if (bc != out) return errorf("C of shape {} does not broadcast to {}", shapeText(ctx.input(2).shape()), shapeText(out));
        cst = broadcastStrides(ctx.input(2).shape(), out);
        c.emplace(ctx.input(2));
      }
      if constexpr (std::is_same_v<T, float>) {
        // A layer (constant B, C a row of n or absent, alpha and beta 1) on oneDNN, as MatMul.
        bool rowBias = c && ctx.input(2).elementCount() == n && cst.size() == 2 && cst[0] == 0;
        if (!ta && alpha == 1.0 && (!c || (rowBias && beta == 1.0)) && ctx.inputIsConstant(1) &&
            dnnlMatMul(m, k, n, x.data(), y.data(), tb != 0, ctx.inputShared(1), c ? c->data() : nullptr, p))
          return o.finish(0);
        sgemm(ta != 0, tb != 0, m, n, k, float(alpha), x.data(), a.shape()[1], y.data(), b.shape()[1], 0.0f, p, n);
        if (c)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) p[i * n + j] += float(beta) * (*c)[size_t(i * cst[0] + j * cst[1])];
        return o.finish(0);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          Acc s = 0;
          for (int64_t kk = 0; kk < k; ++kk)
            s = wrapAdd(s, wrapMul(Acc(x[size_t(ta ? kk * m + i : i * k + kk)]), Acc(y[size_t(tb ? j * k + kk : kk * n + j)])));
          double v = double(s) * alpha;
          if (c) v += beta * double((*c)[size_t(i * cst[0] + j * cst[1])]);
          p[i * n + j] = toElement<T>(v);
        }
      return o.finish(0);
    }
  }, false);
}

/// Batched NumPy matmul of doubles (1-D operands promoted), returning the output shape.
Result<std::pair<Shape, std::vector<double>>> matmulDoubles(const std::vector<double> &a, const Shape &sa,
                                                            const std::vector<double> &b, const Shape &sb) {
  SF_ASSIGN(MatMulGeometry g, matmulGeometry(sa, sb));
  const int64_t m = g.m, k = g.k, n = g.n;
  std::vector<double> y(static_cast<size_t>(countOf(g.batch) * m * n), 0.0);
  for (int64_t bi = 0; bi < countOf(g.batch); ++bi) {
    auto [offA, offB] = g.offsets(bi);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t kk = 0; kk < k; ++kk) {
        double av = a[size_t((offA * m + i) * k + kk)];
        for (int64_t j = 0; j < n; ++j) y[size_t((bi * m + i) * n + j)] += av * b[size_t((offB * k + kk) * n + j)];
      }
  }
  return std::pair{g.out, y};
}

Result<void> matmulInteger(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto bv, doubles(b));
  SF_ASSIGN(auto azp, optionalDoubles(ctx, 2));
  SF_ASSIGN(auto bzp, optionalDoubles(ctx, 3));
  size_t ra = a.shape().size(), rb = b.shape().size();
  SF_ASSIGN(av, shifted(std::move(av), a.shape(), azp, ra >= 2 ? int64_t(ra) - 2 : 0, "a_zero_point"));
  SF_ASSIGN(bv, shifted(std::move(bv), b.shape(), bzp, int64_t(rb) - 1, "b_zero_point"));
  SF_ASSIGN(auto r, matmulDoubles(av, a.shape(), bv, b.shape()));
  SF_TRY(ctx.admit(ElementType::I32, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::I32, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

/// `v` of shape `s` (rank 2 or more) with its last two axes swapped; `s` swapped too.
std::vector<double> swapLastTwo(const std::vector<double> &v, Shape &s) {
  const size_t r = s.size();
  const int64_t rows = s[r - 2], cols = s[r - 1], mats = rows * cols == 0 ? 0 : int64_t(v.size()) / (rows * cols);
  std::vector<double> out(v.size());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) out[size_t((m * cols + j) * rows + i)] = v[size_t((m * rows + i) * cols + j)];
  std::swap(s[r - 2], s[r - 1]);
  return out;
}

/// FusedMatMul (com.microsoft): alpha * op(A) x op(B), op a transpose of the last two axes with
/// transA / transB, batch axes broadcast as MatMul's (transBatchA/B, which move the batch axes
/// too, are refused).
Result<void> fusedMatMul(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 1.0));
  SF_ASSIGN(int64_t ta, ctx.attrs().getInt("transA", 0));
  SF_ASSIGN(int64_t tb, ctx.attrs().getInt("transB", 0));
  SF_ASSIGN(int64_t tba, ctx.attrs().getInt("transBatchA", 0));
  SF_ASSIGN(int64_t tbb, ctx.attrs().getInt("transBatchB", 0));
  if (tba || tbb) return errorf("transBatchA and transBatchB are not computed by this kernel");
  if (a.shape().size() < 2 || b.shape().size() < 2)
    return errorf("A is {} and B {}: both of rank 2 or more", shapeText(a.shape()), shapeText(b.shape()));
  Shape sa = a.shape(), sb = b.shape();
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto bv, doubles(b));
  if (ta) av = swapLastTwo(av, sa);
  if (tb) bv = swapLastTwo(bv, sb);
  SF_ASSIGN(MatMulGeometry g, matmulGeometry(sa, sb));
  SF_TRY(ctx.admit(a.type(), g.out));
  SF_ASSIGN(auto r, matmulDoubles(av, sa, bv, sb));
  for (double &v : r.second) v *= alpha;
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(a.type(), r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

/// The float product of integer operands (com.microsoft MatMulIntegerToFloat and
/// DynamicQuantizeMatMul): (A - a_zero_point) x (B - b_zero_point) times a_scale and b_scale (one,
/// or one per column of B), plus the bias (per column), in `out`'s type.
Result<void> integerProductToFloat(EvalContext &ctx, std::vector<double> av, const Shape &sa, const std::vector<double> &azp,
                                   double aScale, size_t bAt, size_t bScaleAt, size_t bZeroAt, size_t biasAt, ElementType out) {
  const Tensor &b = ctx.input(bAt);
  SF_ASSIGN(auto bv, doubles(b));
  SF_ASSIGN(auto bzp, optionalDoubles(ctx, bZeroAt));
  SF_ASSIGN(auto bs, doubles(ctx.input(bScaleAt)));
  SF_ASSIGN(auto bias, optionalDoubles(ctx, biasAt));
  const size_t rb = b.shape().size();
  if (rb < 1) return errorf("B is a scalar");
  // B's columns (a vector B is one column: the product drops that axis).
  const int64_t n = rb >= 2 ? b.shape().back() : 1;
  if ((bs.size() != 1 && int64_t(bs.size()) != n) || (!bias.empty() && int64_t(bias.size()) != n))
    return errorf("b_scale has {} elements and bias {}: one or {} (B's columns)", bs.size(), bias.size(), n);
  SF_ASSIGN(av, shifted(std::move(av), sa, azp, sa.size() >= 2 ? int64_t(sa.size()) - 2 : 0, "a_zero_point"));
  SF_ASSIGN(bv, shifted(std::move(bv), b.shape(), bzp, int64_t(rb) - 1, "b_zero_point"));
  SF_ASSIGN(auto r, matmulDoubles(av, sa, bv, b.shape()));
  for (size_t i = 0; i < r.second.size(); ++i) {
    const size_t col = size_t(int64_t(i) % n);
    r.second[i] = r.second[i] * aScale * bs[bs.size() == 1 ? 0 : col] + (bias.empty() ? 0.0 : bias[col]);
  }
  SF_TRY(ctx.admit(out, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

/// MatMulIntegerToFloat (com.microsoft): A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias.
Result<void> matmulIntegerToFloat(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto as, doubles(ctx.input(2)));
  SF_ASSIGN(auto azp, optionalDoubles(ctx, 4));
  if (as.size() != 1) return errorf("a_scale has {} elements: one per tensor", as.size());
  return integerProductToFloat(ctx, std::move(av), a.shape(), azp, as[0], 1, 3, 5, 6, ctx.input(2).type());
}

/// DynamicQuantizeMatMul (com.microsoft): A (float) quantized to uint8 as DynamicQuantizeLinear
/// does (its range widened to hold 0, 255 steps, the zero point rounded), then the integer
/// product with B, b_scale, b_zero_point and bias.
Result<void> dynamicQuantizeMatMul(EvalContext &ctx) {
  const Tensor &a = ctx.input(0);
  SF_ASSIGN(auto av, doubles(a));
  const auto [scale, zp] = quantizeU8Dynamic(av);
  return integerProductToFloat(ctx, std::move(av), a.shape(), {double(zp)}, double(scale), 1, 2, 3, 4, a.type());
}

Result<void> qlinearMatMul(EvalContext &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(3);
  SF_ASSIGN(auto av, doubles(a));
  SF_ASSIGN(auto as, doubles(ctx.input(1)));
  SF_ASSIGN(auto azp, doubles(ctx.input(2)));
  SF_ASSIGN(auto bv, doubles(b));
  SF_ASSIGN(auto bs, doubles(ctx.input(4)));
  SF_ASSIGN(auto bzp, doubles(ctx.input(5)));
  SF_ASSIGN(auto ys, doubles(ctx.input(6)));
  SF_ASSIGN(auto yzp, doubles(ctx.input(7)));
  if (as.size() != 1 || bs.size() != 1 || ys.size() != 1 || yzp.size() != 1)
    return errorf("per-axis scales are not supported by this kernel");
  SF_ASSIGN(av, shifted(std::move(av), a.shape(), azp, int64_t(a.shape().size()) - 2, "a_zero_point"));
  SF_ASSIGN(bv, shifted(std::move(bv), b.shape(), bzp, int64_t(b.shape().size()) - 1, "b_zero_point"));
  SF_ASSIGN(auto r, matmulDoubles(av, a.shape(), bv, b.shape()));
  ElementType out = ctx.input(7).type();
  SF_ASSIGN(auto range, quantRange(out));
  // Requantized in float as onnxruntime's kernel does (a_scale * b_scale / y_scale, then the
  // integer product times it, rounded to nearest even): a product landing on .5 in float rounds
  // as there, not as the exact value does.
  const float k = float(as[0]) * float(bs[0]) / float(ys[0]);
  for (double &v : r.second) v = std::clamp(double(std::nearbyint(float(v) * k)) + yzp[0], range.first, range.second);
  SF_TRY(ctx.admit(out, r.first));
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(out, r.first, r.second));
  return ctx.setOutput(0, std::move(t));
}

/// An Einsum equation read against the node's inputs: each input's labels (the ellipsis's dims
/// as labels 0x01, 0x02, ..., right-aligned), the output's, all labels (the output's first) and
/// each label's size.
struct EinsumPlan {
  std::vector<std::string> labels;
  std::string out, all;
  Shape outShape;
  std::map<char, int64_t> size;
};

Result<EinsumPlan> einsumPlan(EvalContext &ctx) {
  SF_ASSIGN(std::string eq, ctx.attrs().getString("equation"));
  std::string spaced;
  for (char c : eq)
    if (c != ' ') spaced += c;
  size_t arrow = spaced.find("->");
  std::string lhs = spaced.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t at = 0;;) {
    size_t comma = lhs.find(',', at);
    terms.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (terms.size() != ctx.numInputs()) return errorf("{} terms for {} inputs", terms.size(), ctx.numInputs());
  // Labels: letters, and the ellipsis's dims as labels 0x01, 0x02, ... (right-aligned).
  size_t ellRank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t letters = 0;
    for (char c : terms[k]) letters += std::isalpha(static_cast<unsigned char>(c)) != 0;
    if (terms[k].find("...") != std::string::npos)
      ellRank = std::max(ellRank, ctx.input(k).shape().size() - letters);
  }
  auto expand = [&](const std::string &t, size_t rank) -> Result<std::string> {
    size_t e = t.find("...");
    if (e == std::string::npos) return t;
    size_t letters = 0;
    for (char c : t) letters += std::isalpha(static_cast<unsigned char>(c)) != 0;
    size_t n = rank - letters;
    std::string ell;
    for (size_t i = ellRank - n; i < ellRank; ++i) ell += char(1 + i);
    return t.substr(0, e) + ell + t.substr(e + 3);
  };
  EinsumPlan plan;
  std::vector<std::string> &labels = plan.labels;
  std::map<char, int64_t> &size = plan.size;
  std::map<char, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    SF_ASSIGN(std::string t, expand(terms[k], ctx.input(k).shape().size()));
    if (t.size() != ctx.input(k).shape().size()) return errorf("term '{}' does not match input {}'s rank", terms[k], k);
    for (size_t i = 0; i < t.size(); ++i) {
      int64_t d = ctx.input(k).shape()[i];
      auto it = size.find(t[i]);
      if (it != size.end() && it->second != d && it->second != 1 && d != 1)
        return errorf("label '{}' has sizes {} and {}", t[i], it->second, d);
      size[t[i]] = it == size.end() ? d : std::max(it->second, d);
      count[t[i]]++;
    }
    labels.push_back(t);
  }
  std::string &out = plan.out;
  if (arrow != std::string::npos) {
    std::string o = spaced.substr(arrow + 2);
    size_t e = o.find("...");
    std::string ell;
    for (size_t i = 0; i < ellRank; ++i) ell += char(1 + i);
    out = e == std::string::npos ? o : o.substr(0, e) + ell + o.substr(e + 3);
  } else {
    for (size_t i = 0; i < ellRank; ++i) out += char(1 + i);
    for (const auto &[c, n] : count)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) out += c;
  }
  plan.all = out;
  for (const auto &[c, n] : size)
    if (out.find(c) == std::string::npos) plan.all += c;
  for (char c : out) {
    if (!size.count(c)) return errorf("output label '{}' is in no input", c);
    plan.outShape.push_back(size[c]);
  }
  return plan;
}

/// Einsum by direct summation over every label (the ellipsis as labels of its own).
Result<void> einsum(EvalContext &ctx) {
  SF_ASSIGN(EinsumPlan plan, einsumPlan(ctx));
  const std::vector<std::string> &labels = plan.labels;
  const std::string &out = plan.out, &all = plan.all;
  const Shape &outShape = plan.outShape;
  std::vector<std::vector<double>> in;
  for (size_t k = 0; k < labels.size(); ++k) {
    SF_ASSIGN(auto v, doubles(ctx.input(k)));
    in.push_back(std::move(v));
  }
  SF_TRY(ctx.admit(ctx.input(0).type(), outShape));
  std::vector<int64_t> dims;
  for (char c : all) dims.push_back(plan.size[c]);
  int64_t total = countOf(Shape(dims.begin(), dims.end()));
  if (total > (int64_t(1) << 28)) return errorf("{} terms to sum", total);
  std::vector<double> res(static_cast<size_t>(countOf(outShape)), 0.0);
  std::vector<int64_t> idx(all.size(), 0);
  std::map<char, size_t> pos;
  for (size_t i = 0; i < all.size(); ++i) pos[all[i]] = i;
  for (int64_t t = 0; t < total; ++t) {
    int64_t rest = t;
    for (size_t i = all.size(); i-- > 0;) idx[i] = rest % dims[i], rest /= dims[i];
    double prod = 1;
    for (size_t k = 0; k < labels.size(); ++k) {
      int64_t off = 0;
      const Shape &s = ctx.input(k).shape();
      for (size_t i = 0; i < labels[k].size(); ++i) off = off * s[i] + (s[i] == 1 ? 0 : idx[pos[labels[k][i]]]);
      prod *= in[k][size_t(off)];
    }
    int64_t o = 0;
    for (size_t i = 0; i < out.size(); ++i) o = o * outShape[i] + idx[i];
    res[size_t(o)] += prod;
  }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ctx.input(0).type(), outShape, res));
  return ctx.setOutput(0, std::move(t));
}

} // namespace

Result<void> registerMatMulKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "MatMul", matmul));
  SF_TRY(setKernel(r, "Gemm", gemm));
  SF_TRY(setKernel(r, "MatMulInteger", matmulInteger));
  SF_TRY(setKernel(r, "QLinearMatMul", qlinearMatMul));
  SF_TRY(setKernel(r, "Einsum", einsum));
  SF_TRY(setKernel(r, "FusedMatMul", fusedMatMul, "com.microsoft"));
  SF_TRY(setKernel(r, "MatMulIntegerToFloat", matmulIntegerToFloat, "com.microsoft"));
  SF_TRY(setKernel(r, "DynamicQuantizeMatMul", dynamicQuantizeMatMul, "com.microsoft"));
  return success();
}

} // namespace sf::eval::detail
