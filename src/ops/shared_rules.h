// Rules and costs that more than one family registers: onnxruntime's fused contrib ops are their
// standard op plus an activation or an extra input (FusedConv is Conv, FusedGemm is Gemm,
// FusedMatMul is MatMul, the com.microsoft LayerNormalization is the standard one), so contrib.cpp
// registers these functions themselves rather than looking them up in the registry.
#pragma once

#include "shapeflow/ops/cost.h"
#include "shapeflow/ops/op.h"

namespace sf {

/// The element type of an output whose inputs' types are not known yet.
inline constexpr ElementType kUnknownType = ElementType::Undefined;

Result<Facts> inferConv(InferContext &ctx);      // conv_pool.cpp
Result<Facts> inferGemm(InferContext &ctx);      // matmul.cpp
Result<Facts> inferLayerNorm(InferContext &ctx); // norm.cpp

/// d / k for a dim that must split into k equal parts: exact when static (an error when it does
/// not divide), d//k when symbolic (exact for every value the op accepts). contrib.cpp.
Result<Dimension> splitInto(const Dimension &d, int64_t k, const std::string &what);
/// Input `i` is a float tensor (or of a type not known yet). contrib.cpp.
Result<void> requireFloat(const Fact &x, size_t i = 0);

Result<OpCost> costMatMul(const CostContext &ctx);    // matmul.cpp: output elements times K
Result<OpCost> costGemm(const CostContext &ctx);      // matmul.cpp: MatMul, C and scaling
Result<OpCost> costConv(const CostContext &ctx);      // conv_pool.cpp
Result<OpCost> costLayerNorm(const CostContext &ctx); // norm.cpp
/// LayerNorm whose shift (beta) is input `biasInput` (SkipLayerNormalization's is input 3).
CostFn costLayerNormBiasAt(size_t biasInput); // norm.cpp
/// A fused op: its standard op's cost and an activation (one operation) per output element.
CostFn costWithActivation(CostFn base); // contrib.cpp

} // namespace sf
