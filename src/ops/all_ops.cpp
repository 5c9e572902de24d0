// registerAllOps: every family, explicitly (no static-initializer registration).
#include "shapeflow/ops/families.h"
#include "shapeflow/ops/op.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace sf {

namespace {

struct SchemaRow {
  const char *op;
  int since;
  bool variadicLast;
  std::vector<uint32_t> masks;
};

/// ONNX's schemas' input types (scripts/make_type_constraints.py).
const std::vector<SchemaRow> &schemaRows() {
  static const std::vector<SchemaRow> rows = {
#include "type_constraints.inc"
  };
  return rows;
}

/// Each default-domain op's record gets its schema's versions.
void attachSchemaInputTypes(OpRegistry &r) {
  for (const SchemaRow &row : schemaRows())
    if (OpDef *def = r.findMutable("", row.op)) def->inputTypes.push_back({row.since, row.variadicLast, row.masks});
}

} // namespace

const int kSchemaTypesNewestOpset = SF_TYPE_CONSTRAINTS_NEWEST_OPSET;

std::optional<uint32_t> acceptedInputTypes(const OpDef &def, int opset, size_t i) {
  if (def.inputTypes.empty() || opset <= 0 || opset > kSchemaTypesNewestOpset) return std::nullopt;
  const SchemaInputTypes *version = nullptr;
  for (const SchemaInputTypes &v : def.inputTypes)
    if (v.since <= opset) version = &v;
  if (!version || version->masks.empty()) return std::nullopt;
  if (i < version->masks.size()) return version->masks[i];
  if (version->variadicLast) return version->masks.back();
  return std::nullopt;
}

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
  registerContribQuantizedOps(r);
  registerContribDiffusionOps(r);
  registerContribTransformerOps(r);
  registerContribLegacyOps(r);
  registerFusedOps(r);
  registerAttentionOps(r);
  attachSchemaInputTypes(r);
}

} // namespace sf
