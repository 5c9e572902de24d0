// Kernels of the ops of src/ops/training.cpp: the losses, the text ops and the optimizers.
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, TfIdfVectorizer (integer input),
// StringNormalizer, and ai.onnx.preview.training's Adagrad, Momentum and Adam.
#include "../kernel_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace sf::eval::detail {
namespace {

/// -input[n, t, d...] * weight[t] per element, reduced by `reduction` (mean divides by the sum
/// of the weights taken): NegativeLogLikelihoodLoss, and SoftmaxCrossEntropyLoss over the log
/// of the softmax along axis 1.
template <class T>
Result<void> nllInto(EvalContext &ctx, const T *in, const Shape &inShape, const std::vector<int64_t> &target,
                     const std::vector<double> *weight, std::optional<int64_t> ignore, const std::string &reduction,
                     ElementType type) {
  if (inShape.size() < 2) return errorf("input must have rank >= 2");
  int64_t n = inShape[0], c = inShape[1], inner = 1;
  for (size_t d = 2; d < inShape.size(); ++d) inner *= inShape[d];
  if (int64_t(target.size()) != n * inner) return errorf("target has {} elements, expected {}", target.size(), n * inner);
  std::vector<double> loss(size_t(n * inner));
  double wsum = 0, total = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t t = target[size_t(b * inner + i)];
      double l = 0, w = 0;
      if (!(ignore && t == *ignore)) {
        if (t < 0 || t >= c) return errorf("target {} is not a class of {}", t, c);
        w = weight ? (*weight)[size_t(t)] : 1.0;
        l = -double(in[(b * c + t) * inner + i]) * w;
      }
      loss[size_t(b * inner + i)] = l;
      total += l, wsum += w;
    }
  if (reduction == "none") {
    Shape out{n};
    out.insert(out.end(), inShape.begin() + 2, inShape.end());
    Output<T> o(ctx, type, out);
    SF_ASSIGN(T *p, o.make());
    for (size_t i = 0; i < loss.size(); ++i) p[i] = T(loss[i]);
    return o.finish(0);
  }
  if (reduction != "sum" && reduction != "mean") return errorf("reduction '{}'", reduction);
  Output<T> o(ctx, type, {});
  SF_ASSIGN(T *p, o.make());
  p[0] = T(reduction == "sum" ? total : wsum == 0 ? 0.0 : total / wsum);
  return o.finish(0);
}

Result<void> lossKernel(EvalContext &ctx, bool softmax) {
  const Tensor &x = ctx.input(0);
  SF_ASSIGN(auto target, ints(ctx.input(1)));
  std::vector<double> weight;
  if (ctx.hasInput(2)) {
    SF_ASSIGN(weight, doubles(ctx.input(2)));
  }
  std::optional<int64_t> ignore;
  if (ctx.attrs().has("ignore_index")) {
    SF_ASSIGN(int64_t ig, ctx.attrs().getInt("ignore_index"));
    ignore = ig;
  }
  SF_ASSIGN(std::string reduction, ctx.attrs().getString("reduction", "mean"));
  return dispatchFloat(x.type(), [&](auto tag) -> Result<void> {
    using T = typename decltype(tag)::type;
    Elements<T> xs(x);
    const Shape &s = x.shape();
    if (!softmax)
      return nllInto<T>(ctx, xs.data(), s, target, ctx.hasInput(2) ? &weight : nullptr, ignore, reduction, x.type());
    if (s.size() < 2) return errorf("scores must have rank >= 2");
    int64_t n = s[0], c = s[1], inner = x.elementCount() / std::max<int64_t>(n * c, 1);
    std::vector<T> logp(size_t(x.elementCount()));
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int64_t k = 0; k < c; ++k) mx = std::max(mx, double(xs[size_t((b * c + k) * inner + i)]));
        for (int64_t k = 0; k < c; ++k) sum += std::exp(double(xs[size_t((b * c + k) * inner + i)]) - mx);
        for (int64_t k = 0; k < c; ++k) {
          size_t at = size_t((b * c + k) * inner + i);
          logp[at] = T(double(xs[at]) - mx - std::log(sum));
        }
      }
    SF_TRY(nllInto<T>(ctx, logp.data(), s, target, ctx.hasInput(2) ? &weight : nullptr, ignore, reduction, x.type()));
    if (ctx.numOutputs() > 1) {
      Output<T> o(ctx, x.type(), s, 1);
      SF_ASSIGN(T *p, o.make());
      std::copy(logp.begin(), logp.end(), p);
      SF_TRY(o.finish(1));
    }
    return success();
  });
}

