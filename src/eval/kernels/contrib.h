// What the kernels of onnxruntime's contrib ops share (contrib.cpp, contrib_attention.cpp,
// contrib_quantized.cpp).
#pragma once

#include "../kernel_util.h"

#include <vector>

namespace sf::eval::detail {

inline constexpr const char *kMs = "com.microsoft";

/// A per-hidden-element parameter (gamma, beta, bias): `hidden` values.
Result<std::vector<double>> hiddenParam(EvalContext &ctx, size_t i, int64_t hidden, const char *name);

/// RotaryEmbedding, MultiHeadAttention and Attention (contrib_attention.cpp).
Result<void> registerContribAttentionKernels(OpRegistry &r);
/// GroupQueryAttention (contrib_gqa.cpp).
Result<void> registerContribGqaKernels(OpRegistry &r);
/// MatMulNBits, GatherBlockQuantized and the QLinear element-wise ops (contrib_quantized.cpp).
Result<void> registerContribQuantizedKernels(OpRegistry &r);
/// MoE (contrib_transformer.cpp).
Result<void> registerContribTransformerKernels(OpRegistry &r);
/// ImageScaler, Scale, Affine, ScaledTanh, ParametricSoftplus and Crop (contrib_legacy.cpp).
Result<void> registerContribLegacyKernels(OpRegistry &r);

} // namespace sf::eval::detail
