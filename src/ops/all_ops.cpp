// registerAllOps: every family, explicitly (no static-initializer registration).
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/op.h"

namespace sf {

void registerAllOps(OpRegistry &r) {
  registerElementwiseOps(r);
  registerMatmulOps(r);
  registerConvPoolOps(r);
  registerNormOps(r);
  registerShapeOps(r);
  registerArrayOps(r);
  registerIndexOps(r);
  registerReduceOps(r);
  registerResizeOps(r);
  registerControlFlowOps(r);
  registerSequenceOps(r);
  registerRnnOps(r);
  registerMiscOps(r);
  registerTrainingOps(r);
  registerContribOps(r);
  registerFusedOps(r);
  registerAttentionOps(r);
}

} // namespace sf
