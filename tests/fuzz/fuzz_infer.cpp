// libFuzzer harness: ONNX bytes -> wire reader -> importer -> inference. Any input must give a
// result or a clear error: no crash, no hang, no unbounded allocation (ASan + UBSan watch it).
// The bytes are also read and imported as loadModelFile does (nodes decoded one at a time while
// the importer builds them): the same graph or the same error, else it aborts.
// Build: CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DSF_FUZZ=ON -DSF_SANITIZE=ON
//        ninja -C build-fuzz fuzz_infer
// Run:   build-fuzz/tests/fuzz/fuzz_infer -max_len=65536 -runs=20000 CORPUS_DIR
//        (seed CORPUS_DIR with /usr/share/libonnx-testdata/data/node/*/model.onnx)
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/onnx/import.h"
#include "shapeflow/onnx/wire.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const char *what, const std::string &a, const std::string &b) {
  std::fprintf(stderr, "%s\n--- eager:\n%s\n--- deferred:\n%s\n", what, a.c_str(), b.c_str());
  std::abort();
}

/// The same bytes read as loadModelFile reads them (the main graph's nodes left encoded and
/// decoded one at a time while the importer builds them) must give the same graph, or the same
/// error, as the eager read and import.
void checkDeferred(std::string_view bytes, const sf::Result<sf::onnx::ModelView> &eagerModel,
                   const sf::Result<sf::Graph> *eagerGraph) {
  auto model = sf::onnx::readModelBuffer(bytes, {}, "<memory>", sf::onnx::ReadOptions{.deferNodes = true});
  sf::Diagnostics diags;
  std::optional<sf::Result<sf::Graph>> g;
  if (model.ok()) g.emplace(sf::onnx::importModel(*model, diags));
  bool ok = g && g->ok();
  if (!eagerModel.ok()) {
    if (ok) fail("the eager read fails, the deferred import does not", eagerModel.error().message, "");
    return;
  }
  if (!model.ok()) fail("the deferred read fails", "", model.error().message);
  if (eagerGraph->ok() != ok)
    fail("eager and deferred imports disagree",
         eagerGraph->ok() ? "ok" : eagerGraph->error().message, ok ? "ok" : g->error().message);
  if (!ok) {
    if (eagerGraph->error().message != g->error().message)
      fail("different import errors", eagerGraph->error().message, g->error().message);
    return;
  }
  std::string a = sf::printGraph(**eagerGraph), b = sf::printGraph(**g);
  if (a != b) fail("different graphs", a, b);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  auto model = sf::onnx::readModelBuffer(bytes);
  if (!model.ok()) {
    checkDeferred(bytes, model, nullptr);
    return 0;
  }
  sf::Diagnostics diags;
  auto g = sf::onnx::importModel(*model, diags);
  checkDeferred(bytes, model, &g);
  if (!g.ok()) return 0;
  // The importer checks names through its scopes and leaves them out of its own verify(): the
  // whole invariant (unique names included) is checked here.
  if (auto v = g->verify(); !v.ok()) {
    std::fprintf(stderr, "imported graph fails verify(): %s\n", v.error().message.c_str());
    std::abort();
  }
  sf::inferGraph(*g, diags);
  return 0;
}