/// TfIdfVectorizer over integer input: n-grams of the pool (sizes min..max, items max_skip_count
/// apart at most), counted per row and weighted by mode (TF counts, IDF weights where present,
/// TFIDF both). Unigrams are counted once per position.
Result<void> tfidf(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  if (x.isString() || !ctx.attrs().has("pool_int64s"))
    return errorf("string pools and inputs are not supported by this kernel");
  SF_ASSIGN(std::string mode, ctx.attrs().getString("mode"));
  SF_ASSIGN(int64_t minN, ctx.attrs().getInt("min_gram_length"));
  SF_ASSIGN(int64_t maxN, ctx.attrs().getInt("max_gram_length"));
  SF_ASSIGN(int64_t maxSkip, ctx.attrs().getInt("max_skip_count"));
  SF_ASSIGN(auto counts, ctx.attrs().getInts("ngram_counts"));
  SF_ASSIGN(auto indexes, ctx.attrs().getInts("ngram_indexes"));
  SF_ASSIGN(auto pool, ctx.attrs().getInts("pool_int64s"));
  std::vector<double> weights;
  if (ctx.attrs().has("weights")) {
    SF_ASSIGN(weights, ctx.attrs().getFloats("weights"));
  }
  if (minN < 1 || maxN < minN || size_t(maxN) > counts.size()) return errorf("gram lengths {}..{}", minN, maxN);
  // The pool's n-grams by size, each with its global id (order in the pool).
  std::map<std::vector<int64_t>, int64_t> ids;
  int64_t id = 0;
  for (size_t n = 1; n <= counts.size(); ++n) {
    int64_t begin = counts[n - 1], end = n < counts.size() ? counts[n] : int64_t(pool.size());
    if (begin < 0 || end > int64_t(pool.size()) || (end - begin) % int64_t(n) != 0) return errorf("ngram_counts do not split the pool");
    for (int64_t at = begin; at < end; at += int64_t(n), ++id)
      ids[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + int64_t(n))] = id;
  }
  int64_t outSize = 0;
  for (int64_t i : indexes) outSize = std::max(outSize, i + 1);
  SF_ASSIGN(auto v, ints(x));
  Shape xs = x.shape();
  int64_t rows = xs.size() == 2 ? xs[0] : 1, len = xs.empty() ? 0 : xs.back();
  Shape out = xs.size() == 2 ? Shape{rows, outSize} : Shape{outSize};
  std::vector<double> y(static_cast<size_t>(rows * outSize), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t start = 0; start < len; ++start)
      for (int64_t skip = 0; skip <= maxSkip; ++skip) {
        std::vector<int64_t> gram;
        for (int64_t n = 1; n <= maxN; ++n) {
          int64_t at = start + (n - 1) * (skip + 1);
          if (at >= len) break;
          gram.push_back(v[size_t(r * len + at)]);
          if (n < minN || (n == 1 && skip > 0)) continue;
          auto it = ids.find(gram);
          if (it == ids.end() || size_t(it->second) >= indexes.size()) continue;
          y[size_t(r * outSize + indexes[size_t(it->second)])] += 1;
        }
      }
  for (int64_t r = 0; r < rows; ++r)
    for (size_t g = 0; g < indexes.size(); ++g) {
      double &c = y[size_t(r * outSize + indexes[g])];
      double wgt = g < weights.size() ? weights[g] : 1.0;
      if (mode == "IDF") c = c > 0 ? wgt : 0;
      else if (mode == "TFIDF") c = c * wgt;
    }
  SF_ASSIGN(Tensor t, Tensor::fromDoubles(ElementType::F32, out, y));
  return ctx.setOutput(0, std::move(t));
}

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

/// StringConcat: X and Y broadcast, each pair of strings joined.
Result<void> stringConcat(EvalContext &ctx) {
  const Tensor &x = ctx.input(0), &y = ctx.input(1);
  if (!x.isString() || !y.isString()) return errorf("X and Y must hold strings");
  SF_ASSIGN(Shape out, broadcastAll({x.shape(), y.shape()}));
  std::vector<std::string> values(size_t(countOf(out)));
  forEachBroadcast<2>(out, {broadcastStrides(x.shape(), out), broadcastStrides(y.shape(), out)},
                      [&](int64_t i, const std::array<int64_t, 2> &at) {
                        values[size_t(i)] = x.strings()[size_t(at[0])] + y.strings()[size_t(at[1])];
                      });
  SF_ASSIGN(Tensor t, Tensor::fromStrings(out, std::move(values)));
  return ctx.setOutput(0, std::move(t));
}

