// libFuzzer harness for the wire-level ONNX reader: any bytes must give a view or an error,
// never a crash, an over-read or an unbounded allocation; decoding what was read must be as safe.
// Read with the main graph's nodes left encoded (ReadOptions::deferNodes, as loadModelFile
// reads) and decoded one by one, the bytes must give the same nodes, or fail as well.
// Build and run: scripts/fuzz.sh. A crash is pinned as a case of tests/onnx/malformed/
// (make_corpus.py) or tests/regress/.
#include "shapeflow/onnx/wire.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace sf::onnx;
using sf::Result;
using sf::SmallVec;

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

bool sameNames(const SmallVec<std::string_view, 3> &a, const SmallVec<std::string_view, 3> &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

/// The same bytes read as loadModelFile reads them (the main graph's nodes left encoded, then
/// decoded one at a time into one reused view) must succeed exactly when the eager read does,
/// with the same nodes.
void checkDeferred(std::string_view bytes, const Result<ModelView> &eager) {
  auto m = readModelBuffer(bytes, {}, "<memory>", ReadOptions{.deferNodes = true});
  bool ok = m.ok();
  if (ok) {
    NodeDecoder decoder(*m);
    NodeView n;
    for (size_t i = 0; ok && i < m->graph.encodedNodes.size(); ++i) {
      ok = decoder.decode(i, n).ok();
      if (!ok || !eager.ok()) continue;
      const NodeView &e = eager->graph.nodes[i];
      if (e.name != n.name || e.opType != n.opType || e.domain != n.domain ||
          !sameNames(e.inputs, n.inputs) || e.outputs.size() != n.outputs.size() ||
          e.attributes.size() != n.attributes.size())
        std::abort();
      for (size_t k = 0; k < e.attributes.size(); ++k)
        if (e.attributes[k].name != n.attributes[k].name || e.attributes[k].ints != n.attributes[k].ints ||
            e.attributes[k].type != n.attributes[k].type)
          std::abort();
    }
    if (ok && eager.ok() && m->graph.encodedNodes.size() != eager->graph.nodes.size()) std::abort();
  }
  if (ok != eager.ok()) std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  auto model = readModelBuffer(bytes);
  if (model.ok()) exercise(model->graph, *model, 0);
  checkDeferred(bytes, model);
  auto tensor = readTensorBuffer(bytes);
  if (tensor.ok()) exercise(*tensor, ModelView{});
  return 0;
}
