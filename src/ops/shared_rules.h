// Forward rules that more than one family registers: onnxruntime's fused contrib ops are their
// standard op plus an activation or an extra input (FusedConv is Conv, FusedGemm is Gemm, the
// com.microsoft LayerNormalization is the standard one), so contrib.cpp registers these rules
// themselves rather than looking them up in the registry.
#pragma once

#include "shapeflow/ops/op.h"

namespace sf {

Result<Facts> inferConv(InferContext &ctx);      // conv_pool.cpp
Result<Facts> inferGemm(InferContext &ctx);      // matmul.cpp
Result<Facts> inferLayerNorm(InferContext &ctx); // norm.cpp

} // namespace sf
