// Ops that fit no bigger family: random generators (RandomNormal/Uniform and their *Like forms,
// Bernoulli, Multinomial), linear quantization (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear), signal processing (DFT, STFT, MelWeightMatrix) and window functions
// (Hann, Hamming, Blackman). Sizes that come from input values (a window's size, a DFT length,
// an STFT frame length) are read as dimensions, so a symbolic size stays symbolic.
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

namespace sf {
namespace {

/// The element type named by an int attribute holding an ONNX TensorProto.DataType.
Result<ElementType> dtypeAttr(InferContext &ctx, const char *name, int64_t otherwise) {
  SF_ASSIGN(int64_t v, ctx.attrs().getInt(name, otherwise));
  auto t = elementTypeFromOnnx(v);
  if (!t || *t == ElementType::Undefined)
    return errorf("attribute '{}' = {} is not a known element type", name, v);
  return *t;
}

Result<ElementType> floatDtype(InferContext &ctx, const char *name, int64_t otherwise) {
  SF_ASSIGN(ElementType t, dtypeAttr(ctx, name, otherwise));
  if (!isFloat(t))
    return errorf("attribute '{}' must name a float type, got {}", name, shortName(t));
  return t;
}

/// A size read from a scalar integer input: its value as a dimension, dynamic when unknown.
/// A known negative size is an error. onnxruntime runs one-element sizes of any rank (STFT's,
/// the windows', MelWeightMatrix's; DFT's `dft_length` of rank <= 1: `maxRank`).
Result<Dimension> sizeInput(InferContext &ctx, size_t i, const char *what, int maxRank = -1) {
  const Fact &f = ctx.input(i);
  if (f.type != ElementType::Undefined && !isInteger(f.type))
    return errorf("{} (input {}) must be an integer, got {}", what, int64_t(i), f);
  SF_TRY(expectOneElement(ctx, f, fmt::format("{} (input {})", what, i),
                          {.maxRank = maxRank, .specRank = 0}));
  auto d = scalarDim(f);
  if (!d) return Dimension::dynamic();
  if (d->maxLength() < 0)
    return errorf("{} (input {}) is {}, must not be negative", what, int64_t(i), d->toString());
  return d->nonNegative();
}

Result<void> requireRank(const Fact &f, size_t i, const char *what, int64_t rank) {
  if (f.shape.rankIsStatic() && int64_t(f.shape.size()) != rank)
    return errorf("input {} ({}) has rank {}, expected {} ({})", int64_t(i), what,
                  int64_t(f.shape.size()), rank, f);
  return success();
}

// ---------------------------------------------------------------- random
Result<Facts> inferRandomFromShape(InferContext &ctx) {
  SF_ASSIGN(ElementType t, floatDtype(ctx, "dtype", int64_t(ElementType::F32)));
  SF_ASSIGN(std::vector<int64_t> shape, ctx.attrs().getInts("shape"));
  std::vector<Dimension> dims;
  for (int64_t d : shape) {
    if (d < 0) return errorf("attribute 'shape' has a negative dimension {}", d);
    dims.push_back(Dimension(d));
  }
  return factsOf(makeFact(t, PartialShape(std::move(dims))));
}

/// RandomNormalLike, RandomUniformLike, Bernoulli (`probabilities`: its input must be float):
/// the input's shape, `dtype` or the input's type.
Result<Facts> randomLikeWith(InferContext &ctx, bool probabilities) {
  const Fact &x = ctx.input(0);
  ElementType t = x.type;
  if (ctx.attrs().has("dtype")) {
    SF_ASSIGN(t, dtypeAttr(ctx, "dtype", 1));
  }
  if (probabilities && x.type != ElementType::Undefined && !isFloat(x.type))
    return errorf("input 0 (probabilities) must be a float tensor, got {}", x);
  return factsOf(makeFact(t, x.shape));
}

InferFn inferRandomLike(bool probabilities) {
  return [probabilities](InferContext &ctx) { return randomLikeWith(ctx, probabilities); };
}

Result<Facts> inferMultinomial(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(requireRank(x, 0, "input", 2));
  SF_ASSIGN(ElementType t, dtypeAttr(ctx, "dtype", int64_t(ElementType::I32)));
  if (t != ElementType::I32 && t != ElementType::I64)
    return errorf("attribute 'dtype' must be i32 or i64, got {}", shortName(t));
  SF_ASSIGN(int64_t n, ctx.attrs().getInt("sample_size", 1));
  if (n < 1) return errorf("sample_size must be positive, got {}", n);
  Dimension batch = x.shape.rankIsStatic() ? x.shape[0] : Dimension::dynamic();
  return factsOf(makeFact(t, PartialShape{batch, Dimension(n)}));
}

// ---------------------------------------------------------------- quantization
/// Checks scale (input 1) and zero point (input 2) against x (input 0): a scalar or one element
/// for per-tensor, a 1-D tensor as long as x's `axis` for per-axis (opset 13), the same rank as x
/// for blocked quantization (opset 21 `block_size`); the zero point shaped like the scale.
Result<void> checkQuantParams(InferContext &ctx) {
  const Fact &x = ctx.input(0), &scale = ctx.input(1);
  const Fact &zp = ctx.input(2);
  bool hasZp = ctx.hasInput(2);
  int64_t opset = ctx.opset() == 0 ? 21 : ctx.opset();
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", 1));
  SF_ASSIGN(int64_t block, ctx.attrs().getInt("block_size", 0));
  if (block < 0) return errorf("block_size must not be negative, got {}", block);
  if (hasZp && scale.shape.rankIsStatic() && zp.shape.rankIsStatic()) {
    bool oneElement = [](const PartialShape &a, const PartialShape &b) {
      auto single = [](const PartialShape &s) {
        return s.size() == 0 || (s.size() == 1 && s[0].isStatic() && s[0].length() == 1);
      };
      return single(a) && single(b);
    }(scale.shape, zp.shape);
    if (!oneElement) {
      auto m = ctx.mergeShapes(scale.shape, zp.shape);
      if (!m.ok())
        return errorf("the zero point (input 2) must be shaped like the scale (input 1): {} vs {}",
                      zp, scale);
    }
  }
  if (!scale.shape.rankIsStatic()) return success();
  size_t r = scale.shape.size();
  bool perTensor = r == 0 || (r == 1 && scale.shape[0].isStatic() && scale.shape[0].length() == 1);
  if (perTensor && block == 0) return success();
  if (block > 0) {
    if (x.shape.rankIsStatic() && r != x.shape.size())
      return errorf("with block_size, the scale (input 1) must have the rank of x: {} vs {}", scale,
                    x);
    return success();
  }
  if (r != 1 || opset < 13)
    return errorf("the scale (input 1) must be a scalar{}, got {}", opset < 13 ? "" : " or 1-D",
                  scale);
  if (!x.shape.rankIsStatic()) return success();
  auto a = normalizeAxis(axis, int64_t(x.shape.size()));
  if (!a.ok()) return errorf("{} ({})", a.error().message, x);
  auto m = ctx.mergeDims(x.shape[*a], scale.shape[0]);
  if (!m.ok())
    return errorf("the scale (input 1) has {} elements but x has {} along axis {} ({} vs {})",
                  scale.shape[0], x.shape[*a], *a, scale, x);
  return success();
}

Result<Facts> inferQuantizeLinear(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(checkQuantParams(ctx));
  ElementType t = ElementType::U8;
  int64_t outDtype = 0;
  if (ctx.opset() == 0 || ctx.opset() >= 21) {
    SF_ASSIGN(outDtype, ctx.attrs().getInt("output_dtype", 0));
  }
  if (outDtype != 0) {
    auto o = elementTypeFromOnnx(outDtype);
    // Types this library does not model (float8, int4) stay unknown.
    t = o ? *o : ElementType::Undefined;
  }
  if (ctx.hasInput(2)) {
    ElementType zt = ctx.input(2).type;
    if (outDtype != 0 && zt != ElementType::Undefined && t != ElementType::Undefined && zt != t)
      return errorf("output_dtype is {} but the zero point (input 2) is {}", shortName(t),
                    ctx.input(2));
    t = zt;
  }
  return factsOf(makeFact(t, x.shape));
}

Result<Facts> inferDequantizeLinear(InferContext &ctx) {
  const Fact &x = ctx.input(0), &scale = ctx.input(1);
  SF_TRY(checkQuantParams(ctx));
  if (ctx.hasInput(2)) {
    const Fact &zp = ctx.input(2);
    if (x.type != ElementType::Undefined && zp.type != ElementType::Undefined && x.type != zp.type)
      return errorf("the zero point (input 2) must have x's type: {} vs {}", zp, x);
  }
  // Opset 19 lets the scale be f16 or bf16: the output takes the scale's type.
  ElementType t = ElementType::F32;
  if ((ctx.opset() == 0 || ctx.opset() >= 19) && isFloat(scale.type)) t = scale.type;
  // Opset 23's output_dtype names it (0: the scale's).
  SF_ASSIGN(int64_t dtype, ctx.attrs().getInt("output_dtype", 0));
  if (dtype != 0) {
    auto named = elementTypeFromOnnx(dtype);
    if (!named || !isFloat(*named)) return errorf("attribute 'output_dtype' {} is not a float type", dtype);
    t = *named;
  }
  return factsOf(makeFact(t, x.shape));
}

Result<Facts> inferDynamicQuantizeLinear(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  if (x.type != ElementType::Undefined && !isFloat(x.type))
    return errorf("x (input 0) must be a float tensor, got {}", x);
  return factsOf(makeFact(ElementType::U8, x.shape), makeFact(ElementType::F32, PartialShape{}),
               makeFact(ElementType::U8, PartialShape{}));
}

// ---------------------------------------------------------------- signal processing
/// onesided DFT length: n//2 + 1.
Result<Dimension> onesidedBins(const Dimension &n) {
  SF_ASSIGN(Dimension h, n.floorDiv(2));
  return h + Dimension(1);
}

Result<Facts> inferDft(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_ASSIGN(int64_t inverse, ctx.attrs().getInt("inverse", 0));
  SF_ASSIGN(int64_t onesided, ctx.attrs().getInt("onesided", 0));
  // Opset 20 moved the axis to an optional scalar input (default -2); before, an attribute (1).
  bool axisInput = ctx.opset() == 0 || ctx.opset() >= 20;
  std::optional<int64_t> axis;
  if (axisInput) {
    if (!ctx.hasInput(2)) {
      axis = -2;
    } else if (auto v = constInts(ctx.input(2)); v && v->size() == 1) {
      axis = (*v)[0];
    }
  } else {
    SF_ASSIGN(int64_t a, ctx.attrs().getInt("axis", 1));
    axis = a;
  }
  if (onesided && inverse) return makeError("onesided and inverse cannot both be set");
  std::optional<Dimension> length;
  if (ctx.hasInput(1)) {
    SF_ASSIGN(Dimension n, sizeInput(ctx, 1, "dft_length", 1));
    if (n.maxLength() == 0) return makeError("dft_length must be positive, got 0");
    length = n;
  }
  if (!x.shape.rankIsStatic()) return factsOf(makeFact(x.type, PartialShape::dynamic()));
  int64_t r = int64_t(x.shape.size());
  if (r < 2) return errorf("input 0 needs a signal axis and a complex axis, got {}", x);
  const Dimension &last = x.shape[r - 1];
  if (last.isStatic() && last.length() != 1 && last.length() != 2)
    return errorf("the last axis of input 0 holds real or complex parts and must be 1 or 2 ({})",
                  x);
  std::vector<Dimension> dims = x.shape.dims();
  dims[r - 1] = Dimension(2);
  if (!axis) {
    // Unknown axis: any signal axis may change.
    for (int64_t i = 0; i < r - 1; ++i) dims[i] = Dimension::dynamic();
    dims[0] = x.shape[0];
    return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
  }
  SF_ASSIGN(int64_t a, normalizeAxis(*axis, r));
  if (a == r - 1)
    return errorf("axis {} is the real/complex axis of {}, not a signal axis", *axis, x);
  Dimension n = length ? *length : x.shape[a];
  if (onesided) {
    SF_ASSIGN(n, onesidedBins(n));
  }
  dims[a] = n;
  return factsOf(makeFact(x.type, PartialShape(std::move(dims))));
}

Result<Facts> inferStft(InferContext &ctx) {
  const Fact &signal = ctx.input(0);
  SF_ASSIGN(int64_t onesided, ctx.attrs().getInt("onesided", 1));
  SF_TRY(requireRank(signal, 0, "signal", 3));
  SF_ASSIGN(Dimension step, sizeInput(ctx, 1, "frame_step"));
  if (step.maxLength() == 0) return makeError("frame_step must be positive, got 0");
  std::optional<Dimension> frame;
  if (ctx.hasInput(2)) {
    const Fact &w = ctx.input(2);
    SF_TRY(requireRank(w, 2, "window", 1));
    if (w.shape.rankIsStatic()) frame = w.shape[0];
  }
  if (ctx.hasInput(3)) {
    SF_ASSIGN(Dimension fl, sizeInput(ctx, 3, "frame_length"));
    if (frame) {
      auto m = ctx.mergeDims(*frame, fl);
      if (!m.ok())
        return errorf("frame_length (input 3) is {} but the window has {} elements ({})", fl,
                      frame->toString(), ctx.input(2));
      frame = *m;
    } else {
      frame = fl;
    }
  }
  Dimension batch, frames, bins;
  if (signal.shape.rankIsStatic()) {
    batch = signal.shape[0];
    const Dimension &last = signal.shape[2];
    if (last.isStatic() && last.length() != 1 && last.length() != 2)
      return errorf(
          "the last axis of the signal holds real or complex parts and must be 1 or 2 ({})",
          signal);
    const Dimension &len = signal.shape[1];
    if (frame) {
      if (len.isStatic() && frame->isStatic() && frame->length() > len.length())
        return errorf("frames of {} do not fit a signal of {} ({})", frame->toString(), len,
                      signal);
      // A frame must fit the signal (onnxruntime refuses a shorter one): a requirement where
      // either is a size.
      if (!(len.minLength() >= frame->maxLength()))
        if (auto room = len - *frame; room.ok() && room->expr()) SF_TRY(ctx.symbols().narrow(room->expr(), {0, kInf}));
      // (len - frame) // step + 1
      SF_ASSIGN(Dimension span, len - *frame);
      SF_ASSIGN(Dimension q, span.nonNegative().floorDiv(step));
      SF_ASSIGN(frames, q + Dimension(1));
    }
  }
  if (frame) {
    bins = *frame;
    if (onesided) {
      SF_ASSIGN(bins, onesidedBins(*frame));
    }
  }
  return factsOf(makeFact(signal.type, PartialShape{batch, frames, bins, Dimension(2)}));
}

Result<Facts> inferMelWeightMatrix(InferContext &ctx) {
  SF_ASSIGN(ElementType t, floatDtype(ctx, "output_datatype", int64_t(ElementType::F32)));
  SF_ASSIGN(Dimension bins, sizeInput(ctx, 0, "num_mel_bins"));
  SF_ASSIGN(Dimension n, sizeInput(ctx, 1, "dft_length"));
  SF_ASSIGN(Dimension rows, onesidedBins(n));
  return factsOf(makeFact(t, PartialShape{rows, bins}));
}

Result<Facts> inferWindow(InferContext &ctx) {
  SF_ASSIGN(ElementType t, dtypeAttr(ctx, "output_datatype", int64_t(ElementType::F32)));
  SF_ASSIGN(Dimension n, sizeInput(ctx, 0, "size"));
  return factsOf(makeFact(t, PartialShape{n}));
}

// ---- costs (docs/COSTS.md) ----

/// DFT counted as a direct transform (an FFT does fewer): every output value sums the `n`
/// inputs of its axis, a complex multiply-accumulate (4 real MACs) each.
Result<OpCost> costDft(const CostContext &ctx) {
  OpCost c;
  const PartialShape &x = ctx.input(0).shape;
  std::optional<int64_t> axis = ctx.attrs().getInt("axis", 1).valueOr(1);
  if (ctx.hasInput(2)) {
    auto a = scalarDim(ctx.input(2));
    axis = a && a->isStatic() ? std::optional<int64_t>(a->length()) : std::nullopt;
  }
  Dimension n = Dimension::dynamic();
  if (axis && x.rankIsStatic() && x.size() >= 2) {
    int64_t r = int64_t(x.size()) - 1; // the last axis holds real and imaginary parts
    int64_t a = *axis < 0 ? *axis + r : *axis;
    if (a >= 0 && a < r) n = x[size_t(a)];
  }
  SF_ASSIGN(Dimension outputs, elementsOf(ctx.output(0)).floorDiv(2));
  SF_ASSIGN(Dimension pairs, times(outputs, n));
  SF_ASSIGN(Dimension macs, times(pairs, Dimension(4)));
  SF_TRY(c.addMacs(macs));
  return c;
}

/// STFT: a direct transform of every frame: per output value, frame_length complex MACs.
Result<OpCost> costStft(const CostContext &ctx) {
  OpCost c;
  Dimension frame = Dimension::dynamic();
  if (auto fl = scalarDim(ctx.input(3)))
    frame = *fl;
  else if (ctx.input(2).shape.rankIsStatic() && ctx.input(2).shape.size() == 1)
    frame = ctx.input(2).shape[0];
  SF_ASSIGN(Dimension outputs, elementsOf(ctx.output(0)).floorDiv(2));
  SF_ASSIGN(Dimension pairs, times(outputs, frame));
  SF_ASSIGN(Dimension macs, times(pairs, Dimension(4)));
  SF_TRY(c.addMacs(macs));
  return c;
}

} // namespace

void registerMiscOps(OpRegistry &r) {
  // Costs (docs/COSTS.md): a random number is one "other" operation; quantising divides, adds
  // the zero point and rounds; dequantising subtracts and multiplies.
  const CostFn random = costPerOutput(FlopKind::Other);
  r.addAll({"RandomNormal", "RandomUniform"},
           {.infer = inferRandomFromShape, .traits = {.nondeterministic = true}, .cost = random});
  r.addAll({"RandomNormalLike", "RandomUniformLike"},
           {.infer = inferRandomLike(false), .traits = {.nondeterministic = true}, .cost = random});
  r.add({.name = "Bernoulli", .infer = inferRandomLike(true), .traits = {.nondeterministic = true}, .cost = random});
  r.add({.name = "Multinomial", .infer = inferMultinomial, .traits = {.nondeterministic = true}, .cost = random});
  r.add({.name = "QuantizeLinear",
         .infer = inferQuantizeLinear,
         .cost = costSum({costPerOutput(FlopKind::Div), costPerOutput(FlopKind::Add),
                          costPerOutput(FlopKind::Other)})});
  r.add({.name = "DequantizeLinear",
         .infer = inferDequantizeLinear,
         .cost = costSum({costPerOutput(FlopKind::Add), costPerOutput(FlopKind::Mul)})});
  r.add({.name = "DynamicQuantizeLinear",
         .infer = inferDynamicQuantizeLinear,
         .cost = costSum({costPerInput(FlopKind::Compare, 2), costPerOutput(FlopKind::Div),
                          costPerOutput(FlopKind::Add), costPerOutput(FlopKind::Other)})});
  r.add({.name = "DFT", .infer = inferDft, .cost = costDft});
  r.add({.name = "STFT", .infer = inferStft, .cost = costStft});
  r.add({.name = "MelWeightMatrix",
         .infer = inferMelWeightMatrix,
         .cost = costPerOutput(FlopKind::Other)});
  r.addAll({"HannWindow", "HammingWindow", "BlackmanWindow"},
           {.infer = inferWindow, .cost = costPerOutput(FlopKind::Special)});
}

} // namespace sf
