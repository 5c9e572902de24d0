// The eval layer's registry: every op's record with the kernels of this layer in its slot.
#include "kernel_util.h"

#include <cstdio>
#include <cstdlib>

namespace sf::eval {
namespace detail {

Result<void> setKernel(OpRegistry &r, std::string_view name, KernelFn k, std::string_view domain) {
  OpDef *def = r.findMutable(domain, name);
  if (!def) return errorf("no op '{}' is registered", name);
  def->kernel = std::move(k);
  return success();
}

Result<void> setSequenceKernel(OpRegistry &r, std::string_view name, KernelFn k) {
  SF_TRY(setKernel(r, name, std::move(k)));
  r.findMutable("", name)->kernelTakesSequences = true;
  return success();
}

} // namespace detail

void registerKernels(OpRegistry &r) {
  for (auto f : {detail::registerArrayOpsKernels, detail::registerAttentionKernels, detail::registerContribKernels, detail::registerControlFlowKernels, detail::registerConvPoolKernels,
                 detail::registerConvPoolQuantizedKernels, detail::registerConvTransposeKernels, detail::registerElementwiseKernels,
                 detail::registerElementwiseUnaryKernels, detail::registerFusedKernels, detail::registerIndexKernels,
                 detail::registerMatMulKernels, detail::registerMiscKernels, detail::registerNormKernels,
                 detail::registerReduceKernels, detail::registerResizeKernels, detail::registerRnnKernels,
                 detail::registerSequenceKernels, detail::registerShapeOpsKernels, detail::registerTrainingKernels,
                 detail::registerContribKernelsOnStandardOnes})
    if (auto ok = f(r); !ok.ok()) {
      // A kernel set on an op name the registry does not have: a mistake in this layer.
      std::fprintf(stderr, "shapeflow: internal error: %s\n", ok.error().message.c_str());
      std::abort();
    }
}

const OpRegistry &evalRegistry() {
  static const OpRegistry *r = [] {
    auto *reg = new OpRegistry();
    registerAllOps(*reg);
    registerKernels(*reg);
    return reg;
  }();
  return *r;
}

} // namespace sf::eval
