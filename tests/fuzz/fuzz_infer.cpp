// libFuzzer harness: ONNX bytes -> wire reader -> importer -> inference. Any input must give a
// result or a clear error: no crash, no hang, no unbounded allocation (ASan + UBSan watch it).
// Build: CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DSF_FUZZ=ON -DSF_SANITIZE=ON
//        ninja -C build-fuzz fuzz_infer
// Run:   build-fuzz/tests/fuzz/fuzz_infer -max_len=65536 -runs=20000 CORPUS_DIR
//        (seed CORPUS_DIR with /usr/share/libonnx-testdata/data/node/*/model.onnx)
#include "shapeflow/infer/infer.h"
#include "shapeflow/onnx/import.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  auto model = sf::onnx::readModelBuffer(bytes);
  if (!model.ok()) return 0;
  sf::Diagnostics diags;
  auto g = sf::onnx::importModel(*model, diags);
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
