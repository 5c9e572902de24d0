// onnxruntime's quantized operators of the QOperator format (domain com.microsoft), which its
// quantization tool writes where a float op has no quantized ONNX op: QLinearConcat,
// QLinearAveragePool, QLinearGlobalAveragePool, QLinearSoftmax, QLinearWhere, QGemm, QAttention
// (shapes only: no kernel); and its
// QuantizeLinear and DequantizeLinear (the QDQ format with 16-bit and 4-bit types before ONNX had
// them). Each shape is the float op's: its rule runs on a view of the node that shows only the
// tensor inputs (scales and zero points left out), with channels_last undone where given.
// Semantics from onnxruntime's docs/ContribOperators.md and its CPU kernels (onnxruntime 1.30).
#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/helpers.h"

#include "input_view.h"

namespace sf {
namespace {

const char *const kMs = "com.microsoft";

/// The shape of a fact only: the float rule sees no quantized element type.
Fact shapeOf(const Fact &f) { return makeFact(ElementType::Undefined, f.shape); }

/// A scale (float, one value per tensor or per channel) and a zero point of `data`'s type.
Result<void> checkQuantPair(InferContext &ctx, size_t scale, size_t zero, ElementType data) {
  const Fact &s = ctx.input(scale);
  if (s.type != ElementType::Undefined && !isFloat(s.type))
    return errorf("input {} (scale) must be a float tensor, got {}", scale, s);
  if (!ctx.hasInput(zero)) return success();
  const Fact &z = ctx.input(zero);
  if (z.type != ElementType::Undefined && data != ElementType::Undefined && z.type != data)
    return errorf("input {} (zero point) is {}, but the data it describes is {}", zero, z, shortName(data));
  return success();
}

/// A quantized tensor's type: u8 or i8.
Result<void> checkEightBit(const Fact &f, size_t i) {
  if (f.type != ElementType::Undefined && f.type != ElementType::U8 && f.type != ElementType::I8)
    return errorf("input {} must be u8 or i8, got {}", i, f);
  return success();
}

/// Input `data`, a u8 or i8 tensor, with its scale and zero point at `scale` and `zero`.
Result<void> checkQuantized(InferContext &ctx, size_t data, size_t scale, size_t zero) {
  SF_TRY(checkEightBit(ctx.input(data), data));
  return checkQuantPair(ctx, scale, zero, ctx.input(data).type);
}

/// The float op's rule on X (input 0) with channels_last undone; output of X's type, then
/// X's (scale, zero point) at 1, 2 and Y's at 3, 4.
InferFn inferQLinearPool(InferFn floatRule) {
  return [floatRule](InferContext &ctx) -> Result<Facts> {
    const Fact &x = ctx.input(0);
    SF_TRY(checkQuantized(ctx, 0, 1, 2));
    SF_TRY(checkQuantPair(ctx, 3, 4, x.type));
    SF_ASSIGN(int64_t last, ctx.attrs().getInt("channels_last", 0));
    Fact plain = makeFact(ElementType::Undefined, last ? channelsFirst(x.shape) : x.shape);
    InputView view(ctx, {plain}, 19);
    SF_ASSIGN(Facts out, floatRule(view));
    PartialShape s = last ? channelsLast(out[0].shape) : out[0].shape;
    return factsOf(makeFact(x.type, std::move(s)));
  };
}

/// QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; Concat's shape.
InferFn inferQLinearConcat(InferFn concat) {
  return [concat](InferContext &ctx) -> Result<Facts> {
    if (ctx.numInputs() < 5 || (ctx.numInputs() - 2) % 3 != 0)
      return errorf("takes Y's scale and zero point, then a (tensor, scale, zero point) triple per input; got {} "
                    "inputs",
                    ctx.numInputs());
    ElementType t = ctx.input(1).type;
    Facts tensors;
    for (size_t i = 2; i < ctx.numInputs(); i += 3) {
      const Fact &x = ctx.input(i);
      SF_TRY(checkQuantized(ctx, i, i + 1, i + 2));
      if (t == ElementType::Undefined) t = x.type;
      else if (x.type != ElementType::Undefined && x.type != t)
        return errorf("input {} is {}, but Y is {}", i, x, shortName(t));
      tensors.push_back(shapeOf(x));
    }
    InputView view(ctx, std::move(tensors), 13);
    SF_ASSIGN(Facts out, concat(view));
    return factsOf(makeFact(t, out[0].shape));
  };
}

/// QLinearWhere: condition, X (scale, zero point), Y (scale, zero point), Z's scale and zero
/// point; Where's shape, Z's type (its zero point's, else X's).
InferFn inferQLinearWhere(InferFn where) {
  return [where](InferContext &ctx) -> Result<Facts> {
    const Fact &x = ctx.input(1), &y = ctx.input(4);
    SF_TRY(checkQuantized(ctx, 1, 2, 3));
    SF_TRY(checkQuantized(ctx, 4, 5, 6));
    InputView view(ctx, {ctx.input(0), shapeOf(x), shapeOf(y)}, 16);
    SF_ASSIGN(Facts out, where(view));
    ElementType t = ctx.hasInput(8) ? ctx.input(8).type : ElementType::Undefined;
    if (t == ElementType::Undefined) t = x.type;
    return factsOf(makeFact(t, out[0].shape));
  };
}

/// QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C (i32, optional), y_scale and
/// y_zero_point (optional: without y_scale the output is f32); Gemm's shape.
InferFn inferQGemm(InferFn gemm) {
  return [gemm](InferContext &ctx) -> Result<Facts> {
    const Fact &a = ctx.input(0), &b = ctx.input(3);
    SF_TRY(checkQuantized(ctx, 0, 1, 2));
    SF_TRY(checkQuantized(ctx, 3, 4, 5));
    Facts tensors{shapeOf(a), shapeOf(b)};
    if (ctx.hasInput(6)) {
      const Fact &c = ctx.input(6);
      if (c.type != ElementType::Undefined && c.type != ElementType::I32)
        return errorf("input 6 (C) must be i32, got {}", c);
      tensors.push_back(shapeOf(c));
    }
    InputView view(ctx, std::move(tensors), 13);
    SF_ASSIGN(Facts out, gemm(view));
    ElementType t = ElementType::F32;
    if (ctx.hasInput(7)) {
      t = ctx.hasInput(8) ? ctx.input(8).type : ElementType::U8;
      SF_TRY(checkQuantPair(ctx, 7, 8, t));
    }
    return factsOf(makeFact(t, out[0].shape));
  };
}

/// QLinearSoftmax: X (scale, zero point), Y's scale and zero point; X's shape. Attribute `opset`
/// is the opset of the Softmax it stands for (before 13 the axis splits X into rows of every
/// dim from it on, from 13 it is one axis); either way the axis must be one of X's.
Result<Facts> inferQLinearSoftmax(InferContext &ctx) {
  const Fact &x = ctx.input(0);
  SF_TRY(checkQuantized(ctx, 0, 1, 2));
  SF_TRY(checkQuantPair(ctx, 3, 4, x.type));
  SF_ASSIGN(int64_t opset, ctx.attrs().getInt("opset"));
  SF_ASSIGN(int64_t axis, ctx.attrs().getInt("axis", opset < 13 ? 1 : -1));
  if (x.shape.rankIsStatic()) {
    auto a = normalizeAxis(axis, int64_t(x.shape.size()));
    if (!a.ok()) return errorf("{} ({})", a.error().message, x);
  }
  return factsOf(makeFact(x.type, x.shape));
}

/// QAttention (onnxruntime's dynamic quantization of a fused Attention): input (u8, [B, S,
/// hidden]), weight (u8 or i8), bias, input_scale, weight_scale, mask_index, input_zero_point,
/// weight_zero_point, past; Attention's shapes on input, weight, bias, mask_index and past, every
/// output float (the bias's type).
InferFn inferQAttention(InferFn attention) {
  return [attention](InferContext &ctx) -> Result<Facts> {
    const Fact &x = ctx.input(0), &w = ctx.input(1);
    SF_TRY(checkQuantized(ctx, 0, 3, 6));
    SF_TRY(checkQuantized(ctx, 1, 4, 7));
    InputView view(ctx, {shapeOf(x), shapeOf(w), ctx.input(2), ctx.input(5), ctx.input(8)}, 1,
                   {true, true, ctx.hasInput(2), ctx.hasInput(5), ctx.hasInput(8)});
    SF_ASSIGN(Facts out, attention(view));
    ElementType t = ctx.hasInput(2) && ctx.input(2).type != ElementType::Undefined ? ctx.input(2).type : ElementType::F32;
    for (Fact &f : out)
      if (f.shape.rankIsStatic() || f.type != ElementType::Undefined) f.type = t;
    return out;
  };
}

/// Cost of a float op's rule on the tensor inputs `picks` (a quantized op's float counterpart)
/// plus a dequantize per input element and a quantize per output element.
CostFn costOn(CostFn base, std::vector<size_t> picks) {
  return [base, picks](const CostContext &ctx) -> Result<OpCost> {
    std::vector<const Fact *> in, out;
    for (size_t i : picks) in.push_back(ctx.hasInput(i) ? &ctx.input(i) : nullptr);
    for (size_t i = 0; i < ctx.numOutputs(); ++i) out.push_back(&ctx.output(i));
    CostContext view(std::move(in), std::move(out), ctx.attrs(), ctx.opset());
    SF_ASSIGN(OpCost c, base(view));
    for (size_t i : picks) {
      if (!ctx.hasInput(i)) continue;
      SF_TRY(c.add(FlopKind::Add, elementsOf(ctx.input(i))));
      SF_TRY(c.add(FlopKind::Mul, elementsOf(ctx.input(i))));
    }
    for (size_t i = 0; i < ctx.numOutputs(); ++i) {
      SF_TRY(c.add(FlopKind::Div, elementsOf(ctx.output(i))));
      SF_TRY(c.add(FlopKind::Other, elementsOf(ctx.output(i))));
    }
    return c;
  };
}


} // namespace

void registerContribQuantizedOps(OpRegistry &r) {
  // Registered after the default domain's ops (registerAllOps), whose rules these run.
  const OpDef &pool = *r.find("", "AveragePool"), &globalPool = *r.find("", "GlobalAveragePool");
  const OpDef &concat = *r.find("", "Concat"), &where = *r.find("", "Where"), &gemm = *r.find("", "Gemm");
  const OpDef &softmax = *r.find("", "Softmax");
  r.add({.name = "QLinearAveragePool", .domain = kMs, .infer = inferQLinearPool(pool.infer), .cost = costOn(pool.cost, {0})});
  r.add({.name = "QLinearGlobalAveragePool",
         .domain = kMs,
         .infer = inferQLinearPool(globalPool.infer),
         .cost = costOn(globalPool.cost, {0})});
  r.add({.name = "QLinearConcat", .domain = kMs, .infer = inferQLinearConcat(concat.infer), .cost = costNone});
  r.add({.name = "QLinearWhere", .domain = kMs, .infer = inferQLinearWhere(where.infer), .cost = costOn(where.cost, {0, 1, 4})});
  r.add({.name = "QGemm", .domain = kMs, .infer = inferQGemm(gemm.infer), .cost = costOn(gemm.cost, {0, 3, 6})});
  r.add({.name = "QLinearSoftmax", .domain = kMs, .infer = inferQLinearSoftmax, .cost = costOn(softmax.cost, {0})});
  const OpDef &attention = *r.find(kMs, "Attention");
  r.add({.name = "QAttention", .domain = kMs, .infer = inferQAttention(attention.infer), .cost = costOn(attention.cost, {0, 1, 2, 5, 8})});
  // The QDQ format's pair with onnxruntime's wider types (u16, i16, i32, int4): ONNX's rules as
  // of opset 19 (a per-axis scale, the output type from the zero point or the scale).
  for (const char *name : {"QuantizeLinear", "DequantizeLinear"}) {
    const OpDef &q = *r.find("", name);
    InferFn rule = q.infer;
    r.add({.name = name,
           .domain = kMs,
           .infer = [rule](InferContext &ctx) -> Result<Facts> {
             Facts in;
             std::vector<bool> present;
             for (size_t i = 0; i < ctx.numInputs(); ++i) {
               in.push_back(ctx.input(i));
               present.push_back(ctx.hasInput(i));
             }
             InputView view(ctx, std::move(in), 19, std::move(present));
             return rule(view);
           },
           .cost = q.cost});
  }
}

} // namespace sf
