// Losses (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss), text ops (StringNormalizer,
// TfIdfVectorizer) and the optimizers of ai.onnx.preview.training (Adagrad, Momentum, Adam).
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include <algorithm>

namespace sf {
namespace {


/// The per-element loss shape [N, d1, ...] that scores [N, C, d1, ...] and a target [N, d1, ...]
/// agree on (the target's shape, merged with the scores without their class axis).
Result<PartialShape> lossShape(InferContext &ctx, const Fact &scores, const Fact &target) {
  PartialShape t = target.shape;
  if (scores.shape.rankIsStatic()) {
    if (scores.shape.size() < 2)
      return errorf("scores {} must have rank >= 2 ([N, C, ...])", scores);
    std::vector<Dimension> dims = scores.shape.dims();
    dims.erase(dims.begin() + 1);
    PartialShape fromScores(std::move(dims));
    if (t.rankIsStatic() && t.size() != fromScores.size())
      return errorf("target {} must have the rank of {} minus 1", target, scores);
    SF_ASSIGN(t, ctx.mergeShapes(t, fromScores));
  }
  return t;
}

/// An optional per-class weight [C] agrees with the scores' class axis.
Result<void> checkClassWeight(InferContext &ctx, const Fact &scores, size_t i) {
  if (!ctx.hasInput(i)) return success();
  const Fact &w = ctx.input(i);
  if (!w.shape.rankIsStatic()) return success();
  if (w.shape.size() != 1) return errorf("weight (input {}) {} must be 1-D [C]", i, w);
  if (scores.shape.rankIsStatic() && scores.shape.size() >= 2) {
    if (!w.shape[0].compatible(scores.shape[1]))
      return errorf("weight (input {}) has {} elements, expected C = {}", i, w.shape[0],
                    scores.shape[1]);
    SF_TRY(ctx.mergeDims(w.shape[0], scores.shape[1]));
  }
  return success();
}

Result<PartialShape> reducedLoss(InferContext &ctx, const PartialShape &perElement) {
  auto attr = ctx.attrs().getString("reduction", "mean");
  if (!attr.ok()) return attr.takeError();
  const std::string &reduction = *attr;
  if (reduction == "none") return perElement;
  if (reduction == "mean" || reduction == "sum") return PartialShape(std::vector<Dimension>{});
  return errorf("reduction must be none, sum or mean, got '{}'", reduction);
}

/// SoftmaxCrossEntropyLoss (scores, labels, weights) -> loss, log_prob (scores' shape);
/// NegativeLogLikelihoodLoss (input, target, weight) -> loss.
Result<Facts> inferLoss(InferContext &ctx) {
  const Fact &scores = ctx.input(0), &target = ctx.input(1);
  if (target.type != ElementType::Undefined && target.type != ElementType::I32 &&
      target.type != ElementType::I64)
    return errorf("input 1 (labels / target) must be int32 or int64, got {}", target);
  SF_ASSIGN(PartialShape perElement, lossShape(ctx, scores, target));
  SF_TRY(checkClassWeight(ctx, scores, 2));
  SF_ASSIGN(PartialShape reduced, reducedLoss(ctx, perElement));
  Facts out{makeFact(scores.type, reduced)};
  if (ctx.numOutputs() > 1) out.push_back(makeFact(scores.type, scores.shape)); // log_prob
  return out;
}

/// StringNormalizer: [C] or [1, C] strings; stopwords may remove any of the C (all removed
/// leaves one empty string), so C becomes a size in [1, max(C, 1)] when there are stopwords.
Result<Facts> inferStringNormalizer(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  if (x.type != ElementType::Undefined && x.type != ElementType::String)
    return errorf("input must be a string tensor, got {}", x);
  PartialShape s = x.shape;
  if (s.rankIsStatic()) {
    if (s.size() != 1 && !(s.size() == 2 && s[0].compatible(Dimension(1))))
      return errorf("input {} must be [C] or [1, C]", x);
    if (s.size() == 2) {
      SF_ASSIGN(s[0], ctx.mergeDims(s[0], Dimension(1)));
    }
  }
  auto stop = ctx.attrs().getStrings("stopwords");
  bool removes = stop.ok() && !stop->empty();
  if (removes && s.rankIsStatic()) {
    Dimension &c = s[s.size() - 1];
    int64_t hi = std::max<int64_t>(c.maxLength(), 1);
    c = ctx.freshDim("words", Interval{c.minLength() == 0 && hi == 0 ? 0 : 1, hi});
  }
  return factsOf(makeFact(ElementType::String, s));
}

/// The input of a text op must hold strings.
Result<void> expectStrings(const Fact &x, const char *what) {
  if (x.type != ElementType::Undefined && x.type != ElementType::String)
    return errorf("{} must be a string tensor, got {}", what, x);
  return success();
}

/// StringConcat (20): the two string tensors broadcast, element by element joined.
Result<Facts> inferStringConcat(InferContext &ctx) {
  SF_TRY(expectStrings(ctx.input(0), "input 0 (X)"));
  SF_TRY(expectStrings(ctx.input(1), "input 1 (Y)"));
  SF_ASSIGN(PartialShape s, ctx.broadcast(ctx.input(0).shape, ctx.input(1).shape));
  return factsOf(makeFact(ElementType::String, std::move(s)));
}

/// RegexFullMatch (20): whether each string matches the pattern, a bool of X's shape.
Result<Facts> inferRegexFullMatch(InferContext &ctx) {
  SF_TRY(expectStrings(ctx.input(0), "input 0 (X)"));
  SF_ASSIGN(std::string pattern, ctx.attrs().getString("pattern"));
  (void)pattern;
  return factsOf(makeFact(ElementType::Bool, ctx.input(0).shape));
}

/// StringSplit (20): Y is X's shape and one more axis, as long as the most substrings of any
/// element (at most maxsplit + 1; 0 when every string is empty and the split is on
/// whitespace); Z, of X's shape, counts each element's substrings.
Result<Facts> inferStringSplit(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(expectStrings(x, "input 0 (X)"));
  SF_ASSIGN(int64_t maxsplit, ctx.attrs().getInt("maxsplit", -1));
  int64_t hi = maxsplit >= 0 && maxsplit < (int64_t(1) << 40) ? maxsplit + 1 : kInf;
  PartialShape y = x.shape;
  if (y.rankIsStatic()) {
    std::vector<Dimension> dims = y.dims();
    dims.push_back(ctx.freshDim("substrings", Interval{0, hi}));
    y = PartialShape(std::move(dims));
  }
  return Facts{makeFact(ElementType::String, std::move(y)), makeFact(ElementType::I64, x.shape)};
}

/// ImageDecoder (20): a 1-D uint8 stream of an encoded image to [H, W, C] uint8, C 3 (RGB,
/// BGR) or 1 (Grayscale); H and W are in the bytes.
Result<Facts> inferImageDecoder(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  if (x.type != ElementType::Undefined && x.type != ElementType::U8)
    return errorf("input 0 (encoded_stream) must be uint8, got {}", x);
  if (x.shape.rankIsStatic() && x.shape.size() != 1)
    return errorf("input 0 (encoded_stream) {} must be 1-D", x);
  SF_ASSIGN(std::string format, ctx.attrs().getString("pixel_format", "RGB"));
  if (format != "RGB" && format != "BGR" && format != "Grayscale")
    return errorf("attribute 'pixel_format' is '{}'; RGB, BGR or Grayscale expected", format);
  Dimension c(format == "Grayscale" ? 1 : 3);
  return factsOf(makeFact(ElementType::U8, PartialShape({ctx.freshDim("height", Interval{1, kInf}),
                                                         ctx.freshDim("width", Interval{1, kInf}), c})));
}

/// TfIdfVectorizer: [C] -> [K] and [N, C] -> [N, K], K = max(ngram_indexes) + 1.
Result<Facts> inferTfIdfVectorizer(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  if (x.type != ElementType::Undefined && x.type != ElementType::String &&
      x.type != ElementType::I32 && x.type != ElementType::I64)
    return errorf("input must be string, int32 or int64, got {}", x);
  SF_ASSIGN(auto indexes, ctx.attrs().getInts("ngram_indexes"));
  if (indexes.empty()) return makeError("ngram_indexes is empty");
  int64_t k = *std::max_element(indexes.begin(), indexes.end());
  if (*std::min_element(indexes.begin(), indexes.end()) < 0)
    return makeError("ngram_indexes has a negative index");
  if (k == INT64_MAX) return makeError("ngram_indexes: index too large");
  Dimension out(k + 1);
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(ElementType::F32, PartialShape::dynamic()));
  if (x.shape.size() == 1) return factsOf(makeFact(ElementType::F32, PartialShape({out})));
  if (x.shape.size() == 2) return factsOf(makeFact(ElementType::F32, PartialShape({x.shape[0], out})));
  return errorf("input {} must be [C] or [N, C]", x);
}

/// The ai.onnx.preview.training optimizers: inputs R, T, then `groups` groups of n tensors
/// (X, G, and the optimizer's state); outputs the new X and the new state, group by group
/// (every group but G), each with the shape and type of the tensor it updates.
InferFn optimizer(size_t groups) {
  return [groups](InferContext &ctx) -> Result<Facts> {
    size_t in = ctx.numInputs();
    if (in < 2 || (in - 2) % groups != 0)
      return errorf("expects R, T and {} groups of equally many tensors, got {} inputs", groups,
                    in);
    size_t n = (in - 2) / groups;
    if (ctx.numOutputs() > (groups - 1) * n)
      return errorf("has {} outputs, at most {} for {} optimized tensors", ctx.numOutputs(),
                    (groups - 1) * n, n);
    // Every tensor of a group agrees with its X (and its gradient G).
    for (size_t i = 0; i < n; ++i)
      for (size_t g = 1; g < groups; ++g) {
        const Fact &x = ctx.input(2 + i), &y = ctx.input(2 + g * n + i);
        if (x.shape.rankIsStatic() && y.shape.rankIsStatic() && !x.shape.compatible(y.shape))
          return errorf("input {} {} does not match the tensor it belongs to, {}", 2 + g * n + i, y,
                        x);
      }
    Facts out;
    for (size_t j = 0; j < ctx.numOutputs(); ++j) {
      size_t o = j / n, i = j % n;
      size_t group = o == 0 ? 0 : o + 1; // skip the gradients
      const Fact &src = ctx.input(2 + group * n + i);
      out.push_back(makeFact(src.type, src.shape));
    }
    return out;
  };
}

} // namespace