/// RegexFullMatch: whether the whole of each string matches `pattern` (read as an ECMAScript
/// regular expression: onnxruntime reads RE2's syntax, the same for the common forms).
Result<void> regexFullMatch(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  if (!x.isString()) return errorf("X is {}, not str", shortName(x.type()));
  SF_ASSIGN(std::string pattern, ctx.attrs().getString("pattern"));
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    return errorf("pattern '{}' is not a regular expression ({})", pattern, e.what());
  }
  Output<bool> out(ctx, ElementType::Bool, x.shape());
  SF_ASSIGN(bool *o, out.makeForOverwrite());
  for (size_t i = 0; i < x.strings().size(); ++i) o[i] = std::regex_match(x.strings()[i], re);
  return out.finish(0);
}

/// One string split: on `delimiter`, or when it is empty on runs of whitespace (none at the
/// ends); at most `maxsplit` splits when it is not negative (the rest is the last piece).
std::vector<std::string> splitString(const std::string &s, const std::string &delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  auto room = [&] { return maxsplit < 0 || int64_t(parts.size()) < maxsplit; };
  if (delimiter.empty()) {
    size_t i = 0;
    auto space = [&](size_t k) { return std::isspace(static_cast<unsigned char>(s[k])) != 0; };
    while (i < s.size()) {
      while (i < s.size() && space(i)) ++i;
      if (i == s.size()) break;
      if (!room()) {
        size_t end = s.size();
        while (end > i && space(end - 1)) --end;
        parts.push_back(s.substr(i, end - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !space(j)) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  size_t start = 0;
  while (room()) {
    size_t at = s.find(delimiter, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

/// StringSplit: Y (X's shape and the most substrings of any element, padded with empty
/// strings) and Z (the count of each).
Result<void> stringSplit(EvalContext &ctx) {
  const Tensor &x = ctx.input(0);
  if (!x.isString()) return errorf("X is {}, not str", shortName(x.type()));
  SF_ASSIGN(std::string delimiter, ctx.attrs().getString("delimiter", ""));
  SF_ASSIGN(int64_t maxsplit, ctx.attrs().getInt("maxsplit", -1));
  std::vector<std::vector<std::string>> parts;
  size_t most = 0;
  for (const std::string &s : x.strings()) {
    parts.push_back(splitString(s, delimiter, maxsplit));
    most = std::max(most, parts.back().size());
  }
  Shape yShape = x.shape();
  yShape.push_back(int64_t(most));
  std::vector<std::string> y(parts.size() * most);
  Output<int64_t> z(ctx, ElementType::I64, x.shape(), 1);
  SF_ASSIGN(int64_t *counts, z.makeForOverwrite());
  for (size_t i = 0; i < parts.size(); ++i) {
    counts[i] = int64_t(parts[i].size());
    for (size_t k = 0; k < parts[i].size(); ++k) y[i * most + k] = std::move(parts[i][k]);
  }
  SF_ASSIGN(Tensor yt, Tensor::fromStrings(yShape, std::move(y)));
  SF_TRY(ctx.setOutput(0, std::move(yt)));
  return ctx.numOutputs() > 1 ? z.finish(1) : success();
}

enum class Optimizer { Adagrad, Momentum, Adam };

/// The ai.onnx.preview.training optimizers: R (learning rate), T (update count), then groups of
/// n tensors (X, G, and the optimizer's state), out: the updated X and state.
Result<void> optimizer(EvalContext &ctx, Optimizer kind) {
  size_t groups = kind == Optimizer::Adagrad ? 3 : kind == Optimizer::Momentum ? 3 : 4;
  if (ctx.numInputs() < 2 || (ctx.numInputs() - 2) % groups != 0) return errorf("{} inputs", ctx.numInputs());
  size_t n = (ctx.numInputs() - 2) / groups;
  SF_ASSIGN(auto rv, doubles(ctx.input(0)));
  SF_ASSIGN(auto tv, doubles(ctx.input(1)));
  if (rv.size() != 1 || tv.size() != 1) return errorf("R and T must be scalars");
  double R = rv[0], T = tv[0];
  SF_ASSIGN(double norm, ctx.attrs().getFloat("norm_coefficient", 0.0));
  for (size_t k = 0; k < n; ++k) {
    const Tensor &xt = ctx.input(2 + k);
    SF_ASSIGN(auto X, doubles(xt));
    SF_ASSIGN(auto G, doubles(ctx.input(2 + n + k)));
    SF_ASSIGN(auto S1, doubles(ctx.input(2 + 2 * n + k)));
    std::vector<double> S2;
    if (kind == Optimizer::Adam) {
      SF_ASSIGN(S2, doubles(ctx.input(2 + 3 * n + k)));
    }
    std::vector<double> xNew(X.size()), s1New(X.size()), s2New(S2.size());
    if (kind == Optimizer::Adagrad) {
      SF_ASSIGN(double decay, ctx.attrs().getFloat("decay_factor", 0.0));
      SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-6));
      double r = R / (1 + T * decay);
      for (size_t i = 0; i < X.size(); ++i) {
        double g = norm * X[i] + G[i];
        s1New[i] = S1[i] + g * g;
        xNew[i] = X[i] - r * g / (std::sqrt(s1New[i]) + eps);
      }
    } else if (kind == Optimizer::Momentum) {
      SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha"));
      SF_ASSIGN(double beta, ctx.attrs().getFloat("beta"));
      SF_ASSIGN(std::string mode, ctx.attrs().getString("mode"));
      double b = T > 0 ? beta : 1;
      for (size_t i = 0; i < X.size(); ++i) {
        double g = norm * X[i] + G[i];
        s1New[i] = alpha * S1[i] + b * g;
        xNew[i] = mode == "nesterov" ? X[i] - R * (g + alpha * s1New[i]) : X[i] - R * s1New[i];
      }
    } else {
      SF_ASSIGN(double alpha, ctx.attrs().getFloat("alpha", 0.9));
      SF_ASSIGN(double beta, ctx.attrs().getFloat("beta", 0.999));
      SF_ASSIGN(double eps, ctx.attrs().getFloat("epsilon", 1e-6));
      SF_ASSIGN(double post, ctx.attrs().getFloat("norm_coefficient_post", 0.0));
      double r = T > 0 ? R * std::sqrt(1 - std::pow(beta, T)) / (1 - std::pow(alpha, T)) : R;
      for (size_t i = 0; i < X.size(); ++i) {
        double g = norm * X[i] + G[i];
        s1New[i] = alpha * S1[i] + (1 - alpha) * g;
        s2New[i] = beta * S2[i] + (1 - beta) * g * g;
        xNew[i] = (1 - post) * (X[i] - r * s1New[i] / (std::sqrt(s2New[i]) + eps));
      }
    }
    SF_ASSIGN(Tensor a, Tensor::fromDoubles(xt.type(), xt.shape(), xNew));
    SF_TRY(ctx.setOutput(k, std::move(a)));
    SF_ASSIGN(Tensor b, Tensor::fromDoubles(xt.type(), xt.shape(), s1New));
    SF_TRY(ctx.setOutput(n + k, std::move(b)));
    if (kind == Optimizer::Adam) {
      SF_ASSIGN(Tensor c, Tensor::fromDoubles(xt.type(), xt.shape(), s2New));
      SF_TRY(ctx.setOutput(2 * n + k, std::move(c)));
    }
  }
  return success();
}

} // namespace

Result<void> registerTrainingKernels(OpRegistry &r) {
  SF_TRY(setKernel(r, "NegativeLogLikelihoodLoss", [](EvalContext &c) { return lossKernel(c, false); }));
  SF_TRY(setKernel(r, "SoftmaxCrossEntropyLoss", [](EvalContext &c) { return lossKernel(c, true); }));
  SF_TRY(setKernel(r, "TfIdfVectorizer", tfidf));
  SF_TRY(setKernel(r, "StringNormalizer", stringNormalizer));
  SF_TRY(setKernel(r, "StringConcat", stringConcat));
  SF_TRY(setKernel(r, "RegexFullMatch", regexFullMatch));
  SF_TRY(setKernel(r, "StringSplit", stringSplit));
  const char *preview = "ai.onnx.preview.training";
  SF_TRY(setKernel(r, "Adagrad", [](EvalContext &c) { return optimizer(c, Optimizer::Adagrad); }, preview));
  SF_TRY(setKernel(r, "Momentum", [](EvalContext &c) { return optimizer(c, Optimizer::Momentum); }, preview));
  SF_TRY(setKernel(r, "Adam", [](EvalContext &c) { return optimizer(c, Optimizer::Adam); }, preview));
  return success();
}

} // namespace sf::eval::detail
