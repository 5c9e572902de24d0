// One registration function per op family: registerAllOps() calls each explicitly.
#pragma once

namespace sf {

class OpRegistry;

void registerElementwiseOps(OpRegistry &r); // elementwise.cpp: unary, binary, variadic, Where, Cast
void registerMatmulOps(OpRegistry &r);      // matmul.cpp: MatMul, Gemm, Einsum, quantized matmul
void registerConvPoolOps(OpRegistry &r);    // conv_pool.cpp: Conv, ConvTranspose, pools, RoI ops
void registerNormOps(OpRegistry &r);        // norm.cpp: BatchNorm, LayerNorm, Softmax, LRN, ...
void registerShapeOps(OpRegistry &r);       // shape_ops.cpp: Shape, Reshape, Transpose, Slice, ...
void registerArrayOps(OpRegistry &r);       // array_ops.cpp: Concat, Split, Range, Pad, Gather, ...
void registerIndexOps(OpRegistry &r);       // index.cpp: Gather*, Scatter*, TopK, NonZero, ...
void registerReduceOps(OpRegistry &r);      // reduce.cpp: Reduce*, ArgMax/ArgMin, CumSum
void registerResizeOps(OpRegistry &r);      // resize.cpp: Resize, Upsample, GridSample, ...
void registerControlFlowOps(OpRegistry &r); // control_flow.cpp: If, Loop, Scan
void registerSequenceOps(OpRegistry &r);    // sequence.cpp: Sequence*, SplitToSequence, ...
void registerRnnOps(OpRegistry &r);         // rnn.cpp: RNN, GRU, LSTM
void registerMiscOps(OpRegistry &r);        // misc.cpp: random, quantization, DFT, windows, ...
void registerTrainingOps(OpRegistry &r);    // training.cpp: losses, text ops, preview optimizers
void registerContribOps(OpRegistry &r);     // contrib.cpp: onnxruntime's com.microsoft ops
void registerContribQuantizedOps(OpRegistry &r); // contrib_quantized.cpp: QOperator ops (after the float ones)
void registerContribDiffusionOps(OpRegistry &r);   // contrib_diffusion.cpp: GroupNorm, NhwcConv, ...
void registerContribTransformerOps(OpRegistry &r); // contrib_transformer.cpp: MoE, packed attention, ...
void registerContribLegacyOps(OpRegistry &r);    // contrib_legacy.cpp: ops ONNX removed at opset 10
void registerFusedOps(OpRegistry &r);       // fused.cpp: the ops shapeflow's rewrites emit
void registerAttentionOps(OpRegistry &r);   // attention.cpp: Attention, RotaryEmbedding, TensorScatter

} // namespace sf