void registerTrainingOps(OpRegistry &r) {
  // Costs (docs/COSTS.md): the cross-entropy is a log-softmax over the scores; the likelihood
  // loss picks one score per target and adds it; the optimizers update every element a few
  // times (their formulas' operations).
  r.add({.name = "SoftmaxCrossEntropyLoss",
         .infer = inferLoss,
         .cost = costSum({costPerInput(FlopKind::Compare), costPerInput(FlopKind::Add, 3),
                          costPerInput(FlopKind::Special, 2)})});
  r.add({.name = "NegativeLogLikelihoodLoss",
         .infer = inferLoss,
         .cost = costPerInput(FlopKind::Add, 1, 1)});
  r.add({.name = "StringNormalizer",
         .infer = inferStringNormalizer,
         .cost = costPerInput(FlopKind::Other)});
  r.add({.name = "StringConcat", .infer = inferStringConcat, .cost = costPerOutput(FlopKind::Other)});
  r.add({.name = "RegexFullMatch", .infer = inferRegexFullMatch, .cost = costPerInput(FlopKind::Other)});
  r.add({.name = "StringSplit", .infer = inferStringSplit, .cost = costPerInput(FlopKind::Other)});
  r.add({.name = "ImageDecoder", .infer = inferImageDecoder, .cost = costPerInput(FlopKind::Other)});
  r.add({.name = "TfIdfVectorizer",
         .infer = inferTfIdfVectorizer,
         .cost = costPerInput(FlopKind::Other)});
  const char *kPreview = "ai.onnx.preview.training";
  r.add({.name = "Adagrad",
         .domain = kPreview,
         .infer = optimizer(3),
         .cost = costPerOutput(FlopKind::Other, 6)});
  r.add({.name = "Momentum",
         .domain = kPreview,
         .infer = optimizer(3),
         .cost = costPerOutput(FlopKind::Other, 4)});
  r.add({.name = "Adam",
         .domain = kPreview,
         .infer = optimizer(4),
         .cost = costPerOutput(FlopKind::Other, 10)});
}

} // namespace sf
