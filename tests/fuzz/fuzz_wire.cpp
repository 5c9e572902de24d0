// libFuzzer harness for the wire-level ONNX reader: any bytes must give a view or an error,
// never a crash, an over-read or an unbounded allocation; decoding what was read must be as safe.
// Build and run: scripts/fuzz.sh. A crash is pinned as a case of tests/onnx/malformed/
// (make_corpus.py) or tests/regress/.
#include "shapeflow/onnx/wire.h"

#include <cstddef>
#include <cstdint>

using namespace sf::onnx;

namespace {

void exercise(const TensorView &t, const ModelView &m) {
  (void)elementCount(t);
  (void)rawByteSize(t);
  (void)tensorBytes(t, m);
  (void)decodeInts(t, m, 1 << 16);
  (void)decodeFloats(t, m, 1 << 16);
}

void exercise(const GraphView &g, const ModelView &m, int depth) {
  for (const TensorView &t : g.initializers)
    exercise(t, m);
  for (const SparseTensorView &s : g.sparseInitializers) {
    exercise(s.values, m);
    exercise(s.indices, m);
  }
  for (const NodeView &n : g.nodes)
    for (const AttributeView &a : n.attributes) {
      if (a.extra().t) exercise(*a.extra().t, m);
      for (const TensorView &t : a.extra().tensors)
        exercise(t, m);
      if (a.extra().g && depth < 16) exercise(*a.extra().g, m, depth + 1);
      for (const auto &sub : a.extra().graphs)
        if (depth < 16) exercise(*sub, m, depth + 1);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  auto model = readModelBuffer(bytes);
  if (model.ok()) exercise(model->graph, *model, 0);
  auto tensor = readTensorBuffer(bytes);
  if (tensor.ok()) exercise(*tensor, ModelView{});
  return 0;
}
