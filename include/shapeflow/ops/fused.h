// The ops shapeflow's own rewrites emit (rewrite/fuse.cpp), in a domain of their own so that no
// model's op is taken for one: a convolution with its activation applied to its output. Each has
// its record (rule, cost; the executor's kernel) like any other op. GELU written as five ops
// becomes ONNX's own Gelu (opset 20), which has a record of its own already.
#pragma once

#include <string_view>

namespace sf {

inline constexpr std::string_view kShapeflowDomain = "ai.shapeflow";
/// Conv's inputs and attributes, plus `activation` ("Relu"; "Clip" between the floats `min` and
/// `max`, each absent where there is no bound; "Swish": x * sigmoid(alpha * x); "HardSwish") and
/// `alpha` (Swish's, default 1), and an optional fourth input Z of the output's shape added to
/// the convolution's output before the activation (a residual connection; the activation may
/// then be absent).
inline constexpr std::string_view kFusedConv = "FusedConv";
/// ONNX's Gelu, and the opset that defines it.
inline constexpr std::string_view kGelu = "Gelu";
inline constexpr int kGeluOpset = 20;

} // namespace sf
